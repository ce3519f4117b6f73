// A static file server on 127.0.0.1 for fixture and demo pages.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/**
 * Serves `root` on 127.0.0.1 (port 0: any free port), and each of `mounts` (`{'/vendor/': dir}`)
 * under its prefix. Resolves to `{url, close}`; the same server also answers as `localhost`
 * (another origin), for cross-origin frames.
 */
export async function serve(root, port = 0, { mounts = {} } = {}) {
  const server = createServer(async (request, response) => {
    let path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
    let base = root;
    for (const [prefix, dir] of Object.entries(mounts)) {
      if (path.startsWith(prefix)) {
        base = dir;
        path = `/${path.slice(prefix.length)}`;
        break;
      }
    }
    const file = normalize(join(base, path.endsWith('/') ? `${path}index.html` : path));
    if (!file.startsWith(normalize(base) + sep)) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      const headers = { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' };
      // `?sandboxed` serves the page as a sandboxed document: its origin is opaque ("null").
      if (/[?&]sandboxed\b/.test(request.url)) headers['content-security-policy'] = 'sandbox allow-scripts';
      // `?no-tools` serves the page with WebMCP blocked by its Permissions Policy.
      if (/[?&]no-tools\b/.test(request.url)) headers['permissions-policy'] = 'tools=()';
      // `?site-keyed` asks for a site-keyed agent cluster (`window.originAgentCluster` false).
      if (/[?&]site-keyed\b/.test(request.url)) headers['origin-agent-cluster'] = '?0';
      response.writeHead(200, headers);
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const { port: bound } = server.address();
  return {
    url: `http://127.0.0.1:${bound}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
