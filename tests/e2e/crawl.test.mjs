// `crawl` over a 20-page site served here (its pages register tools, one a declarative form;
// /sitemap.xml lists them): every page's tools, a diff once one page changed, the tab back where
// it was, another origin never loaded, and the popup's Audit view crawling with progress.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT } from '../support/browser.mjs';

const PAGES = 20;

/** The site: /p/1 … /p/20 and /sitemap.xml; `site.version = 2` redefines page 7's tools. */
async function startSite() {
  const site = { version: 1, hits: [], delayMs: 0 };
  const tool = (name, description) =>
    `document.modelContext.registerTool({name: ${JSON.stringify(name)}, description: ${JSON.stringify(description)}, ` +
    `inputSchema: {type: 'object', properties: {q: {type: 'string', description: 'What to look for'}}}, ` +
    `annotations: {readOnlyHint: true}, execute: async () => 'ok'});`;
  const page = (n) => {
    let tools = [tool(`find_${n}`, `Finds things on page ${n}.`)];
    if (n === 7) {
      tools = site.version === 1
        ? [tool('find_7', 'Finds things on page 7.'), tool('old_offer', 'Shows the old offer.')]
        : [tool('find_7', 'Finds things on page 7, and in the archive.'), tool('new_offer', 'Shows the new offer.')];
    }
    const form = n === 5
      ? '<form toolname="book_table" tooldescription="Books a table." toolautosubmit><label>Name <input name="who"></label><button>Book</button></form>'
      : '';
    return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Page ${n}</title></head><body><h1>Page ${n}</h1>${form}<script>${tools.join('\n')}</script></body></html>`;
  };
  const server = createServer(async (req, res) => {
    site.hits.push(req.url);
    if (site.delayMs) await new Promise((resolve) => setTimeout(resolve, site.delayMs));
    const n = /^\/p\/(\d+)$/.exec(req.url)?.[1];
    if (n && Number(n) >= 1 && Number(n) <= PAGES) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(page(Number(n)));
    }
    if (req.url === '/sitemap.xml') {
      const locs = Array.from({ length: PAGES }, (_, i) => `<url><loc>${site.url}/p/${i + 1}</loc></url>`).join('');
      // One entry on another origin (localhost is not 127.0.0.1): skipped, never loaded.
      const elsewhere = `<url><loc>${site.url.replace('127.0.0.1', 'localhost')}/p/3</loc></url>`;
      res.writeHead(200, { 'content-type': 'application/xml' });
      return res.end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${locs}${elsewhere}</urlset>`);
    }
    res.writeHead(404);
    res.end('not found');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  site.url = `http://127.0.0.1:${server.address().port}`;
  site.close = () => new Promise((resolve) => server.close(resolve));
  return site;
}

