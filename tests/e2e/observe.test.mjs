// Tokens, cost and bug reports in the extension: a run against the scripted model (which reports
// usage in each provider's wire format) shows its tokens and cost in the popup's Run view, summed
// over its conversation (screenshot: test-output/run-usage.png); `bugReport({runId})` and the
// popup's "Save bug report" give one JSON file with the run's events, the tab's tools and mode,
// versions and masked settings, and no key.
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { validateRunEvents as validateEvents } from '../agui/validate.mjs';

const SCENARIOS = {
  add: { steps: [{ calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] }, { text: 'The sum is 42.' }], after: 'repeat' },
};

describe('tokens, cost and bug reports', () => {
  let site, models, host, page, tabId, popup;
  const configure = (config) => host.worker.evaluate((c) => webmcpHost.configure(c), config);
  const model = (name, provider, scenario) => ({
    name,
    provider,
    baseUrl: provider === 'gemini' ? `${models.url}/s/${scenario}/v1beta` : provider === 'anthropic' ? `${models.url}/s/${scenario}` : `${models.url}/s/${scenario}/v1`,
    model: `${provider}-test`,
    nativeTools: true,
    keyRef: 'canary',
  });

  before(async () => {
    site = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await page.goto(`${site.url}/tools.html`);
    tabId = await host.tabIdOf(page);
  });
  after(async () => {
    await host?.close();
    await models?.close();
    await site?.close();
  });

  for (const provider of ['openai', 'anthropic', 'gemini']) {
    test(`${provider}: the run answer and its events carry the tokens the stream reported`, async () => {
      await configure({ models: [model(provider, provider, `add~${provider}`)], default: provider, prices: { [provider]: { input: 3, output: 15 } } });
      const result = await host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt: 'What is 2 + 40?' });
      const { ok, errors } = await validateEvents(result.events);
      assert.ok(ok, JSON.stringify(errors, null, 2));
      const usage = result.events.filter((e) => e.type === 'CUSTOM' && e.name === 'webmcp_host.usage');
      assert.equal(usage.length, 2, 'one usage event per model step');
      const sent = models.requests().filter((r) => r.scenario === `add~${provider}` && r.method === 'POST');
      if (provider === 'openai') assert.deepEqual(sent[0].body.stream_options, { include_usage: true });
      for (const [i, event] of usage.entries()) {
        assert.equal(event.value.usage, 'reported');
        assert.ok(event.value.inputTokens > 0 && event.value.outputTokens > 0, JSON.stringify(event.value));
        assert.equal(event.value.cost, (event.value.inputTokens * 3 + event.value.outputTokens * 15) / 1e6);
        assert.equal(event.value.step, i + 1);
      }
      assert.equal(result.usage.inputTokens, usage[0].value.inputTokens + usage[1].value.inputTokens);
      assert.equal(result.usage.steps, 2);
    });
  }

  test('replay has no usage: unknown, never 0', async () => {
    const transcript = JSON.stringify({ text: 'Hi.' });
    await configure({ models: [{ name: 'replay', provider: 'replay', transcript }], default: 'replay' });
    const result = await host.worker.evaluate((r) => webmcpHost.run(r), { tabId, prompt: 'Hi' });
    assert.equal(result.usage, null);
    const usage = result.events.find((e) => e.name === 'webmcp_host.usage');
    assert.equal(usage.value.usage, 'unknown');
    assert.equal(usage.value.inputTokens, null);
  });

  test('a run without a tab, the only one kept, is picked in the popup opened over another tab', async () => {
    const fresh = await launchHost();
    try {
      await fresh.worker.evaluate((c) => webmcpHost.configure(c), { models: [{ name: 'replay', provider: 'replay', transcript: JSON.stringify({ text: 'No tab needed.' }) }], default: 'replay' });
      const other = await fresh.context.newPage();
      await other.goto(`${site.url}/tools.html`);
      const otherTab = await fresh.tabIdOf(other);
      const { runId } = await fresh.worker.evaluate(() => webmcpHost.run({ prompt: 'Hello' }));
      const view = await fresh.context.newPage();
      await view.goto(`chrome-extension://${fresh.extensionId}/popup.html?tabId=${otherTab}&view=log`);
      await view.waitForSelector('body[data-state="ready"]');
      // The tab has no run, so none is shown: the list says so rather than seeming to show the run.
      assert.equal(await view.$eval('#run-select', (s) => s.selectedOptions[0].textContent), 'Pick a run (1 kept)');
      assert.equal(await view.evaluate(() => document.body.dataset.run ?? 'none'), 'none', 'no run shown');
      await view.selectOption('#run-select', runId);
      await view.waitForFunction(() => document.body.dataset.run === 'finished');
      await view.locator(`#timeline[data-run-id="${runId}"] .tl-answer`).waitFor();
      assert.equal(await view.$eval('#run-select', (s) => s.value), runId);
      assert.equal(await view.locator('#run-select option[value=""]').count(), 0, 'the hint goes once a run is shown');
    } finally {
      await fresh.close();
    }
  });

  test("the popup's run view shows a run's tokens and cost, and its conversation's (screenshot)", async () => {
    await configure({ models: [model('scripted', 'openai', 'add~popup')], default: 'scripted', prices: { scripted: { input: 2.5, output: 10, cachedInput: 1.25 } } });
    popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 900 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}`);
    await popup.waitForSelector('body[data-state="ready"]');
    for (const prompt of ['What is 2 + 40?', 'And again?']) {
      await popup.fill('#prompt', prompt);
      await popup.click('#run');
      await popup.waitForFunction(() => document.body.dataset.run === 'finished' && /tokens in/.test(document.querySelector('#run-usage').textContent));
    }
    await popup.waitForFunction(() => /This conversation \(2 runs\)/.test(document.querySelector('#conversation-usage').textContent));
    const runText = await popup.textContent('#run-usage');
    assert.match(runText, /^This run: [\d,]+ tokens in · [\d,]+ out · \$\d/);
    assert.match(await popup.textContent('#conversation-usage'), /tokens in · [\d,]+ out · \$\d/);
    await mkdir(join(ROOT, 'test-output'), { recursive: true });
    const png = await popup.screenshot({ path: join(ROOT, 'test-output', 'run-usage.png'), fullPage: true });
    assert.ok(png.length > 10_000);

    // The log's timeline shows each step's tokens and cost, from the run's usage events.
    const runs = await host.worker.evaluate((t) => webmcpHost.runs({ tabId: t }), tabId);
    const shown = runs.find((r) => r.prompt === 'What is 2 + 40?'); // the popup's first: a call, then the answer
    const log = await host.context.newPage();
    await log.setViewportSize({ width: 480, height: 900 });
    await log.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tabId}&view=log`);
    await log.waitForSelector('body[data-state="ready"]');
    await log.selectOption('#run-select', shown.runId);
    // The log first shows the latest run: wait for the timeline of the run picked.
    const shownTimeline = `#timeline[data-run-id="${shown.runId}"]`;
    await log.locator(`${shownTimeline} .tl-answer`).waitFor();
    const tokens = await log.locator(`${shownTimeline} .tl-step .tl-tokens`).allTextContents();
    assert.equal(tokens.length, 2);
    for (const text of tokens) assert.match(text, /^\d+ in · \d+ out · \$\d+\.\d{6}$/);
    await log.screenshot({ path: join(ROOT, 'test-output', 'timeline-tokens.png'), fullPage: true });
    await log.close();
  });

  test('a bug report holds the run, the tab and the versions, and no key', async () => {
    const [latest] = await host.worker.evaluate((tabId) => webmcpHost.runs({ tabId }), tabId);
    await page.bringToFront();
    const { fileName, report } = await host.worker.evaluate((runId) => webmcpHost.bugReport({ runId }), latest.runId);
    assert.equal(fileName, `webmcp-host-bug-${latest.runId}.json`);
    assert.equal(report.format, 'webmcp-host-bug-report/1');
    assert.equal(report.runId, latest.runId);
    assert.ok(report.events.some((e) => e.type === 'RUN_FINISHED'));
    assert.equal(report.events.length, report.times.length);
    // The run's timeline, as the popup's log shows it: the prompt, each step's tokens, the answer.
    assert.equal(report.timeline.prompt, latest.prompt);
    assert.equal(report.timeline.state, 'finished');
    assert.equal(report.timeline.answer, report.events.find((e) => e.type === 'RUN_FINISHED').result.text);
    assert.equal(report.timeline.events, report.events.length);
    for (const entry of report.timeline.entries) assert.equal(entry.tokens?.usage, 'reported', JSON.stringify(entry));
    assert.equal(report.page.url, `${site.url}/tools.html`);
    // Chrome hides the tab's title from an extension without `tabs`: the page's own is given.
    assert.equal(report.page.title, 'Fixture: page tools');
    assert.equal(report.webmcp, 'native');
    assert.ok(report.tools.tools.some((t) => t.name === 'add'));
    assert.ok(report.audit && !report.audit.error, JSON.stringify(report.audit).slice(0, 300));
    assert.match(report.chrome.version, /^\d+\.\d+/);
    assert.equal(report.extension.version, await host.worker.evaluate(() => chrome.runtime.getManifest().version));
    assert.ok(report.settings.keys.some((k) => k.ref === 'canary' && !k.masked.includes(host.canary.value)));
    // Chrome gives the screenshot with host access to the page or activeTab (the toolbar
    // button); otherwise the report says why there is none.
    assert.ok(report.screenshot?.startsWith('data:image/png;base64,') || report.screenshotError, JSON.stringify(report.screenshotError));
    assert.ok(!JSON.stringify(report).includes(host.canary.value), 'the canary key is in no part of the report');
    console.log(`# bug report: ${JSON.stringify(report).length} bytes; screenshot: ${report.screenshot ? 'yes' : report.screenshotError}`);

    // A run that called a tool: its timeline holds the call, its arguments and result.
    const runs = await host.worker.evaluate((t) => webmcpHost.runs({ tabId: t }), tabId);
    const withCall = runs.find((r) => r.prompt === 'What is 2 + 40?');
    const called = (await host.worker.evaluate((runId) => webmcpHost.bugReport({ runId }), withCall.runId)).report;
    const steps = called.timeline.entries.filter((e) => e.kind === 'step');
    assert.equal(steps.length, 2, JSON.stringify(called.timeline.entries).slice(0, 500));
    assert.deepEqual(steps[0].calls.map((c) => [c.name, c.args, c.result]), [['add', { a: 2, b: 40 }, '42']]);
    assert.equal(called.timeline.answer, 'The sum is 42.');
    assert.ok(!JSON.stringify(called).includes(host.canary.value));
  });

  test('"Save bug report" in the popup saves the shown run\'s report as one file', async () => {
    await popup.bringToFront();
    const [download] = await Promise.all([popup.waitForEvent('download'), popup.click('#bug-report')]);
    assert.match(download.suggestedFilename(), /^webmcp-host-bug-.+\.json$/);
    const report = JSON.parse(await readFile(await download.path(), 'utf8'));
    assert.equal(report.format, 'webmcp-host-bug-report/1');
    assert.ok(!JSON.stringify(report).includes(host.canary.value));
  });
});
