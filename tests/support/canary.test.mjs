// The canary check itself: it finds a key wherever it must not be (fed fake records, and in a
// real host made to leak it on purpose), and lets it through to its own endpoint.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, test } from 'node:test';
import { addEndpoints, CANARY, findLeaks, isUnder, leakError } from './canary.mjs';
import { launchHost } from './browser.mjs';

const secrets = [{ ref: 'canary', value: CANARY }];
const endpoints = addEndpoints(new Map(), {
  models: { models: [{ baseUrl: 'http://127.0.0.1:4000/s/a/v1', keyRef: 'canary' }, { baseUrl: 'http://127.0.0.1:4000/s/b/v1' }] },
  servers: [{ url: 'http://127.0.0.1:5000/mcp', keyRef: 'mcp' }],
});

describe('canary checker', () => {
  test('a key in the headers of a request to its own endpoint is no leak', () => {
    const records = [
      { kind: 'request', url: 'http://127.0.0.1:4000/s/a/v1/chat/completions', headers: { authorization: `Bearer ${CANARY}` }, postData: '{}' },
      { kind: 'request', url: 'http://127.0.0.1:4000/s/a/v1/models', headers: { authorization: `Bearer ${CANARY}` } },
      { kind: 'console', where: 'worker', text: 'nothing secret here' },
    ];
    assert.deepEqual(findLeaks({ secrets, records, endpoints }), []);
  });

  test('every other place is a leak, and the report never shows the key', () => {
    const records = [
      // Another model (no keyRef), a look-alike path, another server's key reference.
      { kind: 'request', url: 'http://127.0.0.1:4000/s/b/v1/chat/completions', headers: { authorization: `Bearer ${CANARY}` } },
      { kind: 'request', url: 'http://127.0.0.1:4000/s/a/v10/chat', headers: { 'x-api-key': CANARY } },
      { kind: 'request', url: 'http://127.0.0.1:5000/mcp', headers: { authorization: `Bearer ${CANARY}` } },
      // Its own endpoint, but in the URL or the body.
      { kind: 'request', url: `http://127.0.0.1:4000/s/a/v1/chat?key=${CANARY}`, headers: {} },
      { kind: 'request', url: 'http://127.0.0.1:4000/s/a/v1/chat', headers: {}, postData: `{"key":"${CANARY}"}` },
      { kind: 'console', where: 'worker', text: `fetch failed with key ${CANARY}` },
      { kind: 'message', where: 'tab 3', text: { webmcpHost: 1, op: 'callTool', args: { k: CANARY } } },
      { kind: 'run log', where: 'run_1', text: JSON.stringify({ events: [{ type: 'RUN_ERROR', message: CANARY }] }) },
    ];
    const leaks = findLeaks({ secrets, records, endpoints });
    assert.deepEqual(leaks.map((l) => l.kind), ['request', 'request', 'request', 'request', 'request', 'console', 'message', 'run log']);
    const error = leakError(leaks);
    assert.match(error.message, /canary check: 8 leak\(s\)/);
    assert.match(error.message, /in the URL/);
    assert.match(error.message, /in the body/);
    assert.match(error.message, /no endpoint of a model or server with keyRef `canary`/);
    assert.ok(!error.message.includes(CANARY), 'the report masks the key');
  });

  test("a collector's key goes to the collector only while no model or server names it", () => {
    const withCollectors = addEndpoints(new Map(endpoints), {
      collectors: [
        { endpoint: 'http://127.0.0.1:6006/v1/traces', headers: { 'x-api-key': 'phoenix' } },
        { endpoint: 'http://127.0.0.1:7000/v1/traces', headers: { authorization: 'canary' } },
      ],
    });
    const own = { ref: 'phoenix', value: 'phoenix-key-000000000' };
    const records = [
      { kind: 'request', url: 'http://127.0.0.1:6006/v1/traces', headers: { 'x-api-key': own.value } },
      { kind: 'request', url: 'http://127.0.0.1:7000/v1/traces', headers: { authorization: CANARY } },
    ];
    const leaks = findLeaks({ secrets: [...secrets, own], records, endpoints: withCollectors });
    assert.deepEqual(leaks.map((l) => [l.ref, l.where]), [['canary', 'http://127.0.0.1:7000/v1/traces']]);
  });

  test('endpoints are matched at path boundaries', () => {
    assert.ok(isUnder('http://h/v1/chat', 'http://h/v1'));
    assert.ok(isUnder('http://h/v1/chat', 'http://h/v1/'));
    assert.ok(isUnder('http://h/mcp?x=1', 'http://h/mcp'));
    assert.ok(!isUnder('http://h/v10/chat', 'http://h/v1'));
    assert.ok(!isUnder('http://h.evil/v1', 'http://h'));
  });
});

describe('canary check in a real host', () => {
  test("close() fails when the worker sends the key to a host that is not its model's endpoint", async () => {
    const hits = [];
    const server = createServer((req, res) => {
      hits.push({ url: req.url, authorization: req.headers.authorization });
      res.writeHead(200, { 'access-control-allow-origin': '*', 'access-control-allow-headers': '*' }).end('{}');
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${server.address().port}`;
    const host = await launchHost();
    try {
      await host.worker.evaluate((c) => webmcpHost.configure(c), {
        models: [{ name: 'own', provider: 'openai', baseUrl: `${url}/own/v1`, model: 'x', nativeTools: true, keyRef: 'canary' }],
        default: 'own',
      });
      // The key to its own endpoint: allowed.
      await host.worker.evaluate(async (u) => {
        const key = (await chrome.storage.session.get('webmcpHost.key.canary'))['webmcpHost.key.canary'];
        await fetch(`${u}/own/v1/models`, { headers: { authorization: `Bearer ${key}` } });
      }, url);
      await host.canary.check();
      // The same key elsewhere, in a message to the extension's pages and on a port to a tab
      // (the page bridge's channel): each caught.
      const page = await host.context.newPage();
      await page.goto(`${url}/page`);
      const tabId = await host.tabIdOf(page);
      await host.worker.evaluate(async ([u, tab]) => {
        const key = (await chrome.storage.session.get('webmcpHost.key.canary'))['webmcpHost.key.canary'];
        await fetch(`${u}/elsewhere`, { headers: { authorization: `Bearer ${key}` } });
        await chrome.runtime.sendMessage({ webmcpHostUi: 'event', leaked: key }).catch(() => {});
        const port = chrome.tabs.connect(tab, { frameId: 0, name: 'canary-test' });
        port.postMessage({ leaked: key });
        port.disconnect();
      }, [url, tabId]);
      assert.deepEqual(hits.map((h) => h.url).filter((u) => u === '/own/v1/models' || u === '/elsewhere'), ['/own/v1/models', '/elsewhere'], 'both requests were made');
      await assert.rejects(host.canary.check(), (error) => {
        assert.match(error.message, /leak\(s\) of a key/);
        assert.match(error.message, /in the headers of a request to http:\/\/127\.0\.0\.1:\d+\/elsewhere/);
        assert.match(error.message, /a message \(extension pages\)/);
        assert.match(error.message, /a message \(tab \d+ port \{"frameId":0,"name":"canary-test"\}\)/);
        assert.ok(!error.message.includes(CANARY));
        return true;
      });
    } finally {
      await assert.rejects(host.close(), /canary check/, 'close() fails the owner of the host');
      server.close();
    }
  });
});
