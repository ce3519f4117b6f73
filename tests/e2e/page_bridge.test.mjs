// The page bridge on the project's fixture pages, each test asserting what the agent saw and
// what the page received: equal tool names in a same-origin and a cross-origin frame,
// declarative forms (one navigates, one opens a new tab), a tool that navigates, calls that a
// closed tab, a removed frame or leaving the page interrupt, and per-site policy. Polyfilled
// pages (WebMCP off) and their forged pairing messages are in the second suite.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { evaluateInContentScript, launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures');
const VENDOR = { mounts: { '/vendor/': join(ROOT, 'node_modules', '@mcp-b') } };


const callsIn = (frame) => frame.evaluate(() => window.__calls.map((c) => ({ name: c.name, input: c.input })));

// The destination of these navigations has no JSON-LD: the answer says so.
const NO_JSON_LD = 'the destination has no JSON-LD (script[type="application/ld+json"])';

describe('page bridge with native WebMCP', () => {
  let server, host;
  const listTools = (tabId) => host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
  const callTool = (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), request);
  const configure = (config) => host.worker.evaluate((c) => webmcpHost.configure(c), config);
  const open = async (path) => {
    const page = await host.context.newPage();
    await page.goto(`${server.url}/${path}`);
    return { page, tabId: await host.tabIdOf(page) };
  };

  before(async () => {
    server = await serve(FIXTURES);
    host = await launchHost();
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('equal names in the top frame and a cross-origin frame stay distinct in a run', async () => {
    const { page, tabId } = await open('frames.html');
    const cross = await until('the cross-origin frame', async () => page.frames().find((f) => f.url().includes('localhost')), 30_000);
    await until('three frames with tools', async () => (await listTools(tabId)).tools.length >= 4, 30_000);
    const listed = await listTools(tabId);
    const searches = listed.tools.filter((t) => t.name === 'search');
    assert.equal(searches.length, 2);
    const [top, partner] = searches;
    assert.equal(top.frameId, 0);
    assert.match(top.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(partner.origin, /^http:\/\/localhost:\d+$/, 'the cross-origin frame reports its own origin');
    assert.ok(listed.tools.some((t) => t.name === 'frame_greet'), 'the same-origin frame is there too');

    const transcript = [
      { calls: [{ name: 'search', arguments: { q: 'tea' } }, { name: `search__frame${partner.frameId}`, arguments: { q: 'cups' } }] },
      { text: 'Both searched.' },
    ].map((line) => JSON.stringify(line)).join('\n');
    await configure({ models: [{ name: 'frames', provider: 'replay', transcript }], default: 'frames', servers: [] });
    const result = await host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt: 'Search both.' });
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.deepEqual(result.outcome, { type: 'completed', text: 'Both searched.' });
    const nameOf = (id) => result.events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallId === id).toolCallName;
    const results = Object.fromEntries(result.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => [nameOf(e.toolCallId), e.content]));
    assert.deepEqual(results, { search: 'top results for tea', [`search__frame${partner.frameId}`]: 'partner results for cups' });
    assert.deepEqual(await callsIn(page.mainFrame()), [{ name: 'search', input: { q: 'tea' } }]);
    assert.deepEqual(await callsIn(cross), [{ name: 'search', input: { q: 'cups' } }]);
    const sourceErrors = result.events.filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_source_error');
    assert.deepEqual(sourceErrors, [], 'no tool left out');
    await page.close();
  });

  test('declarative forms: one navigates this tab, one opens a new tab; each answer says what the destination offers', async () => {
    const { page, tabId } = await open('declarative.html');
    const listed = await listTools(tabId);
    const flights = listed.tools.find((t) => t.name === 'search_flights');
    assert.deepEqual(flights.inputSchema.required, ['from', 'to'], 'the form became a tool with its fields');

    const navigated = await callTool({ tabId, name: 'search_flights', args: { from: 'OSL', to: 'LIS' } });
    assert.deepEqual(navigated, {
      ok: true, navigated: true, url: `${server.url}/results.html?from=OSL&to=LIS`, tools: ['pick_result'], resultNote: NO_JSON_LD,
    });
    assert.equal(await page.locator('#query').textContent(), '?from=OSL&to=LIS', 'the page received the form');

    await page.goto(`${server.url}/declarative.html`);
    const opened = host.context.waitForEvent('page');
    const newTab = await callTool({ tabId, name: 'open_receipt', args: { order: '17' } });
    const receipt = await opened;
    assert.equal(newTab.ok, true);
    assert.equal(newTab.navigated, true);
    assert.equal(newTab.url, `${server.url}/results.html?order=17`);
    assert.deepEqual(newTab.tools, ['pick_result']);
    assert.equal(newTab.openedTab, await host.tabIdOf(receipt), 'the answer names the new tab');
    assert.equal(page.url(), `${server.url}/declarative.html`, 'this tab stayed');
    await receipt.close();
    await page.close();
  });

  test('an imperative tool that navigates the page answers {navigated, url, tools}', async () => {
    const { page, tabId } = await open('declarative.html');
    const answer = await callTool({ tabId, name: 'go_to_results', args: { q: 'x y' }, timeoutMs: 10_000 });
    assert.deepEqual(answer, { ok: true, navigated: true, url: `${server.url}/results.html?q=x%20y`, tools: ['pick_result'], resultNote: NO_JSON_LD });
    await page.close();
  });

  test('leaving the page mid-call ends the call with {navigated}, long before its timeout', async () => {
    const { page, tabId } = await open('tools.html');
    // A deadline far away: only the navigation can end the call (its deadline would be an error).
    const pending = callTool({ tabId, name: 'never_returns', args: {}, timeoutMs: 120_000 });
    await until('the call to reach the page', async () => page.evaluate(() => window.__calls.some((c) => c.name === 'never_returns')), 30_000);
    await page.goto(`${server.url}/results.html?left=1`);
    const answer = await pending;
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.equal(answer.navigated, true);
    assert.equal(answer.url, `${server.url}/results.html?left=1`);
    await page.close();
  });

  test('stopping a run cancels its page call in the page', async () => {
    const { page, tabId } = await open('tools.html');
    const transcript = [{ calls: [{ name: 'never_returns', arguments: {} }] }, { text: 'unreached' }]
      .map((line) => JSON.stringify(line)).join('\n');
    await configure({ models: [{ name: 'hang', provider: 'replay', transcript }], default: 'hang', servers: [] });
    const running = host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt: 'Wait.', runId: 'run-cancel-1' });
    await until('the call to reach the page', async () => page.evaluate(() => window.__calls.some((c) => c.name === 'never_returns')), 30_000);
    assert.equal(await host.worker.evaluate(() => webmcpHost.stop({ runId: 'run-cancel-1' })), true);
    const result = await running;
    assert.equal(result.outcome.type, 'stopped');
    await until('toolcancel in the page', async () => page.evaluate(() => window.__cancelled.includes('never_returns')), 30_000);
    await page.close();
  });

  test('a closed tab and a removed frame end their calls with clear errors', async () => {
    const { page, tabId } = await open('tools.html');
    const pending = callTool({ tabId, name: 'never_returns', args: {}, timeoutMs: 20_000 });
    await until('the call to reach the page', async () => page.evaluate(() => window.__calls.some((c) => c.name === 'never_returns')), 30_000);
    await page.close();
    assert.deepEqual(await pending, { ok: false, error: 'the tab was closed while `never_returns` ran' });

    const framed = await open('frames.html');
    await until('the cross-origin frame', async () => framed.page.frames().find((f) => f.url().includes('localhost')), 30_000);
    await until('its tools', async () => (await listTools(framed.tabId)).tools.some((t) => t.name === 'wait_forever'), 30_000);
    const crossFrame = framed.page.frames().find((f) => f.url().includes('localhost'));
    const inFrame = callTool({ tabId: framed.tabId, name: 'wait_forever', args: {}, timeoutMs: 20_000 });
    await Promise.race([
      until('the call to reach the frame', async () => (await callsIn(crossFrame)).some((c) => c.name === 'wait_forever'), 30_000),
      inFrame.then((answer) => { throw new Error(`the call ended early: ${JSON.stringify(answer)}`); }),
    ]);
    await framed.page.evaluate(() => document.getElementById('cross').remove());
    assert.deepEqual(await inFrame, { ok: false, error: 'the frame that offered `wait_forever` was removed while it ran' });
    await framed.page.close();
  });

  test('a page that registers a tool later: the open popup lists it without being asked', async () => {
    const { page, tabId } = await open('tools.html');
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    const listed = () => popup.locator('#tools').textContent();
    await until('the first listing', async () => (await listed()).includes('never_returns'), 30_000);
    assert.ok(!(await listed()).includes('late_tool'));
    await page.evaluate(() => document.modelContext.registerTool({
      name: 'late_tool', description: 'Registered after load.', inputSchema: { type: 'object', properties: {} },
      execute: async () => 'late',
    }));
    await until('the popup to list late_tool', async () => (await listed()).includes('late_tool'), 30_000);
    await popup.close();
    await page.close();
  });

  test('the page cannot answer a confirmation: its own confirm() and forged events change nothing', async () => {
    const { page, tabId } = await open('tools.html');
    await page.evaluate(() => {
      window.confirm = () => true;
      window.alert = () => {};
      document.dispatchEvent(new CustomEvent('webmcp-host:main-ready'));
    });
    const dialogs = [];
    page.once('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
    assert.deepEqual(await callTool({ tabId, name: 'delete_everything', args: { confirm: true } }), {
      ok: false, error: 'NotAllowedError: declined: the person did not allow this call',
    });
    assert.equal(dialogs.length, 1, "the browser's dialog was shown all the same");
    assert.deepEqual(await page.evaluate(() => window.__calls), [], 'declined: not run');
    await page.close();
  });

  test('site policy: a filter hides tools, alwaysConfirm asks for every call, untrusted wraps results as data', async () => {
    const { page, tabId } = await open('tools.html');
    const origin = new URL(server.url).origin;
    await configure({ sites: [{ origin, filter: ['add', 'describe_input'], alwaysConfirm: true, untrusted: true }] });
    try {
      const names = (await listTools(tabId)).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['add', 'describe_input'], 'only the filtered tools (the frame of the same origin too)');
      assert.match((await callTool({ tabId, name: 'fail', args: {} })).error, /no page tool named `fail`/);

      const dialogs = [];
      page.once('dialog', (d) => { dialogs.push(d.message()); d.dismiss(); });
      assert.deepEqual(await callTool({ tabId, name: 'add', args: { a: 1, b: 2 } }), {
        ok: false, error: 'NotAllowedError: declined: the person did not allow this call',
      });
      assert.equal(dialogs.length, 1, 'a read-only tool is confirmed under alwaysConfirm');
      assert.deepEqual(await page.evaluate(() => window.__calls), [], 'declined: not run');

      const transcript = [{ calls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: 'Five.' }]
        .map((line) => JSON.stringify(line)).join('\n');
      await configure({ models: [{ name: 'site', provider: 'replay', transcript }], default: 'site', servers: [] });
      page.once('dialog', (d) => d.accept());
      const result = await host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt: 'Add 2 and 3.' });
      const content = result.events.find((e) => e.type === 'TOOL_CALL_RESULT').content;
      assert.match(content, new RegExp(`^<data source="page ${origin.replace(/[.]/g, '\\.')}">\\n5\\n</data>`));
    } finally {
      await configure({ sites: [] });
    }
    assert.ok((await listTools(tabId)).tools.some((t) => t.name === 'fail'), 'without the policy every tool is back');
    await assert.rejects(configure({ sites: [{ origin: 'https://x.test/path' }] }), /is not an origin/);
    await page.close();
  });
});

