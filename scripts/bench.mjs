// `make bench`: prints the size of the shipped wasm module (raw and gzip) and the service
// worker's cold start (worker start to host ready), measured in Chromium.
//
// Cold start is read from the worker itself: `performance.now()` counts from the worker's
// start, and the loader records it when the wasm host is ready. Each run is a fresh browser
// profile, so the worker starts for the first time with nothing cached (the worst case).
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { launchHost, EXTENSION_DIR } from '../tests/support/browser.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { min: sorted[0], median, max: sorted.at(-1) };
};
const ms = (value) => `${value.toFixed(1)} ms`;
const show = (label, values) => {
  const { min, median, max } = stats(values);
  console.log(`${label.padEnd(34)} median ${ms(median)}  (min ${ms(min)}, max ${ms(max)}, n=${values.length})`);
};

const wasm = readFileSync(join(EXTENSION_DIR, 'webmcp_host_bg.wasm'));
const glue = readFileSync(join(EXTENSION_DIR, 'webmcp_host.js'));
const kb = (n) => `${(n / 1024).toFixed(1)} KiB`;
console.log(`webmcp_host_bg.wasm                raw ${kb(wasm.length)} (${wasm.length} B), gzip -9 ${kb(gzipSync(wasm, { level: 9 }).length)} (${gzipSync(wasm, { level: 9 }).length} B)`);
console.log(`webmcp_host.js (glue)              raw ${kb(glue.length)}, gzip -9 ${kb(gzipSync(glue, { level: 9 }).length)}`);

const first = [];
for (let run = 0; run < RUNS; run += 1) {
  const host = await launchHost();
  try {
    const { readyMs } = await host.worker.evaluate(() => webmcpHost.startup());
    first.push(readyMs);
  } finally {
    await host.close();
  }
}
show('worker cold start (start → ready)', first);

// MCP: listing 10,000 tools over 100 pages and then calling one, with the project's MCP server
// on 127.0.0.1. Natively: the release CLI (wall time and peak memory from /usr/bin/time). In the
// worker: a run whose tool sources include that server (connect, 100 pages, one call).
{
  const { spawn, spawnSync } = await import('node:child_process');
  // The MCP server runs in this process: children must be awaited, not run synchronously.
  const runChild = (command, args) =>
    new Promise((resolve) => {
      const child = spawn(command, args);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  const { existsSync } = await import('node:fs');
  const { startMcpServer } = await import('../tests/support/mcp-server.mjs');
  const { ROOT } = await import('../tests/support/browser.mjs');
  const server = await startMcpServer({ tools: 'many', pageSize: 100, behaviour: { toolCount: 10_000 - 8 } });
  const url = `${server.url}/mcp`;
  try {
    const build = spawnSync('cargo', ['build', '--release', '--quiet', '--bin', 'webmcp-host'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('cargo build failed');
    const cli = join(ROOT, 'target', 'release', 'webmcp-host');
    const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
    const walls = [];
    const peaks = [];
    for (let i = 0; i < 5; i += 1) {
      const args = ['mcp', url, 'call', 'add', '{"a": 2, "b": 40}'];
      const started = performance.now();
      const run = timeBin ? await runChild(timeBin, ['-f', '%M', cli, ...args]) : await runChild(cli, args);
      walls.push(performance.now() - started);
      if (run.status !== 0 || !run.stdout.includes('42')) throw new Error(`the CLI failed: ${run.stderr}`);
      const kb = Number(run.stderr.trim().split('\n').at(-1));
      if (Number.isFinite(kb)) peaks.push(kb);
    }
    const pages = server.requests({ rpcMethod: 'tools/list' }).length / 5;
    show(`mcp native: list 10k tools (${pages} pages) + 1 call`, walls);
    if (peaks.length) console.log(`${'mcp native: peak memory'.padEnd(34)} median ${(stats(peaks).median / 1024).toFixed(1)} MiB (max ${(stats(peaks).max / 1024).toFixed(1)} MiB)`);

    const host = await launchHost();
    try {
      const transcript = [JSON.stringify({ calls: [{ name: 'own__add', arguments: { a: 2, b: 40 } }] }), JSON.stringify({ text: 'done' })].join('\n');
      await host.worker.evaluate((c) => webmcpHost.configure(c), {
        models: [{ name: 'r', provider: 'replay', transcript }],
        default: 'r',
        servers: [{ name: 'own', url, namespace: 'own', trusted: true }],
      });
      const times = [];
      for (let i = 0; i < 3; i += 1) {
        const ms = await host.worker.evaluate(async () => {
          const started = performance.now();
          const result = await webmcpHost.run({ prompt: 'add' });
          if (result.outcome.type !== 'completed') throw new Error(JSON.stringify(result.outcome));
          return performance.now() - started;
        });
        times.push(ms);
      }
      show('mcp worker: run with 10k tools + 1 call', times);
    } finally {
      await host.close();
    }
  } finally {
    server.close();
  }
}
