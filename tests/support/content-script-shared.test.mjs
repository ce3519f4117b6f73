// The block that content-script/isolated.js and content-script/main.js must each carry
// identically (between their BEGIN SHARED BLOCK and END SHARED BLOCK lines). They cannot share
// a file: a file listed for both worlds in the manifest is injected only into the isolated one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

const root = new URL('../../', import.meta.url);
const read = (path) => readFileSync(new URL(path, root), 'utf8');

const BEGIN = '// BEGIN SHARED BLOCK';
const END = '// END SHARED BLOCK';

// The lines from the BEGIN marker to the END marker, both included; throws unless the text has
// exactly one of each, in that order.
const sharedBlock = (text, name) => {
  const lines = text.split('\n');
  const begins = lines.flatMap((line, at) => (line.includes(BEGIN) ? [at] : []));
  const ends = lines.flatMap((line, at) => (line.includes(END) ? [at] : []));
  if (begins.length !== 1 || ends.length !== 1 || ends[0] < begins[0]) {
    throw new Error(`${name}: expected one "${BEGIN}" line and one "${END}" line after it`);
  }
  return lines.slice(begins[0], ends[0] + 1).join('\n');
};

// The first line where two blocks differ (1-based within the block), or null.
const firstDifference = (a, b) => {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) if (x[i] !== y[i]) return i + 1;
  return null;
};

describe('the block shared by the two content scripts', () => {
  const isolated = read('content-script/isolated.js');
  const main = read('content-script/main.js');

  test('is identical in isolated.js and main.js', () => {
    const a = sharedBlock(isolated, 'isolated.js');
    const b = sharedBlock(main, 'main.js');
    assert.ok(a.includes('const describe = (tool)'), 'the block holds describe');
    assert.ok(a.includes('const failure = (name, message)'), 'the block holds failure');
    assert.equal(firstDifference(a, b), null, `the blocks differ at line ${firstDifference(a, b)} of the block`);
  });

  test('a change to one copy is caught', () => {
    const a = sharedBlock(isolated, 'isolated.js');
    const mutated = main.replace('title: plain(tool.title),', 'title: plain(tool.name),');
    assert.notEqual(mutated, main);
    const b = sharedBlock(mutated, 'mutated main.js');
    assert.equal(firstDifference(a, b), 6);
    assert.notEqual(a, b);
  });

  test('a missing, repeated or misplaced marker is an error', () => {
    assert.throws(() => sharedBlock(main.replace(END, '// gone'), 'no end'), /expected one/);
    assert.throws(() => sharedBlock(main.replace(BEGIN, '// gone'), 'no begin'), /expected one/);
    assert.throws(() => sharedBlock(`${main}\n${BEGIN}\n`, 'two begins'), /expected one/);
    assert.throws(() => sharedBlock(`${END}\n${main.replace(END, '// gone')}`, 'end first'), /expected one/);
  });
});
