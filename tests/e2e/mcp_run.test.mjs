// MCP servers as tool sources of runs in the extension: tools of @modelcontextprotocol/server-
// everything (a real server, on 127.0.0.1) reach the model with a namespace, the key header comes
// from session storage on every request, results are wrapped as data, and a server that fails is
// reported while the run goes on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { extensionQuestion, launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { startEverything, startModern, startSimpleStreamableHttp } from '../../scripts/mcp/start-server.mjs';
import { startMcpServer } from '../support/mcp-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const MCP_KEY = 'mcp-canary-2b8e41d07c5f';

describe('MCP tools in runs', () => {
  let pages, models, everything, own, simple, modern, host, page, tabId;
  const requests = [];
  const run = (request) => host.worker.evaluate((r) => webmcpHost.run(r), { tabId, ...request });
  const configure = (config) => host.worker.evaluate((c) => webmcpHost.configure(c), config);

  before(async () => {
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    everything = await startEverything();
    own = await startMcpServer();
    simple = await startSimpleStreamableHttp();
    modern = await startModern();
    models = await startModelServer({
      scenarios: {
        sum: {
          steps: [
            { calls: [{ name: 'ev__get-sum', arguments: { a: 2, b: 40 } }] },
            { text: 'The server says 42.' },
          ],
        },
        greet: {
          steps: [
            { calls: [{ name: 'sdk__greet', arguments: { name: 'Ann' } }], hold: 'greet' },
            { text: 'Greeted.' },
          ],
        },
        delete: {
          steps: [{ calls: [{ name: 'own__delete_record', arguments: { id: 'r-17' } }] }, { text: 'Done.' }],
        },
        modern: {
          steps: [
            { calls: [{ name: 'v2__route', arguments: { region: 'eu-west' } }, { name: 'v2__confirm', arguments: {} }] },
            { text: 'Routed.' },
          ],
        },
      },
    });
    host = await launchHost();
    host.context.on('request', (r) => requests.push(r));
    page = await host.context.newPage();
    await page.goto(`${pages.url}/tools.html`);
    tabId = await host.tabIdOf(page);
    await configure({
      // keyRef 'canary': the harness's canary key (launchHost) goes to this model's endpoint.
      models: [{ name: 'm', provider: 'openai', baseUrl: `${models.url}/s/sum/v1`, model: 'x', nativeTools: true, keyRef: 'canary' }],
      default: 'm',
      servers: [
        { name: 'everything', url: everything.url, namespace: 'ev', keyRef: 'mcp', filter: ['get-sum', 'echo'] },
        { name: 'gone', url: 'http://127.0.0.1:9/mcp' },
      ],
      keys: { mcp: MCP_KEY },
    });
  });
  after(async () => {
    await host?.close();
    await everything?.stop();
    own?.close();
    await simple?.stop();
    await modern?.stop();
    await models?.close();
    await pages?.close();
  });

  test('a run calls a tool of server-everything and answers', async () => {
    const result = await run({ prompt: 'What is 2 + 40? Ask the server.' });
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.deepEqual(result.outcome, { type: 'completed', text: 'The server says 42.' });
    const toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.match(toolResult.content, /^<data source="MCP server everything">\nThe sum of 2 and 40 is 42\.\n<\/data>/);

    const offered = models.requests().find((r) => r.method === 'POST').body.tools.map((t) => t.function.name);
    assert.ok(offered.includes('ev__get-sum') && offered.includes('ev__echo'), offered.join(','));
    assert.ok(!offered.includes('ev__get-env'), 'the filter holds');
    assert.ok(offered.includes('add'), 'the page tools are there too');

    const sourceErrors = result.events.filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_source_error');
    assert.equal(sourceErrors.length, 1);
    assert.equal(sourceErrors[0].value.source, 'MCP server gone');
  });

  // Asked in the extension's own window (never in the tab: the call acts on the server, and the
  // tab's renderer must not be the one that answers).
  test("a destructive tool of the project's server is confirmed in the extension: declined, then accepted", async () => {
    await configure({
      models: [{ name: 'd', provider: 'openai', baseUrl: `${models.url}/s/delete/v1`, model: 'x', nativeTools: true }],
      default: 'd',
      servers: [{ name: 'own', url: `${own.url}/mcp`, namespace: 'own' }],
    });
    const asked = [];
    const dialogs = [];
    page.on('dialog', (d) => dialogs.push(d.message()));
    const answer = async (allow) => {
      const question = await extensionQuestion(host, /r-17/);
      asked.push(question.question);
      await question.answer(allow);
    };
    let [result] = await Promise.all([run({ prompt: 'Delete record r-17.' }), answer(false)]);
    let toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.ok(toolResult, JSON.stringify(result.events.filter((e) => e.type !== 'TEXT_MESSAGE_CONTENT')));
    assert.match(toolResult.content, /declined: the person did not allow this call/);
    assert.deepEqual(own.deleted(), [], 'declined: not run');

    await configure({ models: [{ name: 'd', provider: 'openai', baseUrl: `${models.url}/s/delete~again/v1`, model: 'x', nativeTools: true }] });
    [result] = await Promise.all([run({ prompt: 'Delete record r-17.' }), answer(true)]);
    toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.match(toolResult.content, /deleted r-17/);
    assert.deepEqual(own.deleted(), ['r-17']);
    assert.equal(asked.length, 2);
    assert.match(asked[0], /The agent wants to run “delete_record”\s+of\s+the\s+MCP\s+server\s+own\s+with:\n\{\n  "id": "r-17"\n\}/);
    assert.deepEqual(dialogs, [], 'the tab was asked nothing');
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
  });

  test('a session the server forgot (404) is replaced transparently in the middle of a run', async () => {
    await configure({
      models: [{ name: 'g', provider: 'openai', baseUrl: `${models.url}/s/greet/v1`, model: 'x', nativeTools: true }],
      default: 'g',
      servers: [{ name: 'sdk', url: simple.url, namespace: 'sdk', trusted: true }],
    });
    const running = run({ prompt: 'Greet Ann.' });
    running.catch(() => {}); // awaited below; a failing test must not leave it unhandled
    // While the model's answer is held, end the run's MCP session behind its back. The model is
    // asked only once every source is open, so by then the session's requests were made.
    const sessionOf = () => requests.filter((r) => r.url() === simple.url).map((r) => r.headers()['mcp-session-id']).find(Boolean);
    await until('the model asked (its answer held)', async () => models.waiting('greet') > 0, 30_000);
    const sessionId = await until('the run\'s MCP session id', async () => sessionOf(), 30_000).catch((e) =>
      assert.fail(`${e.message}: ${JSON.stringify(requests.filter((r) => r.url() === simple.url).map((r) => [r.method(), r.headers()]))}`));
    const ended = await fetch(simple.url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-11-25' } });
    assert.equal(ended.status, 200);
    models.release('greet');
    const result = await running;
    assert.deepEqual(result.outcome, { type: 'completed', text: 'Greeted.' });
    const toolResult = result.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    assert.match(toolResult.content, /Hello, Ann!/);
    const inits = requests.filter((r) => r.url() === simple.url && (r.postData() ?? '').includes('"initialize"'));
    assert.equal(inits.length, 2, 'a second initialize after the 404');
  });

  test('a 2026-07-28 server (TypeScript SDK v2): its revision in tool_source, Mcp-Param-* headers, input_required declined', async () => {
    await configure({
      models: [{ name: 'v', provider: 'openai', baseUrl: `${models.url}/s/modern/v1`, model: 'x', nativeTools: true }],
      default: 'v',
      servers: [
        { name: 'v2', url: modern.url, namespace: 'v2', trusted: true, filter: ['route', 'confirm'] },
        { name: 'everything', url: everything.url, namespace: 'ev', keyRef: 'mcp', filter: ['echo'] },
      ],
    });
    const seen = modern.requests().length;
    const result = await run({ prompt: 'Route to eu-west and confirm.' });
    const { ok, errors } = await validateEvents(result.events);
    assert.ok(ok, JSON.stringify(errors, null, 2));
    assert.deepEqual(result.outcome, { type: 'completed', text: 'Routed.' });
    const sources = Object.fromEntries(result.events
      .filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.tool_source')
      .map((e) => [e.value.source, e.value]));
    // `tools`: what the server listed (before the configuration's filter).
    assert.equal(sources['MCP server v2'].protocol, '2026-07-28');
    assert.ok(sources['MCP server v2'].tools >= 4, JSON.stringify(sources));
    assert.equal(sources['MCP server everything'].protocol, '2025-11-25');
    assert.ok(sources['MCP server everything'].tools > 1, JSON.stringify(sources));
    const content = (name) => {
      const start = result.events.find((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === name);
      return result.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === start.toolCallId).content;
    };
    assert.match(content('v2__route'), /region eu-west/);
    // The extension declines every input request: the server then answers "declined".
    assert.match(content('v2__confirm'), /declined/);
    const got = modern.requests().slice(seen);
    assert.equal(got[0].method, 'server/discover');
    assert.ok(!got.some((q) => q.method === 'initialize' || q.http !== 'POST'), JSON.stringify(got));
    assert.ok(got.every((q) => q.headers['mcp-protocol-version'] === '2026-07-28' && q.headers['mcp-method'] === q.method));
    const route = got.find((q) => q.method === 'tools/call' && q.headers['mcp-name'] === 'route');
    assert.equal(route.headers['mcp-param-region'], 'eu-west');
    assert.equal(got.filter((q) => q.headers['mcp-name'] === 'confirm').length, 2, 'the call, then its retry with the answers');
    // server-everything was opened by the first run too: probed with server/discover once, the
    // worker then remembers it speaks 2025-11-25.
    const discovers = requests.filter((r) => r.url() === everything.url && (r.postData() ?? '').includes('"server/discover"'));
    assert.equal(discovers.length, 1, 'one probe of server-everything');
  });

  test('the key header went on every request to the server, and nowhere else', async () => {
    const toServer = requests.filter((r) => r.url().startsWith(everything.url));
    assert.ok(toServer.length >= 4, `saw ${toServer.length} requests to the MCP server`);
    for (const r of toServer) assert.equal(r.headers().authorization, `Bearer ${MCP_KEY}`, `${r.method()} ${r.url()}`);
    const elsewhere = requests.filter((r) => !r.url().startsWith(everything.url) && JSON.stringify(r.headers()).includes(MCP_KEY));
    assert.deepEqual(elsewhere.map((r) => r.url()), []);
    assert.ok(toServer.some((r) => r.method() === 'DELETE'), 'the session is ended');
    // The harness's canary went to its model's endpoint (and, checked at close, nowhere else).
    const toModel = models.requests().filter((r) => r.scenario === 'sum' && r.method === 'POST');
    assert.ok(toModel.length >= 2 && toModel.every((r) => r.headers.authorization === `Bearer ${host.canary.value}`));
  });
});
