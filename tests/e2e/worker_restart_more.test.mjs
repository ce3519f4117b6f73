// More moments at which Chrome may stop the extension's service worker (DevTools'
// `ServiceWorker.stopAllWorkers`: the browser and its pages live on): while a destructive MCP
// call is in flight, while a slow consequential page tool runs, while a visitor input or an MCP
// confirmation waits for the person, and while a manual `callTool` runs. Each time: the run's
// stored log ends with `RUN_ERROR` (`worker_restarted`) naming the calls that may have run, no
// acting call runs twice (counted in the page and on the MCP server), what waited for the
// person is gone and answering it is a clear error, the popup and the side panel show the run
// as interrupted with what may have happened, the key in session storage and the MCP sign-in
// are used by the next run without a new sign-in, and nothing hangs (every test is bounded).
// Nothing here races a timer: what must be under way at the cut (the MCP call, the page tool) is
// held until the test lets it go, and each "nothing ran again" is checked once the fresh worker
// has had its chance (it served the views, refused the answer, or made a later round trip).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { CANARY, launchHost, ROOT, stopWorker, storeSignIn, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';

const BOUND = { timeout: 60_000 };
// The slow page tool's time, in the page (slow-tools.html waits `ms` on `setTimeout`): a timer of
// this length is held by `holdPageTool` until `releasePageTool`, so the tool runs as long as the
// test needs, not for a time the cut must beat.
const HELD_MS = 86_400_000;
const TOKEN = 'tok-restart-4b1f';
const CUT = "The host's service worker stopped during this run";

