// Security round 3, findings 0, 2 and 13, performed against the built extension: a run's call
// delivered to a document that replaced its frame's (finding 0), a page's renderer answering
// the question of an MCP call that acts elsewhere (finding 2), and page text in an export that
// was asked to leave it out (finding 13).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { evaluateInContentScript, extensionQuestion, launchHost, openDeclining, ROOT, until } from '../support/browser.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const SCENARIOS = {
  // The read-only lookup the first document offered.
  lookup: { steps: [call('lookup', { order: '7' }), { text: 'Looked up.' }] },
  // A tool whose failure is worded like the host's decline, with page text after it.
  account: { steps: [call('lookup_account', {}), { text: 'No account.' }] },
  // A destructive tool of an MCP server, on a tab whose renderer answers every confirm().
  erase: { steps: [call('own__delete_record', { id: 'r-9' }), { text: 'Erased.' }] },
};

/** A renderer that answers every question the content script asks in the page, as a compromised one would. */
const answerEverything = (host, page) =>
  evaluateInContentScript(host.context, page, 'window.confirm = () => true; window.alert = () => {}; true');

describe('security round 3: documents, renderers and exports', () => {
  let server, models, host;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  // Each page records (and refuses) every dialog it shows: `{page, dialogs, tabId}`.
  const open = (path) => openDeclining(host, `${server.url}/${path}`);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    // The fixtures write their own `document.modelContext`, as a polyfill does: WebMCP off.
    host = await launchHost({ webmcp: false });
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    // `lookup~1` is the `lookup` script on an endpoint of its own (each endpoint keeps its place).
    await op('configure', { models: ['lookup', 'lookup~1', 'account'].map(model), default: 'lookup', servers: [] });
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
      const { page, dialogs, tabId } = await open(`hostile/${fixture}`);
      try {
        const run = await op('run', { tabId, prompt: 'Look up order 7', model });
        const swapped = await until('the swap', async () => page.frames().find((f) => f.url().includes(`/hostile/${replaced}`)));
        await until('its tools', () => swapped.evaluate(() => Array.isArray(window.__calls)));
        assert.deepEqual(await swapped.evaluate(() => window.__calls), [], 'the replacing document got no call');
        assert.deepEqual(dialogs, [], 'nothing was asked for (and nothing ran)');
        const result = run.events.find((e) => e.type === 'TOOL_CALL_RESULT');
        assert.ok(result, JSON.stringify(run.events.map((e) => e.type)));
        assert.match(result.content, /the call was not sent/, result.content);
      } finally {
        await page.close();
      }
    });
  }
  // A collector without `includeText` gets fixed statuses: a page's failure that starts with the
  // host's words for a decline (and carries page text after them) is only "the tool call failed".
  test('finding 13: a failure worded as a decline ships no page text to a collector without includeText', async () => {
    const bodies = [];
    const collector = createServer((request, response) => {
      const chunks = [];
      request.on('data', (c) => chunks.push(c));
      request.on('end', () => {
        if (request.method === 'POST') bodies.push(Buffer.concat(chunks));
        response.writeHead(200, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*', 'content-type': 'application/x-protobuf' });
        response.end();
      });
    });
    await new Promise((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${collector.address().port}/v1/traces`;
    const { page, tabId } = await open('hostile/declined-text.html');
    try {
      await op('configure', { collectors: [{ name: 'spans', endpoint }] });
      const run = await op('run', { tabId, prompt: 'Find my account', model: 'account' });
      const result = run.events.find((e) => e.type === 'TOOL_CALL_RESULT');
      assert.match(result?.content ?? '', /page-text-canary/, 'the model saw the failure as the page wrote it');
      const sent = await until('the export', async () => bodies.length > 0 && Buffer.concat(bodies));
      assert.ok(sent.includes('execute_tool lookup_account'), 'the tool span was exported');
      for (const word of ['page-text-canary', 'jane@example.com']) {
        assert.ok(!sent.includes(word), `the collector got the page's text (${word})`);
      }
      assert.ok(sent.includes('the tool call failed'), "the span's status is the host's fixed words");
      assert.ok(!sent.includes('webmcp_host.tool.confirmation'), 'the person declined nothing');
    } finally {
      await op('configure', { collectors: [] });
      await page.close();
      await new Promise((resolve) => collector.close(resolve));
    }
  });
});

