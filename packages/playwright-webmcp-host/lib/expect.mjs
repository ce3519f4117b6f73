// The matchers: `toHaveCalledTool(name, argsMatcher?)` and `toPassEvals(file, options?)`.
import { test } from '@playwright/test';
import { callsOf, notMadeOf } from './calls.mjs';
import { hostOfPage } from './launch.mjs';
import { matchesArgument } from './matcher.mjs';
import { pickCases } from './evals.mjs';

const json = (value) => {
  const text = JSON.stringify(value);
  return text === undefined ? 'undefined' : text;
};
const callText = (c) => `${c.name}(${json(c.args)})${'result' in c ? ` → ${clip(json(c.result))}` : ''}`;
const clip = (text, n = 160) => (text.length > n ? `${text.slice(0, n - 1)}…` : text);
const listCalls = (calls) => (calls.length ? calls.map((c) => `  ${callText(c)}`).join('\n') : '  (none)');

/**
 * `expect(subject).toHaveCalledTool(name, argsMatcher?)`: some call of `subject` (a run's
 * answer or events, an evaluate answer or result, or calls: see `callsOf`) is of the tool
 * `name`, with arguments that `argsMatcher` matches (webmcp-evals semantics) when given.
 */
export function toHaveCalledTool(received, name, argsMatcher) {
  const hint = this.utils.matcherHint('toHaveCalledTool', 'result', argsMatcher === undefined ? 'name' : 'name, args', { isNot: this.isNot });
  let calls;
  try {
    calls = callsOf(received);
  } catch (error) {
    return { pass: false, message: () => `${hint}\n\n${error.message}\nReceived: ${this.utils.printReceived(received)}` };
  }
  const named = calls.filter((c) => c.name === name);
  const matching = argsMatcher === undefined ? named : named.filter((c) => matchesArgument(argsMatcher, c.args));
  const pass = matching.length > 0;
  const wanted = `a call of ${this.utils.printExpected(name)}${argsMatcher === undefined ? '' : ` with arguments matching ${this.utils.printExpected(argsMatcher)}`}`;
  // A step of this tool the tab could not take was never a call: said apart, with what the
  // tab offers (its error names them).
  const lacking = notMadeOf(received).filter((c) => c.name === name);
  const notMade = lacking.length ? `\nNot made (the tab has no such tool):\n${lacking.map((c) => `  ${c.name}(${json(c.args)}): ${c.error}`).join('\n')}` : '';
  return {
    pass,
    name: 'toHaveCalledTool',
    expected: argsMatcher === undefined ? name : { name, args: argsMatcher },
    actual: calls,
    message: () =>
      pass
        ? `${hint}\n\nExpected no ${wanted.slice(2)}\nMatching calls:\n${listCalls(matching)}`
        : `${hint}\n\nExpected ${wanted}\nCalls made (${calls.length}):\n${listCalls(calls)}${notMade}`,
  };
}

/** A simulate result that did not pass: why, the judge's evidence, the DOM seen, the calls made. */
function simulated(r, label, green, red) {
  const lines = [`✗ ${label}: ${r.outcome}${r.reason ? `: ${r.reason}` : ''}`];
  if (r.verdict?.overruled) lines.push(`  Overruled:      ${red(r.verdict.overruled)}`);
  for (const e of r.verdict?.evidence ?? []) lines.push(`  Evidence:       ${e}`);
  for (const a of r.assertionResults ?? []) {
    if (a.outcome === 'pass') continue;
    lines.push(`  DOM ${a.assertion?.selector} ${a.kind}: expected ${green(json(a.expected))}, got ${red(a.error ?? json(a.actual))}`);
  }
  const calls = (r.conversation?.turns ?? []).flatMap((t) => t.toolCalls ?? []);
  lines.push(`  Calls made:     ${calls.length ? calls.map((c) => red(`${c.functionName}(${json(c.args)})`)).join('\n                  ') : red('(none)')}`);
  lines.push(`  Ended by:       ${r.conversation?.endedBy ?? '–'} after ${r.conversation?.turnsUsed ?? 0} turns`);
  return lines.join('\n');
}

