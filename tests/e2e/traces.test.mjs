// Traces in a real viewer: Arize Phoenix (PyPI `arize-phoenix`, installed by
// `scripts/setup.sh --browser`) is started on 127.0.0.1 with its own working directory, a run
// against the scripted model is exported to it, and its spans are read back through Phoenix's
// REST API: the run → model step → tool call tree, the token counts the run reported, the tool's
// name, and no key, prompt or result text. A collector that refuses connections or never answers
// holds no run up (a run answers before its export ends, and the next one while it goes on), and
// is tried a bounded number of times (the retry policy itself is tested natively:
// core::observe::collector::retry_after, in src/core/observe/tests/trace.rs).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

const VENV = process.env.PHOENIX_VENV || join(homedir(), '.cache', 'webmcp-host', 'phoenix-venv');
const PHOENIX = join(VENV, 'bin', 'phoenix');
const INSTALLED = existsSync(PHOENIX);
if (!INSTALLED) console.log(`# traces: Arize Phoenix is not installed at ${PHOENIX}; run scripts/setup.sh --browser (make test does)`);

const PROMPT = 'What is 2 + 40? (prompt-canary)';
const SCENARIOS = {
  add: { steps: [{ calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'The sum is 42 (answer-canary).' }] },
  plain: { steps: [{ text: 'Hello.' }] },
};

