// `make bench`: prints the size of the shipped wasm module (raw and gzip), the service worker's
// cold start (worker start to host ready) on a fresh profile and on a warm restart, with where
// the time went, a page tool call through the host beside a direct `executeTool` in the page,
// listing 256 page tools, and the MCP listing. Each figure is printed beside its budget and the
// figure kept in benches/previous.json; `node scripts/bench.mjs --save` (or `BENCH_SAVE=1 make
// bench`) writes this run's figures there, and nothing else does.
//
// Cold start is read from the worker itself: `performance.now()` counts from the worker's
// start, and the loader records when its script ran, when the wasm module was compiled and when
// the host was ready (`webmcpHost.startup()`). Each fresh run is a new browser profile, so the
// worker starts for the first time with nothing cached (the worst case); the warm restart is
// the same worker stopped by Chrome and started again by a message, in the same profile.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { launchHost, stopWorker, EXTENSION_DIR, ROOT } from '../tests/support/browser.mjs';
import { serve } from '../tests/support/server.mjs';

const RUNS = Math.max(7, Number(process.env.BENCH_RUNS ?? 7));
const SAVE = process.argv.includes('--save') || process.env.BENCH_SAVE === '1';
// `BENCH_ONLY=start,calls,mcp` measures only those parts (the size is always printed); a
// partial run is never saved.
const ONLY = process.env.BENCH_ONLY ? new Set(process.env.BENCH_ONLY.split(',')) : null;
const part = (name) => !ONLY || ONLY.has(name);
if (ONLY && SAVE) throw new Error('BENCH_ONLY measures a part: a partial run is not saved');
const PREVIOUS_FILE = join(ROOT, 'benches', 'previous.json');
const previous = existsSync(PREVIOUS_FILE) ? JSON.parse(readFileSync(PREVIOUS_FILE, 'utf8')) : {};
const figures = {};

const stats = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
  return { min: sorted[0], median, max: sorted.at(-1) };
};
const fixed = (value) => value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2);
/** Prints a figure (the median of `values`, with min and max) beside its budget and its previous value; keeps it for --save. */
const figure = (key, label, values, { unit = 'ms', budget = null } = {}) => {
  const { min, median, max } = stats(values);
  figures[key] = { median: Number(median.toFixed(2)), min: Number(min.toFixed(2)), max: Number(max.toFixed(2)), n: values.length, unit };
  const was = previous[key]?.median;
  const parts = [
    `${label.padEnd(40)} ${`${fixed(median)} ${unit}`.padStart(11)}`,
    values.length > 1 ? `(min ${fixed(min)}, max ${fixed(max)}, n=${values.length})`.padEnd(32) : ''.padEnd(32),
    budget === null ? ''.padEnd(16) : `budget ≤ ${budget} ${unit}`.padEnd(16),
    budget === null ? '' : median <= budget ? ' met  ' : ' MISSED',
    was === undefined ? '  previous —' : `  previous ${fixed(was)} ${unit}`,
  ];
  console.log(parts.join(' '));
};

const wasm = readFileSync(join(EXTENSION_DIR, 'webmcp_host_bg.wasm'));
const workerModule = readFileSync(join(EXTENSION_DIR, 'worker.js'));
const KiB = (n) => n / 1024;
figure('wasm_raw_kib', 'webmcp_host_bg.wasm raw', [KiB(wasm.length)], { unit: 'KiB' });
figure('wasm_gzip_kib', 'webmcp_host_bg.wasm gzip -9', [KiB(gzipSync(wasm, { level: 9 }).length)], { unit: 'KiB', budget: 800 });
figure('worker_js_gzip_kib', 'worker.js (loader, glue, snippets) gzip -9', [KiB(gzipSync(workerModule, { level: 9 }).length)], { unit: 'KiB' });

