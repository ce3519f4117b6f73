// Conversations: `run({threadId, prompt})` continues a conversation from the messages the
// worker keeps (tool calls and results included); changed tools start a new conversation that
// carries the history; `conversations()` lists them and `forget()` deletes one; a run cut by a
// worker restart is continued with its calls marked, for the model, as calls that may have run.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { launchHost, ROOT, stopWorker, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const SCENARIOS = {
  turns: {
    steps: [
      { calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] },
      { text: 'The sum is 42.' },
      { text: 'Twice that is 84.' },
      { text: 'Now I can multiply too.' },
    ],
    after: 'repeat',
  },
  cut: {
    steps: [
      { calls: [{ name: 'delete_everything', arguments: { confirm: true } }] },
      // Held until the worker is stopped: the run waits on its model when it is cut.
      { text: 'Deleted.', hold: 'cut' },
      { text: 'Yes: the data was deleted.' },
    ],
  },
  chat: {
    steps: [{ text: 'Mugs cost 4 to 9 euros.' }, { text: 'The blue one, at 4 euros.' }, { text: 'It is in stock.' }],
  },
  hang: {
    steps: [
      { calls: [{ name: 'never_returns', arguments: {} }] },
      { text: 'I will check before calling it again.' },
    ],
  },
};

