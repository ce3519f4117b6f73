// WebMCP Host: the person's side, shared by the popup and the side panel. A thin view over the
// worker's operations (runtime messages `{op, ...}`, the same operations as the automation
// surface). It holds no decisions the host owns. Every text from a model, a page or a server is
// set with textContent, never parsed as HTML; nothing here loads a remote resource.

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const SURFACE = document.body.dataset.surface ?? 'popup';

/** A visitor tool every run from here offers: the model may ask the person a question. */
const ASK_PERSON = {
  name: 'ask_person',
  description: 'Ask the person at the browser a question and wait for their answer (text).',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', description: 'The question, in one or two sentences.' } },
    required: ['question'],
  },
};

// ------------------------------------------------------------------------------------------
// Worker calls

/** An operation of the host: resolves to its value, or throws its error (every operation answers `{ok, value | error}`). */
async function call(op, request = {}) {
  const answer = await chrome.runtime.sendMessage({ op, ...request });
  if (!answer?.ok) throw new Error(answer?.error ?? `no answer to ${op}`);
  return answer.value;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function button(text, onClick, className) {
  const node = element('button', className, text);
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

function say(id, text, isError = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle('error', isError);
}

const errorText = (error) => String(error?.message ?? error);

// ------------------------------------------------------------------------------------------
// The tab this view is about: `?tab=ID` (or `?tabId=ID`), else the active tab of the last
// focused window. The side panel follows the active tab when no tab is given.

const state = {
  tabId: null,
  settings: null,
  runId: null, // the run shown in the run view and the log
  log: { runId: null, events: [], times: [], run: null },
  filter: '',
  pending: [],
};

async function findTab() {
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
  if (name === 'log') refreshRuns();
}

// ------------------------------------------------------------------------------------------
// Run view: the tab's tools, the prompt, the streamed answer, stop.

const HINTS = [
  ['readOnlyHint', 'read-only', ''],
  ['consequentialHint', 'consequential', 'consequential'],
  ['untrustedContentHint', 'untrusted content', ''],
];

function renderTool(tool) {
  const item = element('li');
  item.dataset.tool = tool.name;
  const title = element('div');
  title.append(element('span', 'tool-name', tool.name));
  for (const [key, label, extra] of HINTS) {
    if (tool.annotations?.[key]) title.append(element('span', `hint ${extra}`.trim(), label));
  }
  item.append(title);
  if (tool.description) item.append(element('p', 'tool-desc', tool.description));
  const inputs = Object.keys(tool.inputSchema?.properties ?? {});
  const frame = tool.frameId === 0 ? 'top frame' : `frame ${tool.frameId}`;
  const meta = `${inputs.length ? `(${inputs.join(', ')})` : '(no input)'} · ${tool.origin} · ${frame}`;
  item.append(element('div', 'tool-meta', meta));
  return item;
}

function renderExtraTool(name, description, hint, hintClass = '') {
  const item = element('li');
  item.dataset.tool = name;
  const title = element('div');
  title.append(element('span', 'tool-name', name));
  if (hint) title.append(element('span', `hint ${hintClass}`.trim(), hint));
  item.append(title);
  if (description) item.append(element('p', 'tool-desc', description));
  return item;
}

async function loadTools() {
  if (typeof state.tabId !== 'number' || Number.isNaN(state.tabId)) {
    say('status', 'No tab to read.');
    return;
  }
  let answer;
  try {
    answer = await call('listTools', { tabId: state.tabId });
  } catch (error) {
    say('status', `Could not read the tab's tools: ${errorText(error)}`, true);
    $('tools').replaceChildren();
    $('tool-count').textContent = '';
    return;
  }
  $('tool-count').textContent = `(${answer.tools.length})`;
  $('tools').replaceChildren(...answer.tools.map(renderTool));
  say('status', answer.tools.length ? '' : 'This tab offers no WebMCP tools.');
  $('problems-box').hidden = answer.problems.length === 0;
  $('problem-count').textContent = `(${answer.problems.length})`;
  $('problems').replaceChildren(
    ...answer.problems.map((p) => element('li', '', p.tool ? `${p.tool}: ${p.message}` : p.message)),
  );
}

function renderExtraTools() {
  const list = [
    renderExtraTool('current_time', 'The current date and time where you are.', 'read-only'),
    renderExtraTool(ASK_PERSON.name, ASK_PERSON.description, 'asks you'),
  ];
  const states = state.settings?.serverStates ?? {};
  for (const server of state.settings?.servers ?? []) {
    if (!server.enabled) continue;
    const known = states[server.name];
    if (!known?.ok) {
      list.push(renderExtraTool(`${server.name}`, known?.error ? `Last check failed: ${known.error}` : 'MCP server, not checked yet: its tools are listed at the run’s start.', 'MCP'));
      continue;
    }
    for (const tool of known.names ?? []) {
      list.push(renderExtraTool(tool.name, tool.description, tool.confirm ? 'asks first' : 'MCP', tool.confirm ? 'consequential' : ''));
    }
  }
  $('extra-tools').replaceChildren(...list);
}

function renderModelSelect() {
  const select = $('model-select');
  const models = state.settings?.models ?? [];
  const current = select.value;
  select.replaceChildren(
    ...models.map((m) => {
      const option = element('option', '', m.name === state.settings.default ? `${m.name} (default)` : m.name);
      option.value = m.name;
      return option;
    }),
  );
  if (models.some((m) => m.name === current)) select.value = current;
  else if (state.settings?.default) select.value = state.settings.default;
  $('run').disabled = models.length === 0;
  if (models.length === 0) say('run-status', 'Add a model under Models first.');
}

/** The answer as it is written: the text of the run's messages, from its events. */
function renderAnswer() {
  const parts = [];
  for (const event of state.log.events) {
    if (event.type === 'TEXT_MESSAGE_START') parts.push('');
    else if (event.type === 'TEXT_MESSAGE_CONTENT') {
      if (parts.length === 0) parts.push('');
      parts[parts.length - 1] += event.delta;
    }
  }
  $('answer').textContent = parts.filter((p) => p.length).join('\n\n');
}

function renderRunState() {
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

async function startRun(event) {
  event.preventDefault();
  const prompt = $('prompt').value.trim();
  if (!prompt) return;
  const request = { prompt, visitorTools: [ASK_PERSON] };
  if (typeof state.tabId === 'number') request.tabId = state.tabId;
  if ($('model-select').value) request.model = $('model-select').value;
  $('run').disabled = true;
  try {
    const { runId } = await call('startRun', request);
    await selectRun(runId);
    say('run-status', 'Running…');
  } catch (error) {
    say('run-status', errorText(error), true);
  } finally {
    $('run').disabled = false;
  }
}

async function stopRun() {
  if (!state.runId) return;
  try {
    await call('stop', { runId: state.runId, reason: 'stopped by the person' });
  } catch (error) {
    say('run-status', errorText(error), true);
  }
}

// ------------------------------------------------------------------------------------------
// Log: a row per event (type, time, summary, JSON), tool calls grouped, repairs marked.

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
      return event.content;
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

function appendLogEvent(event, time) {
  const row = eventRow(event, time);
  row.hidden = !!state.filter && event.type !== state.filter;
  const callId = callIdOf(event);
  const group = callId ? groupFor(callId, event) : null;
  if (group) {
    group.rows.append(row);
    if (event.type === 'TOOL_CALL_ARGS') group.argText += event.delta;
    if (event.type === 'TOOL_CALL_START') group.name.textContent = event.toolCallName;
    if (event.type === 'TOOL_CALL_RESULT') group.result.textContent = String(event.content).slice(0, 200);
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

function applyFilter() {
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

function resetLog() {
  callGroups.clear();
  $('log').replaceChildren();
  state.log = { runId: state.runId, events: [], times: [], run: null };
}

/** Adds events from `since`; returns whether they were in order. */
function addEvents(since, events, times) {
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
function catchUp() {
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
      applyFilter();
    } catch (error) {
      say('log-status', errorText(error), true);
    } finally {
      fetching = null;
    }
  })();
  return fetching;
}

async function selectRun(runId) {
  state.runId = runId;
  resetLog();
  $('log-filter').replaceChildren(element('option', '', 'All types'));
  $('log-filter').options[0].value = '';
  state.filter = '';
  await refreshRuns();
  await catchUp();
}

async function refreshRuns() {
  let runs = [];
  try {
    runs = await call('runs', typeof state.tabId === 'number' && SURFACE === 'popup' && params.has('tab') ? { tabId: state.tabId } : {});
  } catch (error) {
    say('log-status', errorText(error), true);
  }
  const select = $('run-select');
  select.replaceChildren(
    ...runs.map((run) => {
      const when = new Date(run.startedMs).toLocaleTimeString();
      const option = element('option', '', `${when} · ${run.state} · ${run.prompt || run.runId}`);
      option.value = run.runId;
      return option;
    }),
  );
  if (state.runId) select.value = state.runId;
  return runs;
}

async function exportLog() {
  if (!state.runId) {
    say('log-status', 'No run to export.', true);
    return;
  }
  const log = await call('runLog', { runId: state.runId });
  const text = log.events.map((e) => JSON.stringify(e)).join('\n') + '\n';
  const url = URL.createObjectURL(new Blob([text], { type: 'application/x-ndjson' }));
  const link = element('a');
  link.href = url;
  link.download = `webmcp-host-${state.runId}.jsonl`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  say('log-status', `Exported ${log.events.length} events.`);
}

// ------------------------------------------------------------------------------------------
// Pending items: visitor inputs and confirmations of runs without a tab.

function renderPending() {
  const items = state.pending;
  $('pending-count').textContent = items.length ? String(items.length) : '';
  $('pending-empty').hidden = items.length > 0;
  $('pending').replaceChildren(
    ...items.map((item) => {
      const li = element('li', `pending ${item.kind}`);
      li.dataset.callId = item.callId;
      li.dataset.kind = item.kind;
      const heading =
        item.kind === 'confirmation'
          ? `Allow “${item.name}” of MCP server ${item.server}?`
          : item.name === ASK_PERSON.name && typeof item.args?.question === 'string'
            ? item.args.question
            : `The agent asks you to run “${item.name}”`;
      li.append(element('p', 'pending-title', heading));
      li.append(element('pre', 'pending-args', JSON.stringify(item.args, null, 2)));
      li.append(element('p', 'muted', `run ${item.runId}`));
      const actions = element('div', 'row');
      const done = (op, body) => async () => {
        try {
          await call(op, { runId: item.runId, callId: item.callId, ...body });
        } catch (error) {
          li.append(element('p', 'error', errorText(error)));
        }
        refreshPending();
      };
      if (item.kind === 'input') {
        const id = `answer-${item.callId}`;
        const label = element('label', '', 'Your answer');
        label.htmlFor = id;
        const input = element('textarea');
        input.id = id;
        input.rows = 2;
        actions.append(
          button('Answer', async () => done('answer', { value: input.value })()),
          button('Decline', done('decline', {})),
        );
        li.append(label, input, actions);
      } else {
        actions.append(button('Allow', done('answer', { value: true })), button('Decline', done('decline', {})));
        li.append(actions);
      }
      return li;
    }),
  );
}

async function refreshPending() {
  try {
    state.pending = await call('pending');
    renderPending();
  } catch (error) {
    say('pending-empty', errorText(error), true);
  }
}

// ------------------------------------------------------------------------------------------
// Settings: models, servers, keys. The worker keeps them; these forms edit its lists.

async function loadSettings() {
  state.settings = await call('settings');
  renderModels();
  renderServers();
  renderKeys();
  renderModelSelect();
  renderExtraTools();
}

function renderModels() {
  const { models, presets } = state.settings;
  const presetSelect = $('model-preset');
  if (presetSelect.options.length === 0) {
    const none = element('option', '', 'Choose a preset…');
    none.value = '';
    presetSelect.append(none, ...presets.map((p) => Object.assign(element('option', '', p.label), { value: p.id })));
  }
  $('models').replaceChildren(
    ...models.map((model) => {
      const li = element('li', 'card');
      li.dataset.model = model.name;
      const title = element('div');
      title.append(element('span', 'tool-name', model.name));
      if (model.name === state.settings.default) title.append(element('span', 'hint', 'default'));
      li.append(title, element('div', 'tool-meta', `${model.provider} · ${model.model || '—'} · ${model.baseUrl || 'in the browser'}${model.keyRef ? ` · key ${model.keyRef}` : ''}`));
      const report = element('p', 'report muted');
      report.setAttribute('role', 'status');
      const actions = element('div', 'row');
      actions.append(
        button('Test connection', async () => {
          report.textContent = 'Testing…';
          try {
            const result = await call('testModel', { name: model.name });
            report.textContent = result.message;
            report.className = `report ${result.ok ? 'ok' : 'error'}`;
          } catch (error) {
            report.textContent = errorText(error);
            report.className = 'report error';
          }
        }),
        button('Edit', () => editModel(model)),
        button('Make default', () => saveRegistry(models, model.name)),
        button('Remove', () => saveRegistry(models.filter((m) => m !== model), state.settings.default === model.name ? null : state.settings.default)),
      );
      li.append(actions, report);
      return li;
    }),
  );
}

function editModel(model) {
  $('model-name').value = model.name;
  $('model-provider').value = model.provider;
  $('model-base').value = model.baseUrl ?? '';
  $('model-id').value = model.model ?? '';
  $('model-key').value = model.keyRef ?? '';
  $('model-native').checked = !!model.nativeTools;
  $('model-default').checked = state.settings.default === model.name;
  $('model-name').focus();
}

function applyPreset() {
  const preset = state.settings.presets.find((p) => p.id === $('model-preset').value);
  if (!preset) return;
  $('model-provider').value = preset.provider;
  $('model-base').value = preset.baseUrl;
  $('model-id').value = preset.model;
  $('model-native').checked = preset.nativeTools;
  if (!$('model-name').value) $('model-name').value = preset.id;
  if (preset.needsKey && !$('model-key').value) $('model-key').value = preset.id;
  if (!preset.needsKey) $('model-key').value = '';
}

async function saveRegistry(models, defaultName) {
  try {
    await call('configure', { models, default: defaultName ?? null });
    say('models-status', 'Saved.');
    await loadSettings();
  } catch (error) {
    say('models-status', errorText(error), true);
  }
}

async function submitModel(event) {
  event.preventDefault();
  const model = {
    name: $('model-name').value.trim(),
    provider: $('model-provider').value,
    baseUrl: $('model-base').value.trim(),
    model: $('model-id').value.trim(),
    nativeTools: $('model-native').checked,
  };
  const keyRef = $('model-key').value.trim();
  if (keyRef) model.keyRef = keyRef;
  const models = state.settings.models.filter((m) => m.name !== model.name).concat(model);
  const makeDefault = $('model-default').checked || !state.settings.default;
  await saveRegistry(models, makeDefault ? model.name : state.settings.default);
}

function serverState(server) {
  const known = state.settings.serverStates?.[server.name];
  if (!known) return 'not checked yet';
  const when = new Date(known.checkedMs).toLocaleTimeString();
  return known.ok ? `connected · ${known.tools} tools · checked ${when}` : `error: ${known.error} · checked ${when}`;
}

function renderServers() {
  const servers = state.settings.servers;
  $('context7').checked = servers.some((s) => s.url === state.settings.context7.url);
  $('servers').replaceChildren(
    ...servers.map((server) => {
      const li = element('li', 'card');
      li.dataset.server = server.name;
      const title = element('div');
      title.append(element('span', 'tool-name', server.name));
      if (server.trusted) title.append(element('span', 'hint consequential', 'trusted'));
      li.append(title);
      li.append(element('div', 'tool-meta', `${server.url}${server.namespace ? ` · ${server.namespace}__` : ''}${server.keyRef ? ` · key ${server.keyRef} in ${server.keyHeader}` : ''}`));
      const status = element('p', 'server-state', serverState(server));
      status.setAttribute('role', 'status');
      const enabledId = `enabled-${server.name}`;
      const enabled = element('input');
      enabled.type = 'checkbox';
      enabled.id = enabledId;
      enabled.checked = server.enabled !== false;
      enabled.addEventListener('change', () =>
        saveServers(servers.map((s) => (s === server ? { ...s, enabled: enabled.checked } : s))),
      );
      const label = element('label', 'check');
      label.append(enabled, document.createTextNode(' Enabled'));
      const actions = element('div', 'row');
      actions.append(
        label,
        button('Check', async () => {
          status.textContent = 'Checking…';
          try {
            await call('checkServer', { name: server.name });
          } catch (error) {
            status.textContent = errorText(error);
          }
          await loadSettings();
        }),
        button('Remove', () => saveServers(servers.filter((s) => s !== server))),
      );
      const access = element('p', 'server-access muted');
      access.dataset.origin = originPattern(server.url);
      // OAuth sign-in (MCP authorization): the state only, never a token.
      const auth = element('p', 'server-auth', 'Sign-in: …');
      auth.dataset.server = server.name;
      auth.setAttribute('role', 'status');
      const authActions = element('div', 'row');
      authActions.append(
        button('Sign in', async () => {
          auth.textContent = 'Signing in… (finish in the window the browser opens)';
          try {
            await call('signIn', { server: server.name });
          } catch (error) {
            auth.textContent = `Sign-in failed: ${errorText(error)}`;
            return;
          }
          await refreshAuth();
        }),
        button('Sign out', async () => {
          try {
            await call('signOut', { server: server.name });
          } catch (error) {
            auth.textContent = `Sign-out failed: ${errorText(error)}`;
            return;
          }
          await refreshAuth();
        }),
      );
      li.append(actions, status, access, auth, authActions);
      describeAccess(server.url, access);
      return li;
    }),
  );
  refreshAuth();
}

/** Each server's sign-in state, as `authState` reports it (no token ever reaches this page). */
async function refreshAuth() {
  let states = [];
  try {
    states = await call('authState');
  } catch (error) {
    for (const node of document.querySelectorAll('.server-auth')) node.textContent = `Sign-in: unknown (${errorText(error)})`;
    return;
  }
  for (const node of document.querySelectorAll('.server-auth')) {
    const known = states.find((s) => s.server === node.dataset.server);
    if (!known?.signedIn) {
      node.textContent = 'Not signed in (only needed when the server asks for it).';
      continue;
    }
    const until = known.expiresAtMs ? ` · token until ${new Date(known.expiresAtMs).toLocaleTimeString()}` : '';
    node.textContent = `Signed in${known.issuer ? ` at ${known.issuer}` : ''}${known.scope ? ` · scope ${known.scope}` : ''}${until}.`;
  }
}

/** The host permission pattern of a server's origin (any port). */
function originPattern(url) {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.hostname}/*`;
  } catch {
    return '';
  }
}

const CORS_NOTE = 'without it, requests rely on the server allowing this extension through CORS';

async function describeAccess(url, node) {
  const pattern = originPattern(url);
  if (!pattern) return;
  const granted = await chrome.permissions.contains({ origins: [pattern] }).catch(() => false);
  node.textContent = granted ? `Host access to ${pattern}: granted.` : `Host access to ${pattern}: not granted; ${CORS_NOTE}.`;
}

/** Asks for the server's origin (a prompt the person answers); never blocks saving it. */
async function requestAccess(url) {
  const pattern = originPattern(url);
  if (!pattern) return;
  let outcome;
  try {
    outcome = (await chrome.permissions.request({ origins: [pattern] }))
      ? `Host access to ${pattern} granted.`
      : `Host access to ${pattern} was not granted; ${CORS_NOTE}.`;
  } catch (error) {
    outcome = `Host access to ${pattern} could not be asked for (${errorText(error)}); ${CORS_NOTE}.`;
  }
  say('servers-status', outcome);
  for (const node of document.querySelectorAll('.server-access')) {
    if (node.dataset.origin === pattern) describeAccess(url, node);
  }
}

async function saveServers(servers) {
  try {
    await call('configure', { servers });
    await loadSettings();
    return true;
  } catch (error) {
    say('servers-status', errorText(error), true);
    return false;
  }
}

async function submitServer(event) {
  event.preventDefault();
  const server = {
    name: $('server-name').value.trim(),
    url: $('server-url').value.trim(),
    trusted: $('server-trusted').checked,
    enabled: true,
  };
  const namespace = $('server-ns').value.trim();
  if (namespace) server.namespace = namespace;
  const keyRef = $('server-key').value.trim();
  if (keyRef) {
    server.keyRef = keyRef;
    server.keyHeader = $('server-header').value.trim() || 'authorization';
  }
  // Ask for the origin now, while the click still counts as the person's gesture; the
  // answer is reported when it comes (a test browser may never show the prompt).
  const asking = requestAccess(server.url);
  const servers = state.settings.servers.filter((s) => s.name !== server.name).concat(server);
  if (await saveServers(servers)) {
    say('servers-status', `Added ${server.name}. The browser asks you for access to ${originPattern(server.url)}; until you allow it, requests rely on the server allowing this extension through CORS.`);
    $('server-form').reset();
    $('server-header').value = 'authorization';
  }
  return asking;
}

async function toggleContext7() {
  const preset = state.settings.context7;
  const key = $('context7-key').value;
  const others = state.settings.servers.filter((s) => s.url !== preset.url);
  if (!$('context7').checked) {
    await saveServers(others);
    return;
  }
  const server = key ? { ...state.settings.context7WithKey } : { ...preset };
  if (key) {
    await call('configure', { keys: { [server.keyRef]: key } });
    $('context7-key').value = '';
  }
  requestAccess(server.url);
  if (await saveServers(others.concat(server))) say('servers-status', 'Context7 added.');
}

function renderKeys() {
  $('keys').replaceChildren(
    ...state.settings.keys.map((key) => {
      const li = element('li', 'card key');
      li.dataset.key = key.ref;
      li.append(element('span', 'tool-name', key.ref), element('code', 'masked', key.masked));
      li.append(
        button(`Clear`, async () => {
          await call('configure', { keys: { [key.ref]: null } });
          say('keys-status', `Cleared ${key.ref}.`);
          await loadSettings();
        }),
      );
      li.lastChild.setAttribute('aria-label', `Clear key ${key.ref}`);
      return li;
    }),
  );
}

async function submitKey(event) {
  event.preventDefault();
  const ref = $('key-ref').value.trim();
  const value = $('key-value').value;
  $('key-value').value = '';
  try {
    await call('configure', { keys: { [ref]: value } });
    say('keys-status', `Saved ${ref} for this browser session.`);
    $('key-ref').value = '';
    await loadSettings();
  } catch (error) {
    say('keys-status', errorText(error), true);
  }
}

// ------------------------------------------------------------------------------------------
// Pushes from the worker: events of the shown run, pending items, runs started elsewhere.

chrome.runtime.onMessage.addListener((message) => {
  const kind = message?.webmcpHostUi;
  if (!kind) return; // not for us (requests of other pages go to the worker)
  if (kind === 'event' && message.runId === state.runId) {
    if (!addEvents(message.seq, [message.event], [message.time])) catchUp();
    else {
      renderAnswer();
      applyFilter();
    }
  } else if (kind === 'finished' && message.runId === state.runId) {
    catchUp();
  } else if (kind === 'pending') {
    refreshPending();
  } else if (kind === 'toolsChanged' && message.tabId === state.tabId) {
    loadTools();
  } else if (kind === 'started' && !state.runId && (message.run.tabId === state.tabId || SURFACE === 'sidepanel')) {
    selectRun(message.run.runId);
  }
});

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
  $('prompt').addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) $('prompt-form').requestSubmit();
  });
  $('stop').addEventListener('click', stopRun);
  $('log-filter').addEventListener('change', applyFilter);
  $('run-select').addEventListener('change', () => selectRun($('run-select').value));
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
  // The latest run of this tab (or of any tab in the side panel), so that a closed and
  // reopened popup shows where it was.
  const runs = await refreshRuns();
  const latest = runs.find((r) => SURFACE === 'sidepanel' || r.tabId === state.tabId) ?? null;
  if (latest) await selectRun(latest.runId);
  showView(params.get('view') ?? 'run');
  document.body.dataset.state = 'ready';
}

main().catch((error) => {
  say('status', `Error: ${errorText(error)}`, true);
  document.body.dataset.state = 'error';
});
