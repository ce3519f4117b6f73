// `make bench` (and `node scripts/keepalive.mjs [case ...]`): whether Chrome lets the host's
// service worker idle out (its 30 s limit) while a run works and while a run waits for the
// person, measured in Chromium. Prints when the worker stopped (or that it ran on) and how the
// run ended, for each case.
//
// Nothing may attach to the worker: DevTools attached to a service worker keeps it running
// (Playwright's `launchPersistentContext` attaches to every worker, so its tests never see an
// idle stop; the `playwright` case shows it). So Chromium is started here with
// `--remote-debugging-pipe` and driven over the DevTools protocol by hand: the worker is
// watched through target discovery (`Target.setDiscoverTargets`: a running service worker is
// a target, a stopped one is not), and the host is asked from an extension page that is then
// closed (an open popup or side panel asks the worker every second while the run it shows
// runs: the `panel-open` case).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM, EXTENSION_DIR, launchHost, ROOT } from '../tests/support/browser.mjs';
import { serve } from '../tests/support/server.mjs';
import { startModelServer } from '../tests/support/model-server.mjs';
import { startMcpServer } from '../tests/support/mcp-server.mjs';

const WAIT_MS = Number(process.env.KEEPALIVE_WAIT_MS ?? 50_000);
const FIRST_BYTE_MS = 45_000;
const ACCEPT_AFTER_MS = 35_000;
const ASK = {
  name: 'ask_person',
  description: 'Ask the person a question.',
  parameters: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] },
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const secs = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** Chromium with the extension, spoken to over the DevTools pipe (fd 3 in, fd 4 out). */
async function launch() {
  const profile = await mkdtemp(join(tmpdir(), 'webmcp-keepalive-'));
  const child = spawn(CHROMIUM, [
    '--headless', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
    `--disable-extensions-except=${EXTENSION_DIR}`, `--load-extension=${EXTENSION_DIR}`,
    '--enable-features=WebMCP', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync', 'about:blank',
  ], { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'] });
  const [input, output] = [child.stdio[3], child.stdio[4]];
  let id = 0;
  const waiting = new Map();
  const listeners = [];
  let buffer = Buffer.alloc(0);
  output.on('data', (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (let end = buffer.indexOf(0); end >= 0; end = buffer.indexOf(0)) {
      const message = JSON.parse(buffer.subarray(0, end).toString());
      buffer = buffer.subarray(end + 1);
      if (message.id && waiting.has(message.id)) {
        const { resolve, reject } = waiting.get(message.id);
        waiting.delete(message.id);
        if (message.error) reject(new Error(`${message.error.message} ${message.error.data ?? ''}`));
        else resolve(message.result);
      } else listeners.forEach((l) => l(message));
    }
  });
  const send = (method, params = {}, sessionId) => new Promise((resolve, reject) => {
    id += 1;
    waiting.set(id, { resolve, reject });
    input.write(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }) + '\0');
  });

  // The worker's life, from target discovery alone.
  const life = { running: false, since: Date.now(), stops: [], starts: [] };
  listeners.push(({ method, params }) => {
    const info = params?.targetInfo;
    if (method === 'Target.targetCreated' && info.type === 'service_worker' && info.url.endsWith('/worker.js')) {
      life.running = true;
      life.targetId = info.targetId;
      life.extensionId = new URL(info.url).host;
      life.starts.push(Date.now());
    }
    if (method === 'Target.targetDestroyed' && params.targetId === life.targetId) {
      life.running = false;
      life.stops.push(Date.now());
    }
  });
  await send('Target.setDiscoverTargets', { discover: true });
  for (let i = 0; !life.extensionId; i += 1) {
    if (i > 200) throw new Error('the extension worker never started');
    await sleep(50);
  }

  /** Evaluates `expression` in an extension page opened for it, then closed. */
  const inPage = async (expression) => {
    const { targetId } = await send('Target.createTarget', { url: `chrome-extension://${life.extensionId}/popup.html?view=keys` });
    try {
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      const ready = `location.protocol === 'chrome-extension:' && document.readyState === 'complete'`;
      for (let i = 0; ; i += 1) {
        const answer = await send('Runtime.evaluate', { expression: ready, returnByValue: true }, sessionId).catch(() => null);
        if (answer?.result?.value === true) break;
        if (i > 100) throw new Error('the extension page did not load');
        await sleep(50);
      }
      const { result, exceptionDetails } = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true }, sessionId);
      if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
      return result.value;
    } finally {
      await send('Target.closeTarget', { targetId });
    }
  };
  /** Sends the operations from an extension page; resolves to their answers. */
  const ask = (...messages) =>
    inPage(`(async () => { const out = []; for (const m of ${JSON.stringify(messages)}) out.push(await chrome.runtime.sendMessage(m)); return out; })()`);
  /**
   * Opens a page (a path of the extension, or a URL) and leaves it open; resolves to its closer.
   * `dialogs: true` attaches to the page with the Page domain on, so that its dialogs stay open
   * (headless Chromium dismisses them otherwise) until `dialogs.accept()`.
   */
  const openPage = async (path, { dialogs = false } = {}) => {
    const url = path.includes('://') ? path : `chrome-extension://${life.extensionId}/${path}`;
    const { targetId } = await send('Target.createTarget', { url });
    const closer = () => send('Target.closeTarget', { targetId });
    if (dialogs) {
      const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
      await send('Page.enable', {}, sessionId);
      closer.opened = [];
      listeners.push((m) => m.method === 'Page.javascriptDialogOpening' && m.sessionId === sessionId && closer.opened.push(Date.now()));
      closer.accept = () => send('Page.handleJavaScriptDialog', { accept: true }, sessionId);
      closer.evaluate = async (expression) => (await send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
    }
    return closer;
  };
  const close = async () => {
    child.kill();
    await new Promise((r) => child.once('exit', r));
    await rm(profile, { recursive: true, force: true });
  };
  return { life, ask, inPage, openPage, close };
}

