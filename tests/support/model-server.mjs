// A scripted LLM server on 127.0.0.1 for end-to-end tests and the demo. It answers in the wire
// formats of three real APIs, streaming as they stream:
//
//   OpenAI Chat Completions  POST /s/NAME/v1/chat/completions   (also /s/NAME/chat/completions)
//   Anthropic Messages       POST /s/NAME/v1/messages            (also /s/NAME/messages)
//   Gemini                   POST /s/NAME/v1beta/models/MODEL:streamGenerateContent?alt=sse
//                            (and :generateContent; `v1` is accepted in place of `v1beta`)
//   Model lists              GET  /s/NAME/v1/models  (OpenAI list; Anthropic's when the request
//                            carries anthropic-version) and GET /s/NAME/v1beta/models (Gemini)
//
// So `${url}/s/NAME` is the base URL a provider setting points at. NAME is a scenario, optionally
// with a suffix `~anything` (`basic~t17`): every distinct NAME~suffix has its own step counter.
//
// A scenario is `{ steps: [step, ...], after?: 'error' | 'repeat', models?: {...} }`. The Nth
// model request (0-based) to NAME~suffix gets steps[N]. Past the last step the default
// (`after: 'error'`) is an HTTP 500 in the provider's error shape whose message names the
// scenario and the request number, so an unexpected extra request fails loudly instead of
// looping; `after: 'repeat'` repeats the last step instead. Model-list requests do not advance
// the counter.
//
// A step:
//   text: 'Hello'                         streamed as content deltas
//   calls: [{ id?, name, arguments }]     native tool calls, after the text if both are given;
//                                         arguments: an object (serialised, then streamed), or a
//                                         string sent verbatim even when it is not valid JSON
//   chunk: 5                              characters (code points) per delta
//   delayMs: 0                            pause between two stream events
//   firstByteDelayMs: 0                   pause before the status line
//   finish: 'stop' | 'length' | other     default 'stop', or the tool-call reason when calls are
//                                         present; 'length' maps to length / max_tokens /
//                                         MAX_TOKENS; any other string is sent verbatim
//   status: 429, body?, headers?          error response in the provider's error JSON shape.
//                                         body: a string is the error message; an object is sent
//                                         as the whole body verbatim. headers are added as given
//                                         (e.g. { 'retry-after': '1' }); they also apply to
//                                         successful steps.
//   truncate: true                        destroy the socket after half of the deltas
//   malformed: true | 'raw text'          after half of the deltas, a data line that is not JSON
//                                         (then the stream goes on to its normal end)
//   midStreamError: 'message' | { type?, message }
//                                         after half of the deltas, an in-stream error, then the
//                                         stream ends without its final events
//   ping: true | false                    Anthropic: true adds a ping event between all deltas;
//                                         false drops the single ping the real API sends after
//                                         the first content_block_start (kept by default)
//   hold: 'NAME'                          the answer is kept back (nothing is sent, not even the
//                                         status line) until the test calls `release('NAME')`;
//                                         `held('NAME')` resolves once a request waits there, so
//                                         a test acts while a run waits on its model, never
//                                         against the clock. A client that goes away releases it.
//   holdMidway: 'NAME'                    the same hold, after half of the deltas (streams only):
//                                         a run stays mid-stream until the test releases it
//
// Every request except the control endpoints below is recorded as
// `{ method, path, query, headers, body, scenario, step, api, time }`.
// Control endpoints: GET /_requests[?scenario=NAME~sfx] (the records as JSON), POST /_reset,
// PUT /_scenarios/NAME (body: a scenario), POST /_release/NAME (a hold released).
//
// CLI: node tests/support/model-server.mjs [--port N] [--scenarios DIR]
// prints the base URL on the first line of stdout and serves until killed. Without --scenarios
// it loads tests/fixtures/models/.
import { createServer } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const STEP_KEYS = new Set([
  'text', 'calls', 'chunk', 'delayMs', 'firstByteDelayMs', 'finish', 'status', 'body', 'headers',
  'truncate', 'malformed', 'midStreamError', 'ping', 'comment', 'hold', 'holdMidway',
]);
const SCENARIO_KEYS = new Set(['steps', 'after', 'models', 'description']);
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const DEFAULT_MODELS = ['model-server-large', 'model-server-small'];
const CREATED = 1735689600; // 2025-01-01T00:00:00Z: fixed, so that streams are reproducible