describe('crawl', () => {
  let site, host, page, tabId;
  const crawl = (request) => host.worker.evaluate((r) => webmcpHost.crawl(r), request);

  before(async () => {
    site = await startSite();
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${site.url}/p/1`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await site?.close();
  });

  test('a 20-page site from its sitemap: every page with its tools and forms, then a diff after one page changed', async () => {
    const started = Date.now();
    const first = await crawl({ tabId, sitemap: '/sitemap.xml', limit: PAGES });
    const ms = Date.now() - started;
    console.log(`crawl: ${PAGES} pages in ${ms} ms (${Math.round(ms / PAGES)} ms a page)`);
    assert.equal(first.origin, site.url);
    assert.equal(first.pages.length, PAGES);
    assert.deepEqual(first.pages.filter((p) => p.error), []);
    for (const [i, p] of first.pages.entries()) {
      assert.equal(p.url, `${site.url}/p/${i + 1}`);
      assert.ok(p.tools.some((t) => t.name === `find_${i + 1}`), JSON.stringify(p.tools));
      assert.equal(p.title, `Page ${i + 1}`);
      assert.equal(typeof p.score, 'number');
    }
    assert.deepEqual(first.pages[4].forms, ['book_table']);
    assert.equal(first.pages[4].tools.find((t) => t.name === 'book_table').form.autoSubmit, true);
    const findings = first.pages.reduce((n, p) => n + p.findings.length, 0);
    const lowest = Math.min(...first.pages.map((p) => p.score));
    assert.deepEqual(first.totals, { pages: 20, failed: 0, tools: 22, forms: 1, findings, lowestScore: lowest });
    assert.equal(first.diff, null, "the site's first crawl");
    // Kept per origin, in the index of the origins kept (fingerprints only, no page text).
    const stored = await host.worker.evaluate((o) => chrome.storage.local.get(['webmcpHost.crawled', `webmcpHost.crawl.${o}`]), site.url);
    assert.deepEqual(stored['webmcpHost.crawled'].map((e) => e.origin), [site.url]);
    // Each kept crawl weighed as Chrome counts it (the index says so; the budgets are read on it).
    const weighed = await host.worker.evaluate((o) => chrome.storage.local.getBytesInUse(`webmcpHost.crawl.${o}`), site.url);
    assert.ok(stored['webmcpHost.crawled'][0].bytes >= weighed && stored['webmcpHost.crawled'][0].bytes <= weighed + PAGES, `${stored['webmcpHost.crawled'][0].bytes} for ${weighed}`);
    assert.equal(Object.keys(stored[`webmcpHost.crawl.${site.url}`].pages).length, PAGES);
    assert.ok(!JSON.stringify(stored).includes('Finds things'), 'no page text is kept');
    // The other origin's entry is skipped and never loaded; the tab is back on its page.
    assert.deepEqual(first.skipped.map((s) => s.url), [`${site.url.replace('127.0.0.1', 'localhost')}/p/3`]);
    assert.equal(page.url(), `${site.url}/p/1`);

    site.version = 2;
    const second = await crawl({ tabId, sitemap: '/sitemap.xml', limit: PAGES, format: 'html' });
    assert.deepEqual(second.diff.pages, [{ url: `${site.url}/p/7`, since: second.diff.previousAt, added: ['new_offer'], removed: ['old_offer'], redefined: ['find_7'] }]);
    assert.deepEqual([second.diff.newPages, second.diff.missingPages], [[], []]);
    assert.equal(second.diff.previousAt > 0, true);
    assert.match(second.report, /^<!doctype html>/);
    assert.match(second.report, /added new_offer/);
    // A shorter crawl: the pages it did not reach are named, and kept as they were.
    const short = await crawl({ tabId, urls: ['/p/1', '/p/2'] });
    assert.equal(short.diff.missingPages.length, PAGES - 2);
    site.version = 1;
    const full = await crawl({ tabId, sitemap: '/sitemap.xml', limit: PAGES });
    // Page 7 is compared with its state of the second crawl (the short one did not reach it).
    assert.deepEqual(full.diff.pages, [{ url: `${site.url}/p/7`, since: short.diff.previousAt, added: ['old_offer'], removed: ['new_offer'], redefined: ['find_7'] }]);
    assert.ok(full.diff.previousAt > short.diff.previousAt, 'the last crawl was the short one');
  });

  test('a crawl stays on the origin of the tab: another origin is refused or skipped, never loaded', async () => {
    const elsewhere = site.url.replace('127.0.0.1', 'localhost');
    const refused = await crawl({ tabId, sitemap: `${elsewhere}/sitemap.xml` }).catch((e) => e.message);
    assert.match(refused, /another origin/);
    assert.match(await crawl({ tabId, urls: ['/p/1'], sameOrigin: false }).catch((e) => e.message), /stays on the origin/);
    const before = site.hits.length;
    const answer = await crawl({ tabId, urls: [`${elsewhere}/p/2`, 'javascript:alert(1)', '/p/2'] });
    assert.deepEqual(answer.pages.map((p) => p.url), [`${site.url}/p/2`]);
    assert.equal(answer.skipped.length, 2);
    // localhost is this same server: had the other origin's page been loaded, /p/2 would be
    // asked twice.
    assert.equal(site.hits.slice(before).filter((url) => url === '/p/2').length, 1);
    // A page that answers 404 is a page without tools; the crawl goes on.
    const missing = await crawl({ tabId, urls: ['/p/99', '/p/3'] });
    assert.deepEqual(missing.pages.map((p) => p.tools.length), [0, 1]);
  });

  test("the popup's Audit view crawls the site with progress and shows what changed", async () => {
    const popup = await host.context.newPage();
    try {
      await popup.setViewportSize({ width: 404, height: 700 });
      await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=audit`);
      await popup.waitForSelector('body[data-state="ready"]');
      await popup.click('#crawl-box summary');
      await popup.fill('#crawl-urls', '/p/5\n/p/7\n/p/8');
      const progress = [];
      await popup.exposeBinding('__heard', (_, text) => progress.push(text));
      await popup.evaluate(() => new MutationObserver(() => window.__heard(document.getElementById('crawl-status').textContent)).observe(document.getElementById('crawl-status'), { childList: true, characterData: true, subtree: true }));
      await popup.click('#crawl-run');
      await popup.waitForFunction(() => document.getElementById('crawl-status').textContent.startsWith('Crawled'));
      assert.ok(progress.some((p) => /^Crawling… 1 of 3 pages done$/.test(p)), progress.join(' | '));
      assert.match(await popup.textContent('#crawl-status'), /^Crawled 3 pages: 5 tools, 1 form, \d+ findings\.$/);
      const rows = await popup.$$eval('#crawl-results li.crawl-page', (li) => li.map((l) => l.dataset.url));
      assert.deepEqual(rows, ['/p/5', '/p/7', '/p/8'].map((p) => `${site.url}${p}`));
      assert.match(await popup.textContent('li.crawl-page[data-url$="/p/5"]'), /2 tools · 1 form ·/);
      // Compared with what earlier crawls kept: none of the three changed; the 18 other pages
      // kept (the 20, /p/99 which answered 404 with no tools, less these three) were not reached.
      assert.match(await popup.textContent('#crawl-diff'), /^Since the last crawl \(.+\)Not reached this time \(18\): /);
      assert.equal(await popup.locator('#crawl-diff li.crawl-change').count(), 0);
      await mkdir(join(ROOT, 'test-output'), { recursive: true });
      await popup.screenshot({ path: join(ROOT, 'test-output', 'popup-crawl.png'), fullPage: true });
      assert.equal(await popup.isVisible('#crawl-download'), true);
      assert.equal(await popup.isVisible('#crawl-stop'), false);

      // A long crawl (each page answers after 300 ms): one a tab (a second is refused), stopped
      // from the popup after a page or two, it answers with the pages it has and the tab goes
      // back.
      site.delayMs = 300;
      await popup.fill('#crawl-urls', Array.from({ length: PAGES }, (_, i) => `/p/${i + 1}`).join('\n'));
      await popup.click('#crawl-run');
      await popup.waitForFunction(() => /^Crawling… \d+ of 20 pages done$/.test(document.getElementById('crawl-status').textContent));
      const second = await crawl({ tabId, urls: ['/p/1'] }).catch((e) => e.message);
      assert.match(second, /is being crawled already/);
      await popup.click('#crawl-stop');
      await popup.waitForFunction(() => document.getElementById('crawl-status').textContent.startsWith('Crawled'));
      const status = await popup.textContent('#crawl-status');
      const crawled = Number(/^Crawled (\d+) pages? \(stopped\)/.exec(status)?.[1]);
      assert.ok(crawled >= 1 && crawled < PAGES, status);
      assert.equal(page.url(), `${site.url}/p/1`, 'the tab is back');
      assert.equal(await crawl({ tabId, stop: true }), false, 'no crawl to stop');
      site.delayMs = 0;
    } finally {
      await popup.close();
    }
  });
});
