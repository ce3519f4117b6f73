// Chrome stops the extension's service worker whenever it likes. Here it is stopped (DevTools'
// `ServiceWorker.stopAllWorkers`: the browser and its pages live on) right after a run's
// consequential page tool ran, while the model is still answering (its answer is held by the
// scripted server until the stop: nothing here races a timer). The run must not be lost, and its
// stored log must hold the call's result or name it as a call that may have run; the tool is
// never run again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, stopWorker, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

describe('a worker stopped by Chrome mid-run', () => {
  let server, models, host, page, tabId;

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({
      scenarios: {
        act: {
          steps: [
            { calls: [{ name: 'delete_everything', arguments: { confirm: true } }] },
            // Held (never released): the run cannot end before the worker is stopped.
            { text: 'Everything is deleted, as you asked.', hold: 'act' },
          ],
        },
        slow: { steps: [{ text: 'Thinking…', hold: 'slow' }] },
      },
    });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${server.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    await host.worker.evaluate((c) => webmcpHost.configure(c), {
      models: [
        { name: 'act', provider: 'openai', baseUrl: `${models.url}/s/act/v1`, model: 'x', nativeTools: true },
        { name: 'slow', provider: 'openai', baseUrl: `${models.url}/s/slow/v1`, model: 'x', nativeTools: true },
      ],
      default: 'act',
    });
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await server?.close();
  });

  /** Stops the worker; an extension page starts a fresh one. Resolves to that page's `ask`. */
  const restart = async () => {
    await stopWorker(host.context, page);
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    return { popup, ask: (message) => popup.evaluate((m) => chrome.runtime.sendMessage(m), message) };
  };
  /** The popup's and the side panel's status line for the run (each shows its tab's latest run). */
  const shownStatus = async (runId) => {
    const lines = [];
    for (const surface of ['popup', 'sidepanel']) {
      const view = await host.context.newPage();
      await view.goto(`chrome-extension://${host.extensionId}/${surface}.html?tab=${tabId}`);
      await view.waitForSelector('body[data-state="ready"]');
      assert.equal(await view.$eval('#run-select', (s) => s.value), runId, `${surface} shows the run`);
      await view.waitForFunction(() => document.body.dataset.run === 'interrupted');
      // The status line's text, and the names the host wrote as code.
      const text = await view.textContent('#run-status');
      const code = await view.$$eval('#run-status code', (nodes) => nodes.map((n) => n.textContent));
      lines.push({ text, code });
      await view.close();
    }
    return lines;
  };
  const interrupted = (ask, runId) =>
    until('the interrupted run', async () => (await ask({ op: 'runs' })).value.find((r) => r.runId === runId && r.state === 'interrupted'), 30_000);

  test('cut as soon as its first model request was sent: the run is kept, and ends with RUN_ERROR', async () => {
    const { runId } = await host.worker.evaluate((r) => webmcpHost.startRun(r), { tabId, prompt: 'Think.', model: 'slow' });
    // A run is stored before its first model request (before, it was first stored 250 ms later).
    // The cut comes once that request waits on its (held) answer.
    await until('the model request', async () => models.requests().some((r) => r.scenario === 'slow') && models.waiting('slow') === 1, 30_000);
    const { popup, ask } = await restart();
    assert.ok(await interrupted(ask, runId), 'the run is listed');
    const log = (await ask({ op: 'runLog', runId })).value;
    assert.deepEqual([log.events.at(-1).type, log.events.at(-1).code], ['RUN_ERROR', 'worker_restarted']);
    for (const { text: line } of await shownStatus(runId)) {
      assert.equal(line, "Failed: The host's service worker stopped during this run (Chrome ended it), so the run cannot go on; start it again.");
    }
    await popup.close();
  });

  test('cut right after a consequential page tool ran: the run is kept, the call is in its log, nothing runs twice', async () => {
    const { runId } = await host.worker.evaluate((r) => webmcpHost.startRun(r), { tabId, prompt: 'Delete everything.' });
    const deletions = () => page.evaluate(() => window.__calls.filter((c) => c.name === 'delete_everything').length);
    await until('the consequential call', async () => (await deletions()) === 1, 30_000);
    const { popup, ask } = await restart();
    assert.ok(await interrupted(ask, runId), 'the run is listed');
    const log = (await ask({ op: 'runLog', runId })).value;
    const last = log.events.at(-1);
    assert.equal(last.type, 'RUN_ERROR', JSON.stringify(last));
    assert.equal(last.code, 'worker_restarted');
    const result = log.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.ok(result || last.message.includes('delete_everything'), `the call is in the log or named: ${last.message}`);
    for (const { text: line, code } of await shownStatus(runId)) {
      assert.ok(line.startsWith("Failed: The host's service worker stopped during this run"), line);
      assert.ok(result || code.includes('delete_everything'), `what may have run is shown: ${line}`);
    }
    // The fresh worker has read the run back, served both views and now answers a listing of the
    // page's tools (a round trip to the page after anything it sent there before): it had its
    // chance to run the call again.
    const listed = await ask({ op: 'listTools', tabId });
    assert.equal(listed.ok, true, JSON.stringify(listed).slice(0, 500));
    assert.equal(await deletions(), 1, 'the consequential tool ran once');
    await popup.close();
  });
});
