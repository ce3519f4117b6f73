// webmcpHost.listTools / callTool against a real WebMCP page in Chromium (native WebMCP on).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

describe('page tools through the extension', () => {
  let server, host, page, tabId;
  const list = () => host.worker.evaluate((tabId) => webmcpHost.listTools({ tabId }), tabId);
  const call = (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), { tabId, ...request });
  const pageCalls = () => page.evaluate(() => window.__calls);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    await page.frameLocator('#child').locator('p').waitFor();
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('listTools returns every tool of every frame with description, schema and annotations', async () => {
    const { tools, problems } = await list();
    assert.deepEqual(problems, []);
    // Frames in order (top first); within a frame, the order getTools() gave.
    assert.deepEqual(
      tools.filter((t) => t.frameId === 0).map((t) => t.name).sort(),
      ['add', 'delete_everything', 'describe_input', 'fail', 'never_returns'],
    );
    assert.equal(tools.at(-1).name, 'frame_greet');
    assert.equal(tools.length, 6);
    const add = tools.find((t) => t.name === 'add');
    assert.deepEqual(add, {
      name: 'add',
      title: 'Add two numbers',
      description: 'Adds a and b and returns the sum as text.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      annotations: { readOnlyHint: true, consequentialHint: false, untrustedContentHint: false },
      origin: server.url,
      frameId: 0,
    });
    assert.equal(tools.find((t) => t.name === 'delete_everything').annotations.consequentialHint, true);
    assert.equal(tools.find((t) => t.name === 'never_returns').annotations.untrustedContentHint, true);
    const greet = tools.find((t) => t.name === 'frame_greet');
    assert.notEqual(greet.frameId, 0, 'the child frame tool carries its own frame');
    assert.deepEqual(greet.inputSchema.required, ['who']);
  });

  test('callTool runs a tool with an object argument and returns its result', async () => {
    assert.deepEqual(await call({ name: 'add', args: { a: 2, b: 40 } }), { ok: true, result: '42' });
    const calls = await pageCalls();
    assert.deepEqual(calls.at(-1), { name: 'add', input: { a: 2, b: 40 } });
  });

  test('a non-string result arrives as JSON text', async () => {
    const answer = await call({ name: 'describe_input', args: { items: ['tea', 'cake'] } });
    assert.equal(answer.ok, true);
    assert.deepEqual(JSON.parse(answer.result), { received: { items: ['tea', 'cake'] }, count: 2 });
  });

  test('a tool in a child frame is called in that frame', async () => {
    assert.deepEqual(await call({ name: 'frame_greet', args: { who: 'Ann' } }), {
      ok: true,
      result: 'hello Ann, from the child frame',
    });
    const inFrame = await page.frame({ url: /frame\.html$/ }).evaluate(() => window.__calls);
    assert.deepEqual(inFrame, [{ name: 'frame_greet', input: { who: 'Ann' } }]);
  });

  test('a tool that throws gives an error result', async () => {
    const answer = await call({ name: 'fail', args: {} });
    assert.equal(answer.ok, false);
    assert.match(answer.error, /^UnknownError: /);
  });

  test('an unknown tool is an error that lists what the tab offers', async () => {
    const answer = await call({ name: 'sell', args: {} });
    assert.equal(answer.ok, false);
    assert.match(answer.error, /^no page tool named `sell`; the tab offers: (\w+, ){5}frame_greet$/);
  });

  test('a tool that never resolves ends with a timeout error, not a hang', async () => {
    const answer = await call({ name: 'never_returns', args: {}, timeoutMs: 400 });
    assert.deepEqual(answer, {
      ok: false,
      error: '`never_returns` did not finish within 400 ms; it was cancelled in the page',
    });
    // The page learns of it: the browser fires toolcancel when the host aborts executeTool.
    await until('toolcancel in the page', () => page.evaluate(() => window.__cancelled.length > 0), 30_000);
    assert.deepEqual(await page.evaluate(() => window.__cancelled), ['never_returns']);
  });

  test('a consequential tool asks the person in the page first', async () => {
    const dialogs = [];
    const answer = (accept) => (dialog) => {
      dialogs.push(dialog.message());
      return accept ? dialog.accept() : dialog.dismiss();
    };
    const decline = answer(false);
    page.once('dialog', decline);
    const declined = await call({ name: 'delete_everything', args: { confirm: true } });
    assert.deepEqual(declined, { ok: false, error: 'NotAllowedError: declined: the person did not allow this call' });
    assert.ok(!(await pageCalls()).some((c) => c.name === 'delete_everything'), 'declined: not run');
    page.once('dialog', answer(true));
    assert.deepEqual(await call({ name: 'delete_everything', args: { confirm: true } }), { ok: true, result: 'deleted' });
    assert.equal(dialogs.length, 2);
    assert.match(dialogs[0], /The agent wants to run “delete_everything” on http:\/\/127\.0\.0\.1:\d+ with:\n\{\n  "confirm": true\n\}\n\nAllow it\?$/);
    // A read-only tool asks nothing (a dialog here would be dismissed and fail the call).
    assert.deepEqual(await call({ name: 'add', args: { a: 1, b: 2 } }), { ok: true, result: '3' });
  });

  test('a consequential tool allowed after its call timed out does not run (the caller was told it was cancelled)', async () => {
    const deletions = async () => (await pageCalls()).filter((c) => c.name === 'delete_everything').length;
    const before = await deletions();
    // The page's dialog stays open until the call (it may take 500 ms) has answered; only
    // then does the person allow it.
    const asked = new Promise((resolve) => page.once('dialog', resolve));
    const answer = await call({ name: 'delete_everything', args: { confirm: true }, timeoutMs: 500 });
    assert.equal(answer.ok, false, JSON.stringify(answer));
    assert.match(answer.error, /did not finish within 500 ms/);
    const dialog = await asked;
    assert.match(dialog.message(), /The agent wants to run “delete_everything”/);
    await dialog.accept();
    // confirm() blocked the page's thread: once the page runs script again, it has returned and
    // the content script has gone on from it. A call through the same frame after that: the
    // late-allowed one, had it run, came first.
    await page.evaluate(() => true);
    assert.deepEqual(await call({ name: 'add', args: { a: 1, b: 1 } }), { ok: true, result: '2' });
    assert.equal((await pageCalls()).at(-1).name, 'add');
    assert.equal(await deletions(), before, 'allowed too late: the tool did not run');
  });

  test('malformed requests reject with a clear message', async () => {
    const rejection = (request) =>
      host.worker.evaluate((r) => webmcpHost.callTool(r).then(() => 'resolved', (e) => e.message), request);
    assert.equal(
      await rejection({ tabId, name: 'add', args: '{"a":1}' }),
      "callTool: `args` must be an object (the tool's input), not a string",
    );
    assert.equal(await rejection({ name: 'add' }), "callTool: `tabId` (a tab's tools) or `server` (an MCP server's name) is required");
    const listRejection = await host.worker.evaluate(() =>
      webmcpHost.listTools({ tabId: 987654321 }).then(() => 'resolved', (e) => e.message),
    );
    assert.match(listRejection, /^tab 987654321: /);
  });
});
