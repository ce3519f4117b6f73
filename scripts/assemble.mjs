// Assembles the unpacked extension in extension/: the manifest (with the crate's version),
// the service worker (one module: the loader, the wasm module's glue and the JS snippets it
// imports, bundled by esbuild), the wasm module, the content scripts and the popup (its page
// and every module of it).
//
// The worker is one file because a module graph is fetched level by level when Chrome starts
// the worker: the loader, then the glue, then the snippets cost about 40 ms more on a first
// start than the same code in one module (`make bench`, docs/testing.md).
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { ICON_SIZES, iconPng } from './icons.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'extension');
const bindgen = join(root, 'target', 'bindgen');

const version = readFileSync(join(root, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)?.[1];
if (!version) throw new Error('no version in Cargo.toml');

mkdirSync(out, { recursive: true });
for (const entry of readdirSync(out)) if (entry !== 'README.md') rmSync(join(out, entry), { recursive: true });

const manifest = JSON.parse(readFileSync(join(root, 'manifest.json'), 'utf8'));
manifest.version = version;
// The icons the toolbar, chrome://extensions and the Web Store show (scripts/icons.mjs).
mkdirSync(join(out, 'icons'), { recursive: true });
const icons = Object.fromEntries(ICON_SIZES.map((size) => [String(size), `icons/icon-${size}.png`]));
for (const [size, path] of Object.entries(icons)) writeFileSync(join(out, path), iconPng(Number(size)));
manifest.icons = icons;
manifest.action.default_icon = Object.fromEntries(Object.entries(icons).filter(([size]) => Number(size) <= 48));
writeFileSync(join(out, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);

const copy = (from, to) => {
  mkdirSync(dirname(join(out, to)), { recursive: true });
  cpSync(join(root, from), join(out, to), { recursive: true });
};
// The loader goes beside the glue and its snippets, whose paths it and the glue import.
cpSync(join(root, 'src', 'shell', 'worker.js'), join(bindgen, 'worker.js'));
buildSync({
  entryPoints: [join(bindgen, 'worker.js')],
  bundle: true,
  format: 'esm',
  target: 'chrome120',
  outfile: join(out, 'worker.js'),
  logLevel: 'warning',
  // wasm-bindgen's glue repeats keys in its import object; harmless, and not ours to fix.
  logOverride: { 'duplicate-object-key': 'silent' },
});
copy('target/bindgen/webmcp_host_bg.wasm', 'webmcp_host_bg.wasm');
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