describe('conversations', () => {
  let server, models, host, page, tabId;
  const run = (request) => host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  const ask = (op, request = {}) => host.worker.evaluate(([o, r]) => webmcpHost[o](r), [op, request]);
  /** The messages of the model requests of a scenario, as text. */
  const sent = (scenario) => models.requests().filter((r) => r.scenario === scenario).map((r) => JSON.stringify(r.body.messages));

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    const models_ = [model('turns'), model('cut'), model('hang'), model('chat')];
    models_.push({ ...model('hang'), name: 'hang-popup', baseUrl: `${models.url}/s/hang~popup/v1` });
    await ask('configure', { models: models_, default: 'turns' });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  test('a second turn carries the first, calls and results included; changed tools start a new conversation', async () => {
    const first = await run({ prompt: 'Add 2 and 40.' });
    assert.equal(first.outcome.type, 'completed', JSON.stringify(first.outcome));
    const second = await run({ threadId: first.threadId, prompt: 'And twice that?' });
    assert.equal(second.threadId, first.threadId, 'the same conversation');
    const [, , carried] = sent('turns');
    for (const part of ['Add 2 and 40.', '"name":"add"', 'The sum is 42.', 'And twice that?']) {
      assert.ok(carried.includes(part), `the second turn's request carries ${part}: ${carried}`);
    }
    assert.ok(carried.indexOf('The sum is 42.') < carried.indexOf('And twice that?'));
    assert.equal(second.messages.length, 6, JSON.stringify(second.messages));
    assert.deepEqual((await validateEvents(second.events)).errors, []);

    let [listed] = (await ask('conversations')).filter((c) => c.threadId === first.threadId);
    assert.deepEqual([listed.title, listed.tabId, listed.turns], ['Add 2 and 40.', tabId, 2]);
    assert.ok(listed.updatedMs > 0);

    // The page registers another tool: the conversation's tools were fixed when it was created.
    await page.evaluate(() =>
      document.modelContext.registerTool({
        name: 'multiply',
        description: 'Multiplies a and b.',
        inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
        execute: async ({ a, b }) => String(a * b),
      }),
    );
    const third = await run({ threadId: first.threadId, prompt: 'Can you multiply now?' });
    assert.notEqual(third.threadId, first.threadId, 'a new conversation');
    const started = third.events.find((e) => e.type === 'RUN_STARTED');
    assert.equal(started.threadId, third.threadId);
    const notice = third.events.find((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.conversation');
    assert.deepEqual([notice.value.type, notice.value.from, notice.value.added], ['forked', first.threadId, ['multiply']]);
    const forked = sent('turns').at(-1);
    assert.ok(forked.includes('Twice that is 84.') && forked.includes('Can you multiply now?'), 'the history is carried');
    assert.deepEqual((await validateEvents(third.events)).errors, []);
    const threads = await ask('conversations');
    listed = threads.find((c) => c.threadId === third.threadId);
    assert.deepEqual([listed.forkedFrom, listed.turns], [first.threadId, 1]);
    assert.ok(threads.some((c) => c.threadId === first.threadId), 'the old conversation stays as it was');
    const shown = await ask('conversation', { threadId: third.threadId });
    assert.equal(shown.messages.at(-1).content, 'Now I can multiply too.');

    assert.equal(await ask('forget', { threadId: first.threadId }), true);
    assert.ok(!(await ask('conversations')).some((c) => c.threadId === first.threadId));
    await assert.rejects(ask('forget', { threadId: first.threadId }), /no conversation `thread_.*` is kept/);
    // A forgotten id starts afresh: nothing of the old turns is sent.
    const fresh = await run({ threadId: first.threadId, prompt: 'Hello again.' });
    assert.equal(fresh.threadId, first.threadId);
    const request = sent('turns').at(-1);
    assert.ok(request.includes('Hello again.') && !request.includes('Add 2 and 40.'), `the forgotten turns are gone: ${request}`);
  });

  /** What the worker has stored of a run: its state in the run list and its events (what a fresh worker reads). */
  const stored = (runId) => host.worker.evaluate(async ([id, listKey, prefix]) => {
    const got = await chrome.storage.session.get([listKey, prefix + id]);
    const state = (got[listKey] ?? []).find((r) => r.runId === id)?.state ?? null;
    return { state, events: got[prefix + id]?.events ?? [] };
  }, [runId, 'webmcpHost.ui.runs', 'webmcpHost.ui.run.']);
  /** Whether the stored log of a run holds the call of `tool` (and its result, with `result`). */
  const callStored = (tool, result = false) => async (runId) => {
    const { state, events } = await stored(runId);
    const start = events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === tool);
    const done = start && events.some((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === start.toolCallId);
    return state === 'running' && start && (!result || done);
  };

  /**
   * Starts a run, waits until `tool` ran in the page and `ready(runId)` holds (a state of the
   * worker's storage, or a request held at the model server), stops the worker, and waits for a
   * fresh one to list the run as interrupted. Nothing here waits for time to pass: the run is
   * kept from ending by a tool that never returns or a model answer held until the stop.
   */
  const cutAfter = async (model, tool, ready, start = () => ask('startRun', { tabId, prompt: `Call ${tool}.`, model })) => {
    const calls = () => page.evaluate((name) => window.__calls.filter((c) => c.name === name).length, tool);
    const before = await calls();
    const { runId, threadId } = await start();
    // startRun answers once the run is stored: its log is there at once.
    assert.equal((await ask('runLog', { runId })).run.runId, runId);
    await until(`the call of ${tool}`, async () => (await calls()) === before + 1);
    await until('the run ready to be cut', () => ready(runId), 30_000);
    // Chrome stops the worker (the browser and its pages live on); an extension page starts a fresh one.
    const cutAt = Date.now();
    await stopWorker(host.context, page);
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    const message = (m) => popup.evaluate((x) => chrome.runtime.sendMessage(x), m);
    let listed = null;
    await until('the interrupted run', async () => {
      listed = (await message({ op: 'runs' })).value;
      return listed.find((r) => r.runId === runId && r.state === 'interrupted');
    }).catch(async (error) => {
      // Which runs the fresh worker listed, and in which state: what a flake needs to be read.
      const shown = (listed ?? []).slice(0, 5).map((r) => `${r.runId}: ${r.state}`);
      // And what the model server was asked, when (a run that went on after the stop asked
      // again), and how the run's stored log ends.
      const asked = models.requests().filter((r) => r.time > cutAt - 5000).map((r) => `${r.scenario} step ${r.step} at ${r.time - cutAt} ms`);
      const log = await message({ op: 'runLog', runId }).then((a) => a.value?.events?.slice(-3).map((e) => `${e.type}${e.message ? `: ${e.message}` : ''}`)).catch((e) => e.message);
      throw new Error(`${error.message} ${runId}; the worker listed ${JSON.stringify(shown)}; the model was asked ${JSON.stringify(asked)} (from the stop); the log ends ${JSON.stringify(log)}`);
    });
    await popup.close();
    return { runId, threadId, calls: async () => (await calls()) - before };
  };

  test('a run cut after its consequential call is continued with the call and its result, and the call never runs again', async () => {
    // Cut once the call's result is stored (cut before that, the model is told the call may have
    // run) and the run waits on its model's next answer, which is held.
    const resultStored = callStored('delete_everything', true);
    const ready = async (id) => models.waiting('cut') === 1 && (await resultStored(id));
    const { runId, threadId, calls } = await cutAfter('cut', 'delete_everything', ready);
    const next = await run({ threadId, prompt: 'Did it go through?', model: 'cut' });
    assert.equal(next.threadId, threadId);
    const continued = sent('cut').at(-1);
    for (const part of ['Call delete_everything.', '"name":"delete_everything"', '"content":"deleted"', 'Did it go through?']) {
      assert.ok(continued.includes(part), `the continued request carries ${part}: ${continued}`);
    }
    const notice = next.events.find((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.conversation');
    assert.deepEqual([notice.value.type, notice.value.runId, notice.value.mayHaveRun], ['resumed', runId, []]);
    assert.deepEqual((await validateEvents(next.events)).errors, []);
    assert.equal(await calls(), 1, 'the consequential tool ran once');
  });

  test('a run cut while its call was running is continued with that call marked, for the model, as one that may have run', async () => {
    // A call that does not act is stored with the run's other events (soon after), not before
    // it starts as an acting call is: the cut comes once it is stored.
    const { runId, threadId, calls } = await cutAfter('hang', 'never_returns', callStored('never_returns'));
    const next = await run({ threadId, prompt: 'Go on.', model: 'hang' });
    const continued = sent('hang').at(-1);
    assert.ok(continued.includes('"name":"never_returns"') && continued.includes('may have run'), `the model is told: ${continued}`);
    const notice = next.events.find((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.conversation');
    assert.deepEqual([notice.value.type, notice.value.runId, notice.value.mayHaveRun], ['resumed', runId, ['never_returns']]);
    assert.equal(next.outcome.type, 'completed');
    assert.equal(await calls(), 1, 'not called again');
  });

  /** `popup.waitForFunction`, failing with what it waited for (and the popup's state). */
  const waitIn = async (popup, what, fn, arg) => {
    try {
      await popup.waitForFunction(fn, arg, { timeout: 20_000 });
    } catch (error) {
      const seen = await popup.evaluate(() => ({ run: document.body.dataset.run, answer: document.querySelector('#answer').textContent, status: document.querySelector('#run-status').textContent, turns: document.querySelectorAll('#thread li').length })).catch(() => null);
      throw new Error(`timed out waiting for ${what}; the popup shows ${JSON.stringify(seen)}`);
    }
  };

  test('the popup holds a conversation: earlier turns stay, the prompt continues it, New conversation starts afresh, Continue picks up a cut run', async () => {
    const popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 900 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    await popup.waitForSelector('body[data-state="ready"]');
    await popup.click('#new-conversation');
    await popup.selectOption('#model-select', 'chat');
    const turn = async (prompt, answer) => {
      await popup.fill('#prompt', prompt);
      await popup.click('#run');
      await waitIn(popup, `the answer ${answer}`, (a) => document.querySelector('#answer').textContent === a && document.body.dataset.run === 'finished', answer);
    };
    await turn('Which mugs do you sell?', 'Mugs cost 4 to 9 euros.');
    await turn('Which is cheapest?', 'The blue one, at 4 euros.');
    await turn('Is it in stock?', 'It is in stock.');
    await waitIn(popup, 'four earlier messages', () => document.querySelectorAll('#thread li').length === 4);
    const turns = await popup.$$eval('#thread li', (items) => items.map((i) => i.textContent));
    assert.deepEqual(turns, ['Which mugs do you sell?', 'Mugs cost 4 to 9 euros.', 'Which is cheapest?', 'The blue one, at 4 euros.']);
    assert.match(await popup.textContent('#thread-label'), /^Conversation: Which mugs do you sell\? · 3 turns$/);
    await mkdir(join(ROOT, 'test-output'), { recursive: true });
    await popup.screenshot({ path: join(ROOT, 'test-output', 'conversation.png'), fullPage: true });
    await until('one conversation of three turns', async () => {
      const threads = (await ask('conversations')).filter((c) => c.title === 'Which mugs do you sell?');
      return threads.length === 1 && threads[0].turns === 3;
    });
    await popup.click('#new-conversation');
    assert.equal(await popup.locator('#thread li').count(), 0);
    assert.equal(await popup.textContent('#thread-label'), 'New conversation');

    // A run cut by a worker restart: the popup offers to continue it.
    await popup.selectOption('#model-select', 'hang-popup');
    const { threadId } = await cutAfter('hang-popup', 'never_returns', callStored('never_returns'), async () => {
      await popup.fill('#prompt', 'Call never_returns.');
      await popup.click('#run');
      await waitIn(popup, 'the run running', () => document.body.dataset.run === 'running');
      // The run the popup started, once the worker lists it (not the tab's last finished run).
      let started;
      await until('the popup\'s run listed as running', async () => {
        started = (await ask('runs', { tabId })).find((r) => r.state === 'running' && r.prompt === 'Call never_returns.');
        return started;
      });
      return started;
    });
    await popup.reload();
    await popup.waitForSelector('body[data-state="ready"]');
    await popup.selectOption('#model-select', 'hang-popup');
    await popup.waitForSelector('#continue:not([hidden])');
    assert.equal(await popup.getAttribute('body', 'data-run'), 'interrupted');
    await popup.click('#continue');
    await waitIn(popup, 'the continued answer', () => document.querySelector('#answer').textContent === 'I will check before calling it again.');
    const request = models.requests().filter((r) => r.scenario === 'hang~popup').at(-1);
    assert.ok(JSON.stringify(request.body.messages).includes('may have run'), 'the cut call is marked');
    await until('the same conversation, continued', async () => (await ask('conversations')).some((c) => c.threadId === threadId && c.turns === 1));
    await popup.close();
  });
});
