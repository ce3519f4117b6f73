// The tool calls in what the host answers, as `[{name, args, result?}]` (the shape of a
// `webmcpHost.evaluate` result's `calls`).

/**
 * The calls of `subject`: a `run` answer (its AG-UI `messages`, or else its `events`), an
 * `evaluate` answer (every result's calls) or one of its results, an array of AG-UI events or
 * messages, or an array of calls. Arguments are the ones the tool got (after repair); `result`
 * is the tool's answer when it ran (text that is JSON is given parsed). A call recorded as not
 * made (`made: false`: the tab had no such tool) is left out. Throws a TypeError for anything
 * else.
 */
export function callsOf(subject) {
  if (Array.isArray(subject)) {
    if (subject.every((item) => isCall(item))) return made(subject);
    if (subject.every((item) => typeof item?.type === 'string')) return fromEvents(subject);
    if (subject.every((item) => typeof item?.role === 'string')) return fromMessages(subject);
  } else if (subject && typeof subject === 'object') {
    if (Array.isArray(subject.results)) return subject.results.flatMap((r) => made(r.calls ?? []));
    if (Array.isArray(subject.calls)) return made(subject.calls);
    if (Array.isArray(subject.messages)) return fromMessages(subject.messages);
    if (Array.isArray(subject.events)) return fromEvents(subject.events);
  }
  throw new TypeError(
    'expected a run answer ({messages, events}), an evaluate answer or result ({results} / {calls}), AG-UI events or messages, or calls [{name, args}]',
  );
}

// A smoke step whose tool the tab does not offer is recorded with `made: false`: never called.
const made = (calls) => calls.filter((c) => c?.made !== false);

/**
 * The calls of `subject` recorded as not made (`made: false`: an `evaluate` answer's, result's
 * or a call list's step whose tool the tab did not offer), each with its error (which names
 * what the tab offers). None for anything else.
 */
export function notMadeOf(subject) {
  const all = Array.isArray(subject?.results)
    ? subject.results.flatMap((r) => r?.calls ?? [])
    : Array.isArray(subject?.calls)
      ? subject.calls
      : Array.isArray(subject) && subject.every((item) => isCall(item))
        ? subject
        : [];
  return all.filter((c) => c?.made === false);
}

const isCall = (item) => item && typeof item.name === 'string' && 'args' in item && !('role' in item) && !('type' in item);

// A result with media is AG-UI content parts: the text the model got is its text parts.
const textOf = (content) =>
  Array.isArray(content)
    ? content.filter((p) => p?.type === 'text').map((p) => p.text).join('')
    : content;

const parsed = (content) => {
  const text = textOf(content);
  if (typeof text !== 'string') return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

function fromMessages(messages) {
  const results = new Map();
  for (const m of messages) if (m.role === 'tool' && m.toolCallId) results.set(m.toolCallId, parsed(m.content));
  const calls = [];
  for (const m of messages) {
    for (const call of m.toolCalls ?? []) {
      const entry = { name: call.function?.name ?? '', args: parsed(call.function?.arguments ?? '{}') };
      if (results.has(call.id)) entry.result = results.get(call.id);
      calls.push(entry);
    }
  }
  return calls;
}

function fromEvents(events) {
  // The last messages snapshot carries the calls as they ran (repaired arguments included).
  const snapshot = events.findLast((e) => e.type === 'MESSAGES_SNAPSHOT');
  const fromSnapshot = snapshot ? fromMessages(snapshot.messages ?? []) : [];
  const byId = new Map();
  const order = [];
  for (const e of events) {
    if (e.type === 'TOOL_CALL_START') {
      byId.set(e.toolCallId, { name: e.toolCallName, text: '' });
      order.push(e.toolCallId);
    } else if (e.type === 'TOOL_CALL_ARGS' && byId.has(e.toolCallId)) {
      byId.get(e.toolCallId).text += e.delta ?? '';
    } else if (e.type === 'TOOL_CALL_RESULT' && byId.has(e.toolCallId)) {
      byId.get(e.toolCallId).result = parsed(e.content);
    }
  }
  if (fromSnapshot.length >= order.length) return fromSnapshot;
  return order.map((id) => {
    const c = byId.get(id);
    return { name: c.name, args: parsed(c.text || '{}'), ...('result' in c ? { result: c.result } : {}) };
  });
}
