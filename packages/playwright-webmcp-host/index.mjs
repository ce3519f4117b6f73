// playwright-webmcp-host: Playwright Test fixtures and matchers for WebMCP Host.
import { expect as baseExpect, test as base } from '@playwright/test';
import { launchHost } from './lib/launch.mjs';
import { toHaveCalledTool, toPassEvals } from './lib/expect.mjs';

export { launchHost, hostOfPage, QUIET_ARGS, WebmcpHostError } from './lib/launch.mjs';
export { matchesArgument, MatcherError } from './lib/matcher.mjs';
export { callsOf } from './lib/calls.mjs';
export { evalCases, readEvals } from './lib/evals.mjs';

/** `expect` with `toHaveCalledTool` and `toPassEvals`. */
export const expect = baseExpect.extend({ toHaveCalledTool, toPassEvals });

/**
 * `test` with the fixtures: `host` (the host's operations, one browser per worker; also in
 * `beforeAll`), `context`
 * (that browser's persistent context) and `page` (a new page of it for each test, closed after),
 * and the worker options `extensionPath`, `chromiumPath`, `chromiumArgs` and `webmcp`.
 */
export const test = base.extend({
  extensionPath: [process.env.WEBMCP_HOST_EXTENSION || 'extension', { scope: 'worker', option: true }],
  chromiumPath: [process.env.CHROMIUM || '/usr/bin/chromium', { scope: 'worker', option: true }],
  chromiumArgs: [[], { scope: 'worker', option: true }],
  webmcp: [true, { scope: 'worker', option: true }],
  webmcpHost: [
    async ({ extensionPath, chromiumPath, chromiumArgs, webmcp, headless }, use, workerInfo) => {
      const host = await launchHost({ extensionPath, chromiumPath, args: chromiumArgs, webmcp, headless, baseURL: workerInfo.project.use.baseURL });
      try {
        await use(host);
      } finally {
        await host.close();
      }
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  host: [async ({ webmcpHost }, use) => use(webmcpHost), { scope: 'worker' }],
  context: async ({ webmcpHost }, use) => use(webmcpHost.context),
  page: async ({ context }, use) => {
    const page = await context.newPage();
    try {
      await use(page);
    } finally {
      await page.close();
    }
  },
});
