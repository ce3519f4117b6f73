// Starts Debian's Chromium with the unpacked extension loaded and WebMCP switched on, through
// playwright-core, and gives access to the extension's service worker.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { addEndpoints, CANARY, CANARY_REF, findLeaks, instrumentWorker, KEY_PREFIX, leakError, PROBE } from './canary.mjs';

export { CANARY } from './canary.mjs';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const EXTENSION_DIR = join(ROOT, 'extension');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// This machine's network is closed: keep Chromium from reaching out at start.
const QUIET = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Launches Chromium with the extension. Resolves to
 * `{context, worker, extensionId, tabIdOf(page), close(), canary}` once the host in the worker is
 * ready.
 *
 * Every host carries the canary key (`CANARY`, stored as `keys.canary` in session storage;
 * models and servers of a test may name it with `keyRef: 'canary'`), and everything the host
 * does is recorded (canary.mjs says what). `close()` checks the records and throws, naming each
 * leak, when the canary or any other key of session storage went anywhere but the headers of a
 * request to the endpoint of a model or server whose `keyRef` names it. `canary.check()` runs
 * the same check at any time (it throws too); `canary.records()` gives what was recorded.
 */
export async function launchHost({ headless = true, extraArgs = [], webmcp = true, bfcache = false } = {}) {
  const profile = await mkdtemp(join(tmpdir(), 'webmcp-host-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless,
    viewport: { width: 1000, height: 720 },
    // Playwright turns the back/forward cache off; `bfcache: true` leaves Chromium's default.
    ignoreDefaultArgs: bfcache ? ['--disable-back-forward-cache'] : [],
    args: [
      `--disable-extensions-except=${EXTENSION_DIR}`,
      `--load-extension=${EXTENSION_DIR}`,
      // WebMCP is off by default in Chromium; `webmcp: false` keeps it off (polyfilled pages).
      webmcp ? '--enable-features=WebMCP' : '--disable-features=WebMCP',
      ...QUIET,
      ...extraArgs,
    ],
  });
  const recorder = recordContext(context);
  try {
    const worker =
      context.serviceWorkers().find(isOurs) ??
      (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 15_000 }));
    const extensionId = new URL(worker.url()).host;
    await worker.evaluate(() => globalThis.webmcpHost.ready);
    await recorder.watch(worker);
    await worker.evaluate((keys) => globalThis.webmcpHost.configure({ keys }), { [CANARY_REF]: CANARY });
    let closed = false;
    return {
      context,
      worker,
      extensionId,
      /** The Chrome tab id of a Playwright page, found through its top frame's URL. */
      tabIdOf: (page) =>
        worker.evaluate(async (url) => {
          for (const tab of await chrome.tabs.query({})) {
            const top = await chrome.webNavigation.getFrame({ tabId: tab.id, frameId: 0 }).catch(() => null);
            if (top?.url === url) return tab.id;
          }
          throw new Error(`no tab shows ${url}`);
        }, page.url()),
      canary: { value: CANARY, ref: CANARY_REF, check: () => recorder.check(), records: () => recorder.records },
      /** Closes the browser; throws when a key leaked (see above), after closing. */
      close: async () => {
        if (closed) return;
        closed = true;
        let failure = null;
        try {
          await recorder.check();
        } catch (error) {
          failure = error;
        }
        await context.close();
        await rm(profile, { recursive: true, force: true });
        if (failure) throw failure;
      },
    };
  } catch (error) {
    await context.close();
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}

const isOurs = (w) => w.url().startsWith('chrome-extension://') && w.url().endsWith('/worker.js');

/**
 * Records what the context does for the canary check: requests, console messages of pages and
 * of the extension's worker (each new worker is instrumented: see `instrumentWorker`), messages
 * the worker sends, the stored models' and servers' endpoints. `check()` adds every kept run's
 * log and the settings, and throws on a leak.
 */
