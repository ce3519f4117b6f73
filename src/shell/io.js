// I/O primitives for the wasm shell: fetch with a streaming body and an abort handle,
// storage, the clock, timers and Chrome's built-in model. No logic: the Rust shell decides.

/** Starts a request; resolves to a handle once the status and headers have arrived. */
export async function startFetch(url, method, headers, body) {
  const controller = new AbortController();
  const handle = { abort: () => controller.abort() };
  const response = await fetch(url, {
    method,
    headers,
    body: method === 'GET' ? undefined : body,
    signal: controller.signal,
    redirect: 'error',
    credentials: 'omit',
    cache: 'no-store',
  });
  const reader = response.body ? response.body.getReader() : null;
  const decoder = new TextDecoder();
  handle.status = response.status;
  handle.header = (name) => response.headers.get(name);
  /** The next piece of the body as text, or null at its end. */
  handle.read = async () => {
    if (!reader) return null;
    const { done, value } = await reader.read();
    if (done) {
      const rest = decoder.decode();
      return rest ? rest : null;
    }
    return decoder.decode(value, { stream: true });
  };
  return handle;
}

/** A fetch handle's status (0 without one). */
export function fetchStatus(handle) {
  return handle?.status ?? 0;
}

/** A header of a fetch handle's answer, or undefined. */
export function fetchHeader(handle, name) {
  return handle?.header?.(name) ?? undefined;
}

export function abortFetch(handle) {
  handle?.abort?.();
}

export async function storageGet(area, key) {
  const store = chrome.storage?.[area];
  if (!store) throw new Error(`chrome.storage.${area} is not available`);
  const found = await store.get(key);
  return found[key] ?? null;
}

export async function storageSet(area, key, value) {
  const store = chrome.storage?.[area];
  if (!store) throw new Error(`chrome.storage.${area} is not available`);
  await store.set({ [key]: value });
}

export async function storageRemove(area, key) {
  await chrome.storage?.[area]?.remove(key);
}

export async function storageKeys(area) {
  const store = chrome.storage?.[area];
  if (!store) throw new Error(`chrome.storage.${area} is not available`);
  return store.getKeys();
}

export async function storageAll(area) {
  const store = chrome.storage?.[area];
  if (!store) throw new Error(`chrome.storage.${area} is not available`);
  return store.get(null);
}

/**
 * Keeps the service worker from idling out (an extension API call every `ms` resets Chrome's
 * 30 s idle timer) until the returned function is called.
 */
export function keepAlive(ms) {
  const timer = setInterval(() => {
    chrome.runtime?.getPlatformInfo?.()?.catch?.(() => {});
  }, ms);
  return () => clearInterval(timer);
}

export function nowMs() {
  return Date.now();
}

/** Minutes east of UTC (the opposite sign of getTimezoneOffset). */
export function utcOffsetMinutes() {
  return -new Date().getTimezoneOffset();
}

/** POSTs bytes; resolves to the answer's status, or 0 when it failed or took over `ms`. */
export async function postBytes(url, headers, body, ms) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  const init = { method: 'POST', headers, body: body.slice(), signal: controller.signal };
  try {
    const response = await fetch(url, { ...init, redirect: 'error', credentials: 'omit', cache: 'no-store' });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 0;
  } finally {
    clearTimeout(timer);
  }
}

/** A tab's top frame as `webNavigation` describes it (its URL without the `tabs` permission), or null. */
function topFrame(tabId) {
  return chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
}

/**
 * A tab's page (`{url, title}`) and, when it is the visible tab of its window, its screenshot
 * (`screenshot`: a PNG data URL, or `screenshotError`); `userAgent` and `version` (the
 * manifest's) too. Chrome allows the capture with host access to the page or `activeTab`.
 */
export async function tabSnapshot(tabId) {
  const out = { userAgent: navigator.userAgent, version: chrome.runtime.getManifest().version };
  if (typeof tabId !== 'number') return { ...out, screenshotError: 'the run had no tab' };
  const tab = await chrome.tabs.get(tabId).catch(() => null);
  if (!tab) return { ...out, screenshotError: `tab ${tabId} is closed` };
  // Without the `tabs` permission Chrome hides a tab's URL and title; webNavigation has the URL.
  const top = await topFrame(tabId);
  out.page = { url: top?.url ?? tab.url ?? '', title: tab.title ?? '' };
  if (!tab.active) return { ...out, screenshotError: `tab ${tabId} is not the visible tab of its window` };
  try {
    out.screenshot = await chrome.tabs.captureVisibleTab(tab.windowId, { format: 'png' });
  } catch (error) {
    out.screenshotError = `Chrome refused the screenshot: ${error?.message ?? error}`;
  }
  return out;
}

