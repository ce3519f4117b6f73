// The HTTP side of scripts/local-model/server.mjs, apart from the model so that it can be
// tested with a stub in its place: `serve({generate, modelId, port})` listens on 127.0.0.1 and
// answers the OpenAI-compatible API (server.mjs says what it serves); `generate` is the model.
//
//   generate({items, maxTokens, temperature, seed, onText}) → {text, finish, usage}
//
// `items` is the chat history as node-llama-cpp takes it (`history` below), `onText` is called
// with each piece of text as it comes, `finish` is `stop` or `length`, `usage` the OpenAI usage
// object. One request is generated at a time.
//
// It answers the host and no web page of the browser (docs/security.md): before
// anything is read or generated, a request must name this server in `Host` (`127.0.0.1:PORT` or
// `localhost:PORT`, the port it listens on: a DNS-rebinding name is 403), come from no web page
// (`Origin` absent or a Chrome extension's, or one of `origins` when given: else 403), and carry
// the token (`Authorization: Bearer TOKEN`, random per start unless given: else 401). A chat
// request must be `application/json` (else 415), at most MAX_BODY_BYTES (else 413), and its
// `max_tokens` is cut to MAX_TOKENS. No answer carries a CORS header.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

/** The most tokens one answer may have: a quarter of the default 4096-token context. */
export const MAX_TOKENS = 1024;
/** What an answer has when the request does not say. */
export const DEFAULT_MAX_TOKENS = 512;
/** The largest request body read (far more text than a 4096-token context holds). */
export const MAX_BODY_BYTES = 256 * 1024;
/** A Chrome extension's origin (its id: 32 letters a to p). */
const EXTENSION_ORIGIN = /^chrome-extension:\/\/[a-p]{32}$/;

/** A new token: 32 random bytes, in hex. */
export const newToken = () => randomBytes(32).toString('hex');

/** The chat history node-llama-cpp takes, or an error text for the person. */
export function history(messages) {
  if (!Array.isArray(messages) || !messages.length) return 'messages: expected a non-empty array';
  const items = [];
  for (const [i, m] of messages.entries()) {
    const text = typeof m?.content === 'string' ? m.content : Array.isArray(m?.content)
      ? m.content.filter((p) => p?.type === 'text').map((p) => p.text).join('')
      : null;
    if (m?.role === 'tool' || m?.tool_calls) {
      return `messages[${i}]: native tool calls are not served here; configure the model with nativeTools: false (the host's text call format)`;
    }
    if (text === null) return `messages[${i}].content: expected text`;
    const last = items.at(-1);
    if (m.role === 'system') {
      if (last?.type === 'system') last.text += `\n\n${text}`;
      else items.push({ type: 'system', text });
    } else if (m.role === 'user') items.push({ type: 'user', text });
    else if (m.role === 'assistant') items.push({ type: 'model', response: [text] });
    else return `messages[${i}].role: ${JSON.stringify(m?.role)} is not system, user or assistant`;
  }
  items.push({ type: 'model', response: [] });
  return items;
}

