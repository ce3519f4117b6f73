// Starts scripts/local-model/server.mjs on 127.0.0.1 (the pinned model, or WEBMCP_HOST_GGUF)
// at the lowest priority (`nice -n 19`: the machine's cores are shared), and answers once it
// listens: `{baseUrl, token, model, loadSeconds, stop()}`. `token` is the one the server made and
// printed at start, which every request must carry (`Authorization: Bearer TOKEN`: the key of
// the host's model); it is printed here too. What the server prints on stderr goes to ours.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installLlama, modelPath } from './install.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const say = (line) => process.stderr.write(`  [model server] ${line}\n`);

export async function startLocalModel({ context = 4096, temperature = 0, log = say } = {}) {
  await installLlama();
  const model = await modelPath();
  const args = [join(HERE, 'server.mjs'), '--model', model.path, '--context', String(context), '--temperature', String(temperature)];
  return { ...(await startServer(args, { log })), model };
}

/**
 * Runs `node ARGS` (a script that serves as server.mjs does, and prints what
 * `announce` of scripts/local-model/http.mjs prints) at the lowest priority; answers once it
 * listens: `{baseUrl, token, loadSeconds, stop()}`.
 */
export async function startServer(args, { log = say } = {}) {
  const niced = process.platform === 'linux';
  const child = spawn(niced ? 'nice' : process.execPath, niced ? ['-n', '19', process.execPath, ...args] : args,
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const started = Date.now();
  const { baseUrl, token } = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const listening = /^listening (\S+)\r?\n/m.exec(out);
      if (!listening) return;
      const token = /^token ([0-9a-f]+) /m.exec(out);
      if (token) resolve({ baseUrl: listening[1], token: token[1] });
      else reject(new Error('the model server listens but printed no token'));
    });
    child.stderr.on('data', (d) => String(d).split('\n').filter(Boolean).forEach(log));
    child.on('exit', (code) => reject(new Error(`the model server stopped (exit ${code}) before it listened`)));
  }).catch((error) => {
    child.kill('SIGTERM');
    throw error;
  });
  const loadSeconds = (Date.now() - started) / 1000;
  log(`listening ${baseUrl}, token ${token} (every request sends it as Authorization: Bearer TOKEN)`);
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.on('exit', resolve);
    child.kill('SIGTERM');
  });
  return { baseUrl, token, loadSeconds, stop };
}