/** Waits `ms` watching the worker; resolves to when it stopped (ms after `from`), or null. */
async function watch(life, from, ms) {
  const seen = life.stops.length;
  const end = from + ms;
  while (Date.now() < end && life.stops.length === seen) await sleep(100);
  return life.stops.length > seen ? life.stops[seen] - from : null;
}

const cases = {
  // Nothing runs: Chrome's idle limit as this build applies it.
  async idle({ host }) {
    await host.ask({ op: 'version' });
    const from = Date.now();
    const stopped = await watch(host.life, from, WAIT_MS);
    return stopped === null ? `ran on for ${secs(WAIT_MS)}` : `stopped ${secs(stopped)} after the last message`;
  },
  // A run whose model sends its first byte after 45 s: the run works all along.
  async working({ host, models }) {
    const [{ value: { runId } }] = await host.ask({ op: 'startRun', prompt: 'Think slowly.', model: 'slow' });
    const from = Date.now();
    const stopped = await watch(host.life, from, FIRST_BYTE_MS + 3_000);
    const [runs] = await host.ask({ op: 'runs' });
    const run = runs.value.find((r) => r.runId === runId);
    const asked = models.requests({ scenario: 'slow' }).length;
    return `${stopped === null ? `ran on for ${secs(FIRST_BYTE_MS + 3_000)}` : `stopped after ${secs(stopped)}`}; run ${run.state}, outcome ${run.outcome?.type ?? '-'} (model asked ${asked}×)`;
  },
  // A run waiting for a visitor input, no popup open.
  async waiting({ host }) {
    const [{ value: { runId } }] = await host.ask({ op: 'startRun', prompt: 'Ask me.', model: 'ask', visitorTools: [ASK] });
    for (let i = 0; i < 100 && !(await host.ask({ op: 'pending' }))[0].value.length; i += 1) await sleep(50);
    const from = Date.now();
    const stopped = await watch(host.life, from, WAIT_MS);
    const [runs] = await host.ask({ op: 'runs' });
    const run = runs.value.find((r) => r.runId === runId);
    return `${stopped === null ? `ran on for ${secs(WAIT_MS)}` : `stopped ${secs(stopped)} after the input was listed`}; run ${run.state}`;
  },
  // A run waiting for a visitor input, the side panel open (it shows the latest run).
  async 'panel-open'({ host }) {
    const [{ value: { runId } }] = await host.ask({ op: 'startRun', prompt: 'Ask me.', model: 'ask', visitorTools: [ASK] });
    const closePanel = await host.openPage('sidepanel.html');
    const from = Date.now();
    const stopped = await watch(host.life, from, WAIT_MS);
    await closePanel();
    const [runs] = await host.ask({ op: 'runs' });
    const run = runs.value.find((r) => r.runId === runId);
    await host.ask({ op: 'stop', runId });
    return `${stopped === null ? `ran on for ${secs(WAIT_MS)}` : `stopped after ${secs(stopped)}`}; run ${run.state}`;
  },
  // A run without a tab waiting for an MCP confirmation in the popup, no popup open.
  async confirming({ host, mcp }) {
    const [{ value: { runId } }] = await host.ask({ op: 'startRun', prompt: 'Delete r-1.', model: 'confirm' });
    for (let i = 0; i < 100 && !(await host.ask({ op: 'pending' }))[0].value.length; i += 1) await sleep(50);
    const from = Date.now();
    const stopped = await watch(host.life, from, WAIT_MS);
    const [runs] = await host.ask({ op: 'runs' });
    const run = runs.value.find((r) => r.runId === runId);
    const [stop] = await host.ask({ op: 'stop', runId });
    return `${stopped === null ? `ran on for ${secs(WAIT_MS)}` : `stopped ${secs(stopped)} after the confirmation was listed`}; run ${run.state}${stop.ok ? ' (then stopped)' : ''}; deleted: ${mcp.deleted().length}`;
  },
  // A run whose consequential page tool waits at the page's confirm() dialog, answered after
  // the page call's deadline.
  async 'page-confirm'({ host, pages }) {
    const page = await host.openPage(`${pages.url}/tools.html`, { dialogs: true });
    const find = `(async () => {
      for (const tab of await chrome.tabs.query({})) {
        const top = await chrome.webNavigation.getFrame({ tabId: tab.id, frameId: 0 }).catch(() => null);
        if (top?.url?.endsWith('/tools.html')) return tab.id;
      }
      return null;
    })()`;
    let tabId = null;
    for (let i = 0; i < 100 && tabId === null; i += 1) {
      tabId = await host.inPage(find);
      if (tabId === null) await sleep(50);
    }
    await sleep(500); // the page's tools registered
    if (tabId === null) throw new Error('no tab shows tools.html');
    const [{ value: { runId } }] = await host.ask({ op: 'startRun', tabId, prompt: 'Delete everything.', model: 'pageact' });
    const from = Date.now();
    // The person says yes after the page call's deadline (30 s).
    let stopped = await watch(host.life, from, ACCEPT_AFTER_MS);
    await page.accept();
    const accepted = Date.now() - from;
    stopped ??= await watch(host.life, from, WAIT_MS);
    const calls = await page.evaluate('window.__calls.filter((c) => c.name === "delete_everything").length');
    const [runs] = await host.ask({ op: 'runs' });
    const run = runs.value.find((r) => r.runId === runId);
    const [log] = await host.ask({ op: 'runLog', runId });
    const result = log.value.events.find((e) => e.type === 'TOOL_CALL_RESULT');
    if (process.env.KEEPALIVE_DEBUG) console.log(JSON.stringify(log.value.events).slice(0, 3000));
    const ended = log.value.times.at(-1) - from;
    const shown = page.opened.length
      ? `the dialog opened ${secs(page.opened[0] - from)} after the start, accepted ${secs(accepted)} after it; the tool then ran ${calls}×`
      : 'no dialog';
    return `${shown}; the worker ${stopped === null ? `ran on for ${secs(WAIT_MS)}` : `stopped after ${secs(stopped)}`}; run ${run.state}, its last event ${secs(ended)} after the start; the call's result: ${JSON.stringify(result?.content ?? null).slice(0, 120)}`;
  },
  // Nothing runs, Playwright attached to the worker as in the test suite.
  async playwright() {
    const host = await launchHost();
    try {
      let closed = null;
      const from = Date.now();
      host.worker.on('close', () => (closed ??= Date.now() - from));
      await sleep(WAIT_MS);
      return closed === null ? `ran on for ${secs(WAIT_MS)} (DevTools attached keeps it running)` : `stopped after ${secs(closed)}`;
    } finally {
      await host.close();
    }
  },
};

