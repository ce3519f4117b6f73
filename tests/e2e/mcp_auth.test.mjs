// MCP authorization in the extension: the TypeScript SDK's example server behind its demo OAuth
// authorization server (`simpleStreamableHttp --oauth --oauth-strict`, loopback http on
// localhost). Before a sign-in the server is a clean source error of runs; `signIn` discovers the
// authorization server, registers a client, runs the authorization code flow with PKCE (the
// demo approves at once: a redirect to chrome.identity's redirect URL) and keeps the token in
// session storage; then the tools list and a run's call succeeds with the Bearer token; after
// `signOut` the calls fail cleanly again. The issued token is the canary: it never appears in
// an operation's answer, an event, a console line, a message to a page or the popup, or a URL,
// and it goes only to the MCP server.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startSimpleStreamableHttp } from '../../scripts/mcp/start-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

describe('MCP authorization (OAuth) in the extension', () => {
  let pages, models, server, host, page, tabId;
  const requests = [];
  const consoleLines = [];
  const seen = []; // every answer of an operation, every run result
  const op = async (fn, arg) => {
    const value = await host.worker.evaluate(fn, arg);
    seen.push(value);
    return value;
  };
  const run = (prompt, model) => op((r) => webmcpHost.run(r), { tabId, prompt, model });
  const sourceErrors = (result) => result.events
    .filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_source_error')
    .map((e) => e.value.message);
  let token = null; // the access token, read from storage: the canary
  const tokens = []; // every token issued in the test

  before(async () => {
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    server = await startSimpleStreamableHttp({ oauth: true, strict: true });
    models = await startModelServer({
      scenarios: {
        greet: {
          steps: [{ calls: [{ name: 'sdk__greet', arguments: { name: 'Ann' } }] }, { text: 'Greeted.' }],
        },
        plain: { steps: [{ text: 'No server today.' }] },
      },
    });
    host = await launchHost();
    host.context.on('request', (r) => requests.push(r));
    host.context.on('console', (m) => consoleLines.push(m.text()));
    host.worker.on?.('console', (m) => consoleLines.push(m.text()));
    page = await host.context.newPage();
    await page.goto(`${pages.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    // Record what the worker sends to content scripts and to extension pages.
    await host.worker.evaluate(() => {
      globalThis.__sent = [];
      const wrap = (api, name) => {
        const original = api[name].bind(api);
        api[name] = (...args) => {
          globalThis.__sent.push(JSON.stringify(args.filter((a) => typeof a !== 'function')));
          return original(...args);
        };
      };
      wrap(chrome.tabs, 'sendMessage');
      wrap(chrome.runtime, 'sendMessage');
    });
    await host.worker.evaluate((c) => webmcpHost.configure(c), {
      models: [
        { name: 'greet', provider: 'openai', baseUrl: `${models.url}/s/greet/v1`, model: 'x', nativeTools: true },
        { name: 'before', provider: 'openai', baseUrl: `${models.url}/s/plain~before/v1`, model: 'x', nativeTools: true },
        { name: 'after', provider: 'openai', baseUrl: `${models.url}/s/plain~after/v1`, model: 'x', nativeTools: true },
      ],
      default: 'greet',
      servers: [{ name: 'sdk', url: server.url, namespace: 'sdk', trusted: true, filter: ['greet'] }],
    });
  });
  after(async () => {
    await host?.close();
    await server?.stop();
    await models?.close();
    await pages?.close();
  });

  test('before a sign-in the server is a clean source error and the run goes on', async () => {
    assert.deepEqual(await op(() => webmcpHost.authState()), [{ signedIn: false, server: 'sdk', url: server.url }]);
    const result = await run('Greet Ann.', 'before');
    assert.deepEqual(result.outcome, { type: 'completed', text: 'No server today.' });
    assert.deepEqual(sourceErrors(result), ['server/discover: the server requires authorization (401): sign in to sdk first']);
  });

  test('signIn: discovery, registration, PKCE, token; the answer and authState carry no token', async () => {
    const started = Date.now();
    const signed = await op((r) => webmcpHost.signIn(r), { server: 'sdk' });
    const ms = Date.now() - started;
    assert.equal(signed.ok, true, JSON.stringify(signed));
    assert.equal(signed.signedIn, true);
    assert.equal(signed.issuer, `${server.authUrl}/`);
    assert.equal(signed.scope, 'mcp:tools', 'the scope of the resource metadata');
    assert.equal(signed.kept, 'session');
    assert.ok(['launchWebAuthFlow', 'tab'].includes(signed.via), signed.via);
    console.log(`# signIn took ${ms} ms via ${signed.via}`);
    const stored = await host.worker.evaluate(() => chrome.storage.session.get('webmcpHostAuth'));
    token = stored.webmcpHostAuth.sdk.tokens.accessToken;
    tokens.push(token);
    assert.match(token, /^[0-9a-f-]{36}$/, 'the demo server issues UUIDs');
    assert.ok(!(await host.worker.evaluate(() => chrome.storage.local.get(null).then(JSON.stringify))).includes(token),
      'not in local storage (no remember)');
    const [state] = await op(() => webmcpHost.authState());
    assert.equal(state.signedIn, true);
    assert.equal(state.state, 'fresh');
  });

  test('signIn in a tab (the fallback when no sign-in window can be shown), remembered in local storage', async () => {
    const tabsBefore = host.context.pages().length;
    const signed = await op((r) => webmcpHost.signIn(r), { server: 'sdk', inTab: true, remember: true });
    assert.equal(signed.ok, true, JSON.stringify(signed));
    assert.deepEqual([signed.via, signed.kept], ['tab', 'local']);
    // The tab's authorization request: PKCE S256, state, resource; its redirect caught, the tab closed.
    const authorize = requests.find((r) => r.url().startsWith(`${server.authUrl}/authorize?`));
    assert.ok(authorize, 'the authorization page was opened in a tab');
    const q = new URL(authorize.url()).searchParams;
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.equal(q.get('resource'), server.url);
    assert.match(q.get('state'), /^[0-9a-f]{32}$/);
    assert.match(q.get('redirect_uri'), new RegExp(`^https://${host.extensionId}\\.chromiumapp\\.org/mcp$`));
    assert.equal(q.get('client_id'), (await host.worker.evaluate(() => chrome.storage.local.get('webmcpHostAuthKept'))).webmcpHostAuthKept.sdk.client.clientId,
      'the client registered at the first sign-in is reused');
    await until('the sign-in tab to close', async () => host.context.pages().length <= tabsBefore, 30_000)
      .catch((e) => assert.fail(`${e.message}: ${host.context.pages().map((p) => p.url()).join(', ')}`));
    assert.equal(host.context.pages().length, tabsBefore, 'the sign-in tab was closed');
    const session = await host.worker.evaluate(() => chrome.storage.session.get('webmcpHostAuth'));
    assert.deepEqual(session.webmcpHostAuth, {}, 'moved to local storage');
    const kept = await host.worker.evaluate(() => chrome.storage.local.get('webmcpHostAuthKept'));
    token = kept.webmcpHostAuthKept.sdk.tokens.accessToken;
    tokens.push(token);
    const [state] = await op(() => webmcpHost.authState());
    assert.deepEqual([state.signedIn, state.kept], [true, 'local']);
  });

  test('signed in: the tools list, and a run calls a tool with the Bearer token', async () => {
    const checked = await op((r) => webmcpHost.checkServer(r), { name: 'sdk' });
    assert.equal(checked.ok, true, JSON.stringify(checked));
    assert.deepEqual(checked.names.map((n) => n.name), ['sdk__greet']);
    const result = await run('Greet Ann.', 'greet');
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.deepEqual(result.outcome, { type: 'completed', text: 'Greeted.' });
    assert.deepEqual(sourceErrors(result), []);
    const toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.match(toolResult.content, /Hello, Ann!/);
    const toServer = requests.filter((r) => r.url().startsWith(server.url) && r.method() !== 'OPTIONS');
    const authorized = toServer.filter((r) => r.headers().authorization === `Bearer ${token}`);
    assert.ok(authorized.length >= 3, `saw ${authorized.length} authorized requests`);
  });

  test('after signOut the calls fail cleanly', async () => {
    const out = await op((r) => webmcpHost.signOut(r), { server: 'sdk' });
    assert.deepEqual(out, { ok: true, server: 'sdk', signedOut: true });
    assert.deepEqual(await op(() => webmcpHost.authState()), [{ signedIn: false, server: 'sdk', url: server.url }]);
    const stored = await host.worker.evaluate(() => chrome.storage.local.get('webmcpHostAuthKept'));
    assert.deepEqual(stored.webmcpHostAuthKept, {});
    const checked = await op((r) => webmcpHost.checkServer(r), { name: 'sdk' });
    assert.equal(checked.ok, false);
    assert.match(checked.error, /requires authorization \(401\): sign in to sdk first/);
    const result = await run('Greet Ann.', 'after');
    assert.deepEqual(result.outcome, { type: 'completed', text: 'No server today.' });
    assert.deepEqual(sourceErrors(result), ['server/discover: the server requires authorization (401): sign in to sdk first']);
  });

  test('the popup shows the sign-in state and signs in and out', async () => {
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html`);
    await popup.click('button[data-view="servers"]');
    const auth = popup.locator('.server-auth[data-server="sdk"]');
    await auth.filter({ hasText: 'Not signed in' }).waitFor();
    const card = popup.locator('#servers li[data-server="sdk"]');
    await card.getByRole('button', { name: 'Sign in' }).click();
    await auth.filter({ hasText: /^Signed in/ }).waitFor();
    const [state] = await op(() => webmcpHost.authState());
    assert.equal(state.signedIn, true);
    const stored = await host.worker.evaluate(() => chrome.storage.session.get('webmcpHostAuth'));
    const popupToken = stored.webmcpHostAuth.sdk.tokens.accessToken;
    assert.ok(popupToken && !tokens.includes(popupToken), 'a new token');
    tokens.push(popupToken);
    assert.ok(!(await popup.content()).includes(popupToken), 'the popup never shows a token');
    await card.getByRole('button', { name: 'Sign out' }).click();
    await auth.filter({ hasText: 'Not signed in' }).waitFor();
    await popup.close();
  });

  test('the token is in no answer, event, console line, message or URL, and went only to the MCP server', async () => {
    assert.equal(tokens.length, 3);
    for (const token of tokens) {
      assert.ok(!JSON.stringify(seen).includes(token), 'an operation answered with the token');
      assert.ok(!consoleLines.join('\n').includes(token), 'a console line has the token');
      const sent = await host.worker.evaluate(() => globalThis.__sent);
      assert.ok(sent.length > 0, 'messages were recorded');
      assert.ok(!sent.join('\n').includes(token), 'a message to a page has the token');
      for (const r of requests) {
        assert.ok(!r.url().includes(token), `the token in a URL: ${r.url()}`);
        const carries = JSON.stringify(r.headers()).includes(token) || (r.postData() ?? '').includes(token);
        if (carries) assert.ok(r.url().startsWith(server.url), `the token went to ${r.url()}`);
      }
      // The page's own view: nothing of the sign-in in its storage or its world.
      const pageText = await page.evaluate(() => document.documentElement.outerHTML + JSON.stringify(localStorage));
      assert.ok(!pageText.includes(token));
    }
  });
});
