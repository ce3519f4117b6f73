#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance) against an MCP
// client command, one client scenario at a time, with the Node 22 binary it needs, and its mock
// servers forced onto 127.0.0.1 (scripts/mcp/loopback-preload.cjs).
//
//   node scripts/mcp/run-conformance.mjs --command "<client command>" [--scenario NAME ...]
//        [--suite NAME ...] [--spec-version 2026-07-28] [--timeout MS] [--output-dir DIR]
//        [--verbose] [--list]
//
// Two generations of the suite are installed: @modelcontextprotocol/conformance (0.1.16: the
// revisions up to 2025-11-25) and `conformance-2026` (0.2.0-alpha.12, an alias: the 2026-07-28
// scenarios, run with `--spec-version 2026-07-28`, which the client reads from
// MCP_CONFORMANCE_PROTOCOL_VERSION).
// Without --scenario or --suite it runs every client scenario that 0.1.16 lists except the
// auth/ ones, one at a time, then its suite `auth` (the suite's own `--suite auth`: its
// scenarios in parallel, each with its mock resource server and authorization server), then
// every client scenario that 0.2.0-alpha.12 lists for 2026-07-28 (auth/ ones too), one at a
// time, at 2026-07-28 (named NAME@2026-07-28 in the table). --scenario and --suite run on
// 0.1.16, or on 0.2.0-alpha.12 at 2026-07-28 with --spec-version 2026-07-28.
// --scenario runs the named scenarios one at a time (auth/ ones too); --suite runs a suite of
// the conformance CLI (auth, core, metadata, backcompat, ...). The suite appends the mock server's URL as the client's last argument, runs the
// command through /bin/sh (so prefer `exec <client> ...`), and sets MCP_CONFORMANCE_SCENARIO.
// Results: the suite writes <output-dir>/<scenario>-<timestamp>/checks.json (and the client's
// stdout.txt, stderr.txt); this script reads them, prints a table, and exits 1 if any scenario
// has a FAILURE or a WARNING check, no SUCCESS check at all, or the suite itself failed (client
// exit code != 0, client timeout). Exit 2: bad usage.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFORMANCE_CLI, CONFORMANCE_CLI_2026, MODERN_SPEC, PRELOAD, killGroup, node22 } from './common.mjs';

function usage(message) {
  if (message) console.error(`run-conformance: ${message}`);
  console.error('usage: node scripts/mcp/run-conformance.mjs --command "<client command>" [--scenario NAME ...] '
    + `[--suite NAME ...] [--spec-version ${MODERN_SPEC}] [--timeout MS] [--output-dir DIR] [--verbose] [--list]`);
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { scenarios: [], suites: [], timeout: 30000, verbose: false, list: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => (i + 1 < argv.length ? argv[++i] : usage(`${arg} needs a value`));
    if (arg === '--command') opts.command = value();
    else if (arg === '--scenario') opts.scenarios.push(value());
    else if (arg === '--suite') opts.suites.push(value());
    else if (arg === '--spec-version') opts.specVersion = value();
    else if (arg === '--timeout') opts.timeout = Number(value());
    else if (arg === '--output-dir' || arg === '-o') opts.outputDir = resolve(value());
    else if (arg === '--verbose') opts.verbose = true;
    else if (arg === '--list') opts.list = true;
    else if (arg === '--help' || arg === '-h') usage();
    else usage(`unknown argument ${arg}`);
  }
  if (!Number.isFinite(opts.timeout) || opts.timeout <= 0) usage('--timeout must be a positive number of ms');
  if (opts.specVersion !== undefined && opts.specVersion !== MODERN_SPEC) usage(`--spec-version takes ${MODERN_SPEC} (the earlier revisions are 0.1.16's)`);
  return opts;
}

/**
 * The client scenarios the installed suite knows, from `conformance list --client`; with
 * `specVersion` (2026-07-28), those the 0.2.0 pre-release lists for it.
 */
export function listClientScenarios(specVersion) {
  const args = specVersion ? [CONFORMANCE_CLI_2026, 'list', '--client', '--spec-version', specVersion] : [CONFORMANCE_CLI, 'list', '--client'];
  const out = spawnSync(node22(), args, { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`conformance list failed: ${out.stderr}`);
  return out.stdout.split('\n')
    .map((line) => /^\s+- (\S+)(?: \[([^\]]*)\])?/.exec(line))
    .filter(Boolean)
    .map((m) => ({ name: m[1], specVersions: m[2] ? m[2].split(',') : [] }));
}

function findChecksFiles(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) found.push(...findChecksFiles(path));
    else if (entry === 'checks.json') found.push(path);
  }
  return found;
}

const running = new Set(); // suites under way, killed with their clients if this process ends
process.on('exit', () => { for (const child of running) killGroup(child, 'SIGKILL'); });

/**
 * Runs the conformance CLI's `client` command with `selection` (`['--scenario', NAME]` or
 * `['--suite', NAME]`), its results written under `resultsRoot`; resolves to
 * { code, signal, stdout, stderr, killedAtDeadline }. Its own process group: the suite runs the
 * client through /bin/sh and on timeout kills only the shell, so a hung client would keep the
 * suite waiting; the whole group goes at `deadlineMs`, and whatever is left when it ends.
 */
