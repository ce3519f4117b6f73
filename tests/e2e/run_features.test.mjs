// The run features a QA harness reaches from `webmcpHost`: `run({outputSchema})` (the reserved
// `submit_result` tool: valid, repaired, invalid then valid) and `webmcpHost.repairHook(fn)` (a
// call the built-in repair cannot fix, rescued by the hook; a hook that throws or answers null
// leaves the error to the model).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const SCHEMA = {
  type: 'object',
  properties: { answer: { type: 'string' }, count: { type: 'integer', minimum: 0 } },
  required: ['answer', 'count'],
  additionalProperties: false,
};
const submit = (args) => ({ calls: [{ name: 'submit_result', arguments: args }] });
const SCENARIOS = {
  submit: { steps: [submit({ answer: 'mugs', count: 3 })] },
  repaired: { steps: [submit('{"answer": "mugs", "count": "3"')] },
  invalid: { steps: [submit({ answer: 'mugs', count: 'many' }), submit({ answer: 'mugs', count: 3 })] },
  hooked: { steps: [{ calls: [{ name: 'sum_numbers', arguments: { x: 2, y: 40 } }] }, { text: 'The sum is 42.' }] },
};

describe('run features from webmcpHost', () => {
  let server, models, host, page, tabId;
  const run = (request) => host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  const custom = (result, name) => result.events.filter((e) => e.type === 'CUSTOM' && e.name === name).map((e) => e.value);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    await host.worker.evaluate((c) => webmcpHost.configure(c), { models: Object.keys(SCENARIOS).map(model), default: 'submit' });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('outputSchema: a valid submit_result ends the turn with its value', async () => {
    const result = await run({ prompt: 'Count the mugs.', outputSchema: SCHEMA });
    assert.deepEqual(result.outcome, { type: 'submitted', value: { answer: 'mugs', count: 3 } });
    const offered = models.requests().find((r) => r.scenario === 'submit').body.tools.map((t) => t.function.name);
    assert.ok(offered.includes('submit_result'), `offered: ${offered}`);
    assert.deepEqual((await validateEvents(result.events)).errors, []);
  });

  test('outputSchema: a broken submit_result is repaired like any call', async () => {
    const result = await run({ prompt: 'Count the mugs.', outputSchema: SCHEMA, model: 'repaired' });
    assert.deepEqual(result.outcome, { type: 'submitted', value: { answer: 'mugs', count: 3 } });
    const [repair] = custom(result, 'webmcp_host.tool_repair');
    assert.deepEqual(repair.fixes.map((f) => f.step), ['json', 'coerce']);
  });

  test('outputSchema: an invalid submit_result goes back to the model as an error', async () => {
    const result = await run({ prompt: 'Count the mugs.', outputSchema: SCHEMA, model: 'invalid' });
    assert.deepEqual(result.outcome, { type: 'submitted', value: { answer: 'mugs', count: 3 } });
    const second = JSON.stringify(models.requests().filter((r) => r.scenario === 'invalid')[1].body.messages);
    assert.match(second, /count/, 'the model is told what was wrong');
    await assert.rejects(run({ prompt: 'x', outputSchema: { type: 'object', properties: 7 } }), /`outputSchema` is not a valid JSON schema/);
    await assert.rejects(run({ prompt: 'x', outputSchema: 'an answer' }), /`outputSchema` must be a JSON schema \(an object\), not a string/);
  });

  test('repairHook: a call the built-in steps cannot fix is rescued by the hook, and reported', async () => {
    await host.worker.evaluate(() => {
      globalThis.hookAsked = [];
      webmcpHost.repairHook(({ raw, name, error, tools }) => {
        globalThis.hookAsked.push({ raw, name, error, tools: tools.map((t) => t.name) });
        if (name !== 'sum_numbers') return null;
        const { x, y } = JSON.parse(raw);
        return { name: 'add', arguments: { a: x, b: y } };
      });
    });
    const result = await run({ prompt: 'Add 2 and 40.', model: 'hooked' });
    assert.equal(result.outcome.type, 'completed', JSON.stringify(result.outcome));
    const [asked] = await host.worker.evaluate(() => globalThis.hookAsked);
    assert.equal(asked.name, 'sum_numbers');
    assert.ok(asked.tools.includes('add') && asked.error.length > 0, JSON.stringify(asked));
    const calls = await page.evaluate(() => window.__calls.filter((c) => c.name === 'add').map((c) => c.input));
    assert.deepEqual(calls.at(-1), { a: 2, b: 40 });
    const [repair] = custom(result, 'webmcp_host.tool_repair');
    assert.equal(repair.toolCallName, 'add');
    assert.equal(repair.writtenName, 'sum_numbers');
    assert.equal(repair.fixes.at(-1).step, 'hook');
    assert.deepEqual((await validateEvents(result.events)).errors, []);
  });

  test('repairHook: a hook that throws, or null, leaves the error to the model; repairHook(null) removes it', async () => {
    await host.worker.evaluate(() => webmcpHost.repairHook(() => { throw new Error('hook bug'); }));
    models.reset();
    const thrown = await run({ prompt: 'Add 2 and 40.', model: 'hooked' });
    assert.equal(thrown.outcome.type, 'completed');
    const told = JSON.stringify(models.requests().filter((r) => r.scenario === 'hooked')[1].body.messages);
    assert.match(told, /sum_numbers/, 'the model hears its call was refused');
    assert.equal(custom(thrown, 'webmcp_host.tool_repair').length, 0);
    await host.worker.evaluate(() => webmcpHost.repairHook(null));
    await assert.rejects(host.worker.evaluate(() => webmcpHost.repairHook('no')), /repairHook takes a function or null/);
  });
});

