// scripts/local-model/server.mjs with a stub in the model's place (no GGUF, no node-llama-cpp):
// the same HTTP side (scripts/local-model/http.mjs), printing what server.mjs prints. Each answer
// is "stub answer". For tests/local-model/server.test.mjs, which starts it through
// scripts/local-model/start.mjs.
import { announce, serve } from '../../scripts/local-model/http.mjs';

const served = await serve({
  modelId: 'stub',
  generate: async ({ onText }) => {
    onText('stub answer');
    return { text: 'stub answer', finish: 'stop', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
  },
});
announce(served);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    served.server.close();
    process.exit(0);
  });
}
