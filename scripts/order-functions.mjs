// `node scripts/order-functions.mjs module.wasm`: renames the module's functions (its `name`
// section only, in place) so that `wasm-opt --reorder-functions-by-name` (the Makefile's build)
// puts alike code side by side, where gzip finds its repeats in its 32 KiB window.
//
// A function's new name is its Rust path with every generic argument list cut to `~`, then its
// body's size: the instances of one generic function sit together, and the implementations of
// one trait method (`Debug::fmt`, `Deserialize::deserialize`, a visitor's `visit_map`) sit
// together, whatever their type, smallest first; its index follows, so that names stay unique
// and ties keep their order. Nothing but the names changes, and wasm-opt strips them after the
// sort (`--strip-debug`): the code is the same, in another order. Measured on the shipped
// module (docs/testing.md, "Where the bytes go"): sorted by the names wasm-bindgen writes
// (the demangled paths), 1,175 KiB gzip; by these, 1,161 KiB; unsorted, 1,251 KiB.
import { readFileSync, writeFileSync } from 'node:fs';

const file = process.argv[2];
if (!file) throw new Error('usage: node scripts/order-functions.mjs module.wasm');
const bytes = readFileSync(file);

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
const skipName = () => {
  const length = leb();
  at += length;
};
const encodeLeb = (n) => {
  const out = [];
  do {
    let byte = n % 128;
    n = Math.floor(n / 128);
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
};
const encodeName = (text) => {
  const utf8 = Buffer.from(text, 'utf8');
  return Buffer.concat([encodeLeb(utf8.length), utf8]);
};

// The sections, as they are (the `name` section's place kept); the imported functions (their
// indices come first) and each function body's size; the `name` section's subsections, the
// function names (subsection 1) read.
const sections = [bytes.subarray(0, 8)];
let importedFunctions = 0;
const bodySizes = [];
let nameAt = -1;
const subsections = [];
let names = null;
const limits = () => {
  const flags = leb();
  leb();
  if (flags & 1) leb();
};
while (at < bytes.length) {
  const start = at;
  const id = bytes[at++];
  const end = leb() + at;
  if (id === 2) {
    for (let n = leb(); n > 0; n -= 1) {
      skipName();
      skipName();
      const kind = bytes[at++];
      if (kind === 0) {
        leb();
        importedFunctions += 1;
      } else if (kind === 1) {
        at += 1;
        limits();
      } else if (kind === 2) {
        limits();
      } else if (kind === 3) {
        at += 2;
      } else if (kind === 4) {
        at += 1;
        leb();
      } else {
        throw new Error(`import kind ${kind} not understood`);
      }
    }
  } else if (id === 10) {
    for (let n = leb(); n > 0; n -= 1) {
      const size = leb();
      bodySizes.push(size);
      at += size;
    }
  } else if (id === 0) {
    const length = leb();
    const isName = bytes.subarray(at, at + length).toString('utf8') === 'name';
    at += length;
    if (isName) {
      while (at < end) {
        const subStart = at;
        const sub = bytes[at++];
        const subEnd = leb() + at;
        if (sub === 1) {
          names = [];
          for (let n = leb(); n > 0; n -= 1) {
            const index = leb();
            const nameLength = leb();
            names.push([index, bytes.subarray(at, at + nameLength).toString('utf8')]);
            at += nameLength;
          }
        }
        subsections.push([sub, bytes.subarray(subStart, subEnd)]);
        at = subEnd;
      }
      nameAt = sections.length;
      sections.push(null);
      continue;
    }
  }
  sections.push(bytes.subarray(start, end));
  at = end;
}
if (!names) throw new Error(`${file} has no function names (wasm-bindgen keeps them)`);

/** `a<b<c>>::d` → `a~::d`: every generic argument list, nested or not, cut to `~`. */
const withoutGenerics = (path) => {
  let cut = path;
  let before;
  do {
    before = cut;
    cut = cut.replace(/<[^<>]*>/g, '~');
  } while (cut !== before);
  return cut;
};
/** A function's group: `<Type as Trait>::method` → `Trait::method ~`, `<Type>::method` →
 * `Type::method`, any other path as it is; generic arguments cut. */
const group = (name) => {
  // wasm-bindgen's demangled names: `path::h0123456789abcdef`, or `crate[0123abcd]::path`.
  const path = name.replace(/::h[0-9a-f]{16}$/, '').replace(/\[[0-9a-f]+\]/g, '');
  if (!path.startsWith('<')) return withoutGenerics(path);
  let depth = 0;
  let close = 0;
  for (; close < path.length; close += 1) {
    if (path[close] === '<') depth += 1;
    else if (path[close] === '>' && --depth === 0) break;
  }
  const head = path.slice(1, close);
  const rest = path.slice(close + 1);
  const as = head.lastIndexOf(' as ');
  if (as < 0) return withoutGenerics(head + rest);
  return `${withoutGenerics(head.slice(as + 4) + rest)} ~`;
};

const renamed = names.map(([index, name]) => {
  const size = bodySizes[index - importedFunctions] ?? 0;
  const sortKey = `${group(name)} ${String(size).padStart(8, '0')}`;
  return [index, `${sortKey}\u0001${String(index).padStart(6, '0')}`];
});
const functionNames = Buffer.concat([
  encodeLeb(renamed.length),
  ...renamed.map(([index, name]) => Buffer.concat([encodeLeb(index), encodeName(name)])),
]);
const nameSection = Buffer.concat([
  encodeName('name'),
  ...subsections.map(([sub, raw]) =>
    sub === 1 ? Buffer.concat([Buffer.from([1]), encodeLeb(functionNames.length), functionNames]) : raw,
  ),
]);
sections[nameAt] = Buffer.concat([Buffer.from([0]), encodeLeb(nameSection.length), nameSection]);
writeFileSync(file, Buffer.concat(sections));
