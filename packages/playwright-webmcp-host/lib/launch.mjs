// Launches Chromium with the WebMCP Host extension loaded and WebMCP on, and gives the host's
// operations (`webmcpHost` in the extension's service worker) as `host.X(request)`.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from '@playwright/test';
import { unzip } from './zip.mjs';

/** The flags every launch gets: the machine may have no network, so Chromium is kept quiet. */
export const QUIET_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** An operation of the host failed: `op`, `request` and the host's own `hostMessage`. */
export class WebmcpHostError extends Error {
  name = 'WebmcpHostError';
  constructor(op, request, hostMessage) {
    super(`webmcpHost.${op}(${brief(request)}) failed: ${hostMessage}`);
    this.op = op;
    this.request = request;
    this.hostMessage = hostMessage;
  }
}

const brief = (request) => {
  if (request === undefined) return '';
  let text;
  try {
    text = JSON.stringify(request);
  } catch {
    text = String(request);
  }
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
};

// Hosts by their browser context, for matchers given a page (`expect(page).toPassEvals(…)`).
const hosts = new WeakMap();

/** The host whose browser shows `page` (a Playwright Page), or undefined. */
export const hostOfPage = (page) => (typeof page?.context === 'function' ? hosts.get(page.context()) : undefined);

const isOurs = (w) => w.url().startsWith('chrome-extension://') && w.url().endsWith('/worker.js');

/**
 * Launches Chromium (`chromiumPath`, default `$CHROMIUM` or /usr/bin/chromium) with the
 * extension in `extensionPath` (default `$WEBMCP_HOST_EXTENSION` or ./extension: an unpacked
 * folder, or the release zip, unpacked for the run) in a fresh
 * profile, WebMCP switched on (`webmcp: false` leaves it off). Resolves to the host (see
 * `makeHost`) once the extension's worker is ready; `host.close()` closes the browser and
 * removes the profile.
 */
export async function launchHost({
  extensionPath = process.env.WEBMCP_HOST_EXTENSION || 'extension',
  chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium',
  headless = true,
  args = [],
  webmcp = true,
  viewport = { width: 1000, height: 720 },
  baseURL,
} = {}) {
  if (!(await stat(chromiumPath).catch(() => null))) {
    throw new Error(`no Chromium at ${chromiumPath}: install it (Debian: apt-get install chromium) or set CHROMIUM / chromiumPath`);
  }
  const scratch = await mkdtemp(join(tmpdir(), 'webmcp-host-pw-'));
  const profile = join(scratch, 'profile');
  const removeScratch = () => rm(scratch, { recursive: true, force: true });
  let extension;
  try {
    extension = await unpacked(resolve(extensionPath), scratch);
  } catch (error) {
    await removeScratch();
    throw error;
  }
  let context;
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: chromiumPath,
      headless,
      viewport,
      baseURL,
      args: [
        `--disable-extensions-except=${extension}`,
        `--load-extension=${extension}`,
        webmcp ? '--enable-features=WebMCP' : '--disable-features=WebMCP',
        ...QUIET_ARGS,
        ...args,
      ],
    });
    const worker =
      context.serviceWorkers().find(isOurs) ??
      (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 15_000 }));
    await worker.evaluate(() => globalThis.webmcpHost.ready);
    const operations = await worker.evaluate(() => globalThis.webmcpHost.operations());
    const host = makeHost(context, new URL(worker.url()).host, operations, async () => {
      await context.close();
      await removeScratch();
    });
    hosts.set(context, host);
    return host;
  } catch (error) {
    await context?.close().catch(() => {});
    await removeScratch();
    throw error;
  }
}

/**
 * The unpacked extension of `path`: the folder itself, or a release zip unpacked into
 * `scratch` (beside the profile, both removed at close); an error says what is missing.
 */
async function unpacked(path, scratch) {
  const found = await stat(path).catch(() => null);
  if (!found) throw new Error(`no extension at ${path}: give extensionPath (or WEBMCP_HOST_EXTENSION) an unpacked extension folder or the release zip (webmcp-host-extension-<version>.zip)`);
  let folder = path;
  if (found.isFile()) {
    folder = join(scratch, 'extension');
    await unzip(path, folder);
  }
  if (!(await stat(join(folder, 'manifest.json')).catch(() => null))) {
    throw new Error(`no built extension in ${path} (no manifest.json): give the release zip or an unpacked build (make build writes extension/)`);
  }
  return folder;
}

/**
 * The host object: `host.X(request)` for every operation the extension lists
 * (`host.operations`), performed in its service worker and resolving to the operation's value
 * or throwing a `WebmcpHostError` with the host's message. A request may give `page` (a
 * Playwright Page) in place of `tabId`. Also: `context`, `extensionId`, `worker()` (the
 * current service worker), `tabIdOf(page)`, `call(op, request)`, `evaluateInWorker(fn, arg)`,
 * `close()`.
 */
function makeHost(context, extensionId, operations, closeAll) {
  const worker = async () =>
    context.serviceWorkers().find(isOurs) ??
    context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 15_000 }).catch(() => {
      throw new Error('the extension has no service worker running (it did not start again within 15 s)');
    });

  const tabIdOf = async (page) => {
    const url = page.url();
    const found = await (await worker()).evaluate(async (url) => {
      const ids = [];
      for (const tab of await chrome.tabs.query({})) {
        const top = await chrome.webNavigation.getFrame({ tabId: tab.id, frameId: 0 }).catch(() => null);
        if (top?.url === url) ids.push(tab.id);
      }
      return ids;
    }, url);
    if (found.length === 1) return found[0];
    if (!found.length) throw new Error(`no tab shows ${url} (has the page loaded?)`);
    throw new Error(`${found.length} tabs show ${url}: give each page its own URL, or close the others`);
  };

  const call = async (op, request) => {
    if (!operations.includes(op)) {
      throw new WebmcpHostError(op, request, `not an operation of this host (its operations: ${operations.join(', ')})`);
    }
    let sent = request;
    if (request && typeof request === 'object' && typeof request.page?.url === 'function') {
      const { page, ...rest } = request;
      sent = { ...rest, tabId: await tabIdOf(page) };
    }
    try {
      return await (await worker()).evaluate(([op, request]) => globalThis.webmcpHost[op](request), [op, sent]);
    } catch (error) {
      throw new WebmcpHostError(op, sent, hostMessage(error));
    }
  };

  const fixed = {
    context,
    extensionId,
    operations,
    worker,
    tabIdOf,
    call,
    /** Evaluates `fn(arg)` in the extension's service worker (`webmcpHost` is a global there). */
    evaluateInWorker: async (fn, arg) => (await worker()).evaluate(fn, arg),
    close: async () => {
      hosts.delete(context);
      await closeAll();
    },
  };
  return new Proxy(fixed, {
    get: (target, name) => {
      if (Object.hasOwn(target, name)) return target[name];
      if (typeof name === 'string' && operations.includes(name)) return (request) => call(name, request);
      return undefined;
    },
    has: (target, name) => Object.hasOwn(target, name) || operations.includes(name),
  });
}

/** The host's message out of a Playwright evaluate error (no Playwright prefix, no worker stack). */
function hostMessage(error) {
  const text = String(error?.message ?? error);
  const first = text.replace(/^[\w.]*evaluate: /, '').replace(/^(Type|Range)?Error: /, '');
  return first.split('\n    at ')[0].trim();
}
