// `node scripts/size.mjs [module.wasm]`: what each part of the wasm module costs, by crate.
//
// Reads the release module as cargo writes it (before wasm-bindgen and wasm-opt, so that the
// function names are still there: target/ship/wasm32-unknown-unknown/wasm/webmcp_host.wasm by
// default): the size of every function body, grouped by the crate its (mangled) name starts
// with, and the data segments (string literals and tables, Unicode tables among them) as one
// line. Each part is also gzipped alone, so that its share of the shipped gzip can be told
// (parts compress differently: the sum of their gzips is more than the gzip of the whole).
// The shipped module is smaller (wasm-opt), in about the same proportions. `make bench` prints
// the top of this list; `--all` prints every crate.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { ROOT } from '../tests/support/browser.mjs';

const args = process.argv.slice(2);
const all = args.includes('--all');
const file = args.find((a) => !a.startsWith('--'))
  ?? join(ROOT, 'target', 'ship', 'wasm32-unknown-unknown', 'wasm', 'webmcp_host.wasm');
const bytes = readFileSync(file);

// The module's sections: imports (to count imported functions), code bodies, data, names.
let at = 8;
const leb = () => {
  let value = 0;
  let shift = 0;
  let byte;
  do {
    byte = bytes[at++];
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  } while (byte & 0x80);
  return value;
};
const text = () => {
  const length = leb();
  const out = bytes.subarray(at, at + length).toString('utf8');
  at += length;
  return out;
};
let importedFunctions = 0;
const bodies = [];
const data = [];
const names = new Map();
while (at < bytes.length) {
  const id = bytes[at++];
  const length = leb();
  const end = at + length;
  if (id === 2) {
    for (let n = leb(); n > 0; n -= 1) {
      text();
      text();
      const kind = bytes[at++];
      if (kind === 0) {
        leb();
        importedFunctions += 1;
      } else if (kind === 1) {
        at += 1;
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 2) {
        const flags = leb();
        leb();
        if (flags & 1) leb();
      } else if (kind === 3) {
        at += 2;
      } else {
        throw new Error(`import kind ${kind} not understood`);
      }
    }
  } else if (id === 10) {
    for (let n = leb(); n > 0; n -= 1) {
      const size = leb();
      bodies.push(bytes.subarray(at, at + size));
      at += size;
    }
  } else if (id === 11) {
    data.push(bytes.subarray(at, end));
  } else if (id === 0) {
    const name = text();
    if (name === 'name') {
      while (at < end) {
        const sub = bytes[at++];
        const subLength = leb();
        const subEnd = at + subLength;
        if (sub === 1) {
          for (let n = leb(); n > 0; n -= 1) names.set(leb(), text());
        }
        at = subEnd;
      }
    }
  }
  at = end;
}
if (names.size === 0) throw new Error(`${file} has no function names (build it with cargo, before wasm-opt)`);

// The crate of a mangled Rust name (legacy `_ZN…E` or demangled text); others by prefix.
const crateOf = (name) => {
  let path = name;
  const legacy = /^_ZN(\d+)(.*)$/.exec(name);
  if (legacy) path = legacy[2].slice(0, Number(legacy[1]));
  path = path.replace(/^_?\$LT\$/, '').replace(/^</, '');
  const first = /^[A-Za-z_][A-Za-z0-9_]*/.exec(path)?.[0];
  if (!first) return '(other)';
  if (first === 'webmcp_host' && legacy) {
    // The project's own code, by module: webmcp_host::core::<module> / shell::<module>.
    const parts = [];
    let rest = name.slice(3);
    while (/^\d/.test(rest) && parts.length < 3) {
      const n = Number(/^\d+/.exec(rest)[0]);
      const digits = String(n).length;
      parts.push(rest.slice(digits, digits + n));
      rest = rest.slice(digits + n);
    }
    return parts.slice(0, 3).join('::');
  }
  if (/^(__|wasm_bindgen|wbg)/.test(first)) return 'wasm_bindgen';
  return first.replace(/\$.*$/, '');
};

const groups = new Map();
const add = (key, body) => {
  const group = groups.get(key) ?? { key, raw: 0, parts: [] };
  group.raw += body.length;
  group.parts.push(body);
  groups.set(key, group);
};
bodies.forEach((body, i) => add(crateOf(names.get(i + importedFunctions) ?? ''), body));
for (const section of data) add('(data segments: literals, tables)', section);

const rows = [...groups.values()].map((g) => ({ ...g, gzip: gzipSync(Buffer.concat(g.parts), { level: 9 }).length }));
rows.sort((a, b) => b.raw - a.raw);
const totalRaw = rows.reduce((n, r) => n + r.raw, 0);
const totalGzip = rows.reduce((n, r) => n + r.gzip, 0);
const KiB = (n) => (n / 1024).toFixed(1).padStart(7);
const percent = (n, of) => `${((100 * n) / of).toFixed(1).padStart(5)}%`;
console.log(`${file.replace(`${ROOT}/`, '')}: code and data by crate (before wasm-opt)`);
console.log(`${'part'.padEnd(44)} ${'raw KiB'.padStart(7)} ${'share'.padStart(6)} ${'gzip KiB'.padStart(8)} ${'share'.padStart(6)}`);
const shown = all ? rows : rows.slice(0, 24);
for (const r of shown) {
  console.log(`${r.key.slice(0, 44).padEnd(44)} ${KiB(r.raw)} ${percent(r.raw, totalRaw)} ${KiB(r.gzip).padStart(8)} ${percent(r.gzip, totalGzip)}`);
}
if (!all && rows.length > shown.length) console.log(`(${rows.length - shown.length} more parts; --all lists them)`);
// The parts that exist for JSON Schema validation: jsonschema and what it alone brings in.
const family = /^(jsonschema|referencing|fancy_regex|regex|regex_automata|regex_syntax|aho_corasick|fluent_uri|num_bigint|num_integer|num_traits|fraction|data_encoding|email_address|uuid_simd|ahash|idna)/;
const schema = rows.filter((r) => family.test(r.key));
const sum = (list, key) => list.reduce((n, r) => n + r[key], 0);
console.log(`${'jsonschema and the crates it brings'.padEnd(44)} ${KiB(sum(schema, 'raw'))} ${percent(sum(schema, 'raw'), totalRaw)} ${KiB(sum(schema, 'gzip')).padStart(8)} ${percent(sum(schema, 'gzip'), totalGzip)}   (code only; its Unicode tables are in the data)`);
const own = rows.filter((r) => r.key.startsWith('webmcp_host'));
console.log(`${'webmcp_host itself (its generic code aside)'.padEnd(44)} ${KiB(sum(own, 'raw'))} ${percent(sum(own, 'raw'), totalRaw)} ${KiB(sum(own, 'gzip')).padStart(8)} ${percent(sum(own, 'gzip'), totalGzip)}`);
console.log(`${'total'.padEnd(44)} ${KiB(totalRaw)} ${percent(totalRaw, totalRaw)} ${KiB(totalGzip).padStart(8)} ${percent(totalGzip, totalGzip)}`);
