// MCP tools exposed to a site's own WebMCP (product.md §7): the page's own JavaScript (and
// DevTools' WebMCP domain) sees the project MCP server's tools in document.modelContext and
// runs them; a destructive one is confirmed in the extension's own window (never by the page); switching the exposure off takes them
// back from the open page; another origin gets nothing and its content script is refused; a
// page without WebMCP gets nothing and throws nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { ROOT, evaluateInContentScript, extensionQuestion, launchHost, storeSignIn, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';

const toolNames = (page) =>
  page.evaluate(async () => Array.from((await document.modelContext.getTools()) ?? [], (t) => t.name).sort());

/** Runs a tool through the page's own WebMCP: `{ok, result}` or `{ok: false, error}`. */
const execute = (page, name, input) =>
  page.evaluate(
    async ({ name, input }) => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
      if (!tool) return { ok: false, error: `no tool ${name}` };
      try {
        return { ok: true, result: await document.modelContext.executeTool(tool, input) };
      } catch (error) {
        return { ok: false, error: `${error?.name}: ${error?.message}` };
      }
    },
    { name, input },
  );

describe('MCP tools exposed to a page’s WebMCP', () => {
  let pages, own, host, page;
  const expose = (request) => host.worker.evaluate((r) => webmcpHost.expose(r), request);

  before(async () => {
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    own = await startMcpServer({ behaviours: { echoErr: { echoAuth: 'error' }, echoRpc: { echoAuth: 'rpc' } } });
    host = await launchHost();
    await host.worker.evaluate((c) => webmcpHost.configure(c), {
      servers: [{ name: 'own', url: `${own.url}/mcp`, enabled: false }],
    });
    const exposures = await expose({ server: 'own', origin: pages.url, enabled: true });
    assert.deepEqual(exposures, [{ server: 'own', origins: [pages.url] }]);
    page = await host.context.newPage();
    await page.goto(`${pages.url}/expose.html`);
  });
  after(async () => {
    await host?.close();
    own?.close();
    await pages?.close();
  });

  test("the page's own WebMCP lists the exposed tools and runs add", async () => {
    const names = await until('add registered', async () => {
      const n = await toolNames(page);
      return n.includes('add') && n;
    }, 30_000);
    assert.deepEqual(names, own.tools().map((t) => t.name).sort(), 'every tool of the server');
    const add = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'add');
      return { description: tool.description, inputSchema: tool.inputSchema, annotations: tool.annotations ?? null };
    });
    assert.equal(add.description, 'Adds two numbers.');
    assert.deepEqual(add.inputSchema, {
      type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'],
    });
    if (add.annotations) assert.equal(add.annotations.readOnlyHint, true);
    assert.deepEqual(await execute(page, 'add', { a: 2, b: 40 }), { ok: true, result: '2 + 40 = 42' });
    assert.deepEqual(await host.worker.evaluate(() => webmcpHost.exposures()), [{ server: 'own', origins: [pages.url] }]);
    // The host's own page bridge does not take them for the page's tools (a run reaches them as
    // MCP tools, and a destructive one would otherwise be confirmed twice).
    const tabId = await host.tabIdOf(page);
    const listed = await host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
    assert.deepEqual(listed.tools.map((t) => t.name), []);
  });

  test('an MCP tool error (isError) rejects in the page', async () => {
    const answer = await execute(page, 'fails', {});
    assert.equal(answer.ok, false, JSON.stringify(answer));
    // The content script's own call through the worker says what the server said.
    const direct = await evaluateInContentScript(
      host.context,
      page,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'fails', args: {}})`,
    );
    assert.deepEqual(direct, { ok: false, error: 'it failed' });
  });

  test('a key or token the server echoes back never reaches the page, in a result or an error', async () => {
    const TOKENS = { access: 'oauth-access-e41b7f2c09d35a86', refresh: 'oauth-refresh-93c0a5e7d1f24b68', secret: 'client-secret-0d6b2f8a4c1e9375' };
    const echo = (name) => `${own.url}/s/${name}/mcp`;
    await storeSignIn(host.worker, 'etok', echo('echoAuth~x'), TOKENS);
    await host.worker.evaluate((c) => webmcpHost.configure(c), {
      servers: [
        { name: 'own', url: `${own.url}/mcp`, enabled: false },
        { name: 'ekey', url: echo('echoAuth~k'), enabled: false, keyRef: 'canary' },
        { name: 'eerr', url: echo('echoErr'), enabled: false, keyRef: 'canary', keyHeader: 'X-Api-Key' },
        { name: 'erpc', url: echo('echoRpc'), enabled: false, keyRef: 'canary' },
        { name: 'etok', url: echo('echoAuth~x'), enabled: false },
      ],
    });
    const fresh = await host.context.newPage();
    await fresh.goto(`${pages.url.replace('127.0.0.1', 'localhost')}/expose.html`);
    const origin = new URL(fresh.url()).origin;
    const answers = [];
    for (const server of ['ekey', 'eerr', 'erpc', 'etok']) {
      await expose({ server, origin, enabled: true, tools: ['add'] });
      answers.push(await evaluateInContentScript(
        host.context,
        fresh,
        `chrome.runtime.sendMessage({op: 'callExposed', name: 'add', args: {a: 1, b: 2}})`,
      ));
      await expose({ server, origin, enabled: false });
    }
    await host.worker.evaluate(() => chrome.storage.session.remove('webmcpHostAuth'));
    const calls = own.requests({ rpcMethod: 'tools/call' });
    assert.ok(calls.some((r) => r.headers['x-api-key'] === host.canary.value), 'the server got its key');
    assert.ok(calls.some((r) => r.headers.authorization === `Bearer ${TOKENS.access}`), 'the server got its token');
    assert.equal(answers[0].ok, true, JSON.stringify(answers));
    for (const answer of answers.slice(1, 3)) assert.equal(answer.ok, false, JSON.stringify(answers));
    const seen = JSON.stringify(answers);
    assert.match(seen, /\[redacted\]/);
    for (const secret of [host.canary.value, TOKENS.access, TOKENS.refresh, TOKENS.secret]) {
      assert.ok(!seen.includes(secret.slice(3, 18)), `the page got ${secret}: ${seen}`);
    }
    await fresh.close();
  });

  test("a destructive tool is confirmed in the extension's window: allowed, it runs; declined, it does not, and the page may not ask again at once", async () => {
    const asked = [];
    const dialogs = [];
    page.on('dialog', (d) => dialogs.push(d.message()));
    const answer = async (matching, allow) => {
      const question = await extensionQuestion(host, matching);
      asked.push(question.question);
      await question.answer(allow);
    };
    const [allowed] = await Promise.all([execute(page, 'delete_record', { id: 'r-2' }), answer(/r-2/, true)]);
    assert.deepEqual(allowed, { ok: true, result: 'deleted r-2' });
    assert.deepEqual(own.deleted(), ['r-2']);
    assert.equal(asked.length, 1);
    assert.match(asked[0], new RegExp(`This page \\(${pages.url.replace(/[.]/g, '\\.')}\\)\\swants\\sto\\srun\\s“delete_record”\\sof\\sthe\\sMCP\\sserver\\sown\\swith:\\n\\{\\n  "id": "r-2"\\n\\}`));

    const [declined] = await Promise.all([execute(page, 'delete_record', { id: 'r-1' }), answer(/r-1/, false)]);
    assert.equal(declined.ok, false, JSON.stringify(declined));
    assert.deepEqual(own.deleted(), ['r-2'], 'declined: not run');
    assert.equal(asked.length, 2);
    // Just after a no, the page's next question is refused without asking (the page's WebMCP
    // says only that the tool failed; its content script hears why).
    const again = await execute(page, 'delete_record', { id: 'r-3' });
    assert.equal(again.ok, false, JSON.stringify(again));
    const direct = await evaluateInContentScript(
      host.context,
      page,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'delete_record', args: {id: 'r-4'}})`,
    );
    assert.deepEqual(direct, { ok: false, error: 'busy: the person declined a call of this page just now; ask again later' });
    assert.equal(asked.length, 2);
    // A read-only tool asks nothing, and runs.
    assert.deepEqual(await execute(page, 'add', { a: 1, b: 1 }), { ok: true, result: '1 + 1 = 2' });
    assert.equal(asked.length, 2);
    assert.deepEqual(dialogs, [], 'the page was asked nothing');
    assert.deepEqual(own.deleted(), ['r-2']);
  });

  test('a burst of calls of a tool that asks opens one question window with one question, the rest refused and counted', async () => {
    const burst = await host.context.newPage();
    await burst.goto(`${pages.url}/expose.html`);
    await until('the exposed tools', async () => (await toolNames(burst)).includes('delete_record'));
    const isQuestion = (p) => p.url().startsWith(`chrome-extension://${host.extensionId}/`) && p.url().includes('surface=window');
    const windowsBefore = host.context.pages().filter(isQuestion).length;
    const calls = burst.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'delete_record');
      return Promise.all(Array.from({ length: 25 }, (_, i) =>
        document.modelContext.executeTool(tool, { id: `b-${i}` }).then((r) => ({ ok: true, r }), (e) => ({ ok: false, error: String(e?.message ?? e) }))));
    });
    const question = await extensionQuestion(host, /b-\d+/);
    // Every other call is refused while the one question waits, and counted on it.
    const item = await until('the 24 refused calls counted on the one question', async () => {
      const pending = await host.worker.evaluate(() => webmcpHost.pending());
      return pending.length === 1 && pending[0].repeats === 24 && pending;
    });
    assert.match(JSON.stringify(item[0].args), /b-\d+/);
    assert.equal(item[0].kind, 'confirmation');
    await question.item.getByText('The page called 24 more times while this question waited').waitFor();
    // While it waits, the page's content script hears why a call is refused.
    const direct = await evaluateInContentScript(
      host.context,
      burst,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'delete_record', args: {id: 'b-x'}})`,
    );
    assert.deepEqual(direct, { ok: false, error: 'busy: a question of this page waits for the person' });
    assert.equal(host.context.pages().filter(isQuestion).length - windowsBefore <= 1, true, 'at most one question window');
    await question.answer(false);
    const results = await calls;
    assert.equal(results.filter((r) => r.ok).length, 0, JSON.stringify(results));
    assert.equal(results.length, 25);
    assert.deepEqual(own.deleted().filter((id) => id.startsWith('b-')), [], 'nothing of the burst ran');
    assert.equal(host.context.pages().filter(isQuestion).length - windowsBefore <= 1, true, 'at most one question window');
    await burst.close();
  });

  test('switching the exposure off takes the tools back from the open page; on again with a list, those come back', async () => {
    assert.deepEqual(await expose({ server: 'own', origin: pages.url, enabled: false }), []);
    await until('every exposed tool unregistered', async () => (await toolNames(page)).length === 0, 30_000);
    const refused = await evaluateInContentScript(
      host.context,
      page,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'add', args: {a: 1, b: 2}})`,
    );
    assert.deepEqual(refused, { ok: false, error: 'no tool named `add` is exposed to this page' });

    assert.deepEqual(await expose({ server: 'own', origin: `${pages.url}/`, enabled: true, tools: ['add'] }), [
      { server: 'own', origins: [pages.url], tools: ['add'] },
    ]);
    assert.deepEqual(await until('add back', async () => {
      const n = await toolNames(page);
      return n.length > 0 && n;
    }, 30_000), ['add']);
    assert.deepEqual(await execute(page, 'add', { a: 20, b: 22 }), { ok: true, result: '20 + 22 = 42' });
  });

  test("the browser's DevTools WebMCP domain sees the exposed tool and invokes it", async () => {
    const fresh = await host.context.newPage();
    const cdp = await host.context.newCDPSession(fresh);
    const events = [];
    for (const name of ['WebMCP.toolsAdded', 'WebMCP.toolResponded']) cdp.on(name, (params) => events.push({ name, params }));
    await cdp.send('WebMCP.enable');
    await fresh.goto(`${pages.url}/expose.html`);
    const added = await until('WebMCP.toolsAdded with add', async () => {
      const tools = events.filter((e) => e.name === 'WebMCP.toolsAdded').flatMap((e) => e.params.tools);
      return tools.some((t) => t.name === 'add') && tools;
    }, 30_000);
    const add = added.find((t) => t.name === 'add');
    assert.equal(add.annotations.readOnly, true);
    assert.equal(add.annotations.untrustedContent, true);
    const { invocationId } = await cdp.send('WebMCP.invokeTool', { frameId: add.frameId, toolName: 'add', input: { a: 2, b: 40 } });
    const responded = await until('WebMCP.toolResponded', async () =>
      events.find((e) => e.name === 'WebMCP.toolResponded' && e.params.invocationId === invocationId), 30_000);
    assert.deepEqual(responded.params, { invocationId, status: 'Completed', output: '2 + 40 = 42' });
    await cdp.detach();
    await fresh.close();
  });

  test('a page of another origin gets nothing, and its content script is refused', async () => {
    const other = await host.context.newPage();
    const otherUrl = `${pages.url.replace('127.0.0.1', 'localhost')}/expose.html`;
    await other.goto(otherUrl);
    assert.notEqual(new URL(otherUrl).origin, pages.url);
    // The worker's answer to this page's own content script: no tools for this origin.
    const listed = await evaluateInContentScript(host.context, other, `chrome.runtime.sendMessage({op: 'exposedTools'})`);
    assert.deepEqual(listed, { ok: true, value: [] });
    assert.deepEqual(await toolNames(other), []);
    const before = own.requests({ rpcMethod: 'tools/call' }).length;
    for (const name of ['add', 'delete_record']) {
      const answer = await evaluateInContentScript(
        host.context,
        other,
        `chrome.runtime.sendMessage({op: 'callExposed', name: ${JSON.stringify(name)}, args: {a: 1, b: 2, id: 'x'}})`,
      );
      assert.deepEqual(answer, { ok: false, error: `no tool named \`${name}\` is exposed to this page` });
    }
    assert.equal(own.requests({ rpcMethod: 'tools/call' }).length, before, 'nothing reached the server');
    assert.deepEqual(own.deleted(), ['r-2']);
    // The other ops stay refused to content scripts.
    const command = await evaluateInContentScript(host.context, other, `chrome.runtime.sendMessage({op: 'version'})`);
    assert.equal(command.ok, false);
    assert.match(command.error, /^refused: `version` may not be asked by a content script/);
    await other.close();
  });

  test('a sandboxed document at an exposed URL (an opaque origin) gets nothing', async () => {
    const sandboxed = await host.context.newPage();
    await sandboxed.goto(`${pages.url}/expose.html?sandboxed`);
    assert.equal(await sandboxed.evaluate(() => self.origin), 'null', 'the document is sandboxed');
    const before = own.requests({ rpcMethod: 'tools/call' }).length;
    const listed = await evaluateInContentScript(host.context, sandboxed, `chrome.runtime.sendMessage({op: 'exposedTools'})`);
    assert.ok(!listed.ok || listed.value.length === 0, `listed: ${JSON.stringify(listed).slice(0, 200)}`);
    const called = await evaluateInContentScript(
      host.context,
      sandboxed,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'add', args: {a: 1, b: 2}})`,
    );
    assert.equal(called.ok, false, JSON.stringify(called));
    assert.equal(own.requests({ rpcMethod: 'tools/call' }).length, before, 'nothing reached the server');
    await sandboxed.close();
  });
});

describe('exposed tools where the page has no WebMCP', () => {
  let pages, own, host;

  before(async () => {
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    own = await startMcpServer();
    host = await launchHost({ extraArgs: ['--disable-features=WebMCP'] });
    await host.worker.evaluate((c) => webmcpHost.configure(c), { servers: [{ name: 'own', url: `${own.url}/mcp` }] });
    await host.worker.evaluate((r) => webmcpHost.expose(r), { server: 'own', origin: pages.url, enabled: true });
  });
  after(async () => {
    await host?.close();
    own?.close();
    await pages?.close();
  });

  test('nothing is registered and nothing is thrown', async () => {
    const page = await host.context.newPage();
    const errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // (The fixture server has no favicon: its 404 is not ours.)
      if (['error', 'warning'].includes(message.type()) && !message.text().startsWith('Failed to load resource')) {
        errors.push(message.text());
      }
    });
    await page.goto(`${pages.url}/expose.html`);
    assert.equal(await page.evaluate(() => 'modelContext' in document), false, 'this browser has no WebMCP');
    // The page bridge is there and answers (it reports no WebMCP) ...
    const tabId = await host.tabIdOf(page);
    const listed = await host.worker.evaluate((tabId) => webmcpHost.listTools({ tabId }), tabId);
    assert.deepEqual(listed.tools, []);
    // ... and the exposure script asked for nothing: the server was never opened.
    assert.equal(own.requests().length, 0);
    assert.deepEqual(errors, []);
    await page.close();
  });
});
