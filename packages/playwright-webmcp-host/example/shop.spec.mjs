// Each case of the eval suite is one Playwright test, so workers run cases side by side and
// `--shard=i/n` gives each CI machine its share of the cases.
import { fileURLToPath } from 'node:url';
import { evalCases, expect, test } from 'playwright-webmcp-host';

const SUITE = fileURLToPath(new URL('./shop.evals.json', import.meta.url));

for (const { title, index } of evalCases(SUITE)) {
  test(title, async ({ page }) => {
    // This test profile allows the shop's consequential tool (add_to_cart): its confirmation
    // in the page is accepted.
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto('/');
    await expect(page).toPassEvals(SUITE, { mode: 'smoke', cases: [index] });
  });
}
