// The version matrix: every WebMCP API shape Chrome shipped (154: string schemas and input; 155:
// object input; 156: this Chromium; 159: outputSchema; 160: the `Tool` interface), each made in
// the content script's isolated world by a test-only shim (tests/support/chrome-shapes.mjs).
// Under each shape, on a page whose same-origin child frame exposes its tools to the parent:
// the page bridge lists each frame's tools exactly once under their own frame, with every
// attribute read; calls on both frames return what the page answered, by hand and in a run
// (the scripted model calls a tool of each frame); the workbench's
// inventory sees the same tools;
// a tool's `outputSchema` is listed where the shape has it, and a result that breaks it comes
// with `outputErrors`; `toolactivated` and `toolcancel` are heard where the shape fires them. The matrix is printed at the end (docs/chrome-versions.md has the table).
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { evaluateInIsolatedWorlds, launchHost, ROOT, until } from '../support/browser.mjs';
import { SHAPE_NAMES, shapeShim } from '../support/chrome-shapes.mjs';
import { startModelServer } from '../support/model-server.mjs';
import { serve } from '../support/server.mjs';

const TOOLS = ['add@top', 'delete_everything@top', 'describe_input@top', 'fail@top', 'frame_greet@child', 'never_returns@top'];
// One scripted conversation per shape (a scenario's steps are used up in order).
const STEPS = [
  { calls: [{ name: 'add', arguments: { a: 2, b: 40 } }] },
  { calls: [{ name: 'frame_greet', arguments: { who: 'Ann' } }] },
  { text: 'It is 42, and the frame said hello.' },
];
const SCENARIOS = Object.fromEntries(SHAPE_NAMES.map((shape) => [`adds-${shape}`, { steps: STEPS }]));
const matrix = new Map();
const mark = (shape, check, ok) => {
  const row = matrix.get(shape) ?? {};
  row[check] = ok ? 'pass' : 'FAIL';
  matrix.set(shape, row);
};

