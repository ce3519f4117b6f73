// WebMCP Host: the person's side, shared by the popup and the side panel. The entry module:
// start-up (the tab shown, the first loads, the latest run), view switching, the pushes from the
// worker and the 1 s catch-up while the shown run runs. Each view lives in views/; every request
// goes through host.js's `call`. Invariant: it holds no decisions the host owns; every text from
// a model, a page or a server is set with textContent, never parsed as HTML; nothing here loads
// a remote resource.

import { $, errorText, say } from './dom.js';
import { call } from './host.js';
import { loadSettings, onSettings } from './settings.js';
import { addEvents, catchUp, selectRun } from './shown-run.js';
import { params, state, SURFACE } from './state.js';
import { renderAnswer } from './views/answer.js';
import { exportSarif, exportToolsJson, runAudit } from './views/audit.js';
import * as evals from './views/evals.js';
import * as crawl from './views/crawl.js';
import { renderKeys, submitKey } from './views/keys.js';
import { applyFilter, exportLog, refreshRuns } from './views/log.js';
import { applyPreset, renderModels, submitModel } from './views/models.js';
import { refreshPending } from './views/pending.js';
import { filterTools, loadTools, renderExtraTools, renderModelSelect, startRun, stopRun } from './views/run.js';
import { renderServers, submitServer, toggleContext7 } from './views/servers.js';
import { CONTINUE_PROMPT, newConversation } from './views/thread.js';
import { renderMiddleware, saveMiddleware } from './views/middleware.js';
import { wireObserve } from './views/observe.js';
import { initCall, loadCallTools } from './views/call.js';
import { runDiagnosis } from './views/diagnose.js';
import { initInventory, loadInventory } from './views/inventory.js';
import { renderRunCalls, renderTimeline, showRaw } from './views/timeline.js';

// ------------------------------------------------------------------------------------------
// The tab this view is about: `?tab=ID` (or `?tabId=ID`), else the active tab of the last
// focused window. The side panel follows the active tab when no tab is given.

async function findTab() {
  // The window that asks the person is about no tab (its own is the extension's page).
  if (SURFACE === 'window') return null;
  const given = params.get('tab') ?? params.get('tabId');
  if (given !== null) return Number(given);
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  return tab?.id ?? null;
}

// ------------------------------------------------------------------------------------------
// Views

function showView(name) {
  for (const section of document.querySelectorAll('.view')) section.hidden = section.id !== `view-${name}`;
  for (const tab of document.querySelectorAll('#views button')) {
    if (tab.dataset.view === name) tab.setAttribute('aria-current', 'page');
    else tab.removeAttribute('aria-current');
  }
  document.body.dataset.view = name;
  if (name === 'pending') refreshPending();
  if (name === 'log') refreshRuns().then(renderTimeline);
  if (name === 'run') renderRunCalls();
  if (name === 'call') loadCallTools();
  if (name === 'inventory') loadInventory();
  if (name === 'audit') runAudit();
  if (name === 'evals') evals.renderEvals();
}

// The views that show the worker's settings, in the order they render after each load.
onSettings(renderModels, renderServers, renderKeys, renderModelSelect, renderExtraTools, renderMiddleware, evals.renderEvals);
wireObserve();

// ------------------------------------------------------------------------------------------
// Pushes from the worker: events of the shown run, pending items, runs started elsewhere.

const WORKER_URL = chrome.runtime.getURL('worker.js');

chrome.runtime.onMessage.addListener((message, sender) => {
  const kind = message?.webmcpHostUi;
  if (!kind) return; // not for us (requests of other pages go to the worker)
  // Pushes come from the worker alone: a content script (a renderer a page may have
  // compromised) can send the same shapes, to show forged agent output.
  if (sender?.id !== chrome.runtime.id || sender.tab || sender.url !== WORKER_URL) return;
  if (kind === 'event' && message.runId === state.runId) {
    if (!addEvents(message.seq, [message.event], [message.time])) catchUp();
    else {
      renderAnswer();
      applyFilter();
    }
    timelineSoon();
  } else if (kind === 'finished' && message.runId === state.runId) {
    catchUp();
    timelineSoon();
  } else if (kind === 'evalProgress') {
    evals.onProgress(message);
  } else if (kind === 'crawlProgress') {
    crawl.onProgress(message);
  } else if (kind === 'pending') {
    // A call that asks the person brings the Pending view forward (the Call view, whose own
    // call by hand asks, says where to answer and shows the result when it comes).
    const view = document.body.dataset.view;
    if (message.asks && view !== 'pending' && view !== 'call') showView('pending');
    else refreshPending();
  } else if (kind === 'toolsChanged' && message.tabId === state.tabId) {
    relistTools();
  } else if (kind === 'started' && !state.runId && (message.run.tabId === state.tabId || SURFACE === 'sidepanel')) {
    selectRun(message.run.runId);
  }
});

// The timeline is built by the host: asked again at most every 300 ms while the log shows it.
let timelineTimer = null;
function timelineSoon() {
  runCallsSoon();
  if (timelineTimer || document.body.dataset.view !== 'log' || !$('raw-box').hidden) return;
  timelineTimer = setTimeout(() => {
    timelineTimer = null;
    renderTimeline();
  }, 300);
}

