// Assembles the unpacked extension in extension/: the manifest (with the crate's version),
// the service-worker loader, the wasm module and its glue, the content script and the popup
// (its page and every module of it).
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'extension');
const bindgen = join(root, 'target', 'bindgen');

const version = readFileSync(join(root, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)?.[1];
if (!version) throw new Error('no version in Cargo.toml');

mkdirSync(out, { recursive: true });
for (const entry of readdirSync(out)) if (entry !== 'README.md') rmSync(join(out, entry), { recursive: true });

const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
manifest.version = version;
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);

const copy = (from, to) => {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  cpSync(join(root, from), join(out, to), { recursive: true });
};
copy('src/shell/worker.js', 'worker.js');
copy('target/bindgen/webmcp_host.js', 'webmcp_host.js');
copy('target/bindgen/webmcp_host_bg.wasm', 'webmcp_host_bg.wasm');
// JS snippets the wasm module imports (its I/O primitives), where the glue expects them.
if (existsSync(join(bindgen, 'snippets'))) copy('target/bindgen/snippets', 'snippets');
copy('content-script', 'content-script');
// The popup's page, style and ES modules (views/ included) beside the manifest, where the page
// loads them from (`script-src 'self'`); none may take the place of another file of the extension.
for (const entry of readdirSync(join(root, 'popup'))) {
  if (existsSync(join(out, entry))) throw new Error(`popup/${entry}: extension/${entry} exists already`);
  copy(join('popup', entry), entry);
}
// The side panel is the popup's page on another surface: one markup, two entry points.
const popupHtml = readFileSync(join(root, 'popup', 'popup.html'), 'utf8');
const sidePanelHtml = popupHtml
  .replace('<title>WebMCP Host</title>', '<title>WebMCP Host: side panel</title>')
  .replace('<body data-surface="popup">', '<body data-surface="sidepanel">');
if (!sidePanelHtml.includes('data-surface="sidepanel"')) throw new Error('popup.html: no <body data-surface="popup"> to turn into the side panel');
writeFileSync(join(out, 'sidepanel.html'), sidePanelHtml);

const size = readFileSync(join(bindgen, 'webmcp_host_bg.wasm')).length;
console.log(`extension/ assembled: version ${version}, webmcp_host_bg.wasm ${size} bytes`);