// Cold start, fresh profile and warm restart, with its phases: the script ran (module graph
// loaded and evaluated), the wasm module compiled (fetched and compiled as it streamed in), the
// host ready (instantiated).
if (part('start')) {
  const fresh = [];
  const warm = [];
  const phases = { script: [], compile: [], instantiate: [], warmScript: [], warmCompile: [], warmInstantiate: [] };
  const keep = ({ scriptStartMs, compiledMs, readyMs }, into, prefix = '') => {
    into.push(readyMs);
    phases[prefix ? `${prefix}Script` : 'script'].push(scriptStartMs);
    phases[prefix ? `${prefix}Compile` : 'compile'].push(compiledMs - scriptStartMs);
    phases[prefix ? `${prefix}Instantiate` : 'instantiate'].push(readyMs - compiledMs);
  };
  for (let run = 0; run < RUNS; run += 1) {
    const host = await launchHost();
    try {
      keep(await host.worker.evaluate(() => webmcpHost.startup()), fresh);
      // Chrome stops the worker; a message from an extension page starts it again.
      const page = await host.context.newPage();
      await page.goto(`chrome-extension://${host.extensionId}/popup.html`);
      await stopWorker(host.context, page);
      await page.evaluate(() => chrome.runtime.sendMessage({ op: 'runs' })).catch(() => {});
      await host.worker.evaluate(() => webmcpHost.ready);
      keep(await host.worker.evaluate(() => webmcpHost.startup()), warm, 'warm');
    } finally {
      await host.close();
    }
  }
  figure('cold_start_fresh_ms', 'cold start, fresh profile (start → ready)', fresh, { budget: 100 });
  figure('cold_start_fresh_script_ms', '  script ran (module graph loaded)', phases.script);
  figure('cold_start_fresh_compile_ms', '  wasm fetched and compiled', phases.compile);
  figure('cold_start_fresh_instantiate_ms', '  wasm instantiated', phases.instantiate);
  figure('cold_start_warm_ms', 'cold start, warm restart (start → ready)', warm, { budget: 100 });
  figure('cold_start_warm_script_ms', '  script ran (module graph loaded)', phases.warmScript);
  figure('cold_start_warm_compile_ms', '  wasm fetched and compiled', phases.warmCompile);
  figure('cold_start_warm_instantiate_ms', '  wasm instantiated', phases.warmInstantiate);
}

