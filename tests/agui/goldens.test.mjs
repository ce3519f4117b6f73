// Runs the official AG-UI validators (see validate.mjs) over every event log the core's
// golden scenarios produce (tests/golden/**/*.events.jsonl, written by the Rust tests).
// Every log is valid AG-UI 1.0 with no error at all; the 0.0.59 validators report nothing
// but the AG-UI 1.0 fields 0.0.59 does not know (ONLY_IN_1_0 in validate.mjs), and each of
// those fields is in some log.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ONLY_IN_1_0, splitVersionDifferences, validateEvents } from './validate.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const GOLDEN = join(ROOT, 'tests', 'golden');

async function eventLogs(dir) {
  const out = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await eventLogs(path)));
    else if (entry.name.endsWith('.events.jsonl')) out.push(path);
  }
  return out.sort();
}

const read = async (path) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

const logs = await eventLogs(GOLDEN);

test('the golden corpus is there', () => {
  assert.ok(logs.length >= 20, `found ${logs.length} event logs`);
});

const seen = new Set();

for (const path of logs) {
  test(`valid AG-UI 1.0, and 0.0.59 but for 1.0's own fields: ${relative(GOLDEN, path)}`, async () => {
    const events = await read(path);
    const { errors } = await validateEvents(events);
    const { onlyIn10, others } = splitVersionDifferences(events, errors);
    assert.deepEqual(others, [], JSON.stringify(others, null, 2));
    for (const { error, fields } of onlyIn10) {
      assert.match(error.validator, /-0\.0\.59\//, 'AG-UI 1.0 reports nothing');
      fields.forEach((f) => seen.add(f));
    }
    assert.equal(events[0].type, 'RUN_STARTED');
    assert.ok(['RUN_FINISHED', 'RUN_ERROR'].includes(events.at(-1).type), 'the run is ended');
  });
}

test("every 1.0 field 0.0.59 does not know is in some golden log", () => {
  assert.deepEqual([...seen].sort(), [...new Set(ONLY_IN_1_0.map((r) => r.field))].sort());
});

test('the validators catch a broken golden', async () => {
  const events = await read(logs.find((p) => p.endsWith('tag-clean.events.jsonl')));
  const withoutStart = events.slice(1);
  assert.equal((await validateEvents(withoutStart)).ok, false);
  const badArgs = events.map((e) => (e.type === 'TOOL_CALL_ARGS' ? { ...e, delta: '{"city": ' } : e));
  const result = await validateEvents(badArgs);
  assert.ok(result.errors.some((e) => e.validator === 'ours/tool-call-args'), JSON.stringify(result.errors));
});
