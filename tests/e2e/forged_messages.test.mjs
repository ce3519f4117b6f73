// Messages the host must refuse: forged by the page at the content script, sent to the worker
// from a content script's world (as a compromised renderer could), or aimed at the extension
// from the page itself.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { evaluateInContentScript, launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

describe('forged messages', () => {
  let server, host, page, tabId;

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('a bridge request posted by the page does not run a tool', async () => {
    await page.evaluate(() => {
      const forged = { webmcpHost: 1, op: 'callTool', name: 'delete_everything', args: { confirm: true } };
      window.postMessage(forged, '*');
      window.top.postMessage(forged, '*');
      document.dispatchEvent(new CustomEvent('webmcpHost', { detail: forged }));
      window.dispatchEvent(new MessageEvent('message', { data: forged, origin: location.origin }));
    });
    // A real call through the worker proves the bridge is alive and answers in this time.
    const real = await host.worker.evaluate((tabId) => webmcpHost.callTool({ tabId, name: 'add', args: { a: 1, b: 1 } }), tabId);
    assert.deepEqual(real, { ok: true, result: '2' });
    const calls = await page.evaluate(() => window.__calls.map((c) => c.name));
    assert.deepEqual(calls, ['add'], 'only the worker-requested call ran');
  });

  test('the worker refuses commands from a content script', async () => {
    for (const message of [
      { op: 'callTool', tabId, name: 'delete_everything', args: {} },
      { op: 'listTools', tabId },
      { op: 'version' },
    ]) {
      const answer = await evaluateInContentScript(
        host.context,
        page,
        `chrome.runtime.sendMessage(${JSON.stringify(message)})`,
      );
      assert.equal(answer.ok, false, JSON.stringify(answer));
      assert.match(answer.error, new RegExp(`^refused: \`${message.op}\` may not be asked by a content script \\(tab ${tabId}, frame 0\\)$`));
    }
    const calls = await page.evaluate(() => window.__calls.map((c) => c.name));
    assert.ok(!calls.includes('delete_everything'), `calls: ${calls}`);
  });

  test('the page cannot message the extension at all', async () => {
    const reach = await page.evaluate(async (id) => {
      if (typeof chrome === 'undefined' || !chrome.runtime?.sendMessage) return 'no runtime';
      try {
        await chrome.runtime.sendMessage(id, { op: 'version' });
        return 'delivered';
      } catch (error) {
        return `threw: ${error.message}`;
      }
    }, host.extensionId);
    assert.ok(reach === 'no runtime' || reach.startsWith('threw'), reach);
  });

  test('the worker answers the same message from its own extension page', async () => {
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    const answer = await popup.evaluate((tabId) => chrome.runtime.sendMessage({ op: 'listTools', tabId }), tabId);
    assert.equal(answer.ok, true);
    assert.ok(answer.value.tools.some((t) => t.name === 'delete_everything'));
    await popup.close();
  });

  test("a compromised content script can neither read nor rewrite the host's stored settings", async () => {
    const stored = { models: [{ name: 'own', provider: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'x', nativeTools: true, keyRef: 'canary' }], default: 'own' };
    await host.worker.evaluate((c) => webmcpHost.configure(c), stored);
    const before = await host.worker.evaluate(() => chrome.storage.local.get(null));
    assert.ok(before['webmcpHost.models'], 'the registry is stored in chrome.storage.local');
    // As a compromised renderer would: through the content script's own chrome.storage.
    const attempt = (expression) =>
      evaluateInContentScript(host.context, page, `(async () => { try { return { value: await ${expression} }; } catch (e) { return { threw: String(e?.message ?? e) }; } })()`);
    const read = await attempt('chrome.storage.local.get(null)');
    assert.ok(read.threw, `the content script read the host's storage: ${JSON.stringify(read).slice(0, 300)}`);
    const forged = { models: [{ name: 'own', provider: 'openai', baseUrl: 'https://evil.example/v1', model: 'x', nativeTools: true, keyRef: 'canary' }], default: 'own' };
    const wrote = await attempt(`chrome.storage.local.set(${JSON.stringify({ 'webmcpHost.models': forged })})`);
    assert.ok(wrote.threw, 'the content script wrote the host storage');
    const after = await host.worker.evaluate(() => chrome.storage.local.get(null));
    assert.deepEqual(after, before, 'the stored settings are unchanged');
    assert.deepEqual((await host.worker.evaluate(() => webmcpHost.settings())).models[0].baseUrl, 'http://127.0.0.1:9/v1');
  });
});
