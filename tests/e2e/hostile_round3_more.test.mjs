// Security round 3, findings 0, 2 and 13, performed against the built extension: a run's call
// delivered to a document that replaced its frame's (finding 0), a page's renderer answering
// the question of an MCP call that acts elsewhere (finding 2), and page text in an export that
// was asked to leave it out (finding 13).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT } from '../support/browser.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const SCENARIOS = {
  // The read-only lookup the first document offered.
  lookup: { steps: [call('lookup', { order: '7' }), { text: 'Looked up.' }] },
};

describe('security round 3: documents, renderers and exports', () => {
  let server, models, host;
  const dialogs = [];
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const until = async (what, probe, ms = 10_000) => {
    const end = Date.now() + ms;
    for (;;) {
      const value = await probe().catch(() => undefined);
      if (value) return value;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  };
  const open = async (path) => {
    const page = await host.context.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    await page.goto(`${server.url}/${path}`);
    return { page, tabId: await host.tabIdOf(page) };
  };

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    // The fixtures write their own `document.modelContext`, as a polyfill does: WebMCP off.
    host = await launchHost({ webmcp: false });
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    // `lookup~1` is the `lookup` script on an endpoint of its own (each endpoint keeps its place).
    await op('configure', { models: ['lookup', 'lookup~1'].map(model), default: 'lookup', servers: [] });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  // The first frame of each page lists a read-only `lookup`, then navigates: swap.html to
  // another origin whose `lookup` pays, swap-same.html to another document of its own site
  // whose `lookup` is defined identically. The slow sibling holds the run's listing for 2 s, so
  // the model's call comes after the swap, to the same frame id. The run decided on the first
  // document's listing: the call goes there or nowhere.
  for (const [fixture, replaced, model] of [['swap.html', 'swap-b.html', 'lookup'], ['swap-same.html', 'swap-same-b.html', 'lookup~1']]) {
    test(`finding 0 (${fixture}): a run's call is not delivered to the document that replaced its frame's`, async () => {
      const { page, tabId } = await open(`hostile/${fixture}`);
      try {
        const asked = dialogs.length;
        const run = await op('run', { tabId, prompt: 'Look up order 7', model });
        const swapped = await until('the swap', async () => page.frames().find((f) => f.url().includes(`/hostile/${replaced}`)));
        await until('its tools', () => swapped.evaluate(() => Array.isArray(window.__calls)));
        assert.deepEqual(await swapped.evaluate(() => window.__calls), [], 'the replacing document got no call');
        assert.equal(dialogs.length, asked, 'nothing was asked for (and nothing ran)');
        const result = run.events.find((e) => e.type === 'TOOL_CALL_RESULT');
        assert.ok(result, JSON.stringify(run.events.map((e) => e.type)));
        assert.match(result.content, /the call was not sent/, result.content);
      } finally {
        await page.close();
      }
    });
  }
});
