// The Log view's default: the shown run as a timeline (`timeline`, built by the host from the
// run's events): the prompt, each model step with its text merged, its duration, its tokens and
// cost (or "tokens unknown"), each call with its arguments as run, repair notes, confirmation,
// result or error and duration, the run's errors, then the answer. Raw events: one click away.
// Invariant: every text (from models, pages, servers) is set with textContent.

import { $, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

const ms = (value) => (typeof value === 'number' ? `${Math.round(value)} ms` : '');

/** A step's tokens (from its `webmcp_host.usage` event, read by the host): counts, cost, or unknown. */
export function tokensText(t) {
  if (!t || t.usage !== 'reported') return 'tokens unknown';
  const cached = typeof t.cachedInputTokens === 'number' ? ` (${t.cachedInputTokens} cached)` : '';
  const cost = typeof t.cost === 'number' ? ` · $${t.cost.toFixed(6)}` : '';
  return `${t.inputTokens} in${cached} · ${t.outputTokens} out${cost}`;
}

/** One call of a step: its name, arguments as run, repairs, confirmation, result or error, duration. */
export function callItem(c) {
  const item = element('li', c.error || c.rejected ? 'tl-call failure' : 'tl-call');
  item.dataset.callId = c.id;
  const head = element('div');
  head.append(element('span', 'event-type', 'CALL'), element('span', 'call-name', ` ${c.name || '(unnamed)'}`));
  if (c.writtenName) head.append(element('span', 'muted', ` (written ${c.writtenName})`));
  if (c.durationMs !== undefined) head.append(element('span', 'muted', ` · ${ms(c.durationMs)}`));
  item.append(head, element('pre', 'tl-args', typeof c.args === 'string' ? c.args : JSON.stringify(c.args, null, 2)));
  if (c.repairs?.length) {
    const list = element('ul', 'tl-repairs');
    list.append(...c.repairs.map((r) => element('li', 'repair', `repaired: ${r}`)));
    item.append(list);
  }
  if (c.confirmation) item.append(element('p', 'tl-confirmation', `Confirmation: ${c.confirmation}`));
  if (c.rejected) item.append(element('p', 'tl-error', `Not run: ${c.rejected}`));
  else if (c.error) item.append(element('p', 'tl-error', `Error: ${c.error}`));
  else if (c.result !== undefined) item.append(element('pre', 'tl-result', c.result));
  else item.append(element('p', 'muted', 'waiting for its result…'));
  return item;
}

function entryItem(entry, index) {
  if (entry.kind === 'step') {
    const item = element('li', 'tl-step');
    const head = element('div');
    head.append(element('span', 'event-type', `STEP ${index + 1}`));
    const meta = [ms(entry.durationMs)].filter(Boolean).join(' · ');
    head.append(element('span', 'muted', ` ${meta}${meta ? ' · ' : ''}`), element('span', 'tl-tokens muted', tokensText(entry.tokens)));
    item.append(head);
    if (entry.text) item.append(element('p', 'tl-text', entry.text));
    if (entry.calls.length) {
      const calls = element('ol', 'tl-calls');
      calls.append(...entry.calls.map(callItem));
      item.append(calls);
    }
    return item;
  }
  if (entry.kind === 'error') return element('li', 'tl-run-error failure', `Run error${entry.code ? ` (${entry.code})` : ''}: ${entry.message}`);
  const note = element('li', 'tl-note muted', `${entry.name}: ${JSON.stringify(entry.value)}`);
  return note;
}

/** Renders the shown run's timeline. */
export async function renderTimeline() {
  const list = $('timeline');
  if (!state.runId) {
    list.replaceChildren();
    delete list.dataset.runId;
    return say('timeline-status', 'No run to show.');
  }
  const runId = state.runId;
  try {
    const t = await call('timeline', { runId });
    // Another run was picked while this one was asked for: its own rendering shows it.
    if (state.runId !== runId) return;
    const items = [];
    if (t.prompt) items.push(element('li', 'tl-prompt turn user', t.prompt));
    items.push(...t.entries.map(entryItem));
    if (t.answer !== undefined) items.push(element('li', 'tl-answer', t.answer));
    list.replaceChildren(...items);
    list.dataset.runId = runId;
    say('timeline-status', `${t.state} · ${t.entries.filter((e) => e.kind === 'step').length} steps · ${t.events} events${t.durationMs !== undefined ? ` · ${ms(t.durationMs)}` : ''}`);
  } catch (error) {
    say('timeline-status', errorText(error), true);
  }
}

/** The Run view's calls of the shown run, inline as they happen (from the same timeline). */
export async function renderRunCalls() {
  const list = $('run-calls');
  const runId = state.runId;
  if (!runId) {
    list.replaceChildren();
    list.hidden = true;
    return;
  }
  try {
    const t = await call('timeline', { runId });
    if (state.runId !== runId) return;
    const calls = t.entries.filter((e) => e.kind === 'step').flatMap((e) => e.calls);
    list.replaceChildren(...calls.map(callItem));
    list.hidden = calls.length === 0;
  } catch {
    // The Log view says why a timeline cannot be read; the answer still shows here.
  }
}

/** Shows the timeline (default) or the raw events. */
export function showRaw(raw) {
  $('timeline-box').hidden = raw;
  $('raw-box').hidden = !raw;
  $('log-raw').setAttribute('aria-pressed', String(raw));
  $('log-raw').textContent = raw ? 'Show the timeline' : 'Show raw events';
  if (!raw) renderTimeline();
}
