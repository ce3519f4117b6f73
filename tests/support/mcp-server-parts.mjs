// The pieces of the project's test MCP server (`mcp-server.mjs`): protocol constants, the
// behaviours an endpoint can be given, request and JSON-RPC helpers, the default tools and the
// SSE stream. See `mcp-server.mjs` for the server and its behaviours' documentation.
import { randomBytes } from 'node:crypto';

export const LATEST_PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

export const SERVER_INFO = { name: 'webmcp-host-test-server', title: 'WebMCP Host test MCP server', version: '1.0.0' };
export const BEHAVIOUR_KEYS = new Set([
  'sse', 'malformed', 'wrongId', 'endless', 'slowStream', 'oversized', 'oddSessionId', 'redirect',
  'sampling', 'elicitation', 'expireSession', 'unauthorized', 'toolCount', 'progressIntervalMs',
  'answerTimeoutMs', 'echoAuth', 'echoAuthInListing', 'holdMs', 'richTools',
]);
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
export const SLOW_STREAM_MS = 2000;
export const PING_MS = 100;
export const DEFAULT_OVERSIZED = 1 << 20;
// A 1x1 PNG.
export const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
export const EMPTY_INPUT = Object.freeze({ type: 'object', properties: {} });
export const SUM_SCHEMA = { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] };

// JSON-RPC error codes
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const BAD_REQUEST = -32000; // the TypeScript SDK's code for HTTP-level refusals
export const SESSION_NOT_FOUND = -32001;

/** Checks a behaviour object; throws an Error naming what is wrong. */
export function normalizeBehaviour(behaviour, where = 'behaviour') {
  if (behaviour === undefined || behaviour === null) return {};
  if (typeof behaviour !== 'object' || Array.isArray(behaviour)) throw new Error(`${where}: must be an object`);
  for (const key of Object.keys(behaviour)) {
    if (!BEHAVIOUR_KEYS.has(key)) throw new Error(`${where}: unknown key "${key}" (known: ${[...BEHAVIOUR_KEYS].join(', ')})`);
  }
  const count = (key) => {
    const v = behaviour[key];
    if (v !== undefined && !(Number.isInteger(v) && v >= 0)) throw new Error(`${where}: ${key} must be an integer >= 0`);
  };
  for (const key of ['oversized', 'toolCount', 'progressIntervalMs', 'answerTimeoutMs', 'holdMs']) count(key);
  if (behaviour.richTools !== undefined && typeof behaviour.richTools !== 'boolean') throw new Error(`${where}: richTools must be true or false`);
  if (behaviour.slowStream !== undefined && typeof behaviour.slowStream !== 'boolean'
    && !(Number.isInteger(behaviour.slowStream) && behaviour.slowStream >= 0)) {
    throw new Error(`${where}: slowStream must be true or a number of ms`);
  }
  for (const key of ['malformed', 'wrongId']) {
    const v = behaviour[key];
    if (v !== undefined && typeof v !== 'boolean' && typeof v !== 'string'
      && !(Array.isArray(v) && v.every((m) => typeof m === 'string'))) {
      throw new Error(`${where}: ${key} must be true, a method name or a list of them`);
    }
  }
  if (behaviour.oddSessionId !== undefined && ![true, false, 'control'].includes(behaviour.oddSessionId)) {
    throw new Error(`${where}: oddSessionId must be true or 'control'`);
  }
  if (behaviour.unauthorized !== undefined && typeof behaviour.unauthorized !== 'boolean'
    && typeof behaviour.unauthorized !== 'string') {
    throw new Error(`${where}: unauthorized must be true or a token`);
  }
  if (behaviour.echoAuth !== undefined && ![true, false, 'error', 'rpc'].includes(behaviour.echoAuth)) {
    throw new Error(`${where}: echoAuth must be true, 'error' or 'rpc'`);
  }
  return { ...behaviour };
}

/** A behaviour from a path name of flags: `sse+wrongId`. Null when a part is not a flag. */
export function behaviourFromName(name) {
  const out = {};
  for (const part of name.split('+')) {
    if (!BEHAVIOUR_KEYS.has(part) || ['toolCount', 'progressIntervalMs', 'answerTimeoutMs'].includes(part)) return null;
    out[part] = part === 'oversized' ? DEFAULT_OVERSIZED : true;
  }
  return out;
}

