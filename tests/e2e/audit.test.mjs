// The tool audit in the browser: `webmcpHost.audit` reviews the tools Chromium's WebMCP lists for
// a tab (a well-made page scores 90 or more, a hostile one gets its error findings), finds what
// the offline audit of the same page's tools file finds, writes SARIF, refuses probes it cannot
// run, and the popup's Audit view shows it (screenshot: test-output/audit.png).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { launchHost, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

const expected = (name) => JSON.parse(readFileSync(join(ROOT, 'tests', 'audit', 'pages', `${name}.expected.json`), 'utf8'));
const rules = (audit) => audit.findings.map((f) => `${f.tool} ${f.rule} ${f.severity}`).sort();

describe('the tool audit in the browser', () => {
  let server, host, page;
  const auditOf = async (path, request = {}) => {
    await page.goto(`${server.url}/${path}`);
    const tabId = await host.tabIdOf(page);
    await host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
    return { tabId, audit: await host.worker.evaluate((r) => webmcpHost.audit(r), { tabId, ...request }) };
  };

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    host = await launchHost();
    page = await host.context.newPage();
    page.on('dialog', (dialog) => dialog.dismiss());
  });
  after(async () => {
    await host?.close();
    await server?.close();
  });

  test('a well-made page scores at least 90, with what the offline audit of its tools finds', async () => {
    const { audit } = await auditOf('audit-clean.html');
    assert.ok(audit.score >= 90, `score ${audit.score}`);
    assert.equal(audit.tools.length, 4);
    assert.deepEqual(rules(audit), rules(expected('audit-clean')));
    assert.equal(audit.score, expected('audit-clean').score);
  });

  test('a hostile page gets its error findings: injection in a description, a write tool marked read-only', async () => {
    const { audit } = await auditOf('hostile/injection.html');
    const errors = audit.findings.filter((f) => f.severity === 'error').map((f) => f.rule);
    for (const rule of ['description-injection', 'hint-write-read-only']) assert.ok(errors.includes(rule), `${rule} in ${errors}`);
    assert.ok(audit.score < 90, `score ${audit.score}`);
    assert.deepEqual(rules(audit), rules(expected('hostile-injection')), 'the live tab and the tools file agree');
    for (const finding of audit.findings) assert.ok(finding.message.length > 20, JSON.stringify(finding));
  });

  test('SARIF: one result per finding; bad requests are refused', async () => {
    const { tabId, audit } = await auditOf('hostile/injection.html', { format: 'sarif' });
    assert.equal(audit.version, '2.1.0');
    const json = await host.worker.evaluate((t) => webmcpHost.audit({ tabId: t }), tabId);
    assert.equal(audit.runs[0].results.length, json.findings.length);
    await assert.rejects(host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, probe: 'yes' }), tabId), /`probe` must be true or false/);
    await assert.rejects(host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, format: 'xml' }), tabId), /unknown format `xml`/);
  });

  test('probes call the read-only tools with a valid and an invalid example and report what misbehaves', async () => {
    const { audit } = await auditOf('audit-probe.html', { probe: true });
    const probed = (tool) => audit.findings.filter((f) => f.tool === tool && f.rule.startsWith('probe-')).map((f) => f.rule);
    assert.deepEqual(probed('find_products'), [], 'a well-behaved tool');
    assert.deepEqual(probed('lookup_anything'), ['probe-accepts-invalid']);
    assert.deepEqual(probed('search_catalog'), ['probe-throws']);
    assert.ok(probed('get_report').includes('probe-hangs'), probed('get_report'));
    assert.deepEqual(probed('list_favourites'), ['probe-empty']);
    assert.deepEqual(probed('dump_inventory'), ['probe-oversized']);
    assert.deepEqual(probed('delete_account'), ['probe-skipped'], 'not read-only: not called without permission');
    const calls = await page.evaluate(() => window.__calls.map((c) => c.name));
    assert.ok(!calls.includes('delete_account'), 'the consequential tool never ran');
    assert.deepEqual(calls.filter((n) => n === 'find_products').length, 2, 'a valid and an invalid call');
    const valid = await page.evaluate(() => window.__calls.find((c) => c.name === 'find_products').input);
    assert.deepEqual(Object.keys(valid), ['query']);
    const tool = audit.tools.find((t) => t.name === 'search_catalog');
    assert.ok(tool.score <= 75 && tool.errors >= 1, JSON.stringify(tool));
    assert.deepEqual(probed('check_price'), [], 'requests are not watched without leave');
  });

  test('probes that watch the network catch a read-only tool that posts', async () => {
    const { audit } = await auditOf('audit-probe.html?nohang', { probe: true, watchNetwork: true });
    const lying = audit.findings.filter((f) => f.rule === 'probe-lying-hint');
    assert.deepEqual(lying.map((f) => f.tool), ['check_price']);
    assert.match(lying[0].message, /sent POST .*\/orders/);
    assert.equal(lying[0].severity, 'error');
  });

  test('probes with allowActing call a consequential tool only once the person allows it in the page', async () => {
    const dialogs = [];
    // The suite's handler dismisses every dialog; this one only records it.
    const answer = (dialog) => dialogs.push(dialog.message());
    page.on('dialog', answer);
    await page.goto(`${server.url}/audit-probe.html?nohang`);
    const tabId = await host.tabIdOf(page);
    await host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
    const audit = await host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, probe: true, allowActing: true }), tabId);
    page.off('dialog', answer);
    assert.ok(dialogs.some((d) => d.includes('delete_account')), 'asked in the page');
    assert.ok(!(await page.evaluate(() => window.__calls.some((c) => c.name === 'delete_account'))), 'declined: not run');
    assert.deepEqual(audit.findings.filter((f) => f.tool === 'delete_account' && f.rule.startsWith('probe-')), [], 'a declined probe says nothing of the tool');
  });

  test('tools: probes only the tools named, and is refused for a name the tab does not offer or without probe', async () => {
    const { tabId } = await auditOf('audit-probe.html?nohang');
    await page.evaluate(() => { window.__calls.length = 0; });
    const audit = await host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, probe: true, tools: ['find_products'] }), tabId);
    assert.deepEqual([...new Set(await page.evaluate(() => window.__calls.map((c) => c.name)))], ['find_products']);
    assert.deepEqual(audit.findings.filter((f) => f.rule.startsWith('probe-')), [], 'no probe finding for the tools not chosen');
    await assert.rejects(host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, probe: true, tools: ['nope'] }), tabId), /offers no tool named `nope`; it offers .*find_products/);
    await assert.rejects(host.worker.evaluate((t) => webmcpHost.audit({ tabId: t, tools: ['find_products'] }), tabId), /give `probe: true` with it/);
  });

  test("the popup's Audit view shows the score and each tool's findings", async () => {
    const { tabId, audit } = await auditOf('hostile/injection.html');
    const popup = await host.context.newPage();
    await popup.setViewportSize({ width: 404, height: 900 });
    await popup.goto(`chrome-extension://${host.extensionId}/popup.html?tabId=${tabId}&view=audit`);
    await popup.waitForSelector('#audit-tools li.audit-tool');
    assert.equal(await popup.textContent('#audit-score'), `Score ${audit.score}/100 · ${audit.tools.length} tools · ${audit.findings.length} findings`);
    const shown = await popup.$$eval('li.finding', (items) => items.map((i) => i.dataset.rule));
    assert.deepEqual(shown.sort(), audit.findings.map((f) => f.rule).sort());
    assert.equal(await popup.locator('#audit-tools img, #audit-tools b, #audit-tools script').count(), 0, 'page text stays text');
    await mkdir(join(ROOT, 'test-output'), { recursive: true });
    await popup.screenshot({ path: join(ROOT, 'test-output', 'audit.png'), fullPage: true });
    // "Export tools JSON": the tab's tools as listTools answers them, which the CLI audits as
    // they are, finding what the worker found.
    const [download] = await Promise.all([popup.waitForEvent('download'), popup.click('#audit-tools-json')]);
    assert.equal(download.suggestedFilename(), `webmcp-tools-tab-${tabId}.json`);
    const file = join(ROOT, 'test-output', 'audit-tools.json');
    await download.saveAs(file);
    const exported = JSON.parse(readFileSync(file, 'utf8'));
    assert.deepEqual(exported.tools.map((t) => t.name).sort(), audit.tools.map((t) => t.name).sort());
    const cli = spawnSync('cargo', ['run', '--quiet', '--bin', 'webmcp-host', '--', 'audit', file], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(cli.status, audit.findings.some((f) => f.severity === 'error') ? 1 : 0, cli.stderr);
    const offline = JSON.parse(cli.stdout);
    assert.deepEqual(rules(offline), rules(audit), 'the CLI finds in the file what the worker found on the tab');
    assert.equal(offline.score, audit.score);
    // Each tool's findings lead to the tool itself in the tab's tool list.
    await popup.click('li.audit-tool[data-tool="transfer_funds"] button');
    assert.equal(await popup.getAttribute('body', 'data-view'), 'run');
    assert.equal(await popup.getAttribute('#tools li.marked', 'data-tool'), 'transfer_funds');
    await popup.click('#views button[data-view="audit"]');
    // Probes from the popup: ticked, the read-only tools are called.
    await page.goto(`${server.url}/audit-probe.html?nohang`);
    await host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
    await popup.check('#audit-probe');
    await popup.click('#audit-run');
    await popup.waitForSelector('li.finding[data-rule="probe-throws"]', { timeout: 20_000 });
    assert.equal(await popup.locator('li[data-tool="delete_account"] li.finding[data-rule="probe-skipped"]').count(), 1);
    assert.equal(await popup.locator('li[data-tool="rename_list"] li.finding[data-rule="probe-skipped"]').count(), 1, 'no hints: not probed unasked');
    // "Probe this tool": the person's leave for one tool without hints; only it is called.
    await page.evaluate(() => { window.__calls.length = 0; });
    await popup.uncheck('#audit-probe');
    await popup.click('li.audit-tool[data-tool="rename_list"] button[data-action="probe"]');
    await popup.waitForFunction(() => document.getElementById('audit-status').textContent === 'Probed rename_list.');
    assert.equal(await popup.locator('li[data-tool="rename_list"] li.finding[data-rule^="probe-"]').count(), 0, 'probed, and it behaved');
    assert.equal(await popup.getAttribute('#audit-tools li.marked', 'data-tool'), 'rename_list');
    const called = await page.evaluate(() => window.__calls.map((c) => c.name));
    assert.deepEqual([...new Set(called)], ['rename_list'], `only the chosen tool was called: ${called}`);
    assert.equal(called.length, 2, 'a valid and an invalid call');
    await popup.close();
  });
});
