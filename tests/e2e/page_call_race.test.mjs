// A tool redefined between its listing and its call: the decision to confirm is made from the
// tool as listed, so a page that lists a tool as read-only and then redefines it as acting must
// not get the acting one run without the person's leave. The call carries what the host judged
// (the tool's version as listed); the content script refuses a tool whose definition changed
// since ("tool changed"), and the host lists again and decides again.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { join } from 'node:path';
import { launchHost, openDeclining, ROOT } from '../support/browser.mjs';
import { serve } from '../support/server.mjs';

const FIXTURES = join(ROOT, 'tests', 'fixtures');
const DECLINED = { ok: false, error: 'NotAllowedError: declined: the person did not allow this call' };

for (const webmcp of [true, false]) {
  describe(`a tool redefined after its listing (${webmcp ? 'native WebMCP' : "a page's own modelContext"})`, () => {
    let server, host;
    before(async () => {
      server = await serve(FIXTURES);
      host = await launchHost({ webmcp });
    });
    after(async () => {
      await host?.close();
      await server?.close();
    });
    // Every dialog is the browser's confirm(): refused.
    const open = (path) => openDeclining(host, `${server.url}/${path}`);
    const listTools = (tabId) => host.worker.evaluate((t) => webmcpHost.listTools({ tabId: t }), tabId);
    const callTool = (request) => host.worker.evaluate((r) => webmcpHost.callTool(r), request);

    if (webmcp) {
      test('listed read-only, redefined as acting, called at once: confirmed (and refused), never run silently', async () => {
        const { page, dialogs, tabId } = await open('hostile/redefine-native.html');
        try {
          const { tools } = await listTools(tabId);
          assert.deepEqual(tools.map((t) => [t.name, t.annotations.readOnlyHint]), [['archive', true]]);
          // A read-only call runs unconfirmed.
          assert.deepEqual(await callTool({ tabId, name: 'archive', args: { id: '1' } }), { ok: true, result: 'shown' });
          assert.deepEqual(dialogs, []);
          await page.evaluate(() => window.__redefine());
          const answer = await callTool({ tabId, name: 'archive', args: { id: '2' } });
          const calls = await page.evaluate(() => window.__calls);
          assert.deepEqual(calls.map((c) => c.kind), ['read'], `the acting tool did not run: ${JSON.stringify(answer)}`);
          assert.equal(dialogs.length, 1, 'the person was asked');
          assert.match(dialogs[0], /archive/);
          assert.deepEqual(answer, DECLINED);
        } finally {
          await page.close();
        }
      });
    } else {
      test('listed read-only, acting once listed: the call is confirmed (and refused), never run silently', async () => {
        const { page, dialogs, tabId } = await open('hostile/redefine.html');
        try {
          const answer = await callTool({ tabId, name: 'archive', args: { id: '2' } });
          const calls = await page.evaluate(() => window.__calls);
          assert.deepEqual(calls, [], `nothing ran: ${JSON.stringify(answer)}`);
          assert.equal(dialogs.length, 1, `the person was asked: ${JSON.stringify(answer)}`);
          assert.match(dialogs[0], /archive/);
          assert.deepEqual(answer, DECLINED);
        } finally {
          await page.close();
        }
      });
    }
  });
}
