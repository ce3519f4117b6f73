// `make demo`: serves the demo shop on 127.0.0.1 and starts Chromium with the extension loaded
// and WebMCP on. With a display, it opens a window for you and waits until you close it.
// Without one (or with DEMO_HEADLESS=1), it runs headless, prints what the host saw (the tools,
// one tool call and its result) and writes a screenshot of the popup.
import { mkdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { launchHost, ROOT } from '../tests/support/browser.mjs';
import { serve } from '../tests/support/server.mjs';

const headless = process.env.DEMO_HEADLESS === '1' || !process.env.DISPLAY;
const port = Number(process.env.DEMO_PORT ?? 0);

const hints = (tool) =>
  [
    tool.annotations.readOnlyHint && 'read-only',
    tool.annotations.consequentialHint && 'consequential',
    tool.annotations.untrustedContentHint && 'untrusted content',
  ].filter(Boolean);

const server = await serve(join(ROOT, 'demo', 'site'), port);
const host = await launchHost({ headless });
try {
  const version = await host.worker.evaluate(() => webmcpHost.version());
  console.log(`WebMCP Host ${version} — demo`);
  console.log(`  demo shop:  ${server.url}/`);
  console.log(`  extension:  chrome-extension://${host.extensionId}/ (${headless ? 'headless' : 'window'})`);

  const page = host.context.pages()[0] ?? (await host.context.newPage());
  await page.goto(`${server.url}/`);
  const tabId = await host.tabIdOf(page);

  const { tools, problems } = await host.worker.evaluate((tabId) => webmcpHost.listTools({ tabId }), tabId);
  console.log(`\nTools the host sees on the page (${tools.length}):`);
  for (const tool of tools) {
    const params = Object.keys(tool.inputSchema.properties ?? {}).join(', ');
    const tags = hints(tool).length ? ` [${hints(tool).join(', ')}]` : '';
    console.log(`  ${tool.name}(${params})${tags}\n      ${tool.description}`);
  }
  for (const problem of problems) console.log(`  skipped: ${problem.message}`);
  if (!tools.length) throw new Error('the host saw no tools on the demo page: is WebMCP on?');

  if (!headless) {
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    await page.bringToFront();
    console.log('\nThe shop is open in Chromium, with the host popup in a second tab (also under the');
    console.log("extensions button of the toolbar). Close the browser window to end the demo.");
    await new Promise((resolve) => host.context.on('close', resolve));
  } else {
    const request = { tabId, name: 'search_teas', args: { query: 'green', max_price: 15 } };
    console.log(`\nCalling search_teas ${JSON.stringify(request.args)} through the extension:`);
    const answer = await host.worker.evaluate((r) => webmcpHost.callTool(r), request);
    if (!answer.ok) throw new Error(`the call failed: ${answer.error}`);
    console.log(`  result: ${answer.result}`);

    const popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 560 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    await popup.waitForSelector('body[data-state="ready"]');
    const dir = join(ROOT, 'target', 'demo');
    await mkdir(dir, { recursive: true });
    const shot = join(dir, 'popup.png');
    await popup.screenshot({ path: shot, fullPage: true });
    console.log(`\nPopup screenshot: ${relative(ROOT, shot)}`);
  }
} finally {
  await host.close().catch(() => {});
  await server.close();
}
