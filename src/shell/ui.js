// I/O primitives of the person's side (popup, side panel) for the wasm shell: a push to the
// extension's open pages, and the whole content of a storage area. No decisions here.

/** Sends `message` to every open page of the extension (popup, side panel); nobody listening is fine. */
export function broadcast(message) {
  try {
    chrome.runtime.sendMessage(message).catch(() => {});
  } catch {
    // No page is open, or this context has no runtime messaging.
  }
}

/** Every item of `chrome.storage[area]`, as an object. */
export async function storageAll(area) {
  const store = chrome.storage?.[area];
  if (!store) throw new Error(`chrome.storage.${area} is not available`);
  return store.get(null);
}

/** `chrome.runtime.id`, when this context has one. */
export function runtimeId() {
  return globalThis.chrome?.runtime?.id;
}

/** This extension's origin, `chrome-extension://<id>`. */
export function extensionOrigin() {
  return `chrome-extension://${chrome.runtime?.id ?? 'unknown'}`;
}
