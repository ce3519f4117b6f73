// Writes tests/audit/pages/NAME.tools.json: the WebMCP tools each fixture page of
// tests/fixtures/ offers, with its frames' tools, as a tools file `webmcp-host audit` reads.
//
// Without a browser: each page's inline scripts run in a Node `vm` context whose
// `document.modelContext` records `registerTool` (a page that installs its own
// `document.modelContext` is asked `getTools()`, for 100 ms), every other DOM call is a harmless stub,
// and timers never fire. Declarative forms (`<form toolname>`) become tools the way Chrome
// derives them: one string property per named control, `required` controls required, and a
// `declarative` field saying whether the form auto-submits and its method. Frames come from
// `<iframe src>` and from a script setting an element's `src`; each frame is numbered in the
// order found, its tools carry that `frameId`. Run: `node tests/audit/extract-pages.mjs`;
// with `--check` it writes nothing and exits 1 when a file is not what the pages give
// (tests/support/audit-pages.test.mjs).

import { readFileSync, writeFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join, dirname, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

const here = dirname(fileURLToPath(import.meta.url));
const fixtures = join(here, '..', 'fixtures');
const out = join(here, 'pages');

// Anything: every property is another anything, every call returns one, every set is kept.
const anything = (sets) => {
  const target = function () {};
  const proxy = new Proxy(target, {
    get: (_, key) => (key === Symbol.toPrimitive ? () => '' : key === 'then' ? undefined : proxy),
    apply: () => proxy,
    construct: () => proxy,
    set: (_, key, value) => { sets.push([key, value]); return true; },
  });
  return proxy;
};

const plain = (v) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
const describe = (tool) => {
  const entry = { name: tool.name, description: tool.description };
  if (tool.title !== undefined) entry.title = tool.title;
  if (tool.inputSchema !== undefined) entry.inputSchema = plain(tool.inputSchema);
  if (tool.annotations !== undefined) entry.annotations = plain(tool.annotations);
  return entry;
};

const attrs = (tag) => {
  const found = {};
  for (const m of tag.matchAll(/([a-zA-Z-]+)(?:\s*=\s*("([^"]*)"|'([^']*)'|([^\s>]+)))?/g)) {
    found[m[1].toLowerCase()] = m[3] ?? m[4] ?? m[5] ?? '';
  }
  return found;
};

const forms = (html) => [...html.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/gi)]
  .map(([, head, body]) => [attrs(head), body])
  .filter(([form]) => 'toolname' in form)
  .map(([form, body]) => {
    const properties = {};
    const required = [];
    for (const [, , tag] of body.matchAll(/<(input|select|textarea)\b([^>]*)>/gi)) {
      const control = attrs(tag);
      if (!control.name || ['submit', 'button', 'reset'].includes(control.type)) continue;
      const property = { type: 'string' };
      if (control.toolparamdescription) property.description = control.toolparamdescription;
      properties[control.name] = property;
      if ('required' in control) required.push(control.name);
    }
    return {
      name: form.toolname,
      ...('tooldescription' in form ? { description: form.tooldescription } : {}),
      inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}) },
      declarative: { autoSubmit: 'toolautosubmit' in form, method: (form.method || 'get').toLowerCase() },
    };
  });

async function page(path) {
  const html = readFileSync(path, 'utf8');
  const registered = [];
  const sets = [];
  const modelContext = {
    registerTool: (tool) => { registered.push(describe(tool)); },
    unregisterTool: () => {},
    addEventListener: () => {},
    getTools: async () => [],
  };
  const document = anything(sets);
  const location = { href: 'http://127.0.0.1:8000/page.html', origin: 'http://127.0.0.1:8000', protocol: 'http:', port: '8000', host: '127.0.0.1:8000', hostname: '127.0.0.1', search: '', pathname: '/page.html' };
  const context = {
    location, navigator: {}, console: { log() {}, warn() {}, error() {} },
    setTimeout: () => 0, setInterval: () => 0, clearTimeout() {}, clearInterval() {},
    fetch: () => Promise.reject(new Error('no network')), performance: { now: () => 0 },
    AbortController, URL, JSON, Promise, Error, String, Number, Object, Array, Math, Map, Set,
  };
  const docTarget = { modelContext, getElementById: () => anything(sets), querySelector: () => anything(sets), querySelectorAll: () => [], addEventListener() {}, createElement: () => anything(sets), body: anything(sets) };
  context.document = new Proxy(docTarget, {
    get: (t, key) => (key in t ? t[key] : document[key]),
    set: (t, key, value) => { t[key] = value; return true; },
  });
  context.window = context;
  context.globalThis = context;
  vm.createContext(context);
  for (const [, attributes, code] of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    if (/\bsrc\s*=/.test(attributes)) continue;
    try {
      vm.runInContext(code, context, { timeout: 2000 });
    } catch (error) {
      registered.push({ error: String(error) });
    }
  }
  await new Promise((resolve) => setImmediate(resolve));
  if (docTarget.modelContext !== modelContext && typeof docTarget.modelContext?.getTools === 'function') {
    // A page that never answers (or answers too late) offers nothing.
    const late = new Promise((resolve) => setTimeout(() => resolve([]), 100));
    const listed = await Promise.race([docTarget.modelContext.getTools(), late]);
    for (const tool of listed ?? []) registered.push(describe(tool));
  }
  const frames = [...html.matchAll(/<iframe\b([^>]*)>/gi)].map(([, a]) => attrs(a).src).filter(Boolean);
  for (const [key, value] of sets) {
    if (key === 'src' && typeof value === 'string') frames.push(new URL(value).pathname.replace(/^\//, ''));
  }
  return { tools: [...forms(html), ...registered.filter((t) => !t.error)], frames };
}

const walk = (dir) => readdirSync(dir).flatMap((name) => {
  const path = join(dir, name);
  return statSync(path).isDirectory() ? walk(path) : name.endsWith('.html') ? [path] : [];
});

const check = process.argv.includes('--check');
const stale = [];
if (!check) mkdirSync(out, { recursive: true });
for (const path of walk(fixtures).sort()) {
  const top = await page(path);
  const entries = top.tools.map((t) => ({ ...t, frameId: 0 }));
  let frameId = 0;
  for (const src of top.frames) {
    frameId += 1;
    const child = await page(join(fixtures, src.includes('/') ? src : join(relative(fixtures, dirname(path)), src)));
    entries.push(...child.tools.map((t) => ({ ...t, frameId })));
  }
  const name = relative(fixtures, path).replace(/\.html$/, '').replaceAll('/', '-');
  // Pretty unless large (the caps page's giant schema stays one line).
  const text = JSON.stringify(entries, null, 2);
  const file = join(out, `${name}.tools.json`);
  const wanted = `${text.length > 20000 ? JSON.stringify(entries) : text}\n`;
  if (!check) {
    writeFileSync(file, wanted);
    console.log(`${name}: ${entries.length} tools`);
  } else if ((() => { try { return readFileSync(file, 'utf8'); } catch { return null; } })() !== wanted) {
    stale.push(relative(join(here, '..', '..'), file));
  }
}
if (stale.length) {
  console.error(`not what the fixture pages give (run node tests/audit/extract-pages.mjs): ${stale.join(', ')}`);
  process.exit(1);
}
