// WebMCP Host service worker (module). Loads the Rust host compiled to wasm.
//
// A service worker runs its listeners only if they were registered synchronously during the
// first run of this script, so every listener is added here, at load, and waits for the wasm
// module inside itself. No top-level await, no dynamic import().
import init, * as host from './webmcp_host.js';

const scriptStartMs = performance.now();
let readyMs = null;

const ready = init({ module_or_path: new URL('./webmcp_host_bg.wasm', import.meta.url) }).then(() => {
  readyMs = performance.now();
});
ready.catch((error) => console.error('webmcp-host: the wasm module failed to load:', error));
// Runs a previous worker left running (Chrome stopped it mid-run) end now, with a RUN_ERROR.
ready.then(() => host.recover()).catch((error) => console.error('webmcp-host: recovering runs failed:', error));

chrome.runtime.onMessage.addListener((message, sender, sendResponse) => {
  ready
    .then(() => host.handleUiMessage(message, sender))
    .then(sendResponse, (error) => sendResponse({ ok: false, error: String(error?.message ?? error) }));
  return true; // the answer comes asynchronously
});

// The automation surface a QA harness drives (for example through Playwright's
// `serviceWorker.evaluate`). The popup uses the same operations through runtime messages.
const after = (operation) => async (request) => {
  await ready;
  return operation(request);
};

globalThis.webmcpHost = Object.freeze({
  /** Resolves once the host is loaded. */
  ready,
  version: after(() => host.version()),
  /** `({tabId})` → `{tools, problems}` */
  listTools: after((request) => host.listTools(request)),
  /** `({tabId, name, args, frameId?, timeoutMs?})` → `{ok, result | navigated, url | error}` */
  callTool: after((request) => host.callTool(request)),
  /** `({tabId?, prompt | messages, model?, tools?, maxSteps?, context?, runId?, threadId?})` → `{runId, threadId, outcome, events, messages}` */
  run: after((request) => host.run(request)),
  /** `({runId})` → the run's AG-UI events so far */
  events: after((request) => host.events(request)),
  /** `({runId, reason?})` → whether the run was still going */
  stop: after((request) => host.stop(request)),
  /** `({models?, default?, keys?})` → the model registry (keys go to session storage only) */
  configure: after((request) => host.configure(request)),
  /** `({tabId?, prompt | messages, visitorTools?, …as run})` → `{runId, threadId}` at once; the run goes on */
  startRun: after((request) => host.startRun(request)),
  /** `({tabId?})` → the kept runs, newest first: `{runId, threadId, tabId?, prompt, startedMs, state, outcome?, eventCount}` */
  runs: after((request) => host.runs(request ?? {})),
  /** `({runId, since?})` → `{run, events, times, since, total}`, also after a worker restart */
  runLog: after((request) => host.runLog(request)),
  /** `()` → the items waiting for the person: visitor inputs and confirmations of runs without a tab */
  pending: after(() => host.pending()),
  /** `({runId, callId, value})` → whether it was waiting: answers an input or allows a confirmation */
  answer: after((request) => host.answer(request)),
  /** `({runId, callId, reason?})` → whether it was waiting: declines an input or a confirmation */
  decline: after((request) => host.decline(request)),
  /** `()` → `{models, default, servers, keys: [{ref, masked}], serverStates, presets, context7, extensionOrigin}` */
  settings: after(() => host.settings()),
  /** `({name} | {model})` → `{ok, message, models?}`: the model's endpoint and key, checked */
  testModel: after((request) => host.testModel(request)),
  /** `({name} | {server})` → `{ok, tools, names, error?, checkedMs}`: connects, lists, closes */
  checkServer: after((request) => host.checkServer(request)),
  /** `({server, origin, enabled, tools?})` → the exposures: an MCP server's tools offered to (or taken back from) an origin's own WebMCP */
  expose: after((request) => host.expose(request)),
  /** `()` → the exposures: `[{server, origins, tools?}]` */
  exposures: after(() => host.exposures()),
  /** `({server, remember?, clientId?, clientSecret?, inTab?})` → `{ok, signedIn, issuer?, scope?, expiresAtMs?, kept?, error?}`: MCP authorization (OAuth) for a configured server; never a token */
  signIn: after((request) => host.signIn(request)),
  /** `({server})` → `{ok, signedOut}`: the server's tokens forgotten */
  signOut: after((request) => host.signOut(request)),
  /** `()` → each configured server's sign-in: `[{server, url, signedIn, kept?, issuer?, scope?, expiresAtMs?, refreshable?, state?}]` */
  authState: after(() => host.authState()),
  /** Milliseconds since the worker started: when this script ran, and when the host was ready. */
  startup: () => ({ scriptStartMs, readyMs }),
});
