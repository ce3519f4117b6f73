// The Log view: the shown run's events, a row per event (type, time, summary, JSON), a tool call's
// events grouped with its arguments and result, repairs marked, a filter by type, the list of
// runs and a JSONL export. Invariant: event text (from models, pages and servers) is set only
// through textContent; nothing remote is loaded; the log is the worker's, shown as it is.

import { $, download, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { params, state, SURFACE } from '../state.js';

/** A tool result's text: the content itself, or its text parts with the media parts named
 * (AG-UI 1.0 content parts: an MCP result with images, audio or documents). */
function resultText(content) {
  if (!Array.isArray(content)) return String(content ?? '');
  return content
    .map((part) => (part?.type === 'text' ? String(part.text ?? '') : `[${String(part?.type ?? 'part')} ${String(part?.source?.mimeType ?? '')}]`.replace(' ]', ']')))
    .join('\n');
}

function summarize(event) {
  switch (event.type) {
    case 'RUN_STARTED':
    case 'RUN_FINISHED':
      return `run ${event.runId}`;
    case 'RUN_ERROR':
      return event.message;
    case 'STEP_STARTED':
    case 'STEP_FINISHED':
      return event.stepName;
    case 'TEXT_MESSAGE_CONTENT':
      return event.delta;
    case 'TEXT_MESSAGE_START':
    case 'TEXT_MESSAGE_END':
      return event.messageId;
    case 'TOOL_CALL_START':
      return event.toolCallName;
    case 'TOOL_CALL_ARGS':
      return event.delta;
    case 'TOOL_CALL_END':
      return event.toolCallId;
    case 'TOOL_CALL_RESULT':
      return resultText(event.content);
    case 'MESSAGES_SNAPSHOT':
      return `${event.messages?.length ?? 0} messages`;
    case 'CUSTOM':
      if (Array.isArray(event.value?.fixes)) return event.value.fixes.map((f) => f.detail).join('; ');
      return JSON.stringify(event.value);
    default:
      return '';
  }
}

const isRepair = (event) =>
  event.type === 'CUSTOM' && /^webmcp_host\.(tool_repair|tool_reask)/.test(event.name ?? '');

function eventRow(event, time) {
  const item = element('li', 'event');
  item.dataset.type = event.type;
  if (isRepair(event)) item.classList.add('repair');
  if (event.type === 'RUN_ERROR') item.classList.add('failure');
  const details = element('details');
  const summary = element('summary');
  summary.append(
    element('span', 'event-type', event.type === 'CUSTOM' ? `CUSTOM ${event.name}` : event.type),
    element('time', 'event-time', time ? new Date(time).toISOString().slice(11, 23) : ''),
    element('span', 'event-summary', summarize(event).slice(0, 200)),
  );
  details.append(summary, element('pre', 'event-json', JSON.stringify(event, null, 2)));
  item.append(details);
  return item;
}

/** Groups: a call's events (START, ARGS, END, RESULT, and its repair) in one entry. */
const callGroups = new Map();

function callIdOf(event) {
  if (event.toolCallId) return event.toolCallId;
  if (event.type === 'CUSTOM' && event.value && typeof event.value === 'object') return event.value.toolCallId ?? event.value.callId;
  return null;
}

function groupFor(callId, event) {
  let group = callGroups.get(callId);
  if (group) return group;
  if (event.type !== 'TOOL_CALL_START' && event.type !== 'TOOL_CALL_RESULT') return null;
  const item = element('li', 'call');
  item.dataset.callId = callId;
  const details = element('details');
  details.open = true;
  const summary = element('summary');
  const name = element('span', 'call-name', event.toolCallName ?? '(call)');
  const args = element('code', 'call-args', '');
  const result = element('span', 'call-result', '…');
  summary.append(element('span', 'event-type', 'TOOL CALL'), name, args, element('span', 'muted', '→'), result);
  const rows = element('ul', 'call-events');
  details.append(summary, rows);
  item.append(details);
  group = { item, name, args, result, rows, argText: '' };
  callGroups.set(callId, group);
  $('log').append(item);
  return group;
}

export function appendLogEvent(event, time) {
  const row = eventRow(event, time);
  row.hidden = !!state.filter && event.type !== state.filter;
  const callId = callIdOf(event);
  const group = callId ? groupFor(callId, event) : null;
  if (group) {
    group.rows.append(row);
    if (event.type === 'TOOL_CALL_ARGS') group.argText += event.delta;
    if (event.type === 'TOOL_CALL_START') group.name.textContent = event.toolCallName;
    if (event.type === 'TOOL_CALL_RESULT') group.result.textContent = resultText(event.content).slice(0, 200);
    if (isRepair(event)) group.item.classList.add('repair');
    group.args.textContent = group.argText.slice(0, 200);
    group.item.hidden = [...group.rows.children].every((r) => r.hidden);
  } else {
    $('log').append(row);
  }
  // A snapshot carries the final arguments of calls that repair changed.
  if (event.type === 'MESSAGES_SNAPSHOT') {
    for (const message of event.messages ?? []) {
      for (const toolCall of message.toolCalls ?? []) {
        const known = callGroups.get(toolCall.id);
        if (!known || typeof toolCall.function?.arguments !== 'string') continue;
        known.argText = toolCall.function.arguments;
        known.args.textContent = known.argText.slice(0, 200);
      }
    }
  }
  const filter = $('log-filter');
  const type = event.type;
  if (![...filter.options].some((o) => o.value === type)) {
    const option = element('option', '', type);
    option.value = type;
    filter.append(option);
  }
}

export function applyFilter() {
  state.filter = $('log-filter').value;
  for (const row of document.querySelectorAll('#log li.event')) {
    row.hidden = !!state.filter && row.dataset.type !== state.filter;
  }
  for (const group of callGroups.values()) {
    group.item.hidden = [...group.rows.children].every((r) => r.hidden);
  }
  const shown = document.querySelectorAll('#log li.event:not([hidden])').length;
  say('log-status', `${shown} of ${state.log.events.length} events${state.filter ? ` (${state.filter})` : ''}`);
}

/** Empties the log for a new shown run, its type filter included. */
export function resetLog() {
  callGroups.clear();
  $('log').replaceChildren();
  state.log = { runId: state.runId, events: [], times: [], run: null };
  $('log-filter').replaceChildren(element('option', '', 'All types'));
  $('log-filter').options[0].value = '';
  state.filter = '';
}

export async function refreshRuns() {
  let runs = [];
  try {
    runs = await call('runs', typeof state.tabId === 'number' && SURFACE === 'popup' && params.has('tab') ? { tabId: state.tabId } : {});
  } catch (error) {
    say('log-status', errorText(error), true);
  }
  const select = $('run-select');
  const optionOf = (run) => {
    const when = new Date(run.startedMs).toLocaleTimeString();
    const what = run.eval ? `${run.eval.case} · ${run.eval.model} #${run.eval.run + 1}` : run.prompt || run.runId;
    const option = element('option', '', `${when} · ${run.state} · ${what}`);
    option.value = run.runId;
    return option;
  };
  // The person's runs, then each evaluation's runs under its suite (newest suite first), so
  // that a suite of many runs never buries the person's.
  const options = runs.filter((run) => !run.eval).map(optionOf);
  const suites = new Map();
  for (const run of runs.filter((r) => r.eval)) {
    if (!suites.has(run.eval.suite)) suites.set(run.eval.suite, []);
    suites.get(run.eval.suite).push(run);
  }
  for (const [suite, suiteRuns] of suites) {
    const first = Math.min(...suiteRuns.map((r) => r.startedMs));
    const group = element('optgroup');
    group.label = `Evals of ${new Date(first).toLocaleTimeString()} · ${suiteRuns.length} run${suiteRuns.length === 1 ? '' : 's'}`;
    group.dataset.suite = suite;
    group.append(...suiteRuns.map(optionOf));
    options.push(group);
  }
  // No run shown (none of this tab's yet): a first entry that is not a run, so that picking any
  // run, the only one too, is a change.
  const shown = runs.some((run) => run.runId === state.runId);
  if (!shown) {
    const hint = element('option', '', runs.length ? `Pick a run (${runs.length} kept)` : 'No run yet');
    hint.value = '';
    hint.disabled = true;
    options.unshift(hint);
  }
  select.replaceChildren(...options);
  select.value = shown ? state.runId : '';
  return runs;
}

export async function exportLog() {
  if (!state.runId) {
    say('log-status', 'No run to export.', true);
    return;
  }
  const log = await call('runLog', { runId: state.runId });
  const text = log.events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  download(text, `webmcp-host-${state.runId}.jsonl`, 'application/x-ndjson');
  say('log-status', `Exported ${log.events.length} events.`);
}
