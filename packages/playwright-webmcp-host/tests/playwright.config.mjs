// The package's own tests: `npx playwright test -c packages/playwright-webmcp-host/tests`.
// One worker: the browser tests share the machine with the other browser suites.
import { defineConfig } from '@playwright/test';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.mjs',
  workers: 1,
  timeout: 60_000,
  reporter: process.env.CI ? 'line' : 'list',
  outputDir: resolve(ROOT, 'target', 'playwright-webmcp-host', 'results'),
  use: {
    extensionPath: resolve(ROOT, 'extension'),
  },
});