describe('the WebMCP shapes of Chrome 154 to 160', () => {
  let server, models, host;
  const op = (name, request) => host.worker.evaluate(([n, r]) => webmcpHost[n](r), [name, request]);

  /** A page of `fixture` under `shape` (every frame's isolated world shimmed), and its tab. */
  const open = async (shape, fixture, frames) => {
    const page = await host.context.newPage();
    await page.goto(`${server.url}/${fixture}`);
    await until(`${fixture}'s frames`, async () => page.frames().length === frames || undefined);
    const shim = shapeShim(shape);
    if (shim) {
      const installed = await evaluateInIsolatedWorlds(host.context, page, shim);
      assert.deepEqual(installed, Array(frames).fill('installed'), `the ${shape} shim is in every frame`);
    }
    return { page, tabId: await host.tabIdOf(page) };
  };

  /** Runs `body` as the check `check` of `shape`, marking the matrix. */
  const checked = (shape, check, body) =>
    test(`${shape}: ${check}`, async () => {
      try {
        await body();
        mark(shape, check, true);
      } catch (error) {
        mark(shape, check, false);
        throw error;
      }
    });

  before(async () => {
    server = await serve(join(ROOT, 'tests', 'fixtures'));
    models = await startModelServer({ scenarios: SCENARIOS });
    host = await launchHost();
    await op('configure', {
      models: SHAPE_NAMES.map((shape) => ({
        name: `adds-${shape}`,
        provider: 'openai',
        baseUrl: `${models.url}/s/adds-${shape}/v1`,
        model: 'scripted',
        nativeTools: true,
        keyRef: 'k',
      })),
      default: `adds-${SHAPE_NAMES[0]}`,
    });
    await op('configure', { keys: { k: 'sk-matrix-test-key' } });
  });
  after(async () => {
    const checks = [...new Set([...matrix.values()].flatMap((row) => Object.keys(row)))];
    const lines = [['shape', ...checks].join(' | ')];
    for (const [shape, row] of matrix) lines.push([shape, ...checks.map((c) => row[c] ?? '-')].join(' | '));
    console.log(`WebMCP shape matrix:\n${lines.join('\n')}`);
    await host?.close();
    await models?.close();
    await server?.close();
  });

  for (const shape of SHAPE_NAMES) {
    describe(`shape ${shape}`, () => {
      let page, tabId;
      before(async () => ({ page, tabId } = await open(shape, 'tools.html', 2)));
      after(async () => page?.close());

      checked(shape, 'listed once, right frame', async () => {
        const { tools, problems } = await op('listTools', { tabId });
        const placed = tools.map((t) => `${t.name}@${t.frameId === 0 ? 'top' : 'child'}`).sort();
        assert.deepEqual(placed, TOOLS, JSON.stringify(problems));
        const add = tools.find((t) => t.name === 'add');
        assert.equal(add.title, 'Add two numbers', 'attributes read one by one');
        assert.deepEqual(add.inputSchema.required, ['a', 'b'], 'the schema is an object, whatever the shape gave');
      });

      checked(shape, 'calls on both frames', async () => {
        // The 154 shape takes its input only as JSON text: the answer says so.
        const text = shape === '154' ? { input: 'text' } : {};
        assert.deepEqual(await op('callTool', { tabId, name: 'add', args: { a: 2, b: 40 } }), { ok: true, result: '42', ...text });
        assert.deepEqual(await op('callTool', { tabId, name: 'frame_greet', args: { who: 'Ann' } }), {
          ok: true,
          result: 'hello Ann, from the child frame',
          ...text,
        });
      });

      checked(shape, 'run', async () => {
        const run = await op('run', { tabId, prompt: 'Add 2 and 40, then greet Ann.', model: `adds-${shape}` });
        assert.deepEqual(run.outcome, { type: 'completed', text: 'It is 42, and the frame said hello.' }, JSON.stringify(run.outcome));
        const results = run.events.filter((e) => e.type === 'TOOL_CALL_RESULT').map((e) => e.content);
        assert.deepEqual(results, ['42', 'hello Ann, from the child frame']);
      });

      checked(shape, 'inventory', async () => {
        const { tools } = await op('inventory', {});
        const here = tools.filter((t) => t.tabId === tabId).map((t) => `${t.name}@${t.frameId === 0 ? 'top' : 'child'}`);
        assert.deepEqual(here.sort(), TOOLS);
      });

      // What Chrome tells the page of a call (`toolactivated`, `toolcancel`; on `window` up to
      // 155, on `document.modelContext` since 156): a declarative form left waiting for a
      // submit is named in the timeout's error; a call the page cancels ends at once.
      checked(shape, 'call events', async () => {
        const other = await open(shape, 'call-events.html', 1);
        const accept = (dialog) => dialog.accept().catch(() => {});
        other.page.on('dialog', accept);
        try {
          await op('listTools', { tabId: other.tabId });
          const waited = await op('callTool', { tabId: other.tabId, name: 'note_it', args: { text: 'hi' }, timeoutMs: 1000 });
          assert.equal(waited.ok, false);
          assert.match(waited.error, /did not finish within 1000 ms; it was cancelled in the page; its form was filled in and waited for someone to submit it/);
          // What the page and the content script see of the calls to come: the toolcancel events
          // of slow_job (until the page sends its own, Chrome's: on document.modelContext, or
          // moved to window by the 154 and 155 shapes), heard in the same dispatch as the content
          // script hears them; and which call's signal the content script aborted (1: the first,
          // 2: the second).
          await other.page.evaluate(() => {
            window.__chromeCancels = 0;
            const count = (e) => (window.__chromeCancels += e.toolName === 'slow_job' ? 1 : 0);
            document.modelContext.addEventListener('toolcancel', count);
            window.addEventListener('toolcancel', count);
          });
          const [spied] = await evaluateInIsolatedWorlds(host.context, other.page, `(() => {
            const context = document.modelContext;
            const execute = context.executeTool;
            const signals = [];
            globalThis.__abortedCalls = [];
            context.executeTool = function (tool, input, options) {
              const signal = options?.signal;
              if (signal && !signals.includes(signal)) {
                const n = signals.push(signal);
                signal.addEventListener('abort', () => globalThis.__abortedCalls.push(n));
              }
              return execute.call(this, tool, input, options);
            };
            return 'spied';
          })()`);
          assert.equal(spied, 'spied');
          const aborted = async () => (await evaluateInIsolatedWorlds(host.context, other.page, 'globalThis.__abortedCalls'))[0];
          // A deadline far away: only a cancel can end the first call.
          let first;
          const slow = op('callTool', { tabId: other.tabId, name: 'slow_job', args: {}, timeoutMs: 120_000 });
          slow.then((a) => (first = a), () => {});
          await until('slow_job to start', async () => (await other.page.evaluate(() => window.__started)) === 1 || undefined);
          // Another call of the same tool, cut at its deadline: the toolcancel Chrome fires for
          // it (events name the tool, not the call) is the host's own, and the first goes on.
          const cut = await op('callTool', { tabId: other.tabId, name: 'slow_job', args: {}, timeoutMs: 600 });
          assert.match(cut.error ?? '', /did not finish within 600 ms/, JSON.stringify(cut));
          // Chrome's toolcancel for the second call was dispatched to the page, the content
          // script's listener with it: whatever it did to the first call is done.
          await until("Chrome's toolcancel of the second call", () => other.page.evaluate(() => window.__chromeCancels >= 1), 30_000);
          assert.deepEqual(await aborted(), [2], 'the first call is not ended by the cancel of the second');
          assert.equal(first, undefined, 'the first call is not ended by the cancel of the second');
          await other.page.evaluate(() => document.modelContext.dispatchEvent(new ToolCancelEvent('toolcancel', { toolName: 'slow_job' })));
          // Ended at the page's cancel (its deadline would say "did not finish within").
          assert.deepEqual(await slow, { ok: false, error: 'AbortError: the page cancelled the call (toolcancel) before it answered' });
          assert.deepEqual(await aborted(), [2, 1], 'the first call was cancelled in the page');
        } finally {
          other.page.off('dialog', accept);
          await other.page.close();
        }
      });

      checked(shape, 'outputSchema', async () => {
        const other = await open(shape, 'outputs.html', 1);
        try {
          const { tools } = await op('listTools', { tabId: other.tabId });
          const place = tools.find((t) => t.name === 'place_order');
          const tracked = await op('callTool', { tabId: other.tabId, name: 'track_order', args: { orderId: 'o-17' } });
          assert.equal(tracked.ok, true, JSON.stringify(tracked));
          if (['159', '160'].includes(shape)) {
            assert.deepEqual(place?.outputSchema?.required, ['orderId', 'status'], JSON.stringify(place));
            assert.equal(tracked.outputErrors?.[0]?.pointer, '/orderId', JSON.stringify(tracked));
          } else {
            assert.equal(place?.outputSchema ?? null, null, 'a shape without outputSchema lists none');
            assert.equal(tracked.outputErrors, undefined, 'nothing to check a result against');
          }
        } finally {
          await other.page.close();
        }
      });
    });
  }
});
