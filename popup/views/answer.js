// The Run view's output: the answer as it is written and the run's state (running, done, failed,
// stopped), from the shown run's log. Invariant: the model's text is set only through
// textContent; the outcome is the worker's, shown as it is; nothing remote is loaded.

import { $, say } from '../dom.js';
import { state } from '../state.js';
import { renderUsage } from './usage.js';

/** The answer as it is written: the text of the run's messages, from its events. */
export function renderAnswer() {
  const parts = [];
  for (const event of state.log.events) {
    if (event.type === 'TEXT_MESSAGE_START') parts.push('');
    else if (event.type === 'TEXT_MESSAGE_CONTENT') {
      if (parts.length === 0) parts.push('');
      parts[parts.length - 1] += event.delta;
    }
  }
  $('answer').textContent = parts.filter((p) => p.length).join('\n\n');
  renderUsage();
}

export function renderRunState() {
  const run = state.log.run;
  const running = run?.state === 'running';
  $('stop').disabled = !running;
  document.body.dataset.run = run?.state ?? 'none';
  if (!run) return;
  const outcome = run.outcome;
  let text = running ? 'Running…' : run.state === 'interrupted' ? 'Interrupted: the worker stopped during this run.' : '';
  if (outcome) {
    text =
      outcome.type === 'completed'
        ? 'Done.'
        : outcome.type === 'failed'
          ? `Failed: ${outcome.message}`
          : outcome.type === 'stopped'
            ? `Stopped: ${outcome.reason}`
            : `Ended: ${outcome.type}`;
  }
  say('run-status', text, outcome?.type === 'failed');
}
