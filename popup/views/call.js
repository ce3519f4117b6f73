// The Call view: call one of the tab's tools, or a configured MCP server's, by hand. A form generated from the tool's input
// schema beside its arguments as JSON, kept in sync; the arguments checked by the host
// (`validateArguments`) before anything is sent, each error at its field; then `callTool` (a
// consequential tool is still confirmed in the page), its result as text or pretty JSON, a
// navigation's destination and its tools, the time it took, an error in full. A history of this
// tab's manual calls: run again, edit, copy as a Playwright snippet. An MCP server's tool that
// acts is confirmed in the Pending view (the worker asks there and waits for the answer).
// Invariant: nothing is sent to the page unless the host said the arguments are valid; every
// text from the page is set with textContent; the host decides validity.

import { $, button, element, errorText, say, withCode } from '../dom.js';
import { call, topOrigin } from '../host.js';
import { state } from '../state.js';
import { FormTooLarge, schemaForm } from './form.js';

const HISTORY_KEY = 'webmcpHost.ui.manualCalls.';
const HISTORY_MAX = 20;
// A kept result shows its first 2,000 characters (20 calls a tab: at most about 40 KB kept).
const HISTORY_RESULT_MAX = 2000;

let tools = []; // the tab's tools, then each server's (with `server` set)
let servers = []; // [{name, error?}] as last listed
let form = null;
let chosen = null;
let listing = 0; // the latest listing: an older one that ends later is dropped

const toolKey = (tool) => (tool.server === undefined ? `${tool.frameId}\u0000${tool.name}` : `server:${tool.server}\u0000${tool.name}`);

function renderPicker() {
  const select = $('call-tool');
  const before = select.value;
  const option = (tool) => {
    const frame = tool.server !== undefined || tool.frameId === 0 ? '' : ` (frame ${tool.frameId})`;
    const hint = tool.server !== undefined
      ? (tool.needsConfirmation ? ' · acts: asks you first' : tool.annotations?.readOnlyHint ? ' · read-only' : '')
      : tool.annotations?.hintsUnknown ? ' · hints unknown: asks first' : tool.annotations?.consequentialHint ? ' · consequential' : tool.annotations?.readOnlyHint ? ' · read-only' : '';
    return Object.assign(element('option', '', `${tool.name}${frame}${hint}`), { value: toolKey(tool) });
  };
  const group = (label, items) => {
    const node = Object.assign(element('optgroup'), { label });
    node.append(...items);
    return node;
  };
  const mine = tools.filter((t) => t.server === undefined);
  const groups = [group(mine.length ? 'This tab' : 'This tab offers no tools', mine.map(option))];
  for (const server of servers) {
    const offered = tools.filter((t) => t.server === server.name);
    const label = server.error ? `MCP server ${server.name}: not listed (${server.error})` : `MCP server ${server.name}`;
    const node = group(label.slice(0, 200), offered.map(option));
    node.dataset.server = server.name;
    groups.push(node);
  }
  select.replaceChildren(Object.assign(element('option', '', tools.length ? '— choose a tool —' : 'No tools to call'), { value: '' }), ...groups);
  if (tools.some((t) => toolKey(t) === before)) select.value = before;
  else pick('');
}

/** The tab's tools, then the configured MCP servers' tools, in the picker (kept chosen when still offered). */
export async function loadCallTools() {
  if (typeof state.tabId !== 'number') return say('call-status', 'No tab.', true);
  const mine = ++listing;
  let found = [];
  try {
    found = (await call('listTools', { tabId: state.tabId })).tools;
  } catch (error) {
    say('call-status', `Could not read the tab's tools: ${errorText(error)}`, true);
  }
  // Tools marked `debugging` are offered only with Developer tools.
  if (!$('developer-tools').checked) found = found.filter((t) => !t.annotations?.debugging);
  if (mine !== listing) return;
  tools = [...found, ...tools.filter((t) => t.server !== undefined)];
  renderPicker();
  // Opened on one of the tab's tools (its "Call" in the Run view's list).
  const focus = state.focusTool;
  if (focus) {
    state.focusTool = null;
    const tool = found.find((t) => t.name === focus.name && t.frameId === focus.frameId);
    if (tool) pick(toolKey(tool));
    else say('call-status', `${focus.name} is no longer offered by this tab.`, true);
  }
  await renderHistory();
  // Each server is opened (as a run opens it) and listed; one that fails says why.
  let configured = state.settings?.servers;
  if (!configured) configured = (await call('settings').catch(() => ({ servers: [] }))).servers ?? [];
  const listed = await Promise.all(configured.map(async ({ name }) => {
    try {
      return { name, tools: (await call('listTools', { server: name })).tools };
    } catch (error) {
      return { name, tools: [], error: errorText(error) };
    }
  }));
  if (mine !== listing) return;
  servers = listed.map(({ name, error }) => ({ name, error }));
  tools = [...found, ...listed.flatMap((s) => s.tools.map((t) => ({ ...t, server: s.name })))];
  renderPicker();
}