const chosen = process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(cases);
for (const name of chosen) if (!cases[name]) throw new Error(`no case ${name} (cases: ${Object.keys(cases).join(', ')})`);
const models = await startModelServer({
  scenarios: {
    slow: { steps: [{ text: 'Thought it over.', firstByteDelayMs: FIRST_BYTE_MS }] },
    ask: { steps: [{ calls: [{ name: 'ask_person', arguments: { question: 'Which colour?' } }] }, { text: 'Fine.' }], after: 'repeat' },
    confirm: { steps: [{ calls: [{ name: 'own__delete_record', arguments: { id: 'r-1' } }] }, { text: 'Done.' }] },
    pageact: { steps: [{ calls: [{ name: 'delete_everything', arguments: { confirm: true } }] }, { text: 'Answered after the call.' }] },
  },
});
const mcp = await startMcpServer();
const pages = await serve(join(ROOT, 'tests', 'fixtures'));
console.log(`keep-alive: Chromium's idle limit is 30 s; each case watches the worker up to ${secs(WAIT_MS)}`);
try {
  for (const name of chosen) {
    const host = name === 'playwright' ? null : await launch();
    try {
      if (host) {
        const model = (n) => ({ name: n, provider: 'openai', baseUrl: `${models.url}/s/${n}/v1`, model: 'x', nativeTools: true });
        await host.ask({
          op: 'configure', models: ['slow', 'ask', 'confirm', 'pageact'].map(model), default: 'slow',
          servers: [{ name: 'own', url: `${mcp.url}/mcp`, namespace: 'own' }],
        });
      }
      console.log(`${name.padEnd(12)} ${await cases[name]({ host, models, mcp, pages })}`);
    } finally {
      await host?.close();
    }
  }
} finally {
  await Promise.all([models.close(), mcp.close(), pages.close()]);
}
