// The canary key of the end-to-end suite: a fake API key that `launchHost` stores in session
// storage (as `keys.canary`) for every host it starts, and the checks that it, and every other
// key in session storage, went nowhere but to the endpoint of a model or MCP server whose
// `keyRef` names it.
//
// What is recorded during a host's life (see browser.mjs): every request of the browser
// context (the worker's too, with PW_EXPERIMENTAL_SERVICE_WORKER_NETWORK_EVENTS=1: URL, headers
// and post data), every console message of its pages and of the worker, every message the worker
// sends to content scripts (`chrome.tabs.sendMessage`, and `postMessage` on every port it opens
// with `chrome.tabs.connect`, the page bridge's channel) and to the extension's pages
// (`chrome.runtime.sendMessage`: the AG-UI events it pushes), and, at the end, every kept run's
// log and the person's-side settings. A key may appear only in the headers of a request to its
// own endpoint: never in a URL, a request body, an event, a message or a console line.

/** The harness's canary key, stored as `keys.canary` in every host `launchHost` starts. */
export const CANARY = 'sk-canary-harness-9d2f61b0c4e8a735';
/** The key reference models and servers use to send the canary: `keyRef: 'canary'`. */
export const CANARY_REF = 'canary';
/** Where session storage keeps a key (`webmcpHost.key.<ref>`, as the worker stores it). */
export const KEY_PREFIX = 'webmcpHost.key.';
/** The prefix of the console lines the worker's recorder writes (see `instrumentWorker`). */
export const PROBE = '[webmcp-host canary probe]';

/**
 * The endpoints a key may go to, by key reference, from a configuration as stored by the
 * worker (`webmcpHost.models`: `{models: [{baseUrl, keyRef}]}`, `webmcpHost.servers`:
 * `[{url, keyRef}]`). Adds to `into` (a `Map<ref, Set<url>>`) and returns it.
 */
export function addEndpoints(into, { models, servers, collectors } = {}) {
  const add = (ref, url) => {
    if (typeof ref !== 'string' || typeof url !== 'string' || !url) return;
    if (!into.has(ref)) into.set(ref, new Set());
    into.get(ref).add(url);
  };
  for (const model of models?.models ?? (Array.isArray(models) ? models : [])) add(model?.keyRef, model?.baseUrl);
  for (const server of Array.isArray(servers) ? servers : []) add(server?.keyRef, server?.url);
  // A collector's header key counts for it only while no model or server names that key
  // (findLeaks reads them apart): the host sends a collector only a key of its own.
  for (const collector of Array.isArray(collectors) ? collectors : []) {
    for (const ref of Object.values(collector?.headers ?? {})) add(`collector:${ref}`, collector?.endpoint);
  }
  return into;
}

/** Whether `url` is `endpoint` or below it (a path under it, or a query on it). */
export function isUnder(url, endpoint) {
  const base = endpoint.replace(/\/+$/, '');
  return url === endpoint || url === base || url.startsWith(`${base}/`) || url.startsWith(`${base}?`);
}

const excerpt = (text, secret) => {
  const at = text.indexOf(secret);
  const shown = text.slice(Math.max(0, at - 80), at + secret.length + 80).replaceAll(secret, '<KEY>');
  return `${at > 80 ? '…' : ''}${shown}${at + secret.length + 80 < text.length ? '…' : ''}`;
};

/**
 * The leaks among `records`: each a `{kind, where, ...}` with either `text` (an event, a log
 * line, a message: a key may never appear) or, for `kind: 'request'`, `url`, `headers` (an
 * object) and `postData`: a key may appear only in the headers, and only when the URL is under
 * an endpoint of its reference in `endpoints` (`Map<ref, Set<url>>`). `secrets` are
 * `[{ref, value}]`. Returns `[{kind, where, ref, detail}]`, with the key itself masked.
 */