/** Shows the form of the chosen tool (by its picker key), filled with `args` when given. */
function pick(key, args) {
  chosen = tools.find((t) => toolKey(t) === key) ?? null;
  clearResult();
  $('call-tool').value = chosen ? key : '';
  $('call-form-box').hidden = !chosen;
  $('call-desc').textContent = chosen ? `${chosen.server !== undefined ? `MCP server ${chosen.server} · ` : ''}${chosen.description ?? ''}` : '';
  const output = chosen?.outputSchema;
  $('call-output-schema').hidden = !output;
  $('call-output-schema-json').textContent = output ? JSON.stringify(output, null, 2) : '';
  if (!chosen) {
    form = null;
    $('call-form').replaceChildren();
    return;
  }
  try {
    form = schemaForm(chosen.inputSchema, syncFromForm);
    $('call-form').replaceChildren(form.node);
    if (args) form.write(args);
  } catch (error) {
    if (!(error instanceof FormTooLarge)) throw error;
    // A schema that would make a huge form: the JSON editor alone, and why.
    form = null;
    const note = element('p', 'form-too-large muted', `No form: ${error.message}. Write the arguments in the JSON editor.`);
    $('call-form').replaceChildren(note);
    $('call-json').value = JSON.stringify(args ?? {}, null, 2);
    say('call-json-status', '');
    return;
  }
  syncFromForm();
  if (args) $('call-json').value = JSON.stringify(args, null, 2);
  say('call-json-status', '');
}

function syncFromForm() {
  if (!form) return;
  $('call-json').value = JSON.stringify(form.read(), null, 2);
  say('call-json-status', '');
}

function syncFromJson() {
  if (!form) return;
  let args;
  try {
    args = JSON.parse($('call-json').value);
  } catch (error) {
    return say('call-json-status', `Not JSON: ${errorText(error)}`, true);
  }
  if (!args || typeof args !== 'object' || Array.isArray(args)) return say('call-json-status', 'The arguments must be a JSON object.', true);
  try {
    form.write(args);
  } catch (error) {
    if (!(error instanceof FormTooLarge)) throw error;
    return say('call-json-status', `The form cannot show these arguments (${error.message}); they are sent as written here.`, true);
  }
  say('call-json-status', '');
}

/** The arguments to send: the JSON editor's (the form writes into it). */
function currentArgs() {
  try {
    return { args: JSON.parse($('call-json').value) };
  } catch (error) {
    return { error: `The arguments are not JSON: ${errorText(error)}` };
  }
}

function clearResult() {
  $('call-result').replaceChildren();
  $('call-result').hidden = true;
}

function showResult(outcome, ms, name) {
  const box = $('call-result');
  box.replaceChildren();
  box.hidden = false;
  box.classList.toggle('failure', outcome.ok === false);
  box.append(element('p', 'muted', `${name} · ${Math.round(ms)} ms · ${outcome.ok === false ? 'failed' : outcome.navigated ? 'navigated' : 'done'}`));
  if (outcome.ok === false) {
    box.append(withCode('pre', 'call-error', String(outcome.error)));
  } else if (outcome.navigated) {
    box.append(element('p', '', `The page went to ${outcome.url ?? 'another document'}${outcome.openedTab ? ` (in a new tab, ${outcome.openedTab})` : ''}.`));
    if (outcome.crossOrigin) box.append(element('p', 'warning', `Another origin: ${outcome.crossOrigin}.`));
    const offered = outcome.tools ?? [];
    box.append(element('p', '', offered.length ? `Its tools: ${offered.join(', ')}` : 'It offers no tools.'));
    if (typeof outcome.result === 'string') {
      box.append(element('p', '', 'What it says (its JSON-LD):'));
      box.append(element('pre', 'call-output', pretty(outcome.result)));
    } else if (outcome.resultNote) {
      box.append(element('p', 'muted', `No result: ${outcome.resultNote}.`));
    }
  } else {
    if (outcome.frame) {
      box.append(element('p', '', `The result loaded in frame ${outcome.frame.frameId} (${outcome.frame.url}); this page stayed.`));
      if (outcome.crossOrigin) box.append(element('p', 'warning', `Another origin: ${outcome.crossOrigin}.`));
    }
    if (outcome.structuredContent !== undefined) box.append(element('pre', 'call-structured', JSON.stringify(outcome.structuredContent, null, 2)));
    box.append(element('pre', 'call-output', pretty(String(outcome.result ?? ''))));
  }
  // The result breaks the tool's own output schema: where, and how.
  if (Array.isArray(outcome.outputErrors) && outcome.outputErrors.length) {
    const list = element('ul', 'call-output-errors');
    for (const e of outcome.outputErrors) list.append(element('li', '', `${e.pointer || '(the result)'}: ${e.message}`));
    box.append(element('p', 'warn', 'The result does not match the tool\'s output schema:'), list);
  }
}

