// Checks the project's MCP test server against the Streamable HTTP transport, and that each
// misbehaviour does what it says. Run: node --test tests/support/mcp-server.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect as netConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LATEST_PROTOCOL_VERSION, startMcpServer } from './mcp-server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ACCEPT = 'application/json, text/event-stream';
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

// --- A small SSE reader of our own -------------------------------------------------------------

/** Yields `{ comment }` and `{ event, data, id? }` items of an SSE body until it ends. */
async function* sseItems(response) {
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let buffer = '';
  let event = null;
  let data = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (;;) {
        const at = buffer.search(/\r\n|\r|\n/);
        if (at < 0) break;
        const width = buffer.startsWith('\r\n', at) ? 2 : 1;
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + width);
        if (line === '') {
          if (data.length) yield { event: event ?? 'message', data: data.join('\n') };
          event = null;
          data = [];
        } else if (line.startsWith(':')) {
          yield { comment: line.slice(1).trim() };
        } else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? '' : line.slice(colon + 1);
          if (value.startsWith(' ')) value = value.slice(1);
          if (field === 'event') event = value;
          else if (field === 'data') data.push(value);
        }
      }
    }
  } finally {
    reader.releaseLock();
  }
}

/** The next item of an sseItems iterator, or 'timeout' after `ms`, or null at the end. */
async function nextItem(items, ms = 10_000) {
  let timer;
  const timeout = new Promise((done) => { timer = setTimeout(() => done('timeout'), ms); });
  try {
    const next = await Promise.race([items.next(), timeout]);
    return next === 'timeout' ? 'timeout' : next.done ? null : next.value;
  } finally {
    clearTimeout(timer);
  }
}

/** All items of an SSE body (its data parsed as JSON where it is JSON). */
async function allItems(response) {
  const out = [];
  for await (const item of sseItems(response)) out.push(item);
  return out;
}

const messagesOf = (items) => items.filter((i) => i.data !== undefined).map((i) => JSON.parse(i.data));

// --- A small client ----------------------------------------------------------------------------

function post(endpoint, message, { session, version = LATEST_PROTOCOL_VERSION, headers = {}, signal, redirect } = {}) {
  return fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: ACCEPT,
      ...(session ? { 'mcp-session-id': session } : {}),
      ...(session && version ? { 'mcp-protocol-version': version } : {}),
      ...headers,
    },
    body: typeof message === 'string' ? message : JSON.stringify(message),
    signal,
    redirect,
  });
}

/** Sends a message and reads the whole answer: `{ status, headers, type, text, json, messages }`. */
async function rpc(endpoint, message, options) {
  const response = await post(endpoint, message, options);
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('text/event-stream')) {
    const items = await allItems(response);
    const messages = messagesOf(items);
    return { status: response.status, headers: response.headers, type, items, messages, json: messages.at(-1) };
  }
  const text = await response.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch { /* left undefined: not JSON */ }
  return { status: response.status, headers: response.headers, type, text, json, messages: json ? [json] : [] };
}

const initializeMessage = (version = LATEST_PROTOCOL_VERSION, id = 1, capabilities = {}) => ({
  jsonrpc: '2.0', id, method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 'mcp-server-test', version: '1.0.0' } },
});

/** initialize + notifications/initialized; returns `{ session, version, init, call(method, params) }`. */
async function connect(endpoint, { version = LATEST_PROTOCOL_VERSION, capabilities = {} } = {}) {
  const init = await rpc(endpoint, initializeMessage(version, 1, capabilities));
  assert.equal(init.status, 200, `initialize: ${init.text}`);
  const session = init.headers.get('mcp-session-id');
  const answered = init.json.result.protocolVersion;
  const note = await post(endpoint, { jsonrpc: '2.0', method: 'notifications/initialized' }, { session, version: answered });
  assert.equal(note.status, 202);
  let id = 1;
  return {
    session,
    version: answered,
    init,
    call: (method, params, options = {}) => rpc(endpoint, { jsonrpc: '2.0', id: ++id, method, ...(params ? { params } : {}) },
      { session, version: answered, ...options }),
  };
}