export function findLeaks({ secrets, records, endpoints = new Map() }) {
  const leaks = [];
  for (const { ref, value } of secrets) {
    if (typeof value !== 'string' || value.length < 8) continue; // too short to tell apart
    const own = [...(endpoints.get(ref) ?? [])];
    const allowed = own.length ? own : [...(endpoints.get(`collector:${ref}`) ?? [])];
    for (const record of records) {
      const mask = (text) => String(text).replaceAll(value, '<KEY>');
      const report = (detail) => leaks.push({ kind: record.kind, where: mask(record.where ?? record.url ?? ''), ref, detail: mask(detail) });
      if (record.kind === 'request') {
        const url = String(record.url ?? '');
        const headers = JSON.stringify(record.headers ?? {});
        const body = String(record.postData ?? '');
        if (url.includes(value)) report(`in the URL: ${excerpt(url, value)}`);
        if (body.includes(value)) report(`in the body of ${url}: ${excerpt(body, value)}`);
        if (headers.includes(value) && !allowed.some((endpoint) => isUnder(url, endpoint))) {
          report(`in the headers of a request to ${url}, which is no endpoint of a model or server with keyRef \`${ref}\` (${allowed.join(', ') || 'none'}): ${excerpt(headers, value)}`);
        }
      } else {
        const text = typeof record.text === 'string' ? record.text : JSON.stringify(record.text ?? null);
        if (text.includes(value)) report(excerpt(text, value));
      }
    }
  }
  return leaks;
}

/** An error naming every leak (never the key), or null when there is none. */
export function leakError(leaks) {
  if (leaks.length === 0) return null;
  const lines = leaks.slice(0, 20).map((l) => `- key \`${l.ref}\` in a ${l.kind} (${l.where}): ${l.detail}`);
  if (leaks.length > 20) lines.push(`- and ${leaks.length - 20} more`);
  return new Error(`canary check: ${leaks.length} leak(s) of a key\n${lines.join('\n')}`);
}

/**
 * Installs the recorder in the extension's service worker (through `worker.evaluate`): every
 * message the worker sends to a content script or to the extension's pages, and every change
 * of the stored models and servers (their keyRefs and endpoints only), is written to the
 * worker's console as one `PROBE` line, which the harness reads (`worker.on('console')`).
 * The wrapped functions behave as before. Idempotent per worker.
 */
export async function instrumentWorker(worker) {
  await worker.evaluate((probe) => {
    if (globalThis.__webmcpHostCanaryProbe) return;
    globalThis.__webmcpHostCanaryProbe = true;
    const log = console.debug.bind(console);
    const write = (record) => {
      try {
        log(probe, JSON.stringify(record));
      } catch {
        // A message that does not serialize is sent as is; it carries nothing recordable.
      }
    };
    const wrap = (namespace, name, kind) => {
      const original = namespace[name];
      if (typeof original !== 'function') return;
      namespace[name] = function (...args) {
        if (kind === 'tab') write({ kind: 'message', where: `tab ${args[0]} ${JSON.stringify(args[2] ?? {})}`, text: args[1] });
        else write({ kind: 'message', where: 'extension pages', text: args[0] });
        return original.apply(this, args);
      };
    };
    wrap(chrome.tabs, 'sendMessage', 'tab');
    wrap(chrome.runtime, 'sendMessage', 'runtime');
    // The page bridge's ports: every message posted on a port to a tab is recorded.
    const connect = chrome.tabs.connect;
    if (typeof connect === 'function') {
      chrome.tabs.connect = function (...args) {
        const port = connect.apply(this, args);
        const post = port.postMessage;
        port.postMessage = function (message) {
          write({ kind: 'message', where: `tab ${args[0]} port ${JSON.stringify(args[1] ?? {})}`, text: message });
          return post.call(this, message);
        };
        return port;
      };
    }
    const endpoints = (value) => ({
      models: { models: (value?.models ?? []).map((m) => ({ baseUrl: m?.baseUrl, keyRef: m?.keyRef })) },
      servers: (Array.isArray(value) ? value : []).map((s) => ({ url: s?.url, keyRef: s?.keyRef })),
      collectors: (Array.isArray(value) ? value : []).map((c) => ({ endpoint: c?.endpoint, headers: c?.headers ?? {} })),
    });
    const report = (models, servers, collectors) =>
      write({ kind: 'config', models: endpoints(models).models, servers: endpoints(servers).servers, collectors: endpoints(collectors).collectors });
    chrome.storage.onChanged.addListener((changes, area) => {
      if (area !== 'local') return;
      if (changes['webmcpHost.models']) report(changes['webmcpHost.models'].newValue, null, null);
      if (changes['webmcpHost.servers']) report(null, changes['webmcpHost.servers'].newValue, null);
      if (changes['webmcpHost.collectors']) report(null, null, changes['webmcpHost.collectors'].newValue);
    });
    return chrome.storage.local.get(['webmcpHost.models', 'webmcpHost.servers', 'webmcpHost.collectors']).then((stored) =>
      report(stored['webmcpHost.models'], stored['webmcpHost.servers'], stored['webmcpHost.collectors']),
    );
  }, PROBE);
}
