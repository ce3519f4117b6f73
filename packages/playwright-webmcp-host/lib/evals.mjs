// Eval files (the webmcp-evals format) read for tests: the cases, each with a title unique in
// its file, so that a suite can make one Playwright test of each case.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** The cases of an eval file (an array), read synchronously; throws naming the file. */
export function readEvals(file) {
  const path = resolve(file);
  let cases;
  try {
    cases = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`eval file ${path}: ${error.message}`);
  }
  if (!Array.isArray(cases)) throw new Error(`eval file ${path}: must be an array of cases`);
  return cases;
}

/**
 * `[{title, index, case}]` for each case of `file`: `title` is its `name` (or `case N`), with
 * ` (#N)` added when another case has the same name, as Playwright wants titles unique.
 */
export function evalCases(file) {
  const cases = readEvals(file);
  const names = cases.map((c, i) => (typeof c?.name === 'string' && c.name ? c.name : `case ${i + 1}`));
  return cases.map((c, i) => ({
    title: names.filter((n) => n === names[i]).length > 1 ? `${names[i]} (#${i + 1})` : names[i],
    index: i,
    case: c,
  }));
}

/** The cases of `file` (a path or the cases themselves) that `only` picks (indexes or names; all when absent). */
export function pickCases(file, only) {
  const cases = typeof file === 'string' ? readEvals(file) : file;
  if (!Array.isArray(cases)) throw new TypeError('toPassEvals takes an eval file path or an array of cases');
  if (only === undefined) return cases;
  const picks = Array.isArray(only) ? only : [only];
  return picks.map((pick) => {
    const found = typeof pick === 'number' ? cases[pick] : cases.find((c) => c?.name === pick);
    if (!found) throw new Error(`no case ${JSON.stringify(pick)} in the eval file`);
    return found;
  });
}
