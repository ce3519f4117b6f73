// Starts Debian's Chromium with the unpacked extension loaded and WebMCP switched on, through
// playwright-core, and gives access to the extension's service worker.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

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
 * `{context, worker, extensionId, tabIdOf(page), close()}` once the host in the worker is ready.
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
  try {
    const isOurs = (w) => w.url().startsWith('chrome-extension://') && w.url().endsWith('/worker.js');
    const worker =
      context.serviceWorkers().find(isOurs) ??
      (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 15_000 }));
    const extensionId = new URL(worker.url()).host;
    await worker.evaluate(() => globalThis.webmcpHost.ready);
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
      close: async () => {
        await context.close();
        await rm(profile, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await context.close();
    await rm(profile, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Evaluates `expression` in our content script's isolated world of the page's top frame, as a
 * compromised renderer could, through the DevTools protocol. Resolves to the value.
 */
export async function evaluateInContentScript(context, page, expression) {
  const cdp = await context.newCDPSession(page);
  try {
    const contexts = [];
    cdp.on('Runtime.executionContextCreated', (event) => contexts.push(event.context));
    await cdp.send('Runtime.enable');
    const { frameTree } = await cdp.send('Page.getFrameTree');
    const ours = contexts.find(
      (c) =>
        c.auxData?.type === 'isolated' &&
        c.auxData?.frameId === frameTree.frame.id &&
        c.origin.startsWith('chrome-extension://'),
    );
    if (!ours) throw new Error('the content script has no isolated world in the top frame');
    const { result, exceptionDetails } = await cdp.send('Runtime.evaluate', {
      contextId: ours.id,
      expression,
      awaitPromise: true,
      returnByValue: true,
    });
    if (exceptionDetails) throw new Error(exceptionDetails.exception?.description ?? exceptionDetails.text);
    return result.value;
  } finally {
    await cdp.detach();
  }
}