describe('page bridge on polyfilled pages (WebMCP off)', () => {
  let server, host;
  const listTools = (tabId) => host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
  const callTool = (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), request);

  before(async () => {
    server = await serve(FIXTURES, 0, VENDOR);
    host = await launchHost({ webmcp: false });
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  for (const [fixture, polyfill] of [['polyfill.html', '@mcp-b/webmcp-polyfill'], ['global.html', '@mcp-b/global']]) {
    test(`${polyfill}: tools are listed and called through the MAIN-world companion`, async () => {
      const page = await host.context.newPage();
      await page.goto(`${server.url}/${fixture}`);
      const tabId = await host.tabIdOf(page);
      assert.equal(await page.evaluate(() => typeof document.modelContext?.registerTool), 'function', 'the page has its polyfill');
      assert.equal(
        await evaluateInContentScript(host.context, page, 'typeof document.modelContext'),
        'undefined',
        'the isolated world cannot see it',
      );
      const names = (await listTools(tabId)).tools.map((t) => t.name).sort();
      assert.deepEqual(names, ['close_account', 'multiply', 'profile']);
      assert.deepEqual(await callTool({ tabId, name: 'multiply', args: { a: 6, b: 7 } }), { ok: true, result: '42', input: 'text' }, 'the polyfill takes its input as JSON text');
      // Not read-only, on a source that may drop consequentialHint: confirmed, and accepted.
      const dialogs = [];
      page.once('dialog', (d) => { dialogs.push(d.message()); d.accept(); });
      assert.deepEqual(await callTool({ tabId, name: 'profile', args: { who: 'Ann' } }), {
        ok: true, result: JSON.stringify({ who: 'Ann', polyfill }), input: 'text',
      });
      assert.equal(dialogs.length, 1, 'profile was confirmed');
      // Confirmed because the polyfill drops consequentialHint, not because the page said so:
      // listed as "hints unknown", and the question says why.
      const profile = (await listTools(tabId)).tools.find((t) => t.name === 'profile');
      assert.equal(profile.annotations.hintsUnknown, true, JSON.stringify(profile.annotations));
      assert.match(dialogs[0].replace(/\n/g, ' '), /asked because this page's WebMCP polyfill does not say which tools act/);
      const diagnosis = await host.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), tabId);
      assert.match(diagnosis.findings.find((f) => f.id === 'webmcp-polyfill').message, /@mcp-b\/webmcp-polyfill/);
      assert.deepEqual(await page.evaluate(() => window.__calls), [
        { name: 'multiply', input: { a: 6, b: 7 } },
        { name: 'profile', input: { who: 'Ann' } },
      ], 'the page received objects, as its tools expect');
      await page.close();
    });
  }

  test("a polyfill that passes every hint on (Google's demo polyfill) is read as a native page", async () => {
    const page = await host.context.newPage();
    await page.goto(`${server.url}/demo-polyfill.html`);
    const tabId = await host.tabIdOf(page);
    const { tools } = await listTools(tabId);
    const hints = Object.fromEntries(tools.map((t) => [t.name, t.annotations]));
    assert.deepEqual(Object.keys(hints).sort(), ['get_menu', 'place_order', 'remove_topping']);
    assert.equal(hints.remove_topping.consequentialHint, false, 'no hint given: not consequential, as on a native page');
    assert.equal(hints.remove_topping.hintsUnknown, undefined);
    assert.equal(hints.place_order.consequentialHint, true, "the page's own hint is kept");
    assert.deepEqual([...new Set(tools.map((t) => t.polyfill))], ['google-demo'], 'each tool names the polyfill that served it');
    // remove_topping runs unasked; place_order is asked.
    const dialogs = [];
    const answer = (d) => { dialogs.push(d.message()); d.accept(); };
    page.on('dialog', answer);
    assert.deepEqual(await callTool({ tabId, name: 'remove_topping', args: { topping: 'olives' } }), { ok: true, result: 'removed olives' });
    assert.equal(dialogs.length, 0, 'not asked');
    assert.deepEqual(await callTool({ tabId, name: 'place_order', args: {} }), { ok: true, result: 'ordered' });
    assert.equal(dialogs.length, 1, 'asked');
    assert.doesNotMatch(dialogs[0], /polyfill/, 'asked because the page said it acts');
    page.off('dialog', answer);
    const diagnosis = await host.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), tabId);
    assert.match(diagnosis.findings.find((f) => f.id === 'webmcp-polyfill').message, /Google's demo polyfill/);
    await page.close();
  });

  test('a polyfilled page cannot pair again, answer for the bridge, or skip a confirmation', async () => {
    const page = await host.context.newPage();
    await page.goto(`${server.url}/polyfill.html`);
    const tabId = await host.tabIdOf(page);
    // The page listens for every pairing message, then asks for a hello and offers its own.
    const heard = await page.evaluate(() => {
      const seen = (window.__seen = []);
      for (const type of ['webmcp-host:hello', 'webmcp-host:main-ready']) {
        document.addEventListener(type, (e) => seen.push({ type, detail: e.detail ?? null }), true);
      }
      document.addEventListener(`webmcp-host:${'a'.repeat(32)}:request`, () => seen.push({ type: 'request' }), true);
      document.dispatchEvent(new CustomEvent('webmcp-host:main-ready'));
      document.dispatchEvent(new CustomEvent('webmcp-host:hello', { detail: 'a'.repeat(32) }));
      return [...seen];
    });
    assert.deepEqual(heard.map((h) => h.type), ['webmcp-host:main-ready', 'webmcp-host:hello'], 'only its own events: no secret came back');
    assert.ok(!heard.some((h) => h.type === 'webmcp-host:hello' && h.detail !== 'a'.repeat(32)));

    // Calls still go to the real companion, and a consequential call (a polyfilled tool that is
    // not read-only: the polyfill drops consequentialHint) is confirmed by the browser's dialog,
    // which the page cannot answer: declined means not run.
    page.once('dialog', (d) => d.dismiss());
    assert.deepEqual(await callTool({ tabId, name: 'close_account', args: {} }), {
      ok: false, error: 'NotAllowedError: declined: the person did not allow this call',
    });
    page.once('dialog', (d) => d.accept());
    assert.deepEqual(await callTool({ tabId, name: 'close_account', args: {} }), { ok: true, result: 'closed', input: 'text' });
    assert.deepEqual(await page.evaluate(() => window.__calls.map((c) => c.name)), ['close_account']);
    assert.deepEqual((await page.evaluate(() => window.__seen)).map((h) => h.type), heard.map((h) => h.type),
      'no request went to the secret the page offered');
    await page.close();
  });
});

