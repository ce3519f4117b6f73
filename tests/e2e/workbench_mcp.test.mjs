// The workbench with MCP servers and across worker restarts: a configured server's tools listed
// and called by hand (`listTools` / `callTool` with `server`), from scripts and from the popup's
// Call view; bad input never reaches the server (its own record of requests is the spy); a tool
// that acts waits for the person's yes in Pending, and runs only after it; no server gets a key
// meant for another, and a key a server echoes never comes back in an answer. Then the
// inventory: a redefinition after the worker restarted is still flagged (first definitions kept
// in session storage), and tabs whose pages never answer hold the others up no longer than one
// frame deadline. Screenshots go to test-output/workbench-mcp-*.png.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { CANARY, launchHost, ROOT, stopWorker, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';

const OUT = join(ROOT, 'test-output');
const KEY_A = 'mcp-key-a-5f1c93e07d2b';
const KEY_B = 'mcp-key-b-a84d1e6c0f37';
const KEY_R = 'mcp-key-r-30c7b9e2d4a1';
/** The page listing deadline of one frame (FRAME_LIST_MS in the worker). */
const FRAME_MS = 5_000;

describe('workbench: MCP servers by hand, restarts, slow tabs', () => {
  let pages, own, host, page, tabId, popup;

  const shot = async (target, name) => (await target.bringToFront(), target).screenshot({ path: join(OUT, `workbench-mcp-${name}.png`), fullPage: true });
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const toolCalls = (behaviour) => own.requests({ rpcMethod: 'tools/call', behaviour }).length;
  const openPopup = async (query = '') => {
    const opened = await host.context.newPage();
    await opened.setViewportSize({ width: 480, height: 900 });
    await opened.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}${query}`);
    await opened.waitForSelector('body[data-state="ready"]');
    return opened;
  };
  // Option values hold a NUL (server:NAME\0TOOL), which CSS selectors cannot name.
  const choose = async (key) => {
    await popup.waitForFunction((k) => [...document.querySelectorAll('#call-tool option')].some((o) => o.value === k), key, { timeout: 20_000 });
    await popup.selectOption('#call-tool', key);
    await popup.waitForSelector('#call-form-box:not([hidden])');
  };
  const input = (path) => popup.locator(`#call-form [data-path="${path}"]`).first().locator('input, select, textarea').first();

  before(async () => {
    await mkdir(OUT, { recursive: true });
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    own = await startMcpServer();
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${pages.url}/workbench/tools.html`);
    tabId = await host.tabIdOf(page);
    await op('configure', {
      servers: [
        { name: 'records', url: `${own.url}/s/normal~rec/mcp`, keyRef: 'reca' },
        // Both echo the credential headers they get in every call's result.
        { name: 'echo-a', url: `${own.url}/s/echoAuth~a/mcp`, keyRef: 'keya' },
        { name: 'echo-b', url: `${own.url}/s/echoAuth~b/mcp`, keyRef: 'keyb', keyHeader: 'X-Api-Key' },
        { name: 'echo-none', url: `${own.url}/s/echoAuth~none/mcp` },
      ],
      keys: { reca: KEY_R, keya: KEY_A, keyb: KEY_B },
    });
  });
  after(async () => {
    await host?.close();
    own?.close();
    await pages?.close();
  });

  test("listTools({server}): a server's tools with their schemas and hints; clear errors", async () => {
    const listed = await op('listTools', { server: 'records' });
    const add = listed.tools.find((t) => t.name === 'add');
    assert.deepEqual(add.inputSchema.required, ['a', 'b']);
    assert.equal(add.annotations.readOnlyHint, true);
    assert.equal(add.needsConfirmation, false);
    assert.equal(add.server, 'records');
    assert.equal(listed.tools.find((t) => t.name === 'delete_record').needsConfirmation, true);
    await assert.rejects(op('listTools', { server: 'nope' }), /no MCP server `nope` \(configured: records, echo-a, echo-b, echo-none\)/);
    await assert.rejects(op('listTools', { server: 'records', tabId }), /give `tabId` \(a tab's tools\) or `server`/);
    await assert.rejects(op('callTool', { name: 'add' }), /`tabId` \(a tab's tools\) or `server` \(an MCP server's name\) is required/);
    await assert.rejects(op('callTool', { server: 'records', name: 'add', frameId: 0 }), /`frameId` is for a tab/);
  });

  test('a read-only tool is called at once; bad input never reaches the server', async () => {
    const before = toolCalls('normal~rec');
    const done = await op('callTool', { server: 'records', name: 'add', args: { a: 2, b: 40 } });
    assert.equal(done.ok, true, JSON.stringify(done));
    assert.match(done.result, /42/);
    assert.equal(toolCalls('normal~rec'), before + 1);

    const bad = await op('callTool', { server: 'records', name: 'add', args: { a: '2', c: 1 } });
    assert.equal(bad.ok, false);
    assert.match(bad.error, /^not sent: the arguments do not match the input schema of `add`/);
    assert.deepEqual(bad.errors.map((e) => e.path).sort(), ['/a', '/b']);
    const unknown = await op('callTool', { server: 'records', name: 'nope', args: {} });
    assert.match(unknown.error, /offers no tool named `nope`/);
    assert.equal(toolCalls('normal~rec'), before + 1, 'the server saw no other call');
  });

  test("a server's outputSchema is listed, and structured content that breaks it says where (outputErrors)", async () => {
    const listed = await op('listTools', { server: 'records' });
    const schemaOf = (name) => listed.tools.find((t) => t.name === name)?.outputSchema;
    assert.equal(schemaOf('bad_structured')?.type, 'object', JSON.stringify(listed.tools.map((t) => t.name)));
    const good = await op('callTool', { server: 'records', name: 'structured', args: {} });
    assert.equal(good.ok, true, JSON.stringify(good));
    assert.equal(good.outputErrors, undefined, 'no outputErrors when it matches');
    const broken = await op('callTool', { server: 'records', name: 'bad_structured', args: {} });
    assert.equal(broken.ok, false, JSON.stringify(broken));
    assert.match(broken.error, /`bad_structured` sent structuredContent that does not match its output schema/);
    assert.ok(Array.isArray(broken.outputErrors) && broken.outputErrors.length > 0, JSON.stringify(broken));
    for (const e of broken.outputErrors) {
      assert.equal(typeof e.pointer, 'string');
      assert.equal(typeof e.message, 'string');
    }
  });

  test('listings and calls by hand share one kept session; a session the server ended is replaced, the call not lost', async () => {
    const of = (rpcMethod) => own.requests({ behaviour: 'normal~rec', rpcMethod });
    const [inits, calls] = [of('initialize').length, of('tools/call').length];
    await op('listTools', { server: 'records' });
    for (const b of [1, 2]) assert.equal((await op('callTool', { server: 'records', name: 'add', args: { a: 40, b } })).ok, true);
    await op('listTools', { server: 'records' });
    const made = of('tools/call').slice(calls);
    assert.equal(made.length, 2);
    assert.equal(new Set(made.map((r) => r.sessionId)).size, 1, 'both calls in one session');
    assert.ok(of('initialize').length - inits <= 1, 'opened once at most (kept from earlier calls)');
    const listings = of('tools/list').filter((r) => r.sessionId === made[0].sessionId);
    assert.ok(listings.length >= 3, 'each listing and call lists again on the kept session');

    // The server forgets the session (as after a restart): the next call by hand opens a new one.
    const ended = await fetch(`${own.url}/s/normal~rec/mcp`, { method: 'DELETE', headers: { 'mcp-session-id': made[0].sessionId } });
    assert.equal(ended.status, 200);
    const before = of('initialize').length;
    const after = await op('callTool', { server: 'records', name: 'add', args: { a: 1, b: 1 } });
    assert.equal(after.ok, true, JSON.stringify(after));
    assert.match(after.result, /2/);
    const last = of('tools/call').at(-1);
    assert.notEqual(last.sessionId, made[0].sessionId, 'a new session');
    assert.equal(of('initialize').length, before + 1);
    assert.equal(of('tools/call').length, calls + 3, 'the call was sent once');
  });

  test('a tool that acts waits for the person in Pending: declined, nothing runs; allowed, it runs', async () => {
    const waiting = () => op('pending', {}).then((items) => items.find((i) => i.kind === 'confirmation' && i.server === 'records'));
    const started = op('callTool', { server: 'records', name: 'delete_record', args: { id: 'r-1' } });
    const item = await until('the confirmation', waiting);
    assert.equal(item.name, 'delete_record');
    assert.match(item.runId, /^manual-/);
    assert.match(item.question, /A call by hand wants to run “delete_record” of the MCP server records[\s\S]*"r-1"[\s\S]*Allow it\?/);
    assert.deepEqual(own.deleted(), [], 'nothing ran while it waits');
    await op('decline', { runId: item.runId, callId: item.callId });
    const declined = await started;
    assert.deepEqual(declined, { ok: false, error: 'declined: the person did not allow this call' });
    assert.deepEqual(own.deleted(), []);
    assert.equal(await waiting(), undefined, 'no longer listed');

    const allowed = op('callTool', { server: 'records', name: 'delete_record', args: { id: 'r-2' } });
    const again = await until('the confirmation', waiting);
    await op('answer', { runId: again.runId, callId: again.callId, value: true });
    assert.equal((await allowed).ok, true);
    assert.deepEqual(own.deleted(), ['r-2']);
  });

  test('no server gets a key meant for another; a key a server echoes never comes back', async () => {
    const results = {};
    for (const server of ['echo-a', 'echo-b', 'echo-none']) {
      results[server] = await op('callTool', { server, name: 'add', args: { a: 1, b: 2 } });
    }
    const text = JSON.stringify(results);
    for (const secret of [KEY_A, KEY_B, KEY_R, CANARY]) assert.ok(!text.includes(secret), `no answer carries ${secret.slice(0, 8)}…: ${text}`);
    // Each server got its own key, in its own header, and no other.
    const headers = (behaviour) => JSON.stringify(own.requests({ behaviour }).map((r) => r.headers));
    assert.match(headers('echoAuth~a'), new RegExp(`Bearer ${KEY_A}`));
    assert.ok(!headers('echoAuth~a').includes(KEY_B) && !headers('echoAuth~a').includes(KEY_R));
    assert.match(headers('echoAuth~b'), new RegExp(KEY_B));
    assert.ok(!headers('echoAuth~b').includes(KEY_A));
    for (const secret of [KEY_A, KEY_B, KEY_R, CANARY]) assert.ok(!headers('echoAuth~none').includes(secret));
    await host.canary.check();
  });

  test("the Call view offers the servers' tools by server; the form's bad input is never sent; Pending confirms", async () => {
    popup = await openPopup('&view=call');
    await popup.waitForSelector('#call-tool optgroup[data-server="records"] option', { state: 'attached', timeout: 20_000 });
    const groups = await popup.$$eval('#call-tool optgroup', (g) => g.map((x) => x.label));
    assert.deepEqual(groups, ['This tab', 'MCP server records', 'MCP server echo-a', 'MCP server echo-b', 'MCP server echo-none']);
    await choose('server:records\u0000add');
    assert.match(await popup.textContent('#call-desc'), /MCP server records · Adds two numbers\./);
    const before = toolCalls('normal~rec');
    await popup.fill('#call-json', '{"a": "two"}');
    await popup.click('#call-run');
    await popup.locator('#call-status.error').waitFor();
    assert.match(await popup.textContent('#call-status'), /Not sent: 2 errors/);
    assert.equal(toolCalls('normal~rec'), before, 'the server saw no call');
    await input('/a').fill('5');
    await input('/b').fill('6');
    await popup.click('#call-run');
    await popup.locator('#call-result .call-output').waitFor();
    assert.match(await popup.textContent('#call-result'), /records · add · \d+ ms · done[\s\S]*11/);
    assert.equal(toolCalls('normal~rec'), before + 1);
    await shot(popup, 'call-server');

    // A tool that acts: the Call view says where to answer; Pending shows the host's question.
    await choose('server:records\u0000delete_record');
    await input('/id').fill('r-3');
    await popup.click('#call-run');
    await popup.locator('#call-status', { hasText: 'allow it in the Pending view' }).waitFor();
    const pending = await openPopup('&view=pending');
    await pending.locator('#pending li.confirmation').waitFor();
    assert.match(await pending.textContent('#pending li.confirmation .pending-question'), /A call by hand wants to run “delete_record”/);
    await shot(pending, 'pending');
    assert.deepEqual(own.deleted(), ['r-2']);
    await pending.click('#pending li.confirmation button:has-text("Allow")');
    await popup.locator('#call-result', { hasText: 'delete_record' }).waitFor();
    assert.deepEqual(own.deleted(), ['r-2', 'r-3']);
    await pending.close();

    // The history's snippet calls the server, and runs.
    // Listed apart from the tab's page calls, under "Calls to MCP servers".
    assert.equal(await popup.locator('#call-history li[data-server]').count(), 0, 'no server call among the tab\'s');
    assert.equal(await popup.textContent('#call-history-mcp-heading'), 'Calls to MCP servers');
    const entry = popup.locator('#call-history-mcp li[data-server="records"][data-tool="add"]').first();
    await entry.locator('button', { hasText: 'Copy as Playwright' }).click();
    const snippet = await entry.locator('.snippet').textContent();
    // The Playwright package's form: host.callTool({server, name, args}).
    assert.match(snippet, /^const outcome = await host\.callTool\(\{"server":"records","name":"add","args":\{"a":5,"b":6\}\}\);$/m);
    assert.ok(!snippet.includes('tabId'));
    // Run as the package runs it (its callTool passes a server call to the worker as it is).
    const packageHost = { callTool: (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), request) };
    const AsyncFunction = (async () => {}).constructor;
    const outcome = await new AsyncFunction('host', `${snippet}\nreturn outcome;`)(packageHost);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal(toolCalls('normal~rec'), before + 3, 'add, delete_record, and the snippet');
    await shot(popup, 'call-server-history');
    await popup.close();
  });

  test('a tool redefined after the worker restarted is still flagged', async () => {
    const second = await host.context.newPage();
    await second.goto(`${pages.url}/workbench/redefine.html`);
    const secondTab = await host.tabIdOf(second);
    const first = await op('inventory', { query: 'lookup' });
    assert.equal(first.tools.length, 1);
    assert.deepEqual(first.tools[0].changed ?? [], [], 'not changed yet');
    // The first definition is stored before the worker goes.
    await until('the first definition stored', () =>
      host.worker.evaluate(async (t) => JSON.stringify((await chrome.storage.session.get('webmcpHost.seen'))['webmcpHost.seen'] ?? {}).includes(`"tabId":${t}`), secondTab));
    await stopWorker(host.context, second);
    await second.evaluate(() => window.redefine());
    const fresh = await host.context.newPage();
    await fresh.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${secondTab}`);
    const ask = (message) => fresh.evaluate((m) => chrome.runtime.sendMessage(m), message);
    const after = await ask({ op: 'inventory', query: 'lookup' });
    assert.equal(after.ok, true, JSON.stringify(after));
    assert.deepEqual(after.value.tools[0].changed.map((c) => c.field), ['description', 'inputSchema', 'annotations']);
    assert.equal(after.value.tools[0].changed[0].before, 'Looks up a word.');
    await fresh.close();
    await second.close();
    host.worker = await until('the new worker', async () => host.context.serviceWorkers().find((w) => w.url().endsWith('/worker.js')));
    await host.worker.evaluate(() => globalThis.webmcpHost.ready);
  });

  test("tabs whose pages never answer hold the others up no longer than one frame's deadline", async () => {
    const hung = [];
    for (let i = 0; i < 3; i++) {
      const stuck = await host.context.newPage();
      // Another site than the other tabs (127.0.0.1), so another renderer.
      await stuck.goto(`${pages.url.replace('127.0.0.1', 'localhost')}/workbench/blank.html?hung=${i}`);
      hung.push(stuck);
    }
    // Their pages' main threads never come back: their content scripts cannot answer. Each
    // says so on its console as its last act (DevTools still hears it), then loops.
    for (const stuck of hung) {
      const hanging = stuck.waitForEvent('console', { predicate: (m) => m.text() === 'hung: looping now', timeout: 30_000 });
      await stuck.evaluate(() => setTimeout(() => {
        console.log('hung: looping now');
        for (;;);
      }, 0));
      await hanging;
    }
    const started = Date.now();
    const listed = await op('inventory', {});
    const elapsed = Date.now() - started;
    assert.ok(listed.tools.some((t) => t.tabId === tabId && t.name === 'register_guest'), 'the answering tab is listed');
    // One after the other they took at least 3 × 5 s; at once, about one deadline.
    assert.ok(elapsed < FRAME_MS * 1.8, `listed in ${elapsed} ms`);
    console.log(`inventory with 3 tabs that never answer: ${elapsed} ms`);
  });

  test('eight servers of one host called by hand: each kept session holds no stream, so none waits for a connection', async () => {
    // Chrome opens at most 6 HTTP/1.1 connections to a host: sessions that each kept a GET
    // stream open would leave the seventh call waiting for ever.
    const servers = Array.from({ length: 8 }, (_, i) => ({ name: `host-${i}`, url: `${own.url}/s/normal~host${i}/mcp` }));
    await op('configure', { servers });
    for (const { name } of [...servers, ...servers]) {
      const done = await op('callTool', { server: name, name: 'add', args: { a: 1, b: 1 } });
      assert.equal(done.ok, true, `${name}: ${JSON.stringify(done)}`);
    }
    const streams = own.requests({ method: 'GET' }).filter((r) => r.behaviour.startsWith('normal~host'));
    assert.deepEqual(streams, [], 'no GET stream was opened for a call by hand');
    // The page keeps its own connections to the host.
    assert.equal(await page.evaluate(async (u) => (await fetch(u, { method: 'POST' })).status, `${own.url}/s/normal~host0/mcp`), 415);
  });
});
