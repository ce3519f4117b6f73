// Security round 3, finding 6, performed against the built extension: a question that outlives
// its run. The page's confirm() of a consequential call stays open while the run ends (the
// model wrote the call and submit_result in one output) or is stopped; the person then answers
// OK. The call must not run, and the run's record must not claim more than it knows.
// "Not run" is checked once the page answered every message the worker sent it about the call
// (recorded in the worker: see `recordBridge`), never after a sleep.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchHost, ROOT, until } from '../support/browser.mjs';
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
const BOUND = { timeout: 60_000 };

describe('security round 3: a question outlives its run', () => {
  let server, models, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const calls = () => page.evaluate(() => window.__calls.map((c) => c.name));
  // Each dialog is held open until `release()`, then accepted (the person says OK, late); once
  // `lateOk` is set, a dialog that opens is accepted at once (the OK comes after all else).
  let opened = null;
  let release = null;
  let lateOk = false;

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => {
      const held = new Promise((resolve) => (release = resolve));
      opened?.(dialog.message());
      if (lateOk) release();
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
    lateOk = false;
    await recordBridge();
    await page.goto(`${server.url}/hostile/confirm.html`);
    tabId = await host.tabIdOf(page);
  };
  const dialogOpened = () => new Promise((resolve) => (opened = resolve));

  /**
   * Records, in the worker, what it sends to the pages' bridges and what they answer: every
   * request `{id, message}` posted on a port it opens (src/shell/frames.js) and the reply
   * `{id, answer}` to it. Ports opened before are not recorded: call this before the page loads.
   */
  const recordBridge = () => host.worker.evaluate(() => {
    if (globalThis.__bridgeLog) return;
    const log = (globalThis.__bridgeLog = { sent: [], answers: {} });
    const connect = chrome.tabs.connect;
    chrome.tabs.connect = function (...args) {
      const port = connect.apply(this, args);
      const post = port.postMessage;
      port.postMessage = function (request) {
        const m = request?.message;
        if (typeof request?.id === 'number') log.sent.push({ id: request.id, op: m?.op, name: m?.name, call: m?.call });
        return post.call(this, request);
      };
      port.onMessage.addListener((reply) => {
        if (typeof reply?.id === 'number') log.answers[reply.id] = reply.answer;
      });
      return port;
    };
  });
  /** The requests the worker sent a page about run `runId`'s calls, each with `answered` and its `answer`. */
  const sentAbout = (runId) => host.worker.evaluate((id) => {
    const { sent, answers } = globalThis.__bridgeLog;
    return sent
      .filter((r) => typeof r.call === 'string' && r.call.startsWith(`${id}-`))
      .map((r) => ({ ...r, answered: r.id in answers, answer: answers[r.id] ?? null }));
  }, runId);
  /** Once the page answered every request about the run's calls, and `enough(requests)` holds: the requests. */
  const pageAnswered = (what, runId, enough) => until(what, async () => {
    const sent = await sentAbout(runId);
    return enough(sent) && sent.every((r) => r.answered) ? sent : undefined;
  }, 30_000);

  test('a run that ended with the call under way: the call never runs, and its record says it may have', BOUND, async () => {
    await open();
    let shown = false;
    opened = () => (shown = true);
    const run = await op('run', { tabId, prompt: 'Pay and finish', model: 'both', outputSchema: SCHEMA });
    assert.equal(run.outcome.type, 'submitted', JSON.stringify(run.outcome));
    // Whether the page got to ask before the cancel came or not, a late OK runs nothing: the
    // person says OK now, to the question open now or to one that opens later.
    lateOk = true;
    release?.();
    // The page had its chance: it answered the worker's cancel of the call, and the call itself
    // when the worker had sent it (a call is sent only once its intent is stored, never after
    // its cancel; the page's `confirm()` holds back every later answer until it is answered).
    const sent = await pageAnswered('the page to answer the cancel of the call (and the call, when sent)', run.runId, (s) => s.some((r) => r.op === 'cancel'));
    console.log(`# the page asked: ${shown}; the worker sent it: ${sent.map((r) => r.op).join(', ')}`);
    assert.deepEqual(await calls(), [], 'the payment was not sent');
    for (const call of sent.filter((r) => r.op === 'callTool')) assert.equal(call.answer?.ok, false, JSON.stringify(call.answer));
    const result = run.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId !== run.events.find((x) => x.toolCallName === 'submit_result')?.toolCallId);
    assert.match(result?.content ?? '', /cancelled while under way \(the turn ended\): this call may have run/);
  });

  test('a run stopped while the question was open: answered OK later, the call does not run', BOUND, async () => {
    await open();
    const asked = dialogOpened();
    const started = await op('startRun', { tabId, prompt: 'Pay', model: 'pay' });
    await asked;
    assert.equal(await op('stop', { runId: started.runId }), true);
    release();
    // The page answered the call it asked about (and the cancel Stop sent): what it did with
    // the late OK is done.
    const sent = await pageAnswered('the page to answer the call', started.runId, (s) => s.some((r) => r.op === 'callTool' && r.name === 'send_payment'));
    assert.deepEqual(await calls(), [], 'the payment was not sent after Stop');
    const call = sent.find((r) => r.op === 'callTool');
    assert.equal(call.answer?.ok, false, `the page did not run it: ${JSON.stringify(call.answer)}`);
  });
});