function json(res, status, value, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

const refuse = (res, status, message, headers) => json(res, status, { error: { message } }, headers);

/** Whether two texts are equal, in a time that says nothing of where they differ. */
function same(a, b) {
  const digest = (text) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/**
 * The request's body as text, at most `limit` bytes; `null` when it is longer (what is left
 * is read and dropped), `undefined` when the client went away first.
 */
function readBody(req, limit) {
  return new Promise((resolve) => {
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) return resolve(null);
    const chunks = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk) => {
      if (over) return;
      size += chunk.length;
      if (size > limit) {
        over = true;
        chunks.length = 0;
        resolve(null);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(over ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('close', () => resolve(undefined));
  });
}

/**
 * Listens on 127.0.0.1:`port` (0: a free one); answers `{server, port, baseUrl, token, close()}`.
 * `token` is the one requests must carry (a new random one unless given); `origins`, when not
 * empty, are the only origins taken (else any Chrome extension's).
 */
export async function serve({ generate, modelId, port = 0, temperature = 0, token = newToken(), origins = [] }) {
  if (typeof token !== 'string' || token.length < 32) throw new Error('the token must be a text of at least 32 characters');
  let queue = Promise.resolve();
  let bound;

  async function complete(body, onText) {
    const items = history(body.messages);
    if (typeof items === 'string') throw Object.assign(new Error(items), { status: 400 });
    return generate({
      items,
      maxTokens: body.max_tokens == null ? DEFAULT_MAX_TOKENS : Math.min(body.max_tokens, MAX_TOKENS),
      temperature: typeof body.temperature === 'number' ? body.temperature : temperature,
      seed: Number.isInteger(body.seed) ? body.seed : undefined,
      onText,
    });
  }

  /** Why the request is not the host's (`[status, message, headers?]`), or null. */
  function refusal(req) {
    const host = (req.headers.host ?? '').toLowerCase();
    if (host !== `127.0.0.1:${bound}` && host !== `localhost:${bound}`) {
      return [403, `Host ${JSON.stringify(req.headers.host ?? '')}: this server answers only as 127.0.0.1:${bound}`];
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !(origins.length ? origins.includes(origin) : EXTENSION_ORIGIN.test(origin))) {
      return [403, `Origin ${JSON.stringify(origin)}: this server answers no web page`];
    }
    const [, given] = /^bearer +(\S+) *$/i.exec(req.headers.authorization ?? '') ?? [];
    if (!given || !same(given, token)) {
      return [401, 'the token this server printed at start is needed (Authorization: Bearer TOKEN)', { 'www-authenticate': 'Bearer' }];
    }
    return null;
  }

  async function handle(req, res) {
    const refused = refusal(req);
    if (refused) return refuse(res, ...refused);
    if (req.method === 'GET' && req.url === '/v1/models') {
      return json(res, 200, { object: 'list', data: [{ id: modelId, object: 'model', owned_by: 'local' }] });
    }
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      return refuse(res, 404, `${req.method} ${req.url}: not served here`);
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== 'application/json') {
      return refuse(res, 415, `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')}: only application/json is read`);
    }
    const raw = await readBody(req, MAX_BODY_BYTES);
    if (raw === undefined) return;
    if (raw === null) {
      return refuse(res, 413, `the request body is over ${MAX_BODY_BYTES} bytes`, { connection: 'close' });
    }
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return refuse(res, 400, 'the request body is not JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return refuse(res, 400, 'the request body is not a JSON object');
    }
    if (body.max_tokens != null && !(Number.isInteger(body.max_tokens) && body.max_tokens >= 1)) {
      return refuse(res, 400, `max_tokens: expected a whole number from 1 (at most ${MAX_TOKENS} are generated)`);
    }
    if (Array.isArray(body.tools) && body.tools.length) {
      return json(res, 400, { error: { message: 'native tools are not served here; configure the model with nativeTools: false (the host\'s text call format)' } });
    }
    const id = `chatcmpl-${Date.now()}`;
    const chunk = (delta, finish = null, usage) => `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: modelId,
      choices: usage ? [] : [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
    const turn = queue.then(async () => {
      if (body.stream) {
        let started = false;
        const start = () => {
          if (started) return;
          started = true;
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          res.write(chunk({ role: 'assistant', content: '' }));
        };
        try {
          const out = await complete(body, (text) => {
            start();
            res.write(chunk({ content: text }));
          });
          start();
          res.write(chunk({}, out.finish));
          if (body.stream_options?.include_usage) res.write(chunk(null, null, out.usage));
          res.end('data: [DONE]\n\n');
        } catch (error) {
          if (!started) return json(res, error.status ?? 500, { error: { message: error.message } });
          res.end(`data: ${JSON.stringify({ error: { message: error.message } })}\n\n`);
        }
      } else {
        try {
          const out = await complete(body, () => {});
          json(res, 200, { id, object: 'chat.completion', model: modelId, usage: out.usage,
            choices: [{ index: 0, message: { role: 'assistant', content: out.text }, finish_reason: out.finish }] });
        } catch (error) {
          json(res, error.status ?? 500, { error: { message: error.message } });
        }
      }
    });
    queue = turn.catch(() => {});
    await turn;
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error) => {
      if (!res.headersSent) refuse(res, 500, error.message);
      else res.destroy();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  bound = server.address().port;
  return {
    server,
    port: bound,
    baseUrl: `http://127.0.0.1:${bound}/v1`,
    token,
    close: () => new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}

/**
 * What the server prints once it listens, on stdout: the token, then where it listens
 * (scripts/local-model/start.mjs reads both).
 */
export function announce(served) {
  console.log(`token ${served.token} (the key to give the host's model: Authorization: Bearer TOKEN)`);
  console.log(`listening ${served.baseUrl}`);
}