describe('middleware from webmcpHost', () => {
  let server, models, host, page, tabId;
  const adds = () => page.evaluate(() => window.__calls.filter((c) => c.name === 'add').length);
  // Each run gets its own step counters on the model server (`add~N`, `twice~N`).
  let round = 0;
  const fresh = async () => {
    round += 1;
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}~${round}/v1`, model: 'x', nativeTools: true });
    await host.worker.evaluate((c) => webmcpHost.configure(c), { models: [model('add'), model('twice')], default: 'add' });
  };
  const run = async (request) => {
    await fresh();
    return host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  };
  /** What the model was told last in the last run's model requests to `scenario`. */
  const told = (scenario) => JSON.stringify(models.requests().filter((r) => r.scenario === `${scenario}~${round}`).at(-1).body.messages.at(-1));

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    const addThenText = { steps: [{ calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'Done.' }] };
    const twice = { steps: [{ calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { calls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }, { text: 'Done.' }] };
    models = await startModelServer({ scenarios: { add: addThenText, twice } });
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('use(fn): a layer sees the call with its context, changes the result, and is removed', async () => {
    await host.worker.evaluate(() => {
      globalThis.seen = [];
      globalThis.removeLayer = webmcpHost.use(async (call, next) => {
        globalThis.seen.push({ ...call, signal: call.signal instanceof AbortSignal });
        const outcome = await next();
        return outcome.ok ? { ok: true, result: `${outcome.result} (checked by the harness)` } : outcome;
      });
    });
    const result = await run({ prompt: 'Add.', context: { account: 'qa-7' } });
    assert.equal(result.outcome.type, 'completed');
    const [seen] = await host.worker.evaluate(() => globalThis.seen);
    assert.deepEqual([seen.name, seen.args, seen.context, seen.callCount, seen.source, seen.signal], ['add', { a: 2, b: 40 }, { account: 'qa-7' }, 1, 'page', true]);
    assert.equal(seen.turnId, result.runId);
    assert.match(told('add'), /42 \(checked by the harness\)/);
    const result2 = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.match(result2.content, /checked by the harness/);
    await host.worker.evaluate(() => globalThis.removeLayer());
    await run({ prompt: 'Add.' });
    assert.doesNotMatch(told('add'), /checked by the harness/, 'removed');
  });

  test('use(fn): a layer that throws is an error for the model; one that does not call next keeps the tool from running', async () => {
    const before = await adds();
    await host.worker.evaluate(() => {
      globalThis.removeLayer = webmcpHost.use(() => { throw new Error('harness refuses'); });
    });
    await run({ prompt: 'Add.' });
    assert.match(told('add'), /a middleware layer threw: harness refuses/);
    assert.equal(await adds(), before, 'the tool did not run');
    await host.worker.evaluate(() => globalThis.removeLayer());
  });

  test('use(fn): endTurn from a layer ends the turn at once with endedByTool', async () => {
    await host.worker.evaluate(() => {
      globalThis.removeLayer = webmcpHost.use(async (call, next) => {
        const outcome = await next();
        call.endTurn({ view: `sum ${outcome.result}` });
        return outcome;
      });
    });
    const result = await run({ prompt: 'Add.' });
    assert.equal(result.outcome.type, 'endedByTool', JSON.stringify(result.outcome));
    assert.deepEqual(result.outcome.outcome, { view: 'sum 42' });
    assert.equal(models.requests().filter((r) => r.scenario === `add~${round}`).length, 1, 'no model request after the end');
    assert.deepEqual((await validateEvents(result.events)).errors, []);
    await host.worker.evaluate(() => globalThis.removeLayer());
  });

  test('declarative layers: fail (times), block, redact, observe, delay; configure then run, global first', async () => {
    const configure = (middleware) => host.worker.evaluate((m) => webmcpHost.configure({ middleware: m }), middleware);
    // fail, the first call only: the model's retry runs.
    let before = await adds();
    let result = await run({ prompt: 'Add twice.', model: 'twice', middleware: [{ kind: 'fail', tool: 'add', error: 'injected: 503 from the shop', times: 1 }] });
    const results = result.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.content);
    assert.match(results[0], /injected: 503 from the shop/);
    assert.equal(results[1], '2');
    assert.equal(await adds(), before + 1, 'the failed call did not run, the second did');
    // block from configure (global), redact and observe from the run.
    await configure([{ kind: 'block', tool: 'add', reason: 'not on this site' }]);
    before = await adds();
    result = await run({ prompt: 'Add.' });
    assert.match(told('add'), /blocked: not on this site/);
    assert.equal(await adds(), before);
    await configure([{ kind: 'observe' }, { kind: 'delay', tool: 'add', ms: 400 }]);
    const started = Date.now();
    result = await run({ prompt: 'Add.', middleware: [{ kind: 'redact', pattern: '4\\d', replacement: '[n]' }] });
    assert.ok(Date.now() - started >= 400, 'the call was held 400 ms');
    assert.match(told('add'), /\[n\]/);
    const observed = result.events.filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_observe').map((e) => e.value.phase);
    assert.deepEqual(observed, ['call', 'result']);
    await assert.rejects(configure([{ kind: 'delay', ms: 'soon' }]), /configure: middleware\[0\]: `ms` must be a whole number/);
    await assert.rejects(run({ prompt: 'x', middleware: [{ kind: 'redact', pattern: '(' }] }), /run: middleware\[0\]: `pattern` is not a regular expression/);
    await configure(null);
    result = await run({ prompt: 'Add.' });
    assert.match(told('add'), /42/, 'no global layer left');
  });

  test('the popup sets the global layers: saved through configure, refused with the worker\'s error', async () => {
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=servers`);
    await popup.waitForSelector('body[data-state="ready"]');
    await popup.fill('#middleware', JSON.stringify([{ kind: 'block', tool: 'add', reason: 'set in the popup' }]));
    await popup.click('#middleware-form button[type=submit]');
    await popup.waitForFunction(() => document.querySelector('#middleware-status').textContent.startsWith('Saved: 1 layer'));
    await run({ prompt: 'Add.' });
    assert.match(told('add'), /blocked: set in the popup/);
    await popup.fill('#middleware', '[{"kind": "nap"}]');
    await popup.click('#middleware-form button[type=submit]');
    // The host's `names` show as code, not as backticks.
    await popup.waitForFunction(() => document.querySelector('#middleware-status').textContent.includes('unknown kind nap'));
    assert.equal(await popup.textContent('#middleware-status code'), 'nap');
    await popup.fill('#middleware', '[');
    await popup.click('#middleware-form button[type=submit]');
    await popup.waitForFunction(() => document.querySelector('#middleware-status').textContent.startsWith('Not JSON'));
    const kept = await host.worker.evaluate(() => webmcpHost.settings());
    assert.deepEqual(kept.middleware, [{ kind: 'block', tool: 'add', reason: 'set in the popup' }], 'a refused list changes nothing');
    await host.worker.evaluate(() => webmcpHost.configure({ middleware: null }));
    await popup.close();
  });
});
