// The one gate (core::gate): every operation that can make a tool call reaches it. The person's
// stored `block` layer names a read-only page tool and an MCP tool; then each operation that
// acts asks for that call: a run, callTool on the page, callTool on the MCP server by hand, a
// smoke evaluation, an agent evaluation, replayDiff (of a transcript and of the run), an audit
// probe and a page's call of an exposed MCP tool. The spies (the page's `window.__calls`, the MCP
// server's recorded `tools/call` requests) see nothing run, whichever operation asked; each
// answer says `blocked: …`. With the layer removed, the same calls run (the spies are live).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { evaluateInContentScript, launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';

const call = (name, args) => ({ calls: [{ name, arguments: args }] });
const user = (content) => [{ role: 'user', type: 'message', content }];
const SCENARIOS = {
  search: { steps: [call('search_products', { query: 'mug' }), { text: 'Searched.' }] },
  agent: { steps: [call('search_products', { query: 'mug' }), { text: 'Searched.' }] },
  add: { steps: [call('own__add', { a: 1, b: 2 }), { text: 'Added.' }] },
};
const BLOCK = [
  { kind: 'block', tool: 'search_products', reason: 'gate test' },
  { kind: 'block', tool: 'add', reason: 'gate test' },
];
const EVALS = [{ name: 'searches', messages: user('Find mugs'), expectedCall: [{ functionName: 'search_products', arguments: { query: 'mug' } }] }];

describe('the gate: every operation that acts is screened by the stored layers', () => {
  let server, models, own, host, page, tabId;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);
  const pageCalls = () => page.evaluate(() => window.__calls.map((c) => c.name));
  const mcpCalls = () => own.requests({ rpcMethod: 'tools/call' }).length;
  const model = (scenario) => ({
    name: scenario,
    provider: 'openai',
    baseUrl: `${models.url}/s/${scenario}/v1`,
    model: 'scripted',
    nativeTools: true,
    keyRef: 'canary',
  });
  const open = async () => {
    await page.goto(`${server.url}/evals.html`);
    tabId = await host.tabIdOf(page);
  };
  const blocked = (text) => assert.match(String(text), /blocked: gate test/);
  const toolResults = (answer) => answer.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.content);

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    own = await startMcpServer();
    host = await launchHost();
    page = await host.context.newPage();
    await op('configure', {
      models: [model('search'), model('agent'), model('add')],
      default: 'search',
      servers: [{ name: 'own', url: `${own.url}/mcp`, enabled: false }],
      middleware: BLOCK,
    });
    await open();
  });
  after(async () => {
    await host?.close();
    await own?.close();
    await models?.close();
    await server?.close();
  });

  test('a run, callTool, a smoke and an agent evaluation, replayDiff and a probe call nothing on the page', async () => {
    const run = await op('run', { tabId, prompt: 'Find mugs' });
    blocked(toolResults(run).join('\n'));

    const byHand = await op('callTool', { tabId, name: 'search_products', args: { query: 'mug' } });
    assert.equal(byHand.ok, false);
    blocked(byHand.error);

    const smoke = await op('evaluate', { tabId, evals: EVALS, mode: 'smoke' });
    assert.equal(smoke.passCount, 0, JSON.stringify(smoke.results));
    blocked(JSON.stringify(smoke.results));

    const agent = await op('evaluate', { tabId, evals: EVALS, mode: 'agent', models: ['agent'] });
    blocked(JSON.stringify(agent.results[0].timeline ?? agent.results));

    const transcript = JSON.stringify(call('search_products', { query: 'mug' }));
    const replayed = await op('replayDiff', { tabId, transcript });
    blocked(JSON.stringify(replayed.calls));
    const rerun = await op('replayDiff', { tabId, runId: run.runId });
    assert.ok(rerun.calls.every((c) => !JSON.stringify(c.now ?? '').includes('"count"')), JSON.stringify(rerun));

    const audit = await op('audit', { tabId, probe: true });
    assert.ok(audit.findings.some((f) => f.tool === 'search_products'), 'the probe looked at the tool');

    assert.deepEqual(await pageCalls(), [], 'no operation ran the blocked tool');
  });

  test('callTool on an MCP server by hand and an exposed MCP tool call nothing on the server', async () => {
    const before = mcpCalls();
    const byHand = await op('callTool', { server: 'own', name: 'add', args: { a: 1, b: 2 } });
    assert.equal(byHand.ok, false, JSON.stringify(byHand));
    blocked(byHand.error);

    await op('configure', { default: 'add', servers: [{ name: 'own', url: `${own.url}/mcp`, namespace: 'own', enabled: true }] });
    const run = await op('run', { tabId, prompt: 'Add one and two' });
    blocked(toolResults(run).join('\n'));
    await op('configure', { default: 'search', servers: [{ name: 'own', url: `${own.url}/mcp`, enabled: false }] });

    await op('expose', { server: 'own', origin: server.url, enabled: true, tools: ['add'] });
    const exposed = await evaluateInContentScript(
      host.context,
      page,
      `chrome.runtime.sendMessage({op: 'callExposed', name: 'add', args: {a: 1, b: 2}})`,
    );
    await op('expose', { server: 'own', origin: server.url, enabled: false });
    assert.equal(exposed.ok, false, JSON.stringify(exposed));
    blocked(exposed.error);
    assert.equal(mcpCalls(), before, 'no operation sent tools/call');
  });

  test('without the layer the same calls run: the spies are live', async () => {
    await op('configure', { middleware: null });
    await open();
    const byHand = await op('callTool', { tabId, name: 'search_products', args: { query: 'mug' } });
    assert.equal(byHand.ok, true, JSON.stringify(byHand));
    const smoke = await op('evaluate', { tabId, evals: EVALS, mode: 'smoke' });
    assert.equal(smoke.passCount, 1, JSON.stringify(smoke.results));
    assert.deepEqual(await pageCalls(), ['search_products', 'search_products']);
    const before = mcpCalls();
    const mcp = await op('callTool', { server: 'own', name: 'add', args: { a: 1, b: 2 } });
    assert.equal(mcp.ok, true, JSON.stringify(mcp));
    assert.equal(mcpCalls(), before + 1);
  });

  // The host keeps the stored layers between calls: a change must reach the very next call,
  // made by `configure` or written into storage by another of the extension's pages.
  test('a change of the layers holds from the next call on, whoever wrote it', async () => {
    const search = () => op('callTool', { tabId, name: 'search_products', args: { query: 'mug' } });
    assert.equal((await search()).ok, true, 'no layers: the call runs (and the host keeps that)');
    await op('configure', { middleware: BLOCK });
    blocked((await search()).error);
    await op('configure', { middleware: null });
    assert.equal((await search()).ok, true, 'removed by configure: runs at once');

    const settings = await host.context.newPage();
    await settings.goto(`chrome-extension://${host.extensionId}/popup.html`);
    // The worker's own listener was added first, so it has run once this one hears the change.
    await host.worker.evaluate(() => {
      globalThis.__heard = new Promise((resolve) => chrome.storage.onChanged.addListener(function once(changes) {
        if ('webmcpHost.middleware' in changes) {
          chrome.storage.onChanged.removeListener(once);
          resolve();
        }
      }));
    });
    await settings.evaluate((layers) => chrome.storage.local.set({ 'webmcpHost.middleware': layers }), BLOCK);
    await host.worker.evaluate(() => globalThis.__heard);
    blocked((await search()).error);
    await settings.evaluate(() => chrome.storage.local.remove('webmcpHost.middleware'));
    await settings.close();
    await until('the removal heard', async () => (await search()).ok === true, 5_000);
  });
});
