// `webmcp-host mcp` against real servers and the project's misbehaving one: every misbehaviour
// is a clear error for that server (exit status 1 or 2 and a message), within its timeout.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startEverything, startSimpleStreamableHttp } from '../../scripts/mcp/start-server.mjs';
import { ROOT } from '../../scripts/mcp/common.mjs';

const CLI = join(ROOT, 'target', 'debug', 'webmcp-host');

/** Runs the CLI; resolves to {code, stdout, stderr, ms}. */
function cli(args, { timeoutMs = 30_000, input } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(CLI, args, { stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`webmcp-host ${args.join(' ')} hung; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

const lines = (text) => text.split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('webmcp-host mcp against the project server', () => {
  let server;
  before(async () => {
    server = await startMcpServer({ tools: 'many', behaviour: {}, behaviours: { huge: { oversized: 17 * 1024 * 1024 } } });
  });
  after(() => server?.close());
  const at = (name) => `${server.url}/s/${name}/mcp`;

  test('lists 1,008 tools over 21 pages, with the confirmation MCP defaults ask for', async () => {
    const { code, stdout } = await cli(['mcp', at('normal~list'), 'tools', '--namespace', 'own']);
    assert.equal(code, 0);
    const tools = lines(stdout);
    assert.equal(tools.length, 1008);
    assert.equal(new Set(tools.map((t) => t.name)).size, 1008);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.equal(byName.own__add.needsConfirmation, false, 'read-only');
    assert.equal(byName.own__delete_record.needsConfirmation, true, 'destructive');
    assert.equal(byName.own__no_hints.needsConfirmation, true, 'no hints: destructive by default');
    const pages = server.requests({ rpcMethod: 'tools/list' }).filter((r) => r.path.includes('normal~list'));
    assert.equal(pages.length, 21);
    assert.ok(pages.every((r) => r.hadSessionId && r.hadProtocolVersion), 'session and version headers on every later request');
  });

  test('calls, structured content checked against the output schema, isError', async () => {
    let r = await cli(['mcp', at('normal~call'), 'call', 'add', '{"a": 2, "b": 40}']);
    assert.deepEqual([r.code, JSON.parse(r.stdout)], [0, { ok: true, result: '2 + 40 = 42' }]);
    r = await cli(['mcp', at('normal~call'), 'call', 'structured', '{}']);
    assert.equal(JSON.parse(r.stdout).structuredContent.sum, 3);
    r = await cli(['mcp', at('normal~call'), 'call', 'bad_structured', '{}']);
    assert.equal(r.code, 1);
    assert.match(JSON.parse(r.stdout).error, /does not match its output schema/);
    r = await cli(['mcp', at('normal~call'), 'call', 'fails', '{}']);
    assert.deepEqual([r.code, JSON.parse(r.stdout)], [1, { ok: false, error: 'it failed' }]);
    r = await cli(['mcp', at('normal~call'), 'call', 'image', '{}']);
    assert.match(JSON.parse(r.stdout).result, /\[image image\/png, \d+ bytes of base64 not shown\]/);
  });

  test('several calls on one session: repeated NAME JSON pairs, or a JSON-lines script on stdin', async () => {
    const sessions = () => server.requests({ rpcMethod: 'initialize' }).filter((r) => r.path.includes('normal~many')).length;
    let r = await cli(['mcp', at('normal~many'), 'call', 'add', '{"a": 1, "b": 2}', 'add', '{"a": 40, "b": 2}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(lines(r.stdout).map((l) => l.result), ['1 + 2 = 3', '40 + 2 = 42']);
    assert.equal(sessions(), 1, 'one session for both');
    const script = [
      JSON.stringify({ name: 'add', arguments: { a: 2, b: 2 } }),
      '',
      'not json',
      JSON.stringify({ name: 'nope', arguments: {} }),
      JSON.stringify({ name: 'fails' }),
      JSON.stringify({ name: 'add', arguments: { a: 5, b: 5 } }),
    ].join('\n');
    r = await cli(['mcp', at('normal~many'), 'call'], { input: script });
    assert.equal(r.code, 1, 'a failed call fails the script, the others still ran');
    const out = lines(r.stdout);
    assert.equal(out.length, 5, r.stdout);
    assert.equal(out[0].result, '2 + 2 = 4');
    assert.match(out[1].error, /^line 3: not JSON/);
    assert.match(out[2].error, /no tool `nope`/);
    assert.deepEqual(out[3], { ok: false, error: 'it failed' });
    assert.equal(out[4].result, '5 + 5 = 10');
    assert.equal(sessions(), 2, 'the script is one session');
    r = await cli(['mcp', at('normal~many'), 'call', 'add', '{"a":']);
    assert.equal(r.code, 2, 'arguments that are not JSON are refused before connecting');
    assert.match(r.stderr, /`add`: the call's arguments are not JSON/);
    assert.equal(sessions(), 2);
  });

  test('an expired session (404) is replaced transparently', async () => {
    const r = await cli(['mcp', at('expireSession~e'), 'call', 'add', '{"a": 1, "b": 1}']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /the session expired \(404\); starting a new one/);
    const inits = server.requests({ rpcMethod: 'initialize' }).filter((q) => q.path.includes('expireSession~e'));
    assert.equal(inits.length, 2);
  });

  const misbehaviours = [
    ['malformed', /tools\/list: the server sent JSON-RPC that is not JSON/],
    ['oddSessionId', /invalid Mcp-Session-Id/],
    ['redirect', /redirect/],
    ['huge', /tools\/call: the server's answer passed 16777216 bytes \(max_answer_bytes\)/],
    ['unauthorized', /server\/discover: the server requires authorization \(401\), and signing in failed: no authorization server metadata was found \(http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-authorization-server: 404/],
  ];
  for (const [name, message] of misbehaviours) {
    test(`${name} is a clear error`, async () => {
      const r = await cli(['mcp', at(`${name}~m`), 'call', 'add', '{"a": 1, "b": 2}', '--timeout', '3000']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, message);
    });
  }

  test('a redirect is not followed, so no header travels with it', async () => {
    await cli(['mcp', at('redirect~r'), 'tools', '--header', 'authorization: Bearer secret-1']);
    assert.ok(server.redirects().length >= 1);
    assert.ok(server.redirects().every((r) => !r.followed));
  });

  test('a wrong id or an endless stream ends at the timeout, and the call is cancelled', async () => {
    for (const name of ['wrongId', 'endless']) {
      const r = await cli(['mcp', at(`${name}~t`), 'call', 'add', '{"a": 1, "b": 2}', '--timeout', '1500']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /no answer to tools\/(list|call) within 1500 ms/);
      // A limit against a hang (the stream never ends), far above the 1.5 s asked for.
      assert.ok(r.ms < 30_000, `${name} took ${r.ms} ms`);
    }
    assert.ok(server.cancellations().length >= 1, 'notifications/cancelled was sent');
  });

  test('unrequested sampling is refused and an elicitation without defaults declined; the call goes on', async () => {
    const r = await cli(['mcp', at('sampling+elicitation~s'), 'call', 'add', '{"a": 2, "b": 3}']);
    assert.equal(r.code, 0, r.stderr);
    const answers = server.clientAnswers();
    const sampling = answers.find((a) => a.method === 'sampling/createMessage');
    assert.equal(sampling.answered, true);
    assert.equal(sampling.error.code, -32601);
    const elicitation = answers.find((a) => a.method === 'elicitation/create');
    assert.equal(elicitation.answered, true);
    assert.ok(['decline', 'accept'].includes(elicitation.result.action), JSON.stringify(elicitation));
  });
});

describe('webmcp-host mcp against real servers', () => {
  let everything, simple;
  before(async () => {
    [everything, simple] = await Promise.all([startEverything(), startSimpleStreamableHttp()]);
  });
  after(async () => {
    await everything?.stop();
    await simple?.stop();
  });

  test('server-everything: annotations, echo, get-sum, structured content, progress', async () => {
    const { stdout } = await cli(['mcp', everything.url, 'tools']);
    const tools = Object.fromEntries(lines(stdout).map((t) => [t.name, t]));
    assert.equal(tools['get-sum'].annotations.readOnlyHint, true);
    assert.equal(tools['get-sum'].needsConfirmation, false);
    let r = await cli(['mcp', everything.url, 'call', 'echo', '{"message": "hi"}']);
    assert.deepEqual(JSON.parse(r.stdout), { ok: true, result: 'Echo: hi' });
    r = await cli(['mcp', everything.url, 'call', 'get-sum', '{"a": 2, "b": 40}']);
    assert.deepEqual(JSON.parse(r.stdout), { ok: true, result: 'The sum of 2 and 40 is 42.' });
    r = await cli(['mcp', everything.url, 'call', 'get-structured-content', '{"location": "New York"}']);
    assert.equal(typeof JSON.parse(r.stdout).structuredContent.temperature, 'number');
    r = await cli(['mcp', everything.url, 'call', 'trigger-long-running-operation', '{"duration": 1, "steps": 3}']);
    assert.match(JSON.parse(r.stdout).result, /Long running operation completed/);
    assert.match(r.stderr, /progress 1\/3/, 'progress notifications are shown as they come');
    assert.match(r.stderr, /progress 3\/3/);
  });

  test('server-everything: a call that times out is cancelled and ends, without a hang', async () => {
    const r = await cli(['mcp', everything.url, 'call', 'trigger-long-running-operation', '{"duration": 20, "steps": 20}', '--timeout', '1500']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /no answer to tools\/call within 1500 ms/);
    // Not the operation's 20 s: the call ended at its timeout (a loaded machine may add seconds).
    assert.ok(r.ms < 15_000, `took ${r.ms} ms`);
  });

  test('the SDK example server', async () => {
    const r = await cli(['mcp', simple.url, 'call', 'greet', '{"name": "Ann"}']);
    assert.deepEqual([r.code, JSON.parse(r.stdout)], [0, { ok: true, result: 'Hello, Ann!' }]);
  });
});

describe('webmcp-host mcp signs in (MCP authorization)', () => {
  let server;
  before(async () => {
    server = await startSimpleStreamableHttp({ oauth: true, strict: true });
  });
  after(async () => {
    await server?.stop();
  });

  test('the SDK example behind its OAuth server: discovery, registration, PKCE, token, then the call', async () => {
    const r = await cli(['mcp', server.url, 'call', 'greet', '{"name": "Ann"}']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { ok: true, result: 'Hello, Ann!' });
    assert.match(r.stderr, new RegExp(`signed in at http://localhost:${server.authPort}/ \\(scope mcp:tools\\)`));
    assert.doesNotMatch(r.stderr + r.stdout, /Bearer|access_token|code_verifier/);
  });

  test('with --no-sign-in the 401 is a clean error', async () => {
    const r = await cli(['mcp', server.url, 'tools', '--no-sign-in']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /server\/discover: the server requires authorization \(401\): sign in to it/);
  });
});
