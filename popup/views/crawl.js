// The Audit view's crawl: the pages of the tab's site (listed, or read from its sitemap),
// each loaded in the tab, its tools listed and audited (`crawl`), with progress as each page is
// done, then per page its tools, forms, score and findings, and what changed since the site's
// previous crawl; the report downloaded as HTML. Invariant: page text (URLs, titles, names)
// is set only through textContent; the worker loads the pages and keeps the crawl.

import { $, download, element, errorText, say, withCode } from '../dom.js';
import { call } from '../host.js';
import { state } from '../state.js';

let last = null; // the last crawl's answer (its HTML report)

/** Crawls the tab's site: the URLs given (one a line), else its sitemap. */
export async function runCrawl() {
  if (typeof state.tabId !== 'number') return say('crawl-status', 'No tab to crawl in.', true);
  const urls = $('crawl-urls').value.split('\n').map((u) => u.trim()).filter(Boolean);
  const sitemap = $('crawl-sitemap').value.trim();
  const request = { tabId: state.tabId, limit: Number($('crawl-limit').value) || 20, format: 'html' };
  if (urls.length) request.urls = urls;
  else request.sitemap = sitemap || '/sitemap.xml';
  $('crawl-run').disabled = true;
  $('crawl-stop').hidden = false;
  $('crawl-results').replaceChildren();
  $('crawl-diff').replaceChildren();
  say('crawl-status', 'Crawling… the tab loads each page, then comes back here.');
  try {
    last = await call('crawl', request);
    render(last);
    const t = last.totals;
    const n = (count, word) => `${count} ${word}${count === 1 ? '' : 's'}`;
    const stopped = last.skipped.some((s) => s.why === 'the crawl was stopped') ? ' (stopped)' : '';
    say('crawl-status', `Crawled ${n(t.pages, 'page')}${stopped}${t.failed ? ` (${t.failed} failed)` : ''}: ${n(t.tools, 'tool')}, ${n(t.forms, 'form')}, ${n(t.findings, 'finding')}.`);
  } catch (error) {
    say('crawl-status', errorText(error), true);
  } finally {
    $('crawl-run').disabled = false;
    $('crawl-stop').hidden = true;
  }
}

/** Ends the tab's crawl under way: it answers with the pages it has. */
export async function stopCrawl() {
  try {
    if (await call('crawl', { tabId: state.tabId, stop: true })) say('crawl-status', 'Stopping after this page…');
  } catch (error) {
    say('crawl-status', errorText(error), true);
  }
}

/** A page pushed while the crawl runs. */
export function onProgress(message) {
  // This view's crawl only: its tab's, while it runs.
  if (!$('crawl-run').disabled || message.tabId !== state.tabId) return;
  say('crawl-status', `Crawling… ${message.done} of ${message.total} pages done`);
  $('crawl-results').append(pageItem(message.page));
}

function pageItem(page) {
  const item = element('li', page.error ? 'crawl-page failure' : 'crawl-page');
  item.dataset.url = page.url;
  const head = element('div');
  head.append(element('span', 'tool-name', page.url));
  if (page.error) {
    item.append(head, withCode('p', 'error', page.error));
    return item;
  }
  const forms = page.forms.length ? ` · ${page.forms.length} form${page.forms.length === 1 ? '' : 's'}` : '';
  head.append(element('span', 'muted', ` · ${page.tools.length} tools${forms} · ${page.score}/100 · ${page.findings.length} findings`));
  item.append(head);
  if (page.title) item.append(element('div', 'muted', page.title));
  if (page.tools.length) item.append(element('div', 'crawl-tools', page.tools.map((t) => t.name).join(', ')));
  return item;
}

function render(answer) {
  $('crawl-results').replaceChildren(...answer.pages.map(pageItem));
  const diff = $('crawl-diff');
  if (!answer.diff) {
    diff.replaceChildren(element('p', 'muted', "This site's first crawl: the next one says what changed."));
  } else {
    const lines = answer.diff.pages.map((p) => {
      const parts = [['added', p.added], ['removed', p.removed], ['redefined', p.redefined]].filter(([, names]) => names.length);
      const line = element('li', 'crawl-change');
      line.dataset.url = p.url;
      line.textContent = `${p.url}: ${parts.map(([what, names]) => `${what} ${names.join(', ')}`).join('; ')}`;
      return line;
    });
    for (const [what, urls] of [['New pages', answer.diff.newPages], ['Not reached this time', answer.diff.missingPages]]) {
      const more = urls.length > 5 ? ` and ${urls.length - 5} more` : '';
      if (urls.length) lines.push(element('li', '', `${what} (${urls.length}): ${urls.slice(0, 5).join(', ')}${more}`));
    }
    const when = new Date(answer.diff.previousAt).toLocaleString();
    diff.replaceChildren(element('h4', '', `Since the last crawl (${when})`), lines.length ? element('ul') : element('p', 'muted', 'Nothing changed.'));
    if (lines.length) diff.querySelector('ul').append(...lines);
  }
  // What the crawl could not keep for the next one (over its budget), or why it kept nothing.
  for (const note of [answer.keptNote, answer.keptError]) if (note) diff.append(element('p', 'muted', note));
  $('crawl-download').hidden = !answer.report;
}

/** Downloads the last crawl's HTML report. */
export function downloadReport() {
  if (last?.report) download(last.report, `webmcp-crawl-tab-${state.tabId}.html`, 'text/html');
}
