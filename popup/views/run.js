// The Run view: the tab's WebMCP tools and what else the agent is offered, the model to use, the
// prompt, and stop. Invariant: names and descriptions from pages and servers are set only through
// textContent; nothing remote is loaded; the worker runs the agent and decides what it may call.

import { $, element, errorText, say } from '../dom.js';
import { call } from '../host.js';
import { selectRun } from '../shown-run.js';
import { state } from '../state.js';

/** A visitor tool every run from here offers: the model may ask the person a question. */
export const ASK_PERSON = {
  name: 'ask_person',
  description: 'Ask the person at the browser a question and wait for their answer (text).',
  parameters: {
    type: 'object',
    properties: { question: { type: 'string', description: 'The question, in one or two sentences.' } },
    required: ['question'],
  },
};

const HINTS = [
  ['readOnlyHint', 'read-only', ''],
  ['consequentialHint', 'consequential', 'consequential'],
  ['untrustedContentHint', 'untrusted content', ''],
  ['debugging', 'debugging', ''],
];

function renderTool(tool) {
  const item = element('li', 'tool-row');
  item.dataset.tool = tool.name;
  item.dataset.frame = String(tool.frameId);
  if (tool.annotations?.debugging) item.dataset.debugging = 'true'; // shown with Developer tools
  // One compact row (name, badges, the description on one line); its schema, where it comes
  // from and its actions one click away.
  const details = element('details');
  const summary = element('summary');
  const title = element('span', 'tool-title');
  title.append(element('span', 'tool-name', tool.name));
  for (const [key, label, extra] of HINTS) {
    if (!tool.annotations?.[key]) continue;
    // Confirmed because the page's polyfill does not say which tools act, not because the
    // page said this one does: "hints unknown".
    if (key === 'consequentialHint' && tool.annotations.hintsUnknown) {
      const badge = element('span', 'hint consequential', 'hints unknown');
      badge.title = "This page's WebMCP polyfill does not pass consequentialHint on: each call is asked first";
      title.append(badge);
      continue;
    }
    title.append(element('span', `hint ${extra}`.trim(), label));
  }
  for (const [label, why] of kindBadges(tool)) {
    const badge = element('span', 'hint kind', label);
    badge.title = why;
    title.append(badge);
  }
  summary.append(title);
  if (tool.description) {
    const description = element('span', 'tool-desc', tool.description);
    description.title = tool.description;
    summary.append(description);
  }
  details.append(summary);
  const inputs = Object.keys(tool.inputSchema?.properties ?? {});
  const frame = tool.frameId === 0 ? 'top frame' : `frame ${tool.frameId}`;
  const meta = `${inputs.length ? `(${inputs.join(', ')})` : '(no input)'} · ${tool.origin} · ${frame}`;
  details.append(element('div', 'tool-meta', meta));
  details.append(element('pre', 'tool-schema', JSON.stringify(tool.inputSchema ?? {}, null, 2)));
  if (tool.outputSchema) {
    details.append(element('div', 'muted', 'Output schema'));
    details.append(element('pre', 'tool-schema', JSON.stringify(tool.outputSchema, null, 2)));
  }
  const actions = element('div', 'row tool-actions');
  const action = (label, view) => {
    const button = element('button', 'small', label);
    button.type = 'button';
    button.dataset.action = view;
    button.setAttribute('aria-label', `${label} ${tool.name}`);
    button.addEventListener('click', () => openToolIn(view, tool));
    return button;
  };
  actions.append(action('Call', 'call'), action('Audit', 'audit'));
  details.append(actions);
  item.append(details);
  return item;
}

const POLYFILLS = {
  'google-demo': "Google's demo polyfill serves this tool; it passes every hint on",
  'mcp-b': 'The @mcp-b polyfill serves this tool; it drops consequentialHint',
  unknown: 'A polyfill the host does not recognise serves this tool',
};

/** What a tool is, beside its hints: `[label, why]` for a declarative form (submits by itself
 * or waits for someone; sends its document elsewhere) and a polyfill's tool. */
