// WebMCP Host popup (first cut): the host's version and the current tab's tools, read from
// the worker through the same operations as the automation surface. Every text from a page is
// set with textContent, never as HTML.

const $ = (id) => document.getElementById(id);
const send = (message) => chrome.runtime.sendMessage(message);

// The tab this popup is about: `?tabId=N` (side panel, tests), else the active tab.
async function currentTabId() {
  const fromQuery = new URLSearchParams(location.search).get('tabId');
  if (fromQuery !== null) return Number(fromQuery);
  const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
  return tab?.id;
}

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderTool(tool) {
  const item = element('li');
  item.dataset.tool = tool.name;
  const title = element('div');
  title.append(element('span', 'tool-name', tool.name));
  const hints = [
    ['readOnlyHint', 'read-only', ''],
    ['consequentialHint', 'consequential', 'consequential'],
    ['untrustedContentHint', 'untrusted content', ''],
  ];
  for (const [key, label, extra] of hints) {
    if (tool.annotations?.[key]) title.append(element('span', `hint ${extra}`.trim(), label));
  }
  item.append(title);
  if (tool.description) item.append(element('p', 'tool-desc', tool.description));
  const params = Object.keys(tool.inputSchema?.properties ?? {});
  const frame = tool.frameId === 0 ? 'top frame' : `frame ${tool.frameId}`;
  const meta = `${params.length ? `(${params.join(', ')})` : '(no input)'} · ${tool.origin} · ${frame}`;
  item.append(element('div', 'tool-meta', meta));
  return item;
}

async function main() {
  const version = await send({ op: 'version' });
  $('version').textContent = version?.ok ? `v${version.version}` : '';

  const tabId = await currentTabId();
  if (typeof tabId !== 'number' || Number.isNaN(tabId)) {
    $('status').textContent = 'No tab to read.';
    return;
  }
  const answer = await send({ op: 'listTools', tabId });
  if (!answer?.ok) {
    $('status').textContent = `Could not read the tab's tools: ${answer?.error ?? 'no answer'}`;
    return;
  }
  $('tool-count').textContent = `(${answer.tools.length})`;
  $('tools').replaceChildren(...answer.tools.map(renderTool));
  $('status').textContent = answer.tools.length
    ? ''
    : 'This tab offers no WebMCP tools.';
  if (answer.problems.length) {
    $('problems-box').hidden = false;
    $('problem-count').textContent = `(${answer.problems.length})`;
    $('problems').replaceChildren(
      ...answer.problems.map((p) => element('li', '', p.tool ? `${p.tool}: ${p.message}` : p.message)),
    );
  }
  document.body.dataset.state = 'ready';
}

main().catch((error) => {
  $('status').textContent = `Error: ${error?.message ?? error}`;
  document.body.dataset.state = 'error';
});
