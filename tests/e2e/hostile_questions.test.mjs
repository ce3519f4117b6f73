// Security round 3, finding 6, performed against the built extension: a question that outlives
// its run. The page's confirm() of a consequential call stays open while the run ends (the
// model wrote the call and submit_result in one output) or is stopped; the person then answers
// OK. The call must not run, and the run's record must not claim more than it knows.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT } from '../support/browser.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

const PAY = { name: 'send_payment', arguments: { payee: 'attacker', amount: 5 } };
const SCENARIOS = {
  // The consequential call and the final answer in one output.
  both: { steps: [{ calls: [PAY, { name: 'submit_result', arguments: { answer: 'done' } }] }] },
  // The consequential call alone (the person stops the run while asked).
  pay: { steps: [{ calls: [PAY] }, { text: 'Paid.' }] },
};
const SCHEMA = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };

describe('security round 3: a question outlives its run', () => {
  let server, models, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const calls = () => page.evaluate(() => window.__calls.map((c) => c.name));
  // Each dialog is held open until `release()`, then accepted (the person says OK, late).
  let opened = null;
  let release = null;

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => {
      const held = new Promise((resolve) => (release = resolve));
      opened?.(dialog.message());
      held.then(() => dialog.accept().catch(() => {}));
    });
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    await op('configure', { models: Object.keys(SCENARIOS).map(model), default: 'pay' });
  });
  after(async () => {
    release?.();
    await host?.close();
    await models?.close();
    await server?.close();
  });

  const open = async () => {
    await page.goto(`${server.url}/hostile/confirm.html`);
    tabId = await host.tabIdOf(page);
  };
  const dialogOpened = () => new Promise((resolve) => (opened = resolve));

  test('a run that ended with the call under way: the call never runs, and its record says it may have', async () => {
    await open();
    let shown = false;
    opened = () => (shown = true);
    const run = await op('run', { tabId, prompt: 'Pay and finish', model: 'both', outputSchema: SCHEMA });
    assert.equal(run.outcome.type, 'submitted', JSON.stringify(run.outcome));
    // Whether the page got to ask before the cancel came or not, a late OK runs nothing.
    await sleep(1000);
    release?.();
    await sleep(1000);
    console.log(`# the page asked before the run ended: ${shown}`);
    assert.deepEqual(await calls(), [], 'the payment was not sent');
    const result = run.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId !== run.events.find((x) => x.toolCallName === 'submit_result')?.toolCallId);
    assert.match(result?.content ?? '', /cancelled while under way \(the turn ended\): this call may have run/);
  });

  test('a run stopped while the question was open: answered OK later, the call does not run', async () => {
    await open();
    const asked = dialogOpened();
    const started = await op('startRun', { tabId, prompt: 'Pay', model: 'pay' });
    await asked;
    assert.equal(await op('stop', { runId: started.runId }), true);
    release();
    await sleep(1500);
    assert.deepEqual(await calls(), [], 'the payment was not sent after Stop');
  });
});
