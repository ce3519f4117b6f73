// WebMCP Host service worker (module). Loads the Rust host compiled to wasm.
//
// A service worker runs its listeners only if they were registered synchronously during the
// first run of this script, so every listener is added here, at load, and waits for the wasm
// module inside itself. No top-level await, no dynamic import().
import init, * as host from './webmcp_host.js';

// Settings and sign-ins in chrome.storage.local are closed to content scripts (renderers a page
// may compromise), at every start of this worker, which starts with the browser (`onStartup`).
chrome.storage.local.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' }).catch((e) => console.error('webmcp-host:', e));
chrome.runtime.onStartup.addListener(() => {});

const scriptStartMs = performance.now();
let compiledMs = null;
let readyMs = null;

// The module is compiled as its response streams in, then instantiated: the start's two phases.
const compiled = WebAssembly.compileStreaming(fetch(new URL('./webmcp_host_bg.wasm', import.meta.url))).then((module) => {
  compiledMs = performance.now();
  return module;
});
const ready = init({ module_or_path: compiled }).then(() => {
  readyMs = performance.now();
});
ready.catch((error) => console.error('webmcp-host: the wasm module failed to load:', error));
// Runs a previous worker left running (Chrome stopped it mid-run) end now, with a RUN_ERROR.
ready.then(() => host.recover()).catch((error) => console.error('webmcp-host: recovering runs failed:', error));

// A setting changed by another of the extension's contexts: what the host kept of it is
// forgotten (the worker's own writes forget it themselves).
chrome.storage.onChanged.addListener((changes, area) => {
  ready.then(() => host.storageChanged(area, Object.keys(changes))).catch(() => {});
});

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  ready
    .then(() => host.handleMessage(message, sender))
    .then(sendResponse, (error) => sendResponse({ ok: false, error: String(error?.message ?? error) }));
  return true; // the answer comes asynchronously
});

// The automation surface a QA harness drives (for example through Playwright's
// `serviceWorker.evaluate`): `webmcpHost[op](request)` for every operation the host lists
// (`host.operations()`; the docs give each one's request and value), resolving to its value or
// throwing its error. The popup asks the same operations through runtime messages.
const operations = ready.then(() => new Set(host.operations()));
const operation = (name) => async (request) => {
  if (!(await operations).has(name)) throw new TypeError(`webmcpHost.${name} is not an operation`);
  const answer = await host.call(name, request ?? {});
  if (answer?.ok) return answer.value;
  throw new Error(answer?.error ?? `no answer to ${name}`);
};
// What a harness sets in the worker: the repair hook (`webmcpHost.repairHook(fn | null)`) and
// middleware layers around every tool call (`webmcpHost.use(fn)`, which returns their removal).
const hooks = { repair: null, layers: [] };
Object.defineProperty(globalThis, 'webmcpHostHooks', { value: hooks });
const repairHook = (fn) => {
  if (fn !== null && typeof fn !== 'function') throw new TypeError('repairHook takes a function or null');
  hooks.repair = fn;
};
const use = (layer) => {
  if (typeof layer !== 'function') throw new TypeError('use takes a function (call, next) => result');
  hooks.layers.push(layer);
  return () => {
    const at = hooks.layers.indexOf(layer);
    if (at >= 0) hooks.layers.splice(at, 1);
  };
};
// The operations are known once the module is loaded; until then any name may be one.
let known = null;
operations.then((names) => { known = names; }, () => {});
globalThis.webmcpHost = new Proxy(
  Object.freeze({
    /** Resolves once the host is loaded. */
    ready,
    /** Milliseconds since the worker started: when this script ran, the wasm module was compiled, and the host was ready. */
    startup: () => ({ scriptStartMs, compiledMs, readyMs }),
    /** The names of the host's operations, as it lists them. */
    operations: async () => [...(await operations)],
    /** Sets the repair hook, `({raw, name, error, tools}) => {name, arguments} | null` (null: none). */
    repairHook,
    /** Adds a middleware layer `async (call, next) => ({ok, result} | {ok: false, error})`; returns its removal. */
    use,
  }),
  {
    get: (fixed, name) => {
      if (Object.hasOwn(fixed, name)) return fixed[name];
      if (typeof name !== 'string' || name === 'then' || (known && !known.has(name))) return undefined;
      return operation(name);
    },
  },
);
