// The channel from the worker to the page bridge (content-script/isolated.js) of one frame:
// a long-lived port per frame (and document, when the target names one), opened on first use
// and kept while the frame keeps its document. A request on an open port costs one message
// each way; `chrome.tabs.sendMessage` opens and closes a channel per request, which measured
// about three times the port's round trip. No logic: the Rust shell decides what to send.
//
// A port opened with `chrome.tabs.connect` reaches only this extension's content scripts in
// the frame Chrome resolves from the tab and frame (and document) ids: the answers on it come
// from that frame's bridge, whatever the page says. The port closes when that document goes
// away (navigation, a removed frame, a closed tab, the back/forward cache); the requests
// still waiting on it are refused with Chrome's own words, as `sendMessage` would be:
// "Could not establish connection. Receiving end does not exist." when no bridge heard the
// connection, "The message port closed before a response was received." after.

const NAME = 'webmcp-host-bridge';
const CLOSED = 'The message port closed before a response was received.';

const ports = new Map();
let next = 0;

function open(tabId, options, most) {
  const key = `${tabId}/${options.frameId ?? 0}/${options.documentId ?? ''}`;
  const kept = ports.get(key);
  if (kept) {
    // Most recently used last: the eviction below takes the oldest first.
    ports.delete(key);
    ports.set(key, kept);
    return kept;
  }
  const entry = { port: chrome.tabs.connect(tabId, { ...options, name: NAME }), pending: new Map() };
  entry.port.onMessage.addListener((reply) => {
    const waiting = entry.pending.get(reply?.id);
    if (!waiting) return;
    entry.pending.delete(reply.id);
    waiting.resolve(reply.answer);
  });
  entry.port.onDisconnect.addListener(() => {
    const why = chrome.runtime.lastError?.message ?? CLOSED;
    if (ports.get(key) === entry) ports.delete(key);
    for (const waiting of entry.pending.values()) waiting.reject(new Error(why));
    entry.pending.clear();
  });
  ports.set(key, entry);
  for (const [old, idle] of ports) {
    if (ports.size <= most) break;
    if (idle.pending.size === 0) {
      ports.delete(old);
      idle.port.disconnect();
    }
  }
  return entry;
}

/**
 * Sends `message` to the bridge of frame `options.frameId` (of document `options.documentId`,
 * when given) of tab `tabId`; resolves to its answer, rejects as `chrome.tabs.sendMessage` does.
 * At most `most` ports are kept (one per frame document asked lately); the oldest idle ones
 * close first.
 */
export function frameSend(tabId, options, message, most) {
  return new Promise((resolve, reject) => {
    const entry = open(tabId, options, most);
    const id = ++next;
    entry.pending.set(id, { resolve, reject });
    try {
      entry.port.postMessage({ id, message });
    } catch (error) {
      entry.pending.delete(id);
      reject(error);
    }
  });
}
