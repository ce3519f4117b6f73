// The release as a stranger gets it (`make release`'s parts, built the same way):
// - the extension's zip: only what ships (manifest, icons, no README or test files), readable
//   by the system's unzip, and once unzipped into a new folder it loads in Chromium and passes
//   the page bridge's smoke test (a page's tools listed and called);
// - the Playwright package: packed with npm, installed with its peer into an empty folder
//   outside the repository, its example copied out as its README says, and run there against
//   the zip with `--shard=1/2` and `--shard=2/2`: green, every case once.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { launchHost } from '../../packages/playwright-webmcp-host/index.mjs';
import { unzip } from '../../packages/playwright-webmcp-host/lib/zip.mjs';
import { extensionZip, packPackage, ROOT, version } from '../../scripts/release.mjs';
import { serve } from '../support/server.mjs';
import { freePort } from '../../scripts/mcp/start-server.mjs';

const PLAYWRIGHT = JSON.parse(await readFile(join(ROOT, 'node_modules', '@playwright', 'test', 'package.json'), 'utf8')).version;

/** Runs `command args` in `cwd`; resolves to `{code, output}`. */
const run = (command, args, cwd, env = {}) =>
  new Promise((resolve) => {
    // Nothing of this test run's own settings reaches the stranger's run.
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(TEST_|PW_|NODE_TEST|NODE_OPTIONS$|npm_)/.test(k)));
    const child = spawn(command, args, { cwd, env: { ...clean, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code, output }));
  });

describe(`the release ${version()} as a tester installs it`, () => {
  let dir, zip;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webmcp-host-release-'));
    zip = join(dir, `webmcp-host-extension-${version()}.zip`);
    await extensionZip(zip);
  });
  after(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('the zip holds what ships and nothing else; the system unzip reads it', async () => {
    const listing = execFileSync('unzip', ['-Z1', zip], { encoding: 'utf8' }).trim().split('\n');
    assert.ok(listing.includes('manifest.json') && listing.includes('worker.js') && listing.includes('webmcp_host_bg.wasm'), listing.join(' '));
    assert.ok(listing.includes('icons/icon-128.png'), 'the 128 px icon the Web Store asks for');
    assert.ok(!listing.includes('README.md'), 'no README of the build folder');
    assert.ok(!listing.some((p) => /test|fixture|\.map$/.test(p)), listing.join(' '));
    execFileSync('unzip', ['-tq', zip]);
    const manifest = JSON.parse(execFileSync('unzip', ['-p', zip, 'manifest.json'], { encoding: 'utf8' }));
    assert.equal(manifest.version, version());
    assert.equal(manifest.icons['128'], 'icons/icon-128.png');
  });

  test('unzipped into a new folder, it loads in Chromium and lists and calls a page\'s tools', async () => {
    const folder = join(dir, 'unpacked');
    const written = await unzip(zip, folder);
    assert.ok(written.includes('manifest.json'));
    const pages = await serve(join(ROOT, 'tests', 'fixtures'));
    const host = await launchHost({ extensionPath: folder });
    try {
      const page = await host.context.newPage();
      await page.goto(`${pages.url}/tools.html`);
      const { tools } = await host.listTools({ page });
      assert.ok(tools.some((t) => t.name === 'add'), JSON.stringify(tools.map((t) => t.name)));
      assert.deepEqual(await host.callTool({ page, name: 'add', args: { a: 2, b: 40 } }), { ok: true, result: '42' });
    } finally {
      await host.close();
      await pages.close();
    }
  });

  test('the zip itself as extensionPath is unpacked for the run', async () => {
    const host = await launchHost({ extensionPath: zip });
    try {
      assert.ok(host.operations.includes('callTool'));
    } finally {
      await host.close();
    }
    await assert.rejects(launchHost({ extensionPath: join(dir, 'nothing-here.zip') }), /no extension at .*nothing-here\.zip/);
    await writeFile(join(dir, 'broken.zip'), 'not a zip');
    await assert.rejects(launchHost({ extensionPath: join(dir, 'broken.zip') }), /not a zip this package can read/);
  });

  test("the package, packed and installed in an empty folder, runs its README's example there, sharded", { timeout: 600_000 }, async () => {
    const project = join(dir, 'project');
    await mkdir(project);
    const tgz = packPackage(dir);
    await writeFile(join(project, 'package.json'), `${JSON.stringify({ name: 'stranger', private: true, type: 'module' }, null, 2)}\n`);
    // The README's install step, with the peer at the version this repository tests.
    const installed = await run('npm', ['install', '--save-dev', '--no-audit', '--no-fund', '--prefer-offline', `@playwright/test@${PLAYWRIGHT}`, tgz], project, {
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1',
    });
    assert.equal(installed.code, 0, installed.output);
    // The README's next step: the example copied into the project.
    await cp(join(project, 'node_modules', 'playwright-webmcp-host', 'example'), join(project, 'example'), { recursive: true });
    const port = String(await freePort());
    const ran = [];
    for (const shard of ['1/2', '2/2']) {
      const report = join(dir, `shard-${shard.replace('/', '-of-')}.json`);
      const { code, output } = await run(join(project, 'node_modules', '.bin', 'playwright'), ['test', '-c', 'example', `--shard=${shard}`, '--reporter=json'], project, {
        CI: '1',
        WEBMCP_HOST_EXTENSION: zip,
        SHOP_PORT: port,
        PLAYWRIGHT_JSON_OUTPUT_NAME: report,
      });
      assert.equal(code, 0, output.slice(-3000));
      const json = JSON.parse(await readFile(report, 'utf8'));
      const walk = (suite) => [...(suite.specs ?? []).flatMap((s) => s.tests.map((t) => ({ title: s.title, status: t.status }))), ...(suite.suites ?? []).flatMap(walk)];
      const tests = json.suites.flatMap(walk);
      assert.ok(tests.length > 0, `shard ${shard} ran some cases`);
      for (const t of tests) assert.equal(t.status, 'expected', `${shard}: ${t.title}`);
      ran.push(...tests.map((t) => t.title));
    }
    const cases = JSON.parse(await readFile(join(project, 'example', 'shop.evals.json'), 'utf8'));
    const count = Array.isArray(cases) ? cases.length : (cases.evals ?? cases.tests ?? []).length;
    assert.equal(ran.length, count, `every case once: ${ran.join(', ')}`);
    assert.equal(new Set(ran).size, ran.length);
  });
});
