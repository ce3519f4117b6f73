// `make demo`: the whole agent. Serves the demo shop on 127.0.0.1, starts Chromium with the
// extension loaded and WebMCP on, and runs the agent on the shop's tab: by default with the
// replay provider (demo/transcript.jsonl), or with a real model when WEBMCP_MODEL_* is set.
// The page's consequential tool (add_to_cart) asks in the page; the demo accepts and says so.
//
// Without a display (or with DEMO_HEADLESS=1) it prints the tools, the event log summary and
// the final answer, and writes screenshots to target/demo/. With a display it leaves the
// window open until you close it.
import { mkdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { launchHost, ROOT } from '../tests/support/browser.mjs';
import { serve } from '../tests/support/server.mjs';

const headless = process.env.DEMO_HEADLESS === '1' || !process.env.DISPLAY;
const port = Number(process.env.DEMO_PORT ?? 0);
const prompt = process.env.DEMO_PROMPT ?? 'Find a green tea under €15 and put two in my cart.';

async function modelConfig() {
  const provider = process.env.WEBMCP_MODEL_PROVIDER;
  if (!provider) {
    const transcript = await readFile(join(ROOT, 'demo', 'transcript.jsonl'), 'utf8');
    return { model: { name: 'demo-replay', provider: 'replay', transcript }, keys: {} };
  }
  const model = {
    name: 'demo-model',
    provider,
    baseUrl: process.env.WEBMCP_MODEL_BASE_URL ?? '',
    model: process.env.WEBMCP_MODEL ?? '',
    nativeTools: process.env.WEBMCP_NATIVE_TOOLS !== '0',
  };
  const keys = {};
  if (process.env.WEBMCP_API_KEY) {
    model.keyRef = 'demo';
    keys.demo = process.env.WEBMCP_API_KEY;
  }
  return { model, keys };
}

const hints = (tool) =>
  [
    tool.annotations.readOnlyHint && 'read-only',
    tool.annotations.consequentialHint && 'consequential',
    tool.annotations.untrustedContentHint && 'untrusted content',
  ].filter(Boolean);

const short = (text, n = 110) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);