// ---------------------------------------------------------------------------------------------
// Scenarios

/** Checks a scenario and fills in defaults; throws an Error naming what is wrong. */
export function normalizeScenario(name, scenario) {
  const where = `scenario "${name}"`;
  if (!NAME_RE.test(name)) throw new Error(`${where}: a name is letters, digits, . _ - (no ~ or /)`);
  if (!scenario || typeof scenario !== 'object' || Array.isArray(scenario)) {
    throw new Error(`${where}: must be an object { steps: [...] }`);
  }
  for (const key of Object.keys(scenario)) {
    if (!SCENARIO_KEYS.has(key)) throw new Error(`${where}: unknown key "${key}"`);
  }
  const { steps, after = 'error', models } = scenario;
  if (!Array.isArray(steps) || steps.length === 0) throw new Error(`${where}: steps must be a non-empty array`);
  if (after !== 'error' && after !== 'repeat') throw new Error(`${where}: after must be "error" or "repeat"`);
  if (models !== undefined && (typeof models !== 'object' || models === null)) {
    throw new Error(`${where}: models must be an object { ids?, status?, body?, headers? }`);
  }
  return { steps: steps.map((step, i) => normalizeStep(step, `${where} step ${i}`)), after, models: models ?? {} };
}

function normalizeStep(step, where) {
  if (!step || typeof step !== 'object' || Array.isArray(step)) throw new Error(`${where}: must be an object`);
  for (const key of Object.keys(step)) {
    if (!STEP_KEYS.has(key)) throw new Error(`${where}: unknown key "${key}"`);
  }
  const isInt = (v) => Number.isInteger(v) && v >= 0;
  if (step.text !== undefined && typeof step.text !== 'string') throw new Error(`${where}: text must be a string`);
  if (step.chunk !== undefined && !(isInt(step.chunk) && step.chunk > 0)) throw new Error(`${where}: chunk must be a positive integer`);
  for (const key of ['delayMs', 'firstByteDelayMs']) {
    if (step[key] !== undefined && !isInt(step[key])) throw new Error(`${where}: ${key} must be an integer >= 0`);
  }
  if (step.status !== undefined && !(Number.isInteger(step.status) && step.status >= 200 && step.status <= 599)) {
    throw new Error(`${where}: status must be an HTTP status`);
  }
  if (step.finish !== undefined && typeof step.finish !== 'string') throw new Error(`${where}: finish must be a string`);
  for (const key of ['hold', 'holdMidway']) {
    if (step[key] !== undefined && !(typeof step[key] === 'string' && step[key])) throw new Error(`${where}: ${key} must be a non-empty string`);
  }
  if (step.headers !== undefined && (typeof step.headers !== 'object' || step.headers === null)) {
    throw new Error(`${where}: headers must be an object`);
  }
  const calls = step.calls ?? [];
  if (!Array.isArray(calls)) throw new Error(`${where}: calls must be an array`);
  const normalizedCalls = calls.map((call, i) => {
    if (!call || typeof call.name !== 'string' || !call.name) throw new Error(`${where}: calls[${i}] needs a name`);
    const args = call.arguments ?? {};
    if (typeof args !== 'string' && (typeof args !== 'object' || args === null || Array.isArray(args))) {
      throw new Error(`${where}: calls[${i}].arguments must be an object or a string`);
    }
    return { id: call.id, name: call.name, arguments: args };
  });
  if (step.status === undefined && step.text === undefined && normalizedCalls.length === 0) {
    throw new Error(`${where}: needs text, calls or status`);
  }
  return {
    ...step,
    text: step.text ?? '',
    calls: normalizedCalls,
    chunk: step.chunk ?? 5,
    delayMs: step.delayMs ?? 0,
    firstByteDelayMs: step.firstByteDelayMs ?? 0,
    headers: step.headers ?? {},
  };
}

/** Reads every `*.json` file of `dir` as a scenario named after the file. */
export async function loadScenarios(dir) {
  const scenarios = {};
  for (const file of (await readdir(dir)).sort()) {
    if (extname(file) !== '.json') continue;
    const name = file.slice(0, -'.json'.length);
    let parsed;
    try {
      parsed = JSON.parse(await readFile(join(dir, file), 'utf8'));
    } catch (error) {
      throw new Error(`scenario file ${file}: ${error.message}`);
    }
    normalizeScenario(name, parsed); // fail early, with the file's name
    scenarios[name] = parsed;
  }
  return scenarios;
}

