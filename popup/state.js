// The page's state, shared by its views: where it is shown (the popup, the side panel, or the
// extension's own window that asks the person, `?surface=window`; and the `?tab=` / `?view=`
// of its address) and what it shows. Invariant: a mirror of what the worker
// answered or pushed; the worker keeps the truth and takes the decisions.

export const params = new URLSearchParams(location.search);
export const SURFACE = params.get('surface') === 'window' ? 'window' : (document.body.dataset.surface ?? 'popup');

/** What this page shows: its tab, the worker's settings, the shown run and its log, the pending items. */
export const state = {
  tabId: null,
  settings: null,
  threadId: null, // the conversation the next prompt continues (null: a new one)
  runId: null, // the run shown in the run view and the log
  log: { runId: null, events: [], times: [], run: null },
  filter: '',
  pending: [],
  focusTool: null, // {name, frameId}: the tab's tool the Call or Audit view opens on (its "Call" / "Audit")
};
