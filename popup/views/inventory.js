// The Tools view: every open tab's tools (`inventory`): tab title, origin, frame and hints,
// searchable; a tool whose definition changed since it was first seen in its tab is flagged,
// with the difference (before and after). Invariant: the host lists and compares; every text
// from a page is set with textContent.

import { $, element, errorText, say } from '../dom.js';
import { call } from '../host.js';

let searching = null;

function change(entry) {
  const box = element('details', 'changed');
  box.append(element('summary', '', `Changed since first seen: ${entry.changed.map((c) => c.field).join(', ')}`));
  for (const c of entry.changed) {
    const row = element('div', 'diff');
    row.dataset.field = c.field;
    row.append(
      element('h4', '', c.field),
      element('p', 'muted', 'before'),
      element('pre', 'diff-before', typeof c.before === 'string' ? c.before : JSON.stringify(c.before, null, 2)),
      element('p', 'muted', 'now'),
      element('pre', 'diff-after', typeof c.after === 'string' ? c.after : JSON.stringify(c.after, null, 2)),
    );
    box.append(row);
  }
  return box;
}

function entryItem(entry) {
  const item = element('li', entry.changed?.length ? 'inventory-tool redefined' : 'inventory-tool');
  item.dataset.tool = entry.name;
  item.dataset.tab = String(entry.tabId);
  const title = element('div');
  title.append(element('span', 'tool-name', entry.name));
  for (const hint of entry.hints) title.append(element('span', `hint ${hint === 'consequential' ? 'consequential' : ''}`.trim(), hint));
  if (entry.changed?.length) title.append(element('span', 'hint redefined-flag', 'redefined'));
  item.append(title);
  if (entry.description) item.append(element('p', 'tool-desc', entry.description));
  const frame = entry.frameId === 0 ? 'top frame' : `frame ${entry.frameId}`;
  item.append(element('div', 'tool-meta', `${entry.tabTitle} · ${entry.origin} · ${frame}`));
  if (entry.changed?.length) item.append(change(entry));
  return item;
}

/** Lists every tab's tools that match the search box. */
export async function loadInventory() {
  const query = $('inventory-query').value.trim();
  say('inventory-status', 'Listing every tab…');
  const asked = (searching = Symbol('search'));
  try {
    const developer = $('developer-tools').checked;
    const inventory = await call('inventory', query ? { query, developer } : { developer });
    if (asked !== searching) return;
    $('inventory').replaceChildren(...inventory.tools.map(entryItem));
    const changed = inventory.tools.filter((t) => t.changed?.length).length;
    say(
      'inventory-status',
      `${inventory.tools.length} of ${inventory.total} tools in ${inventory.tabs} tab${inventory.tabs === 1 ? '' : 's'}${query ? ` matching “${query}”` : ''}${changed ? ` · ${changed} redefined` : ''}${inventory.debuggingHidden ? ` · ${inventory.debuggingHidden} debugging tool${inventory.debuggingHidden === 1 ? '' : 's'} hidden (Developer tools shows them)` : ''}`,
    );
  } catch (error) {
    say('inventory-status', errorText(error), true);
  }
}

/** Wires the search box (once). */
export function initInventory() {
  let timer = null;
  $('inventory-form').addEventListener('submit', (event) => {
    event.preventDefault();
    loadInventory();
  });
  $('inventory-query').addEventListener('input', () => {
    clearTimeout(timer);
    timer = setTimeout(loadInventory, 250);
  });
}
