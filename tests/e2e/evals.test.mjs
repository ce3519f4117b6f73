// Evals in the extension: webmcpHost.evaluate in smoke mode (the expected calls performed on the
// fixture shop, results checked) and agent mode (the scripted model server's calls judged), the
// reports (JUnit read back by a JUnit XML parser, the HTML page screenshotted), record → test
// (toEval) passing on the same page and failing once the page changed (`?v=2`), and replayDiff
// naming the changed calls; each agent result carries its run's timeline, shown per case in the
// HTML report. Screenshots: test-output/eval-report.png, test-output/popup-evals.png.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseJunit } from 'junit2json';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const say = (text) => ({ text });
const user = (content) => [{ role: 'user', type: 'message', content }];

// The recorded shopping run: a search, then the cart.
const SHOPPING = [call('search_products', { query: 'blue mug' }), call('add_to_cart', { id: 'mug-1', qty: 2 }), say('Done.')];
const SCENARIOS = {
  // One case after the other: a pass, a wrong argument, a missing call, a call when none was expected.
  agent: {
    steps: [
      call('search_products', { query: 'blue mug' }), say('Found it.'),
      call('add_to_cart', { id: 'mug-1', qty: 3 }), say('Added.'),
      call('search_products', { query: 'red mug' }), say('Here it is.'),
      call('search_products', { query: 'hello' }), say('Hi!'),
    ],
  },
  shopping: { steps: SHOPPING, after: 'repeat' },
  // Each run of each model: a search (pass), then a cart call (fail).
  multi: { steps: [call('search_products', { query: 'mug' }), say('Found.'), call('add_to_cart', { id: 'mug-1', qty: 1 }), say('Added.')] },
  popup: { steps: [say('Hello to you.'), ...SHOPPING], after: 'repeat' },
  order: { steps: [call('place_order', {}), say('Ordered.')], after: 'repeat' },
  // Two runs of one case: each a call, then the answer.
  restock: { steps: [call('restock', { id: 'mug-1' }), say('Restocked.'), call('restock', { id: 'mug-1' }), say('Restocked.')] },
  // Nine cases × two runs, run by run: six cases are met (search, add) but for the second run
  // of the second, which answers without a call; the last three (an order) never are.
  chat: { steps: [say('Hi.')], after: 'repeat' },
  grid: {
    steps: Array.from({ length: 18 }, (_, run) => {
      const met = run < 12 && run !== 3;
      return met ? [call('search_products', { query: 'mug' }), call('add_to_cart', { id: 'mug-1', qty: 1 }), say('Done.')] : [say('No.')];
    }).flat(),
  },
};

const AGENT_EVALS = [
  { name: 'finds a blue mug', messages: user('Find me a blue mug'), expectedCall: [{ functionName: 'search_products', arguments: { query: { $contains: 'mug' } } }] },
  { name: 'adds two mugs', messages: user('Add two blue mugs (mug-1) to the cart'), expectedCall: [{ functionName: 'add_to_cart', arguments: { id: 'mug-1', qty: 2 } }] },
  {
    name: 'searches then adds',
    messages: user('Buy a red mug'),
    expectedCall: [{ ordered: [{ functionName: 'search_products' }, { functionName: 'add_to_cart', arguments: { id: 'mug-2' } }] }],
  },
  { name: 'just greets', messages: user('Hello!'), expectedCall: null },
];

const SMOKE_EVALS = [
  {
    name: 'search answers mugs',
    messages: user('Find mugs'),
    expectedCall: [
      { functionName: 'search_products', arguments: { query: { $contains: 'mug' } }, result: { count: { $gte: 2 } } },
      { unordered: [{ functionName: 'add_to_cart', arguments: { id: 'mug-1', qty: { $gt: 0 } }, result: { $pattern: '^added 1' } }] },
    ],
  },
  { name: 'wrong argument', messages: user('Find teapots'), expectedCall: [{ functionName: 'search_products', arguments: { query: 'teacup' }, result: { count: { $gte: 1 } } }] },
  { name: 'missing tool', messages: user('Empty the cart'), expectedCall: [{ functionName: 'empty_cart', arguments: {} }] },
  { name: 'nothing to call', messages: user('Hello'), expectedCall: null },
  { name: 'places the order', messages: user('Order'), expectedCall: [{ functionName: 'place_order', arguments: {}, result: { success: true } }] },
];

