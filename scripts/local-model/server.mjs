// A small OpenAI-compatible chat server on 127.0.0.1 over node-llama-cpp (its prebuilt
// llama.cpp binaries), for `make demo-local`, `make eval-local` and `scripts/record-corpus.mjs`.
//
//   node scripts/local-model/server.mjs --model FILE.gguf [--port N] [--context N] [--threads N] [--temperature T]
//
// It speaks what the host's OpenAI-compatible provider sends in the text call format:
// `POST /v1/chat/completions` with `system`, `user` and `assistant` messages (the tools are in
// the system text), streamed (`stream: true`, SSE chunks, `[DONE]`, the usage in the last
// chunk) or not; `GET /v1/models`. Native `tools` and `tool` messages are refused with a 400
// that says so (the host's model must have `nativeTools: false`). Decoding is greedy
// (temperature 0) unless the request sets `temperature` or the server was started with
// `--temperature` (then each answer is sampled afresh); one request is served at a time, and
// a request that shares the previous one's start reuses what was evaluated of it.
//
// Threads: one fewer than the machine's cores (at least one). llama.cpp's threads wait for each
// other by spinning: on 2 cores with any other work running, 2 threads took 34–109 s for an
// answer that 1 thread gave in 2 s.
//
// When it listens it prints one line, `listening http://127.0.0.1:PORT/v1`; each answer
// prints one line on stderr (prompt and output tokens, seconds).
import { createServer } from 'node:http';
import { basename } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { loadLlama } from './install.mjs';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    port: { type: 'string', default: '0' },
    context: { type: 'string', default: '4096' },
    threads: { type: 'string' },
    temperature: { type: 'string', default: '0' },
  },
});
if (!values.model) {
  console.error('usage: server.mjs --model FILE.gguf [--port N] [--context N]');
  process.exit(2);
}

const { getLlama, LlamaChat } = await loadLlama();
const llama = await getLlama({ build: 'never', gpu: false, logLevel: 'error' });
const model = await llama.loadModel({ modelPath: values.model });
const context = await model.createContext({
  contextSize: Number(values.context),
  threads: Number(values.threads ?? Math.max(1, availableParallelism() - 1)),
});
const sequence = context.getSequence();
const chat = new LlamaChat({ contextSequence: sequence });
const modelId = basename(values.model).replace(/\.gguf$/i, '');

/** The chat history node-llama-cpp takes, or an error text for the person. */
function history(messages) {
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

let queue = Promise.resolve();

async function complete(body, onText) {
  const items = history(body.messages);
  if (typeof items === 'string') throw Object.assign(new Error(items), { status: 400 });
  const started = performance.now();
  let output = 0;
  const result = await chat.generateResponse(items, {
    maxTokens: Number.isInteger(body.max_tokens) ? body.max_tokens : 512,
    temperature: typeof body.temperature === 'number' ? body.temperature : Number(values.temperature),
    ...(Number.isInteger(body.seed) ? { seed: body.seed } : {}),
    onTextChunk: onText,
    onToken: (tokens) => {
      output += tokens.length;
    },
  });
  const seconds = (performance.now() - started) / 1000;
  const prompt = Math.max(0, sequence.nextTokenIndex - output);
  console.error(`answered: ${prompt} prompt tokens, ${output} output tokens, ${seconds.toFixed(1)} s`);
  const finish = result.metadata.stopReason === 'maxTokens' ? 'length' : 'stop';
  return { text: result.response, finish, usage: { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output } };
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

const server = createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/v1/models') {
    return json(res, 200, { object: 'list', data: [{ id: modelId, object: 'model', owned_by: 'local' }] });
  }
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
    return json(res, 404, { error: { message: `${req.method} ${req.url}: not served here` } });
  }
  let raw = '';
  for await (const chunk of req) raw += chunk;
  let body;
  try {
    body = JSON.parse(raw);
  } catch {
    return json(res, 400, { error: { message: 'the request body is not JSON' } });
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
});

server.listen(Number(values.port), '127.0.0.1', () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/v1`);
});
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    process.exit(0);
  });
}
