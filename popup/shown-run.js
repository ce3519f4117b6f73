// The shown run: the one run the Run view and the Log view show. It selects a run, takes its
// events in order (pushed, or caught up with `runLog` from where this page is) and renders them
// in both views. Invariant: the worker's log is the truth (events out of order are fetched
// again); text reaches the DOM only through the views' textContent; nothing remote is loaded.

import { errorText, say } from './dom.js';
import { call } from './host.js';
import { state } from './state.js';
import { renderAnswer, renderRunState } from './views/answer.js';
import { followRun } from './views/thread.js';
import { appendLogEvent, applyFilter, refreshRuns, resetLog } from './views/log.js';
import { renderRunCalls } from './views/timeline.js';

/** Adds events from `since`; returns whether they were in order. */
export function addEvents(since, events, times) {
  if (since !== state.log.events.length) return false;
  events.forEach((event, i) => {
    state.log.events.push(event);
    state.log.times.push(times[i]);
    appendLogEvent(event, times[i]);
  });
  return true;
}

let fetching = null;
/** Brings the shown run up to date from the worker (its log from where we are). */
export function catchUp() {
  if (!state.runId) return Promise.resolve();
  fetching ??= (async () => {
    try {
      const runId = state.runId;
      const log = await call('runLog', { runId, since: state.log.events.length });
      if (runId !== state.runId) return;
      addEvents(log.since, log.events, log.times);
      state.log.run = log.run;
      renderAnswer();
      renderRunState();
      renderRunCalls();
      followRun();
      applyFilter();
    } catch (error) {
      say('log-status', errorText(error), true);
    } finally {
      fetching = null;
    }
  })();
  return fetching;
}

/** Shows another run: its log from the start, the list of runs brought up to date. */
export async function selectRun(runId) {
  state.runId = runId;
  resetLog();
  await refreshRuns();
  await catchUp();
}