/** Validates in the host, then calls. Nothing is sent when the arguments are invalid. */
export async function runCall(event) {
  event?.preventDefault();
  if (!chosen) return say('call-status', 'Choose a tool first.', true);
  const { args, error } = currentArgs();
  if (error) return say('call-status', error, true);
  const tool = chosen;
  clearResult();
  let check;
  try {
    // A server's tool is checked against the schema it listed (the worker checks again before sending).
    check = await call('validateArguments', tool.server !== undefined
      ? { inputSchema: tool.inputSchema, args }
      : { tabId: state.tabId, name: tool.name, frameId: tool.frameId, args });
  } catch (failure) {
    return say('call-status', errorText(failure), true);
  }
  // Without a form (a schema too large for one), every error is listed here.
  const unplaced = form ? form.showErrors(check.errors) : check.errors;
  if (!check.valid) {
    const where = unplaced.map((e) => `${e.path || 'arguments'}: ${e.message}`).join('; ');
    say('call-status', `Not sent: ${check.errors.length} error${check.errors.length === 1 ? '' : 's'} in the arguments${where ? ` (${where})` : ''}.`, true);
    $('call-form').querySelector('[aria-invalid="true"]')?.focus();
    return;
  }
  const asks = tool.server !== undefined ? tool.needsConfirmation : tool.annotations?.consequentialHint;
  const where = tool.server !== undefined ? 'allow it in the Pending view' : 'confirm the call in the page';
  say('call-status', asks ? `Calling… ${where}.` : 'Calling…');
  $('call-run').disabled = true;
  const started = performance.now();
  let outcome;
  try {
    outcome = await call('callTool', tool.server !== undefined
      ? { server: tool.server, name: tool.name, args }
      : { tabId: state.tabId, name: tool.name, frameId: tool.frameId, args });
  } catch (failure) {
    outcome = { ok: false, error: errorText(failure) };
  } finally {
    $('call-run').disabled = false;
  }
  const ms = performance.now() - started;
  // The page the call left has other tools: listed again first, the result then shown.
  if (outcome.navigated) await loadCallTools();
  showResult(outcome, ms, tool.server !== undefined ? `${tool.server} · ${tool.name}` : tool.name);
  say('call-status', '');
  // A server's answer may say where the arguments went wrong: each error at its field.
  if (Array.isArray(outcome.errors)) form?.showErrors(outcome.errors);
  await remember({ name: tool.name, frameId: tool.frameId, server: tool.server, args, ok: outcome.ok !== false, navigated: !!outcome.navigated, result: resultText(outcome), ms: Math.round(ms), at: Date.now(), origin: await topOrigin(state.tabId) });
}

/** JSON text indented; any other text as it is. */
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** What a kept call shows of its outcome: the result, the error or where it went, capped. */
function resultText(outcome) {
  const text =
    outcome.ok === false
      ? `error: ${outcome.error ?? 'the call failed'}`
      : outcome.navigated
        ? `navigated to ${outcome.url ?? 'another page'}${typeof outcome.result === 'string' ? `: ${outcome.result}` : ''}`
        : typeof outcome.result === 'string'
          ? outcome.result
          : JSON.stringify(outcome.result ?? null);
  return text.length > HISTORY_RESULT_MAX ? `${text.slice(0, HISTORY_RESULT_MAX - 1)}…` : text;
}

// ------------------------------------------------------------------------------------------
// History of the manual calls (chrome.storage.session: gone with the browser session): this
// tab's page calls, and apart from them the calls to MCP servers, which do not depend on the
// page (one list for every tab). Each page call records the origin of the tab's top frame it
// was made on, and is shown (and run again) only while the tab shows that origin: a tab that
// moved to another site is never offered the first site's calls and arguments.

const SERVERS_KEY = `${HISTORY_KEY}mcp`;

/** `{page, servers}`: this tab's page calls and the calls to MCP servers, newest first. */
async function history() {
  const key = HISTORY_KEY + state.tabId;
  const kept = await chrome.storage.session.get([key, SERVERS_KEY]);
  const tab = kept[key] ?? [];
  // A server call kept under a tab (before they were kept apart) joins the servers' list.
  const servers = [...(kept[SERVERS_KEY] ?? []), ...tab.filter((e) => e.server !== undefined)].sort((a, b) => b.at - a.at);
  return { page: tab.filter((e) => e.server === undefined), servers };
}