const toolResult = async (client, name, args = {}) => {
  const answer = await client.call('tools/call', { name, arguments: args });
  assert.equal(answer.status, 200);
  return answer.json.result;
};

// -----------------------------------------------------------------------------------------------

let server;
let mcp;
before(async () => {
  server = await startMcpServer({
    behaviours: {
      asker: { sampling: true, elicitation: true },
      elicitOnly: { elicitation: true, answerTimeoutMs: 500 },
      tokened: { unauthorized: 'secret' },
      quick: { slowStream: 300 },
      big: { oversized: 1_000_000 },
      controlId: { oddSessionId: 'control' },
      callOnlyMalformed: { malformed: 'tools/call' },
    },
  });
  mcp = `${server.url}/mcp`;
});
after(() => server.close());

describe('initialize and sessions', () => {
  test('initialize answers JSON with a session id and the capabilities', async () => {
    const answer = await rpc(mcp, initializeMessage());
    assert.equal(answer.status, 200);
    assert.match(answer.type, /^application\/json/);
    const session = answer.headers.get('mcp-session-id');
    assert.match(session, VISIBLE_ASCII);
    assert.deepEqual(answer.json.id, 1);
    assert.equal(answer.json.result.protocolVersion, '2025-11-25');
    assert.deepEqual(answer.json.result.capabilities, { tools: { listChanged: true } });
    assert.equal(typeof answer.json.result.serverInfo.name, 'string');
    assert.ok(server.sessions().some((s) => s.id === session && s.protocolVersion === '2025-11-25'));
  });

  test('initialize answers with the client version when supported, else the latest', async () => {
    for (const version of ['2025-06-18', '2025-03-26']) {
      assert.equal((await rpc(mcp, initializeMessage(version))).json.result.protocolVersion, version);
    }
    assert.equal((await rpc(mcp, initializeMessage('2024-11-05'))).json.result.protocolVersion, '2025-11-25');
    const bad = await rpc(mcp, { jsonrpc: '2.0', id: 9, method: 'initialize', params: {} });
    assert.equal(bad.json.error.code, -32602);
  });

  test('initialize over SSE (/s/sse/mcp)', async () => {
    const answer = await rpc(`${server.url}/s/sse/mcp`, initializeMessage());
    assert.equal(answer.status, 200);
    assert.match(answer.type, /^text\/event-stream/);
    assert.match(answer.headers.get('mcp-session-id'), VISIBLE_ASCII);
    assert.equal(answer.messages.length, 1);
    assert.deepEqual(answer.json.result.capabilities, { tools: { listChanged: true } });
    // The rest of that endpoint answers over SSE too.
    const client = await connect(`${server.url}/s/sse/mcp`);
    const list = await client.call('tools/list');
    assert.match(list.type, /^text\/event-stream/);
    assert.equal(list.json.result.tools[0].name, 'add');
  });

  test('notifications get 202 without a body', async () => {
    const client = await connect(mcp);
    const response = await post(mcp, { jsonrpc: '2.0', method: 'notifications/whatever' }, { session: client.session });
    assert.equal(response.status, 202);
    assert.equal(await response.text(), '');
    assert.equal(server.sessions().find((s) => s.id === client.session).initialized, true);
  });

  test('400 without a session id, 404 with an unknown one (JSON-RPC error bodies)', async () => {
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list' };
    const missing = await rpc(mcp, list);
    assert.equal(missing.status, 400);
    assert.equal(missing.json.jsonrpc, '2.0');
    assert.equal(typeof missing.json.error.code, 'number');
    const unknown = await rpc(mcp, list, { session: 'no-such-session' });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.json.error.code, -32001);
    assert.equal(unknown.json.id, 5);
  });

  test('other HTTP-level refusals', async () => {
    const client = await connect(mcp);
    const list = { jsonrpc: '2.0', id: 5, method: 'tools/list' };
    assert.equal((await rpc(mcp, list, { session: client.session, version: '1999-01-01' })).status, 400);
    assert.equal((await rpc(mcp, list, { session: client.session, headers: { accept: 'application/json' } })).status, 406);
    assert.equal((await rpc(mcp, list, { session: client.session, headers: { 'content-type': 'text/plain' } })).status, 415);
    assert.equal((await rpc(mcp, '{"jsonrpc": "2.0", ', { session: client.session })).json.error.code, -32700);
    assert.equal((await rpc(mcp, { id: 1 }, { session: client.session })).status, 400);
    assert.equal((await rpc(mcp, list, { session: client.session, headers: { origin: 'https://evil.example' } })).status, 403);
    assert.equal((await rpc(mcp, list, { session: client.session, headers: { origin: 'chrome-extension://abcdef' } })).status, 200);
    assert.equal((await rpc(mcp, [list], { session: client.session })).status, 400, 'no batches in 2025-11-25');
    // A session belongs to its endpoint.
    assert.equal((await rpc(`${server.url}/s/sse/mcp`, list, { session: client.session })).status, 404);
    assert.equal((await rpc(`${server.url}/s/no-such-flag/mcp`, list)).status, 404);
  });

  test('a 2025-03-26 session accepts a batch', async () => {
    const client = await connect(mcp, { version: '2025-03-26' });
    const answer = await rpc(mcp, [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/something' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 1 } } },
    ], { session: client.session, version: '2025-03-26' });
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.json.map((m) => m.id).sort(), ['a', 'b']);
  });

  test('DELETE ends the session; the id is then 404', async () => {
    const client = await connect(mcp);
    const del = (headers) => fetch(mcp, { method: 'DELETE', headers });
    assert.equal((await del({})).status, 400);
    assert.equal((await del({ 'mcp-session-id': client.session, 'mcp-protocol-version': client.version })).status, 200);
    assert.equal((await client.call('tools/list')).status, 404);
    assert.equal((await del({ 'mcp-session-id': client.session })).status, 404);
    assert.equal(server.sessions().find((s) => s.id === client.session).ended, 'deleted');
  });

  test('requests are recorded, with whether they carried the session and version headers', async () => {
    const endpoint = `${server.url}/s/normal~records/mcp`;
    const client = await connect(endpoint);
    await rpc(endpoint, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, { session: client.session, version: null });
    const records = server.requests({ behaviour: 'normal~records' });
    assert.equal(records.length, 3);
    const [init, note, list] = records;
    assert.equal(init.method, 'POST');
    assert.equal(init.path, '/s/normal~records/mcp');
    assert.equal(init.headers['content-type'], 'application/json');
    assert.equal(init.body.method, 'initialize');
    assert.equal(init.sessionId, null);
    assert.equal(init.hadSessionId, false);
    assert.equal(init.status, 200);
    assert.equal(typeof init.time, 'number');
    assert.equal(note.sessionId, client.session);
    assert.equal(note.hadProtocolVersion, true);
    assert.equal(note.protocolVersion, '2025-11-25');
    assert.deepEqual(note.rpcMethods, ['notifications/initialized']);
    assert.equal(list.hadSessionId, true);
    assert.equal(list.hadProtocolVersion, false);
    assert.deepEqual(list.body, { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    assert.ok(Object.keys(list.headers).every((k) => k === k.toLowerCase()));
    assert.equal(server.requests({ rpcMethod: 'tools/list', behaviour: 'normal~records' }).length, 1);
  });
});

