// The example project: the demo shop's eval suite, one test per case.
//
//   npx playwright test -c example                      all cases, EVAL_WORKERS workers (2)
//   npx playwright test -c example --shard=1/2          half of them (CI machine 1 of 2)
//
// WEBMCP_HOST_EXTENSION (required): the host's release zip (webmcp-host-extension-<version>.zip)
// or an unpacked build of it; CHROMIUM: the browser (default /usr/bin/chromium); SHOP_PORT: the
// shop's port (4173); SHOP_ROOT: the site to serve (default: the shop beside this file).
import { defineConfig } from '@playwright/test';
import { fileURLToPath } from 'node:url';

const port = Number(process.env.SHOP_PORT ?? 4173);
const extension = process.env.WEBMCP_HOST_EXTENSION;
if (!extension) {
  throw new Error('set WEBMCP_HOST_EXTENSION to the host\'s release zip (webmcp-host-extension-<version>.zip) or an unpacked build of the extension');
}

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.mjs',
  // Tests of one file are spread over workers and shards one by one, not file by file.
  fullyParallel: true,
  workers: Number(process.env.EVAL_WORKERS ?? 2),
  timeout: 60_000,
  reporter: process.env.CI ? [['line'], ['junit', { outputFile: 'results/junit.xml' }]] : 'list',
  outputDir: 'results/output',
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    extensionPath: extension,
  },
  webServer: {
    command: 'node serve-shop.mjs',
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    url: `http://127.0.0.1:${port}/`,
    env: { SHOP_PORT: String(port) },
    reuseExistingServer: !process.env.CI,
  },
});
