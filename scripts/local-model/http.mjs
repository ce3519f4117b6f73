// The HTTP side of scripts/local-model/server.mjs, apart from the model so that it can be
// tested with a stub in its place: `serve({generate, modelId, port})` listens on 127.0.0.1 and
// answers the OpenAI-compatible API (server.mjs says what it serves); `generate` is the model.
//
//   generate({items, maxTokens, temperature, seed, onText}) → {text, finish, usage}
//
// `items` is the chat history as node-llama-cpp takes it (`history` below), `onText` is called
// with each piece of text as it comes, `finish` is `stop` or `length`, `usage` the OpenAI usage
// object. One request is generated at a time.
import { createServer } from 'node:http';

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

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** Listens on 127.0.0.1:`port` (0: a free one); answers `{server, port, baseUrl, close()}`. */
export async function serve({ generate, modelId, port = 0, temperature = 0 }) {
  let queue = Promise.resolve();

  async function complete(body, onText) {
    const items = history(body.messages);
    if (typeof items === 'string') throw Object.assign(new Error(items), { status: 400 });
    return generate({
      items,
      maxTokens: Number.isInteger(body.max_tokens) ? body.max_tokens : 512,
      temperature: typeof body.temperature === 'number' ? body.temperature : temperature,
      seed: Number.isInteger(body.seed) ? body.seed : undefined,
      onText,
    });
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

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const bound = server.address().port;
  return {
    server,
    port: bound,
    baseUrl: `http://127.0.0.1:${bound}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** What the server prints once it listens (scripts/local-model/start.mjs reads it). */
export function announce(served) {
  console.log(`listening ${served.baseUrl}`);
}
