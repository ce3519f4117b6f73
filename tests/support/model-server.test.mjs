// Checks the scripted model server against the wire formats of the three APIs it imitates.
// Run: node --test tests/support/model-server.test.mjs
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadScenarios, startModelServer } from './model-server.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const FIXTURES = resolve(HERE, '..', 'fixtures', 'models');

// --- A small SSE reader of our own -------------------------------------------------------------

/**
 * Reads a response body as Server-Sent Events (LF, CRLF or CR line ends). Resolves to
 * `{ events: [{event, data}], raw, error }`; `error` is set when the connection broke.
 */
async function readSse(response) {
  const events = [];
  let raw = '';
  let error = null;
  let buffer = '';
  let event = null;
  let data = [];
  const line = (text) => {
    if (text === '') {
      if (data.length) events.push({ event: event ?? 'message', data: data.join('\n') });
      event = null;
      data = [];
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon < 0 ? text : text.slice(0, colon);
    let value = colon < 0 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  };
  const drain = (final) => {
    for (;;) {
      const at = buffer.search(/[\r\n]/);
      if (at < 0) break;
      if (buffer[at] === '\r' && at === buffer.length - 1 && !final) break; // maybe CR LF split
      const width = buffer[at] === '\r' && buffer[at + 1] === '\n' ? 2 : 1;
      line(buffer.slice(0, at));
      buffer = buffer.slice(at + width);
    }
  };
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      raw += text;
      buffer += text;
      drain(false);
    }
  } catch (caught) {
    error = caught;
  }
  drain(true);
  return { events, raw, error };
}

const json = (event) => JSON.parse(event.data);

// --- One client per API: request, then reassemble what came back -----------------------------

