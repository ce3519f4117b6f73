// Security round 3, the egress (findings 3, 9 and 12), performed against the built extension: a
// server that writes its Bearer token into every string of its tool listing, kept sessions
// that went on sending a token after sign-out, and a pasted
// collector configuration that names the model's key. Each test asserts what the server, the
// model, the page and the collector then received; the harness's canary check (on close) also
// fails on any leak of the key anywhere but its own endpoint's headers.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { evaluateInContentScript, launchHost, ROOT, storeSignIn, until } from '../support/browser.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

/** An OTLP collector that records what it is sent (CORS-open, as a collector must be). */
async function startCollector() {
  const received = [];
  const server = createServer((request, response) => {
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST' };
    if (request.method === 'OPTIONS') return response.writeHead(204, cors).end();
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      received.push({ url: request.url, headers: request.headers, bytes: Buffer.concat(chunks).length });
      response.writeHead(200, cors).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, received, close: () => new Promise((r) => server.close(r)) };
}

describe('security round 3: the egress', () => {
  let site, mcp, models, collector, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const model = {
    name: 'scripted',
    provider: 'openai',
    baseUrl: '',
    model: 'scripted',
    nativeTools: true,
    keyRef: 'canary',
  };

  before(async () => {
    site = await serve(join(ROOT, 'tests', 'fixtures'));
    mcp = await startMcpServer({ behaviours: { echoList: { echoAuthInListing: true } } });
    models = await startModelServer({ scenarios: { plain: { steps: [{ text: 'Done.' }] } } });
    collector = await startCollector();
    model.baseUrl = `${models.url}/s/plain/v1`;
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${site.url}/tools.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await collector?.close();
    await models?.close();
    mcp?.close();
    await site?.close();
  });

  test('finding 9: a key the server echoes into its tool listing reaches neither listTools, the model nor the page', async () => {
    const secret = host.canary.value;
    const parts = [secret, secret.slice(3, 18), secret.slice(-14)];
    const leaks = (text) => parts.filter((p) => text.includes(p));
    await op('configure', {
      models: [model],
      default: 'scripted',
      servers: [{ name: 'echo', url: `${mcp.url}/s/echoList/mcp`, keyRef: 'canary', trusted: true }],
    });
    // By hand.
    const listed = await op('listTools', { server: 'echo' });
    const shown = JSON.stringify(listed);
    assert.ok(listed.tools.length > 0, shown);
    assert.deepEqual(leaks(shown), [], shown.slice(0, 400));
    assert.match(listed.tools[0].description, /\[redacted\]/);
    // The server really got (and echoed) the key.
    assert.ok(mcp.requests({ rpcMethod: 'tools/list' }).some((r) => r.headers.authorization === `Bearer ${secret}`));
    // In a run: the model request carries the server's tools, redacted.
    const run = await op('run', { tabId, prompt: 'hello' });
    assert.ok(run.runId, JSON.stringify(run).slice(0, 400));
    const sent = models.requests().filter((r) => r.method === 'POST' && r.scenario === 'plain');
    assert.ok(sent.length > 0, 'the model was asked');
    const body = JSON.stringify(sent.at(-1).body);
    assert.match(body, /Adds two numbers/, 'the server tools were offered');
    assert.deepEqual(leaks(body), [], body.slice(0, 400));
    // Exposed to the page's own WebMCP: the page sees the listing redacted.
    const origin = new URL(site.url).origin;
    await op('expose', { server: 'echo', origin, enabled: true });
    await page.goto(`${site.url}/expose.html`);
    let descriptions = '';
    await until('the page to list the exposed tools', async () => {
      descriptions = await page.evaluate(async () =>
        JSON.stringify(Array.from((await document.modelContext?.getTools?.()) ?? [], (t) => ({
          name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations,
        }))),
      ).catch((e) => `page: ${e.message}`);
      return descriptions.includes('redacted');
    }, 30_000).catch((e) => assert.fail(`${e.message}; the page lists: ${descriptions.slice(0, 300)}`));
    await op('expose', { server: 'echo', origin, enabled: false });
    assert.match(descriptions, /\[redacted\]/, descriptions.slice(0, 300));
    assert.deepEqual(leaks(descriptions), [], descriptions.slice(0, 400));
    await op('configure', { servers: [] });
  });

  test('finding 3: after signOut no kept session (by hand, exposed) sends the signed-out token', async () => {
    const TOKENS = { access: 'oauth-access-5c1e7a9b3d2f4680', refresh: 'oauth-refresh-0a2b4c6d8e1f3a5b', secret: 'client-secret-7e5c3a1b9d0f2468' };
    const url = `${mcp.url}/s/normal~signed/mcp`;
    await op('configure', { servers: [{ name: 'signed', url, enabled: false, trusted: true }] });
    await storeSignIn(host.worker, 'signed', url, TOKENS);
    const origin = new URL(site.url).origin;
    await op('expose', { server: 'signed', origin, enabled: true, tools: ['add'] });
    await page.goto(`${site.url}/expose.html`);
    const exposed = () => evaluateInContentScript(host.context, page,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'add', args: {a: 1, b: 2}})`);
    const byHand = () => op('callTool', { server: 'signed', name: 'add', args: { a: 1, b: 2 } });
    const bearers = () => mcp.requests({ rpcMethod: 'tools/call' }).map((r) => r.headers.authorization ?? null);
    // Signed in: both kept sessions send the token.
    let before = bearers().length;
    assert.equal((await byHand()).ok, true);
    let last;
    await until('the exposed add to answer', async () => (last = await exposed())?.ok === true, 30_000)
      .catch((e) => assert.fail(`${e.message}; last answer: ${JSON.stringify(last)}`));
    const signedIn = bearers().slice(before);
    assert.ok(signedIn.length >= 2 && signedIn.every((b) => b === `Bearer ${TOKENS.access}`), JSON.stringify(signedIn));
    // Signed out: neither sends it any more (a fresh session sends nothing).
    const out = await op('signOut', { server: 'signed' });
    assert.equal(out.signedOut, true, JSON.stringify(out));
    before = bearers().length;
    const again = [await byHand(), await exposed()];
    const signedOut = bearers().slice(before);
    assert.equal(signedOut.length, 2, `${JSON.stringify(again)} ${JSON.stringify(signedOut)}`);
    assert.deepEqual(signedOut, [null, null], 'the signed-out token was sent again');
    await op('expose', { server: 'signed', origin, enabled: false });
    await op('configure', { servers: [] });
  });

  test("finding 12: a collector can never be handed the model's key, and the Keys view says where each key goes", async () => {
    await op('configure', { models: [model], default: 'scripted', servers: [], collectors: null });
    const endpoint = `${collector.url}/v1/traces`;
    // Pasted through configure: refused, naming the model whose key it is.
    const refused = await op('configure', {
      collectors: [{ name: 'evil', endpoint, headers: { authorization: 'canary' } }],
    }).then(() => null, (e) => String(e?.message ?? e));
    assert.match(refused ?? 'accepted', /collector `evil` names the key `canary`, which model `scripted`/);
    // Stored some other way (an older version's settings, a sync): the export leaves it out, while
    // a collector with a key of its own is sent its run.
    await op('configure', { keys: { 'collector.own': 'own-collector-key-1234' } });
    await host.worker.evaluate((c) => chrome.storage.local.set({ 'webmcpHost.collectors': c }), [
      { name: 'evil', endpoint: `${endpoint}?evil`, headers: { authorization: 'canary' } },
      { name: 'own', endpoint: `${endpoint}?own`, headers: { 'x-api-key': 'collector.own' } },
    ]);
    await page.goto(`${site.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    await op('run', { tabId, prompt: 'hello' });
    // The run's trace sent to `own`, and `evil` refused (the worker says so before it sends any
    // export: both are decided together), or, were it not refused, sent too.
    const refusal = /collector `evil`.*its traces were not sent/;
    const evilRefused = () => host.canary.records().some((r) => r.kind === 'console' && refusal.test(r.text));
    await until("the run's trace at the collector `own` and `evil` decided", async () =>
      collector.received.some((r) => r.url.includes('own')) &&
      (evilRefused() || collector.received.some((r) => r.url.includes('evil'))), 30_000)
      .catch((e) => assert.fail(`${e.message}: ${JSON.stringify(collector.received)}`));
    const own = collector.received.filter((r) => r.url.includes('own'));
    const evil = collector.received.filter((r) => r.url.includes('evil'));
    assert.ok(own.length > 0 && own[0].headers['x-api-key'] === 'own-collector-key-1234', JSON.stringify(collector.received));
    assert.deepEqual(evil, [], 'the collector naming the model key got nothing');
    for (const r of collector.received) assert.ok(!JSON.stringify(r.headers).includes(host.canary.value.slice(3, 18)));
    // The Keys view: where each key goes.
    const settings = await op('settings', {});
    const keys = Object.fromEntries(settings.keys.map((k) => [k.ref, k.goesTo]));
    assert.deepEqual(keys.canary, [
      `model \`scripted\` → ${new URL(models.url).origin}`,
      `collector \`evil\` → ${new URL(collector.url).origin} (not sent: a collector gets a key of its own)`,
    ]);
    assert.deepEqual(keys['collector.own'], [`collector \`own\` → ${new URL(collector.url).origin}`]);
    await host.worker.evaluate(() => chrome.storage.local.remove('webmcpHost.collectors'));
  });
});