function recordContext(context) {
  const records = [];
  const endpoints = new Map();
  const watched = new WeakSet();
  context.on('request', (request) => {
    records.push({ kind: 'request', url: request.url(), headers: request.headers(), postData: request.postData() });
  });
  const onConsole = (where) => (message) => {
    const text = message.text();
    if (text.startsWith(PROBE)) {
      let record;
      try {
        record = JSON.parse(text.slice(PROBE.length));
      } catch {
        records.push({ kind: 'console', where, text });
        return;
      }
      if (record.kind === 'config') addEndpoints(endpoints, record);
      else records.push({ kind: record.kind, where: record.where, text: record.text });
      return;
    }
    records.push({ kind: 'console', where, text });
  };
  const watchPage = (page) => page.on('console', (message) => onConsole(`page ${message.location()?.url || page.url()}`)(message));
  context.pages().forEach(watchPage);
  context.on('page', watchPage);
  const watch = async (worker) => {
    if (watched.has(worker)) return;
    watched.add(worker);
    worker.on('console', onConsole(`worker ${worker.url()}`));
    await instrumentWorker(worker).catch(() => {}); // a worker that stops at once has nothing to say
  };
  // A worker that Chrome stopped comes back as a new one: record it too.
  context.on('serviceworker', (worker) => {
    if (isOurs(worker)) watch(worker);
  });

  const check = async () => {
    const secrets = [{ ref: CANARY_REF, value: CANARY }];
    const extra = [];
    const worker = context.serviceWorkers().find(isOurs);
    if (worker) {
      await watch(worker);
      const seen = await withTimeout(
        worker.evaluate(async (prefix) => {
          const read = async (area, names) => (await chrome.storage[area].get(names)) ?? {};
          const session = await read('session', null);
          const local = await read('local', ['webmcpHost.models', 'webmcpHost.servers']);
          const runs = await globalThis.webmcpHost.runs({}).catch(() => []);
          const logs = [];
          for (const run of runs) {
            const log = await globalThis.webmcpHost.runLog({ runId: run.runId }).catch((e) => ({ error: String(e) }));
            logs.push({ runId: run.runId, text: JSON.stringify({ run, log }) });
          }
          const settings = await globalThis.webmcpHost.settings().catch(() => null);
          const pending = await globalThis.webmcpHost.pending().catch(() => null);
          const keys = Object.entries(session)
            .filter(([name, value]) => name.startsWith(prefix) && typeof value === 'string')
            .map(([name, value]) => ({ ref: name.slice(prefix.length), value }));
          return { keys, local, logs, settings, pending };
        }, KEY_PREFIX),
        10_000,
        'reading the worker for the canary check',
      ).catch(() => null);
      if (seen) {
        for (const key of seen.keys) {
          if (!secrets.some((s) => s.value === key.value)) secrets.push(key);
        }
        addEndpoints(endpoints, { models: seen.local['webmcpHost.models'], servers: seen.local['webmcpHost.servers'], collectors: seen.local['webmcpHost.collectors'] });
        extra.push(...seen.logs.map((l) => ({ kind: 'run log', where: l.runId, text: l.text })));
        extra.push({ kind: 'settings', where: 'webmcpHost.settings()', text: JSON.stringify(seen.settings) });
        extra.push({ kind: 'pending', where: 'webmcpHost.pending()', text: JSON.stringify(seen.pending) });
      }
    }
    const error = leakError(findLeaks({ secrets, records: records.concat(extra), endpoints }));
    if (error) throw error;
  };
  return { records, watch, check };
}

const withTimeout = (promise, ms, what) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });

/**
 * Stores an MCP sign-in for the server `name` (at `url`) in the worker's session storage, as
 * `signIn` leaves one, with the OAuth secrets `{access, refresh, secret}`: for tests of what the
 * host does with a signed-in server's tokens, without an authorization server.
 */
export async function storeSignIn(worker, name, url, secrets) {
  await worker.evaluate(async ({ name, url, t }) => {
    await chrome.storage.session.set({ webmcpHostAuth: { [name]: {
      serverUrl: url, resource: url, issuer: 'http://127.0.0.1', tokenEndpoint: 'http://127.0.0.1/token',
      client: { clientId: 'webmcp-host', clientSecret: t.secret },
      tokens: { accessToken: t.access, refreshToken: t.refresh },
      obtainedMs: Date.now(),
    } } });
  }, { name, url, t: secrets });
}

/**
 * Evaluates `expression` in our content script's isolated world of the top frame of `page` and,
 * with `everyFrame`, of each of its other frames after it, as a compromised renderer could,
 * through the DevTools protocol. Resolves to each world's value, the top frame's first.
 */
async function evaluateInWorlds(context, page, expression, everyFrame) {
  const cdp = await context.newCDPSession(page);
  try {
    const contexts = [];
    cdp.on('Runtime.executionContextCreated', (event) => contexts.push(event.context));
    await cdp.send('Runtime.enable');
    const { frameTree } = await cdp.send('Page.getFrameTree');
    const top = (c) => (c.auxData?.frameId === frameTree.frame.id ? 0 : 1);
    const ours = contexts
      .filter((c) => c.auxData?.type === 'isolated' && c.origin.startsWith('chrome-extension://'))
      .filter((c) => everyFrame || top(c) === 0)
      .sort((a, b) => top(a) - top(b));
    if (!ours.length || top(ours[0]) !== 0) throw new Error('the content script has no isolated world in the top frame');
    const values = [];
    for (const world of ours) {
      const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
        contextId: world.id,
        expression,
        awaitPromise: true,
        returnByValue: true,
      });
      if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
      values.push(result.value);
    }
    return values;
  } finally {
    await cdp.detach();
  }
}

