// webmcpHost.run in the extension: a prompt goes to a model (the scripted model server on
// 127.0.0.1, in each provider's wire format, or a replay transcript), the model's calls reach
// the fixture page's tools, and the answer streams back as AG-UI events that pass the
// official validators. A canary key must never leave its model's requests.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const CANARY = 'sk-canary-7f3a9c1e5b2d4680';

const addCall = (args) => ({ calls: [{ name: 'add', arguments: args }] });
const SCENARIOS = {
  native: { steps: [addCall({ a: 2, b: 40 }), { text: 'The sum is 42.' }] },
  'text-format': {
    steps: [
      { text: 'Adding.\n<tool_call>{"name": "add", "arguments": {"a": 2, "b": 40}}</tool_call>' },
      { text: 'The sum is 42.' },
    ],
  },
  broken: { steps: [addCall('{"a": "2", "b": 40'), { text: 'The sum is 42.' }] },
  // Half of the answer streamed, then held until the test ends: the run is mid-stream when stopped.
  slow: { steps: [{ text: 'This answer takes a long time to write. '.repeat(40), chunk: 4, holdMidway: 'slow' }] },
  'bad-key': { steps: [{ status: 401, body: 'Invalid API key' }] },
  stalled: { steps: [{ text: 'Hello there, this stalls.', chunk: 6, delayMs: 3000 }] },
};

