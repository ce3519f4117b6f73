// The argument and result matcher of webmcp-evals, as the host's core applies it
// (src/core/evals/matcher.rs): an expected object whose keys all start with `$` is a
// constraint (`$pattern`, `$contains`, `$gt`, `$gte`, `$lt`, `$lte`, `$type`, `$any`; other `$`
// keys are ignored); other objects match as subsets (every expected key present and matching,
// extra keys allowed), arrays strictly (same length, position by position), anything else by
// equality.
//
// `$pattern` may start with inline flags `(?flags)`: `i`, `m` and `s` apply, `d`, `g`, `u`, `v`
// and `y` change nothing for a match, any other flag is an error. Lookaround and backreferences
// are an error too, as they are in the host (its regular expressions have neither), so a
// pattern behaves here as it does in `webmcpHost.evaluate`.

/** Thrown for a `$pattern` that cannot be used (the case is an error, not a failure). */
export class MatcherError extends Error {
  name = 'MatcherError';
}

/** Whether `actual` matches `expected`; throws a `MatcherError` for an unusable `$pattern`. */
export function matchesArgument(expected, actual) {
  if (isObject(expected) && isConstraint(expected)) return constraint(expected, actual);
  if (isObject(expected)) {
    if (!isObject(actual)) return false;
    for (const [key, want] of Object.entries(expected)) {
      if (!Object.hasOwn(actual, key) || !matchesArgument(want, actual[key])) return false;
    }
    return true;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return false;
    return expected.every((want, i) => matchesArgument(want, actual[i]));
  }
  return expected === actual; // numbers by value, other JSON values by equality
}

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const isConstraint = (map) => {
  const keys = Object.keys(map);
  return keys.length > 0 && keys.every((k) => k.startsWith('$'));
};

function constraint(map, actual) {
  for (const [key, want] of Object.entries(map)) {
    let ok = true;
    switch (key) {
      case '$pattern':
        ok = typeof actual === 'string' && pattern(typeof want === 'string' ? want : '').test(actual);
        break;
      case '$contains':
        ok = typeof actual === 'string' && actual.includes(typeof want === 'string' ? want : JSON.stringify(want));
        break;
      case '$gt':
      case '$gte':
      case '$lt':
      case '$lte':
        ok =
          typeof actual === 'number' &&
          typeof want === 'number' &&
          (key === '$gt' ? actual > want : key === '$gte' ? actual >= want : key === '$lt' ? actual < want : actual <= want);
        break;
      case '$type':
        ok = typeOf(actual) === want && TYPES.has(want);
        break;
      default: // `$any`, and constraints this matcher does not know
        ok = true;
    }
    if (!ok) return false;
  }
  return true;
}

const TYPES = new Set(['array', 'null', 'object', 'string', 'number', 'boolean']);
const typeOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const FLAGS = { i: 'i', m: 'm', s: 's', d: '', g: '', u: '', v: '', y: '' };
// What the host's regular expressions do not have: lookahead, lookbehind, backreferences.
const UNSUPPORTED = /\(\?<?[=!]|\\[1-9]|\\k</;

function pattern(raw) {
  const prefix = /^\(\?([A-Za-z]+)\)/.exec(raw);
  let flags = '';
  for (const flag of prefix?.[1] ?? '') {
    if (!(flag in FLAGS)) {
      throw new MatcherError(`unsupported inline flag "(?${flag})" in $pattern ${JSON.stringify(raw)}; supported: d, g, i, m, s, u, v, y`);
    }
    if (!flags.includes(FLAGS[flag])) flags += FLAGS[flag];
  }
  const body = prefix ? raw.slice(prefix[0].length) : raw;
  if (UNSUPPORTED.test(body)) {
    throw new MatcherError(`$pattern ${JSON.stringify(raw)} is not a usable regular expression: lookaround and backreferences are not supported`);
  }
  try {
    return new RegExp(body, flags);
  } catch (error) {
    throw new MatcherError(`$pattern ${JSON.stringify(raw)} is not a usable regular expression: ${error.message}`);
  }
}
