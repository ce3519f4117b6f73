// The Evals view: the tab's eval suite (a webmcp-evals file, loaded from disk or pasted, kept in
// this extension's localStorage, one per site: the origin of the tab's top frame), run in smoke
// or agent mode, or as a simulations.json in simulate mode with a user model and a judge
// (`evaluate`), its report (counts, the per-model table, a case × run grid with
// each case's pass rate, each result with its reason, calls and run, failures only on demand)
// and the report downloaded as
// HTML or JUnit XML (`evalReport`). "Save as test" in the Run view brings the shown run here
// (`toEval`), with a choice per argument: exact, any value of its type, any value, or left out.
// Invariant: names, reasons and results (which quote page and model text) are set only through
// textContent; the worker runs the suite and judges every case.

import { $, download as saveFile, element, errorText, say, withCode } from '../dom.js';
import { call, topOrigin } from '../host.js';
import { selectRun } from '../shown-run.js';
import { state } from '../state.js';
import { renderTimeline } from './timeline.js';

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
  // Simulate mode: the user model (the agent's by default) and the judge (never the agent's
  // unless chosen).
  for (const [id, none] of [['evals-user-model', "the agent's model"], ['evals-judge-model', 'none']]) {
    const pick = $(id);
    const was = pick.value;
    const empty = element('option', '', none);
    empty.value = '';
    pick.replaceChildren(empty, ...models.map((m) => {
      const option = element('option', '', m.name);
      option.value = m.name;
      option.selected = m.name === was;
      return option;
    }));
  }
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
  const cases = mode === 'simulate' ? { simulations: $('evals-file').value } : { evals: $('evals-file').value };
  const request = { tabId: state.tabId, ...cases, mode, reload: $('evals-reload').checked };
  if (mode !== 'smoke') {
    request.models = [...$('evals-models').selectedOptions].map((o) => o.value);
    request.runs = Number($('evals-runs').value) || 1;
  }
  if (mode === 'simulate') {
    if ($('evals-user-model').value) request.userModel = $('evals-user-model').value;
    if ($('evals-judge-model').value) request.judgeModel = $('evals-judge-model').value;
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

/** The column a result belongs to: its model and run (agent), or the one smoke run. */
const columnOf = (r) => (r.model ? `${r.model} #${r.runIndex + 1}` : 'smoke');
const MARK = { pass: '✓', fail: '✗', error: '!' };

function resultItem(r, index) {
  const item = element('li', `eval-result ${r.outcome}`);
  item.id = `eval-result-${index}`;
  item.dataset.outcome = r.outcome;
  // Failures open; a pass is one line until opened.
  const details = element('details');
  details.open = r.outcome !== 'pass';
  const head = element('summary');
  const run = r.model ? ` · ${columnOf(r)}` : '';
  head.append(element('span', `hint outcome ${r.outcome}`, r.outcome), element('span', 'tool-name', ` ${r.name}`), element('span', 'muted', run));
  if (r.warning) head.append(element('span', 'hint warning', 'the page said…'));
  details.append(head);
  item.append(details);
  const body = details;
  if (r.warning) body.append(withCode('p', 'warning', r.warning));
  if (r.reason) body.append(withCode('p', r.outcome === 'pass' ? 'muted' : 'error', r.reason));
  if (r.runId) {
    const open = element('button', 'small', 'Open its run');
    open.type = 'button';
    open.dataset.runId = r.runId;
    open.setAttribute('aria-label', `Open the run of ${r.name} (${columnOf(r)}) in the Log view`);
    open.addEventListener('click', () => openRun(r.runId));
    body.append(open);
  }
  resultBody(body, r);
  return item;
}

/** Shows a result's run (its timeline) in the Log view. */
async function openRun(runId) {
  await selectRun(runId);
  document.querySelector('#views button[data-view="log"]').click();
  await renderTimeline();
}

/** A simulate result: the verdict and its evidence, the DOM checks, the turns with their calls. */
function simulatedBody(item, r) {
  const v = r.verdict;
  if (v) {
    item.append(element('p', '', `Judge: ${v.passed ? 'passed' : 'not passed'}: ${v.reasoning}`));
    if (v.overruled) item.append(element('p', 'error', `Overruled: ${v.overruled}`));
    const evidence = element('ul', 'eval-evidence');
    evidence.append(...(v.evidence ?? []).map((e) => element('li', 'muted', e)));
    item.append(evidence);
  }
  for (const a of r.assertionResults ?? []) {
    const seen = a.error !== undefined ? `error: ${a.error}` : JSON.stringify(a.actual);
    item.append(element('div', a.outcome === 'pass' ? 'muted' : 'error', `DOM ${a.assertion?.selector} ${a.kind}: expected ${JSON.stringify(a.expected)}, got ${seen}`));
  }
  const turns = element('ol', 'eval-calls');
  for (const t of r.conversation?.turns ?? []) {
    const turn = element('li', 'eval-call');
    turn.append(element('div', '', `User: ${t.userMessage}`));
    turn.append(...(t.toolCalls ?? []).map((c) => element('code', '', `${c.functionName}(${JSON.stringify(c.args)}) → ${c.result === undefined ? '(no result)' : JSON.stringify(c.result)}`)));
    turn.append(element('div', 'muted', `Agent: ${t.agentText}`));
    turns.append(turn);
  }
  item.append(element('div', 'muted', `${r.conversation?.turnsUsed ?? 0} turns, ended by ${r.conversation?.endedBy ?? 'nothing'}`), turns);
}

function resultBody(item, r) {
  if (r.conversation) return simulatedBody(item, r);
  if (r.prompt) item.append(element('p', 'muted', `Prompt: ${r.prompt}`));
  item.append(element('div', 'muted', `Expected: ${r.expected === null ? 'no call' : JSON.stringify(r.expected)}`));
  const calls = element('ol', 'eval-calls');
  calls.append(...(r.calls.length ? r.calls.map(callRow) : [element('li', 'muted', 'No call made.')]));
  item.append(calls);
}

/** Shows an evaluation's answer. */
export function renderReport(answer) {
  $('evals-summary').textContent = `${answer.testCount} results: ${answer.passCount} passed, ${answer.failCount} failed, ${answer.errorCount} errors`;
  const table = $('evals-table');
  const models = Object.entries(answer.models ?? {});
  table.hidden = models.length === 0;
  const head = element('tr');
  head.append(...['Model', 'Pass', 'pass^k', 'pass@k', 'Median', 'p95', 'Tokens', 'Cost'].map((t) => element('th', '', t)));
  table.replaceChildren(
    head,
    ...models.map(([name, m]) => {
      const row = element('tr');
      const tokens = m.tokens === null || m.tokens === undefined ? 'unknown' : m.tokens;
      const share = (v) => (typeof v === 'number' ? `${Math.round(v * 100)}%` : '–');
      const cost = typeof m.costUsd === 'number' ? `$${m.costUsd.toFixed(4)}` : 'unknown';
      row.append(...[name, share(m.passRate), share(m['pass^k']), share(m['pass@k']), `${m.latencyMs.median} ms`, `${m.latencyMs.p95} ms`, tokens, cost].map((t) => element('td', '', t)));
      return row;
    }),
  );
  renderGrid(answer.results);
  $('evals-results').replaceChildren(...answer.results.map(resultItem));
  $('evals-downloads').hidden = false;
  $('evals-filter-row').hidden = false;
  applyFailureFilter();
}

/**
 * The results as a test report: one row per case, one column per run (model and run number;
 * one for smoke), each cell its outcome linked to the result below, then the case's pass rate.
 */
function renderGrid(results) {
  const columns = [...new Set(results.map(columnOf))];
  // A case is its index in the suite (two cases may share a name; older answers: the name).
  const cases = new Map(); // case → {name, cells: Map(column → [result, index]), passed, total}
  results.forEach((r, index) => {
    const key = r.caseIndex ?? r.name;
    const row = cases.get(key) ?? { name: r.name, cells: new Map(), passed: 0, total: 0 };
    row.cells.set(columnOf(r), [r, index]);
    row.total += 1;
    if (r.outcome === 'pass') row.passed += 1;
    cases.set(key, row);
  });
  const grid = $('evals-grid');
  const head = element('tr');
  head.append(element('th', '', 'Case'), ...columns.map((c) => element('th', '', c)), element('th', '', 'Pass rate'));
  const rows = [...cases.values()].map((row) => {
    const { name } = row;
    const tr = element('tr');
    tr.dataset.case = name;
    tr.dataset.allPass = String(row.passed === row.total);
    tr.append(element('th', 'case-name', name));
    for (const column of columns) {
      const cell = element('td');
      const found = row.cells.get(column);
      if (found) {
        const [r, index] = found;
        const link = element('a', `cell ${r.outcome}`, `${MARK[r.outcome] ?? '!'}${r.warning ? '*' : ''}`);
        link.href = `#eval-result-${index}`;
        link.dataset.outcome = r.outcome;
        link.setAttribute('aria-label', `${name}, ${column}: ${r.outcome}${r.warning ? ', but the page said something' : ''}`);
        link.title = r.warning ?? r.reason ?? r.outcome;
        link.addEventListener('click', (event) => {
          event.preventDefault();
          const item = $(`eval-result-${index}`);
          item.querySelector('details').open = true;
          item.classList.remove('filtered-out');
          item.scrollIntoView({ block: 'nearest' });
          item.querySelector('summary').focus();
        });
        cell.append(link);
      } else {
        cell.append(element('span', 'muted', '–'));
      }
      tr.append(cell);
    }
    const rate = element('td', 'pass-rate', `${row.passed}/${row.total} (${Math.round((row.passed / row.total) * 100)}%)`);
    tr.append(rate);
    return tr;
  });
  grid.replaceChildren(element('caption', 'muted', 'Cases × runs (✓ pass, ✗ fail, ! error, * the page said something)'), head, ...rows);
  grid.hidden = results.length === 0;
}

/** "Failures only": hides the passed results, and the cases that passed every run. */
export function applyFailureFilter() {
  const only = $('evals-failures').checked;
  for (const item of document.querySelectorAll('#evals-results li.eval-result')) {
    item.classList.toggle('filtered-out', only && item.dataset.outcome === 'pass');
  }
  for (const row of document.querySelectorAll('#evals-grid tr[data-case]')) {
    row.classList.toggle('filtered-out', only && row.dataset.allPass === 'true');
  }
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

