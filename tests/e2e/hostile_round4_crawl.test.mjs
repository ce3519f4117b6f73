// Security round 4, finding 6, performed against the built extension: crawls of sites whose
// every page offers 512 tools of 128-byte names made the kept crawls fill
// `chrome.storage.local` (8.1 MiB for one origin), and the person's next `configure` failed.
// Two origins (two servers of the fixtures) are crawled over what earlier crawls kept; what is
// kept stays within the budgets (512 KiB an origin, 2 MiB for every crawl together, the least
// recently crawled forgotten first), and a safety setting still saves. A full area, as an
// earlier version left it, makes a write fail with words that name what fills it and how to
// clear it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

const KIB = 1024;
const MIB = 1024 * KIB;
// The budgets (`core/limits.rs`): per origin, all crawls together (the index included), and
// the area's quota.
const PER_ORIGIN = 512 * KIB;
const ALL_CRAWLS = 2 * MIB;
const QUOTA = 10 * MIB;
const ORIGINS = 2;
const BLOCK = { kind: 'block', tool: 'x', reason: 'y' };

describe('security round 4: crawls and local storage', () => {
  let servers, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  /** Bytes of `chrome.storage.local` in use, by Chrome's count: `keys` (all: null). */
  const inUse = (keys) => host.worker.evaluate((k) => chrome.storage.local.getBytesInUse(k), keys);
  /** The stored keys of every kept crawl, and the index. */
  const storedLayers = () =>
    host.worker.evaluate(async () => (await chrome.storage.local.get('webmcpHost.middleware'))['webmcpHost.middleware']);
  const crawlKeys = () =>
    host.worker.evaluate(async () =>
      (await chrome.storage.local.getKeys()).filter((k) => k.startsWith('webmcpHost.crawl.') || k === 'webmcpHost.crawled'),
    );

  before(async () => {
    const root = join(ROOT, 'tests', 'fixtures');
    servers = await Promise.all(Array.from({ length: ORIGINS }, () => serve(root)));
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${servers[0].url}/hostile/crawl-fill.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await Promise.all((servers ?? []).map((s) => s.close()));
  });

  test('finding 6: crawls of pages of 512 long-named tools keep within 512 KiB an origin and 2 MiB in all; a block layer still saves', async () => {
    // What was kept before: an earlier version's crawl of 2 MB (its index names the origin
    // only) and a crawl of 1.8 MiB weighed in the index, both older than the crawls below.
    await host.worker.evaluate(async () => {
      const local = chrome.storage.local;
      const tools = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${'n'.repeat(100)}_${i}`, '0123456789abcdef0123456789abcdef']));
      const crawl = (site, bytes) => {
        const pages = {};
        for (let i = 0; i * 2_700 < bytes; i++) pages[`https://${site}/p/${i}`] = { at: 1, tools };
        return { at: 1, pages };
      };
      await local.set({ 'webmcpHost.crawl.https://old.test': crawl('old.test', 2_000_000), 'webmcpHost.crawl.https://big.test': crawl('big.test', 1_880_000) });
      const bytes = await local.getBytesInUse('webmcpHost.crawl.https://big.test');
      await local.set({ 'webmcpHost.crawled': [{ origin: 'https://big.test', bytes }, 'https://old.test'] });
    });
    const seeded = await inUse(await crawlKeys());
    assert.ok(seeded > 3.5 * MIB, `${seeded} bytes seeded`);
    // The attack: seven pages of 512 tools of 128-byte names on one origin (595 KB to keep).
    const [a, b] = servers;
    const urls = (n) => Array.from({ length: n }, (_, i) => `/hostile/crawl-fill.html?p=${i + 1}`);
    const crawled = [];
    for (const [server, pages] of [[a, 7], [b, 2]]) {
      await page.goto(`${server.url}/hostile/crawl-fill.html`);
      const answer = await op('crawl', { tabId, urls: urls(pages), limit: pages });
      // Every page offered its 512 tools, and was listed with them.
      assert.equal(answer.origin, server.url);
      assert.deepEqual(answer.pages.map((p) => p.tools?.length ?? p.error), Array(pages).fill(512));
      crawled.unshift(server.url);
      const key = `webmcpHost.crawl.${server.url}`;
      const kept = await inUse(key);
      console.log(`# ${pages} pages crawled: ${kept} bytes kept for ${server.url}; the crawls ${await inUse(await crawlKeys())} bytes`);
      assert.ok(kept > 0, 'this crawl is kept');
      assert.ok(kept <= PER_ORIGIN, `${kept} bytes kept for one origin, over its ${PER_ORIGIN}`);
      // The index records what each kept crawl weighs: at least what Chrome counts.
      const index = (await host.worker.evaluate(() => chrome.storage.local.get('webmcpHost.crawled')))['webmcpHost.crawled'];
      assert.deepEqual(index.map((e) => e.origin), crawled, 'the newest first; the earlier version\'s and the oldest crawl forgotten');
      assert.ok(index[0].bytes >= kept && index[0].bytes < kept * 1.01, `recorded ${index[0].bytes}, Chrome counts ${kept}`);
      const all = await inUse(await crawlKeys());
      assert.ok(all <= ALL_CRAWLS, `${all} bytes kept by every crawl together, over ${ALL_CRAWLS}`);
      if (pages === 7) {
        // What was left out is said; the pages kept are this crawl's first.
        assert.match(answer.keptNote ?? '', /^\d of the 7 pages of this crawl were not kept for the next crawl: an origin keeps at most 524288 bytes \(max_crawl_kept_bytes\)$/);
        const stored = (await host.worker.evaluate((k) => chrome.storage.local.get(k), key))[key];
        const n = Object.keys(stored.pages).length;
        assert.deepEqual(Object.keys(stored.pages).sort(), urls(n).map((u) => `${server.url}${u}`).sort());
      }
    }
    assert.deepEqual((await crawlKeys()).sort(), ['webmcpHost.crawled', ...crawled.map((o) => `webmcpHost.crawl.${o}`)].sort());
    // The person's settings keep their reserve, and a safety setting saves.
    const used = await inUse(null);
    assert.ok(used <= ALL_CRAWLS + 64 * KIB, `${used} bytes in use of ${QUOTA}`);
    await op('configure', { middleware: [BLOCK] });
    assert.match(JSON.stringify(await storedLayers()), /"tool":"x"/);
    await op('configure', { middleware: null });
  });

  test("finding 6: a full area (an earlier version's crawls) names what fills it, and crawl({clear: true}) frees it", async () => {
    await host.worker.evaluate(async () => chrome.storage.local.remove((await chrome.storage.local.getKeys()).filter((k) => k.startsWith('webmcpHost.crawl'))));
    // As an earlier version could leave it: one origin's crawl of nearly 10 MiB, its size not
    // recorded in the index.
    await host.worker.evaluate(async (quota) => {
      const local = chrome.storage.local;
      const tools = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${'n'.repeat(100)}_${i}`, '0123456789abcdef0123456789abcdef']));
      const one = JSON.stringify({ at: 1, tools }).length + 40;
      const room = quota - (await local.getBytesInUse(null)) - 4096;
      const value = { at: 1, pages: {} };
      for (let i = 0; (i + 1) * one < room; i++) value.pages[`https://old.test/p/${i}`] = { at: 1, tools };
      await local.set({ 'webmcpHost.crawled': ['https://old.test'], 'webmcpHost.crawl.https://old.test': value });
      // Then to the last few bytes.
      value.pad = 'x'.repeat(quota - (await local.getBytesInUse(null)) - ',"pad":""'.length - 16);
      await local.set({ 'webmcpHost.crawl.https://old.test': value });
    }, QUOTA);
    const full = await inUse(null);
    assert.ok(full > QUOTA - 64, `${full} bytes in use`);
    const refused = await op('configure', { middleware: [BLOCK] }).then(() => 'saved', (e) => e.message);
    console.log(`# the refusal: ${refused}`);
    assert.match(refused, /webmcpHost\.middleware was not saved: chrome\.storage\.local is full \(.*quota exceeded\): [\d,]+ of its 10,485,760 bytes in use/);
    assert.match(refused, /the most by webmcpHost\.crawl\.\* \(an origin's last crawl[^)]*\): 1 entry, [\d,]+ bytes[;.] /);
    assert.match(refused, /To free room: crawl\(\{clear: true\}\) clears every kept crawl(\n|$)/);
    const cleared = await op('crawl', { clear: true });
    assert.deepEqual(cleared.cleared, ['https://old.test']);
    assert.deepEqual(await crawlKeys(), []);
    await op('configure', { middleware: [BLOCK] });
    assert.match(JSON.stringify(await storedLayers()), /"tool":"x"/);
    await op('configure', { middleware: null });
  });
});
