// A `node --test` reporter for `make flakes` (scripts/flakes.mjs): one JSON line per test that
// passed or failed (suites left out), with its file, its place among the suites and, for a
// failure, the first line of the error.
const names = new Map(); // file → the names of the suites open at each nesting level

export default async function* flakeReporter(source) {
  for await (const event of source) {
    const data = event.data ?? {};
    if (event.type === 'test:start') {
      const path = names.get(data.file) ?? [];
      path.length = data.nesting;
      path.push(data.name);
      names.set(data.file, path);
      continue;
    }
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    // A suite reports as a test whose type is 'suite': only the tests themselves count.
    if (data.details?.type === 'suite') continue;
    const path = (names.get(data.file) ?? []).slice(0, data.nesting);
    const line = {
      file: data.file ?? null,
      test: [...path, data.name].join(' › '),
      passed: event.type === 'test:pass',
      ms: Math.round(data.details?.duration_ms ?? 0),
    };
    if (!line.passed) {
      const error = data.details?.error;
      const cause = error?.cause ?? error;
      line.error = String(cause?.message ?? cause ?? 'failed').split('\n')[0].slice(0, 400);
    }
    yield `${JSON.stringify(line)}\n`;
  }
}
