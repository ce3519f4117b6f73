// I/O primitives of the person's side (popup, side panel) for the wasm shell: a push to the
// extension's open pages, the whole content of a storage area, and the question window (at most
// one at a time). No decisions of the host here.

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
  return `chrome-extension://${globalThis.chrome?.runtime?.id ?? 'unknown'}`;
}

// The question window this worker opened last, and the one being opened: a window still loading
// is not among `getContexts`' yet, and a burst of questions must not open one window each.
let questionWindow = null;
let opening = null;

/**
 * Makes sure the person sees the extension's Pending view, where a call waits for their answer:
 * an open page of the extension's own UI (the popup, the side panel, or a tab showing either) is
 * told by the push `pending` and shows it; with none open, a small window of the extension opens
 * on the Pending view (the one opened before is focused instead). Never a tab's page: a page's
 * renderer must not be the one that answers. Resolves to what it did: `shown`, `focused`,
 * `opened`, or `failed: …`.
 */
export async function showQuestion() {
  try {
    const ui = ['popup.html', 'sidepanel.html'].map((file) => chrome.runtime.getURL(file));
    const contexts = await chrome.runtime.getContexts({});
    const ours = contexts.filter((c) => typeof c.documentUrl === 'string' && ui.some((u) => c.documentUrl.startsWith(u)));
    const asking = ours.find((c) => new URL(c.documentUrl).searchParams.get('surface') === 'window');
    if (asking) {
      if (asking.windowId >= 0) await chrome.windows.update(asking.windowId, { focused: true });
      return 'focused';
    }
    if (ours.length > 0) return 'shown';
    if (opening) {
      await opening;
      return 'focused';
    }
    if (questionWindow !== null) {
      try {
        await chrome.windows.update(questionWindow, { focused: true });
        return 'focused';
      } catch {
        questionWindow = null; // closed since
      }
    }
    if (opening) {
      await opening;
      return 'focused';
    }
    opening = chrome.windows.create({ url: `${ui[0]}?view=pending&surface=window`, type: 'popup', width: 460, height: 640, focused: true });
    try {
      questionWindow = (await opening)?.id ?? null;
    } finally {
      opening = null;
    }
    return 'opened';
  } catch (error) {
    return `failed: ${error?.message ?? String(error)}`;
  }
}
