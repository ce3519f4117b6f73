// Observability settings and the bug report: the price table (US dollars per million tokens,
// per model), the trace collectors (OTLP/HTTP, as JSON), and the Run view's "Save bug report".
// Invariant: the worker checks and stores the settings (`configure`) and assembles the report
// (`bugReport`, keys masked); this page only shows and saves; nothing remote is loaded.

import { $, download, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { loadSettings, onSettings } from '../settings.js';
import { state } from '../state.js';

const FIELDS = [
  ['input', 'Input'],
  ['output', 'Output'],
  ['cachedInput', 'Cached input'],
];

function renderPrices() {
  const prices = state.settings?.prices ?? {};
  const rows = (state.settings?.models ?? []).map((model) => {
    const row = element('tr');
    row.dataset.model = model.name;
    row.append(element('th', '', model.name));
    for (const [field, label] of FIELDS) {
      const input = element('input');
      Object.assign(input, { type: 'number', min: '0', step: 'any', placeholder: '–' });
      input.dataset.field = field;
      input.setAttribute('aria-label', `${label} price of ${model.name}`);
      const price = prices[model.name]?.[field];
      if (typeof price === 'number') input.value = String(price);
      const cell = element('td');
      cell.append(input);
      row.append(cell);
    }
    return row;
  });
  $('prices').replaceChildren(...rows);
  $('collectors').value = JSON.stringify(state.settings?.collectors ?? [], null, 2);
}

async function savePrices(event) {
  event.preventDefault();
  const prices = { ...(state.settings?.prices ?? {}) };
  for (const row of $('prices').querySelectorAll('tr')) {
    const value = (field) => row.querySelector(`[data-field="${field}"]`).value.trim();
    delete prices[row.dataset.model];
    if (!value('input') && !value('output')) continue; // not priced
    const price = { input: Number(value('input') || 0), output: Number(value('output') || 0) };
    if (value('cachedInput')) price.cachedInput = Number(value('cachedInput'));
    prices[row.dataset.model] = price;
  }
  await save({ prices }, 'Prices saved.');
}

async function saveCollectors(event) {
  event.preventDefault();
  let collectors;
  try {
    collectors = JSON.parse($('collectors').value || '[]');
  } catch (error) {
    say('observe-status', `The collectors are not JSON: ${errorText(error)}`, true);
    return;
  }
  await save({ collectors }, 'Collectors saved.');
}

async function save(request, done) {
  try {
    await call('configure', request);
    await loadSettings();
    say('observe-status', done);
  } catch (error) {
    say('observe-status', errorText(error), true);
  }
}

/** Saves the shown run's bug report as one JSON file. */
async function saveBugReport() {
  if (!state.runId) {
    say('run-status', 'No run to report.', true);
    return;
  }
  try {
    const { fileName, report } = await call('bugReport', { runId: state.runId });
    download(JSON.stringify(report, null, 2), fileName, 'application/json');
    say('run-status', `Bug report saved as ${fileName}${report.screenshot ? '' : ` (no screenshot: ${report.screenshotError})`}.`);
  } catch (error) {
    say('run-status', `No bug report: ${errorText(error)}`, true);
  }
}

/** Wires the forms and the button (once, at start). */
export function wireObserve() {
  onSettings(renderPrices);
  $('prices-form').addEventListener('submit', savePrices);
  $('collectors-form').addEventListener('submit', saveCollectors);
  $('bug-report').addEventListener('click', saveBugReport);
}
