// The popup and the side panel as a person without a mouse, with a screen reader or in the
// dark finds them: axe-core over every view (light and dark, the popup's 404 px and a wide
// side panel), the new controls by keyboard alone, and the wide side panel's two columns.
// Screenshots go to test-output/.
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

const OUT = join(ROOT, 'test-output');
const AXE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const VIEWS = ['run', 'log', 'pending', 'call', 'inventory', 'audit', 'evals', 'models', 'servers', 'keys'];

describe('accessibility and the wide side panel', () => {
  let server, host, page, tabId;

  const open = async (file, { width, height }, view = 'run') => {
    const surface = await host.context.newPage();
    await surface.setViewportSize({ width, height });
    await surface.goto(`chrome-extension://${host.extensionId}/${file}?tabId=${tabId}&view=${view}`);
    await surface.waitForSelector('body[data-state="ready"]');
    return surface;
  };
  const show = async (surface, view) => {
    await surface.click(`#views button[data-view="${view}"]`);
    await surface.waitForSelector(`body[data-view="${view}"]`);
  };
  /** axe-core's violations on the shown view (evaluated through DevTools: the page's CSP allows no injected script). */
  const violations = async (surface) => {
    if (!(await surface.evaluate(() => typeof window.axe === 'object'))) await surface.evaluate(AXE);
    const found = await surface.evaluate(async () => {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5) }));
    });
    return found;
  };
  /** Fills the Evals view's report: a smoke suite of two cases, one flagged. */
  const evalReport = async (surface) => {
    await show(surface, 'evals');
    const suite = [
      { name: 'finds B-1', messages: [], expectedCall: [{ functionName: 'find_booking', arguments: { code: 'B-1' } }] },
      { name: 'finds B-9', messages: [], expectedCall: [{ functionName: 'find_booking', arguments: { code: 'B-9' } }] },
    ];
    await surface.fill('#evals-file', JSON.stringify(suite));
    await surface.selectOption('#evals-mode', 'smoke');
    await surface.click('#evals-run');
    await surface.waitForSelector('#evals-grid tr[data-case]');
  };

  before(async () => {
    await mkdir(OUT, { recursive: true });
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${server.url}/kinds.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  for (const scheme of ['light', 'dark']) {
    test(`axe-core finds no violation in any view of the popup (${scheme})`, async () => {
      const popup = await open('popup.html', { width: 404, height: 600 });
      try {
        await popup.emulateMedia({ colorScheme: scheme });
        const found = {};
        for (const view of VIEWS) {
          await show(popup, view);
          if (view === 'run') await popup.click('#tools li.tool-row[data-tool="checkout"] summary');
          if (view === 'call') {
            await popup.selectOption('#call-tool', { index: 1 });
            await popup.waitForSelector('#call-form-box:not([hidden])');
          }
          if (view === 'evals') await evalReport(popup);
          const v = await violations(popup);
          if (v.length) found[view] = v;
        }
        await show(popup, 'evals');
        await popup.screenshot({ path: join(OUT, `popup-evals-${scheme}.png`), fullPage: true });
        await show(popup, 'run');
        await popup.screenshot({ path: join(OUT, `popup-run-${scheme}.png`) });
        assert.deepEqual(found, {}, JSON.stringify(found, null, 2));
        // The check can fail: a control without a label is found.
        await popup.evaluate(() => document.getElementById('view-run').append(Object.assign(document.createElement('input'), { id: 'planted' })));
        assert.deepEqual((await violations(popup)).map((v) => v.id), ['label']);
      } finally {
        await popup.close();
      }
    });
  }

  test('keyboard only: a tool found, opened and called; an eval cell opens its result; failures only', async () => {
    const popup = await open('popup.html', { width: 404, height: 600 });
    try {
      await popup.focus('#tool-search');
      await popup.keyboard.type('booking');
      await popup.keyboard.press('Tab'); // to the one row shown
      assert.equal(await popup.evaluate(() => document.activeElement.closest('li')?.dataset.tool), 'find_booking');
      await popup.keyboard.press('Enter');
      assert.equal(await popup.locator('li[data-tool="find_booking"] details').getAttribute('open'), '');
      await popup.keyboard.press('Tab');
      assert.equal(await popup.evaluate(() => document.activeElement.dataset.action), 'call');
      await popup.keyboard.press('Enter');
      await popup.waitForSelector('body[data-view="call"]');
      await popup.waitForSelector('#call-form-box:not([hidden])');
      assert.match(await popup.inputValue('#call-tool'), /find_booking$/);
      await popup.focus('#call-form input');
      await popup.keyboard.type('B-1');
      await popup.keyboard.press('Enter'); // submits the form
      await popup.waitForSelector('#call-result:not([hidden])');
      assert.match(await popup.textContent('#call-result'), /Booking B-1: 2 nights/);

      await evalReport(popup);
      const cell = '#evals-grid tr[data-case="finds B-9"] a.cell';
      await popup.focus(cell);
      await popup.keyboard.press('Enter');
      assert.equal(await popup.evaluate(() => document.activeElement.closest('li')?.id), 'eval-result-1');
      assert.equal(await popup.locator('#eval-result-1 details').getAttribute('open'), '');
      await popup.focus('#evals-failures');
      await popup.keyboard.press('Space');
      assert.equal(await popup.isChecked('#evals-failures'), true);
      // Both passed: failures only hides both (one only flagged).
      assert.equal(await popup.locator('#evals-results li.eval-result:visible').count(), 0);
    } finally {
      await popup.close();
    }
  });

  test('a wide side panel uses its width: the Call form beside its result, the tools beside the conversation', async () => {
    const panel = await open('sidepanel.html', { width: 1000, height: 700 }, 'call');
    try {
      await panel.selectOption('#call-tool', { label: /find_booking/ }).catch(async () => {
        const value = await panel.$eval('#call-tool', (s) => [...s.options].find((o) => o.value.endsWith('find_booking')).value);
        await panel.selectOption('#call-tool', value);
      });
      await panel.waitForSelector('#call-form-box:not([hidden])');
      await panel.fill('#call-form input', 'B-1');
      await panel.click('#call-run');
      await panel.waitForSelector('#call-result:not([hidden])');
      const box = (selector) => panel.$eval(selector, (n) => n.getBoundingClientRect().toJSON());
      const [form, result] = [await box('#call-form-box'), await box('#call-result')];
      assert.ok(form.right <= result.left, `the result (${result.left} px) beside the form (ends ${form.right} px)`);
      assert.ok(result.top < form.bottom, 'side by side, not below');
      await panel.screenshot({ path: join(OUT, 'sidepanel-call-wide.png') });
      await show(panel, 'run');
      const [tools, prompt] = [await box('#tools'), await box('#prompt')];
      assert.ok(tools.right <= prompt.left, `the prompt (${prompt.left} px) beside the tools (end ${tools.right} px)`);
      await panel.screenshot({ path: join(OUT, 'sidepanel-run-wide.png') });
      assert.deepEqual(await violations(panel), []);
      // Narrow, one column again: the result below the form.
      await panel.setViewportSize({ width: 420, height: 700 });
      await show(panel, 'call');
      const [narrowForm, narrowResult] = [await box('#call-form-box'), await box('#call-result')];
      assert.ok(narrowResult.top >= narrowForm.bottom, 'one column when narrow');
    } finally {
      await panel.close();
    }
  });
});
