// A small OpenAI-compatible chat server on 127.0.0.1 over node-llama-cpp (its prebuilt
// llama.cpp binaries), for `make demo-local`, `make eval-local` and `scripts/record-corpus.mjs`.
//
//   node scripts/local-model/server.mjs --model FILE.gguf [--port N] [--context N] [--threads N] [--temperature T]
//                                       [--origin chrome-extension://ID]...
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
// It answers only the host (scripts/local-model/http.mjs, docs/security.md): `Host` must be
// `127.0.0.1:PORT` or `localhost:PORT`, `Origin` absent or a Chrome extension's (with
// `--origin`, only those given), every request must carry the token it prints at start
// (`Authorization: Bearer TOKEN`, random each start: the key of the host's model), a chat request
// must be `application/json` of at most 256 KiB, and `max_tokens` is cut to 1024.
//
// When it listens it prints two lines, `token TOKEN …` and `listening http://127.0.0.1:PORT/v1`;
// each answer prints one line on stderr (prompt and output tokens, seconds).
import { basename } from 'node:path';
import { availableParallelism } from 'node:os';
import { parseArgs } from 'node:util';
import { announce, serve } from './http.mjs';
import { loadLlama } from './install.mjs';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    port: { type: 'string', default: '0' },
    context: { type: 'string', default: '4096' },
    threads: { type: 'string' },
    temperature: { type: 'string', default: '0' },
    origin: { type: 'string', multiple: true, default: [] },
  },
});
if (!values.model) {
  console.error('usage: server.mjs --model FILE.gguf [--port N] [--context N] [--threads N] [--temperature T] [--origin chrome-extension://ID]...');
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

/** One answer of the model (scripts/local-model/http.mjs calls it one at a time). */
async function generate({ items, maxTokens, temperature, seed, onText }) {
  const started = performance.now();
  let output = 0;
  const result = await chat.generateResponse(items, {
    maxTokens,
    temperature,
    ...(seed !== undefined ? { seed } : {}),
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

const served = await serve({
  generate,
  modelId: basename(values.model).replace(/\.gguf$/i, ''),
  port: Number(values.port),
  temperature: Number(values.temperature),
  origins: values.origin,
});
announce(served);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    served.server.close();
    process.exit(0);
  });
}
