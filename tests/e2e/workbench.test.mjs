// The manual testing workbench, driven through the popup as a person would: a tool called by
// hand from a form generated from its schema (every schema feature; nested objects and arrays),
// kept in sync with its JSON, checked by the host before anything is sent (bad input never
// reaches the page: its spy sees no call); a consequential tool confirmed in the page; a
// navigating tool with its destination; the history run again, edited and copied as a
// Playwright snippet (which runs); every tab's tools searched, a tool redefined after load
// flagged with the difference; "why no tools?" for a Permissions-Policy `tools=()` page, a
// cross-origin frame without `allow="tools"` and a browser with WebMCP off; a run read as a
// timeline, the raw events one click away; keyboard-only use in the dark theme. The page never
// sees the canary key (launchHost checks every request and message at close).
// Screenshots go to test-output/workbench-*.png.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { CANARY, launchHost, ROOT, until } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';
import { startModelServer } from '../support/model-server.mjs';

const OUT = join(ROOT, 'test-output');

const SCENARIOS = {
  // The call is written broken (a string for an integer, cut JSON): repair fixes it.
  guest: {
    steps: [
      { text: 'Registering.', calls: [{ name: 'register_guest', arguments: '{"email": "a@b.test", "seats": "2"' }] },
      { text: 'Registered ', chunk: 4 },
    ],
  },
};