/** A free port on 127.0.0.1, closed again. */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A server on 127.0.0.1: `handler(request, response)`; records what it was sent. */
async function listen(handler) {
  const seen = [];
  const sockets = new Set();
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      seen.push({ method: request.method, url: request.url, headers: request.headers, body: Buffer.concat(chunks) });
      handler(request, response, Buffer.concat(chunks));
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    seen,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('traces exported to Arize Phoenix', { skip: INSTALLED ? false : 'Arize Phoenix is not installed (scripts/setup.sh --browser installs it)' }, () => {
  let phoenix, phoenixReady, phoenixUrl, workDir, proxy, hanging, site, models, host, page, tabId;

  const configure = (config) => host.worker.evaluate((c) => webmcpHost.configure(c), config);
  const run = (request) => host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  const model = (scenario) => ({
    name: 'scripted',
    provider: 'openai',
    baseUrl: `${models.url}/s/${scenario}/v1`,
    model: 'gpt-test',
    nativeTools: true,
    keyRef: 'canary',
  });

  before(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'webmcp-host-phoenix-'));
    const port = await freePort();
    phoenixUrl = `http://127.0.0.1:${port}`;
    phoenix = spawn(PHOENIX, ['serve'], {
      env: {
        ...process.env,
        PHOENIX_HOST: '127.0.0.1',
        PHOENIX_PORT: String(port),
        PHOENIX_GRPC_PORT: String(await freePort()),
        PHOENIX_WORKING_DIR: workDir,
        PHOENIX_TELEMETRY_ENABLED: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    phoenix.stdout.on('data', (d) => (output += d));
    phoenix.stderr.on('data', (d) => (output += d));
    // Phoenix, CORS-less, sits behind a proxy that only adds the CORS headers the extension's
    // fetch needs without host access (the person grants it for a collector's origin instead).
    proxy = await listen(async (request, response, body) => {
      const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'access-control-allow-methods': 'POST' };
      if (request.method === 'OPTIONS') return response.writeHead(204, cors).end();
      const answer = await fetch(`${phoenixUrl}${request.url}`, { method: request.method, headers: { 'content-type': request.headers['content-type'] }, body });
      response.writeHead(answer.status, cors).end(Buffer.from(await answer.arrayBuffer()));
    });
    hanging = await listen(() => {}); // never answers
    site = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${site.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    // Phoenix takes a while to start: the tests that need no Phoenix run meanwhile, and the
    // first that does waits for this.
    phoenixReady = (async () => {
      const started = Date.now();
      for (;;) {
        const ok = await fetch(`${phoenixUrl}/v1/projects`).then((r) => r.ok, () => false);
        if (ok) return;
        if (phoenix.exitCode !== null || Date.now() - started > 180_000) throw new Error(`phoenix serve did not start:\n${output}`);
        await sleep(500);
      }
    })();
    phoenixReady.catch(() => {}); // awaited (and reported) by the test that needs it
  });

  after(async () => {
    await host?.close();
    await models?.close();
    await site?.close();
    await proxy?.close();
    await hanging?.close();
    phoenix?.kill('SIGTERM');
    if (phoenix && phoenix.exitCode === null) await new Promise((resolve) => phoenix.once('exit', resolve));
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  /** Phoenix's spans of run `runId`, once `count` of them arrived. */
  async function spansOf(runId, count) {
    const started = Date.now();
    for (;;) {
      const answer = await fetch(`${phoenixUrl}/v1/projects/default/spans?limit=100`).then((r) => r.json());
      const root = answer.data.find((s) => s.attributes?.['webmcp_host.run_id'] === runId);
      const spans = root ? answer.data.filter((s) => s.context.trace_id === root.context.trace_id) : [];
      if (spans.length >= count) return { spans, raw: JSON.stringify(answer) };
      if (Date.now() - started > 30_000) throw new Error(`Phoenix has ${spans.length} spans of ${runId}: ${JSON.stringify(answer).slice(0, 2000)}`);
      await sleep(300);
    }
  }

  test('a collector that refuses or never answers holds no run up, and is tried a bounded number of times', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/v1/traces`;
    // Each run exports to its own path of the hanging collector: its requests tell whose they are.
    const bad = (runId) => [
      { name: 'refusing', endpoint: closed },
      { name: 'hanging', endpoint: `${hanging.url}/${runId}/v1/traces` },
    ];
    const toHanging = (runId) => hanging.seen.filter((r) => r.url.startsWith(`/${runId}/`) && (r.method === 'POST' || r.method === 'OPTIONS'));
    // The worker's warning once an export gave up on a collector (after its last attempt).
    const gaveUp = (runId, collector) => host.canary.records().some((r) => r.kind === 'console'
      && r.text.includes(`run ${runId}'s trace was not taken by collector \`${collector}\``));
    const ended = (runId) => ['refusing', 'hanging'].filter((c) => gaveUp(runId, c));
    const runWith = async (runId) => {
      await configure({ models: [model(`plain~${runId}`)], default: 'scripted', collectors: bad(runId) });
      const result = await run({ prompt: 'Hi', runId });
      assert.equal(result.outcome.type, 'completed');
    };

    // The run's answer comes before its exports ended (an export starts once its run answered;
    // the one to the hanging collector, which the test holds, ends only when the host's own
    // attempts have timed out). The worker's console lines come in order with its answers.
    await runWith('run_bad_1');
    assert.deepEqual(ended('run_bad_1'), [], 'the run answered before its export ended');
    // Its export reaches the hanging collector, which holds it; meanwhile another run answers.
    await until('the first export at the hanging collector', async () => toHanging('run_bad_1').length > 0, 30_000);
    await runWith('run_bad_2');
    assert.ok(!gaveUp('run_bad_1', 'hanging'), 'the second run answered while the first export still went on');
    assert.deepEqual(ended('run_bad_2'), [], 'the run answered before its export ended');

    // Each export gives up after its last attempt (the worker says so): by then the hanging
    // collector had a bounded number of requests from each run.
    await until('every export to give up', async () => ['run_bad_1', 'run_bad_2'].every((id) => ended(id).length === 2), 120_000);
    const attempts = ['run_bad_1', 'run_bad_2'].map((id) => toHanging(id).length);
    console.log(`# hanging collector: ${attempts.join(' + ')} requests for 2 runs`);
    for (const n of attempts) assert.ok(n >= 1 && n <= 3, `${attempts} requests`);
    const total = attempts[0] + attempts[1];
    assert.ok(total >= 2 && total <= 6, `${total} requests`);
  });

  test('a run reads back as run → model steps → tool call, with its tokens and no text or key', async () => {
    await configure({
      models: [model('add~phoenix')],
      default: 'scripted',
      prices: { scripted: { input: 2, output: 8 } },
      collectors: [{ name: 'phoenix', endpoint: `${proxy.url}/v1/traces` }],
    });
    await phoenixReady;
    const result = await run({ prompt: PROMPT, runId: 'run_phoenix' });
    assert.equal(result.outcome.type, 'completed');
    assert.ok(result.usage, 'the scripted server reports usage: the run knows its tokens');
    assert.equal(result.usage.perStep.length, 2);
    assert.equal(typeof result.usage.cost, 'number');
    const { spans, raw } = await spansOf('run_phoenix', 4);
    assert.equal(spans.length, 4, raw.slice(0, 2000));
    const root = spans.find((s) => s.parent_id === null);
    assert.equal(root.name, 'invoke_agent webmcp-host');
    assert.equal(root.span_kind, 'AGENT');
    const steps = spans.filter((s) => s.span_kind === 'LLM').sort((a, b) => a.start_time.localeCompare(b.start_time));
    assert.equal(steps.length, 2);
    for (const [i, step] of steps.entries()) {
      assert.equal(step.parent_id, root.context.span_id, 'each model step is a child of the run');
      assert.equal(step.name, 'chat gpt-test');
      assert.equal(step.attributes['gen_ai.request.model'], 'gpt-test');
      assert.equal(step.attributes['gen_ai.usage.input_tokens'], result.usage.perStep[i].inputTokens);
      assert.equal(step.attributes['gen_ai.usage.output_tokens'], result.usage.perStep[i].outputTokens);
      assert.equal(step.attributes['llm.token_count.prompt'], result.usage.perStep[i].inputTokens);
      // The step's price, in OpenInference's cost attribute as Phoenix stores it.
      assert.ok(Math.abs(step.attributes['llm.cost.total'] - result.usage.perStep[i].cost) < 1e-12, JSON.stringify(step.attributes));
    }
    assert.equal(root.attributes['gen_ai.usage.input_tokens'], result.usage.inputTokens);
    const tool = spans.find((s) => s.span_kind === 'TOOL');
    assert.equal(tool.parent_id, steps[0].context.span_id, 'the tool call is a child of the step that made it');
    assert.equal(tool.name, 'execute_tool add');
    assert.equal(tool.attributes['gen_ai.tool.name'], 'add');
    assert.equal(tool.attributes['webmcp_host.tool.outcome'], 'ok');
    for (const secret of [host.canary.value, 'prompt-canary', 'answer-canary']) {
      assert.ok(!raw.includes(secret), `${secret} is in no span`);
    }
    const sent = proxy.seen.filter((r) => r.method === 'POST');
    assert.ok(sent.length >= 1);
    for (const request of sent) {
      assert.equal(request.headers['content-type'], 'application/x-protobuf');
      const everything = JSON.stringify(request.headers) + request.body.toString('latin1');
      for (const secret of [host.canary.value, 'prompt-canary', 'answer-canary']) assert.ok(!everything.includes(secret), `${secret} went to the collector`);
    }
  });
});