async function remember(entry) {
  const kept = await history();
  const [key, list] = entry.server !== undefined ? [SERVERS_KEY, kept.servers] : [HISTORY_KEY + state.tabId, kept.page];
  await chrome.storage.session.set({ [key]: [entry, ...list].slice(0, HISTORY_MAX) });
  await renderHistory();
}

/**
 * A Playwright snippet that makes the same call, for a test of the playwright-webmcp-host
 * package (`host.callTool`, whose `page` names the tab: no tab id to find).
 */
export function snippet(entry) {
  const fixture = "// In a test of playwright-webmcp-host: test('…', async ({ host, page }) => { … })";
  if (entry.server !== undefined) {
    return [
      fixture,
      "// An MCP server's tool (one that acts waits for your yes: host.pending(), then answer it)",
      `const outcome = await host.callTool(${JSON.stringify({ server: entry.server, name: entry.name, args: entry.args })});`,
    ].join('\n');
  }
  const request = { name: entry.name, args: entry.args, ...(entry.frameId ? { frameId: entry.frameId } : {}) };
  const body = JSON.stringify(request).slice(1, -1);
  return [
    fixture,
    entry.origin ? `// page: a page of ${entry.origin}, loaded (await page.goto(…))` : '// page: the page under test, loaded (await page.goto(…))',
    `const outcome = await host.callTool({ page, ${body} });`,
  ].join('\n');
}

/** Whether a kept call belongs to what the tab shows now (`origin`, its top frame's). */
export function shownOn(entry, origin) {
  return entry.server !== undefined || (typeof entry.origin === 'string' && entry.origin === origin);
}

async function renderHistory() {
  const kept = typeof state.tabId === 'number' ? await history() : { page: [], servers: [] };
  const origin = await topOrigin(state.tabId);
  const list = kept.page.filter((entry) => shownOn(entry, origin));
  const elsewhere = kept.page.length - list.length;
  $('call-history-empty').hidden = list.length > 0;
  $('call-history-empty').textContent = elsewhere
    ? `No calls on this site yet (${elsewhere} made on another site in this tab are not shown).`
    : 'None yet.';
  $('call-history').replaceChildren(...list.map(historyItem));
  $('call-history-mcp-box').hidden = kept.servers.length === 0;
  $('call-history-mcp').replaceChildren(...kept.servers.map(historyItem));
}

/** One kept call: what was called and answered, and its actions. */
function historyItem(entry) {
  const item = element('li', entry.ok ? 'history' : 'history failure');
  item.dataset.tool = entry.name;
  if (entry.server !== undefined) item.dataset.server = entry.server;
  const when = new Date(entry.at).toLocaleTimeString();
  const head = element('div');
  head.append(
    element('span', 'tool-name', entry.server !== undefined ? `${entry.server} · ${entry.name}` : entry.name),
    element('span', 'muted', ` · ${when} · ${entry.ms} ms · ${entry.ok ? (entry.navigated ? 'navigated' : 'ok') : 'failed'}`),
  );
  const args = element('code', 'call-args', JSON.stringify(entry.args));
  // What it answered (calls kept before results were kept have none).
  const result = element('pre', 'call-result', typeof entry.result === 'string' ? `→ ${entry.result}` : '');
  result.hidden = typeof entry.result !== 'string';
  const code = element('pre', 'snippet', snippet(entry));
  code.hidden = true;
  const actions = element('div', 'row');
  actions.append(
    button('Run again', () => again(entry, true), 'small'),
    button('Edit', () => again(entry, false), 'small'),
    button('Copy as Playwright', async () => {
      code.hidden = false;
      try {
        await navigator.clipboard.writeText(code.textContent);
        say('call-status', 'Copied the Playwright snippet.');
      } catch {
        say('call-status', 'The snippet is shown below the call; copy it from there.');
      }
    }, 'small'),
  );
  item.append(head, args, result, actions, code);
  return item;
}

function again(entry, run) {
  const same = (t) => t.name === entry.name && t.server === entry.server;
  const tool = tools.find((t) => same(t) && t.frameId === entry.frameId) ?? tools.find(same);
  if (!tool) return say('call-status', `${entry.name} is no longer offered${entry.server !== undefined ? ` by the MCP server ${entry.server}` : ' by this tab'}.`, true);
  pick(toolKey(tool), entry.args);
  if (run) runCall();
  else $('call-form').querySelector('input, select, textarea')?.focus();
}

/** Wires the view's controls (once). */
export function initCall() {
  $('call-tool').addEventListener('change', () => pick($('call-tool').value));
  $('call-json').addEventListener('input', syncFromJson);
  $('call-form-box').addEventListener('submit', runCall);
  $('call-reload').addEventListener('click', loadCallTools);
}