/**
 * `await expect(page).toPassEvals(file, {mode?, models?, runs?, cases?, timeoutMs?, reload?})`: runs the
 * cases of `file` (a path, or the cases themselves; `cases` picks some, by index or name) with
 * `host.evaluate` on the page's tab (mode `smoke` by default; `simulate`: `file` is a
 * simulations.json, with `userModel` and `judgeModel` as `evaluate` takes them) and passes when every result
 * passed. The receiver is a page of the fixture's browser, or the host with `page` or `tabId`
 * in the options. The evaluation's answer is attached to the test as `evals.json`.
 */
export async function toPassEvals(received, file, options = {}) {
  const hint = this.utils.matcherHint('toPassEvals', 'page', 'file', { isNot: this.isNot });
  const { cases: only, page: optionPage, tabId: optionTab, mode = 'smoke', ...rest } = options;
  const host = typeof received?.call === 'function' && received.operations ? received : hostOfPage(received);
  if (!host) throw new Error('toPassEvals: expect() takes a page of the webmcp-host fixture (or the host, with page or tabId in the options)');
  const page = host === received ? optionPage : received;
  const tabId = optionTab ?? (await host.tabIdOf(page));
  const evals = pickCases(file, only);
  // Simulate mode plays a simulations.json (outcomes judged); the others an eval file.
  const cases = mode === 'simulate' ? { simulations: evals } : { evals };
  const answer = await host.evaluate({ tabId, ...cases, mode, ...rest });
  // The answer, its HTML report and its Markdown summary, attached to the test's results (the
  // HTML reporter shows them; a CI job can post the summary).
  const reports = [
    ['evals.json', JSON.stringify(answer, null, 2), 'application/json'],
    ['evals.html', await host.evalReport({ report: answer, format: 'html' }), 'text/html'],
    ['evals.md', await host.evalReport({ report: answer, format: 'markdown' }), 'text/markdown'],
  ];
  for (const [name, body, contentType] of reports) {
    try {
      await test.info().attach(name, { body, contentType });
    } catch {
      // outside a test: nothing to attach to
    }
  }
  const results = answer.results ?? [];
  const bad = results.filter((r) => r.outcome !== 'pass');
  const pass = results.length > 0 && bad.length === 0;
  const where = `${typeof file === 'string' ? file : `${evals.length} cases`}, mode ${mode}`;
  const counts = `${answer.passCount} passed, ${answer.failCount} failed, ${answer.errorCount} errors of ${answer.testCount}`;
  const green = this.utils.EXPECTED_COLOR ?? String;
  const red = this.utils.RECEIVED_COLOR ?? String;
  const caseOf = (name) => evals.find((c) => c?.name === name);
  const report = bad
    .map((r) => {
      const label = [r.name, r.model && `model ${r.model}`, `run ${r.runIndex + 1}`].filter(Boolean).join(', ');
      if (mode === 'simulate') return simulated(r, label, green, red);
      const expected = caseOf(r.name)?.expectedCall;
      const made = (r.calls ?? []).filter((c) => c.made !== false).map(callText);
      // A step whose tool the tab lacks was never called: said apart, with what the tab offers.
      const notMade = (r.calls ?? []).filter((c) => c.made === false).map((c) => `${c.name}(${json(c.args)}): ${c.error}`);
      return [
        `✗ ${label}: ${r.outcome}${r.reason ? `: ${r.reason}` : ''}`,
        `  Expected calls: ${green(expected === undefined ? '(unknown case)' : json(expected))}`,
        `  Calls made:     ${made.length ? made.map((text) => red(text)).join('\n                  ') : red('(none)')}`,
        ...(notMade.length ? [`  Not made:       ${notMade.map((text) => red(text)).join('\n                  ')}`] : []),
      ].join('\n');
    })
    .join('\n\n');
  return {
    pass,
    name: 'toPassEvals',
    expected: 'every case passes',
    actual: answer,
    message: () =>
      pass
        ? `${hint}\n\nExpected some case not to pass (${where}); ${counts}`
        : results.length === 0
          ? `${hint}\n\nNo case ran (${where}): ${counts}`
          : `${hint}\n\n${bad.length} of ${results.length} results did not pass (${where}; ${counts}):\n\n${report}`,
  };
}