const CLIENTS = {
  openai: {
    async send(base, { headers = {}, body = {}, signal } = {}) {
      return fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        signal,
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', ...headers },
        body: JSON.stringify({ model: 'gpt-test', stream: true, messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
    },
    assemble({ events }) {
      let text = '';
      let finish = null;
      let done = false;
      let streamError = null;
      const calls = [];
      for (const e of events) {
        if (e.data === '[DONE]') { done = true; continue; }
        const chunk = json(e);
        if (chunk.error) { streamError = chunk.error; continue; }
        assert.equal(chunk.object, 'chat.completion.chunk');
        const choice = chunk.choices[0];
        if (!choice) continue;
        if (choice.delta.content) text += choice.delta.content;
        for (const t of choice.delta.tool_calls ?? []) {
          calls[t.index] ??= { id: undefined, name: '', arguments: '' };
          if (t.id) calls[t.index].id = t.id;
          if (t.function?.name) calls[t.index].name += t.function.name;
          if (t.function?.arguments) calls[t.index].arguments += t.function.arguments;
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
      return { text, calls, finish, done, streamError };
    },
    finish: { stop: 'stop', length: 'length', calls: 'tool_calls' },
  },
  anthropic: {
    async send(base, { headers = {}, body = {} } = {}) {
      return fetch(`${base}/v1/messages`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01',
          'anthropic-dangerous-direct-browser-access': 'true', ...headers,
        },
        body: JSON.stringify({ model: 'claude-test', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }], ...body }),
      });
    },
    assemble({ events }) {
      const blocks = [];
      let finish = null;
      let done = false;
      let streamError = null;
      for (const e of events) {
        const data = json(e);
        assert.equal(data.type, e.event, 'the event name and the data type agree');
        if (e.event === 'content_block_start') blocks[data.index] = { ...data.content_block, json: '' };
        if (e.event === 'content_block_delta') {
          if (data.delta.type === 'text_delta') blocks[data.index].text += data.delta.text;
          else if (data.delta.type === 'input_json_delta') blocks[data.index].json += data.delta.partial_json;
        }
        if (e.event === 'message_delta') finish = data.delta.stop_reason;
        if (e.event === 'message_stop') done = true;
        if (e.event === 'error') streamError = data.error;
      }
      return {
        text: blocks.filter((b) => b.type === 'text').map((b) => b.text).join(''),
        calls: blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: b.id, name: b.name, arguments: b.json })),
        finish, done, streamError,
      };
    },
    finish: { stop: 'end_turn', length: 'max_tokens', calls: 'tool_use' },
  },
  gemini: {
    async send(base, { headers = {}, body = {} } = {}) {
      return fetch(`${base}/v1beta/models/gemini-test:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': 'AIza-test', ...headers },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }], ...body }),
      });
    },
    assemble({ events }) {
      let text = '';
      let finish = null;
      let streamError = null;
      const calls = [];
      for (const e of events) {
        const data = json(e);
        if (data.error) { streamError = data.error; continue; }
        const candidate = data.candidates[0];
        for (const part of candidate.content.parts) {
          if (part.text !== undefined) text += part.text;
          if (part.functionCall) {
            const args = part.functionCall.args;
            calls.push({ id: part.functionCall.id, name: part.functionCall.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) });
          }
        }
        if (candidate.finishReason) finish = candidate.finishReason;
      }
      // Gemini has no end marker: the response carrying finishReason is the last one.
      return { text, calls, finish, done: finish !== null, streamError };
    },
    finish: { stop: 'STOP', length: 'MAX_TOKENS', calls: 'STOP' },
  },
};

// --- Tests ---------------------------------------------------------------------------------------

const TEXT = 'Hello, wörld! Ünïcode 🙂 survives chunking.';
let server;
let seq = 0;
/** A fresh `~suffix` name: its own step counter. */
const fresh = (name) => `${name}~t${++seq}`;
const baseOf = (name) => `${server.url}/s/${name}`;

before(async () => {
  server = await startModelServer({
    scenarios: {
      text: { steps: [{ text: TEXT, chunk: 3 }] },
      calls: {
        steps: [{
          text: 'Checking.',
          calls: [
            { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } },
            { id: 'fixed_id_1', name: 'list_tabs', arguments: {} },
          ],
        }],
      },
      broken: { steps: [{ calls: [{ name: 'get_weather', arguments: '{"city": "Par' }] }] },
      length: { steps: [{ text: 'Cut short by the', finish: 'length' }] },
      limited: { steps: [{ status: 429, headers: { 'retry-after': '1' } }, { text: 'ok after retry' }] },
      custom: { steps: [{ status: 403, body: 'no access for you' }, { status: 500, body: { whatever: true } }] },
      truncate: { steps: [{ text: 'This stream is cut off half-way through, before its end.', truncate: true }] },
      malformed: { steps: [{ text: 'abcdefghijklmnopqrst', malformed: true }] },
      midError: { steps: [{ text: 'abcdefghijklmnopqrst', midStreamError: 'Overloaded, try later' }] },
      pings: { steps: [{ text: 'abcdefghij', ping: true }] },
      seq: { steps: [{ text: 'first' }, { text: 'second' }, { text: 'third' }] },
      repeat: { steps: [{ text: 'one' }, { text: 'again' }], after: 'repeat' },
      slow: { steps: [{ text: 'abcdef', chunk: 2, delayMs: 30, firstByteDelayMs: 60 }] },
    },
  });
});
after(() => server.close());

for (const [api, client] of Object.entries(CLIENTS)) {
  describe(api, () => {
    test('text streams as deltas and reassembles', async () => {
      const response = await client.send(baseOf(fresh('text')));
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type'), /^text\/event-stream/);
      assert.equal(response.headers.get('access-control-allow-origin'), '*');
      const sse = await readSse(response);
      assert.equal(sse.error, null);
      const out = client.assemble(sse);
      assert.equal(out.text, TEXT);
      assert.equal(out.finish, client.finish.stop);
      assert.equal(out.done, true);
      assert.ok(sse.events.length > 10, 'many small events');
    });

    test('native tool calls with object arguments, after text', async () => {
      const out = client.assemble(await readSse(await client.send(baseOf(fresh('calls')))));
      assert.equal(out.text, 'Checking.');
      assert.equal(out.finish, client.finish.calls);
      assert.equal(out.calls.length, 2);
      assert.equal(out.calls[0].name, 'get_weather');
      assert.deepEqual(JSON.parse(out.calls[0].arguments), { city: 'Paris', unit: 'celsius' });
      assert.equal(out.calls[1].name, 'list_tabs');
      // Anthropic streams an empty input as nothing but an empty fragment.
      assert.deepEqual(JSON.parse(out.calls[1].arguments || '{}'), {});
      if (api !== 'gemini') assert.ok(out.calls[0].id, 'a generated id');
      assert.equal(out.calls[1].id, 'fixed_id_1');
    });

    test('native tool call with broken raw arguments', async () => {
      const sse = await readSse(await client.send(baseOf(fresh('broken'))));
      const out = client.assemble(sse);
      assert.equal(out.calls.length, 1);
      assert.equal(out.calls[0].name, 'get_weather');
      assert.equal(out.calls[0].arguments, '{"city": "Par');
      assert.throws(() => JSON.parse(out.calls[0].arguments));
      if (api === 'gemini') {
        // args is an object on Gemini's wire, so the broken text travels as a JSON string.
        assert.ok(sse.raw.includes('"args":"{\\"city\\": \\"Par"'));
      }
    });

    test('finish length', async () => {
      const out = client.assemble(await readSse(await client.send(baseOf(fresh('length')))));
      assert.equal(out.text, 'Cut short by the');
      assert.equal(out.finish, client.finish.length);
    });

    test('error status with retry-after, then the next step', async () => {
      const name = fresh('limited');
      const response = await client.send(baseOf(name));
      assert.equal(response.status, 429);
      assert.equal(response.headers.get('retry-after'), '1');
      assert.equal(response.headers.get('access-control-expose-headers'), '*');
      const body = await response.json();
      if (api === 'openai') assert.equal(body.error.code, 'rate_limit_exceeded');
      if (api === 'anthropic') {
        assert.equal(body.type, 'error');
        assert.equal(body.error.type, 'rate_limit_error');
      }
      if (api === 'gemini') {
        assert.equal(body.error.code, 429);
        assert.equal(body.error.status, 'RESOURCE_EXHAUSTED');
      }
      const out = client.assemble(await readSse(await client.send(baseOf(name))));
      assert.equal(out.text, 'ok after retry');
    });

    test('error body: a string is the message, an object is sent verbatim', async () => {
      const name = fresh('custom');
      const first = await client.send(baseOf(name));
      assert.equal(first.status, 403);
      const body = await first.json();
      assert.equal((body.error ?? {}).message, 'no access for you');
      const second = await client.send(baseOf(name));
      assert.equal(second.status, 500);
      assert.deepEqual(await second.json(), { whatever: true });
    });

    test('truncate: the connection breaks before the final event', async () => {
      const sse = await readSse(await client.send(baseOf(fresh('truncate'))));
      assert.ok(sse.error, 'the body stream errors');
      const out = client.assemble(sse);
      assert.equal(out.done, false);
      assert.equal(out.finish, null);
      assert.ok(out.text.length > 0, 'some text arrived');
      assert.ok(out.text.length < 'This stream is cut off half-way through, before its end.'.length);
      if (api === 'openai') assert.ok(!sse.raw.includes('[DONE]'));
      if (api === 'anthropic') assert.ok(!sse.raw.includes('message_stop'));
    });

    test('malformed: one data line is not JSON, the stream still ends normally', async () => {
      const sse = await readSse(await client.send(baseOf(fresh('malformed'))));
      assert.equal(sse.error, null);
      const bad = sse.events.filter((e) => { try { JSON.parse(e.data); return false; } catch { return e.data !== '[DONE]'; } });
      assert.equal(bad.length, 1);
      const good = { ...sse, events: sse.events.filter((e) => !bad.includes(e)) };
      const out = client.assemble(good);
      assert.equal(out.text, 'abcdefghijklmnopqrst');
      assert.equal(out.done, true);
    });

    test('midStreamError: an in-stream error and no final event', async () => {
      const sse = await readSse(await client.send(baseOf(fresh('midError'))));
      assert.equal(sse.error, null, 'the stream ends cleanly');
      const out = client.assemble(sse);
      assert.equal(out.done, false);
      assert.equal(out.streamError.message, 'Overloaded, try later');
      if (api === 'anthropic') {
        assert.equal(sse.events.at(-1).event, 'error');
        assert.equal(out.streamError.type, 'overloaded_error');
      }
      // Half of the deltas: Gemini's last text piece rides on its final response, so it has one less.
      assert.equal(out.text, api === 'gemini' ? 'abcde' : 'abcdefghij');
    });

    test('steps advance per request, independently per ~suffix', async () => {
      const a = fresh('seq');
      const b = fresh('seq');
      const textOf = async (name) => client.assemble(await readSse(await client.send(baseOf(name)))).text;
      assert.equal(await textOf(a), 'first');
      assert.equal(await textOf(a), 'second');
      assert.equal(await textOf(b), 'first');
      assert.equal(await textOf(a), 'third');
      const past = await client.send(baseOf(a));
      assert.equal(past.status, 500);
      const message = JSON.stringify(await past.json());
      assert.match(message, /past the end/);
      assert.match(message, /seq~t\d+/);
      assert.equal(await textOf(b), 'second');
      const r = fresh('repeat');
      assert.equal(await textOf(r), 'one');
      assert.equal(await textOf(r), 'again');
      assert.equal(await textOf(r), 'again');
    });

    test('requests are recorded with lowercased headers and parsed bodies', async () => {
      const name = fresh('text');
      await readSse(await client.send(baseOf(name), { headers: { 'X-Test-Marker': api } }));
      const [record] = server.requests({ scenario: name });
      assert.equal(record.method, 'POST');
      assert.equal(record.api, api);
      assert.equal(record.step, 0);
      assert.equal(record.headers['x-test-marker'], api);
      assert.ok(record.path.startsWith(`/s/${name}/`));
      if (api === 'openai') {
        assert.equal(record.headers.authorization, 'Bearer sk-test');
        assert.equal(record.body.model, 'gpt-test');
      }
      if (api === 'anthropic') {
        assert.equal(record.headers['x-api-key'], 'sk-ant-test');
        assert.equal(record.headers['anthropic-version'], '2023-06-01');
      }
      if (api === 'gemini') {
        assert.equal(record.headers['x-goog-api-key'], 'AIza-test');
        assert.equal(record.query.alt, 'sse');
        assert.equal(record.body.contents[0].parts[0].text, 'hi');
      }
      const viaHttp = await (await fetch(`${server.url}/_requests?scenario=${encodeURIComponent(name)}`)).json();
      assert.deepEqual(viaHttp, [record]);
    });

    test('delays: first byte and between chunks', async () => {
      const started = Date.now();
      const response = await client.send(baseOf(fresh('slow')));
      assert.ok(Date.now() - started >= 50, 'headers wait for firstByteDelayMs');
      const out = client.assemble(await readSse(response));
      assert.equal(out.text, 'abcdef');
      assert.ok(Date.now() - started >= 100, 'chunks are spaced by delayMs');
    });
  });
}

describe('wire details', () => {
  test('OpenAI: first chunk has the role, last chunk empty delta; usage when asked', async () => {
    const sse = await readSse(await CLIENTS.openai.send(baseOf(fresh('text')), { body: { stream_options: { include_usage: true } } }));
    assert.equal(sse.events.at(-1).data, '[DONE]');
    const chunks = sse.events.slice(0, -1).map(json);
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '', refusal: null });
    const usage = chunks.at(-1);
    assert.deepEqual(usage.choices, []);
    assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + usage.usage.completion_tokens);
    const finish = chunks.at(-2);
    assert.deepEqual(finish.choices[0].delta, {});
    assert.equal(finish.choices[0].finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.id === chunks[0].id));
  });

  test('OpenAI: a tool call opens with id, type, name and empty arguments', async () => {
    const sse = await readSse(await CLIENTS.openai.send(baseOf(fresh('broken'))));
    const calls = sse.events.slice(0, -1).map(json).flatMap((c) => c.choices[0].delta.tool_calls ?? []);
    assert.deepEqual(calls[0], { index: 0, id: 'call_s0x0', type: 'function', function: { name: 'get_weather', arguments: '' } });
    assert.deepEqual(Object.keys(calls[1]), ['index', 'function']);
  });

  test('Anthropic: event order, ping after the first block start, empty first input fragment', async () => {
    const sse = await readSse(await CLIENTS.anthropic.send(baseOf(fresh('calls'))));
    const names = sse.events.map((e) => e.event);
    assert.equal(names[0], 'message_start');
    assert.deepEqual(names.slice(1, 3), ['content_block_start', 'ping']);
    assert.deepEqual(names.slice(-2), ['message_delta', 'message_stop']);
    assert.equal(names.filter((n) => n === 'ping').length, 1);
    const starts = sse.events.filter((e) => e.event === 'content_block_start').map(json);
    assert.deepEqual(starts[1].content_block, { type: 'tool_use', id: 'toolu_s0x0', name: 'get_weather', input: {} });
    const firstToolDelta = sse.events.map(json).find((d) => d.type === 'content_block_delta' && d.index === 1);
    assert.deepEqual(firstToolDelta.delta, { type: 'input_json_delta', partial_json: '' });
    const start = json(sse.events[0]).message;
    assert.equal(start.model, 'claude-test');
    assert.deepEqual(start.content, []);
    assert.ok(start.id.startsWith('msg_'));
  });

  test('Anthropic: ping: true interleaves pings between deltas', async () => {
    const sse = await readSse(await CLIENTS.anthropic.send(baseOf(fresh('pings'))));
    const names = sse.events.map((e) => e.event);
    const deltas = names.filter((n) => n === 'content_block_delta').length;
    assert.equal(deltas, 2);
    assert.equal(names.filter((n) => n === 'ping').length, deltas);
    assert.equal(CLIENTS.anthropic.assemble(sse).text, 'abcdefghij');
  });

  test('Gemini: events end with CRLF CRLF; the last carries finishReason and usage', async () => {
    const sse = await readSse(await CLIENTS.gemini.send(baseOf(fresh('text'))));
    assert.ok(sse.raw.endsWith('}\r\n\r\n'));
    assert.ok(!/[^\r]\n/.test(sse.raw), 'every LF is part of a CRLF');
    const responses = sse.events.map(json);
    assert.ok(responses.slice(0, -1).every((r) => r.candidates[0].finishReason === undefined));
    const last = responses.at(-1);
    assert.equal(last.candidates[0].finishReason, 'STOP');
    assert.equal(last.candidates[0].content.role, 'model');
    assert.equal(last.modelVersion, 'gemini-test');
    assert.ok(last.usageMetadata.candidatesTokenCount > 0);
  });

  test('Gemini: without alt=sse the stream is one JSON array', async () => {
    const response = await fetch(`${baseOf(fresh('text'))}/v1beta/models/gemini-test:streamGenerateContent`, { method: 'POST', body: '{}' });
    const array = await response.json();
    assert.ok(Array.isArray(array));
    assert.equal(array.map((r) => r.candidates[0].content.parts[0].text).join(''), TEXT);
  });

  test('non-streamed requests get one whole response', async () => {
    const openai = await (await CLIENTS.openai.send(baseOf(fresh('calls')), { body: { stream: false } })).json();
    assert.equal(openai.object, 'chat.completion');
    assert.equal(openai.choices[0].finish_reason, 'tool_calls');
    assert.equal(openai.choices[0].message.tool_calls[0].function.arguments, '{"city":"Paris","unit":"celsius"}');
    const anthropic = await (await CLIENTS.anthropic.send(baseOf(fresh('calls')), { body: { stream: false } })).json();
    assert.equal(anthropic.type, 'message');
    assert.equal(anthropic.stop_reason, 'tool_use');
    assert.deepEqual(anthropic.content[1].input, { city: 'Paris', unit: 'celsius' });
    const gemini = await (await fetch(`${baseOf(fresh('text'))}/v1beta/models/g:generateContent`, { method: 'POST', body: '{}' })).json();
    assert.equal(gemini.candidates[0].content.parts[0].text, TEXT);
  });
});

describe('server', () => {
  test('OPTIONS preflight answers CORS for the headers asked for', async () => {
    const asked = 'x-api-key,anthropic-version,anthropic-dangerous-direct-browser-access,x-goog-api-key,authorization,content-type';
    const response = await fetch(`${baseOf('text')}/v1/messages`, {
      method: 'OPTIONS',
      headers: {
        origin: 'chrome-extension://abcdefghijklmnop',
        'access-control-request-method': 'POST',
        'access-control-request-headers': asked,
        'access-control-request-private-network': 'true',
      },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), '*');
    assert.equal(response.headers.get('access-control-allow-headers'), asked);
    assert.match(response.headers.get('access-control-allow-methods'), /POST/);
    assert.equal(response.headers.get('access-control-allow-private-network'), 'true');
  });

  test('model lists in each API shape', async () => {
    const openai = await (await fetch(`${baseOf('text')}/v1/models`)).json();
    assert.equal(openai.object, 'list');
    assert.ok(openai.data.length > 0 && openai.data.every((m) => m.object === 'model'));
    const anthropic = await (await fetch(`${baseOf('text')}/v1/models`, { headers: { 'anthropic-version': '2023-06-01' } })).json();
    assert.equal(anthropic.data[0].type, 'model');
    assert.equal(anthropic.has_more, false);
    const gemini = await (await fetch(`${baseOf('text')}/v1beta/models`)).json();
    assert.ok(gemini.models[0].name.startsWith('models/'));
  });

  test('unknown scenario and unknown route give clear 404s', async () => {
    const unknown = await CLIENTS.openai.send(baseOf('nope'));
    assert.equal(unknown.status, 404);
    assert.match((await unknown.json()).error.message, /no scenario named "nope"/);
    const noRoute = await fetch(`${server.url}/elsewhere`);
    assert.equal(noRoute.status, 404);
    assert.match((await noRoute.json()).error.message, /no route/);
  });

  test('setScenario replaces a scenario and restarts its counters; invalid ones are refused', async () => {
    server.setScenario('dynamic', { steps: [{ text: 'v1' }] });
    const textOf = async () => CLIENTS.openai.assemble(await readSse(await CLIENTS.openai.send(baseOf('dynamic~x')))).text;
    assert.equal(await textOf(), 'v1');
    server.setScenario('dynamic', { steps: [{ text: 'v2' }] });
    assert.equal(await textOf(), 'v2');
    assert.throws(() => server.setScenario('bad', { steps: [{ txet: 'typo' }] }), /unknown key "txet"/);
    assert.throws(() => server.setScenario('bad', { steps: [] }), /non-empty/);
    assert.throws(() => server.setScenario('a~b', { steps: [{ text: 'x' }] }), /name/);
  });

  test('a client that goes away mid-stream does not break the server', async () => {
    server.setScenario('long', { steps: [{ text: 'x'.repeat(200), chunk: 1, delayMs: 5 }], after: 'repeat' });
    const response = await CLIENTS.anthropic.send(baseOf('long'));
    const reader = response.body.getReader();
    await reader.read();
    await reader.cancel();
    const again = await fetch(`${baseOf('text')}/v1/models`);
    assert.equal(again.status, 200);
  });

  test('reset clears the records and the counters', async () => {
    const other = await startModelServer({ scenarios: { seq: { steps: [{ text: 'first' }, { text: 'second' }] } } });
    try {
      const textOf = async () => CLIENTS.gemini.assemble(await readSse(await CLIENTS.gemini.send(`${other.url}/s/seq`))).text;
      assert.equal(await textOf(), 'first');
      assert.equal(other.requests().length, 1);
      other.reset();
      assert.equal(other.requests().length, 0);
      assert.equal(await textOf(), 'first');
      await fetch(`${other.url}/_reset`, { method: 'POST' });
      assert.equal(await textOf(), 'first');
    } finally {
      await other.close();
    }
  });

  test('a held step answers only once released; held() resolves when a request waits; a client that goes away frees it', async () => {
    const other = await startModelServer({ scenarios: { gate: { steps: [{ text: 'after', hold: 'h' }, { text: 'next', hold: 'g' }] } } });
    try {
      let answered = false;
      const first = CLIENTS.openai.send(`${other.url}/s/gate`).then((r) => { answered = true; return r; });
      await other.held('h');
      assert.equal(other.waiting('h'), 1);
      assert.equal(answered, false, 'nothing is sent while held');
      assert.equal(other.requests({ scenario: 'gate' }).length, 1, 'the request is recorded while it waits');
      await fetch(`${other.url}/_release/h`, { method: 'POST' });
      assert.equal(CLIENTS.openai.assemble(await readSse(await first)).text, 'after');
      // A client that gives up is let go: the server goes on serving.
      const abort = new AbortController();
      const second = CLIENTS.openai.send(`${other.url}/s/gate`, { signal: abort.signal }).catch((e) => e);
      await other.held('g');
      abort.abort();
      assert.equal((await second).name, 'AbortError');
      other.release('g');
      const models = await fetch(`${other.url}/s/gate/v1/models`);
      assert.equal(models.status, 200);
      assert.throws(() => other.setScenario('bad', { steps: [{ text: 'x', hold: '' }] }), /hold must be a non-empty string/);
      // Held midway: half of the stream sent, the rest once released.
      other.setScenario('mid', { steps: [{ text: 'abcdefgh', chunk: 1, holdMidway: 'm' }] });
      const response = await CLIENTS.openai.send(`${other.url}/s/mid`);
      const reading = readSse(response);
      await other.held('m');
      other.release('m');
      assert.equal(CLIENTS.openai.assemble(await reading).text, 'abcdefgh');
    } finally {
      await other.close();
    }
  });

  test('close() ends streams still under way', async () => {
    const other = await startModelServer({ scenarios: { long: { steps: [{ text: 'y'.repeat(100), chunk: 1, delayMs: 50 }] } } });
    const response = await CLIENTS.openai.send(`${other.url}/s/long`);
    const reading = readSse(response);
    await new Promise((r) => setTimeout(r, 120));
    await other.close();
    const sse = await reading;
    assert.ok(sse.error, 'the stream was cut');
  });
});

describe('scenario files and CLI', () => {
  test('loadScenarios reads every example file', async () => {
    const scenarios = await loadScenarios(FIXTURES);
    for (const name of ['basic', 'tool-call', 'broken-arguments', 'rate-limited', 'bad-key', 'length', 'truncated', 'slow']) {
      assert.ok(scenarios[name], name);
    }
    const s = await startModelServer({ scenarios });
    try {
      const out = CLIENTS.anthropic.assemble(await readSse(await CLIENTS.anthropic.send(`${s.url}/s/tool-call`)));
      assert.equal(out.calls[0].name, 'get_weather');
      const refused = await fetch(`${s.url}/s/bad-key/v1/models`);
      assert.equal(refused.status, 401);
    } finally {
      await s.close();
    }
  });

  test('the CLI prints its base URL and serves the scenarios', async () => {
    const child = spawn(process.execPath, [join(HERE, 'model-server.mjs'), '--port', '0', '--scenarios', FIXTURES], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise((resolveUrl, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          if (out.includes('\n')) resolveUrl(out.split('\n')[0].trim());
        });
        child.once('exit', (code) => reject(new Error(`CLI exited with ${code}`)));
      });
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      const out = CLIENTS.openai.assemble(await readSse(await CLIENTS.openai.send(`${url}/s/basic`)));
      assert.equal(out.text, 'Hello from the scripted model server. How can I help?');
    } finally {
      child.kill('SIGTERM');
    }
  });
});
