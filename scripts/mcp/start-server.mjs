// Starts real MCP servers (Streamable HTTP) on 127.0.0.1 for tests, with the Node 22 binary they
// need and the loopback preload (they would bind every interface otherwise):
//
//   import { startEverything, startSimpleStreamableHttp } from '../../scripts/mcp/start-server.mjs';
//   const server = await startEverything();          // { url: 'http://127.0.0.1:PORT/mcp', stop() }
//   ...
//   await server.stop();
//
// - startEverything: @modelcontextprotocol/server-everything in `streamableHttp` mode (env PORT).
// - startSimpleStreamableHttp: the TypeScript SDK's example server
//   dist/esm/examples/server/simpleStreamableHttp.js (env MCP_PORT); with { oauth: true } behind
//   its demo OAuth authorization server (env MCP_AUTH_PORT), at http://localhost:PORT/mcp.
// - startModern: scripts/mcp/modern-server.mjs, a server of the TypeScript SDK v2
//   (@modelcontextprotocol/server 2.4.0): 2026-07-28, and 2025-11-25 unless { legacy: 'reject' };
//   `requests()` are the requests it got ({http, method, headers: the mcp-* ones}).
// Without `port` a free one is picked. stop() sends SIGTERM (SIGKILL after 3 s) and resolves once
// the child has exited; children still running when this process exits are killed then.
//
// Run directly to keep one up by hand: node scripts/mcp/start-server.mjs everything|simple|modern [PORT]
import { spawn } from 'node:child_process';
import net from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { EVERYTHING_CLI, PRELOAD, ROOT, SDK_EXAMPLE_SERVER, node22 } from './common.mjs';

const live = new Set();
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/** A TCP port that was free on 127.0.0.1 a moment ago. */
export function freePort() {
  return new Promise((ok, fail) => {
    const probe = net.createServer();
    probe.unref();
    probe.on('error', fail);
    probe.listen({ port: 0, host: '127.0.0.1' }, () => {
      const { port } = probe.address();
      probe.close(() => ok(port));
    });
  });
}

function canConnect(port) {
  return new Promise((ok) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.destroy(); ok(true); });
    socket.once('error', () => { socket.destroy(); ok(false); });
  });
}

/**
 * Spawns `node22 --require loopback-preload <args>` and waits until 127.0.0.1:port accepts
 * connections. Returns { url, port, child, output(), stop() }.
 */
export async function startNodeServer({ name, args, env, port, path = '/mcp', timeoutMs = 20000 }) {
  const child = spawn(node22(), ['--require', PRELOAD, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  let log = '';
  const keep = (d) => { log = (log + d).slice(-20000); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((ok) => child.once('exit', (code, signal) => { live.delete(child); ok({ code, signal }); }));
  let exitInfo = null;
  exited.then((info) => { exitInfo = info; });

  const stop = async () => {
    if (exitInfo) return exitInfo;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    const info = await exited;
    clearTimeout(timer);
    return info;
  };

  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exitInfo) throw new Error(`${name} exited (${exitInfo.code ?? exitInfo.signal}) before listening:\n${log}`);
    if (await canConnect(port)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${name} did not listen on 127.0.0.1:${port} within ${timeoutMs} ms:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { name, url: `http://127.0.0.1:${port}${path}`, port, pid: child.pid, output: () => log, stop };
}

/** server-everything, Streamable HTTP at http://127.0.0.1:PORT/mcp. */
export async function startEverything({ port } = {}) {
  port ??= await freePort();
  return startNodeServer({ name: 'server-everything', args: [EVERYTHING_CLI, 'streamableHttp'], env: { PORT: String(port) }, port });
}

/**
 * The SDK's example server simpleStreamableHttp, at http://127.0.0.1:PORT/mcp.
 *
 * With `oauth: true` it runs with `--oauth`: every request needs a Bearer token, and its demo
 * authorization server (in the same process, on `authPort`) serves metadata, dynamic client
 * registration, PKCE S256 and tokens, approving every authorization at once (a redirect to the
 * client's redirect URI, no login page). The example names both servers
 * `http://localhost:PORT` (resource metadata, issuer, endpoints): loopback http, and `url` is
 * then `http://localhost:PORT/mcp`, as the tokens' resource must match. `strict: true` adds
 * `--oauth-strict` (tokens only for that resource).
 */
export async function startSimpleStreamableHttp({ port, oauth = false, authPort, strict = false } = {}) {
  port ??= await freePort();
  if (!oauth) {
    return startNodeServer({ name: 'sdk simpleStreamableHttp', args: [SDK_EXAMPLE_SERVER], env: { MCP_PORT: String(port) }, port });
  }
  authPort ??= await freePort();
  const server = await startNodeServer({
    name: 'sdk simpleStreamableHttp --oauth',
    args: [SDK_EXAMPLE_SERVER, '--oauth', ...(strict ? ['--oauth-strict'] : [])],
    env: { MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    port,
  });
  // The authorization server listens a moment after the MCP server, in the same process.
  const deadline = Date.now() + 10000;
  while (!(await canConnect(authPort))) {
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(`the demo authorization server did not listen on ${authPort}:\n${server.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ...server, url: `http://localhost:${port}/mcp`, authPort, authUrl: `http://localhost:${authPort}` };
}

/** The SDK v2 server of scripts/mcp/modern-server.mjs at http://127.0.0.1:PORT/mcp. */
export async function startModern({ port, legacy = 'stateless' } = {}) {
  port ??= await freePort();
  const server = await startNodeServer({
    name: `sdk v2 server (legacy: ${legacy})`,
    args: [join(ROOT, 'scripts', 'mcp', 'modern-server.mjs')],
    env: { PORT: String(port), LEGACY: legacy },
    port,
  });
  const requests = () => server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  return { ...server, requests };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const which = process.argv[2];
  const port = process.argv[3] ? Number(process.argv[3]) : undefined;
  const start = {
    everything: startEverything,
    simple: startSimpleStreamableHttp,
    'simple-oauth': (o) => startSimpleStreamableHttp({ ...o, oauth: true }),
    modern: startModern,
  }[which];
  if (!start) {
    console.error('usage: node scripts/mcp/start-server.mjs everything|simple|simple-oauth|modern [PORT]');
    process.exit(2);
  }
  const server = await start({ port });
  console.log(`${server.name} listening at ${server.url} (pid ${server.pid}); Ctrl-C stops it`);
  const shutdown = async () => { await server.stop(); process.exit(0); };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