describe('tools', () => {
  let client;
  before(async () => {
    client = await connect(mcp);
  });

  test('the default tool list', async () => {
    const answer = await client.call('tools/list');
    const { tools, nextCursor } = answer.json.result;
    assert.equal(nextCursor, undefined);
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    assert.deepEqual(Object.keys(byName), ['add', 'delete_record', 'no_hints', 'structured', 'bad_structured', 'fails', 'slow', 'image']);
    assert.deepEqual(byName.add.annotations, { readOnlyHint: true });
    assert.deepEqual(byName.add.inputSchema.required, ['a', 'b']);
    assert.deepEqual(byName.delete_record.annotations, { readOnlyHint: false, destructiveHint: true });
    assert.equal(byName.no_hints.annotations, undefined);
    assert.deepEqual(byName.structured.outputSchema, { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] });
    assert.deepEqual(byName.bad_structured.outputSchema, byName.structured.outputSchema);
    for (const tool of tools) assert.equal(tool.inputSchema.type, 'object');
  });

  test('each tool answers in its shape', async () => {
    assert.deepEqual(await toolResult(client, 'add', { a: 1, b: 2 }), { content: [{ type: 'text', text: '1 + 2 = 3' }] });
    assert.equal((await toolResult(client, 'add', { a: 'x' })).isError, true);
    assert.deepEqual(await toolResult(client, 'delete_record', { id: 'r-17' }), { content: [{ type: 'text', text: 'deleted r-17' }] });
    assert.ok(server.deleted().includes('r-17'));
    assert.deepEqual(await toolResult(client, 'no_hints'), { content: [{ type: 'text', text: 'ran' }] });
    const structured = await toolResult(client, 'structured');
    assert.deepEqual(structured.structuredContent, { sum: 3 });
    assert.deepEqual(JSON.parse(structured.content[0].text), { sum: 3 });
    assert.deepEqual((await toolResult(client, 'bad_structured')).structuredContent, { total: 3 });
    assert.deepEqual(await toolResult(client, 'fails'), { content: [{ type: 'text', text: 'it failed' }], isError: true });
    assert.deepEqual(await toolResult(client, 'slow', { ms: 20 }), { content: [{ type: 'text', text: 'waited 20 ms' }] });
    const image = await toolResult(client, 'image');
    assert.deepEqual(image.content.map((c) => c.type), ['image', 'resource_link', 'resource']);
    assert.equal(image.content[0].mimeType, 'image/png');
    assert.equal(Buffer.from(image.content[0].data, 'base64').subarray(1, 4).toString(), 'PNG');
    assert.equal(typeof image.content[1].uri, 'string');
    assert.equal(image.content[2].resource.text, 'an embedded note');
    const unknown = await client.call('tools/call', { name: 'nope', arguments: {} });
    assert.equal(unknown.json.error.code, -32602);
    assert.equal((await client.call('resources/list')).json.error.code, -32601);
    assert.deepEqual((await client.call('ping')).json.result, {});
  });

  test('slow sends progress on the SSE stream when asked', async () => {
    const answer = await client.call('tools/call', { name: 'slow', arguments: { ms: 250 }, _meta: { progressToken: 'tok' } });
    assert.match(answer.type, /^text\/event-stream/);
    const progress = answer.messages.filter((m) => m.method === 'notifications/progress');
    assert.ok(progress.length >= 2, `${progress.length} progress notifications`);
    assert.ok(progress.every((m) => m.params.progressToken === 'tok' && m.params.total === 250));
    const values = progress.map((m) => m.params.progress);
    assert.deepEqual(values, [...values].sort((x, y) => x - y));
    assert.equal(new Set(values).size, values.length, 'progress increases');
    assert.deepEqual(answer.json.result, { content: [{ type: 'text', text: 'waited 250 ms' }] });
  });

  test('slow honours notifications/cancelled: the stream ends without an answer', async () => {
    const started = Date.now();
    const response = await post(mcp, {
      jsonrpc: '2.0', id: 'cancel-me', method: 'tools/call', params: { name: 'slow', arguments: { ms: 10000 }, _meta: { progressToken: 1 } },
    }, { session: client.session });
    const items = sseItems(response);
    const first = await nextItem(items);
    assert.equal(JSON.parse(first.data).method, 'notifications/progress');
    const note = await post(mcp, {
      jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'cancel-me', reason: 'test' },
    }, { session: client.session });
    assert.equal(note.status, 202);
    const rest = [];
    for (let item = await nextItem(items); item !== null; item = await nextItem(items)) {
      assert.notEqual(item, 'timeout');
      rest.push(item);
    }
    assert.ok(messagesOf(rest).every((m) => m.method === 'notifications/progress'), 'no answer');
    // Ended by the cancel, not by the 10 s call (a loaded machine may add seconds).
    assert.ok(Date.now() - started < 8000);
    const record = server.cancellations().find((c) => c.requestId === 'cancel-me');
    assert.deepEqual({ ...record, time: 0 }, {
      sessionId: client.session, requestId: 'cancel-me', reason: 'test', found: true, method: 'tools/call', time: 0,
    });
  });

  test('a cancelled JSON-mode call ends its POST too', async () => {
    const pending = rpc(mcp, { jsonrpc: '2.0', id: 77, method: 'tools/call', params: { name: 'slow', arguments: { ms: 10000 } } },
      { session: client.session });
    // Cancelled once the server has the call under way (cancelled before, it would run its 10 s).
    for (const deadline = Date.now() + 30_000; !server.sessions().some((s) => s.id === client.session && s.inflight.length > 0);) {
      if (Date.now() > deadline) throw new Error('the call never began');
      await new Promise((done) => setTimeout(done, 10));
    }
    await post(mcp, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 77 } }, { session: client.session });
    const answer = await pending;
    assert.equal(answer.status, 200);
    assert.deepEqual(answer.messages, []);
  });

  test('list_changed on the GET stream; a second GET is 409; descriptions change', async () => {
    const other = await connect(mcp);
    const headers = { accept: 'text/event-stream', 'mcp-session-id': other.session, 'mcp-protocol-version': other.version };
    const controller = new AbortController();
    try {
      const stream = await fetch(mcp, { headers, signal: controller.signal });
      assert.equal(stream.status, 200);
      assert.match(stream.headers.get('content-type'), /^text\/event-stream/);
      const second = await fetch(mcp, { headers });
      assert.equal(second.status, 409);
      await second.text();
      assert.equal((await fetch(mcp, { headers: { accept: 'text/event-stream' } })).status, 400);
      const items = sseItems(stream);
      server.setToolDescription('add', 'changed after approval');
      assert.ok(server.notifyToolsChanged() >= 1);
      const item = await nextItem(items);
      assert.deepEqual(JSON.parse(item.data), { jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      const list = await other.call('tools/list');
      assert.equal(list.json.result.tools.find((t) => t.name === 'add').description, 'changed after approval');
      // DELETE ends the GET stream as well.
      await fetch(mcp, { method: 'DELETE', headers: { 'mcp-session-id': other.session } });
      assert.equal(await nextItem(items), null);
    } finally {
      controller.abort();
      server.setToolDescription('add', 'Adds two numbers.');
    }
  });
});

