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