// A page tool call through the host beside a direct `executeTool` in the page, on a tool that
// echoes its input (on a page with that one tool, and on one with 256 tools, where every call
// through the host lists them first), and listing the 256 tools, in one browser: each timed
// where it runs (the host's in the worker, the direct one in the page), interleaved round by
// round; the overhead of a round is its host median less its direct median.
if (part('calls')) {
  const server = await serve(join(ROOT, 'benches'));
  const host = await launchHost();
  try {
    const open = async (file) => {
      const page = await host.context.newPage();
      await page.goto(`${server.url}/${file}`);
      await page.waitForFunction(() => window.__ready === true);
      return { page, tabId: await host.tabIdOf(page) };
    };
    const args = { text: 'hello', n: 42 };
    const direct = ({ page }) =>
      page.evaluate(async (input) => {
        const mc = document.modelContext;
        const started = performance.now();
        const tool = Array.from(await mc.getTools()).find((t) => t.name === 'echo');
        const result = await mc.executeTool(tool, input);
        const took = performance.now() - started;
        if (!String(result).includes('hello')) throw new Error(`echo answered ${result}`);
        return took;
      }, args);
    const viaHost = ({ tabId }) =>
      host.worker.evaluate(async (request) => {
        const started = performance.now();
        const answer = await webmcpHost.callTool(request);
        const took = performance.now() - started;
        if (!answer.ok || !answer.result.includes('hello')) throw new Error(JSON.stringify(answer));
        return took;
      }, { tabId, name: 'echo', args });
    const listing = ({ tabId }) =>
      host.worker.evaluate(async (tabId) => {
        const started = performance.now();
        const { tools } = await webmcpHost.listTools({ tabId });
        const took = performance.now() - started;
        if (tools.length !== 256) throw new Error(`listed ${tools.length} tools`);
        return took;
      }, tabId);
    // Every message on a port the worker opens to a tab (the page bridge's channel, kept
    // between calls) is counted while `__benchTrips` counts.
    await host.worker.evaluate(() => {
      const connect = chrome.tabs.connect;
      chrome.tabs.connect = function (...args) {
        const port = connect.apply(this, args);
        const post = port.postMessage;
        port.postMessage = function (message) {
          const counts = globalThis.__benchTrips?.counts;
          if (counts) counts['port.postMessage'] = (counts['port.postMessage'] ?? 0) + 1;
          return post.call(this, message);
        };
        return port;
      };
    });
    const one = await open('echo.html');
    const many = await open('many-tools.html');
    // Warm-up: the first call compiles the tool's schema and the first listing fills caches.
    for (const tab of [one, many]) {
      await viaHost(tab);
      await direct(tab);
    }
    await listing(many);
    // The browser calls the worker makes for one page call (each a round trip to the browser
    // process; the ones made at once count one each too).
    const roundTrips = async (tab) => {
      await host.worker.evaluate(() => {
        const counts = {};
        const wrap = (api, name, label) => {
          const original = api[name];
          api[name] = function counted(...args) {
            counts[label] = (counts[label] ?? 0) + 1;
            return original.apply(this, args);
          };
          return () => { api[name] = original; };
        };
        globalThis.__benchTrips = { counts, undo: [
          wrap(chrome.webNavigation, 'getAllFrames', 'getAllFrames'),
          wrap(chrome.webNavigation, 'getFrame', 'getFrame'),
          wrap(chrome.tabs, 'query', 'tabs.query'),
          wrap(chrome.tabs, 'sendMessage', 'tabs.sendMessage'),
          wrap(chrome.tabs, 'connect', 'tabs.connect'),
          wrap(chrome.storage.local, 'get', 'storage.local.get'),
          wrap(chrome.storage.session, 'get', 'storage.session.get'),
        ] };
      });
      await viaHost(tab);
      return host.worker.evaluate(() => {
        const { counts, undo } = globalThis.__benchTrips;
        for (const restore of undo) restore();
        delete globalThis.__benchTrips;
        return counts;
      });
    };
    for (const [tab, label] of [[one, 'echo'], [many, '256 tools']]) {
      const counts = await roundTrips(tab);
      const total = Object.values(counts).reduce((a, b) => a + b, 0);
      const each = Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ');
      figure(label === 'echo' ? 'page_call_round_trips' : 'page_call_round_trips_256', `  browser calls per page call (${label})`, [total], { unit: 'calls' });
      console.log(`    ${each}`);
    }
    const times = { host: [], direct: [], overhead: [], host256: [], direct256: [], overhead256: [], list: [] };
    const ROUNDS = Math.max(RUNS, 9);
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const [tab, suffix] of [[one, ''], [many, '256']]) {
        const h = [];
        const d = [];
        for (let i = 0; i < 5; i += 1) {
          h.push(await viaHost(tab));
          d.push(await direct(tab));
        }
        times[`host${suffix}`].push(...h);
        times[`direct${suffix}`].push(...d);
        times[`overhead${suffix}`].push(stats(h).median - stats(d).median);
      }
      times.list.push(await listing(many));
    }
    figure('page_call_host_ms', 'page call through the host (echo)', times.host);
    figure('page_call_direct_ms', 'direct executeTool in the page (echo)', times.direct);
    figure('page_call_overhead_ms', 'page call overhead (host − direct)', times.overhead, { budget: 2 });
    figure('page_call_overhead_256_ms', 'the same on a page of 256 tools', times.overhead256);
    figure('list_256_tools_ms', 'listTools, 256 page tools', times.list, { budget: 20 });
  } finally {
    await host.close();
    await server.close();
  }
}

