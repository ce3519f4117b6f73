// The example project run as two CI machines would run it: `--shard=1/2` and `--shard=2/2`
// together run every case of its eval suite exactly once, and each shard runs some.
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { evalCases } from '../index.mjs';
import { ROOT } from '../../../tests/support/browser.mjs';
import { freePort } from '../../../scripts/mcp/start-server.mjs';

const PACKAGE = join(ROOT, 'packages', 'playwright-webmcp-host');
const CLI = join(ROOT, 'node_modules', '@playwright', 'test', 'cli.js');
const OUT = join(ROOT, 'target', 'playwright-webmcp-host');

/** Runs the example with `args`; resolves to its JSON report and its exit code. */
async function runExample(args, port, name) {
  // The example starts a Playwright run of its own: none of this run's worker settings.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TEST_|PW_|PLAYWRIGHT_|NODE_OPTIONS$)/.test(k)));
  const report = join(OUT, `${name}.json`);
  const child = spawn(process.execPath, [CLI, 'test', '-c', 'example', '--reporter=json', ...args], {
    cwd: PACKAGE,
    env: { ...env, CI: '1', SHOP_PORT: String(port), PLAYWRIGHT_JSON_OUTPUT_NAME: report, WEBMCP_HOST_EXTENSION: join(ROOT, 'extension') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const code = await new Promise((resolve) => child.on('close', resolve));
  return { code, output, report: JSON.parse(await readFile(report, 'utf8')) };
}

/** `[{title, status}]` of every test the report ran. */
function ran(report) {
  const out = [];
  const walk = (suite) => {
    for (const spec of suite.specs ?? []) for (const t of spec.tests) out.push({ title: spec.title, status: t.status, runs: t.results.length });
    for (const child of suite.suites ?? []) walk(child);
  };
  report.suites.forEach(walk);
  return out;
}

test('--shard=1/2 and --shard=2/2 together run every case of the suite exactly once', async () => {
  test.setTimeout(240_000);
  await mkdir(OUT, { recursive: true });
  const titles = evalCases(join(PACKAGE, 'example', 'shop.evals.json')).map((c) => c.title);
  expect(titles.length).toBeGreaterThanOrEqual(4);
  const port = await freePort();
  const shards = [];
  for (const shard of ['1/2', '2/2']) {
    const { code, output, report } = await runExample([`--shard=${shard}`], port, `shard-${shard.replace('/', '-of-')}`);
    expect(code, output).toBe(0);
    expect(report.errors, output).toEqual([]);
    const tests = ran(report);
    expect(tests.length, `shard ${shard} runs some cases`).toBeGreaterThan(0);
    for (const t of tests) expect(t, `shard ${shard}: ${t.title}`).toMatchObject({ status: 'expected', runs: 1 });
    shards.push(tests.map((t) => t.title));
  }
  const all = shards.flat();
  expect(all.toSorted()).toEqual(titles.toSorted());
  expect(new Set(all).size).toBe(all.length);
});