// The Run view's calls follow the run, at most every 300 ms.
let runCallsTimer = null;
function runCallsSoon() {
  if (runCallsTimer || document.body.dataset.view !== 'run') return;
  runCallsTimer = setTimeout(() => {
    runCallsTimer = null;
    renderRunCalls();
  }, 300);
}

// A page's frames may announce changes in bursts: the tab is listed again once at a time, and
// once more after that listing when notices came meanwhile.
let relisting = null;
function relistTools() {
  if (relisting) {
    relisting.again = true;
    return;
  }
  relisting = { again: false };
  loadTools().finally(() => {
    const { again } = relisting;
    relisting = null;
    if (again) relistTools();
  });
}

// A push may be lost (the page was busy, the worker restarted): while the shown run runs,
// catch up now and then.
setInterval(() => {
  if (state.log.run?.state === 'running') catchUp();
}, 1_000);

// ------------------------------------------------------------------------------------------

async function main() {
  for (const tab of document.querySelectorAll('#views button')) {
    tab.addEventListener('click', () => showView(tab.dataset.view));
  }
  $('prompt-form').addEventListener('submit', startRun);
  $('tool-search').addEventListener('input', filterTools);
  $('prompt').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) $('prompt-form').requestSubmit();
  });
  $('stop').addEventListener('click', stopRun);
  $('new-conversation').addEventListener('click', newConversation);
  $('audit-run').addEventListener('click', () => runAudit());
  $('middleware-form').addEventListener('submit', saveMiddleware);
  $('audit-sarif').addEventListener('click', exportSarif);
  $('audit-tools-json').addEventListener('click', exportToolsJson);
  $('evals-run').addEventListener('click', evals.runEvals);
  $('crawl-run').addEventListener('click', crawl.runCrawl);
  $('crawl-stop').addEventListener('click', crawl.stopCrawl);
  $('crawl-download').addEventListener('click', crawl.downloadReport);
  $('evals-failures').addEventListener('change', evals.applyFailureFilter);
  $('evals-load').addEventListener('change', () => evals.loadFile().catch((e) => say('evals-status', errorText(e), true)));
  $('evals-file').addEventListener('change', evals.keepSuite);
  $('evals-html').addEventListener('click', () => evals.download('html'));
  $('evals-junit').addEventListener('click', () => evals.download('junit'));
  $('evals-new').addEventListener('submit', (event) => (event.preventDefault(), evals.addCase()));
  $('save-test').addEventListener('click', evals.saveAsTest);
  $('continue').addEventListener('click', (event) => startRun(event, CONTINUE_PROMPT));
  $('log-filter').addEventListener('change', applyFilter);
  $('run-select').addEventListener('change', () => selectRun($('run-select').value).then(renderTimeline));
  $('log-raw').addEventListener('click', () => showRaw($('raw-box').hidden));
  $('diagnose').addEventListener('click', runDiagnosis);
  initCall();
  initInventory();
  $('developer-tools').addEventListener('change', () => {
    document.body.dataset.developer = $('developer-tools').checked ? 'on' : 'off';
    const shown = document.body.dataset.view;
    if (shown === 'call') loadCallTools();
    if (shown === 'inventory') loadInventory();
  });
  $('export').addEventListener('click', () => exportLog().catch((e) => say('log-status', errorText(e), true)));
  $('model-preset').addEventListener('change', applyPreset);
  $('model-form').addEventListener('submit', submitModel);
  $('server-form').addEventListener('submit', submitServer);
  $('context7').addEventListener('change', () => toggleContext7().catch((e) => say('servers-status', errorText(e), true)));
  $('key-form').addEventListener('submit', submitKey);
  $('open-panel').hidden = SURFACE !== 'popup' || !chrome.sidePanel;
  $('open-panel').addEventListener('click', async () => {
    try {
      const windowId = (await chrome.windows.getCurrent()).id;
      await chrome.sidePanel.open({ windowId });
      if (!params.has('tab')) window.close();
    } catch (error) {
      say('run-status', `The side panel could not open: ${errorText(error)}`, true);
    }
  });

  const version = await call('version').catch(() => null);
  $('version').textContent = version ? `v${version}` : '';
  state.tabId = await findTab();
  $('tab-label').textContent = typeof state.tabId === 'number' ? `tab ${state.tabId}` : 'no tab';
  if (SURFACE === 'sidepanel' && !params.has('tab') && !params.has('tabId')) {
    chrome.tabs.onActivated.addListener(async ({ tabId }) => {
      state.tabId = tabId;
      $('tab-label').textContent = `tab ${tabId}`;
      await loadTools();
    });
  }
  await Promise.all([loadSettings(), loadTools(), refreshPending()]);
  // A tab without tools says why at once.
  if (typeof state.tabId === 'number' && $('tools').children.length === 0) runDiagnosis();
  // The person's latest run of this tab (or of any tab in the side panel), so that a closed
  // and reopened popup shows where it was; an evaluation's runs are not the person's.
  const runs = await refreshRuns();
  const latest = runs.find((r) => !r.eval && (SURFACE === 'sidepanel' || r.tabId === state.tabId)) ?? null;
  if (latest) await selectRun(latest.runId);
  showView(params.get('view') ?? 'run');
  document.body.dataset.state = 'ready';
}

main().catch((error) => {
  say('status', `Error: ${errorText(error)}`, true);
  document.body.dataset.state = 'error';
});
