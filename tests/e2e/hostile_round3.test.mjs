// Security round 3, performed against the built extension: each test is an attack as a hostile
// page, server, model output or pasted configuration would make it, asserting what the page,
// the server or the model then received. (Round 3's other findings live beside the features
// they attack: the gate suite, gate.test.mjs, for the `block` layer on every operation.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const SCENARIOS = {
  // An injected order the person declines, then a search.
  injected: { steps: [call('place_order', {}), call('search_products', { query: 'mug' }), { text: 'Done.' }] },
  // A call the run's own `block` layer refuses.
  refused: { steps: [call('place_order', {}), { text: 'Refused.' }] },
};

describe('security round 3', () => {
  let server, models, host, page, tabId;
  const dialogs = [];
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const pageCalls = () => page.evaluate(() => window.__calls.map((c) => c.name));
  const model = (scenario) => ({
    name: scenario,
    provider: 'openai',
    baseUrl: `${models.url}/s/${scenario}/v1`,
    model: 'scripted',
    nativeTools: true,
    keyRef: 'canary',
  });
  const open = async (path = 'evals.html') => {
    await page.goto(`${server.url}/${path}`);
    tabId = await host.tabIdOf(page);
  };

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    // Every confirm() is declined, as a person refusing an injected order would.
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      d.dismiss().catch(() => {});
    });
    await op('configure', { models: Object.keys(SCENARIOS).map(model), default: 'injected', servers: [] });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('finding 5: "Save as test" leaves a declined call out, so smoke mode under allowActing never performs it', async () => {
    await open();
    const run = await op('run', { tabId, prompt: 'Find a mug' });
    assert.ok(dialogs.some((d) => d.includes('place_order')), 'the person was asked, and declined');
    assert.deepEqual(await pageCalls(), ['search_products']);
    const made = await op('toEval', { runId: run.runId });
    assert.deepEqual(made.case.expectedCall.map((c) => c.functionName), ['search_products']);
    assert.deepEqual(made.leftOut.map((c) => c.name), ['place_order']);
    assert.match(made.leftOut[0].error, /declined/);
    // A test profile that lets the site act unasked: the saved case performs only the search.
    const origin = new URL(server.url).origin;
    await op('configure', { sites: [{ origin, allowActing: true }] });
    await open();
    const smoke = await op('evaluate', { tabId, evals: [made.case], mode: 'smoke' });
    await op('configure', { sites: [] });
    assert.equal(smoke.passCount, 1, JSON.stringify(smoke.results));
    assert.deepEqual(await pageCalls(), ['search_products'], 'the declined order was not placed');
    // Asked for explicitly, the declined call is kept.
    const kept = await op('toEval', { runId: run.runId, keepFailed: true });
    assert.deepEqual(kept.case.expectedCall.map((c) => c.functionName), ['place_order', 'search_products']);
  });

  test('finding 4: replayDiff never plays a call its run refused with a block layer, or one the person declined', async () => {
    await open();
    const run = await op('run', {
      tabId,
      prompt: 'Order',
      model: 'refused',
      middleware: [{ kind: 'block', tool: 'place_order', reason: 'not in this run' }],
    });
    assert.deepEqual(await pageCalls(), []);
    await open();
    const asked = dialogs.length;
    const diff = await op('replayDiff', { tabId, runId: run.runId });
    assert.equal(diff.calls.length, 1);
    assert.match(diff.calls[0].skipped, /refused it/);
    assert.deepEqual(await pageCalls(), [], 'the blocked order was not replayed');
    assert.equal(dialogs.length, asked, 'not even asked for');
  });
});
