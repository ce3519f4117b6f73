// `make release`: the files a tester installs, in dist/, each named with the version:
//
//   webmcp-host-extension-<version>.zip   the extension (unzip, then "Load unpacked"; also the
//                                          Chrome Web Store's upload: manifest, icons, no tests)
//   playwright-webmcp-host-<version>.tgz  the Playwright Test package (npm install ./<file>)
//   webmcp-host-<version>-<os>-<arch>     the CLI, a release build
//   SHA256SUMS                            `sha256sum -c SHA256SUMS` checks them
//
// `make release` builds the extension first (make build); this script checks that extension/
// is that build (its manifest's version is the crate's), builds the CLI and packs the rest.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { arch, platform } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesOf, writeZip } from '../packages/playwright-webmcp-host/lib/zip.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const PACKAGE = join(ROOT, 'packages', 'playwright-webmcp-host');

/** The crate's version (Cargo.toml), which every part of a release carries. */
export const version = () => {
  const found = readFileSync(join(ROOT, 'Cargo.toml'), 'utf8').match(/^version = "([^"]+)"/m)?.[1];
  if (!found) throw new Error('no version in Cargo.toml');
  return found;
};

/** What of extension/ ships: everything the build wrote but its README (and no test file). */
const ships = (path) => path !== 'README.md' && !/(^|\/)(tests?|fixtures)\//.test(path) && !/\.(map|test\.m?js)$/.test(path);

/**
 * Zips the built extension (extension/) to `to`; resolves to `{files, bytes}`. Refuses a build
 * whose manifest is missing, of another version, or without its icons.
 */
export async function extensionZip(to) {
  const dir = join(ROOT, 'extension');
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) throw new Error('extension/ has no build: run make build first');
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (manifest.version !== version()) {
    throw new Error(`extension/ is version ${manifest.version}, the crate ${version()}: run make build again`);
  }
  for (const icon of Object.values(manifest.icons ?? {})) {
    if (!existsSync(join(dir, icon))) throw new Error(`extension/${icon}, named by the manifest, is missing`);
  }
  if (!manifest.icons?.['128']) throw new Error('the manifest names no 128 px icon (the Web Store needs one)');
  const files = await filesOf(dir, ships);
  const bytes = await writeZip(dir, files, to);
  return { files, bytes };
}

/** Packs the Playwright package into `dir` (npm pack); resolves to the tarball's path. */
export function packPackage(dir) {
  const pkg = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8'));
  if (pkg.version !== version()) throw new Error(`the package is version ${pkg.version}, the crate ${version()}: make them one`);
  mkdirSync(dir, { recursive: true });
  const out = execFileSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: PACKAGE, encoding: 'utf8' });
  const name = out.trim().split('\n').at(-1);
  const path = join(dir, name);
  if (!existsSync(path)) throw new Error(`npm pack wrote no ${name}`);
  return path;
}

const sha256 = (path) => createHash('sha256').update(readFileSync(path)).digest('hex');

async function main() {
  const v = version();
  const dist = join(ROOT, 'dist');
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const step = (text) => console.log(`release: ${text}`);

  step(`the extension ${v}`);
  const zip = join(dist, `webmcp-host-extension-${v}.zip`);
  const { files } = await extensionZip(zip);

  step('the Playwright package (npm pack)');
  const tgz = packPackage(dist);

  step('the CLI (cargo build --release)');
  execFileSync('cargo', ['build', '--release', '--quiet', '--bin', 'webmcp-host'], { cwd: ROOT, stdio: 'inherit' });
  const os = { linux: 'linux', darwin: 'macos', win32: 'windows' }[platform()] ?? platform();
  const cpu = { x64: 'x86_64', arm64: 'aarch64' }[arch()] ?? arch();
  const cli = join(dist, `webmcp-host-${v}-${os}-${cpu}${platform() === 'win32' ? '.exe' : ''}`);
  copyFileSync(join(ROOT, 'target', 'release', `webmcp-host${platform() === 'win32' ? '.exe' : ''}`), cli);

  const made = [zip, tgz, cli];
  writeFileSync(join(dist, 'SHA256SUMS'), made.map((p) => `${sha256(p)}  ${basename(p)}\n`).join(''));
  console.log(`\ndist/ (${files.length} files in the extension):`);
  for (const name of readdirSync(dist).sort()) {
    console.log(`  ${name.padEnd(44)} ${(statSync(join(dist, name)).size / 1024).toFixed(1).padStart(9)} KiB`);
  }
  console.log('\ncheck them with: (cd dist && sha256sum -c SHA256SUMS)');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await main();
}
