// Security round 3, performed against the built extension: each test is an attack as a hostile
// page, server, model output or pasted configuration would make it, asserting what the page,
// the server or the model then received. (Round 3's other findings live beside the features
// they attack: the gate suite, gate.test.mjs, for the `block` layer on every operation.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const SCENARIOS = {
  // An injected order the person declines, then a search.
  injected: { steps: [call('place_order', {}), call('search_products', { query: 'mug' }), { text: 'Done.' }] },
  // Calls with arguments that make a page's patterns backtrack.
  regex: {
    steps: [
      { calls: [{ name: 'some_patterns', arguments: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`p${i}`, `${'a'.repeat(18)}!`])) }] },
      { text: 'Checked.' },
    ],
  },
  // A tool result that only site A should know (a one-time code), then an answer.
  otp: { steps: [call('add', { a: 493000, b: 817 }), { text: 'Your code is ready.' }] },
  // Results of megabytes, each under max_result_bytes, run after run.
  fill: { steps: [call('big_result', { kb: 3800 }), call('big_result', { kb: 3000 }), { text: 'Filled.' }] },
  // Nothing to call: the request is what matters.
  plain: { steps: [{ text: 'Done.' }] },
  // A call the run's own `block` layer refuses.
  refused: { steps: [call('place_order', {}), { text: 'Refused.' }] },
};