function runCli({ command, selection, timeout, resultsRoot, deadlineMs, verbose, specVersion }) {
  const env = { ...process.env };
  // The suite copies its environment into the client's: don't let a stale context leak in.
  delete env.MCP_CONFORMANCE_SCENARIO;
  delete env.MCP_CONFORMANCE_CONTEXT;
  delete env.MCP_CONFORMANCE_PROTOCOL_VERSION;
  const cli = specVersion ? [CONFORMANCE_CLI_2026, 'client', '--spec-version', specVersion] : [CONFORMANCE_CLI, 'client'];
  const args = ['--require', PRELOAD, ...cli,
    '--command', command, ...selection, '--timeout', String(timeout), '--output-dir', resultsRoot];
  return new Promise((resolvePromise) => {
    const child = spawn(node22(), args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; if (verbose) process.stderr.write(d); });
    child.stderr.on('data', (d) => { stderr += d; if (verbose) process.stderr.write(d); });
    let killedAtDeadline = false;
    const deadline = setTimeout(() => { killedAtDeadline = true; killGroup(child, 'SIGKILL'); }, deadlineMs);
    child.on('close', (code, signal) => {
      running.delete(child);
      clearTimeout(deadline);
      killGroup(child, 'SIGKILL'); // whatever the client left running
      resolvePromise({ code, signal, stdout, stderr, killedAtDeadline });
    });
  });
}

/** Runs one scenario; resolves to { scenario, exitCode, checks, stdout, stderr, resultDir, error }. */
export async function runScenario({ command, scenario, timeout = 30000, outputDir, verbose = false, specVersion }) {
  const resultsRoot = mkdtempSync(join(outputDir ?? tmpdir(), 'mcp-conformance-'));
  const deadlineMs = timeout + 15000;
  const { code, signal, stdout, stderr, killedAtDeadline } = await runCli({
    command, selection: ['--scenario', scenario], timeout, resultsRoot, deadlineMs, verbose, specVersion,
  });
  const files = findChecksFiles(resultsRoot);
  let checks = null;
  let error = null;
  if (killedAtDeadline) error = `the suite did not end within ${deadlineMs} ms (a hung client?)`;
  if (files.length === 1) {
    checks = JSON.parse(readFileSync(files[0], 'utf8'));
  } else if (!error) {
    error = `suite wrote ${files.length} checks.json files (exit ${code ?? signal})`;
  }
  if (!outputDir) rmSync(resultsRoot, { recursive: true, force: true });
  return {
    scenario: specVersion ? `${scenario}@${specVersion}` : scenario, exitCode: code ?? 128, signal, checks, stdout, stderr, error,
    resultDir: outputDir && files[0] ? files[0].slice(0, -'/checks.json'.length) : undefined,
    timedOut: /CLIENT TIMED OUT/.test(stderr),
    clientExitedWithError: /CLIENT EXITED WITH ERROR/.test(stderr),
  };
}

/**
 * Runs a whole suite of the conformance CLI (`client --suite NAME`, its scenarios in parallel);
 * resolves to one result per scenario, as runScenario's (from each scenario's checks.json).
 */
export async function runSuite({ command, suite, timeout = 30000, outputDir, verbose = false, specVersion }) {
  const resultsRoot = mkdtempSync(join(outputDir ?? tmpdir(), `mcp-conformance-${suite}-`));
  // The scenarios run at once: the whole suite has a scenario's time, and some slack.
  const deadlineMs = timeout + 30000;
  const { code, signal, stdout, stderr, killedAtDeadline } = await runCli({
    command, selection: ['--suite', suite], timeout, resultsRoot, deadlineMs, verbose, specVersion,
  });
  const results = findChecksFiles(resultsRoot).map((file) => {
    const dir = dirname(file);
    const name = relative(resultsRoot, dir).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    const scenario = specVersion ? `${name}@${specVersion}` : name;
    const read = (name) => { try { return readFileSync(join(dir, name), 'utf8'); } catch { return ''; } };
    return {
      scenario, exitCode: 0, checks: JSON.parse(readFileSync(file, 'utf8')),
      stdout: read('stdout.txt'), stderr: read('stderr.txt'), error: null,
      resultDir: outputDir ? dir : undefined, timedOut: false, clientExitedWithError: false,
    };
  }).sort((a, b) => a.scenario.localeCompare(b.scenario));
  if (!outputDir) rmSync(resultsRoot, { recursive: true, force: true });
  const listed = [...stdout.matchAll(/^[✓✗] (\S+):/gm)].map((m) => m[1]);
  for (const name of listed) {
    if (!results.some((r) => r.scenario === name)) {
      results.push({ scenario: name, exitCode: 1, checks: null, stdout: '', stderr: '', error: 'no checks.json written' });
    }
  }
  if (killedAtDeadline || results.length === 0) {
    results.push({
      scenario: `suite ${suite}`, exitCode: code ?? 128, signal, checks: null, stdout, stderr,
      error: killedAtDeadline ? `the suite did not end within ${deadlineMs} ms` : `the suite ran no scenario (exit ${code ?? signal})`,
    });
  }
  return results;
}

