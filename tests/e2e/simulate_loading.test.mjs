// Simulate mode on a site that moves on between two turns to a page slow to load: the listing
// taken before the agent's next turn meets the page while it still loads (its body held by the
// server until the test releases it). The host lists it again until it has loaded, then plays
// the turn on it; nothing in the test waits for time to pass: it waits for the model requests
// it holds, the tab's navigation, and the host's own listings of the loading page.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { launchHost, until } from '../support/browser.mjs';
import { startModelServer } from '../support/model-server.mjs';

const call = (name, args = {}) => ({ calls: [{ name, arguments: args }] });
const say = (text) => ({ text });
const END = '[[END_CONVERSATION]]';

const START = `<!doctype html><title>Shop</title><p id="status">browsing</p>
<script>
document.modelContext.registerTool({
  name: 'look', description: 'Says what the shop shows.', annotations: { readOnlyHint: true },
  inputSchema: { type: 'object', properties: {} },
  execute: async () => document.querySelector('#status').textContent,
});
</script>`;
// The cart page: its head at once, the rest (with its tool) once the test releases it.
const CART_HEAD = '<!doctype html><title>Cart</title><p id="status">loading</p>\n';
const CART_REST = `<script>
document.modelContext.registerTool({
  name: 'place_order', description: 'Places the order in the cart.',
  inputSchema: { type: 'object', properties: {} },
  execute: async () => { document.querySelector('#status').textContent = 'ordered'; return 'ordered'; },
});
</script>`;

/** The shop: `/` and `/cart`; the cart's body waits for `release()`. */
async function shop() {
  let free;
  const released = new Promise((resolve) => (free = resolve));
  const server = createServer(async (request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (request.url !== '/cart') return response.end(START);
    response.write(CART_HEAD);
    await released;
    response.end(CART_REST);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    release: () => free(),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

const SIMULATIONS = [{
  name: 'order what is in the cart',
  userScenario: 'You look at the shop, then you want the order in your cart placed.',
  maxTurns: 3,
  assertions: [{ type: 'dom', selector: '#status', expect: { text: 'ordered' } }],
}];

const SCENARIOS = {
  user: { steps: [say('What does the shop show?'), { text: 'Place my order, please.', hold: 'second-line' }, say(`Thanks!\n${END}`)] },
  agent: { steps: [call('look'), say('It shows the shop.'), call('place_order'), say('Your order is placed.')] },
};

describe('simulate on a page that is still loading', () => {
  let site, models, host, page;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);

  before(async () => {
    site = await shop();
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    const model = (name) => ({ name, provider: 'openai', baseUrl: `${models.url}/s/${name}/v1`, model: 'x', nativeTools: true });
    await op('configure', { models: [model('agent'), model('user')], default: 'agent' });
  });
  after(async () => {
    site?.release();
    await host?.close();
    await models?.close();
    await site?.close();
  });

  test('the next turn waits until the page has loaded, then is played on it', async () => {
    await page.goto(site.url);
    const tabId = await host.tabIdOf(page);
    const answer = op('evaluate', { tabId, simulations: JSON.stringify(SIMULATIONS), mode: 'simulate', models: ['agent'], userModel: 'user' });
    // The user's second line is held: the first turn is over, the next not begun.
    await models.held('second-line');
    // The site moves on by itself to the cart, whose page loads slowly.
    await page.evaluate(() => setTimeout(() => (location.href = '/cart'), 0));
    await page.waitForURL(`${site.url}/cart`, { waitUntil: 'commit' });
    // Each listing the host asks of the cart page (its top frame's new port) is counted.
    await host.worker.evaluate(() => {
      globalThis.cartListings = 0;
      const connect = chrome.tabs.connect.bind(chrome.tabs);
      chrome.tabs.connect = (tabId, options) => {
        const port = connect(tabId, options);
        if ((options?.frameId ?? 0) === 0) {
          const post = port.postMessage.bind(port);
          port.postMessage = (message) => {
            if (message?.message?.op === 'listTools') globalThis.cartListings += 1;
            return post(message);
          };
        }
        return port;
      };
    });
    models.release('second-line');
    // The host asked the loading page twice for its tools before it had loaded: then it loads.
    await until('two listings of the loading cart page', async () => (await host.worker.evaluate(() => globalThis.cartListings)) >= 2, 20_000);
    assert.equal(await page.evaluate(() => document.readyState), 'loading', 'the page was still loading when listed');
    site.release();
    const { results } = await answer;
    const [result] = results;
    assert.equal(result.outcome, 'pass', JSON.stringify({ reason: result.reason, error: result.error, turns: result.conversation?.turns }));
    assert.deepEqual(result.conversation.turns.map((t) => t.toolCalls.map((c) => c.functionName)), [['look'], ['place_order']]);
    assert.equal(result.assertionResults[0].actual, 'ordered');
  });
});
