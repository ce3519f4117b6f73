// Results across documents (tests/fixtures/results/): a call whose result is in another
// document returns what that document says. A declarative form that targets a frame answers
// with the frame's JSON-LD, names the frame, and leaves the top page listed; a form that submits
// to a new page and a tool that navigates answer with the destination's JSON-LD (read by the
// destination's content script), or say it has none; a destination on another origin is named;
// a tool that answers and then navigates gives one answer. The same results reach a run (the
// model gets the JSON-LD as a value), a smoke eval's `result` constraint, and an audit whose
// first probe navigates (the page is loaded again and the others are probed).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT } from '../support/browser.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

const ORDER = { '@context': 'https://schema.org', '@type': 'Order', orderId: 'o-1042', orderStatus: 'confirmed', status: 'confirmed' };
const SCENARIOS = {
  orders: { steps: [{ calls: [{ name: 'order_on_new_page', arguments: { item: 'mug' } }] }, { text: 'Ordered: o-1042.' }] },
};

describe('results across documents', () => {
  let server, models, host, page, other;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const open = async (path) => {
    await page.goto(`${server.url}/results/${path}`);
    const tabId = await host.tabIdOf(page);
    await op('listTools', { tabId });
    return tabId;
  };
  const shop = () => open(`shop.html?other=${encodeURIComponent(other)}`);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    // The same server under another host name: another origin.
    other = server.url.replace('127.0.0.1', 'localhost');
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept().catch(() => {}));
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test("a form that targets a frame answers with the frame's JSON-LD; the top page stays listed", async () => {
    const tabId = await shop();
    const answer = await op('callTool', { tabId, name: 'order_in_frame', args: { item: 'mug' } });
    assert.equal(answer.ok, true, JSON.stringify(answer));
    assert.equal(answer.navigated, undefined, 'not a navigation');
    assert.deepEqual(JSON.parse(answer.result), ORDER);
    assert.ok(answer.frame.frameId > 0, JSON.stringify(answer.frame));
    assert.match(answer.frame.url, /\/results\/order-done\.html\?item=mug$/);
    // That the answer comes as soon as the frame holds its new document, not after the
    // navigation wait, is the page call machine's decision, tested natively
    // (`a_call_that_loads_a_frame_answers_with_the_frames_result`).
    const { tools } = await op('listTools', { tabId });
    assert.ok(tools.some((t) => t.name === 'order_on_new_page' && t.frameId === 0), 'the top page keeps its tools');
    assert.equal(new URL(page.url()).pathname, '/results/shop.html', 'the top page never moved');
  });

  test("a form that submits to a new page and a navigating tool answer with the destination's JSON-LD", async () => {
    for (const [name, args] of [['order_on_new_page', { item: 'mug' }], ['open_receipt', {}]]) {
      const tabId = await shop();
      const answer = await op('callTool', { tabId, name, args });
      assert.equal(answer.ok, true, JSON.stringify(answer));
      assert.equal(answer.navigated, true, name);
      assert.match(answer.url, /\/results\/order-done\.html/);
      assert.deepEqual(JSON.parse(answer.result), ORDER, name);
      assert.equal(answer.crossOrigin, undefined, 'the same origin');
    }
  });

  test('a destination without JSON-LD says so; one on another origin is named', async () => {
    let tabId = await shop();
    const none = await op('callTool', { tabId, name: 'send_message', args: { text: 'hi' } });
    assert.equal(none.navigated, true, JSON.stringify(none));
    assert.equal(none.result, undefined);
    assert.match(none.resultNote, /has no JSON-LD/);
    tabId = await shop();
    const away = await op('callTool', { tabId, name: 'open_partner_receipt', args: {} });
    assert.equal(away.navigated, true, JSON.stringify(away));
    assert.equal(away.crossOrigin, new URL(other).origin);
    assert.deepEqual(JSON.parse(away.result), ORDER);
  });

  test("the popup's Call view shows the destination's result, and another origin as such", async () => {
    const tabId = await shop();
    const popup = await host.context.newPage();
    try {
      await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}&view=call`);
      const choose = async (name) => {
        await popup.waitForSelector(`#call-tool option[value$="${name}"]`, { state: 'attached' });
        const value = await popup.$eval('#call-tool', (s, n) => [...s.options].find((o) => o.value.endsWith(`\u0000${n}`)).value, name);
        await popup.selectOption('#call-tool', value);
        await popup.waitForSelector('#call-form-box:not([hidden])');
      };
      await choose('open_partner_receipt');
      await popup.click('#call-run');
      await popup.locator('#call-result', { hasText: 'navigated' }).waitFor();
      const shown = await popup.textContent('#call-result');
      assert.match(shown, new RegExp(`Another origin: ${new URL(other).origin.replaceAll('.', '\\.')}`));
      assert.match(shown, /What it says \(its JSON-LD\)[\s\S]*"orderId": "o-1042"/);
    } finally {
      await popup.close();
    }
  });

  test('a tool that answers and then navigates gives one answer: its own', async () => {
    const tabId = await shop();
    assert.deepEqual(await op('callTool', { tabId, name: 'save_and_leave', args: {} }), { ok: true, result: 'saved' });
    await page.waitForURL(/order-done\.html/);
  });

  test("a run's model gets the destination's JSON-LD as a value", async () => {
    const tabId = await shop();
    await op('configure', {
      models: [{ name: 'orders', provider: 'openai', baseUrl: `${models.url}/s/orders/v1`, model: 'scripted', nativeTools: true, keyRef: 'k' }],
      default: 'orders',
      keys: { k: 'sk-results-test-key' },
    });
    const run = await op('run', { tabId, prompt: 'Order a mug.' });
    assert.equal(run.outcome.type, 'completed', JSON.stringify(run.outcome));
    const [result] = run.events.filter((e) => e.type === 'TOOL_CALL_RESULT');
    const content = JSON.parse(result.content);
    assert.equal(content.navigated, true);
    assert.deepEqual(content.result, ORDER);
    // The model's next request carries it.
    const sent = models.requests().filter((r) => r.method === 'POST').at(-1);
    assert.match(JSON.stringify(sent.body.messages), /o-1042/);
  });

  test("a smoke case's result constraint is checked against the destination's result", async () => {
    const tabId = await shop();
    const evals = [
      { name: 'order in the frame', messages: [{ role: 'user', type: 'message', content: 'Order a mug' }], expectedCall: [{ functionName: 'order_in_frame', arguments: { item: 'mug' }, result: { orderId: 'o-1042', status: 'confirmed' } }] },
      { name: 'order on a new page', messages: [{ role: 'user', type: 'message', content: 'Order a mug' }], expectedCall: [{ functionName: 'order_on_new_page', arguments: { item: 'mug' }, result: { orderId: { $pattern: '^o-\\d+$' } } }] },
      { name: 'wrong order id', messages: [{ role: 'user', type: 'message', content: 'Order a mug' }], expectedCall: [{ functionName: 'order_on_new_page', arguments: { item: 'mug' }, result: { orderId: 'o-1' } }] },
    ];
    const answer = await op('evaluate', { tabId, evals, mode: 'smoke', reload: true });
    assert.deepEqual(answer.results.map((r) => r.outcome), ['pass', 'pass', 'fail'], JSON.stringify(answer.results));
  });

  test('an audit whose first probe navigates loads the page again and probes the other tools', async () => {
    const tabId = await open('probe-first-navigates.html');
    await page.evaluate(() => sessionStorage.removeItem('calls'));
    const audit = await op('audit', { tabId, probe: true });
    const probed = (tool) => audit.findings.filter((f) => f.tool === tool && f.rule.startsWith('probe-')).map((f) => f.rule);
    assert.deepEqual(probed('browse_receipt'), ['probe-navigates']);
    assert.deepEqual(probed('find_items'), [], JSON.stringify(audit.findings));
    assert.deepEqual(probed('list_items'), []);
    const calls = (await page.evaluate(() => sessionStorage.getItem('calls'))).trim().split(' ');
    assert.equal(calls.filter((c) => c === 'browse_receipt').length, 1, `the navigating tool is called once: ${calls}`);
    assert.equal(calls.filter((c) => c === 'find_items').length, 2, `a valid and an invalid call: ${calls}`);
    assert.equal(calls.filter((c) => c === 'list_items').length, 2, `${calls}`);
    assert.equal(new URL(page.url()).pathname, '/results/probe-first-navigates.html', 'the page is the audited one again');
  });
});
