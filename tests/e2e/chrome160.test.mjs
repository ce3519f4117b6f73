// Chrome 160's WebMCP shape (160.0.8173.0): `getTools()` returns objects of a `Tool` interface
// (getters, no own properties, `window` renamed `source`) and `executeTool` takes only the very
// object listed. Debian's Chromium is older, so the shape is made by a test-only shim in the
// content script's isolated world (tests/support/chrome-shapes.mjs). On a page whose same-origin
// child frame exposes its tools to the parent, each frame's tools are listed exactly once under
// their own frame, and calls on both frames return what the page answered.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { evaluateInIsolatedWorlds, launchHost, ROOT, until } from '../support/browser.mjs';
import { shapeShim } from '../support/chrome-shapes.mjs';

const CHROME_160_SHIM = shapeShim('160');
import { serve } from '../support/server.mjs';

describe("Chrome 160's Tool interface", () => {
  let server, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    await until('both frames', async () => page.frames().length === 2 || undefined);
    const installed = await evaluateInIsolatedWorlds(host.context, page, CHROME_160_SHIM);
    assert.deepEqual(installed, ['installed', 'installed'], 'the shim is in both frames');
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('each frame lists its own tools exactly once, the child frame what it exposes to its parent included', async () => {
    // The shim answers in the top frame with the child's tools too (source: the child's window).
    const [seen] = await evaluateInIsolatedWorlds(host.context, page, `(async () => {
      const tools = await document.modelContext.getTools();
      return tools.map((t) => [t.name, JSON.stringify(t), Object.keys(t).length, t.source === window]);
    })()`);
    const greet = seen.find(([name]) => name === 'frame_greet');
    assert.deepEqual(greet, ['frame_greet', '{}', 0, false], 'the top frame sees the exposed tool as the interface shows it');
    const { tools, problems } = await op('listTools', { tabId });
    const placed = tools.map((t) => `${t.name}@${t.frameId === 0 ? 'top' : 'child'}`).sort();
    assert.deepEqual(placed, ['add@top', 'delete_everything@top', 'describe_input@top', 'fail@top', 'frame_greet@child', 'never_returns@top'].sort(), JSON.stringify(problems));
    const add = tools.find((t) => t.name === 'add');
    assert.equal(add.title, 'Add two numbers', 'attributes read one by one, through the getters');
    assert.equal(add.inputSchema.required.length, 2);
  });

  test('calls on both frames give executeTool the very object listed and return what the page answered', async () => {
    assert.deepEqual(await op('callTool', { tabId, name: 'add', args: { a: 2, b: 40 } }), { ok: true, result: '42' });
    assert.deepEqual(await op('callTool', { tabId, name: 'frame_greet', args: { who: 'Ann' } }), {
      ok: true,
      result: 'hello Ann, from the child frame',
    });
  });

  // Chrome 159's outputSchema: listed with the tool, and a result that breaks it is reported
  // with the answer (`outputErrors`), each error at its pointer.
  test("a tool's outputSchema is listed, and a result that breaks it comes with outputErrors", async () => {
    const other = await host.context.newPage();
    try {
      await other.goto(`${server.url}/outputs.html`);
      const otherTab = await host.tabIdOf(other);
      await evaluateInIsolatedWorlds(host.context, other, CHROME_160_SHIM);
      const { tools } = await op('listTools', { tabId: otherTab });
      const place = tools.find((t) => t.name === 'place_order');
      assert.deepEqual(place?.outputSchema?.required, ['orderId', 'status'], JSON.stringify(place));
      const placed = await op('callTool', { tabId: otherTab, name: 'place_order', args: {} });
      assert.deepEqual(placed, { ok: true, result: '{"orderId":"o-17","status":"confirmed"}' }, 'a result that matches has no outputErrors');
      const tracked = await op('callTool', { tabId: otherTab, name: 'track_order', args: { orderId: 'o-17' } });
      assert.equal(tracked.ok, true);
      assert.equal(tracked.outputErrors?.length, 1, JSON.stringify(tracked));
      assert.equal(tracked.outputErrors[0].pointer, '/orderId');
      assert.match(tracked.outputErrors[0].message, /string/);
    } finally {
      await other.close();
    }
  });
});
