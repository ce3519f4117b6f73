// The JS port of the webmcp-evals argument matcher, against the host core's cases
// (src/core/evals/tests.rs) and the examples of webmcp-evals' own matcher tests; and the
// calls it reads out of what the host answers.
import { expect, test } from '@playwright/test';
import { callsOf, expect as hostExpect, MatcherError, matchesArgument as m } from '../index.mjs';

test('objects match as subsets, arrays strictly, other values by equality', () => {
  expect(m({ query: 'mugs' }, { query: 'mugs', page: 2 })).toBe(true);
  expect(m({ query: 'mugs', page: 1 }, { query: 'mugs' })).toBe(false);
  expect(m({}, { anything: true })).toBe(true);
  expect(m({}, null)).toBe(false);
  expect(m({}, 'not-an-object')).toBe(false);
  expect(m({}, [1, 2])).toBe(false);
  expect(m([1, 2], [1, 2, 3])).toBe(false);
  expect(m([1, 2], [1])).toBe(false);
  expect(m([{ a: 1 }], [{ a: 1, b: 2 }])).toBe(true);
  expect(m([{ $gt: 0 }, 'b'], [5, 'b'])).toBe(true);
  expect(m(2, 2.0)).toBe(true);
  for (const [a, b] of [[1, 1], ['hello', 'hello'], [true, true], [null, null]]) expect(m(a, b)).toBe(true);
  for (const [a, b] of [[1, 2], ['hello', 'world'], [true, false], [null, undefined]]) expect(m(a, b)).toBe(false);
  expect(m({ a: { b: 2 } }, { a: { b: 3 } })).toBe(false);
  expect(m({ query: 'shoe' }, { pagination: { limit: 5 } })).toBe(false);
  expect(
    m(
      { catalog: { query: { $contains: 'shoe' }, filters: { color: { $pattern: '^[Pp]urple$' } } } },
      { catalog: { query: 'purple shoe', filters: { color: 'Purple', material: 'canvas' }, pagination: { limit: 10 } } },
    ),
  ).toBe(true);
});

test('$pattern: a regular expression with optional inline flags', () => {
  expect(m({ size: { $pattern: '(?i)^small$' } }, { size: 'SMALL' })).toBe(true);
  expect(m({ size: { $pattern: '^small$' } }, { size: 'SMALL' })).toBe(false);
  expect(m({ $pattern: '(?gu)^a' }, 'abc')).toBe(true);
  expect(m({ $pattern: '^2026-\\d{2}$' }, '2026-01')).toBe(true);
  expect(m({ $pattern: '^2026-\\d{2}$' }, '2025-01')).toBe(false);
  expect(m({ $pattern: '.*' }, 123)).toBe(false);
  expect(m({ $pattern: '(?is)foo.bar' }, 'FOO\nBAR')).toBe(true);
  expect(m({ $pattern: '(?i)foo.bar' }, 'FOO\nBAR')).toBe(false);
  expect(m({ $pattern: '(?i)^colou?r$' }, 'colourful')).toBe(false);
  expect(() => m({ $pattern: '(?x)a' }, 'a')).toThrow(/unsupported inline flag "\(\?x\)"/);
  expect(() => m({ $pattern: '(?x)a' }, 'a')).toThrow(MatcherError);
  expect(() => m({ $pattern: '(?=a)' }, 'a')).toThrow(/lookaround/);
  expect(() => m({ $pattern: '(a)\\1' }, 'aa')).toThrow(MatcherError);
  expect(() => m({ $pattern: '(?i)[unclosed' }, 'x')).toThrow(/not a usable regular expression/);
});

test('$contains, the number comparisons, $type and $any', () => {
  expect(m({ $contains: 'shoe' }, 'red shoes')).toBe(true);
  expect(m({ $contains: 'shoe' }, ['shoe'])).toBe(false);
  expect(m({ $contains: 'foo' }, null)).toBe(false);
  expect(m({ $gte: 2, $lt: 5 }, 2)).toBe(true);
  expect(m({ $gt: 2 }, '3')).toBe(false);
  expect(m({ $gt: 10 }, 10)).toBe(false);
  expect(m({ $lte: 10 }, 10)).toBe(true);
  expect(m({ $lt: 10 }, 10)).toBe(false);
  for (const [t, yes, no] of [
    ['array', [], {}],
    ['object', {}, []],
    ['null', null, 0],
    ['number', 1.5, '1'],
    ['string', '', null],
    ['boolean', false, 0],
  ]) {
    expect(m({ $type: t }, yes), `${t} ${JSON.stringify(yes)}`).toBe(true);
    expect(m({ $type: t }, no), `${t} ${JSON.stringify(no)}`).toBe(false);
  }
  expect(m({ $type: 'integer' }, 1)).toBe(false);
  expect(m({ id: { $any: true } }, { id: 7 })).toBe(true);
  expect(m({ id: { $any: true } }, {})).toBe(false);
  expect(m({ list: [{ $gt: 10 }, { $type: 'string' }] }, { list: [11, 123] })).toBe(false);
});

test('calls are read from run answers, events, evaluate answers and call lists', () => {
  const messages = [
    { id: 'u', role: 'user', content: 'Add' },
    { id: 'a', role: 'assistant', toolCalls: [{ id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":40}' } }] },
    { id: 't', role: 'tool', toolCallId: 'c1', content: '42' },
  ];
  const call = { name: 'add', args: { a: 2, b: 40 }, result: 42 };
  expect(callsOf({ messages, events: [] })).toEqual([call]);
  expect(callsOf(messages)).toEqual([call]);
  const events = [
    { type: 'TOOL_CALL_START', toolCallId: 'c1', toolCallName: 'add' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '{"a":2,' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta: '"b":40}' },
    { type: 'TOOL_CALL_END', toolCallId: 'c1' },
    { type: 'TOOL_CALL_RESULT', toolCallId: 'c1', messageId: 'r', content: '42' },
  ];
  expect(callsOf(events)).toEqual([call]);
  expect(callsOf({ results: [{ name: 'x', runIndex: 0, outcome: 'pass', calls: [call] }] })).toEqual([call]);
  expect(callsOf([call])).toEqual([call]);
  // A smoke step whose tool the tab lacks is recorded as not made: it is no call.
  const notMade = { name: 'checkout', args: {}, made: false, error: 'no page tool named `checkout`; the tab offers: add' };
  expect(callsOf({ results: [{ name: 'x', runIndex: 0, outcome: 'error', calls: [call, notMade] }] })).toEqual([call]);
  expect(callsOf({ calls: [notMade] })).toEqual([]);
  expect(() => callsOf('nothing')).toThrow(TypeError);
});

test("toHaveCalledTool on a tool the tab lacks names the tools it offers, not a call never made", () => {
  const notMade = { name: 'checkout', args: { card: 'x' }, made: false, error: 'no page tool named `checkout`; the tab offers: add, search' };
  const answer = { results: [{ name: 'pays', runIndex: 0, outcome: 'error', calls: [{ name: 'add', args: { a: 1 }, result: 2 }, notMade] }] };
  let failure;
  try {
    hostExpect(answer).toHaveCalledTool('checkout');
  } catch (error) {
    failure = error.message.replace(/\u001b\[\d+m/g, '');
  }
  expect(failure).toContain('Calls made (1):\n  add({"a":1}) → 2\n');
  expect(failure).toContain('Not made (the tab has no such tool):\n  checkout({"card":"x"}): no page tool named `checkout`; the tab offers: add, search');
  hostExpect(answer).not.toHaveCalledTool('checkout');
});