describe('a worker stopped by Chrome: acting calls, waits for the person, manual calls', () => {
  let server, models, mcp, host, page, tabId, popup;

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({
      scenarios: {
        mcpact: {
          steps: [{ calls: [{ name: 'held__delete_record', arguments: { id: 'r-held' } }] }, { text: 'Deleted r-held.' }],
        },
        confirm: {
          steps: [{ calls: [{ name: 'conf__delete_record', arguments: { id: 'r-conf' } }] }, { text: 'Deleted r-conf.' }],
        },
        pageact: {
          steps: [{ calls: [{ name: 'slow_delete', arguments: { id: 'p-1', ms: HELD_MS } }] }, { text: 'Deleted p-1.' }],
        },
        ask: {
          steps: [{ calls: [{ name: 'ask_person', arguments: { question: 'Which colour?' } }] }, { text: 'You chose.' }],
        },
        add: {
          steps: [{ calls: [{ name: 'held__add', arguments: { a: 2, b: 3 } }] }, { text: 'It is 5.' }],
        },
      },
    });
    // An acting call on `held` holds its answer for an hour (the server closes before, at the
    // end, or the client cancels it): it is still in flight whenever the worker is cut.
    mcp = await startMcpServer({ behaviours: { held: { holdMs: 3_600_000, unauthorized: TOKEN } } });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${server.url}/slow-tools.html`);
    tabId = await host.tabIdOf(page);
    await storeSignIn(host.worker, 'held', `${mcp.url}/s/held/mcp`, { access: TOKEN, refresh: 'r-tok', secret: 's-tok' });
    const model = (name) => ({
      name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true, keyRef: 'canary',
    });
    await host.worker.evaluate((c) => webmcpHost.configure(c), {
      models: ['mcpact', 'confirm', 'pageact', 'ask', 'add'].map(model),
      default: 'pageact',
      servers: [
        { name: 'held', url: `${mcp.url}/s/held/mcp`, namespace: 'held', trusted: true },
        { name: 'conf', url: `${mcp.url}/s/normal~conf/mcp`, namespace: 'conf' },
      ],
    });
  });
  after(async () => {
    await popup?.close().catch(() => {});
    await host?.close();
    await Promise.all([models?.close(), mcp?.close(), server?.close()]);
  });

  /** Stops the worker; the popup (opened, or reloaded) starts a fresh one. */
  const restart = async () => {
    await stopWorker(host.context, page);
    popup ??= await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html`);
    await popup.waitForSelector('body[data-state="ready"]');
  };
  /** An operation asked from the popup, as the person's pages do: the whole `{ok, ...}` answer. */
  const ask = (message) => popup.evaluate((m) => chrome.runtime.sendMessage(m), message);
  const start = (request) => host.worker.evaluate((r) => webmcpHost.startRun(r), request);
  const cutLog = async (runId) => {
    await until('the interrupted run', async () => (await ask({ op: 'runs' })).value.find((r) => r.runId === runId && r.state === 'interrupted'), 30_000);
    const log = (await ask({ op: 'runLog', runId })).value;
    const last = log.events.at(-1);
    assert.deepEqual([last.type, last.code], ['RUN_ERROR', 'worker_restarted'], JSON.stringify(last));
    return { log, last };
  };
  /** The run as `surface` (popup or side panel) shows it: its status line and its list entry. */
  const shown = async (surface, runId, params = '') => {
    const view = await host.context.newPage();
    try {
      await view.goto(`chrome-extension://${host.extensionId}/${surface}.html${params}`);
      await view.waitForSelector('body[data-state="ready"]');
      // The run shown first is the latest of the popup's tab (of any tab in the side panel);
      // another is picked in the run list.
      if ((await view.evaluate(() => document.body.dataset.run)) !== 'interrupted') {
        await view.$eval('#run-select', (s, id) => {
          s.value = id;
          s.dispatchEvent(new Event('change'));
        }, runId);
      }
      await view.waitForFunction(() => document.body.dataset.run === 'interrupted');
      return {
        status: await view.textContent('#run-status'),
        code: await view.$$eval('#run-status code', (nodes) => nodes.map((n) => n.textContent)),
        entry: await view.$eval('#run-select', (s) => s.selectedOptions[0].textContent),
      };
    } finally {
      await view.close();
    }
  };
  /** Holds the page's timers of `HELD_MS` (the slow tool's wait) until `releasePageTool`. */
  const holdPageTool = () => page.evaluate((heldMs) => {
    if (window.__heldTimers) return;
    window.__heldTimers = [];
    const setTimer = window.setTimeout;
    window.setTimeout = function (fn, ms, ...args) {
      if (ms !== heldMs) return setTimer.call(this, fn, ms, ...args);
      window.__heldTimers.push(() => fn(...args));
      return 0;
    };
  }, HELD_MS);
  const releasePageTool = () => page.evaluate(() => {
    for (const fire of window.__heldTimers.splice(0)) fire();
  });
  /**
   * The fresh worker lists the page's tools: a round trip to the page's bridge after the late
   * answer (and after anything the worker sent there before), so the page had its chance to run
   * a call again or to hand the late answer on.
   */
  const roundTrip = async () => {
    const listed = await ask({ op: 'listTools', tabId });
    assert.equal(listed.ok, true, JSON.stringify(listed).slice(0, 500));
  };

  const assertShown = async (runId, named, params) => {
    for (const surface of ['popup', 'sidepanel']) {
      const { status, code, entry } = await shown(surface, runId, params);
      assert.ok(status.startsWith(`Failed: ${CUT}`), `${surface}: ${status}`);
      if (named) assert.ok(code.includes(named) && status.includes('it may have run'), `${surface} names ${named}: ${status}`);
      else assert.ok(!status.includes('may have run'), `${surface} names nothing: ${status}`);
      assert.match(entry, /interrupted/, `${surface}'s run list`);
    }
  };

  test('cut while a destructive MCP call is in flight: named in the log, run once, the sign-in and the key live on', BOUND, async () => {
    const { runId } = await start({ prompt: 'Delete r-held.', model: 'mcpact' });
    await until('the MCP call', async () => mcp.deleted().includes('r-held'), 30_000);
    await restart();
    const { last } = await cutLog(runId);
    assert.ok(last.message.includes('`held__delete_record` (MCP server held'), last.message);
    await assertShown(runId, 'held__delete_record');
    // The fresh worker has read the run back and served both views: it did not call the tool
    // again (and, below, a whole run of it on the same server does not either).
    assert.deepEqual(mcp.deleted().filter((id) => id === 'r-held'), ['r-held'], 'the destructive call ran once');

    // The next run uses the stored sign-in and the stored key, with no new sign-in.
    const before = mcp.requests({ behaviour: 'held' }).length;
    const next = await ask({ op: 'run', prompt: 'Add 2 and 3.', model: 'add' });
    assert.equal(next.ok, true, JSON.stringify(next));
    assert.deepEqual(next.value.outcome, { type: 'completed', text: 'It is 5.' });
    const after = mcp.requests({ behaviour: 'held' }).slice(before);
    assert.ok(after.length > 0 && after.every((r) => r.headers.authorization === `Bearer ${TOKEN}` && r.status !== 401), 'the stored bearer token');
    const asked = models.requests({ scenario: 'add' }).filter((r) => r.path.endsWith('/chat/completions'));
    assert.ok(asked.length > 0 && asked.every((r) => r.headers.authorization === `Bearer ${CANARY}`), 'the stored key');
    assert.deepEqual(mcp.deleted().filter((id) => id === 'r-held'), ['r-held']);
  });

  test('cut while a slow consequential page tool runs: named in the log, run once, its late answer goes nowhere', BOUND, async () => {
    await holdPageTool();
    const { runId } = await start({ tabId, prompt: 'Delete p-1.', model: 'pageact' });
    await until('the page call', () => page.evaluate(() => window.__calls.length === 1), 30_000);
    await restart();
    const { last } = await cutLog(runId);
    assert.ok(last.message.includes('`slow_delete` (page http://'), last.message);
    await assertShown(runId, 'slow_delete', `?tab=${tabId}`);
    assert.equal(await page.evaluate(() => window.__done.length), 0, 'the tool was still running at the cut, and until now');
    // The tool answers late, to the worker that was stopped.
    await releasePageTool();
    await until('the tool to answer', () => page.evaluate(() => window.__done.length === 1), 30_000);
    await roundTrip();
    assert.equal(await page.evaluate(() => window.__calls.length), 1, 'the consequential tool ran once');
    const log = (await ask({ op: 'runLog', runId })).value;
    assert.equal(log.events.at(-1).code, 'worker_restarted', 'the late answer changed nothing');
  });

  test('cut while a visitor input waits: the run is interrupted, the input is gone, answering it is an error', BOUND, async () => {
    const { runId } = await start({ tabId, prompt: 'Pick a colour.', model: 'ask', visitorTools: [{ name: 'ask_person', description: 'Ask the person.', parameters: { type: 'object', properties: { question: { type: 'string' } } } }] });
    const [item] = await until('the pending input', async () => {
      const items = await host.worker.evaluate(() => webmcpHost.pending());
      return items.length ? items : undefined;
    }, 30_000);
    // A side panel left open on the Pending view across the restart still lists the input.
    const stale = await host.context.newPage();
    await stale.goto(`chrome-extension://${host.extensionId}/sidepanel.html?view=pending`);
    const listed = stale.locator('#pending li.pending.input');
    await listed.waitFor();
    await restart();
    const { last } = await cutLog(runId);
    assert.ok(!last.message.includes('may have run'), `nothing acting was under way: ${last.message}`);
    // Answering it there says why nothing happens, and the list is read again.
    await listed.locator('textarea').fill('blue');
    await listed.locator('button:has-text("Answer")').click();
    await stale.waitForSelector('#pending-status.error');
    assert.match(await stale.textContent('#pending-status'), /^answer: nothing waits for call/);
    assert.equal(await stale.locator('#pending li.pending').count(), 0);
    await stale.close();
    assert.deepEqual((await ask({ op: 'pending' })).value, [], 'nothing waits any more');
    const answer = await ask({ op: 'answer', runId, callId: item.callId, value: 'blue' });
    assert.equal(answer.ok, false, JSON.stringify(answer));
    assert.match(answer.error, /nothing waits/, answer.error);
    await assertShown(runId, null, `?tab=${tabId}`);
    assert.equal(models.requests({ scenario: 'ask' }).filter((r) => r.path.endsWith('/chat/completions')).length, 1, 'the model was not asked again');
  });

  test('cut while an MCP confirmation waits (run without a tab): gone, nothing ran, answering it is an error', BOUND, async () => {
    const { runId } = await start({ prompt: 'Delete r-conf.', model: 'confirm' });
    const [item] = await until('the pending confirmation', async () => {
      const items = await host.worker.evaluate(() => webmcpHost.pending());
      return items.length ? items : undefined;
    }, 30_000);
    assert.equal(item.kind, 'confirmation');
    await restart();
    const { last } = await cutLog(runId);
    assert.ok(!last.message.includes('may have run'), `the call was never allowed, so it did not run: ${last.message}`);
    assert.deepEqual((await ask({ op: 'pending' })).value, []);
    const answer = await ask({ op: 'answer', runId, callId: item.callId, value: true });
    assert.equal(answer.ok, false, JSON.stringify(answer));
    assert.match(answer.error, /nothing waits/, answer.error);
    await assertShown(runId, null);
    // The fresh worker refused the late answer (the only thing that could have let the call run)
    // and served both views since: the call never reached the server.
    assert.ok(mcp.requests({ behaviour: 'normal~conf', rpcMethod: 'tools/list' }).length > 0, 'the run listed the server');
    assert.deepEqual(mcp.requests({ behaviour: 'normal~conf', rpcMethod: 'tools/call' }), [], 'no tools/call reached the server');
    assert.ok(!mcp.deleted().includes('r-conf'), 'the unconfirmed call never ran');
  });

  test('cut while a manual callTool of a consequential page tool runs: the caller gets an error, the tool ran once', BOUND, async (t) => {
    await page.evaluate(() => {
      window.__calls.length = 0;
      window.__done.length = 0;
    });
    await holdPageTool();
    const caller = await host.context.newPage();
    await caller.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}`);
    await caller.waitForSelector('body[data-state="ready"]');
    const answer = caller.evaluate((m) => chrome.runtime.sendMessage(m).then((a) => ({ answered: a }), (e) => ({ threw: String(e?.message ?? e) })), {
      op: 'callTool', tabId, name: 'slow_delete', args: { id: 'm-1', ms: HELD_MS },
    });
    await until('the manual call', () => page.evaluate(() => window.__calls.length === 1), 30_000);
    await restart();
    // The caller is not left waiting on the tool: it gets its answer while the tool, held by the
    // test, is still running. (The limit only keeps a hang from lasting the whole test.)
    let limit;
    const settled = await Promise.race([answer, new Promise((r) => (limit = setTimeout(() => r('hung'), 30_000)))]);
    clearTimeout(limit);
    assert.notEqual(settled, 'hung', 'the caller is not left waiting');
    assert.equal(await page.evaluate(() => window.__done.length), 0, 'the caller got its answer while the tool still ran');
    assert.ok(settled.threw, `the caller gets an error: ${JSON.stringify(settled)}`);
    t.diagnostic(`the caller's error: ${settled.threw}`);
    await releasePageTool();
    await until('the tool to answer', () => page.evaluate(() => window.__done.length === 1), 30_000);
    await roundTrip();
    assert.equal(await page.evaluate(() => window.__calls.length), 1, 'the consequential tool ran once');
    // A manual call is not a run: no run records it.
    const runs = (await ask({ op: 'runs' })).value;
    assert.ok(!runs.some((r) => r.state === 'running'), JSON.stringify(runs));
    await caller.close();
  });
});