describe('evals', () => {
  let server, models, host, page, tabId;
  const dialogs = [];
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const model = (name, scenario) => ({
    name,
    provider: 'openai',
    baseUrl: `${models.url}/s/${scenario}/v1`,
    model: 'openai-test',
    nativeTools: true,
    keyRef: 'k',
  });
  const open = async (query = '') => {
    await page.goto(`${server.url}/evals.html${query}`);
    tabId = await host.tabIdOf(page);
    await op('listTools', { tabId });
  };

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      dialog.accept();
    });
    await op('configure', {
      keys: { k: 'sk-test-evals' },
      models: [
        model('scripted', 'agent'),
        model('recorder', 'shopping~rec'),
        model('again', 'shopping~again'),
        model('changed', 'shopping~changed'),
        model('popup', 'popup'),
        model('first', 'multi~first'),
        model('second', 'multi~second'),
        model('popuprec', 'shopping~popuprec'),
        model('orderer', 'order'),
        model('restocker', 'restock'),
        model('grid', 'grid'),
        model('chat', 'chat'),
      ],
      default: 'scripted',
    });
    await open();
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('smoke mode performs the expected calls and checks their results', async () => {
    const answer = await op('evaluate', { tabId, evals: SMOKE_EVALS, mode: 'smoke' });
    const outcomes = answer.results.map((r) => [r.name, r.outcome]);
    assert.deepEqual(outcomes, [
      ['search answers mugs', 'pass'],
      ['wrong argument', 'fail'],
      ['missing tool', 'error'],
      ['nothing to call', 'pass'],
      ['places the order', 'pass'],
    ]);
    assert.match(answer.results[1].reason, /step 1 \(search_products\): the result \{"count":0,"items":\[\]\} does not match/);
    assert.match(answer.results[2].reason, /step 1 \(empty_cart\)/);
    assert.deepEqual(answer.results[0].calls.map((c) => c.name), ['search_products', 'add_to_cart']);
    assert.deepEqual(answer.results[0].calls[1].args, { id: 'mug-1', qty: 1 }, 'concrete arguments from the matchers');
    assert.deepEqual(
      { testCount: answer.testCount, passCount: answer.passCount, failCount: answer.failCount, errorCount: answer.errorCount },
      { testCount: 5, passCount: 3, failCount: 1, errorCount: 1 },
    );
    const calls = await page.evaluate(() => window.__calls.map((c) => c.name));
    assert.deepEqual(calls, ['search_products', 'add_to_cart', 'search_products', 'place_order']);
    assert.ok(dialogs.some((d) => d.includes('place_order')), 'the consequential call was confirmed in the page');
  });

  test('allowActing for the site: a consequential call runs with no dialog and says it was allowed by the site policy', async () => {
    const order = [SMOKE_EVALS[4]];
    const origin = new URL(server.url).origin;
    const allowed = `allowed by site policy ${origin}`;
    const ordered = () => page.evaluate(() => window.__calls.filter((c) => c.name === 'place_order').length);
    try {
      await op('configure', { sites: [{ origin, allowActing: true }] });
      let seen = dialogs.length;
      let before = await ordered();
      const smoke = await op('evaluate', { tabId, evals: order, mode: 'smoke', format: 'html' });
      assert.equal(smoke.results[0].outcome, 'pass', JSON.stringify(smoke.results[0]));
      assert.equal(dialogs.length, seen, `no dialog was shown: ${dialogs.slice(seen)}`);
      assert.equal(await ordered(), before + 1, 'the tool ran');
      assert.equal(smoke.results[0].calls[0].confirmation, allowed);
      assert.ok(smoke.report.includes(allowed), 'the HTML report says so');
      // An agent run: its log and timeline say so too.
      seen = dialogs.length;
      const agent = await op('evaluate', { tabId, evals: [{ ...SMOKE_EVALS[4], expectedCall: [{ functionName: 'place_order' }] }], mode: 'agent', models: ['orderer'] });
      assert.equal(agent.results[0].outcome, 'pass', JSON.stringify(agent.results[0]));
      assert.equal(dialogs.length, seen, 'no dialog in the run either');
      const calls = agent.results[0].timeline.entries.flatMap((e) => e.calls ?? []);
      assert.equal(calls.find((c) => c.name === 'place_order')?.confirmation, allowed, JSON.stringify(calls));
      const log = await op('runLog', { runId: agent.results[0].runId });
      assert.ok(JSON.stringify(log).includes(allowed), 'the run log keeps it');
      // alwaysConfirm on a matching policy wins: asked.
      await op('configure', { sites: [{ origin, allowActing: true }, { origin: '*', alwaysConfirm: true }] });
      seen = dialogs.length;
      const asked = await op('evaluate', { tabId, evals: order, mode: 'smoke' });
      assert.equal(asked.results[0].outcome, 'pass');
      assert.equal(dialogs.length, seen + 1, 'asked under alwaysConfirm');
      assert.equal(asked.results[0].calls[0].confirmation, undefined);
      // `*` never allows acting.
      await assert.rejects(op('configure', { sites: [{ origin: '*', allowActing: true }] }), /allowActing` needs one exact origin/);
    } finally {
      await op('configure', { sites: [] });
    }
    // Without the policy: the dialog appears (and is accepted here).
    const seen = dialogs.length;
    const plain = await op('evaluate', { tabId, evals: order, mode: 'smoke' });
    assert.equal(plain.results[0].outcome, 'pass');
    assert.equal(dialogs.length, seen + 1);
    assert.ok(dialogs.at(-1).includes('place_order'));
    assert.equal(plain.results[0].calls[0].confirmation, undefined);
  });

  test('smoke mode waits up to 5 s for a tool the page registers late', async () => {
    await open('?late=1500');
    const restock = [{ name: 'restock', messages: user('Restock mug-1'), expectedCall: [{ functionName: 'restock', arguments: { id: 'mug-1' }, result: { success: true } }] }];
    const answer = await op('evaluate', { tabId, evals: restock, mode: 'smoke' });
    assert.equal(answer.results[0].outcome, 'pass', JSON.stringify(answer.results[0]));
    assert.deepEqual(answer.results[0].calls[0].result, { success: true, restocked: 'mug-1' });
    // Called as soon as it is listed, not after the whole wait: the wait's decision, tested
    // natively (`smoke_waits_up_to_5_s_for_a_tool_registered_late`).
    // Not registered within the wait (here bounded by the call timeout): an error naming the wait.
    await open('?late=60000');
    const missing = await op('evaluate', { tabId, evals: restock, mode: 'smoke', timeoutMs: 800 });
    assert.equal(missing.results[0].outcome, 'error');
    assert.match(missing.results[0].reason, /^step 1 \(restock\): the tool is not on the page \(waited \d+ ms for it to appear\); the tab offers: add_to_cart, place_order, search_products$/);
    assert.equal(missing.results[0].calls[0].made, false, 'recorded as not made');
    assert.deepEqual(await page.evaluate(() => window.__calls.map((c) => c.name)), [], 'never called');
    await open();
  });

  test("reload: each case starts on the suite's first page, freshly loaded, even after a case navigated away", async () => {
    await open('?nav&late=300');
    const first = page.url();
    const suite = [
      { name: 'leaves', messages: user('Open the other shop'), expectedCall: [{ functionName: 'open_changed_shop' }] },
      { name: 'adds', messages: user('Add a blue mug'), expectedCall: [{ functionName: 'add_to_cart', arguments: { id: 'mug-1', qty: 1 }, result: { $pattern: '^added 1' } }] },
      { name: 'restocks', messages: user('Restock mug-1'), expectedCall: [{ functionName: 'restock', arguments: { id: 'mug-1' }, result: { success: true } }] },
    ];
    // Without reload a case meets the page the last one left: the changed shop (no add_to_cart there).
    const left = await op('evaluate', { tabId, evals: suite.slice(0, 1), mode: 'smoke' });
    assert.equal(left.results[0].outcome, 'pass', JSON.stringify(left.results));
    await page.waitForURL(/v=2/);
    const stale = await op('evaluate', { tabId, evals: suite.slice(1, 2), mode: 'smoke', timeoutMs: 800 });
    assert.equal(stale.results[0].outcome, 'error', JSON.stringify(stale.results));

    await open('?nav&late=300');
    await page.evaluate(() => { window.__mark = 'before'; });
    const seen = [];
    const answer = await op('evaluate', { tabId, evals: suite, mode: 'smoke', reload: true, timeoutMs: 5000 });
    for (const r of answer.results) seen.push([r.name, r.outcome, r.reason ?? '']);
    assert.deepEqual(seen.map((r) => r.slice(0, 2)), [['leaves', 'pass'], ['adds', 'pass'], ['restocks', 'pass']], JSON.stringify(seen));
    assert.equal(page.url(), first, 'back on the first page');
    assert.equal(await page.evaluate(() => window.__mark), undefined, 'a new document');
    assert.deepEqual(await page.evaluate(() => window.__calls.map((c) => c.name)), ['restock'], 'the last case alone ran in this document');

    await assert.rejects(op('evaluate', { tabId, evals: suite, mode: 'smoke', reload: 'yes' }), /`reload` must be true or false/);

    // Agent mode: after each reload the run starts once the page lists the tool the case
    // expects (registered 300 ms after load here), so the model's call finds it.
    const agent = await op('evaluate', { tabId, evals: suite.slice(2, 3), mode: 'agent', models: ['restocker'], runs: 2, reload: true });
    for (const r of agent.results) {
      assert.equal(r.outcome, 'pass', JSON.stringify(r));
      assert.deepEqual(r.calls[0].result, { success: true, restocked: 'mug-1' }, 'the tool was there when the model called it');
    }
    assert.deepEqual(await page.evaluate(() => window.__calls.map((c) => c.name)), ['restock'], 'the second run on a fresh page');

    // A page that goes on elsewhere each time it loads again: each case an error saying so; the suite ends.
    await open('?bounce');
    const bounced = await op('evaluate', { tabId, evals: suite.slice(1, 3), mode: 'smoke', reload: true });
    assert.deepEqual(bounced.results.map((r) => r.outcome), ['error', 'error'], JSON.stringify(bounced.results));
    for (const r of bounced.results) {
      assert.match(r.reason, /^the tab could not be reloaded: the page went on to http:\/\/[^ ]+\?v=2 each time http:\/\/[^ ]+\?bounce was loaded$/);
      assert.deepEqual(r.calls, [], 'nothing was called');
    }
    await open();
  });

  let agentAnswer;
  test('agent mode judges the calls a model made: a pass, a wrong argument, a missing call, an extra call', async () => {
    agentAnswer = await op('evaluate', { tabId, evals: JSON.stringify(AGENT_EVALS), mode: 'agent', models: ['scripted'] });
    const byName = Object.fromEntries(agentAnswer.results.map((r) => [r.name, r]));
    assert.equal(byName['finds a blue mug'].outcome, 'pass');
    assert.equal(byName['adds two mugs'].outcome, 'fail');
    assert.match(byName['adds two mugs'].reason, /add_to_cart called with \{"id":"mug-1","qty":3\}/);
    assert.equal(byName['searches then adds'].outcome, 'fail');
    assert.match(byName['searches then adds'].reason, /missing call: add_to_cart/);
    assert.equal(byName['just greets'].outcome, 'fail');
    assert.match(byName['just greets'].reason, /^expected no tool call; made search_products/);
    assert.deepEqual(byName['finds a blue mug'].calls[0].result.items.map((i) => i.id), ['mug-1', 'mug-2'], 'results as the page gave them');
    const answers = ['Found it.', 'Added.', 'Here it is.', 'Hi!'];
    for (const [i, r] of agentAnswer.results.entries()) {
      assert.equal(r.model, 'scripted');
      assert.equal(r.runIndex, 0);
      assert.ok(typeof r.runId === 'string' && r.latencyMs >= 0);
      // Each run's timeline, read from its log: its calls, each step's tokens, its answer.
      assert.equal(r.timeline.state, 'finished', JSON.stringify(r.timelineError ?? r.timeline).slice(0, 300));
      assert.equal(r.timeline.answer, answers[i]);
      const steps = r.timeline.entries.filter((e) => e.kind === 'step');
      assert.deepEqual(steps.flatMap((s) => s.calls.map((c) => c.name)), r.calls.map((c) => c.name));
      assert.ok(steps.every((s) => s.tokens.usage === 'reported' && s.tokens.inputTokens > 0), JSON.stringify(steps[0].tokens));
    }
    const stats = agentAnswer.models.scripted;
    assert.equal(stats.passRate, 0.25);
    assert.ok(stats.latencyMs.median > 0 && stats.latencyMs.p95 >= stats.latencyMs.median);
    assert.ok(stats.tokens === null || typeof stats.tokens === 'number', 'tokens: a count, or null when unknown');
    assert.deepEqual([agentAnswer.testCount, agentAnswer.passCount, agentAnswer.failCount, agentAnswer.errorCount], [4, 1, 3, 0]);
  });

  test('agent mode runs each case with each model, runs times, and compares the models', async () => {
    const answer = await op('evaluate', { tabId, evals: AGENT_EVALS.slice(0, 1), mode: 'agent', models: ['first', 'second'], runs: 2 });
    assert.deepEqual(answer.results.map((r) => [r.model, r.runIndex, r.outcome]), [
      ['first', 0, 'pass'],
      ['first', 1, 'fail'],
      ['second', 0, 'pass'],
      ['second', 1, 'fail'],
    ]);
    assert.deepEqual(Object.keys(answer.models), ['first', 'second']);
    for (const stats of Object.values(answer.models)) assert.deepEqual([stats.passRate, stats.runs], [0.5, 2]);
  });

  test('the JUnit report is read by a JUnit XML parser; the HTML report is one escaped page', async () => {
    const xml = await op('evalReport', { report: agentAnswer, format: 'junit' });
    const junit = await parseJunit(xml);
    assert.equal(junit.tests, 4);
    assert.equal(junit.failures, 3);
    const suite = junit.testsuite[0];
    assert.equal(suite.name, 'agent: scripted');
    assert.deepEqual(suite.testcase.map((c) => c.name), AGENT_EVALS.map((e) => `${e.name} [scripted #1]`));
    assert.match(suite.testcase[1].failure[0].message, /add_to_cart called with/);
    const smokeXml = (await op('evaluate', { tabId, evals: SMOKE_EVALS.slice(1, 3), mode: 'smoke', format: 'junit', timeoutMs: 1000 })).report;
    const smoke = await parseJunit(smokeXml);
    assert.deepEqual([smoke.tests, smoke.failures, smoke.errors], [2, 1, 1]);

    // A hostile name and result stay text.
    const hostile = structuredClone(agentAnswer);
    hostile.results[0].name = '<img src=x onerror="window.__xss=1">';
    hostile.results[0].calls[0].result = '<script>window.__xss=2</script>';
    hostile.results[0].timeline.answer = '<script>window.__xss=3</script>';
    const html = await op('evalReport', { report: hostile, format: 'html' });
    // Per case, the run's timeline: its calls by name and its answer.
    for (const [i, r] of agentAnswer.results.entries()) {
      for (const c of r.calls) assert.ok(html.includes(`Call <b>${c.name}</b>`), `${r.name}: ${c.name}`);
      if (i > 0) assert.ok(html.includes(`<span class="muted">Answer:</span> ${r.timeline.answer}</li>`), r.name);
    }
    await mkdir(join(ROOT, 'test-output'), { recursive: true });
    await writeFile(join(ROOT, 'test-output', 'eval-report.html'), html);
    const view = await host.context.newPage();
    await view.setContent(html);
    assert.equal(await view.evaluate(() => window.__xss), undefined);
    assert.equal(await view.locator('section').count(), 4);
    assert.match(await view.textContent('section:nth-of-type(1) h2'), /<img src=x/);
    assert.equal(await view.locator('section details.timeline[open]').count(), 4);
    assert.equal(await view.textContent('section:nth-of-type(1) .tl-answer'), 'Answer: <script>window.__xss=3</script>');
    assert.match(await view.textContent('section:nth-of-type(2) .timeline'), /Call add_to_cart[\s\S]*"qty": 3[\s\S]*\d+ in · \d+ out[\s\S]*Answer: Added\./);
    assert.equal(await view.locator('table tr').first().textContent(), 'ModelRunsPass ratepass^kpass@kLatency median (ms)Latency p95 (ms)TokensCost (USD)');
    await view.screenshot({ path: join(ROOT, 'test-output', 'eval-report.png'), fullPage: true });
    await view.close();
    await assert.rejects(op('evalReport', { report: agentAnswer, format: 'pdf' }), /unknown report format "pdf"/);
  });

  test('record → test: a run saved as a case passes on the same page, fails once the page changed; replayDiff names the changed calls', async () => {
    await open();
    const recorded = await op('run', { tabId, prompt: 'Put two blue mugs in my cart', model: 'recorder' });
    assert.equal(recorded.outcome.type, 'completed');
    const made = await op('toEval', { runId: recorded.runId, results: true, loosen: { search_products: { query: '$type' } } });
    assert.deepEqual(made.case.messages, user('Put two blue mugs in my cart'));
    assert.deepEqual(made.case.expectedCall.map((c) => [c.functionName, c.arguments]), [
      ['search_products', { query: { $type: 'string' } }],
      ['add_to_cart', { id: 'mug-1', qty: 2 }],
    ]);
    const passing = await op('evaluate', { tabId, evals: made.text, mode: 'agent', models: ['again'] });
    assert.equal(passing.results[0].outcome, 'pass', passing.results[0].reason);

    await open('?v=2');
    const failing = await op('evaluate', { tabId, evals: made.text, mode: 'agent', models: ['changed'] });
    assert.equal(failing.results[0].outcome, 'fail');
    const smoke = await op('evaluate', { tabId, evals: made.text, mode: 'smoke' });
    assert.equal(smoke.results[0].outcome, 'fail');
    assert.match(smoke.results[0].reason, /search_products\): the result/);

    const diff = await op('replayDiff', { runId: recorded.runId, tabId });
    assert.deepEqual(diff.changed, ['search_products', 'add_to_cart']);
    assert.equal(diff.calls[0].change, 'result');
    assert.equal(diff.calls[1].change, 'availability');
    assert.match(diff.calls[1].summary, /add_to_cart is no longer offered/);
    await open();
    const same = await op('replayDiff', { runId: recorded.runId, tabId });
    assert.equal(same.changedCount, 0, JSON.stringify(same.calls));
  });

  test("the popup's Evals view: Save as test adds the shown run as a case, the suite runs, its report shows", async () => {
    await open();
    await op('run', { tabId, prompt: 'Put two blue mugs in my cart', model: 'popuprec' });
    const popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 900 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=evals`);
    await popup.waitForSelector('body[data-state="ready"]');
    const greets = { name: '<img src=x onerror="window.__xss=1"> greets', messages: user('Hello!'), expectedCall: null };
    await popup.fill('#evals-file', JSON.stringify([greets], null, 2));
    await popup.dispatchEvent('#evals-file', 'change');
    // The run view's latest run (this tab's last agent run) saved as a case, its query loosened.
    await popup.click('#views button[data-view="run"]');
    await popup.click('#save-test');
    await popup.waitForSelector('#evals-new:not([hidden]) select[data-arg="query"]');
    assert.equal(await popup.getAttribute('body', 'data-view'), 'evals');
    await popup.selectOption('#evals-new select[data-arg="query"]', '$type');
    await popup.fill('#evals-new-name', 'puts two blue mugs in the cart');
    await popup.click('#evals-new button[type="submit"]');
    await popup.waitForFunction(() => document.querySelector('#evals-status').textContent.startsWith('Added'));
    const suite = JSON.parse(await popup.inputValue('#evals-file'));
    assert.equal(suite.length, 2);
    assert.deepEqual(suite[1].expectedCall[0], { functionName: 'search_products', arguments: { query: { $type: 'string' } } });
    await popup.selectOption('#evals-mode', 'agent');
    await popup.selectOption('#evals-models', 'popup');
    // Each case on the page loaded afresh: a mark left in this document is gone after.
    await page.evaluate(() => { window.__mark = 'before'; });
    await popup.check('#evals-reload');
    await popup.click('#evals-run');
    await popup.waitForSelector('#evals-results li.eval-result');
    const outcomes = await popup.$$eval('#evals-results li.eval-result', (items) => items.map((i) => i.dataset.outcome));
    assert.deepEqual(outcomes, ['pass', 'pass']);
    assert.equal(await popup.textContent('#evals-summary'), '2 results: 2 passed, 0 failed, 0 errors');
    assert.equal(await popup.locator('#evals-results img').count(), 0, 'case names stay text');
    assert.equal(await popup.locator('#evals-table tr').count(), 2);
    assert.equal(await page.evaluate(() => window.__mark), undefined, 'the page was loaded afresh');
    await mkdir(join(ROOT, 'test-output'), { recursive: true });
    await popup.screenshot({ path: join(ROOT, 'test-output', 'popup-evals.png'), fullPage: true });
    await popup.close();

    // One suite per site: a tab of another origin starts empty, and this site's suite is kept.
    const elsewhere = await host.context.newPage();
    await elsewhere.goto(`${server.url.replace('127.0.0.1', 'localhost')}/evals.html`);
    const suiteShown = async (tab) => {
      const view = await host.context.newPage();
      await view.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tab}&view=evals`);
      await view.waitForSelector('body[data-state="ready"]');
      await view.waitForSelector('#evals-file[data-site]');
      const shown = { text: await view.inputValue('#evals-file'), label: await view.textContent('#evals-file-label') };
      await view.close();
      return shown;
    };
    const other = await suiteShown(await host.tabIdOf(elsewhere));
    assert.deepEqual(other, { text: '', label: `Eval suite of ${new URL(elsewhere.url()).origin} (webmcp-evals JSON)` }, 'another site has its own suite');
    const kept = await suiteShown(tabId);
    assert.equal(JSON.parse(kept.text).length, 2, "this site's suite is kept");
    assert.equal(kept.label, `Eval suite of ${new URL(server.url).origin} (webmcp-evals JSON)`);
    // A suite kept before suites were per site is not lost: the first site shown with none gets it.
    const before = '[{"name": "kept from before"}]';
    const setup = await host.context.newPage();
    await setup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=run`);
    await setup.evaluate((text) => localStorage.setItem('webmcp-host.evals', text), before);
    await setup.close();
    assert.equal(JSON.parse((await suiteShown(tabId)).text).length, 2, 'a site with its own suite keeps it');
    assert.equal((await suiteShown(await host.tabIdOf(elsewhere))).text, before);
    assert.equal((await suiteShown(await host.tabIdOf(elsewhere))).text, before, 'kept for that site');
    await elsewhere.close();
  });
  test("the popup's Evals view shows nine cases × two runs as a grid: pass rates, failures only, each result linked to its run", async () => {
    await open();
    // Six cases the scripted model meets (it searches, then adds), three it does not (it orders nothing).
    const finds = (i) => ({ name: `finds mugs ${i}`, messages: user(`Find mugs, take ${i}`), expectedCall: [{ functionName: 'search_products' }, { functionName: 'add_to_cart' }] });
    const orders = (i) => ({ name: `orders ${i}`, messages: user(`Order, take ${i}`), expectedCall: [{ functionName: 'place_order' }] });
    const suite = [1, 2, 3, 4, 5, 6].map(finds).concat([1, 2, 3].map(orders));
    // Three runs of the person's first: with the suite's 18, more than the 20 kept of them.
    for (const prompt of ['Hi', 'Hello', 'Hey']) await op('run', { tabId, prompt, model: 'chat' });
    const persons = (runs) => runs.filter((r) => !r.eval).map((r) => r.runId);
    const before = await op('runs', {});
    assert.ok(persons(before).length >= 3);
    const popup = await host.context.newPage();
    try {
      await popup.setViewportSize({ width: 404, height: 600 });
      await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=evals`);
      await popup.waitForSelector('body[data-state="ready"]');
      await popup.fill('#evals-file', JSON.stringify(suite));
      await popup.selectOption('#evals-mode', 'agent');
      await popup.selectOption('#evals-models', 'grid');
      await popup.fill('#evals-runs', '2');
      await popup.click('#evals-run');
      await popup.waitForSelector('#evals-grid tr[data-case]', { timeout: 120_000 });
      const heads = await popup.$$eval('#evals-grid tr:first-of-type th', (th) => th.map((t) => t.textContent));
      assert.deepEqual(heads, ['Case', 'grid #1', 'grid #2', 'Pass rate']);
      const rows = await popup.$$eval('#evals-grid tr[data-case]', (trs) => trs.map((tr) => [tr.dataset.case, ...[...tr.querySelectorAll('td')].map((td) => td.textContent)]));
      assert.equal(rows.length, 9);
      assert.deepEqual(rows[1], ['finds mugs 2', '✓', '✗', '1/2 (50%)']);
      for (const row of [rows[0], ...rows.slice(2, 6)]) assert.deepEqual(row.slice(1), ['✓', '✓', '2/2 (100%)'], row[0]);
      for (const row of rows.slice(6)) assert.deepEqual(row.slice(1), ['✗', '✗', '0/2 (0%)'], row[0]);
      // The model's reliability: 5 of 9 cases passed both runs (pass^k), 6 at least one (pass@k).
      const table = await popup.$$eval('#evals-table tr', (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));
      assert.deepEqual(table[0].slice(0, 4), ['Model', 'Pass', 'pass^k', 'pass@k']);
      assert.deepEqual(table[1].slice(0, 4), ['grid', '61%', '56%', '67%']);
      // A pass is one line, a failure open.
      const geometry = await popup.evaluate(() => ({
        height: document.scrollingElement.scrollHeight,
        grid: document.getElementById('evals-grid').getBoundingClientRect().height,
        open: document.querySelectorAll('#evals-results details[open]').length,
      }));
      assert.equal(geometry.open, 7, 'the seven failed results are open');
      await mkdir(join(ROOT, 'test-output'), { recursive: true });
      await popup.screenshot({ path: join(ROOT, 'test-output', 'popup-evals-grid.png'), fullPage: true });
      console.log(`evals grid: 9 cases × 2 runs, grid ${Math.round(geometry.grid)} px, view ${geometry.height} px tall`);
      // Failures only: the four cases that failed a run, and the seven failed results.
      await popup.check('#evals-failures');
      const visible = (selector) => popup.$$eval(selector, (nodes) => nodes.filter((n) => n.offsetParent !== null).length);
      assert.equal(await visible('#evals-grid tr[data-case]'), 4);
      assert.equal(await visible('#evals-results li.eval-result'), 7);
      await popup.screenshot({ path: join(ROOT, 'test-output', 'popup-evals-failures.png'), fullPage: true });
      await popup.uncheck('#evals-failures');
      assert.equal(await visible('#evals-results li.eval-result'), 18);
      // A cell (the second run of a case) leads to its result; the result to its run's timeline
      // in the Log view.
      const cell = '#evals-grid tr[data-case="finds mugs 3"] td:nth-of-type(2) a';
      await popup.click(cell);
      const result = popup.locator(await popup.getAttribute(cell, 'href'));
      assert.equal(await result.locator('details').getAttribute('open'), '');
      const runId = await result.locator('button[data-run-id]').getAttribute('data-run-id');
      assert.match(runId, /^run_/);
      await result.locator('button[data-run-id]').click();
      await popup.waitForSelector('body[data-view="log"]');
      await popup.waitForFunction((id) => document.getElementById('run-select').value === id, runId);
      await popup.waitForSelector('#timeline li');
      assert.match(await popup.textContent('#timeline'), /search_products/);
      // The suite's 18 runs are kept apart: the person's runs are all still there, and the run
      // list shows the suite's runs under it, each by its case, model and run.
      const after = await op('runs', {});
      assert.deepEqual(persons(after), persons(before), "the suite pushed none of the person's runs out");
      const ofSuite = after.filter((r) => r.eval);
      const suites = [...new Set(ofSuite.map((r) => r.eval.suite))];
      const mine = ofSuite.filter((r) => r.eval.suite === suites[0]);
      assert.equal(mine.length, 18);
      assert.deepEqual(mine.find((r) => r.runId === runId).eval, { suite: suites[0], case: 'finds mugs 3', run: 1, model: 'grid' });
      const group = await popup.$eval(`#run-select optgroup[data-suite="${suites[0]}"]`, (g) => ({ label: g.label, options: [...g.children].map((o) => o.textContent) }));
      assert.match(group.label, /^Evals of .+ · 18 runs$/);
      assert.equal(group.options.length, 18);
      assert.ok(group.options.some((o) => o.endsWith('· finds mugs 3 · grid #2')), group.options.join('\n'));
    } finally {
      await popup.close();
    }
  });
});
