// The local model server's request checks (scripts/local-model/http.mjs), with a stub in the
// model's place: no GGUF is loaded, and every generation the server starts is counted. Each
// attack is what a web page (or a DNS-rebinding host name) could send to the server on
// 127.0.0.1; each must be refused before any generation. Run: node --test tests/local-model/
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from '../../scripts/local-model/http.mjs';
import { startServer } from '../../scripts/local-model/start.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

// The caps the server keeps (docs/local-models.md).
const MAX_TOKENS = 1024;
const MAX_BODY_BYTES = 256 * 1024;
const EXTENSION = 'chrome-extension://abcdefghijklmnopabcdefghijklmnop';
const MESSAGES = [{ role: 'user', content: 'Find a green tea.' }];

/** The headers without those set to `undefined` (left out). */
const clean = (headers) => Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined));

/** Sends one request (any headers, `Host` included); resolves to `{status, headers, text}`. */
function send(port, { method = 'POST', path = '/v1/chat/completions', headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers: clean(headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const corsHeaders = (headers) => Object.keys(headers).filter((h) => h.startsWith('access-control-'));

describe('the local model server answers only the host', () => {
  let served;
  const calls = [];
  before(async () => {
    served = await serve({
      modelId: 'stub',
      generate: async (asked) => {
        calls.push(asked);
        asked.onText('stub answer');
        return { text: 'stub answer', finish: 'stop', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
      },
    });
  });
  after(() => {
    served.server.closeAllConnections();
    return served.close();
  });
  beforeEach(() => {
    calls.length = 0;
  });

  /** What the extension sends: loopback Host, its own Origin, the token, JSON. */
  const host = (extra = {}) => ({
    host: `127.0.0.1:${served.port}`,
    origin: EXTENSION,
    authorization: `Bearer ${served.token}`,
    'content-type': 'application/json',
    ...extra,
  });
  const chat = (extra = {}) => JSON.stringify({ model: 'stub', messages: MESSAGES, ...extra });

  test('the extension\'s request is answered (streamed, JSON with a charset, its Origin, the token)', async () => {
    const answer = await send(served.port, { headers: host({ 'content-type': 'application/json; charset=utf-8' }), body: chat({ stream: true }) });
    assert.equal(answer.status, 200, answer.text);
    assert.match(answer.text, /stub answer/);
    assert.match(answer.text, /data: \[DONE\]/);
    assert.equal(calls.length, 1);
    assert.deepEqual(corsHeaders(answer.headers), [], 'no CORS headers: the extension reaches loopback with its host permission');
    const models = await send(served.port, { method: 'GET', path: '/v1/models', headers: host({ origin: undefined, 'content-type': undefined }) });
    assert.equal(models.status, 200, models.text);
  });

  test('attack 1: a text/plain POST (a CORS simple request any page can send) is refused and runs no generation', async () => {
    // As a page sends it: its own Origin, no token.
    const page = await send(served.port, {
      headers: { origin: 'https://evil.example', 'content-type': 'text/plain;charset=UTF-8' },
      body: chat({ max_tokens: 987654 }),
    });
    assert.ok([403, 415].includes(page.status), `a page's text/plain POST: ${page.status} ${page.text}`);
    // Even with everything else right, only application/json is read.
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const answer = await send(served.port, { headers: host({ 'content-type': type }), body: chat() });
      assert.equal(answer.status, 415, `Content-Type ${type}: ${answer.status} ${answer.text}`);
    }
    assert.equal(calls.length, 0, 'no generation ran');
  });

  test('attack 2: a DNS-rebinding host name is refused (Host must be the loopback address and port it listens on)', async () => {
    for (const name of [`evil.example:${served.port}`, 'evil.example', `127.0.0.1:${served.port + 1}`, '127.0.0.1',
      `127.0.0.1.evil.example:${served.port}`, `[::1]:${served.port}`, `0.0.0.0:${served.port}`]) {
      const posted = await send(served.port, { headers: host({ host: name }), body: chat() });
      assert.equal(posted.status, 403, `POST with Host ${name}: ${posted.status} ${posted.text}`);
      const read = await send(served.port, { method: 'GET', path: '/v1/models', headers: host({ host: name, origin: undefined }) });
      assert.equal(read.status, 403, `GET /v1/models with Host ${name}: ${read.status} ${read.text}`);
    }
    assert.equal(calls.length, 0, 'no generation ran');
    // `localhost` names loopback too (the host's docs allow either in a model's baseUrl).
    const local = await send(served.port, { headers: host({ host: `LocalHost:${served.port}` }), body: chat() });
    assert.equal(local.status, 200, local.text);
  });

  test('attack 3: a web page\'s Origin is refused; no Origin, or an extension\'s, is not', async () => {
    for (const origin of ['https://evil.example', 'null', `http://127.0.0.1:${served.port + 1}`, `http://localhost:${served.port}`,
      'chrome-extension://not-an-id', 'moz-extension://abcdefghijklmnopabcdefghijklmnop']) {
      const answer = await send(served.port, { headers: host({ origin }), body: chat() });
      assert.equal(answer.status, 403, `Origin ${origin}: ${answer.status} ${answer.text}`);
      assert.deepEqual(corsHeaders(answer.headers), []);
    }
    assert.equal(calls.length, 0, 'no generation ran');
    const none = await send(served.port, { headers: host({ origin: undefined }), body: chat() });
    assert.equal(none.status, 200, none.text);
  });

  test('attack 4: no bearer token, or a wrong one, is 401', async () => {
    for (const authorization of [undefined, 'Bearer ', 'Bearer wrong', `Bearer ${served.token}x`, `Basic ${served.token}`, served.token]) {
      const answer = await send(served.port, { headers: host({ authorization }), body: chat() });
      assert.equal(answer.status, 401, `Authorization ${authorization}: ${answer.status} ${answer.text}`);
      assert.match(answer.headers['www-authenticate'] ?? '', /^Bearer/);
      const read = await send(served.port, { method: 'GET', path: '/v1/models', headers: host({ authorization }) });
      assert.equal(read.status, 401, `GET /v1/models, Authorization ${authorization}: ${read.status}`);
    }
    assert.equal(calls.length, 0, 'no generation ran');
    assert.match(served.token, /^[0-9a-f]{64}$/, 'a random 256-bit token');
    const scheme = await send(served.port, { headers: host({ authorization: `bearer ${served.token}` }), body: chat() });
    assert.equal(scheme.status, 200, 'the scheme is case-insensitive');
  });

  test(`attack 5: max_tokens is capped at ${MAX_TOKENS}; a body over ${MAX_BODY_BYTES} bytes is 413`, async () => {
    const capped = await send(served.port, { headers: host(), body: chat({ max_tokens: 987654 }) });
    assert.equal(capped.status, 200, capped.text);
    assert.equal(calls.at(-1).maxTokens, MAX_TOKENS);
    const asked = await send(served.port, { headers: host(), body: chat({ max_tokens: 200 }) });
    assert.equal(asked.status, 200, asked.text);
    assert.equal(calls.at(-1).maxTokens, 200);
    for (const max of [0, -1]) {
      const answer = await send(served.port, { headers: host(), body: chat({ max_tokens: max }) });
      assert.equal(answer.status, 400, `max_tokens ${max}: ${answer.status} ${answer.text}`);
    }
    assert.equal(calls.length, 2);

    // Declared too long: refused before the body is read.
    const declared = await new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: served.port, method: 'POST', path: '/v1/chat/completions',
        headers: clean(host({ 'content-length': String(MAX_BODY_BYTES + 1) })) }, (res) => {
        resolve(res.statusCode);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.equal(declared, 413);
    // Chunked, no length said: refused once more than the cap came. Pieces are sent until
    // the answer arrives (each after the one before was written).
    const piece = Buffer.alloc(64 * 1024, 0x20);
    const chunked = await new Promise((resolve, reject) => {
      let answered = false;
      let sent = 0;
      const req = request({ host: '127.0.0.1', port: served.port, method: 'POST', path: '/v1/chat/completions',
        headers: clean(host({ 'transfer-encoding': 'chunked' })) }, (res) => {
        answered = true;
        res.resume();
        resolve({ status: res.statusCode, sent });
        req.destroy();
      });
      req.on('error', (error) => {
        if (!answered) reject(error);
      });
      const more = () => {
        if (answered || req.destroyed) return;
        sent += piece.length;
        req.write(piece, more);
      };
      more();
    });
    assert.equal(chunked.status, 413);
    assert.ok(chunked.sent > MAX_BODY_BYTES);
    assert.equal(calls.length, 2, 'no generation ran');

    // A body at the cap is read.
    const padded = chat({ padding: '' });
    const full = padded.replace('"padding":""', `"padding":"${' '.repeat(MAX_BODY_BYTES - Buffer.byteLength(padded))}"`);
    assert.equal(Buffer.byteLength(full), MAX_BODY_BYTES);
    const atCap = await send(served.port, { headers: host(), body: full });
    assert.equal(atCap.status, 200, atCap.text);
  });

  test('attack 6: a preflight from a web origin gets 403 and no CORS headers', async () => {
    const answer = await send(served.port, {
      method: 'OPTIONS',
      headers: { host: `127.0.0.1:${served.port}`, origin: 'https://evil.example', 'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type' },
    });
    assert.equal(answer.status, 403, answer.text);
    assert.deepEqual(corsHeaders(answer.headers), []);
  });

  // Bounded: a handler that throws leaves its request unanswered.
  test('a body that is JSON but not an object is 400, and the server keeps serving', { timeout: 10_000 }, async () => {
    for (const body of ['null', '3', '"text"', '[]']) {
      const answer = await send(served.port, { headers: host(), body });
      assert.equal(answer.status, 400, `${body}: ${answer.status} ${answer.text}`);
    }
    const after = await send(served.port, { headers: host(), body: chat() });
    assert.equal(after.status, 200, after.text);
  });
});

test('with origins given (--origin), another extension\'s origin is refused', async () => {
  let generated = 0;
  const served = await serve({
    modelId: 'stub',
    origins: [EXTENSION],
    generate: async () => {
      generated += 1;
      return { text: '', finish: 'stop', usage: { prompt_tokens: 1, completion_tokens: 0, total_tokens: 1 } };
    },
  });
  try {
    const headers = (origin) => ({ origin, authorization: `Bearer ${served.token}`, 'content-type': 'application/json' });
    const body = JSON.stringify({ model: 'stub', messages: MESSAGES });
    const other = await send(served.port, { headers: headers('chrome-extension://ponmlkjihgfedcbaponmlkjihgfedcba'), body });
    assert.equal(other.status, 403, other.text);
    assert.equal(generated, 0);
    const own = await send(served.port, { headers: headers(EXTENSION), body });
    assert.equal(own.status, 200, own.text);
    assert.equal(generated, 1);
  } finally {
    await served.close();
  }
});

test('start.mjs prints the token the server made, and hands it over', async () => {
  const lines = [];
  const server = await startServer([join(HERE, 'stub-server.mjs')], { log: (line) => lines.push(line) });
  try {
    assert.match(server.token ?? '', /^[0-9a-f]{64}$/);
    assert.ok(lines.some((line) => line.includes(server.token)), `printed at start: ${JSON.stringify(lines)}`);
    const port = Number(new URL(server.baseUrl).port);
    const body = JSON.stringify({ model: 'stub', messages: MESSAGES });
    const refused = await send(port, { headers: { 'content-type': 'application/json' }, body });
    assert.equal(refused.status, 401);
    const answered = await send(port, { headers: { 'content-type': 'application/json', authorization: `Bearer ${server.token}` }, body });
    assert.equal(answered.status, 200, answered.text);
    assert.match(answered.text, /stub answer/);
  } finally {
    await server.stop();
  }
});