// ---------------------------------------------------------------------------------------------
// Small helpers

/** Splits into pieces of `size` code points (never inside a character). */
function pieces(text, size) {
  const chars = Array.from(text);
  const out = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

const tokens = (s) => Math.max(1, Math.ceil(s.length / 4));
const argsText = (args) => (typeof args === 'string' ? args : JSON.stringify(args));

/** The arguments of a call as a JSON value for APIs whose wire carries an object. */
function argsObject(args) {
  if (typeof args !== 'string') return args;
  try {
    const parsed = JSON.parse(args);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
  } catch { /* broken on purpose: see below */ }
  // Gemini's functionCall.args (and Anthropic's non-streamed tool_use.input) are JSON objects,
  // so broken text cannot be carried verbatim there; it is carried as a JSON string instead,
  // which a client must reject just as it rejects unparsable arguments.
  return args;
}

function finishFor(api, step) {
  const hasCalls = step.calls.length > 0;
  const finish = step.finish ?? (hasCalls ? 'tool_calls' : 'stop');
  const table = {
    openai: { stop: 'stop', length: 'length', tool_calls: 'tool_calls', tool_use: 'tool_calls' },
    anthropic: { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', tool_use: 'tool_use' },
    gemini: { stop: 'STOP', length: 'MAX_TOKENS', tool_calls: 'STOP', tool_use: 'STOP' },
  };
  return table[api][finish] ?? finish;
}

function usageOf(body, step) {
  const input = tokens(typeof body === 'string' ? body : JSON.stringify(body ?? ''));
  const output = tokens(step.text + step.calls.map((c) => c.name + argsText(c.arguments)).join(''));
  return { input, output };
}

// ---------------------------------------------------------------------------------------------
// Error bodies, in each provider's shape

const OPENAI_ERRORS = {
  400: ['invalid_request_error', null, 'Invalid request.'],
  401: ['invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'],
  403: ['invalid_request_error', null, 'You are not allowed to sample from this model.'],
  404: ['invalid_request_error', 'model_not_found', 'The model does not exist or you do not have access to it.'],
  429: ['requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again later.'],
  500: ['server_error', null, 'The server had an error while processing your request. Sorry about that!'],
  503: ['server_error', null, 'The engine is currently overloaded, please try again later.'],
};
const ANTHROPIC_ERRORS = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of requests has exceeded your rate limit.'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};
const GEMINI_STATUS = {
  400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 404: 'NOT_FOUND',
  409: 'ABORTED', 429: 'RESOURCE_EXHAUSTED', 499: 'CANCELLED', 500: 'INTERNAL', 501: 'NOT_IMPLEMENTED',
  503: 'UNAVAILABLE', 504: 'DEADLINE_EXCEEDED',
};

function errorBody(api, status, message, { retryAfter, requestId } = {}) {
  if (api === 'anthropic') {
    const [type, fallback] = ANTHROPIC_ERRORS[status] ?? (status >= 500 ? ANTHROPIC_ERRORS[500] : ANTHROPIC_ERRORS[400]);
    return { type: 'error', error: { type, message: message ?? fallback }, request_id: requestId };
  }
  if (api === 'gemini') {
    const statusText = GEMINI_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
    const error = { code: status, message: message ?? `Request failed: ${statusText}`, status: statusText };
    if (status === 429 && retryAfter !== undefined) {
      error.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${Number(retryAfter) || 1}s` }];
    }
    return { error };
  }
  const [type, code, fallback] = OPENAI_ERRORS[status] ?? (status >= 500 ? OPENAI_ERRORS[500] : OPENAI_ERRORS[400]);
  return { error: { message: message ?? fallback, type, param: null, code } };
}

function midStreamErrorBody(api, spec) {
  const { type, message } = typeof spec === 'string' ? { message: spec } : spec;
  if (api === 'anthropic') return { type: 'error', error: { type: type ?? 'overloaded_error', message } };
  if (api === 'gemini') return { error: { code: 500, message, status: type ?? 'INTERNAL' } };
  return { error: { message, type: type ?? 'server_error', param: null, code: null } };
}

// ---------------------------------------------------------------------------------------------
// Streams. Each builder returns frames `{ kind: 'meta' | 'delta' | 'final', event?, data }`;
// `kind` places truncate / malformed / midStreamError ("after half of the deltas").

function openaiFrames(ctx) {
  const { step, model, id, body } = ctx;
  const includeUsage = body?.stream_options?.include_usage === true;
  const chunk = (delta, finish = null) => ({
    id, object: 'chat.completion.chunk', created: CREATED, model, system_fingerprint: 'fp_model_server',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const frames = [{ kind: 'meta', data: chunk({ role: 'assistant', content: step.text ? '' : null, refusal: null }) }];
  for (const piece of pieces(step.text, step.chunk)) frames.push({ kind: 'delta', data: chunk({ content: piece }) });
  step.calls.forEach((call, index) => {
    const callId = call.id ?? `call_${ctx.callIdBase}${index}`;
    frames.push({
      kind: 'delta',
      data: chunk({ tool_calls: [{ index, id: callId, type: 'function', function: { name: call.name, arguments: '' } }] }),
    });
    for (const piece of pieces(argsText(call.arguments), step.chunk)) {
      frames.push({ kind: 'delta', data: chunk({ tool_calls: [{ index, function: { arguments: piece } }] }) });
    }
  });
  frames.push({ kind: 'final', data: chunk({}, finishFor('openai', step)) });
  if (includeUsage) {
    const { input, output } = ctx.usage;
    frames.push({
      kind: 'final',
      data: {
        id, object: 'chat.completion.chunk', created: CREATED, model, system_fingerprint: 'fp_model_server', choices: [],
        usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
      },
    });
  }
  frames.push({ kind: 'final', data: '[DONE]' });
  return frames;
}

function anthropicFrames(ctx) {
  const { step, model, id } = ctx;
  const { input, output } = ctx.usage;
  const frames = [{
    kind: 'meta', event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null,
        usage: { input_tokens: input, output_tokens: 1 },
      },
    },
  }];
  const ping = { kind: 'meta', event: 'ping', data: { type: 'ping' } };
  let pinged = false;
  const afterBlockStart = () => {
    if (step.ping !== false && !pinged) { frames.push(ping); pinged = true; }
  };
  const delta = (index, d) => {
    if (step.ping === true && frames.at(-1).kind === 'delta') frames.push(ping);
    frames.push({ kind: 'delta', event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
  };
  let index = 0;
  if (step.text || step.calls.length === 0) {
    frames.push({ kind: 'meta', event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
    afterBlockStart();
    for (const piece of pieces(step.text, step.chunk)) delta(index, { type: 'text_delta', text: piece });
    frames.push({ kind: 'meta', event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index += 1;
  }
  step.calls.forEach((call, i) => {
    const callId = call.id ?? `toolu_${ctx.callIdBase}${i}`;
    frames.push({
      kind: 'meta', event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: callId, name: call.name, input: {} } },
    });
    afterBlockStart();
    // The real API opens every tool input with an empty fragment; an empty input ({}) is
    // nothing more than that fragment.
    delta(index, { type: 'input_json_delta', partial_json: '' });
    const text = argsText(call.arguments);
    if (text !== '{}') for (const piece of pieces(text, step.chunk)) delta(index, { type: 'input_json_delta', partial_json: piece });
    frames.push({ kind: 'meta', event: 'content_block_stop', data: { type: 'content_block_stop', index } });
    index += 1;
  });
  frames.push({
    kind: 'final', event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: finishFor('anthropic', step), stop_sequence: null }, usage: { output_tokens: output } },
  });
  frames.push({ kind: 'final', event: 'message_stop', data: { type: 'message_stop' } });
  return frames;
}

function geminiFrames(ctx) {
  const { step, model, id } = ctx;
  const { input, output } = ctx.usage;
  const response = (parts, finish) => ({
    candidates: [{ content: { parts, role: 'model' }, ...(finish ? { finishReason: finish } : {}), index: 0 }],
    usageMetadata: finish
      ? { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output }
      : { promptTokenCount: input, totalTokenCount: input },
    modelVersion: model,
    responseId: id,
  });
  const contents = pieces(step.text, step.chunk).map((piece) => [{ text: piece }]);
  if (step.calls.length > 0) {
    // Gemini sends each function call whole, all of a turn's calls in one response.
    contents.push(step.calls.map((call) => ({
      functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsObject(call.arguments) },
    })));
  }
  if (contents.length === 0) contents.push([{ text: '' }]);
  const finish = finishFor('gemini', step);
  // The last response carries finishReason and the full usage, as the real API's does.
  return contents.map((parts, i) => {
    const last = i === contents.length - 1;
    return { kind: last ? 'final' : 'delta', data: response(parts, last ? finish : undefined) };
  });
}

// Serialisation of one frame onto the wire.
function serialize(api, frame, format) {
  const data = typeof frame.data === 'string' ? frame.data : JSON.stringify(frame.data);
  if (api === 'anthropic') return `event: ${frame.event}\ndata: ${data}\n\n`;
  if (api === 'gemini') {
    // Google's front end ends SSE events with CRLF CRLF (its own SDKs match /\r\n\r\n/); without
    // alt=sse it streams one JSON array instead.
    if (format === 'json-array') return `${frame.first ? '[' : ',\r\n'}${data}`;
    return `data: ${data}\r\n\r\n`;
  }
  return `data: ${data}\n\n`;
}

function malformedFrame(api, step) {
  const raw = typeof step.malformed === 'string' ? step.malformed : '{"choices":[{"delta":{"content":"oops- this is not JSON';
  if (api === 'anthropic') return { event: 'content_block_delta', data: raw };
  return { data: raw };
}

// ---------------------------------------------------------------------------------------------
// Whole (non-streamed) responses

function wholeResponse(api, ctx) {
  const { step, model, id } = ctx;
  const { input, output } = ctx.usage;
  if (api === 'anthropic') {
    const content = [];
    if (step.text || step.calls.length === 0) content.push({ type: 'text', text: step.text });
    step.calls.forEach((call, i) => content.push({
      type: 'tool_use', id: call.id ?? `toolu_${ctx.callIdBase}${i}`, name: call.name, input: argsObject(call.arguments),
    }));
    return {
      id, type: 'message', role: 'assistant', model, content, stop_reason: finishFor('anthropic', step), stop_sequence: null,
      usage: { input_tokens: input, output_tokens: output },
    };
  }
  if (api === 'gemini') {
    const parts = [];
    if (step.text || step.calls.length === 0) parts.push({ text: step.text });
    for (const call of step.calls) {
      parts.push({ functionCall: { ...(call.id ? { id: call.id } : {}), name: call.name, args: argsObject(call.arguments) } });
    }
    return {
      candidates: [{ content: { parts, role: 'model' }, finishReason: finishFor('gemini', step), index: 0 }],
      usageMetadata: { promptTokenCount: input, candidatesTokenCount: output, totalTokenCount: input + output },
      modelVersion: model,
      responseId: id,
    };
  }
  const message = { role: 'assistant', content: step.text || (step.calls.length ? null : ''), refusal: null };
  if (step.calls.length) {
    message.tool_calls = step.calls.map((call, i) => ({
      id: call.id ?? `call_${ctx.callIdBase}${i}`, type: 'function', function: { name: call.name, arguments: argsText(call.arguments) },
    }));
  }
  return {
    id, object: 'chat.completion', created: CREATED, model, system_fingerprint: 'fp_model_server',
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishFor('openai', step) }],
    usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
  };
}

function modelList(api, ids) {
  if (api === 'gemini') {
    return {
      models: ids.map((id) => ({
        name: `models/${id}`, version: '001', displayName: id,
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent'],
      })),
    };
  }
  if (api === 'anthropic') {
    return {
      data: ids.map((id) => ({ type: 'model', id, display_name: id, created_at: '2025-01-01T00:00:00Z' })),
      has_more: false, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null,
    };
  }
  return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'model-server' })) };
}

// ---------------------------------------------------------------------------------------------
// Routing

/** Maps the path under /s/NAME to `{ api, kind, model?, stream? }`, or null. */
function route(method, rest, headers) {
  if (method === 'POST') {
    if (rest === '/v1/chat/completions' || rest === '/chat/completions') return { api: 'openai', kind: 'generate' };
    if (rest === '/v1/messages' || rest === '/messages') return { api: 'anthropic', kind: 'generate' };
    const g = /^\/(?:v1beta|v1)\/models\/([^/:]+):(streamGenerateContent|generateContent)$/.exec(rest);
    if (g) return { api: 'gemini', kind: 'generate', model: g[1], stream: g[2] === 'streamGenerateContent' };
  } else if (method === 'GET') {
    if (rest === '/v1/models' || rest === '/models') {
      return { api: headers['anthropic-version'] ? 'anthropic' : 'openai', kind: 'models' };
    }
    if (rest === '/v1beta/models' || rest === '/v1beta/models/') return { api: 'gemini', kind: 'models' };
  }
  return null;
}

function readBody(request) {
  return new Promise((resolveBody, reject) => {
    const parts = [];
    request.on('data', (part) => parts.push(part));
    request.on('end', () => resolveBody(Buffer.concat(parts).toString('utf8')));
    request.on('error', reject);
  });
}

function parseBody(text) {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Starts the server on 127.0.0.1 (port 0: any free port). Resolves to
 * `{ url, close(), requests(filter?), reset(), setScenario(name, scenario), held(name), waiting(name), release(name) }`.
 */
export async function startModelServer({ port = 0, scenarios = {} } = {}) {
  const known = new Map();
  const counters = new Map();
  let records = [];
  let sequence = 0;
  const stopping = new AbortController();

  const setScenario = (name, scenario) => {
    known.set(name, normalizeScenario(name, scenario));
    for (const key of [...counters.keys()]) {
      if (key === name || key.startsWith(`${name}~`)) counters.delete(key);
    }
  };
  for (const [name, scenario] of Object.entries(scenarios)) setScenario(name, scenario);

  const requests = (filter = {}) => records.filter((r) =>
    (filter.scenario === undefined || r.scenario === filter.scenario)
    && (filter.method === undefined || r.method === filter.method));
  const reset = () => {
    records = [];
    counters.clear();
  };

  const wait = (ms) => (ms > 0 ? sleep(ms, undefined, { signal: stopping.signal }) : Promise.resolve());

  // Holds: a step's answer kept back until the test releases it (`hold: 'NAME'`).
  const holds = new Map(); // NAME → { waiting: count, released: bool, arrived: Set<fn>, free: Set<fn> }
  const holdOf = (name) => {
    if (!holds.has(name)) holds.set(name, { waiting: 0, released: false, arrived: new Set(), free: new Set() });
    return holds.get(name);
  };
  /** Resolves once a request waits at the hold `name` (at once if one waits now). */
  const held = (name) => new Promise((resolveHeld) => {
    const hold = holdOf(name);
    if (hold.waiting > 0) resolveHeld();
    else hold.arrived.add(resolveHeld);
  });
  /** How many requests wait at the hold `name` now. */
  const waiting = (name) => holdOf(name).waiting;
  /** Lets every request at the hold `name` go on, and the ones that come later. */
  const release = (name) => {
    const hold = holdOf(name);
    hold.released = true;
    for (const free of hold.free) free();
    hold.free.clear();
  };
  /** Waits at the hold `name` until it is released, the client goes away or the server stops. */
  const holdAt = (name, response) => new Promise((resolveHold) => {
    const hold = holdOf(name);
    if (hold.released) return resolveHold();
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      hold.waiting -= 1;
      hold.free.delete(free);
      response.off('close', free);
      resolveHold();
    };
    hold.waiting += 1;
    hold.free.add(free);
    // Unanswered, the response closes only when the client goes away.
    response.on('close', free);
    stopping.signal.addEventListener('abort', free, { once: true });
    for (const arrived of hold.arrived) arrived();
    hold.arrived.clear();
  });

  const sendJson = (response, status, body, headers = {}) => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    response.end(text);
  };

  async function handleGenerate(request, response, record, target, fullName, body, query) {
    const api = target.api;
    const requestId = `req_model_server_${++sequence}`;
    const idHeader = api === 'anthropic' ? { 'request-id': requestId } : api === 'openai' ? { 'x-request-id': requestId } : {};
    const baseName = fullName.split('~')[0];
    const scenario = known.get(baseName);
    if (!scenario) {
      const names = [...known.keys()].join(', ') || 'none';
      sendJson(response, 404, errorBody(api, 404, `model-server: no scenario named "${baseName}" (known: ${names})`, { requestId }), idHeader);
      return;
    }
    const n = counters.get(fullName) ?? 0;
    counters.set(fullName, n + 1);
    record.step = n;
    let step;
    if (n < scenario.steps.length) step = scenario.steps[n];
    else if (scenario.after === 'repeat') step = scenario.steps.at(-1);
    else {
      const message = `model-server: scenario "${fullName}" has ${scenario.steps.length} step(s); `
        + `request #${n + 1} is past the end (set after: "repeat" to repeat the last step)`;
      sendJson(response, 500, errorBody(api, 500, message, { requestId }), idHeader);
      return;
    }

    if (step.hold !== undefined) {
      await holdAt(step.hold, response);
      if (response.destroyed || stopping.signal.aborted) return;
    }
    await wait(step.firstByteDelayMs);
    const headers = { ...idHeader, ...step.headers };
    if (step.status !== undefined && step.status >= 400) {
      const retryAfter = Object.entries(step.headers).find(([k]) => k.toLowerCase() === 'retry-after')?.[1];
      const bodyOut = step.body !== undefined && typeof step.body === 'object'
        ? step.body
        : errorBody(api, step.status, step.body, { retryAfter, requestId });
      sendJson(response, step.status, bodyOut, headers);
      return;
    }

    const model = target.model ?? (typeof body?.model === 'string' ? body.model : 'model-server-large');
    const seq = ++sequence;
    const ctx = {
      step,
      model,
      body,
      id: api === 'anthropic' ? `msg_model_server_${seq}` : api === 'gemini' ? `model-server-${seq}` : `chatcmpl-model-server-${seq}`,
      callIdBase: `s${n}x`,
      usage: usageOf(body, step),
    };
    const streaming = api === 'gemini' ? target.stream : body?.stream === true;

    if (!streaming) {
      const text = step.malformed ? (typeof step.malformed === 'string' ? step.malformed : '{"this is": not JSON')
        : JSON.stringify(wholeResponse(api, ctx));
      if (step.truncate) {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...headers });
        response.write(text.slice(0, Math.floor(text.length / 2)));
        await wait(10);
        response.destroy();
        return;
      }
      sendJson(response, 200, text, headers);
      return;
    }

    const format = api === 'gemini' && query.alt !== 'sse' ? 'json-array' : 'sse';
    const frames = api === 'anthropic' ? anthropicFrames(ctx) : api === 'gemini' ? geminiFrames(ctx) : openaiFrames(ctx);
    if (frames.length) frames[0].first = true;
    response.writeHead(200, {
      'content-type': format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/json; charset=utf-8',
      'cache-control': 'no-cache',
      ...headers,
    });
    response.flushHeaders();

    const gone = () => response.destroyed || response.writableEnded;
    const write = async (text, first) => {
      if (!first) await wait(step.delayMs);
      if (!gone()) response.write(text);
    };
    const deltas = frames.filter((f) => f.kind === 'delta').length;
    const half = Math.floor(deltas / 2);
    const special = step.truncate || step.malformed || step.midStreamError !== undefined || step.holdMidway !== undefined;
    let fired = !special;
    let written = 0;
    let first = true;
    // Returns true when the stream has ended.
    const fire = async () => {
      fired = true;
      if (step.holdMidway !== undefined) {
        await holdAt(step.holdMidway, response);
        if (response.destroyed || stopping.signal.aborted) return true;
      }
      if (step.malformed) await write(serialize(api, malformedFrame(api, step), format));
      if (step.midStreamError !== undefined) {
        await write(serialize(api, { event: 'error', data: midStreamErrorBody(api, step.midStreamError) }, format));
        if (format === 'json-array') response.write(']');
        response.end();
        return true;
      }
      if (step.truncate) {
        // Let what was written reach the client before the connection breaks.
        await wait(Math.max(10, step.delayMs));
        response.destroy();
        return true;
      }
      return false;
    };
    for (const frame of frames) {
      if (gone()) return;
      if (!fired && half === 0 && frame.kind !== 'meta' && await fire()) return;
      await write(serialize(api, frame, format), first);
      first = false;
      if (frame.kind === 'delta') {
        written += 1;
        if (!fired && written === half && await fire()) return;
      }
    }
    if (gone()) return;
    if (format === 'json-array') response.write(']');
    response.end();
  }

  async function handle(request, response) {
    const url = new URL(request.url, 'http://127.0.0.1');
    let path = url.pathname;
    try {
      path = decodeURIComponent(path);
    } catch { /* keep it encoded */ }
    const query = Object.fromEntries(url.searchParams);
    const headers = { ...request.headers };
    response.setHeader('access-control-allow-origin', '*');
    response.setHeader('access-control-expose-headers', '*');

    const text = await readBody(request);
    const body = parseBody(text);

    // Control endpoints (not recorded).
    if (path === '/_requests' && request.method === 'GET') {
      sendJson(response, 200, requests({ scenario: query.scenario, method: query.method }));
      return;
    }
    if (path === '/_reset' && request.method === 'POST') {
      reset();
      sendJson(response, 200, { ok: true });
      return;
    }
    const freed = /^\/_release\/([^/]+)$/.exec(path);
    if (freed && request.method === 'POST') {
      release(freed[1]);
      sendJson(response, 200, { ok: true });
      return;
    }
    const put = /^\/_scenarios\/([^/]+)$/.exec(path);
    if (put && request.method === 'PUT') {
      try {
        setScenario(put[1], body);
        sendJson(response, 200, { ok: true });
      } catch (error) {
        sendJson(response, 400, { error: { message: error.message } });
      }
      return;
    }

    const match = /^\/s\/([^/]+)(\/.*)?$/.exec(path);
    const record = {
      method: request.method, path, query, headers, body, scenario: match ? match[1] : null, step: null, api: null,
      time: Date.now(),
    };
    records.push(record);

    if (request.method === 'OPTIONS') {
      const preflight = {
        'access-control-allow-methods': 'GET, POST, PUT, OPTIONS',
        // Echo what was asked for: the '*' wildcard does not cover Authorization.
        'access-control-allow-headers': headers['access-control-request-headers'] || '*',
        'access-control-max-age': '600',
      };
      if (headers['access-control-request-private-network'] === 'true') {
        preflight['access-control-allow-private-network'] = 'true';
      }
      response.writeHead(204, preflight);
      response.end();
      return;
    }

    const target = match ? route(request.method, match[2] ?? '/', headers) : null;
    if (!target) {
      sendJson(response, 404, {
        error: { message: `model-server: no route for ${request.method} ${path} (see tests/support/model-server.mjs)` },
      });
      return;
    }
    record.api = target.api;
    const fullName = match[1];

    if (target.kind === 'models') {
      const baseName = fullName.split('~')[0];
      const scenario = known.get(baseName);
      if (!scenario) {
        sendJson(response, 404, errorBody(target.api, 404, `model-server: no scenario named "${baseName}"`));
        return;
      }
      const { ids = DEFAULT_MODELS, status, body: errorText, headers: extra = {} } = scenario.models;
      if (status !== undefined && status >= 400) {
        const out = errorText !== undefined && typeof errorText === 'object' ? errorText : errorBody(target.api, status, errorText);
        sendJson(response, status, out, extra);
        return;
      }
      sendJson(response, 200, modelList(target.api, ids), extra);
      return;
    }
    await handleGenerate(request, response, record, target, fullName, body, query);
  }

  const server = createServer((request, response) => {
    handle(request, response).catch((error) => {
      if (error?.name === 'AbortError') {
        response.destroy();
        return;
      }
      if (!response.headersSent) sendJson(response, 500, { error: { message: `model-server: ${error.message}` } });
      else response.destroy();
    });
  });
  await new Promise((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolveListen);
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    requests,
    reset,
    setScenario,
    held,
    waiting,
    release,
    close: () => new Promise((resolveClose) => {
      stopping.abort();
      server.close(() => resolveClose());
      server.closeAllConnections();
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// CLI

async function main(argv) {
  let port = 0;
  let dir = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'models');
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else if (argv[i] === '--scenarios') dir = resolve(argv[++i]);
    else if (argv[i] === '--help' || argv[i] === '-h') {
      console.log('usage: node tests/support/model-server.mjs [--port N] [--scenarios DIR]');
      return;
    } else throw new Error(`unknown argument ${argv[i]}`);
  }
  if (!Number.isInteger(port) || port < 0) throw new Error('--port needs a number');
  const scenarios = await loadScenarios(dir);
  const server = await startModelServer({ port, scenarios });
  console.log(server.url);
  const names = Object.keys(scenarios);
  console.error(`model-server: ${names.length} scenario(s): ${names.join(', ') || '(none)'}`);
  if (names.length) {
    const base = `${server.url}/s/${names[0]}`;
    console.error(`  OpenAI:    ${base}/v1/chat/completions`);
    console.error(`  Anthropic: ${base}/v1/messages`);
    console.error(`  Gemini:    ${base}/v1beta/models/ANY:streamGenerateContent?alt=sse`);
    console.error(`  records:   ${server.url}/_requests`);
  }
  const stop = () => server.close().then(() => process.exit(0));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).catch((error) => {
    console.error(`model-server: ${error.message}`);
    process.exit(1);
  });
}