describe('pagination', () => {
  let many;
  before(async () => {
    many = await startMcpServer({ tools: 'many', pageSize: 50 });
  });
  after(() => many.close());

  test('1000 extra tools in pages of 50: 21 pages, unique names, opaque cursors', async () => {
    const client = await connect(`${many.url}/mcp`);
    const names = [];
    let cursor;
    let pages = 0;
    do {
      const answer = await client.call('tools/list', cursor === undefined ? undefined : { cursor });
      assert.equal(answer.status, 200);
      const { tools, nextCursor } = answer.json.result;
      pages += 1;
      assert.ok(tools.length <= 50);
      if (nextCursor !== undefined) {
        assert.equal(tools.length, 50);
        assert.equal(typeof nextCursor, 'string');
      }
      names.push(...tools.map((t) => t.name));
      cursor = nextCursor;
    } while (cursor !== undefined && pages < 100);
    assert.equal(pages, 21);
    assert.equal(names.length, 1008);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.includes('tool_0000') && names.includes('tool_0999'));
    const bad = await client.call('tools/list', { cursor: 'not-a-cursor' });
    assert.equal(bad.json.error.code, -32602);
  });
});

describe('misbehaviour', () => {
  test('malformed: the answer is not JSON (initialize still works)', async () => {
    const endpoint = `${server.url}/s/malformed/mcp`;
    const client = await connect(endpoint);
    const answer = await client.call('tools/list');
    assert.equal(answer.status, 200);
    assert.throws(() => JSON.parse(answer.text));
    // Over SSE, the data line is not JSON.
    const sse = await connect(`${server.url}/s/malformed+sse/mcp`);
    const response = await post(`${server.url}/s/malformed+sse/mcp`, { jsonrpc: '2.0', id: 3, method: 'ping' }, { session: sse.session });
    const items = await allItems(response);
    assert.equal(items.length, 1);
    assert.throws(() => JSON.parse(items[0].data));
    // Only one method, when asked.
    const one = await connect(`${server.url}/s/callOnlyMalformed/mcp`);
    assert.equal((await one.call('tools/list')).status, 200);
    assert.equal((await one.call('tools/call', { name: 'add', arguments: { a: 1, b: 1 } })).json, undefined);
  });

  test('wrongId: the answer carries another id', async () => {
    const client = await connect(`${server.url}/s/wrongId/mcp`);
    const answer = await rpc(`${server.url}/s/wrongId/mcp`, { jsonrpc: '2.0', id: 41, method: 'tools/list' }, { session: client.session });
    assert.equal(answer.json.id, 1041);
    assert.ok(answer.json.result.tools);
    const named = await rpc(`${server.url}/s/wrongId/mcp`, { jsonrpc: '2.0', id: 'x', method: 'ping' }, { session: client.session });
    assert.equal(named.json.id, 'x-wrong');
  });

  test('endless: pings every 100 ms, never the answer; ends when the client goes', async () => {
    const endpoint = `${server.url}/s/endless/mcp`;
    const client = await connect(endpoint);
    const controller = new AbortController();
    const response = await post(endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
      { session: client.session, signal: controller.signal });
    assert.match(response.headers.get('content-type'), /^text\/event-stream/);
    const items = sseItems(response);
    // Three items, whatever the machine's speed: all pings, none the answer.
    const seen = [];
    while (seen.length < 3) seen.push(await nextItem(items));
    assert.ok(seen.every((item) => item.comment === 'ping'));
    controller.abort();
    await assert.rejects(nextItem(items));
  });

  test('slowStream: true puts 2 s before an event', async () => {
    const started = Date.now();
    const answer = await rpc(`${server.url}/s/slowStream/mcp`, initializeMessage());
    const took = Date.now() - started;
    assert.match(answer.type, /^text\/event-stream/);
    // At least the 2 s asked for; the upper bound only against a stream that never answers.
    assert.ok(took >= 1900 && took < 15_000, `took ${took} ms`);
    assert.equal(answer.json.result.protocolVersion, '2025-11-25');
  });

  test('slowStream: N spaces every event N ms apart', async () => {
    const endpoint = `${server.url}/s/quick/mcp`;
    const client = await connect(endpoint);
    const response = await post(endpoint, {
      jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'slow', arguments: { ms: 150 }, _meta: { progressToken: 'q' } },
    }, { session: client.session });
    const times = [];
    for await (const item of sseItems(response)) if (item.data) times.push(Date.now());
    assert.ok(times.length >= 2);
    for (let i = 1; i < times.length; i += 1) assert.ok(times[i] - times[i - 1] >= 280, `gap ${times[i] - times[i - 1]} ms`);
  });

  test('oversized: a text result of exactly N bytes', async () => {
    const client = await connect(`${server.url}/s/big/mcp`);
    const result = await toolResult(client, 'add', { a: 1, b: 2 });
    assert.equal(Buffer.byteLength(result.content[0].text), 1_000_000);
  });

  test('oddSessionId: spaces and a tab inside the id', async () => {
    const endpoint = `${server.url}/s/oddSessionId/mcp`;
    const answer = await rpc(endpoint, initializeMessage());
    const id = answer.headers.get('mcp-session-id');
    assert.match(id, / /);
    assert.match(id, /\t/);
    assert.doesNotMatch(id, VISIBLE_ASCII);
    // The odd id works when sent back verbatim.
    const list = await rpc(endpoint, { jsonrpc: '2.0', id: 2, method: 'ping' }, { session: id });
    assert.equal(list.status, 200);
  });

  test("oddSessionId: 'control' puts control characters in the header (raw socket)", async () => {
    const { port } = new URL(server.url);
    const body = JSON.stringify(initializeMessage());
    const raw = await new Promise((done, fail) => {
      const socket = netConnect(Number(port), '127.0.0.1');
      let data = '';
      socket.setEncoding('latin1');
      socket.on('data', (part) => { data += part; });
      socket.on('end', () => done(data));
      socket.on('error', fail);
      socket.write(`POST /s/controlId/mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\naccept: ${ACCEPT}\r\n`
        + `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
    });
    const header = /^mcp-session-id: (.*)$/im.exec(raw)[1];
    assert.ok(header.includes('\x01') && header.includes('\x7f') && header.includes(' '));
    assert.match(raw, /"protocolVersion":"2025-11-25"/);
  });

  test('redirect: POSTs get 307 with ?token=; following is recorded with its headers', async () => {
    const endpoint = `${server.url}/s/redirect~manual/mcp`;
    const first = await post(endpoint, initializeMessage(), { redirect: 'manual', headers: { authorization: 'Bearer sekret' } });
    assert.equal(first.status, 307);
    const location = first.headers.get('location');
    assert.match(location, /\/redirected\/s\/redirect~manual\/mcp\?token=/);
    assert.equal(new URL(location).origin, server.url);
    assert.equal(server.redirects().find((r) => r.location === location).followed, false);
    // fetch follows a 307 by itself, body and all.
    const followed = await rpc(`${server.url}/s/redirect~auto/mcp`, initializeMessage(), { headers: { authorization: 'Bearer sekret' } });
    assert.equal(followed.status, 200);
    const issued = server.redirects().find((r) => r.from === '/s/redirect~auto/mcp');
    assert.equal(issued.followed, true);
    assert.equal(issued.followedRequests[0].method, 'POST');
    assert.equal(issued.followedRequests[0].body.method, 'initialize');
    assert.equal(issued.followedRequests[0].headers.authorization, 'Bearer sekret', 'fetch keeps it on a same-origin redirect');
    // The session works through further redirects.
    const session = followed.headers.get('mcp-session-id');
    const list = await rpc(`${server.url}/s/redirect~auto/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { session });
    assert.equal(list.status, 200);
    assert.ok(server.requests({ behaviour: 'redirect~auto' }).some((r) => r.followedRedirect));
  });

  test('sampling and elicitation: requests on the POST stream before the answer', async () => {
    const endpoint = `${server.url}/s/asker/mcp`;
    const client = await connect(endpoint, { capabilities: { sampling: {}, elicitation: {} } });
    const response = await post(endpoint, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 2 } } },
      { session: client.session });
    const items = sseItems(response);
    const sampling = JSON.parse((await nextItem(items)).data);
    assert.equal(sampling.method, 'sampling/createMessage');
    assert.ok(sampling.params.messages.length >= 1 && sampling.params.maxTokens > 0);
    const samplingAnswer = { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'test-model', stopReason: 'endTurn' };
    assert.equal((await post(endpoint, { jsonrpc: '2.0', id: sampling.id, result: samplingAnswer }, { session: client.session })).status, 202);
    const elicitation = JSON.parse((await nextItem(items)).data);
    assert.equal(elicitation.method, 'elicitation/create');
    assert.equal(elicitation.params.mode, 'form');
    assert.equal(elicitation.params.requestedSchema.type, 'object');
    await post(endpoint, { jsonrpc: '2.0', id: elicitation.id, result: { action: 'accept', content: { name: 'Ada' } } }, { session: client.session });
    const final = JSON.parse((await nextItem(items)).data);
    assert.deepEqual(final, { jsonrpc: '2.0', id: 2, result: { content: [{ type: 'text', text: '2 + 2 = 4' }] } });
    assert.equal(await nextItem(items), null);
    const recorded = server.clientAnswers().filter((a) => a.sessionId === client.session);
    assert.deepEqual(recorded.map((a) => [a.method, a.answered]), [['sampling/createMessage', true], ['elicitation/create', true]]);
    assert.deepEqual(recorded[0].result, samplingAnswer);
    assert.deepEqual(recorded[1].result, { action: 'accept', content: { name: 'Ada' } });
  });

  test('an unanswered elicitation times out and the call goes on', async () => {
    const client = await connect(`${server.url}/s/elicitOnly/mcp`);
    const answer = await client.call('tools/call', { name: 'no_hints', arguments: {} });
    assert.deepEqual(answer.messages.map((m) => m.method ?? 'answer'), ['elicitation/create', 'answer']);
    assert.equal(server.clientAnswers().find((a) => a.sessionId === client.session).answered, false);
  });

  test('expireSession: the first request after initialize gets 404 once', async () => {
    const endpoint = `${server.url}/s/expireSession~one/mcp`;
    const client = await connect(endpoint); // notifications/initialized is not a request: 202
    assert.equal((await client.call('tools/list')).status, 404);
    assert.equal((await client.call('tools/list')).status, 404, 'that session stays gone');
    const again = await connect(endpoint);
    assert.equal((await again.call('tools/list')).status, 200);
    assert.equal(server.sessions().find((s) => s.id === client.session).ended, 'expired');
  });

  test('unauthorized: 401 with WWW-Authenticate and resource metadata', async () => {
    const answer = await rpc(`${server.url}/s/unauthorized/mcp`, initializeMessage());
    assert.equal(answer.status, 401);
    const challenge = answer.headers.get('www-authenticate');
    const metadata = /^Bearer resource_metadata="([^"]+)"$/.exec(challenge)[1];
    const document = await (await fetch(metadata)).json();
    assert.equal(document.resource, `${server.url}/s/unauthorized/mcp`);
    // With a token configured, the right bearer passes.
    assert.equal((await rpc(`${server.url}/s/tokened/mcp`, initializeMessage())).status, 401);
    const ok = await rpc(`${server.url}/s/tokened/mcp`, initializeMessage(), { headers: { authorization: 'Bearer secret' } });
    assert.equal(ok.status, 200);
  });

  test('setBehaviour changes the default endpoint', async () => {
    const other = await startMcpServer();
    try {
      const client = await connect(`${other.url}/mcp`);
      other.setBehaviour({ wrongId: true });
      assert.equal((await rpc(`${other.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { session: client.session })).json.id, 1001);
      other.setBehaviour({});
      assert.equal((await rpc(`${other.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' }, { session: client.session })).json.id, 1);
      assert.throws(() => other.setBehaviour({ nonsense: true }), /unknown key/);
      other.reset();
      assert.equal(other.requests().length, 0);
    } finally {
      await other.close();
    }
  });

  test('close() ends an endless stream at once', async () => {
    const other = await startMcpServer({ behaviour: { endless: true } });
    const client = await connect(`${other.url}/mcp`);
    const response = await post(`${other.url}/mcp`, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'no_hints' } },
      { session: client.session });
    const items = sseItems(response);
    assert.deepEqual(await nextItem(items), { comment: 'ping' });
    const started = Date.now();
    await other.close();
    await nextItem(items).catch(() => null); // a broken connection or the end: either way, over
    // Ended by close(), not by nextItem's 10 s wait on a stream that goes on.
    assert.ok(Date.now() - started < 5000);
  });
});

test('CLI prints the base URL', async () => {
  const child = spawn(process.execPath, [join(HERE, 'mcp-server.mjs'), '--port', '0', '--tools', 'many'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const base = await new Promise((done, fail) => {
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (part) => {
        out += part;
        if (out.includes('\n')) done(out.split('\n')[0]);
      });
      child.once('exit', (code) => fail(new Error(`exited with ${code}`)));
    });
    assert.match(base, /^http:\/\/127\.0\.0\.1:\d+$/);
    const client = await connect(`${base}/mcp`);
    const list = await client.call('tools/list');
    assert.ok(list.json.result.nextCursor, 'many tools: more than one page');
  } finally {
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  }
});
