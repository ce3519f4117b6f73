// The one way the popup and the side panel ask the host: `call(op, request)`, a runtime message
// `{op, ...request}` to the worker, which answers `{ok: true, value}` or `{ok: false, error}`.
// Invariant: the worker decides; this only carries the request and unwraps the answer; nothing
// remote is loaded.

/** An operation of the host: resolves to its value, or throws its error (every operation answers `{ok, value | error}`). */
export async function call(op, request = {}) {
  const answer = await chrome.runtime.sendMessage({ op, ...request });
  if (!answer?.ok) throw new Error(answer?.error ?? `no answer to ${op}`);
  return answer.value;
}

/**
 * The origin of a tab's top frame as Chrome lists it (`'null'` for a page without one, or no
 * tab): what the popup keeps per site (eval suites, the Call view's history) is filed under it.
 */
export async function topOrigin(tabId) {
  if (typeof tabId !== 'number') return 'null';
  const top = await chrome.webNavigation.getFrame({ tabId, frameId: 0 }).catch(() => null);
  try {
    return new URL(top?.url ?? '').origin;
  } catch {
    return 'null'; // no page, or one without an address
  }
}