describe('agent runs in the extension', () => {
  let server, models, host, page, tabId;
  const requests = [];

  const configure = (config) => host.worker.evaluate((c) => webmcpHost.configure(c), config);
  const run = (request) => host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  const model = (name, provider, scenario, extra = {}) => ({
    name,
    provider,
    baseUrl:
      provider === 'gemini' ? `${models.url}/s/${scenario}/v1beta` : provider === 'anthropic' ? `${models.url}/s/${scenario}` : `${models.url}/s/${scenario}/v1`,
    model: `${provider}-test`,
    nativeTools: true,
    keyRef: 'canary',
    ...extra,
  });

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    host.context.on('request', (request) => requests.push(request));
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    await configure({ keys: { canary: CANARY } });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  async function checkRun(result, { expectText = 'The sum is 42.' } = {}) {
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.deepEqual(result.outcome, { type: 'completed', text: expectText });
    const calls = await page.evaluate(() => window.__calls);
    assert.deepEqual(calls.at(-1), { name: 'add', input: { a: 2, b: 40 } });
    const toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.equal(toolResult.content, '42');
    assert.ok(!JSON.stringify(result).includes(CANARY), 'the key is in no event or message');
  }

  for (const [provider, scenario] of [
    ['openai', 'native'],
    ['anthropic', 'native'],
    ['gemini', 'native'],
  ]) {
    test(`${provider} native calls reach the page tool`, async () => {
      const name = `${provider}-${scenario}`;
      await configure({ models: [model(name, provider, `${scenario}~${provider}`)], default: name });
      const result = await run({ prompt: 'What is 2 + 40?' });
      await checkRun(result);
      const sent = models.requests().filter((r) => r.scenario === `${scenario}~${provider}` && r.method === 'POST');
      assert.equal(sent.length, 2, 'two model calls');
      assert.ok(JSON.stringify(sent[1].body).includes('42'), 'the tool result went back to the model');
    });
  }

  test('a live run records a transcript that replays to the same result', async () => {
    await configure({ models: [model('live', 'anthropic', 'native~record')], default: 'live' });
    const live = await run({ prompt: 'What is 2 + 40?' });
    await checkRun(live);
    assert.equal(live.transcript.split('\n').length, 2, 'one line per model call');
    await configure({ models: [{ name: 'again', provider: 'replay', transcript: live.transcript }], default: 'again' });
    const replayed = await run({ prompt: 'What is 2 + 40?' });
    await checkRun(replayed);
    // The same events but for how deltas were split.
    const kinds = (r) => r.events.map((e) => e.type).filter((t) => t !== 'TEXT_MESSAGE_CONTENT' && t !== 'TOOL_CALL_ARGS');
    assert.deepEqual(kinds(replayed), kinds(live));
    const calls = (r) => r.messages.flatMap((m) => m.toolCalls ?? []).map((c) => [c.function.name, JSON.parse(c.function.arguments)]);
    assert.deepEqual(calls(replayed), calls(live));
  });

  test('openai text-format calls reach the page tool', async () => {
    await configure({ models: [model('text', 'openai', 'text-format~t', { nativeTools: false })], default: 'text' });
    const result = await run({ prompt: 'What is 2 + 40?' });
    await checkRun(result);
    const first = models.requests().find((r) => r.scenario === 'text-format~t' && r.method === 'POST');
    assert.match(first.body.messages[0].content, /<tool_call>/, 'the system prompt teaches the call format');
    assert.equal(first.body.tools, undefined);
  });

  test('replay plays a transcript back', async () => {
    const transcript = [
      JSON.stringify({ text: 'Let me add.', calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }),
      JSON.stringify({ text: 'The sum is 42.' }),
    ].join('\n');
    await configure({ models: [{ name: 'replay', provider: 'replay', transcript }], default: 'replay' });
    const result = await run({ prompt: 'What is 2 + 40?' });
    await checkRun(result);
  });

  test('a broken call is repaired, reported and still calls the tool correctly', async () => {
    await configure({ models: [model('broken', 'openai', 'broken~b')], default: 'broken' });
    const result = await run({ prompt: 'What is 2 + 40?' });
    await checkRun(result);
    const repair = result.events.find((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_repair');
    assert.ok(repair, 'a tool_repair event');
    assert.deepEqual(repair.value.fixes.map((f) => f.step), ['json', 'coerce']);
    const types = result.events.map((e) => e.type);
    const end = types.indexOf('TOOL_CALL_END');
    assert.deepEqual(types.slice(end - 2, end + 1), ['CUSTOM', 'MESSAGES_SNAPSHOT', 'TOOL_CALL_END']);
  });

  test('stop mid-stream ends the run cleanly', async () => {
    await configure({ models: [model('slow', 'openai', 'slow~s')], default: 'slow' });
    const running = run({ prompt: 'Write slowly.', runId: 'run_slow' });
    await models.held('slow');
    await until('the first half of the text in the run', async () => {
      const events = await host.worker.evaluate(() => webmcpHost.events({ runId: 'run_slow' }).catch(() => []));
      return events.some((e) => e.type === 'TEXT_MESSAGE_CONTENT');
    }, 30_000);
    assert.equal(await host.worker.evaluate(() => webmcpHost.stop({ runId: 'run_slow' })), true);
    const result = await running;
    assert.deepEqual(result.outcome, { type: 'stopped', reason: 'stopped by the person' });
    const { ok, errors, onlyIn10 } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.equal(result.events.at(-1).type, 'RUN_FINISHED');
    // AG-UI 1.0: a stopped run is cancelled (a 0.0.x client does not know the outcome).
    assert.deepEqual(result.events.at(-1).outcome, { type: 'cancelled' });
    assert.deepEqual([...new Set(onlyIn10.flatMap((d) => d.fields))], ["RUN_FINISHED outcome {type: 'cancelled'} (a stopped run)"]);
  });

  test('a refused key is a RUN_ERROR that names the model but not the key', async () => {
    await configure({ models: [model('refused', 'openai', 'bad-key~k')], default: 'refused' });
    const result = await run({ prompt: 'Hello?' });
    const error = result.events.at(-1);
    assert.equal(error.type, 'RUN_ERROR');
    assert.match(error.message, /refused the API key of model `refused` \(401\)/);
    assert.ok(!error.message.includes(CANARY));
    assert.equal(result.outcome.type, 'failed');
  });

  test('a stream that goes silent ends the run with a clear error, not a hang', async () => {
    await configure({ models: [model('stalled', 'openai', 'stalled~x', { idleTimeoutMs: 500 })], default: 'stalled' });
    const result = await run({ prompt: 'Hello?' });
    assert.equal(result.outcome.type, 'failed');
    assert.match(result.outcome.message, /sent nothing for 500 ms; the connection was dropped/);
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
  });

  test('the canary key went only to the model server', async () => {
    const withKey = requests.filter((r) => JSON.stringify(r.headers()).includes(CANARY) || (r.postData() ?? '').includes(CANARY) || r.url().includes(CANARY));
    // The worker's own requests are seen (PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS=1).
    assert.ok(withKey.length >= 8, `saw ${withKey.length} requests carrying the key`);
    for (const request of withKey) assert.ok(request.url().startsWith(`${models.url}/s/`), request.url());
    const recorded = models.requests().filter((r) => r.method === 'POST');
    assert.ok(recorded.length >= 10);
    for (const r of recorded) {
      const sentKey = r.headers.authorization ?? r.headers['x-api-key'] ?? r.headers['x-goog-api-key'];
      assert.ok(sentKey === `Bearer ${CANARY}` || sentKey === CANARY, `${r.path}: ${sentKey}`);
      assert.ok(!r.url?.includes(CANARY) && !r.path.includes(CANARY) && !JSON.stringify(r.query ?? {}).includes(CANARY));
    }
    const pageSaw = await page.evaluate(() => document.documentElement.outerHTML);
    assert.ok(!pageSaw.includes(CANARY));
  });
});
