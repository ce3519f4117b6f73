// The fixture and `host` against the demo shop and the fixture pages, and `toHaveCalledTool`
// on runs driven by the scripted model server.
import { join } from 'node:path';
import { expect, test as base, WebmcpHostError } from '../index.mjs';
import { ROOT } from '../../../tests/support/browser.mjs';
import { serve } from '../../../tests/support/server.mjs';
import { startModelServer } from '../../../tests/support/model-server.mjs';

const SCENARIOS = {
  add: { steps: [{ calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'The sum is 42.' }] },
  shop: {
    steps: [
      { calls: [{ name: 'search_teas', arguments: { query: 'green', max_price: 15 } }] },
      { calls: [{ name: 'add_to_cart', arguments: { sku: 'sencha-50', quantity: 2 } }] },
      { text: 'Two Sencha are in your cart.' },
    ],
  },
  // Two agent-mode cases in a row: the first as expected, the second calls the wrong tool.
  agent: {
    steps: [
      { calls: [{ name: 'search_teas', arguments: { query: 'green tea', max_price: 15 } }] },
      { text: 'Sencha, €8.50.' },
      { calls: [{ name: 'search_teas', arguments: { query: 'sencha' } }] },
      { text: 'Sencha is in stock.' },
    ],
  },
  // Simulate mode: the agent buys two Sencha; the judge grades.
  buyer: {
    steps: [
      { calls: [{ name: 'search_teas', arguments: { query: 'green', max_price: 15 } }] },
      { calls: [{ name: 'add_to_cart', arguments: { sku: 'sencha-50', quantity: 2 } }] },
      { text: 'Two Sencha are in your cart.' },
    ],
    after: 'repeat',
  },
  grader: { steps: [{ calls: [{ name: 'submit_result', arguments: { reasoning: 'add_to_cart put two Sencha in the cart.', evidence: ['add_to_cart → 2 × sencha-50'], passed: true } }] }], after: 'repeat' },
  claimer: { steps: [{ text: 'Done, two Sencha are in your cart.' }], after: 'repeat' },
};

// Auto worker fixtures are set up before the browser, so they close after it (no open connections).
const test = base.extend({
  shop: [async ({}, use) => { const s = await serve(join(ROOT, 'demo', 'site')); await use(s.url); await s.close(); }, { scope: 'worker', auto: true }],
  fixtures: [async ({}, use) => { const s = await serve(join(ROOT, 'tests', 'fixtures')); await use(s.url); await s.close(); }, { scope: 'worker', auto: true }],
  models: [async ({}, use) => { const s = await startModelServer({ scenarios: SCENARIOS }); await use(s); await s.close(); }, { scope: 'worker', auto: true }],
});

const model = (models, scenario) => ({ name: scenario, provider: 'openai', baseUrl: `${models.url}/s/${scenario}/v1`, model: 'scripted', nativeTools: true });

// `host` is a worker fixture: the browser's settings can be made once for the file.
test.beforeAll(async ({ host, models }) => {
  await host.configure({ models: [model(models, 'add~pw')], default: 'add~pw' });
});

test('the browser has the extension loaded, WebMCP on, and every operation as host.X', async ({ host, page, shop }) => {
  expect(host.extensionId).toMatch(/^[a-p]{32}$/);
  expect(host.operations).toEqual(expect.arrayContaining(['version', 'listTools', 'callTool', 'run', 'configure', 'runLog', 'evaluate']));
  expect(await host.version()).toMatch(/^\d+\.\d+\.\d+/);
  await page.goto(shop);
  const { tools } = await host.listTools({ page });
  expect(tools.map((t) => t.name).sort()).toEqual(['add_to_cart', 'search_teas', 'view_cart']);
  const tabId = await host.tabIdOf(page);
  expect(await host.callTool({ tabId, name: 'search_teas', args: { query: 'oolong' } })).toEqual({
    ok: true,
    result: JSON.stringify([{ sku: 'tieguanyin-50', name: 'Tie Guan Yin', kind: 'oolong', price: 12, grams: 50 }]),
  });
});