/** `expression` in our content script's isolated world of every frame of `page`: each value, the top frame's first. */
export const evaluateInIsolatedWorlds = (context, page, expression) => evaluateInWorlds(context, page, expression, true);

/** `expression` in our content script's isolated world of the page's top frame: its value. */
export async function evaluateInContentScript(context, page, expression) {
  const [value] = await evaluateInWorlds(context, page, expression, false);
  return value;
}

/**
 * The extension's own window that asks the person (`popup.html?view=pending&surface=window`),
 * once it shows a confirmation (one whose text matches `matching`, when given):
 * `{window, item, question, answer(allow)}`; `answer` clicks Allow or Decline.
 */
export async function extensionQuestion(host, matching) {
  const isQuestion = (p) => p.url().startsWith(`chrome-extension://${host.extensionId}/`) && p.url().includes('surface=window');
  const window =
    host.context.pages().find(isQuestion) ??
    (await host.context.waitForEvent('page', { predicate: isQuestion, timeout: 15_000 }));
  const item = window.locator('#pending li.confirmation', matching ? { hasText: matching } : {}).first();
  await item.waitFor({ timeout: 15_000 });
  const question = await item.locator('.pending-question').textContent();
  const answer = (allow) => item.getByRole('button', { name: allow ? 'Allow' : 'Decline' }).click();
  return { window, item, question, answer };
}

/**
 * Opens `url` in a new page of `host` whose every dialog (the browser's `confirm()` of a call)
 * is recorded and refused: `{page, dialogs, tabId}`.
 */
export async function openDeclining(host, url) {
  const page = await host.context.newPage();
  const dialogs = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    d.dismiss().catch(() => {});
  });
  await page.goto(url);
  return { page, dialogs, tabId: await host.tabIdOf(page) };
}

/**
 * Stops the extension's service worker as Chrome does (DevTools' `ServiceWorker.stopAllWorkers`)
 * and resolves once DevTools has reported `stopped`, after the stop was sent, for every version
 * of an extension's worker that was not stopped before it (an event, caught even when an open
 * extension page starts a fresh worker at once; a version that was stopped already, another
 * extension's for one, says nothing of ours). A stop sent while the worker was busy was seen to
 * leave it running: with no such report within 2 s the stop is sent again, 3 times at most,
 * then this throws. A worker already stopped is left so.
 */
export async function stopWorker(context, page) {
  const cdp = await context.newCDPSession(page);
  const status = new Map(); // versionId → runningStatus, of chrome-extension:// workers
  let sent = false;
  const stoppedSince = new Set(); // versions reported stopped after the stop was sent
  let heard = () => {};
  let reported;
  const firstReport = new Promise((resolve) => (reported = resolve));
  cdp.on('ServiceWorker.workerVersionUpdated', ({ versions }) => {
    for (const v of versions) {
      if (!String(v.scriptURL).startsWith('chrome-extension://')) continue;
      status.set(v.versionId, v.runningStatus);
      if (sent && v.runningStatus === 'stopped') stoppedSince.add(v.versionId);
      reported();
    }
    heard();
  });
  await cdp.send('ServiceWorker.enable');
  try {
    // DevTools reports the versions it has after `enable` has answered: the extension's worker
    // is registered, so its report comes (a limit against a hang only).
    let limit;
    const none = new Promise((resolve) => (limit = setTimeout(() => resolve('none'), 30_000)));
    const first = await Promise.race([firstReport, none]);
    clearTimeout(limit);
    if (first === 'none') throw new Error("DevTools reported no extension's service worker");
    // The versions not stopped as reported then: the ones to stop.
    const live = [...status].filter(([, s]) => s !== 'stopped').map(([id]) => id);
    if (live.length === 0) return;
    for (let attempt = 1; attempt <= 3; attempt++) {
      let timer;
      const done = () => live.every((id) => stoppedSince.has(id));
      const reported = new Promise((resolve) => (heard = () => done() && resolve('stopped')));
      sent = true;
      await cdp.send('ServiceWorker.stopAllWorkers');
      if (done()) return;
      const outcome = await Promise.race([reported, new Promise((r) => (timer = setTimeout(() => r('running'), 2_000)))]);
      clearTimeout(timer);
      if (outcome === 'stopped') return;
    }
    throw new Error(`the extension's service worker did not stop: ${JSON.stringify([...status])}`);
  } finally {
    await cdp.detach().catch(() => {});
  }
}

/** Resolves to `check()`'s first truthy value (its rejections count as no), or throws naming `what` after `ms`. */
export async function until(what, check, ms = 10_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
