// `make demo-local`: `make demo` on a real local model, no key. Starts
// scripts/local-model/server.mjs on 127.0.0.1 (node-llama-cpp, the pinned GGUF downloaded and
// checked once, or a person's own with WEBMCP_HOST_GGUF), points the demo at it through the
// host's OpenAI-compatible provider in the text call format (the token the server printed is the
// model's key), and prints what the model did as `make demo` prints it, with each step's time,
// then the model, its checksum and the whole time.
import { startLocalModel } from './local-model/start.mjs';
import { MODEL } from './local-model/install.mjs';

const started = Date.now();
const server = await startLocalModel();
const modelId = server.model.own ? server.model.path.split('/').pop().replace(/\.gguf$/i, '') : MODEL.id;
process.env.WEBMCP_MODEL_PROVIDER = 'openai';
process.env.WEBMCP_MODEL_BASE_URL = server.baseUrl;
process.env.WEBMCP_MODEL = modelId;
process.env.WEBMCP_NATIVE_TOOLS = '0';
// The server's token is the model's key: demo.mjs configures it (`keyRef`) and the host's
// provider sends it as `Authorization: Bearer`.
process.env.WEBMCP_API_KEY = server.token;
const demoStarted = Date.now();
try {
  await import('./demo.mjs');
} finally {
  await server.stop();
  console.log(`\nLocal model: ${server.model.title}`);
  console.log(server.model.sha256
    ? `  GGUF SHA-256 ${server.model.sha256} (pinned in scripts/local-model/install.mjs; the file was checked against it)`
    : `  GGUF ${server.model.path} (WEBMCP_HOST_GGUF: not checked)`);
  console.log(`  served by node-llama-cpp on ${server.baseUrl}, loaded in ${server.loadSeconds.toFixed(1)} s`);
  console.log(`  the demo took ${((Date.now() - demoStarted) / 1000).toFixed(0)} s; with the install and the model's load, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}
