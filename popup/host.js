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