/**
 * `evaluate({reload: true})`: brings the tab back to `url` freshly loaded (reloaded when its top
 * frame shows that URL, else navigated there) and resolves once its top frame has loaded that
 * URL (`webNavigation.onCompleted`, frame 0). A page that loads another URL meanwhile (its own
 * navigation, still under way when this one began) is brought back again, three times at most.
 * Rejects, saying why, when the tab is closed, Chrome refuses, the load fails, or `ms` pass.
 */
export async function reloadTab(tabId, url, ms) {
  const deadline = Date.now() + ms;
  for (let attempt = 1; ; attempt++) {
    const landed = await loadOnce(tabId, url, deadline);
    if (landed === url) return;
    if (attempt === 3) throw new Error(`the page went on to ${landed} each time ${url} was loaded`);
  }
}

/**
 * Loads `url` in the tab once (a crawl's page); resolves with the URL its top frame loaded,
 * wherever a redirect or the page took it (the caller checks where).
 */
export async function loadTab(tabId, url, ms) {
  return loadOnce(tabId, url, Date.now() + ms);
}

/**
 * One load of `url` in the tab; resolves with the URL its top frame loaded next. Only a new
 * document counts: the completion of the document shown before (a load still under way when
 * this one was asked) is not this load's.
 */
async function loadOnce(tabId, url, deadline) {
  const top = await topFrame(tabId);
  if (!top) throw new Error(`tab ${tabId} is closed`);
  let settle;
  const loaded = new Promise((resolve, reject) => (settle = { resolve, reject }));
  const old = top.documentId;
  const top0 = (details) =>
    details.tabId === tabId && details.frameId === 0 && (old === undefined || details.documentId !== old);
  const completed = (details) => top0(details) && settle.resolve(details.url);
  // A load cut short by another navigation (`net::ERR_ABORTED`) ends in that one's completion.
  const failed = (details) =>
    top0(details) && details.error !== 'net::ERR_ABORTED' && settle.reject(new Error(`the page did not load (${details.error})`));
  const removed = (id) => id === tabId && settle.reject(new Error(`tab ${tabId} was closed`));
  const events = [
    [chrome.webNavigation.onCompleted, completed],
    [chrome.webNavigation.onErrorOccurred, failed],
    [chrome.tabs.onRemoved, removed],
  ];
  events.forEach(([event, listener]) => event.addListener(listener));
  const left = Math.max(0, deadline - Date.now());
  const timer = setTimeout(() => settle.reject(new Error(`the page did not finish loading within ${Math.round(left / 1000)} s`)), left);
  try {
    if (top.url === url) await chrome.tabs.reload(tabId);
    else await chrome.tabs.update(tabId, { url });
    return await loaded;
  } finally {
    clearTimeout(timer);
    events.forEach(([event, listener]) => event.removeListener(listener));
  }
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The sign-in tab: opens a tab on about:blank (so that every navigation of it is heard), tells
 * `heard('opened', tabId)`, loads `url` in it, and passes each of the tab events below to
 * `heard(name, a, b)` until that returns true or `ms` pass. The tab is closed in the end.
 */
export async function watchTab(url, heard, ms) {
  const names = ['onUpdated', 'onErrorOccurred', 'onRemoved'];
  const events = [chrome.tabs.onUpdated, chrome.webNavigation.onErrorOccurred, chrome.tabs.onRemoved];
  let done;
  const ended = new Promise((resolve) => (done = resolve));
  const listeners = names.map((name) => (a, b) => heard(name, a, b) && done());
  events.forEach((event, i) => event.addListener(listeners[i]));
  let tabId;
  try {
    tabId = (await chrome.tabs.create({ url: 'about:blank', active: true })).id;
    if (tabId === undefined) throw new Error('the sign-in tab has no id');
    heard('opened', tabId);
    await chrome.tabs.update(tabId, { url });
    await Promise.race([ended, sleep(ms)]);
  } finally {
    events.forEach((event, i) => event.removeListener(listeners[i]));
    if (tabId !== undefined) await chrome.tabs.remove(tabId).catch(() => {});
  }
}

/** Random hex digits from `uuids` calls of `crypto.randomUUID`. */
export function randomHex(uuids) {
  return Array.from({ length: uuids }, () => crypto.randomUUID().replaceAll('-', '')).join('');
}

export function randomId() {
  return crypto.randomUUID().slice(0, 8);
}

/** Chrome's built-in model: its availability, or why it cannot be used. */
export async function chromeModelAvailability() {
  if (typeof LanguageModel === 'undefined') return 'absent';
  try {
    return await LanguageModel.availability();
  } catch (error) {
    return `error: ${error?.message ?? error}`;
  }
}

/** Streams a prompt through Chrome's built-in model; resolves to the pieces of its answer. */
export async function chromeModelPrompt(system, turns, stopPromise) {
  const initialPrompts = [];
  if (system) initialPrompts.push({ role: 'system', content: system });
  const last = turns.pop();
  for (const [role, content] of turns) initialPrompts.push({ role, content });
  const controller = new AbortController();
  stopPromise?.then(() => controller.abort());
  const session = await LanguageModel.create({ initialPrompts, signal: controller.signal });
  try {
    const stream = session.promptStreaming(last ? last[1] : '', { signal: controller.signal });
    const pieces = [];
    for await (const chunk of stream) if (typeof chunk === 'string') pieces.push(chunk);
    return pieces;
  } finally {
    session.destroy();
  }
}

/** Awaits `promise` unless `stop` settles first: `{value}` or `{stopped: true}`. */
export async function raceStop(promise, stop) {
  return Promise.race([promise.then((value) => ({ value })), stop.then(() => ({ stopped: true }))]);
}

/** Calls `method` of `object` with `args` (for handles made here). */
export function callMethod(object, method, ...args) {
  return object[method](...args);
}

// The hooks a harness sets in the worker (`webmcpHost.repairHook`, `webmcpHost.use`), kept by
// worker.js.
const hooks = () => globalThis.webmcpHostHooks ?? {};

export const hasLayers = () => (hooks().layers?.length ?? 0) > 0;

/** A layer's answer as the run takes it: `{ok: true, result}` (text; anything else as JSON) or `{ok: false, error}`. */
function answered(answer) {
  if (answer?.ok === true && (typeof answer.result === 'string' || answer.navigated === true)) return answer;
  if (answer?.ok === true && 'result' in answer) return { ...answer, result: JSON.stringify(answer.result) ?? 'null' };
  if (answer?.ok === false) return { ok: false, error: String(answer.error ?? 'the call failed') };
  return { ok: false, error: 'a middleware layer answered neither {ok: true, result} nor {ok: false, error}' };
}

/**
 * A tool call through the layers of `webmcpHost.use`, the first added outermost: each gets the
 * call (`info` with an abort `signal`, aborted when the run stops or ends, and `endTurn(outcome)`)
 * and `next()`, the inner layers then the call itself (run once, however often it is asked).
 * A layer that throws is an error for the model.
 */
export async function throughLayers(info, next, stop) {
  const layers = [...(hooks().layers ?? [])];
  const controller = new AbortController();
  stop.then(() => controller.abort(), () => controller.abort());
  let ended = null;
  const call = Object.freeze({ ...info, signal: controller.signal, endTurn: (outcome) => { ended = outcome ?? {}; } });
  let inner = null;
  const through = (i) => i === layers.length
    ? (inner ??= Promise.resolve().then(() => next()))
    : Promise.resolve().then(() => layers[i](call, () => through(i + 1)));
  let answer;
  try {
    answer = answered(await through(0));
  } catch (error) {
    answer = { ok: false, error: `a middleware layer threw: ${error?.message ?? error}` };
  }
  return ended === null ? answer : { ...answer, endTurn: ended };
}

export const hasRepairHook = () => typeof hooks().repair === 'function';

/** The repair hook's answer within `ms`; null when there is none, it threw, or it took longer. */
export async function askRepairHook(request, ms) {
  const hook = hooks().repair;
  if (typeof hook !== 'function') return null;
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(null), ms); });
  try {
    return (await Promise.race([Promise.resolve().then(() => hook(request)), late])) ?? null;
  } catch (error) {
    console.warn('webmcp-host: the repair hook threw:', error);
    return null;
  } finally {
    clearTimeout(timer);
  }
}