export function kindBadges(tool) {
  const badges = [];
  const form = tool.form;
  if (form) {
    badges.push(['form', 'A declarative tool: the host fills in its <form toolname> in the page']);
    badges.push(
      form.autoSubmit
        ? ['auto-submit', 'Its form is sent as soon as it is filled in (toolautosubmit)']
        : ['waits for submit', 'Its form is filled in, then waits for someone to submit it in the page'],
    );
    if (form.navigates) {
      const where = `${form.action ?? 'this page'}${form.target ? ` (target ${form.target})` : ''}`;
      badges.push(['navigates', `Its form submits to ${where}: unless the page answers the submit, the call's result comes from that document`]);
    }
  }
  if (tool.polyfill) badges.push(['polyfilled', POLYFILLS[tool.polyfill] ?? POLYFILLS.unknown]);
  return badges;
}

/** Opens `view` (`call` or `audit`) on one of the tab's tools. */
function openToolIn(view, tool) {
  state.focusTool = { name: tool.name, frameId: tool.frameId };
  document.querySelector(`#views button[data-view="${view}"]`).click();
}

/** Shows only the tools whose name, title or description contains the search's words. */
export function filterTools() {
  const words = $('tool-search').value.toLowerCase().split(/\s+/).filter(Boolean);
  let shown = 0;
  const items = [...document.querySelectorAll('#tools li.tool-row')];
  for (const item of items) {
    const text = `${item.dataset.tool} ${item.querySelector('.tool-desc')?.textContent ?? ''}`.toLowerCase();
    const match = words.every((word) => text.includes(word));
    item.classList.toggle('filtered-out', !match);
    if (match) shown += 1;
  }
  if (words.length && items.length) say('status', shown ? '' : `No tool matches "${$('tool-search').value}".`);
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

/** The header's page under test: its title, origin and tool count (text only: the page wrote the title). */
function showPage(page, count) {
  const label = $('tab-label');
  const tools = `${count} tool${count === 1 ? '' : 's'}`;
  if (!page) {
    label.textContent = `tab ${state.tabId} · ${tools}`;
    return;
  }
  const title = element('span', 'page-title', page.title || page.url);
  title.title = page.url;
  label.replaceChildren(title, element('span', 'page-origin', ` ${page.origin} · ${tools}`));
}

export async function loadTools() {
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
  showPage(answer.page, answer.tools.length);
  $('tools').replaceChildren(...answer.tools.map(renderTool));
  say('status', answer.tools.length ? '' : 'This tab offers no WebMCP tools.');
  filterTools();
  // "Why no tools?" asks a question only a tab without tools raises; with tools, the same
  // diagnosis (WebMCP mode, frames, policies, this Chrome) is offered as what it is.
  const question = answer.tools.length ? 'Diagnose this tab' : 'Why no tools?';
  $('diagnose').textContent = question;
  $('diagnosis-heading').textContent = question;
  $('problems-box').hidden = answer.problems.length === 0;
  $('problem-count').textContent = `(${answer.problems.length})`;
  $('problems').replaceChildren(
    ...answer.problems.map((p) => element('li', '', p.tool ? `${p.tool}: ${p.message}` : p.message)),
  );
}

export function renderExtraTools() {
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

export function renderModelSelect() {
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

export async function startRun(event, fallback) {
  event.preventDefault();
  const prompt = $('prompt').value.trim() || fallback;
  if (!prompt) return;
  const request = { prompt, visitorTools: [ASK_PERSON] };
  if (state.threadId) request.threadId = state.threadId;
  if (typeof state.tabId === 'number') request.tabId = state.tabId;
  if ($('model-select').value) request.model = $('model-select').value;
  $('run').disabled = true;
  try {
    const { runId } = await call('startRun', request);
    $('prompt').value = '';
    await selectRun(runId);
    say('run-status', 'Running…');
    // The tools come first in this view: the answer is brought into sight.
    $('run-prompt').scrollIntoView?.({ block: 'nearest' });
  } catch (error) {
    say('run-status', errorText(error), true);
  } finally {
    $('run').disabled = false;
  }
}

export async function stopRun() {
  if (!state.runId) return;
  try {
    await call('stop', { runId: state.runId, reason: 'stopped by the person' });
  } catch (error) {
    say('run-status', errorText(error), true);
  }
}