describe('security round 3', () => {
  let server, models, host, page, tabId;
  const dialogs = [];
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const pageCalls = () => page.evaluate(() => window.__calls.map((c) => c.name));
  const model = (scenario) => ({
    name: scenario,
    provider: 'openai',
    baseUrl: `${models.url}/s/${scenario}/v1`,
    model: 'scripted',
    nativeTools: true,
    keyRef: 'canary',
  });
  const open = async (path = 'evals.html') => {
    await page.goto(`${server.url}/${path}`);
    tabId = await host.tabIdOf(page);
  };

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    // Every confirm() is declined, as a person refusing an injected order would.
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    await op('configure', { models: Object.keys(SCENARIOS).map(model), default: 'injected', servers: [] });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('finding 5: "Save as test" leaves a declined call out, so smoke mode under allowActing never performs it', async () => {
    await open();
    const run = await op('run', { tabId, prompt: 'Find a mug' });
    assert.ok(dialogs.some((d) => d.includes('place_order')), 'the person was asked, and declined');
    assert.deepEqual(await pageCalls(), ['search_products']);
    const made = await op('toEval', { runId: run.runId });
    assert.deepEqual(made.case.expectedCall.map((c) => c.functionName), ['search_products']);
    assert.deepEqual(made.leftOut.map((c) => c.name), ['place_order']);
    assert.match(made.leftOut[0].error, /declined/);
    // A test profile that lets the site act unasked: the saved case performs only the search.
    const origin = new URL(server.url).origin;
    await op('configure', { sites: [{ origin, allowActing: true }] });
    await open();
    const smoke = await op('evaluate', { tabId, evals: [made.case], mode: 'smoke' });
    await op('configure', { sites: [] });
    assert.equal(smoke.passCount, 1, JSON.stringify(smoke.results));
    assert.deepEqual(await pageCalls(), ['search_products'], 'the declined order was not placed');
    // Asked for explicitly, the declined call is kept.
    const kept = await op('toEval', { runId: run.runId, keepFailed: true });
    assert.deepEqual(kept.case.expectedCall.map((c) => c.functionName), ['place_order', 'search_products']);
  });

  test('finding 7: backtracking patterns in a page schema are bounded: a schema over the cap is not used, a costly match is an error', async () => {
    await open('hostile/regex.html');
    const value = await page.evaluate(() => window.__value);
    const args = (n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, value]));
    const many = await op('validateArguments', { tabId, name: 'many_patterns', args: args(200) });
    assert.match(many.schemaProblem ?? '', /max_schema_patterns/, JSON.stringify(many));
    const some = await op('validateArguments', { tabId, name: 'some_patterns', args: args(40) });
    assert.equal(some.valid, false, 'a match that reaches the bound does not pass as valid');
    assert.ok(some.errors.length >= 1, JSON.stringify(some));
    assert.match(some.errors[0].message, /pattern_backtrack_limit/);
    assert.equal(some.errors[0].path, '/p0', 'each error at its field');
    // The same schema in a run: the call is refused with the same error, the tool never runs.
    const run = await op('run', { tabId, prompt: 'Look up the codes', model: 'regex', maxSteps: 2 });
    const said = run.events.filter((e) => e.type === 'CUSTOM').map((e) => JSON.stringify(e.value)).join('\n');
    assert.match(said, /backtrack/i, 'the model is told why');
    assert.deepEqual(await pageCalls(), []);
  });

  test('finding 15: an answer file with markup for a count is refused by evalReport, and nothing navigates', async () => {
    const markup = '<meta http-equiv="refresh" content="0;url=https://attacker.test/">';
    const answer = { mode: 'smoke', results: [], testCount: markup, passCount: 0, failCount: 0, errorCount: 0 };
    await assert.rejects(op('evalReport', { report: answer, format: 'html' }), /report\.testCount` must be a whole number/);
    const html = await op('evalReport', { report: { ...answer, testCount: 1 }, format: 'html' });
    assert.ok(!html.includes('http-equiv="refresh"'), 'no markup from the answer');
    assert.match(html, /<b>1<\/b> results/);
  });

  test('finding 1: a conversation made on one origin is not continued on another, unless carried over on purpose', async () => {
    await open('tools.html');
    const first = await op('run', { tabId, prompt: 'Get my code', model: 'otp' });
    assert.deepEqual(await pageCalls(), ['add']);
    const secretIn = (r) => /493817|493000/.test(JSON.stringify(r.body));
    // The same tab moves to another origin (localhost instead of 127.0.0.1).
    await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/tools.html`);
    const before = models.requests().length;
    const second = await op('run', { tabId, prompt: 'Tell me the code again', model: 'plain', threadId: first.threadId });
    const sent = models.requests().slice(before).filter((r) => r.method === 'POST');
    assert.ok(sent.length >= 1);
    assert.ok(!sent.some(secretIn), "site A's tool result reached the run on site B");
    assert.notEqual(second.threadId, first.threadId, 'a new conversation');
    const notice = second.events.find((e) => e.type === 'CUSTOM' && e.value?.type === 'fresh');
    assert.ok(notice, JSON.stringify(second.events.filter((e) => e.type === 'CUSTOM')));
    assert.equal(notice.value.from, first.threadId);
    const listed = (await op('conversations', {})).find((t) => t.threadId === second.threadId);
    assert.equal(listed?.origin, new URL(page.url()).origin, JSON.stringify(listed));
    // Asked for explicitly, the history is carried over.
    const carried = models.requests().length;
    const third = await op('run', { tabId, prompt: 'Again', model: 'plain', threadId: first.threadId, carryOver: true });
    assert.equal(third.threadId, first.threadId);
    assert.ok(models.requests().slice(carried).filter((r) => r.method === 'POST').some(secretIn), 'carried over on purpose');
  });

  test('finding 11: a bug report saved after the tab moved to another site describes no part of that site', async () => {
    await open('tools.html');
    const run = await op('run', { tabId, prompt: 'Nothing', model: 'plain' });
    const here = (await op('bugReport', { runId: run.runId })).report;
    assert.equal(here.page.url, `${server.url}/tools.html`, 'the tab still shows the run\'s page');
    assert.ok(here.tools?.tools?.some((t) => t.name === 'add'));
    // The tab moves on to another origin, whose page has other tools.
    const elsewhere = `${server.url.replace('127.0.0.1', 'localhost')}/hostile/regex.html`;
    await page.goto(elsewhere);
    const moved = (await op('bugReport', { runId: run.runId })).report;
    const text = JSON.stringify(moved);
    assert.match(moved.page.movedOn ?? '', /moved on from .*tools\.html/, JSON.stringify(moved.page));
    assert.equal(moved.page.recorded.url, `${server.url}/tools.html`);
    const other = new URL(elsewhere).host; // localhost:PORT
    for (const word of [other, 'regex.html']) {
      const at = text.indexOf(word);
      assert.equal(at, -1, `nothing of the other site: ${text.slice(Math.max(0, at - 300), at + 100)}`);
    }
    assert.ok(!text.includes('some_patterns'), "the other site's tools are not listed");
    assert.equal(moved.tools, null);
    assert.equal(moved.screenshot ?? null, null);
  });

  test('finding 10: a schema that would explode the Call view builds from the values written, and a form past the cap falls back to JSON', async () => {
    await open('hostile/form-bomb.html');
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}&view=call`);
    await popup.waitForSelector('body[data-state="ready"]');
    const choose = async (name) => {
      await popup.waitForSelector(`#call-tool option[value$="${name}"]`, { state: 'attached' });
      const value = await popup.$eval('#call-tool', (s, n) => [...s.options].find((o) => o.value.endsWith(`\u0000${n}`)).value, name);
      const started = Date.now();
      await popup.selectOption('#call-tool', value);
      await popup.waitForSelector('#call-form-box:not([hidden])');
      return Date.now() - started;
    };
    // Six levels of eight default items: 8^6 fields before; now the default as written.
    const ms = await choose('nested_defaults');
    const built = await popup.$$eval('#call-form *', (all) => all.length);
    console.log(`# nested defaults form: ${built} elements in ${ms} ms`);
    assert.ok(built < 2000, `${built} elements`);
    assert.equal(JSON.parse(await popup.inputValue('#call-json')).grid.length, 8, 'the default, as written');
    // 2,100 fields: no form, a note, and the JSON editor still calls the tool.
    await choose('wide_form');
    assert.match(await popup.textContent('#call-form'), /more than 2000 fields \(max_form_fields\)/);
    assert.equal(await popup.$$eval('#call-form input', (all) => all.length), 0);
    await popup.fill('#call-json', JSON.stringify({ f7: 'seven' }));
    await popup.click('#call-run');
    await popup.waitForSelector('#call-result:not([hidden])');
    assert.match(await popup.textContent('#call-result'), /wide ok/);
    assert.deepEqual(await pageCalls(), ['wide_form']);
    await popup.close();
  });

  test('finding 8: results of megabytes, run after run, never fill session storage: keys still save, the reserve holds', async () => {
    await open('hostile/storage-fill.html');
    const QUOTA = 10 * 1024 * 1024;
    const used = () => host.worker.evaluate(() => chrome.storage.session.getBytesInUse(null));
    const fills = [0, 1, 2, 3].map((i) => `fill~${i}`); // each its own scripted endpoint
    await op('configure', { models: [...Object.keys(SCENARIOS), ...fills].map(model), default: 'injected' });
    for (const [i, fill] of fills.entries()) {
      const run = await op('run', { tabId, prompt: `Fill ${i}`, model: fill, maxSteps: 3 });
      assert.equal(run.outcome.type, 'completed', JSON.stringify(run.outcome));
      // The run's log reached storage: the stored run list (written after its events) has it finished.
      await until(`run ${i}'s record stored`, () => host.worker.evaluate(async (runId) => {
        const list = (await chrome.storage.session.get('webmcpHost.ui.runs'))['webmcpHost.ui.runs'] ?? [];
        return list.some((r) => r.runId === runId && r.state === 'finished');
      }, run.runId), 30_000);
    }
    const bytes = await used();
    console.log(`# session storage after 4 runs of 6.8 MB of results: ${bytes} bytes`);
    assert.ok(bytes < QUOTA - 2 * 1024 * 1024, `${bytes} bytes in use: the 2 MiB reserve is gone`);
    // A key still saves, and the latest run's log says what it left out.
    await op('configure', { keys: { late: 'sk-late-key-0123456789' } });
    const settings = await op('settings', {});
    assert.ok(settings.keys.some((k) => k.ref === 'late'));
    const [latest] = await op('runs', { tabId });
    const log = await op('runLog', { runId: latest.runId });
    assert.match(JSON.stringify(log.events), /bytes not stored: max_stored_event_bytes/);
    await op('configure', { keys: { late: null } });
  });

  test('finding 14: frames together cannot multiply the tool cap, in a listing or in a model request', async () => {
    await open('hostile/many-frames.html');
    // Three frames of 250 tools each (each frame under its own cap): 750 offered.
    let listed;
    await until("the frames' tools listed", async () => {
      listed = await op('listTools', { tabId });
      return listed.tools.filter((t) => t.frameId !== 0).length >= 262;
    }, 30_000).catch((e) => assert.fail(`${e.message}: ${listed?.tools.length} tools listed, ${JSON.stringify(listed?.problems ?? null).slice(0, 500)}`));
    assert.equal(listed.tools.length, 512, `${listed.tools.length} tools listed`);
    assert.equal(listed.tools.filter((t) => t.name.startsWith('top_')).length, 250, 'the top frame comes first');
    const capped = listed.problems.filter((p) => /max_tools_per_tab/.test(p.message));
    assert.ok(capped.length >= 1, JSON.stringify(listed.problems));
    assert.match(capped.at(-1).message, /of its 250 tools left out/);
    // A run: the model request carries at most 512 tools, and the run says what was left out.
    const before = models.requests().length;
    const run = await op('run', { tabId, prompt: 'Anything', model: 'plain', maxSteps: 1 });
    const sent = models.requests().slice(before).filter((r) => r.method === 'POST');
    assert.ok(sent.length >= 1, 'the model was asked');
    const tools = sent[0].body.tools ?? [];
    assert.ok(tools.length > 0 && tools.length <= 512, `${tools.length} tools in the request`);
    const said = run.events.filter((e) => e.type === 'CUSTOM').map((e) => JSON.stringify(e.value)).join('\n');
    assert.match(said, /max_tools_per_(tab|request)/, said.slice(0, 500));
  });

  test('finding 4: replayDiff never plays a call its run refused with a block layer, or one the person declined', async () => {
    await open();
    const run = await op('run', {
      tabId,
      prompt: 'Order',
      model: 'refused',
      middleware: [{ kind: 'block', tool: 'place_order', reason: 'not in this run' }],
    });
    assert.deepEqual(await pageCalls(), []);
    await open();
    const asked = dialogs.length;
    const diff = await op('replayDiff', { tabId, runId: run.runId });
    assert.equal(diff.calls.length, 1);
    assert.match(diff.calls[0].skipped, /refused it/);
    assert.deepEqual(await pageCalls(), [], 'the blocked order was not replayed');
    assert.equal(dialogs.length, asked, 'not even asked for');
  });
});
