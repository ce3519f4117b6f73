// The Evals view: the tab's eval suite (a webmcp-evals file, loaded from disk or pasted, kept in
// this extension's localStorage, one per site: the origin of the tab's top frame), run in smoke
// or agent mode (`evaluate`), its report (counts, the per-model table, each result with its reason and calls) and the report downloaded as
// HTML or JUnit XML (`evalReport`). "Save as test" in the Run view brings the shown run here
// (`toEval`), with a choice per argument: exact, any value of its type, any value, or left out.
// Invariant: names, reasons and results (which quote page and model text) are set only through
// textContent; the worker runs the suite and judges every case.

import { $, download as saveFile, element, errorText, say } from '../dom.js';
import { call, topOrigin } from '../host.js';
import { state } from '../state.js';

const SUITE_KEY = 'webmcp-host.evals';
let last = null; // the last evaluation's answer
let keptFor = null; // the key the shown suite was read from, or kept under

/**
 * Where the suite of the shown tab's site is kept: one suite per origin of the tab's top frame
 * (`webmcp-host.evals:<origin>`), or one for pages without an origin.
 */
async function suiteKey() {
  const origin = await topOrigin(state.tabId);
  return origin === 'null' ? SUITE_KEY : `${SUITE_KEY}:${origin}`;
}

/** Shows the kept suite of the tab's site and the configured models (run after each settings load, too). */
export async function renderEvals() {
  const key = await suiteKey();
  // A suite kept before suites were kept per site goes to the first site shown.
  const unsorted = localStorage.getItem(SUITE_KEY);
  if (key !== SUITE_KEY && unsorted !== null && localStorage.getItem(key) === null) {
    localStorage.setItem(key, unsorted);
    localStorage.removeItem(SUITE_KEY);
  }
  if (key !== keptFor) {
    // First shown: what was typed meanwhile stays. Another site since (the side panel follows
    // the active tab): that site's suite.
    const first = keptFor === null;
    keptFor = key;
    if (!first || !$('evals-file').value) $('evals-file').value = localStorage.getItem(key) ?? '';
    const site = key.slice(SUITE_KEY.length + 1);
    $('evals-file-label').textContent = `Eval suite${site ? ` of ${site}` : ''} (webmcp-evals JSON)`;
    $('evals-file').dataset.site = site || 'none';
  }
  const select = $('evals-models');
  const chosen = new Set([...select.selectedOptions].map((o) => o.value));
  const models = state.settings?.models ?? [];
  select.replaceChildren(
    ...models.map((m) => {
      const option = element('option', '', m.name === state.settings.default ? `${m.name} (default)` : m.name);
      option.value = m.name;
      option.selected = chosen.has(m.name) || (chosen.size === 0 && m.name === state.settings.default);
      return option;
    }),
  );
}

/** Keeps the suite as edited, for the site it was shown for. */
export async function keepSuite() {
  keptFor ??= await suiteKey();
  localStorage.setItem(keptFor, $('evals-file').value);
}

/** Reads a chosen eval file into the suite. */
export async function loadFile() {
  const [file] = $('evals-load').files;
  if (!file) return;
  $('evals-file').value = await file.text();
  keepSuite();
  say('evals-status', `Loaded ${file.name}.`);
}

/** Runs the suite on the tab in the chosen mode. */
export async function runEvals() {
  if (typeof state.tabId !== 'number') return say('evals-status', 'No tab to run on.', true);
  const mode = $('evals-mode').value;
  const request = { tabId: state.tabId, evals: $('evals-file').value, mode, reload: $('evals-reload').checked };
  if (mode === 'agent') {
    request.models = [...$('evals-models').selectedOptions].map((o) => o.value);
    request.runs = Number($('evals-runs').value) || 1;
  }
  keepSuite();
  $('evals-run').disabled = true;
  say('evals-status', `Running (${mode})…`);
  try {
    last = await call('evaluate', request);
    renderReport(last);
    say('evals-status', '');
  } catch (error) {
    say('evals-status', errorText(error), true);
  } finally {
    $('evals-run').disabled = false;
  }
}

/** A result pushed while the suite runs. */
export function onProgress(message) {
  if ($('evals-run').disabled) say('evals-status', `Running… ${message.done} of ${message.total} done`);
}

function callRow(c, i) {
  const row = element('li', 'eval-call');
  const outcome = c.error !== undefined ? `error: ${c.error}` : c.result === undefined ? '(no result)' : JSON.stringify(c.result);
  row.append(element('code', '', `${i + 1}. ${c.name}(${JSON.stringify(c.args)})`), element('div', 'muted', `→ ${outcome}`));
  return row;
}