describe('security round 3: MCP calls are confirmed where the page cannot answer', () => {
  let server, models, own, host;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  // Each page records (and refuses) every dialog it shows: `{page, dialogs, tabId}`.
  const open = (path) => openDeclining(host, `${server.url}/${path}`);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    own = await startMcpServer();
    host = await launchHost();
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    await op('configure', {
      models: ['erase', 'erase~2'].map(model),
      default: 'erase',
      servers: [{ name: 'own', url: `${own.url}/mcp`, namespace: 'own' }],
    });
  });
  after(async () => {
    await host?.close();
    own?.close();
    await models?.close();
    await server?.close();
  });

  test("finding 2: a run's destructive MCP call is asked in the extension's window, not by the tab's renderer", async () => {
    const { page, dialogs, tabId } = await open('tools.html');
    try {
      await answerEverything(host, page);
      const started = await op('startRun', { tabId, prompt: 'Erase record r-9' });
      const { answer, question } = await extensionQuestion(host, /r-9/).catch((error) => {
        throw new Error(`no question in the extension (${error.message}); the server deleted ${JSON.stringify(own.deleted())}`);
      });
      assert.match(question, /“delete_record”\s+of\s+the\s+MCP\s+server\s+own\s+with:\n\{\n {2}"id": "r-9"\n\}/);
      assert.deepEqual(own.deleted(), [], 'nothing ran while the question is open');
      await answer(false);
      const log = await until('the run to end', async () => {
        const runs = await op('runs', {});
        const run = runs.find((r) => r.runId === started.runId);
        return run && run.state !== 'running' && (await op('runLog', { runId: started.runId }));
      });
      const result = log.events.find((e) => e.type === 'TOOL_CALL_RESULT');
      assert.match(result?.content ?? '', /declined: the person did not allow this call/);
      assert.deepEqual(own.deleted(), [], 'declined in the extension: not run, whatever the renderer said');
      assert.deepEqual(dialogs, [], 'the page was asked nothing');
      // Allowed in the extension's window, it runs.
      const again = op('run', { tabId, prompt: 'Erase record r-9', model: 'erase~2' });
      await (await extensionQuestion(host, /r-9/)).answer(true);
      const done = await again;
      assert.match(done.events.find((e) => e.type === 'TOOL_CALL_RESULT')?.content ?? '', /deleted r-9/);
      assert.deepEqual(own.deleted(), ['r-9']);
    } finally {
      await page.close();
    }
  });

  test('finding 2: an exposed destructive MCP tool the page calls is asked in the extension, not by its renderer', async () => {
    await op('expose', { server: 'own', origin: server.url, enabled: true });
    const { page, dialogs } = await open('expose.html');
    try {
      await until('the exposed tools', () =>
        page.evaluate(async () => ((await document.modelContext.getTools()) ?? []).some((t) => t.name === 'own__delete_record')));
      await answerEverything(host, page);
      const deleted = own.deleted().length;
      const calling = page.evaluate(async () => {
        const tool = (await document.modelContext.getTools()).find((t) => t.name === 'own__delete_record');
        try {
          return { ok: true, result: await document.modelContext.executeTool(tool, { id: 'r-10' }) };
        } catch (error) {
          return { ok: false, error: `${error?.name}: ${error?.message}` };
        }
      });
      const { answer, question } = await extensionQuestion(host, /r-10/).catch(async (error) => {
        throw new Error(`no question in the extension (${error.message}); the page got ${JSON.stringify(await calling)}, the server deleted ${JSON.stringify(own.deleted())}`);
      });
      assert.match(question, new RegExp(`This page \\(${server.url.replace(/[.]/g, '\\.')}\\) wants\\s+to\\s+run\\s+“delete_record”\\s+of\\s+the\\s+MCP\\s+server\\s+own`));
      await answer(false);
      const called = await calling;
      assert.equal(called.ok, false, JSON.stringify(called));
      assert.equal(own.deleted().length, deleted, 'declined in the extension: not run');
      assert.deepEqual(dialogs, [], 'the page was asked nothing');
    } finally {
      await op('expose', { server: 'own', origin: server.url, enabled: false });
      await page.close();
    }
  });

  // What the person did by hand on one site is not offered on another: the Call view's history
  // keeps each page call with the origin of the tab's top frame, and a tab that moved to
  // another origin does not show (nor run again) the first site's calls and arguments.
  test("the Call view's history of one site is not offered when the tab shows another", async () => {
    const { page, tabId } = await open('tools.html');
    const popup = await host.context.newPage();
    try {
      const view = async () => {
        await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}&view=call`);
        await popup.waitForSelector('body[data-state="ready"]');
      };
      await view();
      await popup.waitForSelector('#call-tool option[value$="add"]', { state: 'attached' });
      const value = await popup.$eval('#call-tool', (s) => [...s.options].find((o) => o.value.endsWith('\u0000add')).value);
      await popup.selectOption('#call-tool', value);
      await popup.fill('#call-json', JSON.stringify({ a: 493000, b: 817 }));
      await popup.click('#call-run');
      await popup.locator('#call-history li[data-tool="add"]').waitFor();
      // The tab moves to another origin (localhost instead of 127.0.0.1).
      await page.goto(`${server.url.replace('127.0.0.1', 'localhost')}/tools.html`);
      await view();
      await popup.waitForSelector('#call-history-empty:not([hidden])');
      assert.equal(await popup.locator('#call-history li').count(), 0, 'no call of the first site is offered');
      assert.ok(!(await popup.textContent('#call-history')).includes('493000'), "the first site's arguments are not shown");
      assert.match(await popup.textContent('#call-history-empty'), /1 made on another site in this tab are not shown/);
      // Back on the first site, its call is there again.
      await page.goto(`${server.url}/tools.html`);
      await view();
      await popup.locator('#call-history li[data-tool="add"]').waitFor();
      assert.match(await popup.textContent('#call-history'), /493000/);
    } finally {
      await popup.close();
      await page.close();
    }
  });
});
