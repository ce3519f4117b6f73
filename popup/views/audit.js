// The Audit view: the tab's WebMCP tools reviewed by the host's audit (`audit`, with probes
// when the person ticks them): the page's score, then each tool with its score and findings
// (severity, rule, where, what to do), and the SARIF log to download. Invariant: names and messages (which quote page text) are set only
// through textContent; the worker decides every finding and score.

import { $, button, download, element, errorText, say, withCode } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

function findingItem(finding) {
  const item = element('li', `finding ${finding.severity}`);
  item.dataset.rule = finding.rule;
  const head = element('div');
  head.append(element('span', `hint severity ${finding.severity}`, finding.severity), element('code', '', ` ${finding.rule}`));
  if (finding.pointer) head.append(element('span', 'muted', ` at ${finding.pointer}`));
  item.append(head, withCode('p', '', finding.message));
  return item;
}

function toolSection(tool, findings) {
  const section = element('li', 'audit-tool');
  section.dataset.tool = tool.name;
  const title = element('div', 'audit-head');
  const frame = tool.frameId === undefined ? '' : tool.frameId === 0 ? ' · top frame' : ` · frame ${tool.frameId}`;
  title.append(element('span', 'tool-name', tool.name), element('span', 'muted', ` · ${tool.score}/100${frame}`));
  // One line with the tool: its actions, short, named in full for assistive technology.
  const actions = element('span', 'audit-actions');
  const show = button('Show', () => showTool(tool.name, tool.frameId), 'small');
  show.title = 'Show the tool';
  show.setAttribute('aria-label', `Show the tool ${tool.name}`);
  // The person's leave to call this one tool, whatever its hints (a tool that acts is still
  // confirmed in the page when it is consequential, as any call is).
  const probeOne = button('Probe', () => runAudit({ only: tool.name }), 'small');
  probeOne.dataset.action = 'probe';
  probeOne.title = 'Probe this tool: a valid and an invalid call, checked in the page';
  probeOne.setAttribute('aria-label', `Probe ${tool.name}`);
  actions.append(show, probeOne);
  title.append(actions);
  section.append(title);
  const list = element('ul', 'findings');
  list.append(...findings.map(findingItem));
  if (findings.length === 0) list.append(element('li', 'muted', 'No findings.'));
  section.append(list);
  return section;
}

/** Shows a tool in the Run view's list of the tab's tools, marked. */
function showTool(name, frameId) {
  document.querySelector('#views button[data-view="run"]').click();
  const items = [...document.querySelectorAll('#tools li')].filter((li) => li.dataset.tool === name);
  const item = items.find((li) => frameId === undefined || li.dataset.frame === String(frameId)) ?? items[0];
  for (const li of document.querySelectorAll('#tools li.marked')) li.classList.remove('marked');
  if (!item) return say('status', `${name} is no longer offered by this tab.`, true);
  item.classList.add('marked');
  item.scrollIntoView({ block: 'center' });
}

/** The audit request of the view's choices. */
const request = (format) => {
  const probe = $('audit-probe').checked;
  return {
    tabId: state.tabId,
    format,
    probe,
    allowActing: probe && $('audit-acting').checked,
    watchNetwork: probe && $('audit-network').checked,
  };
};

/** Audits the tab and shows the result; `only` probes that one tool (with the person's leave). */
export async function runAudit(options = {}) {
  if (typeof state.tabId !== 'number') return say('audit-status', 'No tab to audit.', true);
  const only = typeof options.only === 'string' ? options.only : null;
  const asked = request('json');
  if (only) Object.assign(asked, { probe: true, allowActing: true, tools: [only] });
  say('audit-status', only ? `Probing ${only} (up to 5 s a call; a call that acts may be confirmed in the page)…` : asked.probe ? 'Auditing and probing the tools (up to 5 s a call)…' : 'Auditing…');
  try {
    const audit = await call('audit', asked);
    // Findings name their tool; a name two frames share gets its findings once.
    const shown = new Set();
    const byTool = (name) => (shown.has(name) ? [] : (shown.add(name), audit.findings.filter((f) => f.tool === name)));
    $('audit-score').textContent = audit.tools.length
      ? `Score ${audit.score}/100 · ${audit.tools.length} tool${audit.tools.length === 1 ? '' : 's'} · ${audit.findings.length} finding${audit.findings.length === 1 ? '' : 's'}`
      : 'No tools to audit on this tab.';
    $('audit-tools').replaceChildren(...audit.tools.map((t) => toolSection(t, byTool(t.name))));
    say('audit-status', only ? `Probed ${only}.` : '');
    // The tool just probed, or the one the view was opened on (its "Audit" in the Run view's
    // list): its card, marked.
    const focus = only ? { name: only } : state.focusTool;
    state.focusTool = null;
    if (focus) {
      const card = [...document.querySelectorAll('#audit-tools li.audit-tool')].find((li) => li.dataset.tool === focus.name);
      for (const marked of document.querySelectorAll('#audit-tools li.marked')) marked.classList.remove('marked');
      card?.classList.add('marked');
      card?.scrollIntoView({ block: 'start' });
    }
  } catch (error) {
    say('audit-status', errorText(error), true);
  }
}

/** Offers `value` as a JSON file named `name`. */
const save = (value, name, type) => download(JSON.stringify(value, null, 2), name, type);

/** Downloads the audit as a SARIF 2.1.0 log. */
export async function exportSarif() {
  try {
    save(await call('audit', request('sarif')), `webmcp-audit-tab-${state.tabId}.sarif`, 'application/sarif+json');
  } catch (error) {
    say('audit-status', errorText(error), true);
  }
}

/** Downloads the tab's tools as `listTools` answers them: `webmcp-host audit FILE` reads it as it is. */
export async function exportToolsJson() {
  if (typeof state.tabId !== 'number') return say('audit-status', 'No tab to export.', true);
  try {
    save(await call('listTools', { tabId: state.tabId }), `webmcp-tools-tab-${state.tabId}.json`, 'application/json');
  } catch (error) {
    say('audit-status', errorText(error), true);
  }
}