const server = await serve(join(ROOT, 'demo', 'site'), port);
const host = await launchHost({ headless });
try {
  const version = await host.worker.evaluate(() => webmcpHost.version());
  const { model, keys } = await modelConfig();
  await host.worker.evaluate((c) => webmcpHost.configure(c), { models: [model], default: model.name, keys });
  console.log(`WebMCP Host ${version} — demo`);
  console.log(`  demo shop:  ${server.url}/`);
  console.log(`  model:      ${model.name} (${model.provider}${model.model ? `, ${model.model}` : ''})`);
  console.log(`  extension:  chrome-extension://${host.extensionId}/ (${headless ? 'headless' : 'window'})`);

  const page = host.context.pages()[0] ?? (await host.context.newPage());
  page.on('dialog', async (dialog) => {
    const [, ask] = dialog.message().split('\n').filter(Boolean);
    console.log(`\n  [the page asks] ${ask.replace(/ with:$/, '')}: accepted by the demo`);
    await dialog.accept();
  });
  await page.goto(`${server.url}/`);
  const tabId = await host.tabIdOf(page);

  const { tools } = await host.worker.evaluate((tabId) => webmcpHost.listTools({ tabId }), tabId);
  console.log(`\nTools on the page (${tools.length}):`);
  for (const tool of tools) {
    const params = Object.keys(tool.inputSchema.properties ?? {}).join(', ');
    const tags = hints(tool).length ? ` [${hints(tool).join(', ')}]` : '';
    console.log(`  ${tool.name}(${params})${tags}`);
  }
  if (!tools.length) throw new Error('the host saw no tools on the demo page: is WebMCP on?');

  console.log(`\nPrompt: ${prompt}`);
  const result = await host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt, runId: 'demo_run' });

  console.log('\nWhat happened (AG-UI events):');
  const names = new Map();
  for (const event of result.events) {
    if (event.type === 'TOOL_CALL_START') names.set(event.toolCallId, event.toolCallName);
    if (event.type === 'TOOL_CALL_END') {
      const call = result.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === event.toolCallId);
      if (call) console.log(`  call    ${call.function.name} ${call.function.arguments}`);
    }
    if (event.type === 'CUSTOM' && event.name === 'webmcp_host.tool_repair') {
      console.log(`  repair  ${event.value.toolCallName}: ${event.value.fixes.map((f) => f.detail).join('; ')}`);
    }
    if (event.type === 'TOOL_CALL_RESULT') console.log(`  result  ${names.get(event.toolCallId)} → ${short(event.content)}`);
    if (event.type === 'RUN_ERROR') console.log(`  error   ${event.message}`);
  }
  // Each step's time, from the run's timeline (the model's steps and the page's calls).
  const timeline = await host.worker.evaluate((runId) => webmcpHost.timeline({ runId }), 'demo_run').catch(() => null);
  if (timeline?.entries?.length) {
    console.log('\nSteps:');
    const secs = (ms) => (ms === undefined || ms === null ? '    ?' : `${(ms / 1000).toFixed(1).padStart(5)} s`);
    for (const entry of timeline.entries) {
      if (entry.kind !== 'step') {
        if (entry.kind === 'error') console.log(`  error  ${entry.message}`);
        continue;
      }
      const calls = entry.calls.map((c) => `${c.name} ${JSON.stringify(c.args)}${c.durationMs != null ? ` (${Math.round(c.durationMs)} ms)` : ''}`);
      const what = [entry.text && `"${short(entry.text.replace(/\s+/g, ' ').trim(), 70)}"`, ...calls].filter(Boolean).join('; ');
      const tokens = entry.tokens?.outputTokens != null ? `, ${entry.tokens.inputTokens} in / ${entry.tokens.outputTokens} out tokens` : '';
      console.log(`  ${entry.name.padEnd(7)} ${secs(entry.durationMs)}${tokens}  ${what || '(nothing)'}`);
    }
    if (timeline.durationMs != null) console.log(`  the run took ${(timeline.durationMs / 1000).toFixed(1)} s`);
  }
  const counts = {};
  for (const event of result.events) counts[event.type] = (counts[event.type] ?? 0) + 1;
  console.log(`  ${result.events.length} events: ${Object.entries(counts).map(([t, n]) => `${t} ${n}`).join(', ')}`);
  console.log(`\nOutcome: ${result.outcome.type}`);
  if (result.outcome.text) console.log(`Answer:  ${result.outcome.text}`);
  if (result.outcome.message) console.log(`Error:   ${result.outcome.message}`);

  if (!headless) {
    const popup = await host.context.newPage();
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    await page.bringToFront();
    console.log('\nThe shop is open in Chromium, with the host popup in a second tab. Close the browser to end.');
    await new Promise((resolve) => host.context.on('close', resolve));
  } else {
    const dir = join(ROOT, 'target', 'demo');
    await mkdir(dir, { recursive: true });
    const shop = join(dir, 'shop.png');
    await page.screenshot({ path: shop, fullPage: true });
    const popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 560 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}`);
    await popup.waitForSelector('body[data-state="ready"]');
    const shot = join(dir, 'popup.png');
    await popup.screenshot({ path: shot, fullPage: true });
    console.log(`\nScreenshots: ${relative(ROOT, shop)}, ${relative(ROOT, shot)}`);
  }
  if (result.outcome.type === 'failed') process.exitCode = 1;
  if (!process.env.DEMO_PROMPT) {
    // The demo's own task: a search, then exactly one add_to_cart of two Sencha.
    const calls = result.messages.flatMap((m) => m.toolCalls ?? []).map((c) => ({ name: c.function.name, args: JSON.parse(c.function.arguments || '{}') }));
    const searched = calls.some((c) => c.name === 'search_teas');
    const adds = calls.filter((c) => c.name === 'add_to_cart');
    const done = searched && adds.length === 1 && adds[0].args.sku === 'sencha-50' && adds[0].args.quantity === 2;
    console.log(`\nThe demo task (a search, then one add_to_cart of two Sencha): ${done ? 'done' : `NOT done (${calls.map((c) => c.name).join(', ') || 'no calls'})`}`);
    if (!done) process.exitCode = 1;
  }
} finally {
  await host.close().catch(() => {});
  await server.close();
}
