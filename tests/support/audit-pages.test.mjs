// The audit's page cases (tests/audit/pages/) are the tools the fixture pages offer now: a
// fixture page changed without re-running tests/audit/extract-pages.mjs fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const script = fileURLToPath(new URL('../audit/extract-pages.mjs', import.meta.url));

test('tests/audit/pages matches the fixture pages', () => {
  const run = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
});