/** Whether a `true | METHOD | [METHOD]` switch applies to `method` (true: all but initialize). */
export function applies(option, method) {
  if (!option) return false;
  if (option === true) return method !== 'initialize';
  if (typeof option === 'string') return option === method;
  return option.includes(method);
}

// ---------------------------------------------------------------------------------------------
// Small helpers

export const idKey = (id) => JSON.stringify(id);

/** Resolves true after `ms`, or false as soon as one of `signals` aborts. */
export function wait(ms, ...signals) {
  const active = signals.filter(Boolean);
  return new Promise((done) => {
    if (active.some((s) => s.aborted)) {
      done(false);
      return;
    }
    const finish = (ok) => {
      clearTimeout(timer);
      for (const s of active) s.removeEventListener('abort', onAbort);
      done(ok);
    };
    const onAbort = () => finish(false);
    const timer = setTimeout(() => finish(true), ms);
    for (const s of active) s.addEventListener('abort', onAbort, { once: true });
  });
}

export function readBody(request) {
  return new Promise((resolveBody, reject) => {
    const parts = [];
    request.on('data', (part) => parts.push(part));
    request.on('end', () => resolveBody(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

export function parseBody(text) {
  if (text === '') return { ok: false, value: null };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false, value: text };
  }
}

export const rpcError = (id, code, message, data) => ({
  jsonrpc: '2.0', id: id ?? null, error: data === undefined ? { code, message } : { code, message, data },
});
export const rpcResult = (id, result) => ({ jsonrpc: '2.0', id, result });
export const text = (t) => ({ type: 'text', text: t });

/** Session ids: 32 characters of base64url (visible ASCII). */
export const newSessionId = () => randomBytes(24).toString('base64url');

export function acceptsAll(header, types) {
  const accepted = String(header ?? '').toLowerCase().split(',').map((part) => part.split(';')[0].trim());
  return types.every((type) => accepted.includes(type));
}

export function originAllowed(origin) {
  if (origin === undefined || origin === 'null') return true;
  if (/^(chrome|moz)-extension:\/\/[^/]+$/i.test(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:')
      && ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  } catch {
    return false;
  }
}

/** `size` bytes of ASCII text. */
export function bytesOfText(size) {
  const unit = 'oversized result 0123456789 ';
  return unit.repeat(Math.ceil(size / unit.length)).slice(0, size);
}

// ---------------------------------------------------------------------------------------------
// Tools

export function defaultTools() {
  return [
    {
      name: 'add',
      title: 'Add',
      description: 'Adds two numbers.',
      inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'delete_record',
      title: 'Delete a record',
      description: 'Deletes the record with the given id.',
      inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    {
      name: 'no_hints',
      description: 'A tool without annotations (so it counts as destructive).',
      inputSchema: { ...EMPTY_INPUT },
    },
    {
      name: 'structured',
      description: 'Returns structured content that matches its output schema.',
      inputSchema: { ...EMPTY_INPUT },
      outputSchema: SUM_SCHEMA,
      annotations: { readOnlyHint: true },
    },
    {
      name: 'bad_structured',
      description: 'Returns structured content that violates its output schema.',
      inputSchema: { ...EMPTY_INPUT },
      outputSchema: SUM_SCHEMA,
      annotations: { readOnlyHint: true },
    },
    {
      name: 'fails',
      description: 'Always fails with a tool error.',
      inputSchema: { ...EMPTY_INPUT },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'slow',
      description: 'Waits the given number of milliseconds, sending progress when asked to.',
      inputSchema: { type: 'object', properties: { ms: { type: 'number' } }, required: ['ms'] },
      annotations: { readOnlyHint: true },
    },
    {
      name: 'image',
      description: 'Returns an image, a resource link and an embedded resource.',
      inputSchema: { ...EMPTY_INPUT },
      annotations: { readOnlyHint: true },
    },
  ];
}

export function manyTools(count, rich = false) {
  const width = Math.max(4, String(Math.max(0, count - 1)).length);
  return Array.from({ length: count }, (_, i) => ({
    name: `tool_${String(i).padStart(width, '0')}`,
    ...(rich ? richTool(i) : { description: `Extra tool number ${i}.`, inputSchema: { ...EMPTY_INPUT } }),
    annotations: { readOnlyHint: true },
  }));
}

/** A tool the size real servers list (about 1.4 KB of JSON): prose, five described inputs, an output schema. */
function richTool(i) {
  const text = (what) => ({ type: 'string', description: `The ${what} to look in, as the catalogue names it (tool ${i}).` });
  return {
    title: `Search the catalogue, part ${i}`,
    description: `Searches part ${i} of the catalogue for products that match a query, with filters for category, price and stock; answers the matching products with their price and availability, best matches first.`,
    inputSchema: {
      type: 'object',
      properties: {
        query: { type: 'string', description: 'What to search for, in the words a customer would use.', minLength: 1, maxLength: 200 },
        category: { ...text('category'), enum: ['tea', 'coffee', 'cups', 'gifts'] },
        max_price: { type: 'number', description: 'The highest price, in euros.', minimum: 0 },
        in_stock: { type: 'boolean', description: 'Only products that can ship today.' },
        limit: { type: 'integer', description: 'At most this many results.', minimum: 1, maximum: 50, default: 10 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: {
        results: {
          type: 'array',
          items: {
            type: 'object',
            properties: { sku: { type: 'string' }, name: { type: 'string' }, price: { type: 'number' }, available: { type: 'boolean' } },
            required: ['sku', 'price'],
          },
        },
      },
      required: ['results'],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Responses: an SSE stream, and the answer to one POST

/** An SSE response; every write is queued so that `gapMs` can space the events. */
export class SseStream {
  constructor(response, { gapMs = 0, signal, headers = {} }) {
    this.response = response;
    this.gapMs = gapMs;
    this.signal = signal;
    this.queue = Promise.resolve();
    response.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      ...headers,
    });
    response.flushHeaders();
    this.last = Date.now();
  }

  get gone() {
    return this.response.destroyed || this.response.writableEnded;
  }

  /** Queues raw SSE text; resolves when written (or dropped: the stream is gone). */
  write(raw) {
    this.queue = this.queue.then(async () => {
      if (this.gapMs > 0) {
        const due = this.last + this.gapMs - Date.now();
        if (due > 0 && !(await wait(due, this.signal))) return;
      }
      if (this.gone) return;
      this.response.write(raw);
      this.last = Date.now();
    });
    return this.queue;
  }

  /** One `message` event whose data is `data` (a JSON text, or anything for malformed). */
  event(data) {
    return this.write(`event: message\ndata: ${data}\n\n`);
  }

  comment(note) {
    return this.write(`: ${note}\n\n`);
  }

  end() {
    this.queue = this.queue.then(() => {
      if (!this.gone) this.response.end();
    });
    return this.queue;
  }
}

/**
 * The answer to one POST holding `expected` requests: JSON (one object, or an array for a batch)
 * unless `stream()` switched it to SSE first. Ends when every request is answered or cancelled.
 */
export class Reply {
  constructor(response, { expected, batch, gapMs, signal, headers = {} }) {
    this.response = response;
    this.expected = expected;
    this.batch = batch;
    this.gapMs = gapMs;
    this.signal = signal;
    this.headers = headers;
    this.sse = null;
    this.texts = [];
  }

  get gone() {
    return this.response.destroyed || this.response.writableEnded;
  }

  stream() {
    if (!this.sse) this.sse = new SseStream(this.response, { gapMs: this.gapMs, signal: this.signal, headers: this.headers });
    return this.sse;
  }

  /** Sends a server message (request or notification) on this POST's stream. */
  send(message) {
    return this.stream().event(JSON.stringify(message));
  }

  /** The answer to one request, as JSON text (malformed answers are not JSON). */
  async answer(textOut) {
    this.expected -= 1;
    if (this.sse) {
      await this.sse.event(textOut);
      if (this.expected <= 0) await this.sse.end();
      return;
    }
    this.texts.push(textOut);
    if (this.expected <= 0) this.#sendJson();
  }

  /** A request ended without an answer (cancelled). */
  async drop() {
    this.expected -= 1;
    if (this.expected > 0) return;
    if (this.sse) await this.sse.end();
    else if (this.texts.length) this.#sendJson();
    else await this.stream().end(); // an SSE stream without events: no answer, yet the POST ends
  }

  #sendJson() {
    if (this.gone) return;
    const body = Buffer.from(this.batch ? `[${this.texts.join(',')}]` : this.texts[0]);
    this.response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length, ...this.headers });
    this.response.end(body);
  }
}
