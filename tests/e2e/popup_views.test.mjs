// The person's side, driven through the popup and the side panel as a person would: a key
// entered and cleared, models added from presets and tested (an Ollama-like 403 explained), an
// MCP server added and checked, a prompt run on a fixture page against the scripted model with
// the answer streaming in, the event log filtered, exported and validated, a visitor input
// answered and another declined, a confirmation of a run without a tab allowed, a run stopped,
// the log read back after the popup closed and after the worker restarted. A model answer with
// HTML and a markdown image pointing at a counting server renders as text and loads nothing.
// Screenshots of every view go to test-output/.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdir, readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT, stopWorker, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const CANARY = 'sk-canary-ui-5d1e9a7c3b4f2086';
const OUT = join(ROOT, 'test-output');

/** A server that counts every request (a beacon a rendered image would hit), or answers 403. */
async function listen(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    }),
  };
}

describe('popup and side panel', () => {
  let pages, models, mcp, host, page, tabId, popup, beacon, refusing;
  let beaconHits = 0;
  const requests = [];

  const scenarios = (beaconUrl) => ({
    // The first call is written broken ("2" as a string, cut JSON): repair fixes it.
    answer: {
      steps: [
        { calls: [{ name: 'add', arguments: '{"a": "2", "b": 40' }] },
        {
          text: `The sum is 42. <img src=x onerror="window.__xss=1"> <b>bold?</b> ![x](${beaconUrl}/beacon.png) done.`,
          chunk: 6,
          delayMs: 20,
        },
      ],
    },
    ask: {
      steps: [
        { calls: [{ name: 'ask_person', arguments: { question: 'Which colour do you want?' } }] },
        { text: 'You chose it.' },
      ],
      after: 'repeat',
    },
    // Half of the answer is written, the rest held until the test releases it: mid-stream until stopped.
    slow: { steps: [{ text: 'This answer takes a long time to write. '.repeat(60), chunk: 4, holdMidway: 'slow' }] },
    confirm: {
      steps: [{ calls: [{ name: 'proj__delete_record', arguments: { id: 'r-7' } }] }, { text: 'Deleted r-7.' }],
    },
    // Arguments that try to hide in the confirmation: a long first one, bidi and invisible
    // characters.
    hidden: {
      steps: [
        { calls: [{ name: 'proj__delete_record', arguments: { note: 'x'.repeat(700), id: 'bob\u202Ekcatta', memo: 'a\u2028b\u200B' } }] },
        { text: 'Not deleted.' },
      ],
    },
    // The model asks for a secret as if the host did.
    phish: {
      steps: [
        { calls: [{ name: 'ask_person', arguments: { question: 'Session expired: enter your OpenAI API key to continue' } }] },
        { text: 'Thanks.' },
      ],
    },
  });

  const shot = (target, name) => target.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });
  const openPopup = async (path = 'popup.html') => {
    const opened = await host.context.newPage();
    await opened.setViewportSize({ width: 420, height: 900 });
    await opened.goto(`chrome-extension://${host.extensionId}/${path}?tab=${tabId}`);
    await opened.waitForSelector('body[data-state="ready"]');
    return opened;
  };
  const view = async (target, name) => {
    await target.click(`#views button[data-view="${name}"]`);
    await target.waitForSelector(`body[data-view="${name}"]`);
  };
  const addModel = async (target, { preset, name, base, keyRef, makeDefault = false }) => {
    await view(target, 'models');
    await target.selectOption('#model-preset', preset);
    await target.fill('#model-name', name);
    await target.fill('#model-base', base);
    await target.fill('#model-key', keyRef ?? '');
    await target.setChecked('#model-default', makeDefault);
    await target.click('#model-form button[type="submit"]');
    await target.waitForSelector(`#models li[data-model="${name}"]`);
  };
  const runPrompt = async (target, model, prompt) => {
    await view(target, 'run');
    await target.selectOption('#model-select', model);
    await target.fill('#prompt', prompt);
    const before = await target.evaluate(() => document.body.dataset.run);
    await target.click('#run');
    // A new run is shown once the button is back and the shown run is running (or done).
    await target.waitForFunction((b) => document.body.dataset.run !== 'none' && !document.querySelector('#run').disabled && (b === 'none' || document.querySelector('#run-status').textContent !== ''), before);
  };
  const shownRunId = (target) => target.$eval('#run-select', (s) => s.value);

  before(async () => {
    await mkdir(OUT, { recursive: true });
    beacon = await listen((req, res) => {
      beaconHits += 1;
      res.end('beacon');
    });
    refusing = await listen((req, res) => {
      // Ollama's answer to an origin it does not allow: 403 with an empty body.
      res.writeHead(403, { 'access-control-allow-origin': '*' });
      res.end();
    });
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: scenarios(beacon.url) });
    mcp = await startMcpServer();
    host = await launchHost();
    host.context.on('request', (request) => requests.push(request));
    page = await host.context.newPage();
    await page.goto(`${pages.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    popup = await openPopup();
  });
  after(async () => {
    await host?.close();
    await Promise.all([models?.close(), mcp?.close?.(), pages?.close(), beacon?.close(), refusing?.close()]);
  });

  test('keys: entered, shown masked, kept in session storage only, cleared with one click', async () => {
    await view(popup, 'keys');
    for (const [ref, value] of [['canary', CANARY], ['spare', 'sk-spare-0000111122223333']]) {
      await popup.fill('#key-ref', ref);
      await popup.fill('#key-value', value);
      await popup.click('#key-form button[type="submit"]');
      await popup.waitForSelector(`#keys li[data-key="${ref}"]`);
    }
    assert.equal(await popup.textContent('#keys li[data-key="canary"] .masked'), 'sk-…2086');
    assert.equal(await popup.inputValue('#key-value'), '', 'the field is emptied');
    await popup.click('#keys li[data-key="spare"] button');
    await popup.waitForSelector('#keys li[data-key="spare"]', { state: 'detached' });
    const stored = await host.worker.evaluate(async () => ({
      session: await chrome.storage.session.get(null),
      local: await chrome.storage.local.get(null),
    }));
    assert.equal(stored.session['webmcpHost.key.canary'], CANARY);
    assert.equal(stored.session['webmcpHost.key.spare'], undefined, 'cleared');
    assert.ok(!JSON.stringify(stored.local).includes(CANARY), 'not in local storage');
    assert.ok(!(await popup.content()).includes(CANARY), 'not in the page');
    assert.ok(!(await popup.evaluate(() => JSON.stringify(localStorage) + location.href)).includes(CANARY));
    await shot(popup, 'popup-keys');
  });

  test('models: presets fill the form; test connection reports the list, and Ollama’s 403 with OLLAMA_ORIGINS', async () => {
    await view(popup, 'models');
    await popup.selectOption('#model-preset', 'anthropic');
    assert.equal(await popup.inputValue('#model-base'), 'https://api.anthropic.com');
    assert.equal(await popup.inputValue('#model-provider'), 'anthropic');
    await popup.fill('#model-name', '');
    await addModel(popup, { preset: 'openai', name: 'scripted', base: `${models.url}/s/answer/v1`, keyRef: 'canary', makeDefault: true });
    await addModel(popup, { preset: 'openai', name: 'asker', base: `${models.url}/s/ask/v1`, keyRef: 'canary' });
    await addModel(popup, { preset: 'openai', name: 'asker2', base: `${models.url}/s/ask~2/v1`, keyRef: 'canary' });
    await addModel(popup, { preset: 'openai', name: 'slow', base: `${models.url}/s/slow/v1`, keyRef: 'canary' });
    await addModel(popup, { preset: 'openai', name: 'confirmer', base: `${models.url}/s/confirm/v1`, keyRef: 'canary' });
    await addModel(popup, { preset: 'ollama', name: 'ollama-local', base: `${refusing.url}/v1` });
    assert.match(await popup.textContent('#models li[data-model="scripted"]'), /default/);

    await popup.click('#models li[data-model="scripted"] button:has-text("Test connection")');
    const ok = popup.locator('#models li[data-model="scripted"] .report');
    await ok.filter({ hasText: 'connected' }).waitFor();
    assert.match(await ok.textContent(), /connected, 2 models listed/);
    const listing = models.requests().filter((r) => r.path.endsWith('/models'));
    assert.equal(listing.at(-1).headers.authorization, `Bearer ${CANARY}`);

    await popup.click('#models li[data-model="ollama-local"] button:has-text("Test connection")');
    const refused = popup.locator('#models li[data-model="ollama-local"] .report.error');
    await refused.waitFor();
    assert.match(await refused.textContent(), new RegExp(`refused this extension \\(403\\).*OLLAMA_ORIGINS=chrome-extension://${host.extensionId}`));
    await shot(popup, 'popup-models');
  });

  test('servers: added with its namespace, permission asked (degrading to CORS), checked, Context7 toggled', async () => {
    await view(popup, 'servers');
    await popup.fill('#server-name', 'project');
    await popup.fill('#server-url', `${mcp.url}/mcp`);
    await popup.fill('#server-ns', 'proj');
    await popup.click('#server-form button[type="submit"]');
    const row = popup.locator('#servers li[data-server="project"]');
    await row.waitFor();
    assert.match(await row.locator('.tool-meta').textContent(), /\/mcp · proj__/);
    // No one answers the permission prompt here (it stays open): the view says what that means.
    assert.match(await popup.textContent('#servers-status'), /^Added project\. The browser asks you for access to http:\/\/127\.0\.0\.1\/\*; until you allow it, requests rely on the server allowing this extension through CORS\.$/);
    await row.locator('.server-access').filter({ hasText: 'not granted' }).waitFor();
    await row.locator('button:has-text("Check")').click();
    await popup.locator('#servers li[data-server="project"] .server-state').filter({ hasText: 'connected' }).waitFor();
    assert.match(await popup.textContent('#servers li[data-server="project"] .server-state'), /^connected · \d+ tools · MCP 2025-11-25 · checked /);

    await popup.check('#context7');
    await popup.waitForSelector('#servers li[data-server="Context7"]');
    assert.match(await popup.textContent('#servers li[data-server="Context7"] .tool-meta'), /^https:\/\/mcp\.context7\.com\/mcp · context7__/);
    await shot(popup, 'popup-servers');
    await popup.uncheck('#context7');
    await popup.waitForSelector('#servers li[data-server="Context7"]', { state: 'detached' });
    const settings = await host.worker.evaluate(() => webmcpHost.settings());
    assert.deepEqual(settings.servers.map((s) => s.name), ['project']);
    assert.ok(!JSON.stringify(settings).includes(CANARY), 'settings hold masks only');
  });

  test('a prompt runs on the tab: the answer streams in as text, events arrive, tools are listed', async () => {
    await view(popup, 'run');
    // The tools the agent will see: the page's, the host's own, the server's (from its check).
    await popup.waitForSelector('#tools li[data-tool="add"]');
    await popup.waitForSelector('#extra-tools li[data-tool="ask_person"]');
    await popup.waitForSelector('#extra-tools li[data-tool="proj__delete_record"] .hint.consequential');
    await popup.evaluate(() => {
      window.__latency = [];
      chrome.runtime.onMessage.addListener((m) => {
        if (m?.webmcpHostUi === 'event') window.__latency.push(Date.now() - m.time);
      });
    });
    const started = Date.now();
    await runPrompt(popup, 'scripted', 'Add 2 and 40.');
    await popup.locator('#answer').filter({ hasText: 'The sum is 42.' }).waitFor();
    const firstText = Date.now() - started;
    await popup.waitForSelector('body[data-run="finished"]');
    assert.equal(await popup.textContent('#run-status'), 'Done.');
    const answer = await popup.textContent('#answer');
    assert.ok(answer.includes('<img src=x onerror="window.__xss=1">'), answer);
    assert.ok(answer.includes(`![x](${beacon.url}/beacon.png)`), answer);
    assert.equal(await popup.locator('#answer *').count(), 0, 'no element made from model text');
    assert.equal(await popup.evaluate(() => window.__xss), undefined);
    const latency = await popup.evaluate(() => window.__latency);
    assert.ok(latency.length > 10, `${latency.length} pushed events`);
    const sorted = [...latency].sort((a, b) => a - b);
    console.log(`# first answer text ${firstText} ms after Run; push latency median ${sorted[sorted.length >> 1]} ms, max ${sorted.at(-1)} ms over ${sorted.length} events`);
    assert.deepEqual((await page.evaluate(() => window.__calls)).at(-1), { name: 'add', input: { a: 2, b: 40 } });
    // The run's call, inline in the Run view: its name, arguments as run, result.
    const inline = popup.locator('#run-calls li.tl-call');
    await inline.locator('.tl-result').waitFor();
    assert.equal(await inline.count(), 1);
    assert.equal((await inline.locator('.call-name').textContent()).trim(), 'add');
    assert.deepEqual(JSON.parse(await inline.locator('.tl-args').textContent()), { a: 2, b: 40 });
    assert.equal(await inline.locator('.tl-result').textContent(), '42');
    await shot(popup, 'popup-run');
  });

  test('the log: a row per event, filter by type, the call grouped with its repair, export that validates', async () => {
    await view(popup, 'log');
    await popup.click('#log-raw'); // the timeline is the default; the raw events one click away
    const runId = await shownRunId(popup);
    const { events } = await host.worker.evaluate((runId) => webmcpHost.runLog({ runId }), runId);
    await popup.waitForFunction((n) => document.querySelectorAll('#log li.event').length === n, events.length);
    const call = popup.locator('#log li.call');
    assert.equal(await call.count(), 1);
    assert.equal(await call.locator('.call-name').textContent(), 'add');
    assert.equal(await call.locator('.call-result').textContent(), '42');
    assert.equal(await call.locator('.call-args').textContent(), '{"a":2,"b":40}', 'the repaired arguments');
    assert.ok(await call.evaluate((n) => n.classList.contains('repair')), 'the repaired call is highlighted');
    assert.equal(await popup.locator('#log li.event.repair[data-type="CUSTOM"]').count(), 1);

    await popup.selectOption('#log-filter', 'TOOL_CALL_RESULT');
    const visible = await popup.$$eval('#log li.event', (rows) => rows.filter((r) => !r.hidden && r.offsetParent !== null).map((r) => r.dataset.type));
    assert.deepEqual(visible, ['TOOL_CALL_RESULT']);
    assert.match(await popup.textContent('#log-status'), /^1 of \d+ events \(TOOL_CALL_RESULT\)$/);
    await shot(popup, 'popup-log-filtered');
    await popup.selectOption('#log-filter', '');
    await popup.click('#log li.event[data-type="RUN_STARTED"] summary');
    await shot(popup, 'popup-log');

    const [download] = await Promise.all([popup.waitForEvent('download'), popup.click('#export')]);
    const file = join(OUT, 'popup-export.jsonl');
    await download.saveAs(file);
    const text = await readFile(file, 'utf8');
    const exported = text.trim().split('\n').map((line) => JSON.parse(line));
    assert.deepEqual(exported, events);
    const { ok, errors } = await validateEvents(exported);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.ok(!text.includes(CANARY));
    assert.equal(beaconHits, 0, 'the markdown image was never requested');
  });

  test('a visitor input is answered in the popup, another declined in the side panel', async () => {
    await runPrompt(popup, 'asker', 'Pick a colour for me.');
    await popup.waitForSelector('#pending-count:text("1")');
    await view(popup, 'pending');
    const item = popup.locator('#pending li.pending.input');
    await item.waitFor();
    assert.equal(await item.locator('.pending-title').textContent(), 'The agent asks you:');
    assert.equal(await item.locator('.pending-question').textContent(), 'Which colour do you want?');
    await shot(popup, 'popup-pending');
    await item.locator('textarea').fill('blue');
    await item.locator('button:has-text("Answer")').click();
    await popup.waitForSelector('#pending li.pending', { state: 'detached' });
    await view(popup, 'run');
    await popup.waitForSelector('body[data-run="finished"]');
    assert.equal(await popup.textContent('#answer'), 'You chose it.');
    const asked = models.requests({ scenario: 'ask' }).filter((r) => r.path.endsWith('/chat/completions'));
    assert.ok(JSON.stringify(asked.at(-1).body.messages).includes('blue'), 'the answer went to the model');

    const panel = await openPopup('sidepanel.html');
    await runPrompt(panel, 'asker2', 'Pick another colour.');
    await view(panel, 'pending');
    const second = panel.locator('#pending li.pending.input');
    await second.waitFor();
    await shot(panel, 'sidepanel-pending');
    await second.locator('button:has-text("Decline")').click();
    await view(panel, 'run');
    await panel.waitForSelector('body[data-run="finished"]');
    const declined = models.requests({ scenario: 'ask~2' }).filter((r) => r.path.endsWith('/chat/completions'));
    assert.ok(JSON.stringify(declined.at(-1).body.messages).includes('The visitor declined.'));
    await view(panel, 'log');
    await panel.click('#log-raw');
    await panel.waitForSelector('#log li.event[data-type="RUN_FINISHED"]');
    await shot(panel, 'sidepanel-log');
    await panel.close();
  });

  test('an MCP tool of a run without a tab is confirmed in the popup', async () => {
    const deletedBefore = mcp.deleted().length;
    const { runId } = await host.worker.evaluate(() => webmcpHost.startRun({ prompt: 'Delete r-7.', model: 'confirmer' }));
    await view(popup, 'pending');
    const item = popup.locator(`#pending li.pending.confirmation`);
    await item.waitFor();
    assert.equal(await item.locator('.pending-title').textContent(), 'Allow this call?');
    assert.match(await item.locator('.pending-question').textContent(), /“delete_record” of the MCP server project with:\n\{\n  "id": "r-7"\n\}/);
    assert.deepEqual(await host.worker.evaluate(() => webmcpHost.pending().then((p) => p.map((i) => i.kind))), ['confirmation']);
    await item.locator('button:has-text("Allow")').click();
    await until(`run ${runId} to finish`, () =>
      host.worker.evaluate(async (runId) => (await webmcpHost.runs()).find((r) => r.runId === runId)?.state === 'finished', runId), 30_000);
    const { run } = await host.worker.evaluate((runId) => webmcpHost.runLog({ runId }), runId);
    assert.deepEqual(run.outcome, { type: 'completed', text: 'Deleted r-7.' });
    assert.equal(mcp.deleted().length, deletedBefore + 1);
  });

  test('a confirmation in the popup shows every key, escaped and capped', async () => {
    const deletedBefore = mcp.deleted().length;
    await addModel(popup, { preset: 'openai', name: 'hider', base: `${models.url}/s/hidden/v1`, keyRef: 'canary' });
    const { runId } = await host.worker.evaluate(() => webmcpHost.startRun({ prompt: 'Delete it.', model: 'hider' }));
    await view(popup, 'pending');
    const item = popup.locator('#pending li.pending.confirmation').filter({ hasText: 'kcatta' });
    await item.waitFor();
    const shown = await item.textContent();
    for (const c of ['\u202E', '\u2028', '\u200B']) assert.ok(!shown.includes(c), JSON.stringify(shown));
    const question = await item.locator('.pending-question').textContent();
    assert.ok(question.includes('"id": "bob\\u{202E}kcatta"'), question);
    assert.ok(question.includes('"memo": "a\\u{2028}b\\u{200B}"'), question);
    assert.match(question, /"note": "x+"… \d+ more characters,/);
    await shot(popup, 'popup-pending-confirmation');
    await item.locator('button:has-text("Decline")').click();
    await until(`run ${runId} to finish`, () =>
      host.worker.evaluate(async (runId) => (await webmcpHost.runs()).find((r) => r.runId === runId)?.state === 'finished', runId), 30_000);
    assert.equal(mcp.deleted().length, deletedBefore, 'declined: not run');
  });

  test("ask_person's question is shown as the agent's, with a warning against secrets", async () => {
    await addModel(popup, { preset: 'openai', name: 'phisher', base: `${models.url}/s/phish/v1`, keyRef: 'canary' });
    await runPrompt(popup, 'phisher', 'Help me.');
    await view(popup, 'pending');
    const item = popup.locator('#pending li.pending.input').filter({ hasText: 'Session expired' });
    await item.waitFor();
    assert.equal(await item.locator('.pending-title').textContent(), 'The agent asks you:');
    assert.equal(await item.locator('.pending-question').textContent(), 'Session expired: enter your OpenAI API key to continue');
    assert.match(await item.locator('.pending-warning').textContent(), /written by the agent, not by WebMCP Host.*never.*password.*API key/i);
    await shot(popup, 'popup-pending-ask-person');
    await item.locator('button:has-text("Decline")').click();
    await view(popup, 'run');
    await popup.waitForSelector('body[data-run="finished"]');
  });

  test('stop ends a run that is writing', async () => {
    const t0 = Date.now();
    await runPrompt(popup, 'slow', 'Write a lot.');
    const t1 = Date.now();
    await popup.locator('#answer').filter({ hasText: 'This answer' }).waitFor();
    const t2 = Date.now();
    await until('the answer held mid-stream', async () => models.waiting('slow') === 1, 30_000);
    await popup.click('#stop');
    await popup.waitForSelector('body[data-run="finished"]');
    console.log(`# stop timings ${t1 - t0} ${t2 - t1} ${Date.now() - t2}`);
    assert.equal(await popup.textContent('#run-status'), 'Stopped: stopped by the person');
    models.release('slow');
  });

  test('the log survives the popup closing and the worker restarting', async () => {
    const runs = await host.worker.evaluate(() => webmcpHost.runs());
    const answered = runs.find((r) => r.prompt === 'Add 2 and 40.');
    const count = answered.eventCount;
    await popup.close();
    popup = await openPopup();
    // The reopened popup shows the tab's latest run.
    assert.equal(await shownRunId(popup), runs.find((r) => r.tabId === tabId).runId);

    // Stop the worker; the next message starts a new one, which reads the stored records.
    await stopWorker(host.context, popup);
    await popup.reload();
    await popup.waitForSelector('body[data-state="ready"]');
    await view(popup, 'log');
    await popup.selectOption('#run-select', answered.runId);
    await popup.waitForFunction((n) => document.querySelectorAll('#log li.event').length === n, count);
    assert.equal(await popup.locator('#log li.call .call-result').textContent(), '42');
  });

  test('no key in any request but its model’s, and the popup’s screenshots are written', async () => {
    for (const request of requests) {
      const url = request.url();
      const headers = JSON.stringify(await request.allHeaders().catch(() => ({})));
      assert.ok(!url.includes(CANARY), url);
      if (headers.includes(CANARY)) assert.ok(url.startsWith(models.url), `the key went to ${url}`);
    }
    assert.equal(beaconHits, 0);
    await view(popup, 'run');
    await shot(popup, 'popup-run-after-restart');
  });

  test('every control has a label, the views are reached by keyboard, and dark mode follows the system', async () => {
    const unlabelled = await popup.$$eval('input, select, textarea', (nodes) =>
      nodes.filter((n) => n.labels.length === 0 && !n.getAttribute('aria-label')).map((n) => n.id || n.outerHTML.slice(0, 60)),
    );
    assert.deepEqual(unlabelled, []);
    await popup.focus('#views button[data-view="run"]');
    await popup.keyboard.press('Tab');
    await popup.keyboard.press('Enter');
    await popup.waitForSelector('body[data-view="log"]');
    await popup.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await popup.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(23, 23, 27)');
    await shot(popup, 'popup-log-dark');
    await popup.emulateMedia({ colorScheme: 'light' });
    assert.equal(await popup.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(255, 255, 255)');
  });
});
