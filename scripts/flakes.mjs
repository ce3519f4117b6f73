// `make flakes`: the end-to-end suites (tests/e2e, tests/support) run FLAKES_N times (default 3),
// one after another, optionally with one core kept busy by a busy loop (FLAKES_BUSY=1), then
// each test that failed at least once, with how often and its first error. Exit 1 when any did.
// Each run's full output is kept in target/flakes/run-N.log, its results in run-N.jsonl.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'target', 'flakes');
const runs = Number(process.env.FLAKES_N ?? 3);
const busy = process.env.FLAKES_BUSY === '1';
const suites = (process.env.FLAKES_SUITES ?? 'tests/e2e/ tests/support/').split(/\s+/).filter(Boolean);
if (!Number.isInteger(runs) || runs < 1 || runs > 100) {
  console.error(`flakes: FLAKES_N must be a whole number from 1 to 100, not ${JSON.stringify(process.env.FLAKES_N)}`);
  process.exit(2);
}

await mkdir(OUT, { recursive: true });
// One core kept busy for the whole time: a loop that never yields, at normal priority.
const loop = busy ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }) : null;
const stop = () => loop?.kill('SIGKILL');
process.on('exit', stop);
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

console.log(`flakes: ${suites.join(' ')} ${runs} time(s)${busy ? ', one core kept busy' : ''}`);
const tally = new Map(); // test → { failed, ran, error }
for (let run = 1; run <= runs; run++) {
  const started = Date.now();
  const log = join(OUT, `run-${run}.log`);
  const results = join(OUT, `run-${run}.jsonl`);
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, [
      '--test', '--test-concurrency=1',
      '--test-reporter=spec', `--test-reporter-destination=${log}`,
      `--test-reporter=${join(ROOT, 'tests', 'support', 'flake-reporter.mjs')}`, `--test-reporter-destination=${results}`,
      ...suites,
    ], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS: '1' } });
    child.on('exit', (status, signal) => resolve(status ?? signal));
  });
  const lines = (await readFile(results, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  let failed = 0;
  for (const line of lines) {
    const key = `${line.file ? relative(ROOT, line.file) : '?'} › ${line.test}`;
    const entry = tally.get(key) ?? { failed: 0, ran: 0, error: null };
    entry.ran += 1;
    if (!line.passed) {
      entry.failed += 1;
      entry.error ??= line.error;
      failed += 1;
    }
    tally.set(key, entry);
  }
  const seconds = Math.round((Date.now() - started) / 1000);
  console.log(`flakes: run ${run}/${runs}: ${lines.length - failed} passed, ${failed} failed in ${seconds} s (exit ${code}; ${relative(ROOT, log)})`);
  if (lines.length === 0) {
    console.error(`flakes: run ${run} reported no test: see ${relative(ROOT, log)}`);
    tally.set(`run ${run}`, { failed: 1, ran: 1, error: `no test reported (exit ${code})` });
  } else if (code !== 0 && failed === 0) {
    // A file that failed outside any test (at load, in a hook) counts as a failure of that run.
    tally.set(`run ${run} (outside a test)`, { failed: 1, ran: 1, error: `exit ${code} with every test passed: see ${relative(ROOT, log)}` });
  }
}
stop();

const flaky = [...tally].filter(([, e]) => e.failed > 0).sort((a, b) => b[1].failed - a[1].failed);
console.log(`\nflakes: ${tally.size} tests, ${runs} run(s)${busy ? ' with one core busy' : ''}: ${flaky.length === 0 ? 'no failure' : `${flaky.length} failed at least once`}`);
for (const [test, { failed, ran, error }] of flaky) console.log(`  ${failed}/${ran} ${test}\n      ${error}`);
process.exit(flaky.length === 0 ? 0 : 1);
