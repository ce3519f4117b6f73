// `webmcp-host mcp` against official SDK servers of both protocol generations: the TypeScript
// SDK v2 server (@modelcontextprotocol/server 2.4.0, scripts/mcp/modern-server.mjs), which
// speaks 2026-07-28 and, unless told to refuse it, 2025-11-25; and server-everything
// (TypeScript SDK 1.x: 2025-11-25 only). What the CLI sends is read from the v2 server's log of
// requests and from the CLI's own trace (WEBMCP_HOST_TRACE: one line a request).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startEverything, startModern } from '../../scripts/mcp/start-server.mjs';
import { ROOT } from '../../scripts/mcp/common.mjs';

const CLI = join(ROOT, 'target', 'debug', 'webmcp-host');

/** Runs the CLI with its trace on; resolves to {code, stdout, stderr, sent: the methods in order}. */
function cli(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, WEBMCP_HOST_TRACE: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`hung: ${stderr}`)); }, 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      const sent = [...stderr.matchAll(/^webmcp-host: → (\S+) \S+ ?(\S*)$/gm)].map((m) => m[2] || m[1]);
      resolve({ code, stdout, stderr, sent });
    });
  });
}

const results = (stdout) => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('a 2026-07-28 server (TypeScript SDK v2, also speaking 2025-11-25)', () => {
  let server;
  before(async () => { server = await startModern(); });
  after(() => server?.stop());

  test('auto: server/discover picks 2026-07-28; no initialize, no session, _meta headers on every request', async () => {
    const seen = server.requests().length;
    const r = await cli(['mcp', server.url, 'call', 'add', '{"a": 2, "b": 40}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: '42' }]);
    assert.deepEqual(r.sent, ['server/discover', 'subscriptions/listen', 'tools/list', 'tools/call']);
    const got = server.requests().slice(seen);
    assert.deepEqual(got.map((q) => q.method), r.sent);
    for (const q of got) {
      assert.equal(q.http, 'POST');
      assert.equal(q.headers['mcp-protocol-version'], '2026-07-28', JSON.stringify(q));
      assert.equal(q.headers['mcp-method'], q.method);
      assert.equal(q.headers['mcp-session-id'], undefined);
    }
    assert.equal(got.at(-1).headers['mcp-name'], 'add');
  });

  test('x-mcp-header: the designated argument travels as Mcp-Param-Region (the SDK refuses the call without it)', async () => {
    const seen = server.requests().length;
    const r = await cli(['mcp', server.url, 'call', 'route', '{"region": "eu-west"}', 'route', '{"region": "Zürich "}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: 'region eu-west' }, { ok: true, result: 'region Zürich ' }]);
    const calls = server.requests().slice(seen).filter((q) => q.method === 'tools/call');
    assert.deepEqual(calls.map((q) => q.headers['mcp-param-region']),
      ['eu-west', `=?base64?${Buffer.from('Zürich ').toString('base64')}?=`]);
    // The same call without the header: the server refuses it (400, HeaderMismatch -32020).
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const res = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'route',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'route', arguments: { region: 'eu' }, _meta: meta } }),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error.code, -32020);
  });

  test('input_required: answered by the elicitation policy (the schema\'s defaults) and sent again with a new id', async () => {
    const seen = server.requests().length;
    const r = await cli(['mcp', server.url, 'call', 'confirm', '{}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: 'confirmed' }]);
    const calls = server.requests().slice(seen).filter((q) => q.method === 'tools/call');
    assert.equal(calls.length, 2, 'the call, then its retry with inputResponses');
    assert.match(r.stderr, /answered the server's input requests; sent again/);
  });

  test('subscriptions/listen: a change of the server\'s tools arrives on the listen stream', async () => {
    const r = await cli(['mcp', server.url, 'call', 'bump', '{}', 'add', '{"a": 1, "b": 1}']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /the server's tools changed \(tools\/list_changed\)/);
  });

  test('--protocol 2025-11-25: the same server through initialize', async () => {
    const seen = server.requests().length;
    const r = await cli(['mcp', server.url, 'call', 'add', '{"a": 1, "b": 2}', '--protocol', '2025-11-25']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: '3' }]);
    assert.equal(r.sent[0], 'initialize');
    assert.ok(!r.sent.includes('server/discover'));
    const got = server.requests().slice(seen).filter((q) => q.method === 'tools/call');
    assert.equal(got[0].headers['mcp-protocol-version'], '2025-11-25');
  });
});

describe('a server that refuses 2025-11-25 (TypeScript SDK v2, legacy: reject)', () => {
  let server;
  before(async () => { server = await startModern({ legacy: 'reject' }); });
  after(() => server?.stop());

  test('auto speaks 2026-07-28; --protocol legacy is a clear error', async () => {
    let r = await cli(['mcp', server.url, 'call', 'add', '{"a": 1, "b": 2}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: '3' }]);
    r = await cli(['mcp', server.url, 'tools', '--protocol', 'legacy']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the server answered 400 to initialize/);
  });
});

describe('a 2025-11-25 server (server-everything, TypeScript SDK 1.x)', () => {
  let server;
  before(async () => { server = await startEverything(); });
  after(() => server?.stop());

  test('auto: server/discover is refused, so initialize follows, and the call works', async () => {
    const r = await cli(['mcp', server.url, 'call', 'get-sum', '{"a": 1, "b": 2}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(results(r.stdout), [{ ok: true, result: 'The sum of 1 and 2 is 3.' }]);
    assert.deepEqual(r.sent.slice(0, 3), ['server/discover', 'initialize', 'notifications/initialized']);
    assert.match(r.stderr, /connecting with initialize \(MCP up to 2025-11-25\)/);
  });

  test('--protocol 2026-07-28 is a clear error', async () => {
    const r = await cli(['mcp', server.url, 'tools', '--protocol', '2026-07-28']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /the server does not speak MCP 2026-07-28/);
  });
});
