// ZIP archives of a folder, written and read with Node's own zlib: the extension's release is
// a zip (what Chrome's "Load unpacked" needs once unzipped, and what the Chrome Web Store takes
// as an upload), and `extensionPath` / WEBMCP_HOST_EXTENSION may name one.
//
// Only what such archives need: files deflated (or stored), no encryption, no ZIP64 (an entry
// or archive over 4 GiB is refused), UTF-8 names, fixed timestamps (the same folder always
// gives the same bytes).
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { crc32, deflateRawSync, inflateRawSync } from 'node:zlib';

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
// 1980-01-01 00:00, the earliest DOS time: builds of one tree zip to the same bytes.
const DOS_DATE = (0 << 9) | (1 << 5) | 1;
const UTF8 = 1 << 11;
/** At most this many entries are read from an archive, and this many bytes unpacked in all. */
const MAX_ENTRIES = 10_000;
const MAX_UNPACKED_BYTES = 512 * 1024 * 1024;

/** Every file under `dir`, as paths relative to it with `/`, sorted; `keep(path)` filters. */
export async function filesOf(dir, keep = () => true) {
  const out = [];
  const walk = async (at) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const full = join(at, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) {
        const path = relative(dir, full).split(sep).join('/');
        if (keep(path)) out.push(path);
      }
    }
  };
  await walk(dir);
  return out.sort();
}

/** Writes the zip of `files` (paths relative to `dir`) to `to`; resolves to its size in bytes. */
export async function writeZip(dir, files, to) {
  const parts = [];
  const central = [];
  let offset = 0;
  for (const path of files) {
    const data = await readFile(join(dir, path));
    const deflated = deflateRawSync(data, { level: 9 });
    const [method, body] = deflated.length < data.length ? [8, deflated] : [0, data];
    const name = Buffer.from(path, 'utf8');
    const crc = crc32(data);
    if (data.length > 0xffffffff || offset > 0xffffffff) throw new Error(`${path}: too large for a zip without ZIP64`);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(UTF8, 6);
    local.writeUInt16LE(method, 8);
    local.writeUInt16LE(0, 10);
    local.writeUInt16LE(DOS_DATE, 12);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(body.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(CENTRAL, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt16LE(UTF8, 8);
    entry.writeUInt16LE(method, 10);
    entry.writeUInt16LE(0, 12);
    entry.writeUInt16LE(DOS_DATE, 14);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(body.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(name.length, 28);
    entry.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, name);
    parts.push(local, name, body);
    offset += local.length + name.length + body.length;
  }
  const directory = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(END, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  const zip = Buffer.concat([...parts, directory, end]);
  await mkdir(dirname(to), { recursive: true });
  await writeFile(to, zip);
  return zip.length;
}

/**
 * Unpacks the zip at `file` into the folder `to`; resolves to the paths written. An entry whose
 * path would leave `to`, an encrypted or unknown compression, a bad checksum, or more than
 * 10,000 entries or 512 MiB unpacked is an error naming the archive.
 */
export async function unzip(file, to) {
  const zip = await readFile(file);
  const fail = (why) => new Error(`${file} is not a zip this package can read: ${why}`);
  const endAt = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (endAt < 0 || endAt + 22 > zip.length) throw fail('no end of central directory');
  const count = zip.readUInt16LE(endAt + 10);
  if (count > MAX_ENTRIES) throw fail(`${count} entries, over ${MAX_ENTRIES}`);
  let at = zip.readUInt32LE(endAt + 16);
  const root = resolve(to);
  const written = [];
  let unpacked = 0;
  for (let i = 0; i < count; i += 1) {
    if (at + 46 > zip.length || zip.readUInt32LE(at) !== CENTRAL) throw fail(`entry ${i} of the directory is broken`);
    const flags = zip.readUInt16LE(at + 8);
    const method = zip.readUInt16LE(at + 10);
    const crc = zip.readUInt32LE(at + 16);
    const packed = zip.readUInt32LE(at + 20);
    const size = zip.readUInt32LE(at + 24);
    const nameLength = zip.readUInt16LE(at + 28);
    const extra = zip.readUInt16LE(at + 30);
    const comment = zip.readUInt16LE(at + 32);
    const localAt = zip.readUInt32LE(at + 42);
    const name = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    at += 46 + nameLength + extra + comment;
    if (flags & 1) throw fail(`${name} is encrypted`);
    if (method !== 0 && method !== 8) throw fail(`${name} uses compression method ${method}`);
    const target = resolve(root, name);
    if (target !== root && !target.startsWith(root + sep)) throw fail(`${name} would be written outside the folder`);
    if (name.endsWith('/')) continue;
    unpacked += size;
    if (unpacked > MAX_UNPACKED_BYTES) throw fail(`over ${MAX_UNPACKED_BYTES} bytes unpacked`);
    if (localAt + 30 > zip.length || zip.readUInt32LE(localAt) !== LOCAL) throw fail(`${name}: its local header is broken`);
    const start = localAt + 30 + zip.readUInt16LE(localAt + 26) + zip.readUInt16LE(localAt + 28);
    const body = zip.subarray(start, start + packed);
    const data = method === 8 ? inflateRawSync(body, { maxOutputLength: Math.max(size, 1) }) : body;
    if (data.length !== size || crc32(data) !== crc) throw fail(`${name} does not match its checksum`);
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, data);
    written.push(name);
  }
  return written;
}
