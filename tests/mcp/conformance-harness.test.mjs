// Self-test of scripts/mcp/run-conformance.mjs, the harness that runs the official MCP
// conformance suite against a client command: the SDK-based reference client
// (tests/mcp/reference-client.mjs) passes every non-auth client scenario with no warning, and a
// client that does nothing fails, although the suite itself calls its `initialize` run a pass.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { ROOT, node22 } from '../../scripts/mcp/common.mjs';
import { listClientScenarios } from '../../scripts/mcp/run-conformance.mjs';

const NON_AUTH = ['initialize', 'tools_call', 'elicitation-sep1034-client-defaults', 'sse-retry'];
const quote = (s) => `'${s.replaceAll("'", "'\\''")}'`;

function runHarness(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['scripts/mcp/run-conformance.mjs', ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    child.stderr.on('data', (d) => { out += d; });
    child.on('close', (code) => resolve({ code, out }));
  });
}

test('the installed suite lists the four non-auth client scenarios, the rest are auth/', () => {
  const names = listClientScenarios().map((s) => s.name);
  assert.deepEqual(names.filter((n) => !n.startsWith('auth/')), NON_AUTH);
});

test('the SDK reference client passes every non-auth scenario with no warning', { timeout: 180000 }, async () => {
  const command = `exec ${quote(node22())} tests/mcp/reference-client.mjs`;
  const { code, out } = await runHarness(['--command', command, ...NON_AUTH.flatMap((n) => ['--scenario', n])]);
  assert.equal(code, 0, out);
  for (const [name, passed] of [['initialize', 1], ['tools_call', 1], ['elicitation-sep1034-client-defaults', 5], ['sse-retry', 3]]) {
    assert.match(out, new RegExp(`^${name} +${passed} +0 +0  ok$`, 'm'), out);
  }
  assert.match(out, /^conformance: 4 passed, 0 failed$/m);
});

test('a client that does nothing fails every scenario', { timeout: 120000 }, async () => {
  const { code, out } = await runHarness(['--command', 'true', ...NON_AUTH.flatMap((n) => ['--scenario', n])]);
  assert.equal(code, 1, out);
  assert.match(out, /^initialize +0 +0 +0  FAIL: no passing check/m, out);
  assert.match(out, /^conformance: 0 passed, 4 failed$/m);
});

test('the auth suite runs in parallel, and a client that does not sign in fails every scenario of it', { timeout: 120000 }, async () => {
  const { code, out } = await runHarness(['--command', 'true', '--suite', 'auth']);
  assert.equal(code, 1, out);
  assert.match(out, /^auth\/metadata-default +0 +[1-9]\d* +0  FAIL/m, out);
  assert.match(out, /^auth\/pre-registration +0 +[1-9]\d* +0  FAIL/m, out);
  const failed = Number(/^conformance: 0 passed, (\d+) failed$/m.exec(out)?.[1]);
  assert.ok(failed >= 14, out);
});

test('the 2026-07-28 generation: the pre-release lists its scenarios, and a client that does nothing fails them', { timeout: 120000 }, async () => {
  const names = listClientScenarios('2026-07-28').map((s) => s.name);
  for (const name of ['tools_call', 'request-metadata', 'sep-2322-client-request-state', 'http-standard-headers', 'http-custom-headers', 'http-invalid-tool-headers', 'json-schema-ref-no-deref', 'auth/iss-supported']) {
    assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  }
  assert.ok(!names.includes('initialize'), 'initialize was removed in 2026-07-28');
  const { code, out } = await runHarness(['--command', 'true', '--spec-version', '2026-07-28', '--scenario', 'request-metadata', '--scenario', 'tools_call']);
  assert.equal(code, 1, out);
  assert.match(out, /^request-metadata@2026-07-28 +0 +[1-9]\d* +\d+  FAIL/m, out);
  assert.match(out, /^tools_call@2026-07-28 +0 +/m, out);
  assert.match(out, /^conformance: 0 passed, 2 failed$/m);
});