describe('page bridge and the back/forward cache', () => {
  let server, host;

  before(async () => {
    server = await serve(FIXTURES);
    host = await launchHost({ bfcache: true });
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('a page that enters the cache mid-call ends the call with {navigated}; restored, it answers again', async () => {
    const page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    const tabId = await host.tabIdOf(page);
    const callTool = (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), { tabId, ...request });
    const pending = callTool({ name: 'never_returns', args: {}, timeoutMs: 20_000 });
    await until('the call to reach the page', async () => page.evaluate(() => window.__calls.some((c) => c.name === 'never_returns')), 30_000);
    await page.goto(`${server.url}/results.html?away=1`);
    const answer = await pending;
    assert.deepEqual(answer, { ok: true, navigated: true, url: `${server.url}/results.html?away=1`, tools: ['pick_result'], resultNote: NO_JSON_LD });
    await page.goBack({ waitUntil: 'commit' });
    // Restored from the cache, not loaded again: the page's state is still there.
    await until('the restored page', async () => (await page.evaluate(() => window.__calls?.length ?? 0)) > 0, 30_000);
    assert.deepEqual(await callTool({ name: 'add', args: { a: 1, b: 1 } }), { ok: true, result: '2' });
    assert.deepEqual(await page.evaluate(() => window.__calls.map((c) => c.name)), ['never_returns', 'add']);
    await page.close();
  });
});
