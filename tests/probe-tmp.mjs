import { join } from 'node:path';
import { launchHost, ROOT } from './support/browser.mjs';
import { serve } from './support/server.mjs';
const server = await serve(join(ROOT, 'tests', 'fixtures'));
const other = server.url.replace('127.0.0.1', 'localhost');
const host = await launchHost();
const page = await host.context.newPage();
page.on('dialog', (d) => d.accept());
const op = (n, r) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [n, r]);
for (const [name, args] of [['order_in_frame', { item: 'mug' }], ['order_on_new_page', { item: 'mug' }], ['send_message', { text: 'hi' }], ['open_receipt', {}], ['open_partner_receipt', {}], ['save_and_leave', {}]]) {
  await page.goto(`${server.url}/results/shop.html?other=${encodeURIComponent(other)}`);
  const tabId = await host.tabIdOf(page);
  await op('listTools', { tabId });
  const t0 = Date.now();
  const answer = await op('callTool', { tabId, name, args });
  console.log(name, Date.now() - t0, 'ms', JSON.stringify(answer));
  if (name === 'order_in_frame') console.log('  top tools now:', (await op('listTools', { tabId })).tools.map((t) => t.name).join(','));
}
console.log('resumeTool?', await page.evaluate(() => [typeof document.modelContext?.resumeTool, typeof document.modelContext?.requestToken]));
await host.close(); await server.close();
