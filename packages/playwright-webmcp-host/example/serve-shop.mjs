// The site under test for the example: the demo shop on 127.0.0.1, port `SHOP_PORT` (default
// 4173), from `SHOP_ROOT`, else `site/` beside this file (the package ships it), else the
// repository's demo/site. In a project of your own, the config's `webServer` starts your
// site's server instead.
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const root = resolve(
  process.env.SHOP_ROOT ?? (existsSync(join(here, 'site', 'index.html')) ? join(here, 'site') : join(here, '..', '..', '..', 'demo', 'site')),
);
if (!existsSync(join(root, 'index.html'))) throw new Error(`no shop in ${root}: set SHOP_ROOT to a folder with index.html`);
const port = Number(process.env.SHOP_PORT ?? 4173);
const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

createServer(async (request, response) => {
  const path = decodeURIComponent(new URL(request.url, 'http://x').pathname);
  const file = normalize(join(root, path.endsWith('/') ? `${path}index.html` : path));
  if (!file.startsWith(root + sep)) return response.writeHead(403).end();
  try {
    const body = await readFile(file);
    response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
  } catch {
    response.writeHead(404).end('not found');
  }
}).listen(port, '127.0.0.1', () => console.log(`shop on http://127.0.0.1:${port}/`));
