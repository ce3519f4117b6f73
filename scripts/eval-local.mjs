// `make eval-local`: the demo shop's evals (packages/playwright-webmcp-host/example/
// shop.evals.json) in agent mode on a real local model, no key: scripts/local-model/server.mjs
// on 127.0.0.1 (the pinned GGUF, or WEBMCP_HOST_GGUF) through the host's OpenAI-compatible
// provider in the text call format, the token the server printed as the model's key. Each
// case runs EVAL_LOCAL_RUNS times (default 3) on the shop freshly loaded; it prints each case's
// passes and pass^k, and the suite's pass rate, pass^k and pass@k, and fails (exit 1) when the
// pass rate is under EVAL_LOCAL_THRESHOLD
// (default 0.5). The model samples at EVAL_LOCAL_TEMPERATURE (default 0.7): greedy decoding
// would repeat each run, and pass^k would say nothing more than one run. Not part of `make test`: a slow job of its own (a CI job that may fail
// without failing the build). EVAL_LOCAL_CASES=0,3 runs only those cases; EVAL_LOCAL_JSON=FILE
// writes the evaluation's answer there.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { launchHost, ROOT } from '../tests/support/browser.mjs';
import { serve } from '../tests/support/server.mjs';
import { MODEL } from './local-model/install.mjs';
import { startLocalModel } from './local-model/start.mjs';

const runs = Number(process.env.EVAL_LOCAL_RUNS ?? 3);
const threshold = Number(process.env.EVAL_LOCAL_THRESHOLD ?? 0.5);
const temperature = Number(process.env.EVAL_LOCAL_TEMPERATURE ?? 0.7);
const suitePath = join(ROOT, 'packages', 'playwright-webmcp-host', 'example', 'shop.evals.json');
let evals = JSON.parse(await readFile(suitePath, 'utf8'));
if (process.env.EVAL_LOCAL_CASES) {
  const keep = new Set(process.env.EVAL_LOCAL_CASES.split(',').map(Number));
  evals = evals.filter((_, i) => keep.has(i));
}

const started = Date.now();
const local = await startLocalModel({ temperature });
const modelId = local.model.own ? local.model.path.split('/').pop().replace(/\.gguf$/i, '') : MODEL.id;
const server = await serve(join(ROOT, 'demo', 'site'), 0);
const host = await launchHost({ headless: true });
let failed = false;
try {
  // The server's token is the model's key, sent as `Authorization: Bearer`.
  const model = { name: 'local', provider: 'openai', baseUrl: local.baseUrl, model: modelId, nativeTools: false, keyRef: 'local' };
  await host.worker.evaluate((c) => webmcpHost.configure(c), { models: [model], default: 'local', keys: { local: local.token } });
  const page = host.context.pages()[0] ?? (await host.context.newPage());
  page.on('dialog', (dialog) => dialog.accept());
  await page.goto(`${server.url}/`);
  const tabId = await host.tabIdOf(page);
  console.log(`Evals on a local model: ${evals.length} cases of ${suitePath.slice(ROOT.length + 1)}, ${runs} runs each, agent mode`);
  console.log(`  model: ${local.model.title}${local.model.sha256 ? ` (GGUF SHA-256 ${local.model.sha256})` : ''}, temperature ${temperature}`);
  const answer = await host.worker.evaluate((r) => webmcpHost.evaluate(r),
    { tabId, evals, mode: 'agent', models: ['local'], runs, reload: true, timeoutMs: 600_000 });
  console.log('\nCases:');
  for (const c of answer.cases) {
    console.log(`  ${c.passed === c.runs ? '✓' : '✗'} ${c.name.padEnd(32)} ${c.passed}/${c.runs} passed, pass^k ${c['pass^k'] ? 'yes' : 'no'}`);
  }
  for (const r of answer.results.filter((r) => r.outcome !== 'pass')) {
    console.log(`    ${r.name}, run ${r.runIndex + 1}: ${r.outcome}${r.reason ? `: ${r.reason.replace(/\s+/g, ' ').slice(0, 160)}` : ''}`);
  }
  const m = answer.models.local;
  console.log(`\nlocal: pass rate ${m.passRate.toFixed(2)} over ${m.runs} runs (k = ${m.k}): pass^k ${m['pass^k'].toFixed(2)}, pass@k ${m['pass@k'].toFixed(2)}; median ${(m.latencyMs.median / 1000).toFixed(1)} s a run`);
  if (process.env.EVAL_LOCAL_JSON) await writeFile(process.env.EVAL_LOCAL_JSON, JSON.stringify(answer, null, 2));
  failed = m.passRate < threshold;
  console.log(`threshold ${threshold}: ${failed ? 'MISSED' : 'met'} (${((Date.now() - started) / 1000).toFixed(0)} s in all)`);
} finally {
  await host.close().catch(() => {});
  await server.close();
  await local.stop();
}
if (failed) process.exitCode = 1;