/** The release CLI, built first (cargo's own check: nothing is rebuilt when it is current). */
const releaseCli = () => {
  const build = spawnSync('cargo', ['build', '--release', '--quiet', '--bin', 'webmcp-host'], { cwd: ROOT, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('cargo build failed');
  return join(ROOT, 'target', 'release', 'webmcp-host');
};

// The pipeline through the CLI: `webmcp-host parse` on the 1 MB and 4 MB outputs bench_core
// wrote (BENCH_PIPELINE_OUTPUTS, the Makefile's target/bench), fed whole and with `--chunk 16`,
// run in turn so that the machine's load weighs on both alike. Fed whole must be no slower.
if (part('pipeline')) {
  const dir = join(ROOT, 'target', 'bench');
  if (!existsSync(join(dir, 'pipeline-4mb.txt'))) {
    console.log('pipeline: no outputs in target/bench (make bench writes them through bench_core); skipped');
  } else {
    const cli = releaseCli();
    const tools = join(ROOT, 'tests', 'golden', 'tools.json');
    const time = (input, extra) => {
      const started = performance.now();
      const run = spawnSync(cli, ['parse', '--tools', tools, ...extra], { input, maxBuffer: 1 << 30 });
      const ms = performance.now() - started;
      if (run.status !== 0) throw new Error(`webmcp-host parse failed: ${run.stderr}`);
      return ms;
    };
    for (const size of ['1mb', '4mb']) {
      const input = readFileSync(join(dir, `pipeline-${size}.txt`));
      const whole = [];
      const chunked = [];
      for (let i = 0; i < RUNS; i += 1) {
        whole.push(time(input, []));
        chunked.push(time(input, ['--chunk', '16']));
      }
      const mb = input.length / 1e6;
      const label = size === '1mb' ? '1 MB' : '4 MB';
      figure(`cli_parse_${size}_whole_ms`, `webmcp-host parse, ${label} whole`, whole);
      figure(`cli_parse_${size}_chunked_ms`, `  the same in 16 B chunks (--chunk 16)`, chunked);
      figure(`cli_parse_${size}_whole_vs_chunked`, `  whole ÷ chunked (${fixed(mb / (stats(whole).median / 1e3))} MB/s whole)`, [stats(whole).median / stats(chunked).median], { unit: '×', budget: 1 });
    }
  }
}

// MCP: listing 10,000 tools over 100 pages and then calling one, with the project's MCP server
// on 127.0.0.1. Natively: the release CLI (wall time and peak memory from /usr/bin/time). In the
// worker: a run whose tool sources include that server (connect, 100 pages, one call).
if (part('mcp')) {
  const { spawn } = await import('node:child_process');
  // The MCP server runs in this process: children must be awaited, not run synchronously.
  const runChild = (command, args, input) =>
    new Promise((resolve) => {
      const child = spawn(command, args);
      if (input !== undefined) child.stdin.end(input);
      else child.stdin.end();
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  const { startMcpServer } = await import('../tests/support/mcp-server.mjs');
  // Tools the size real servers list (about 1.4 KB each: 14 MB over the 100 pages).
  const server = await startMcpServer({ tools: 'many', pageSize: 100, behaviour: { toolCount: 10_000 - 8, richTools: true } });
  const url = `${server.url}/mcp`;
  try {
    const cli = releaseCli();
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
    figure('mcp_native_10k_ms', `mcp native: list 10k tools (${pages} pages) + 1 call`, walls);
    if (peaks.length) figure('mcp_native_peak_mib', 'mcp native: peak memory', peaks.map((kb) => kb / 1024), { unit: 'MiB' });

    // Side by side, each its own process timed from spawn to exit as ours is: the TS SDK's
    // client (@modelcontextprotocol/sdk) and a bare HTTP loop over the same requests.
    const other = async (mode, extra = [], at = url) => {
      const ms = [];
      const kib = [];
      for (let i = 0; i < 5; i += 1) {
        const args = [join(ROOT, 'scripts', 'mcp', 'bench-clients.mjs'), mode, at, ...extra];
        const started = performance.now();
        const run = timeBin ? await runChild(timeBin, ['-f', '%M', process.execPath, ...args]) : await runChild(process.execPath, args);
        ms.push(performance.now() - started);
        if (run.status !== 0) throw new Error(`${mode} failed: ${run.stderr}`);
        const kb = Number(run.stderr.trim().split('\n').at(-1));
        if (Number.isFinite(kb)) kib.push(kb);
      }
      return { ms, kib };
    };
    const ts = await other('ts-list');
    const bare = await other('bare-list');
    figure('mcp_ts_sdk_10k_ms', '  the TS SDK client (1.32.2), the same', ts.ms);
    figure('mcp_bare_http_10k_ms', '  a bare HTTP loop, the same requests', bare.ms);
    const median = (xs) => stats(xs).median;
    figure('mcp_native_vs_bare', '  ours ÷ bare HTTP', [median(walls) / median(bare.ms)], { unit: '×', budget: 1.3 });
    figure('mcp_native_vs_ts', '  ours ÷ the TS SDK', [median(walls) / median(ts.ms)], { unit: '×', budget: 0.6 });
    if (peaks.length && ts.kib.length && bare.kib.length) {
      // Memory per tool: the peak above the same process's bare floor, over 10,000 tools.
      const perTool = (kib) => ((median(kib) - median(bare.kib)) * 1024) / 10_000;
      figure('mcp_ts_sdk_peak_mib', '  the TS SDK client: peak memory', ts.kib.map((kb) => kb / 1024), { unit: 'MiB' });
      figure('mcp_ts_sdk_bytes_per_tool', '  the TS SDK client: bytes per tool (over a bare node process)', [perTool(ts.kib)], { unit: 'B' });
      const nativeFloor = await runChild(timeBin, ['-f', '%M', cli, 'parse'], '');
      const floor = Number(nativeFloor.stderr.trim().split('\n').at(-1));
      if (Number.isFinite(floor)) {
        figure('mcp_native_bytes_per_tool', '  ours: bytes per tool (over an idle CLI)', [((median(peaks) - floor) * 1024) / 10_000], { unit: 'B' });
      }
    }

    // 1,000 calls on one session: ours through the CLI's call script, the TS SDK's client, on
    // a server of the few default tools (so that the listing weighs nothing).
    const small = await startMcpServer();
    const smallUrl = `${small.url}/mcp`;
    const script = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ name: 'add', arguments: { a: i, b: 1 } })).join('\n');
    const ours1k = [];
    for (let i = 0; i < 3; i += 1) {
      const started = performance.now();
      const run = await runChild(cli, ['mcp', smallUrl, 'call'], script);
      ours1k.push(performance.now() - started);
      if (run.status !== 0 || run.stdout.trim().split('\n').length !== 1000) throw new Error(`the CLI's 1,000 calls failed: ${run.stderr.slice(-500)}`);
    }
    const ts1k = (await other('ts-calls', ['1000'], smallUrl)).ms;
    small.close();
    figure('mcp_native_1k_calls_ms', 'mcp native: 1,000 calls on one session', ours1k);
    figure('mcp_ts_sdk_1k_calls_ms', '  the TS SDK client, the same', ts1k);
    figure('mcp_native_1k_vs_ts', '  ours ÷ the TS SDK', [median(ours1k) / median(ts1k)], { unit: '×', budget: 0.3 });

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
      figure('mcp_worker_10k_ms', 'mcp worker: run with 10k tools + 1 call', times);
    } finally {
      await host.close();
    }
  } finally {
    server.close();
  }
}

if (SAVE) {
  writeFileSync(PREVIOUS_FILE, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`figures written to ${PREVIOUS_FILE}`);
} else {
  console.log('(previous: benches/previous.json; `node scripts/bench.mjs --save` keeps these figures there)');
}