test('a failing operation throws the host message, naming the operation and the request', async ({ host }) => {
  const error = await host.listTools({ tabId: 987654 }).catch((e) => e);
  expect(error).toBeInstanceOf(WebmcpHostError);
  expect(error.op).toBe('listTools');
  expect(error.message).toMatch(/^webmcpHost\.listTools\(\{"tabId":987654\}\) failed: \S/);
  expect(error.message).not.toMatch(/evaluate:|\n\s+at /);
  const unknown = await host.call('evaluat', {}).catch((e) => e);
  expect(unknown.message).toMatch(/not an operation of this host \(its operations: .*listTools/);
  expect(host.evaluat).toBeUndefined();
});

test('toHaveCalledTool on a run with the scripted model, on the fixture page', async ({ host, page, fixtures }) => {
  await page.goto(`${fixtures}/tools.html`);
  const result = await host.run({ page, prompt: 'What is 2 + 40?' });
  expect(result.outcome).toEqual({ type: 'completed', text: 'The sum is 42.' });
  expect(result).toHaveCalledTool('add');
  expect(result).toHaveCalledTool('add', { a: 2, b: { $gt: 10 } });
  expect(result.events).toHaveCalledTool('add', { b: 40 });
  expect(result).not.toHaveCalledTool('add', { a: { $lt: 0 } });
  expect(result).not.toHaveCalledTool('fail');
  let failure;
  try {
    expect(result).toHaveCalledTool('add', { a: 3 });
  } catch (error) {
    failure = error.message.replace(/\u001b\[\d+m/g, '');
  }
  expect(failure).toMatch(/Expected a call of "add" with arguments matching \{"a": 3\}/);
  expect(failure).toContain('Calls made (1):\n  add({"a":2,"b":40}) → 42');
  expect(await page.evaluate(() => window.__calls)).toEqual([{ name: 'add', input: { a: 2, b: 40 } }]);
});

test('toHaveCalledTool on a run on the demo shop, its consequential call confirmed in the page', async ({ host, page, shop, models }) => {
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(shop);
  await host.configure({ models: [model(models, 'shop~pw')], default: 'shop~pw' });
  const result = await host.run({ page, prompt: 'Find a green tea under €15 and put two in my cart.' });
  expect(result.outcome.type).toBe('completed');
  expect(result).toHaveCalledTool('search_teas', { query: { $pattern: '(?i)green' }, max_price: { $lte: 15 } });
  expect(result).toHaveCalledTool('add_to_cart', { sku: { $pattern: '^sencha' }, quantity: 2 });
  await expect(page.locator('#cart')).toContainText('2 × Sencha');
});

const SUITE = join(ROOT, 'packages', 'playwright-webmcp-host', 'example', 'shop.evals.json');

test('toPassEvals runs an eval file on the demo shop in smoke mode', async ({ page, shop }) => {
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(shop);
  await expect(page).toPassEvals(SUITE, { cases: ['green teas under 15 euros', 'black teas', 6] });
  const evals = test.info().attachments.find((a) => a.name === 'evals.json');
  const answer = JSON.parse(evals.body.toString());
  expect(answer).toMatchObject({ testCount: 3, passCount: 3, failCount: 0, errorCount: 0 });
  expect(answer).toHaveCalledTool('search_teas', { query: 'green' });
  // The HTML report and the Markdown summary are attached beside it.
  const attached = (name) => test.info().attachments.find((a) => a.name === name);
  expect(attached('evals.html').contentType).toBe('text/html');
  expect(attached('evals.html').body.toString()).toMatch(/^<!doctype html>/);
  expect(attached('evals.md').body.toString()).toMatch(/^## ✅ WebMCP evals \(smoke\)\n\n\*\*3 results\*\*: 3 passed/);
});

test('toPassEvals fails with a readable diff for each case that did not pass', async ({ host, page, shop }) => {
  await page.goto(shop);
  const evals = [
    { name: 'oolong', messages: [], expectedCall: [{ functionName: 'search_teas', arguments: { query: 'oolong' }, result: [{ sku: 'tieguanyin-50' }] }] },
    { name: 'too cheap', messages: [], expectedCall: [{ functionName: 'search_teas', arguments: { query: 'green' }, result: [{ price: { $lt: 5 } }] }] },
    { name: 'no such tool', messages: [], expectedCall: [{ functionName: 'checkout', arguments: {} }] },
  ];
  let message;
  try {
    // A missing tool is waited for up to the call timeout (at most 5 s) before it is an error.
    await expect(page).toPassEvals(evals, { timeoutMs: 1000 });
  } catch (error) {
    message = error.message.replace(/\u001b\[\d+m/g, '');
  }
  expect(message).toContain('2 of 3 results did not pass (3 cases, mode smoke; 1 passed, 1 failed, 1 errors of 3)');
  expect(message).toMatch(
    /✗ too cheap, run 1: fail: step 1 \(search_teas\): the result \[.*\n {2}Expected calls: \[\{"functionName":"search_teas","arguments":\{"query":"green"\},"result":\[\{"price":\{"\$lt":5\}\}\]\}\]\n {2}Calls made: {5}search_teas\(\{"query":"green"\}\) → \[\{"sku":"sencha-50",/,
  );
  expect(message).toMatch(/✗ no such tool, run 1: error: step 1 \(checkout\): .+/);
  // A tool the page lacks: no call listed as made, and the tools that exist named.
  expect(message).toMatch(/✗ no such tool, run 1: .*\n.*\n {2}Calls made: {5}\(none\)\n {2}Not made: {7}checkout\(\{\}\): the tool is not on the page \(waited \d+ ms for it to appear\); the tab offers: .*search_teas/);
  expect(message).not.toContain('✗ oolong');
  // The host given with the tab, and `.not`.
  await expect(host).not.toPassEvals(evals, { tabId: await host.tabIdOf(page), timeoutMs: 1000 });
  await expect(host).toPassEvals(evals, { page, cases: ['oolong'] });
});

test('toPassEvals in agent mode with the scripted model: a pass, and a missing call named', async ({ host, page, shop, models }) => {
  await page.goto(shop);
  await host.configure({ models: [model(models, 'add~pw'), model(models, 'agent~pw')], default: 'add~pw' });
  const user = (content) => [{ role: 'user', type: 'message', content }];
  const evals = [
    { name: 'finds green tea', messages: user('A green tea under €15?'), expectedCall: [{ functionName: 'search_teas', arguments: { query: { $contains: 'green' }, max_price: { $lte: 15 } } }] },
    { name: 'buys sencha', messages: user('Buy one Sencha.'), expectedCall: [{ functionName: 'search_teas', optional: true }, { functionName: 'add_to_cart', arguments: { sku: 'sencha-50' } }] },
  ];
  let message;
  try {
    await expect(page).toPassEvals(evals, { mode: 'agent', models: ['agent~pw'], runs: 1 });
  } catch (error) {
    message = error.message.replace(/\u001b\[\d+m/g, '');
  }
  expect(message).toContain('1 of 2 results did not pass (2 cases, mode agent; 1 passed, 1 failed, 0 errors of 2)');
  expect(message).toMatch(/✗ buys sencha, model agent~pw, run 1: fail: .*missing call: add_to_cart/);
  expect(message).toMatch(/^ {2}Calls made: {5}search_teas\(\{"query":"sencha"\}\) → \[\{"sku":"sencha-50","name":"Sencha","kind":"green","price":8\.5,"grams":50\}\]$/m);
  expect(message).not.toContain('✗ finds green tea');
  const answer = JSON.parse(test.info().attachments.find((a) => a.name === 'evals.json').body.toString());
  expect(answer.results[0]).toHaveCalledTool('search_teas', { query: { $pattern: '(?i)GREEN' } });
  expect(answer.results[1]).not.toHaveCalledTool('add_to_cart');
});

test('toPassEvals in simulate mode: the outcome judged, and a bare claim named as not passing', async ({ host, page, shop, models }) => {
  // The buyer's add_to_cart is consequential: allowed in the page, its result is the judge's
  // evidence (a declined call's would not be).
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(shop);
  await host.configure({ models: [model(models, 'add~pw'), model(models, 'buyer~pw'), model(models, 'grader~pw'), model(models, 'claimer~pw')], default: 'add~pw' });
  const simulations = [{ name: 'two sencha', userMessage: 'Put two Sencha in my cart.', successCriteria: 'Two Sencha (sencha-50) are in the cart.' }];
  await expect(page).toPassEvals(simulations, { mode: 'simulate', models: ['buyer~pw'], judgeModel: 'grader~pw' });
  let message;
  try {
    await expect(page).toPassEvals(simulations, { mode: 'simulate', models: ['claimer~pw'], judgeModel: 'grader~pw' });
  } catch (error) {
    message = error.message.replace(/\u001b\[\d+m/g, '');
  }
  expect(message).toMatch(/✗ two sencha, model claimer~pw, run 1: fail/);
  expect(message).toContain('Overruled:      the judge passed the case, but the agent made no call with a result');
  expect(message).toContain('Calls made:     (none)');
  const html = test.info().attachments.find((a) => a.name === 'evals.html').body.toString();
  expect(html).toContain('Evidence the judge cited');
});