export function summarize(result) {
  const count = (status) => (result.checks ?? []).filter((c) => c.status === status).length;
  const passed = count('SUCCESS');
  const failed = count('FAILURE');
  const warnings = count('WARNING');
  const problems = [];
  if (result.error) problems.push(result.error);
  if (result.timedOut) problems.push('client timed out');
  if (result.clientExitedWithError) problems.push('client exited with an error');
  if (result.checks && passed === 0) problems.push('no passing check (did the client talk to the server?)');
  if (result.exitCode !== 0 && problems.length === 0 && failed === 0 && warnings === 0) {
    problems.push(`suite exited ${result.exitCode}`);
  }
  const ok = failed === 0 && warnings === 0 && problems.length === 0 && result.exitCode === 0;
  return { scenario: result.scenario, passed, failed, warnings, ok, problems };
}

function printTable(rows) {
  const header = ['scenario', 'passed', 'failed', 'warnings', 'result'];
  const lines = rows.map((r) => [r.scenario, String(r.passed), String(r.failed), String(r.warnings),
    r.ok ? 'ok' : `FAIL${r.problems.length ? `: ${r.problems.join('; ')}` : ''}`]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (i === 4 ? 0 : l[i].length))));
  const fmt = (cells) => cells.map((c, i) => (i === 4 ? c : i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(fmt(header));
  console.log(fmt(widths.map((w, i) => '-'.repeat(i === 4 ? 6 : w))));
  for (const l of lines) console.log(fmt(l));
}

function printProblems(result) {
  for (const c of (result.checks ?? []).filter((x) => x.status === 'FAILURE' || x.status === 'WARNING')) {
    console.log(`  ${result.scenario}: ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`
      + (c.details ? ` ${JSON.stringify(c.details)}` : ''));
  }
  const s = summarize(result);
  if (!s.ok) {
    const tail = (text) => text.trim().split('\n').slice(-40).join('\n');
    if (result.stderr.trim()) console.log(`  --- ${result.scenario}: suite output (last lines) ---\n${tail(result.stderr)}`);
  }
}

async function main() {
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
  const opts = parseArgs(process.argv.slice(2));
  const known = listClientScenarios(opts.specVersion);
  const modern = listClientScenarios(MODERN_SPEC);
  if (opts.list) {
    if (!opts.specVersion) {
      for (const s of known) console.log(`${s.name}${s.name.startsWith('auth/') ? '' : '  (default, one by one)'}`);
      console.log('suite auth  (default, in parallel)');
    }
    for (const s of modern) console.log(`${s.name}@${MODERN_SPEC}  (default, one by one)`);
    return 0;
  }
  if (!opts.command) usage('--command is required');
  const names = new Set(known.map((s) => s.name));
  const chosen = opts.scenarios.length || opts.suites.length;
  const scenarios = chosen ? opts.scenarios : known.map((s) => s.name).filter((n) => opts.specVersion || !n.startsWith('auth/'));
  const suites = chosen || opts.specVersion ? opts.suites : ['auth'];
  // The default run ends with the 2026-07-28 generation.
  const later = chosen || opts.specVersion ? [] : modern.map((s) => s.name);
  for (const s of scenarios) if (!names.has(s)) usage(`unknown scenario ${s}; known: ${[...names].join(', ')}`);
  if (opts.outputDir) mkdirSync(opts.outputDir, { recursive: true });

  const results = [];
  const report = (result) => {
    results.push(result);
    const s = summarize(result);
    console.log(`conformance: ${result.scenario}: ${s.ok ? 'ok' : 'FAIL'} (${s.passed} passed, ${s.failed} failed, ${s.warnings} warnings)`);
  };
  for (const scenario of scenarios) {
    console.log(`conformance: ${scenario} ...`);
    report(await runScenario({ ...opts, scenario }));
  }
  for (const suite of suites) {
    console.log(`conformance: suite ${suite} ...`);
    for (const result of await runSuite({ ...opts, suite })) report(result);
  }
  for (const scenario of later) {
    console.log(`conformance: ${scenario}@${MODERN_SPEC} ...`);
    report(await runScenario({ ...opts, scenario, specVersion: MODERN_SPEC }));
  }
  console.log('');
  const rows = results.map(summarize);
  printTable(rows);
  const bad = results.filter((r) => !summarize(r).ok);
  if (bad.length) {
    console.log('\nproblems:');
    for (const r of bad) printProblems(r);
  }
  if (opts.outputDir) console.log(`\nresults saved under ${opts.outputDir}`);
  const okCount = rows.filter((r) => r.ok).length;
  console.log(`\nconformance: ${okCount} passed, ${rows.length - okCount} failed`);
  return bad.length ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => process.exit(code), (err) => { console.error(err); process.exit(1); });
}