function resultItem(r) {
  const item = element('li', `eval-result ${r.outcome}`);
  item.dataset.outcome = r.outcome;
  const head = element('div');
  const run = r.model ? ` · ${r.model} #${r.runIndex + 1}` : '';
  head.append(element('span', `hint outcome ${r.outcome}`, r.outcome), element('span', 'tool-name', ` ${r.name}`), element('span', 'muted', run));
  item.append(head);
  if (r.reason) item.append(element('p', r.outcome === 'pass' ? 'muted' : 'error', r.reason));
  if (r.prompt) item.append(element('p', 'muted', `Prompt: ${r.prompt}`));
  item.append(element('div', 'muted', `Expected: ${r.expected === null ? 'no call' : JSON.stringify(r.expected)}`));
  const calls = element('ol', 'eval-calls');
  calls.append(...(r.calls.length ? r.calls.map(callRow) : [element('li', 'muted', 'No call made.')]));
  item.append(calls);
  return item;
}

/** Shows an evaluation's answer. */
export function renderReport(answer) {
  $('evals-summary').textContent = `${answer.testCount} results: ${answer.passCount} passed, ${answer.failCount} failed, ${answer.errorCount} errors`;
  const table = $('evals-table');
  const models = Object.entries(answer.models ?? {});
  table.hidden = models.length === 0;
  const head = element('tr');
  head.append(...['Model', 'Pass', 'Median', 'p95', 'Tokens'].map((t) => element('th', '', t)));
  table.replaceChildren(
    head,
    ...models.map(([name, m]) => {
      const row = element('tr');
      const tokens = m.tokens === null || m.tokens === undefined ? 'unknown' : m.tokens;
      row.append(...[name, `${Math.round(m.passRate * 100)}%`, `${m.latencyMs.median} ms`, `${m.latencyMs.p95} ms`, tokens].map((t) => element('td', '', t)));
      return row;
    }),
  );
  $('evals-results').replaceChildren(...answer.results.map(resultItem));
  $('evals-downloads').hidden = false;
}

/** Downloads the last report as HTML or JUnit XML. */
export async function download(format) {
  try {
    const text = await call('evalReport', { report: last, format });
    const type = format === 'html' ? 'text/html' : 'application/xml';
    saveFile(text, `webmcp-evals-tab-${state.tabId}.${format === 'html' ? 'html' : 'xml'}`, type);
  } catch (error) {
    say('evals-status', errorText(error), true);
  }
}

// ------------------------------------------------------------------------------------------
// Save as test: the shown run as a new case, each argument exact or loosened.

const HOW = [
  ['exact', 'exact'],
  ['$type', 'any value of its type'],
  ['$any', 'any value'],
  ['omit', 'not checked'],
];

/** Brings the shown run into the Evals view as a case to add. */
export async function saveAsTest() {
  if (!state.runId) return say('run-status', 'No run to save.', true);
  document.querySelector('#views button[data-view="evals"]').click();
  try {
    const made = await call('toEval', { runId: state.runId });
    const form = $('evals-new');
    form.hidden = false;
    form.dataset.runId = state.runId;
    $('evals-new-name').value = made.case.name ?? '';
    const calls = made.case.expectedCall ?? [];
    const list = $('evals-new-calls');
    list.replaceChildren(...(calls.length ? [] : [element('li', 'muted', 'The run called no tool: the case expects none.')]));
    for (const c of calls) {
      const item = element('li');
      item.append(element('span', 'tool-name', c.functionName));
      for (const [arg, value] of Object.entries(c.arguments ?? {})) {
        const label = element('label', 'check', `${arg} = ${JSON.stringify(value)} `);
        const select = element('select');
        select.dataset.tool = c.functionName;
        select.dataset.arg = arg;
        for (const [how, text] of HOW) {
          const option = element('option', '', text);
          option.value = how;
          select.append(option);
        }
        label.append(select);
        item.append(label);
      }
      list.append(item);
    }
    // Calls the run did not make (declined, blocked, refused, failed) are no calls to expect:
    // shown struck through, left out of the case.
    for (const c of made.leftOut ?? []) {
      const item = element('li', 'left-out');
      item.append(element('s', 'tool-name', c.name), element('span', 'muted', ` left out: ${c.error}`));
      list.append(item);
    }
    say('evals-status', 'Choose how each argument is checked, then add the case.');
  } catch (error) {
    say('evals-status', errorText(error), true);
  }
}

/** Adds the case being made to the suite. */
export async function addCase() {
  const form = $('evals-new');
  const loosen = {};
  for (const select of form.querySelectorAll('select[data-tool]')) {
    if (select.value === 'exact') continue;
    (loosen[select.dataset.tool] ??= {})[select.dataset.arg] = select.value;
  }
  try {
    const made = await call('toEval', {
      runId: form.dataset.runId,
      name: $('evals-new-name').value || undefined,
      loosen,
      results: $('evals-new-results').checked,
    });
    let suite = [];
    try {
      suite = JSON.parse($('evals-file').value || '[]');
    } catch {
      return say('evals-status', 'The suite is not valid JSON: fix it before adding a case.', true);
    }
    if (!Array.isArray(suite)) return say('evals-status', 'The suite must be an array of cases.', true);
    suite.push(made.case);
    $('evals-file').value = JSON.stringify(suite, null, 2);
    keepSuite();
    form.hidden = true;
    say('evals-status', `Added "${made.case.name}" (${suite.length} cases).`);
  } catch (error) {
    say('evals-status', errorText(error), true);
  }
}