describe('workbench', () => {
  let pages, models, host, page, tabId, popup;

  const shot = async (target, name) => (await target.bringToFront(), target).screenshot({ path: join(OUT, `workbench-${name}.png`), fullPage: true });
  const openPopup = async (tab, query = '', context = host.context) => {
    const opened = await context.newPage();
    await opened.setViewportSize({ width: 480, height: 900 });
    await opened.goto(`chrome-extension://${host.extensionId}/popup.html?tab=${tab}${query}`);
    await opened.waitForSelector('body[data-state="ready"]');
    return opened;
  };
  const view = async (target, name) => {
    await target.click(`#views button[data-view="${name}"]`);
    await target.waitForSelector(`body[data-view="${name}"]`);
  };
  const choose = async (name) => {
    await popup.waitForSelector(`#call-tool option[value$="${name}"]`, { state: 'attached' });
    const value = await popup.$eval('#call-tool', (s, n) => [...s.options].find((o) => o.value.endsWith(`\u0000${n}`)).value, name);
    await popup.selectOption('#call-tool', value);
    await popup.waitForSelector('#call-form-box:not([hidden])');
  };
  const field = (path) => popup.locator(`#call-form [data-path="${path}"]`).first();
  const input = (path) => field(path).locator('input, select, textarea').first();
  const calls = (target = page) => target.evaluate(() => window.__calls);
  const args = async () => JSON.parse(await popup.inputValue('#call-json'));

  before(async () => {
    await mkdir(OUT, { recursive: true });
    pages = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    page = await host.context.newPage();
    await page.goto(`${pages.url}/workbench/tools.html`);
    tabId = await host.tabIdOf(page);
    popup = await openPopup(tabId, '&view=call');
  });
  after(async () => {
    await host?.close();
    await Promise.all([models?.close(), pages?.close()]);
  });

  test('every schema feature as a form, in sync with its JSON; bad input never reaches the page', async () => {
    await choose('register_guest');
    // Required marks, defaults, descriptions, formats, patterns, bounds, enums, booleans, arrays.
    assert.equal(await field('/email').locator('.required').count(), 1);
    assert.equal(await field('/code').locator('.required').count(), 0);
    assert.equal(await input('/seats').inputValue(), '1', 'the default');
    assert.match(await field('/email').textContent(), /Where the ticket goes\.[\s\S]*format: email/);
    assert.match(await field('/code').textContent(), /pattern: \^\[A-Z\]\{3\}\$/);
    assert.match(await field('/seats').textContent(), /≥ 1 · ≤ 4/);
    assert.deepEqual(await input('/size').locator('option').allTextContents(), ['— unset —', 'S', 'M', 'L']);
    assert.equal(await input('/vegetarian').getAttribute('type'), 'checkbox');
    assert.deepEqual(await args(), { seats: 1 }, 'the JSON follows the form');

    await input('/email').fill('not-an-email');
    await input('/code').fill('abc');
    await input('/seats').fill('9');
    await input('/budget').fill('cheap');
    await input('/size').selectOption({ label: 'M' });
    await input('/vegetarian').check();
    await popup.click('#call-form [data-path="/tags"] > button');
    await popup.click('#call-form [data-path="/tags"] > button');
    await input('/tags/0').fill('vip');
    await input('/tags/1').fill('early');
    assert.deepEqual(await args(), { email: 'not-an-email', code: 'abc', seats: 9, budget: 'cheap', vegetarian: true, size: 'M', tags: ['vip', 'early'] });

    await popup.click('#call-run');
    await popup.locator('#call-status.error').waitFor();
    assert.match(await popup.textContent('#call-status'), /Not sent: 4 errors/);
    for (const path of ['/email', '/code', '/seats', '/budget']) {
      assert.notEqual(await field(path).locator('.field-error').textContent(), '', `an error at ${path}`);
      assert.equal(await input(path).getAttribute('aria-invalid'), 'true');
    }
    assert.equal(await field('/tags').locator(':scope > .field-error').textContent(), '');
    await shot(popup, 'call-errors');
    assert.deepEqual(await calls(), [], 'the page saw no call');

    // The JSON editor drives the form; a JSON that does not parse is never sent.
    await popup.fill('#call-json', '{"email": "ada@example.org", "code": "ABC", "seats": 2, "size": "L"}');
    assert.equal(await input('/email').inputValue(), 'ada@example.org');
    assert.equal(await input('/size').inputValue(), '2');
    assert.equal(await input('/vegetarian').isChecked(), false);
    await popup.fill('#call-json', '{"email": ');
    assert.match(await popup.textContent('#call-json-status'), /Not JSON/);
    await popup.click('#call-run');
    await popup.locator('#call-status', { hasText: 'not JSON' }).waitFor();
    assert.deepEqual(await calls(), [], 'still no call');

    await popup.fill('#call-json', '{"email": "ada@example.org", "code": "ABC", "seats": 2, "size": "L"}');
    await popup.click('#call-run');
    await popup.locator('#call-result .call-output').waitFor();
    assert.deepEqual(JSON.parse(await popup.textContent('#call-result .call-output')), {
      received: { email: 'ada@example.org', code: 'ABC', seats: 2, size: 'L' },
    });
    assert.match(await popup.textContent('#call-result'), /register_guest · \d+ ms · done/);
    assert.equal(await field('/email').locator('.field-error').textContent(), '', 'errors cleared');
    assert.deepEqual(await calls(), [{ name: 'register_guest', input: { email: 'ada@example.org', code: 'ABC', seats: 2, size: 'L' } }]);
    await shot(popup, 'call-result');
  });

  test('a form of nested objects and arrays: errors at the nested fields, then sent whole', async () => {
    await choose('plan_trip');
    await input('/traveller/name').fill('Ada');
    await popup.click('#call-form [data-path="/stops"] > button');
    await input('/stops/0/place').fill('Bergen');
    await input('/stops/0/nights').fill('0');
    await input('/traveller/address/zip').fill('12');
    await popup.click('#call-run');
    await popup.locator('#call-status.error').waitFor();
    assert.match(await field('/traveller/address/city').locator('.field-error').textContent(), /required/);
    assert.notEqual(await field('/stops/0/nights').locator('.field-error').textContent(), '');
    assert.notEqual(await field('/traveller/address/zip').locator('.field-error').textContent(), '');
    const before = (await calls()).length;

    await input('/traveller/address/city').fill('Oslo');
    await input('/traveller/address/zip').fill('0150');
    await input('/stops/0/nights').fill('2');
    await popup.click('#call-form [data-path="/stops"] > button');
    await input('/stops/1/place').fill('Tromsø');
    await popup.click('#call-form [data-path="/stops/0"] ~ button, #call-form li[data-index="0"] > button');
    assert.deepEqual((await args()).stops, [{ place: 'Tromsø' }], 'an item removed, the rest renumbered');
    await popup.click('#call-run');
    await popup.locator('#call-result .call-output').waitFor();
    assert.deepEqual((await calls()).slice(before), [
      { name: 'plan_trip', input: { traveller: { name: 'Ada', address: { city: 'Oslo', zip: '0150' } }, stops: [{ place: 'Tromsø' }] } },
    ]);
    await shot(popup, 'call-nested');
  });

  test('a consequential tool is confirmed in the page; a navigating tool shows where it went and the tools there', async () => {
    const dialogs = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      dialog.dismiss();
    });
    await choose('delete_item');
    await input('/id').fill('x-1');
    await popup.click('#call-run');
    await popup.locator('#call-result .call-error').waitFor();
    assert.match(await popup.textContent('#call-result .call-error'), /declined/);
    assert.ok(dialogs[0]?.includes('delete_item'), 'asked in the page');
    assert.equal((await calls()).filter((c) => c.name === 'delete_item').length, 0);

    page.once('dialog', (dialog) => dialog.accept());
    await popup.click('#call-run');
    await popup.locator('#call-result .call-output').waitFor();
    assert.equal((await calls()).filter((c) => c.name === 'delete_item').length, 1);

    await choose('go_next');
    try {
      await popup.click('#call-run');
      // The call settles once the page left (at most the call's 30 s) and the destination loaded.
      await popup.locator('#call-result', { hasText: 'navigated' }).waitFor({ timeout: 45_000 });
      assert.match(await popup.textContent('#call-result'), /workbench\/next\.html[\s\S]*Its tools: next_tool/);
      await shot(popup, 'call-navigated');
    } finally {
      await page.goto(`${pages.url}/workbench/tools.html`);
      await popup.click('#call-reload');
      await choose('register_guest');
    }
  });

  test('the history: run again, edit, and a Playwright snippet that makes the same call', async () => {
    const items = popup.locator('#call-history li');
    assert.ok((await items.count()) >= 5);
    assert.deepEqual(
      await popup.$$eval('#call-history li', (li) => li.map((l) => l.dataset.tool).slice(0, 3)),
      ['go_next', 'delete_item', 'delete_item'],
    );
    const guest = popup.locator('#call-history li[data-tool="register_guest"]').first();
    assert.match(await guest.locator('.call-args').textContent(), /ada@example\.org/);
    // The history keeps what the call answered, not only what it sent.
    assert.match(await guest.locator('.call-result').textContent(), /^→ \{"received":\{.*"email":"ada@example\.org"/);
    const before = (await calls()).length;
    await guest.locator('button', { hasText: 'Run again' }).click();
    await until('the call ran again', async () => (await calls()).length === before + 1);
    assert.equal((await calls()).at(-1).input.email, 'ada@example.org');

    await popup.locator('#call-history li[data-tool="plan_trip"]').first().locator('button', { hasText: 'Edit' }).click();
    assert.equal(await input('/traveller/name').inputValue(), 'Ada');
    assert.equal(await popup.evaluate(() => document.activeElement?.closest('[data-path]')?.dataset.path), '/traveller/name');

    const first = popup.locator('#call-history li[data-tool="register_guest"]').first();
    await first.locator('button', { hasText: 'Copy as Playwright' }).click();
    const snippet = await first.locator('.snippet').textContent();
    // The package's form: host.callTool({page, name, args}), with no tab id to find.
    assert.match(snippet, /^const outcome = await host\.callTool\(\{ page, "name":"register_guest","args":\{/m);
    assert.doesNotMatch(snippet, /tabId|worker\.evaluate/);
    // Run as the package runs it: `page` names the tab (playwright-webmcp-host's callTool).
    const packageHost = {
      callTool: async ({ page: shown, ...request }) =>
        host.worker.evaluate((r) => webmcpHost.callTool(r), { ...request, tabId: await host.tabIdOf(shown) }),
    };
    const AsyncFunction = (async () => {}).constructor;
    const outcome = await new AsyncFunction('host', 'page', `${snippet}\nreturn outcome;`)(packageHost, page);
    assert.equal(outcome.ok, true, JSON.stringify(outcome));
    assert.equal((await calls()).at(-1).input.email, 'ada@example.org');
    await shot(popup, 'call-history');
  });

  test('validateArguments for scripts: against a tab tool or a given schema', async () => {
    const bad = await host.worker.evaluate((t) => webmcpHost.validateArguments({ tabId: t, name: 'register_guest', args: { email: 'x', seats: 0, extra: 1 } }), tabId);
    assert.equal(bad.valid, false);
    assert.deepEqual(bad.errors.map((e) => e.path).sort(), ['', '/email', '/seats']);
    const good = await host.worker.evaluate(() => webmcpHost.validateArguments({ inputSchema: { type: 'object', required: ['q'] }, args: { q: 1 } }));
    assert.deepEqual(good, { valid: true, errors: [] });
    const missing = await host.worker.evaluate(() => webmcpHost.validateArguments({ inputSchema: { type: 'object', required: ['q'] }, args: {} }));
    assert.deepEqual(missing.errors, [{ path: '/q', message: 'required' }]);
    await assert.rejects(host.worker.evaluate((t) => webmcpHost.validateArguments({ tabId: t, name: 'nope', args: {} }), tabId), /no page tool named `nope`/);
    await assert.rejects(host.worker.evaluate(() => webmcpHost.validateArguments({ args: {} })), /validateArguments: `tabId` and `name`/);
  });

  test("every tab's tools: two tabs, searched; a tool redefined after load is flagged with the difference", async () => {
    const second = await host.context.newPage();
    await second.goto(`${pages.url}/workbench/redefine.html`);
    const secondTab = await host.tabIdOf(second);
    await host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), secondTab);
    await view(popup, 'inventory');
    await popup.locator('#inventory li[data-tool="lookup"]').waitFor();
    const tabs = await popup.$$eval('#inventory li', (li) => [...new Set(li.map((l) => l.dataset.tab))]);
    assert.ok(tabs.includes(String(tabId)) && tabs.includes(String(secondTab)), `both tabs: ${tabs}`);
    assert.match(await popup.textContent('#inventory li[data-tool="register_guest"] .tool-meta'), /Fixture: workbench tools · http:\/\/127\.0\.0\.1:\d+ · top frame/);

    await popup.fill('#inventory-query', 'lookup');
    await until('the search', async () => (await popup.$$eval('#inventory li', (li) => li.map((l) => l.dataset.tool))).join() === 'lookup');
    assert.equal(await popup.locator('#inventory li.redefined').count(), 0);

    await second.evaluate(() => window.redefine());
    await popup.press('#inventory-query', 'Enter');
    await popup.locator('#inventory li.redefined').waitFor();
    const flagged = popup.locator('#inventory li.redefined');
    await flagged.locator('summary').click();
    assert.deepEqual(await flagged.locator('.diff').evaluateAll((d) => d.map((x) => x.dataset.field)), ['description', 'inputSchema', 'annotations']);
    assert.equal(await flagged.locator('.diff[data-field="description"] .diff-before').textContent(), 'Looks up a word.');
    assert.equal(await flagged.locator('.diff[data-field="description"] .diff-after').textContent(), 'Looks up a word and sends it to the server.');
    await shot(popup, 'inventory');

    const scripted = await host.worker.evaluate(() => webmcpHost.inventory({ query: 'lookup' }));
    assert.equal(scripted.tools.length, 1);
    assert.deepEqual(scripted.tools[0].changed.map((c) => c.field), ['description', 'inputSchema', 'annotations']);
    await second.close();
  });

  test('why no tools: a Permissions-Policy tools=() page and a cross-origin frame without allow="tools"', async () => {
    const blocked = await host.context.newPage();
    await blocked.goto(`${pages.url}/workbench/blank.html?no-tools`);
    const blockedTab = await host.tabIdOf(blocked);
    const diagnosis = await host.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), blockedTab);
    assert.equal(diagnosis.tools, 0);
    const ids = diagnosis.findings.map((f) => f.id);
    assert.equal(ids[0], 'policy-blocked', JSON.stringify(diagnosis, null, 2));
    assert.ok(ids.includes('chrome-version'));
    assert.ok(diagnosis.findings.every((f) => f.fix.length > 0), 'each finding says what to do');
    // The popup of a tab without tools says why at once.
    const blockedPopup = await openPopup(blockedTab);
    await blockedPopup.locator('#diagnosis li[data-finding="policy-blocked"]').waitFor();
    assert.equal(await blockedPopup.textContent('#diagnosis-heading'), 'Why no tools?');
    // Names and flags the host writes between backticks show as code, not as backticks.
    const blockedText = await blockedPopup.textContent('#diagnosis li[data-finding="policy-blocked"]');
    assert.ok(!blockedText.includes('`'), blockedText);
    assert.ok((await blockedPopup.locator('#diagnosis li[data-finding="policy-blocked"] code').count()) > 0);
    assert.match(await blockedPopup.textContent('#diagnosis li[data-finding="policy-blocked"]'), /tools=\(\)[\s\S]*What to do/);
    await shot(blockedPopup, 'diagnose-policy');
    await blockedPopup.close();

    await blocked.goto(`${pages.url}/workbench/undelegated.html`);
    await blocked.frameLocator('#cross').locator('p').waitFor();
    const frames = await host.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), blockedTab);
    const frame = frames.findings.find((f) => f.id === 'frame-not-delegated');
    assert.ok(frame, JSON.stringify(frames, null, 2));
    assert.match(frame.message, /http:\/\/localhost:\d+/);
    assert.match(frame.fix, /allow="tools"/);
    // On demand, from the Run view.
    const framesPopup = await openPopup(blockedTab);
    await framesPopup.click('#diagnose');
    await framesPopup.locator('#diagnosis li[data-finding="frame-not-delegated"]').waitFor();
    await shot(framesPopup, 'diagnose-frame');
    await framesPopup.close();
    await blocked.close();
    await assert.rejects(host.worker.evaluate(() => webmcpHost.diagnose({})), /diagnose: `tabId` is required/);
  });

  // A WebMCP origin-trial token as Chrome's tools write one (version 3, an unchecked signature,
  // the payload's length, the payload), for the page's meta tag.
  const trialToken = (claims) => {
    const payload = Buffer.from(JSON.stringify(claims));
    const length = Buffer.alloc(4);
    length.writeUInt32BE(payload.length);
    return Buffer.concat([Buffer.from([3]), Buffer.alloc(64), length, payload]).toString('base64');
  };

  test("why no tools: the page's origin-trial tokens, the flag this Chrome needs, a site-keyed agent cluster", async () => {
    const tab = await host.context.newPage();
    await tab.goto(`${pages.url}/workbench/blank.html?site-keyed`);
    const tabId = await host.tabIdOf(tab);
    const origin = new URL(pages.url).origin;
    await tab.evaluate((tokens) => {
      for (const content of tokens) {
        const meta = document.createElement('meta');
        meta.httpEquiv = 'origin-trial';
        meta.content = content;
        document.head.append(meta);
      }
    }, [
      trialToken({ origin, feature: 'WebMCP', expiry: Date.UTC(2026, 10, 17) / 1000 }),
      trialToken({ origin: 'https://elsewhere.test', feature: 'WebMCP', expiry: Math.floor(Date.now() / 1000) + 86_400 * 30 }),
    ]);
    const diagnosis = await host.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), tabId);
    const of = (id) => diagnosis.findings.find((f) => f.id === id);
    assert.match(of('origin-trial-expired')?.message ?? '', /WebMCP .* expired on 2026-11-17/, JSON.stringify(diagnosis, null, 2));
    assert.match(of('origin-trial-origin')?.message ?? '', /https:\/\/elsewhere\.test/);
    assert.match(of('origin-agent-cluster')?.message ?? '', /originAgentCluster/);
    const version = diagnosis.chromeVersion;
    assert.ok(version > 100, `the version is read: ${version}`);
    const card = of('chrome-version').message;
    assert.ok(card.startsWith(`Chrome ${version}: `) && card.split(/\s+/).length <= 20, card);
    await tab.close();
  });

  test('why no tools: WebMCP off in the browser', async () => {
    const off = await launchHost({ webmcp: false });
    try {
      const tab = await off.context.newPage();
      await tab.goto(`${pages.url}/workbench/blank.html`);
      const offTab = await off.tabIdOf(tab);
      const diagnosis = await off.worker.evaluate((t) => webmcpHost.diagnose({ tabId: t }), offTab);
      assert.equal(diagnosis.findings[0].id, 'no-webmcp', JSON.stringify(diagnosis, null, 2));
      assert.match(diagnosis.findings[0].fix, /enable-webmcp-testing/);
      const offPopup = await off.context.newPage();
      await offPopup.setViewportSize({ width: 480, height: 900 });
      await offPopup.goto(`chrome-extension://${off.extensionId}/popup.html?tab=${offTab}`);
      await offPopup.locator('#diagnosis li[data-finding="no-webmcp"]').waitFor();
      await shot(offPopup, 'diagnose-off');
    } finally {
      await off.close();
    }
  });

  test("a run's timeline is the log's default view; the raw events are one click away", async () => {
    await host.worker.evaluate(
      (c) => webmcpHost.configure(c),
      { models: [{ name: 'guest', provider: 'openai', baseUrl: `${models.url}/s/guest/v1`, model: 'openai-test', nativeTools: true, keyRef: 'canary' }], default: 'guest' },
    );
    const result = await host.worker.evaluate((t) => webmcpHost.run({ tabId: t, prompt: 'Register ada@b.test for two seats.' }), tabId);
    assert.equal(result.outcome.type, 'completed', JSON.stringify(result.outcome));
    const timeline = await host.worker.evaluate((runId) => webmcpHost.timeline({ runId }), result.runId);
    assert.equal(timeline.prompt, 'Register ada@b.test for two seats.');
    assert.equal(timeline.state, 'finished');
    const step = timeline.entries[0];
    assert.equal(step.kind, 'step');
    assert.equal(step.calls[0].name, 'register_guest');
    assert.deepEqual(step.calls[0].args, { email: 'a@b.test', seats: 2 });
    assert.ok(step.calls[0].repairs.length > 0, 'repair notes');
    assert.equal(typeof step.calls[0].durationMs, 'number');
    assert.equal(timeline.answer, 'Registered ');

    const log = await openPopup(tabId, '&view=log');
    await log.selectOption('#run-select', result.runId);
    await log.locator(`#timeline[data-run-id="${result.runId}"] .tl-answer`).waitFor();
    assert.equal(await log.textContent('#timeline .tl-prompt'), 'Register ada@b.test for two seats.');
    assert.equal(await log.locator('#timeline .tl-step').count(), 2);
    assert.match(await log.textContent('#timeline .tl-call'), /register_guest[\s\S]*"seats": 2[\s\S]*repaired:/);
    assert.equal(await log.textContent('#timeline .tl-step:nth-child(3) .tl-text'), 'Registered ', 'the streamed text merged');
    // The provider's tokens are the step's, not notes between the steps.
    assert.match(await log.textContent('#timeline .tl-step:nth-child(2)'), /\d+ in( \(\d+ cached\))? · \d+ out/);
    assert.equal(await log.locator('#timeline .tl-note', { hasText: 'usage' }).count(), 0);
    assert.equal(await log.isHidden('#raw-box'), true);
    await shot(log, 'timeline');
    await log.click('#log-raw');
    await log.locator('#log li.event').first().waitFor();
    assert.equal(await log.isHidden('#timeline-box'), true);
    await log.click('#log-raw');
    assert.equal(await log.isVisible('#timeline-box'), true);
    await log.close();

    // The page saw the call, never the key.
    const seen = JSON.stringify(await calls()) + (await page.content());
    assert.ok(!seen.includes(CANARY));
    await host.canary.check();
  });

  test('a tool marked debugging is shown only with Developer tools', async () => {
    const person = await openPopup(tabId);
    assert.equal(await person.locator('#tools li[data-tool="dump_state"]').isHidden(), true);
    assert.equal(await person.locator('#tools li[data-tool="register_guest"]').isVisible(), true);
    await view(person, 'call');
    await person.waitForSelector('#call-tool option[value$="register_guest"]', { state: 'attached' });
    assert.equal(await person.locator('#call-tool option[value$="dump_state"]').count(), 0);
    await view(person, 'inventory');
    await person.locator('#inventory-status', { hasText: 'debugging tool' }).waitFor();
    assert.equal(await person.locator('#inventory li[data-tool="dump_state"]').count(), 0);

    await person.check('#developer-tools');
    await person.locator('#inventory li[data-tool="dump_state"]').waitFor();
    assert.match(await person.textContent('#inventory li[data-tool="dump_state"]'), /debugging/);
    await view(person, 'call');
    await person.waitForSelector('#call-tool option[value$="dump_state"]', { state: 'attached' });
    await view(person, 'run');
    assert.equal(await person.locator('#tools li[data-tool="dump_state"]').isVisible(), true);
    await shot(person, 'developer-tools');
    await person.close();
    const listed = await host.worker.evaluate(() => webmcpHost.inventory({}));
    assert.ok(!listed.tools.some((t) => t.name === 'dump_state') && listed.debuggingHidden >= 1);
    const all = await host.worker.evaluate(() => webmcpHost.inventory({ developer: true }));
    assert.ok(all.tools.some((t) => t.name === 'dump_state' && t.hints.includes('debugging')));
  });

  test('keyboard only, in the dark theme: pick a tool, fill the form, see the errors, call', async () => {
    const dark = await openPopup(tabId);
    await dark.emulateMedia({ colorScheme: 'dark' });
    const background = await dark.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, 'rgb(23, 23, 27)', 'the dark palette');
    await dark.focus('#views button[data-view="run"]');
    // Tab to the Call view's button, Enter.
    for (let i = 0; i < 10 && (await dark.evaluate(() => document.activeElement?.dataset.view)) !== 'call'; i++) await dark.keyboard.press('Tab');
    await dark.keyboard.press('Enter');
    await dark.waitForSelector('body[data-view="call"]');
    await dark.waitForSelector('#call-tool option[value$="register_guest"]', { state: 'attached' });
    for (let i = 0; i < 15 && (await dark.evaluate(() => document.activeElement?.id)) !== 'call-tool'; i++) await dark.keyboard.press('Tab');
    assert.equal(await dark.evaluate(() => document.activeElement?.id), 'call-tool');
    const wanted = await dark.$eval('#call-tool', (s) => [...s.options].findIndex((o) => o.value.endsWith('\u0000register_guest')));
    for (let i = 0; i < wanted; i++) await dark.keyboard.press('ArrowDown');
    await dark.waitForSelector('#call-form-box:not([hidden])');
    // Tab past "List again" into the first field.
    for (let i = 0; i < 5 && (await dark.evaluate(() => document.activeElement?.closest('[data-path]')?.dataset.path)) !== '/email'; i++) await dark.keyboard.press('Tab');
    await dark.keyboard.type('nobody');
    const before = (await calls()).length;
    await dark.keyboard.press('Enter');
    await dark.locator('#call-status.error').waitFor();
    assert.equal(await dark.evaluate(() => document.activeElement?.closest('[data-path]')?.dataset.path), '/email', 'focus goes to the first error');
    assert.equal((await calls()).length, before, 'not sent');
    await dark.keyboard.press('Control+A');
    await dark.keyboard.type('nobody@example.org');
    await dark.keyboard.press('Enter');
    await dark.locator('#call-result .call-output').waitFor();
    assert.equal((await calls()).length, before + 1);
    await shot(dark, 'dark-keyboard');
    await dark.close();
  });
});
