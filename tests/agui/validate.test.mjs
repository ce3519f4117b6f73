// Self-test of tests/agui/validate.mjs.   Run: node --test tests/agui/
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

import { splitVersionDifferences, validateEvents, VALIDATORS as V } from "./validate.mjs";

const RUN = { threadId: "thread-1", runId: "run-1" };
const argsObject = JSON.stringify({ query: "weather", limit: 3 });

function validStream() {
  return [
    { type: "RUN_STARTED", ...RUN, timestamp: 1700000000000 },
    { type: "STEP_STARTED", stepName: "plan" },
    { type: "TEXT_MESSAGE_START", messageId: "msg-1", role: "assistant" },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "msg-1", delta: "Let me look " },
    { type: "TEXT_MESSAGE_CONTENT", messageId: "msg-1", delta: "that up." },
    { type: "TEXT_MESSAGE_END", messageId: "msg-1" },
    { type: "TOOL_CALL_START", toolCallId: "call-1", toolCallName: "search", parentMessageId: "msg-1" },
    { type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: argsObject.slice(0, 10) },
    { type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: argsObject.slice(10) },
    { type: "TOOL_CALL_END", toolCallId: "call-1" },
    { type: "TOOL_CALL_RESULT", messageId: "tool-msg-1", toolCallId: "call-1", content: "sunny", role: "tool" },
    {
      type: "MESSAGES_SNAPSHOT",
      messages: [
        { id: "user-1", role: "user", content: "What's the weather?" },
        {
          id: "msg-1",
          role: "assistant",
          content: "Let me look that up.",
          toolCalls: [{ id: "call-1", type: "function", function: { name: "search", arguments: argsObject } }],
        },
        { id: "tool-msg-1", role: "tool", toolCallId: "call-1", content: "sunny" },
      ],
    },
    { type: "CUSTOM", name: "webmcp.status", value: { ok: true } },
    { type: "STEP_FINISHED", stepName: "plan" },
    { type: "RUN_FINISHED", ...RUN },
  ];
}

const validatorsOf = (errors) => [...new Set(errors.map((e) => e.validator))].sort();
const explain = (errors) => JSON.stringify(errors, null, 2);
const idx = (events, pred) => events.findIndex(pred);

test("valid stream passes every validator", async () => {
  const { ok, errors } = await validateEvents(validStream());
  assert.equal(ok, true, explain(errors));
  assert.deepEqual(errors, []);
});

test("missing RUN_STARTED is caught by both verifyEvents", async () => {
  const { ok, errors } = await validateEvents(validStream().slice(1));
  assert.equal(ok, false);
  assert.deepEqual(validatorsOf(errors), [V.VERIFY_0059, V.VERIFY_100].sort(), explain(errors));
  for (const e of errors) {
    assert.equal(e.index, 0);
    assert.match(e.message, /First event must be 'RUN_STARTED'/);
  }
});

test("TEXT_MESSAGE_CONTENT with an empty delta is valid for 1.0.0 and 0.0.59; only the opt-in legacy check rejects it", async () => {
  const events = validStream();
  const i = idx(events, (e) => e.type === "TEXT_MESSAGE_CONTENT");
  events[i] = { ...events[i], delta: "" };

  const lenient = await validateEvents(events);
  assert.equal(lenient.ok, true, explain(lenient.errors));

  const strict = await validateEvents(events, { rejectEmptyDeltas: true });
  assert.equal(strict.ok, false);
  assert.deepEqual(validatorsOf(strict.errors), [V.EMPTY_DELTA], explain(strict.errors));
  assert.equal(strict.errors[0].index, i);
});

test("TOOL_CALL_ARGS for an unknown tool call id is caught by both verifyEvents", async () => {
  const events = validStream();
  const i = idx(events, (e) => e.type === "TOOL_CALL_END");
  events.splice(i, 0, { type: "TOOL_CALL_ARGS", toolCallId: "call-unknown", delta: "{}" });
  const { ok, errors } = await validateEvents(events);
  assert.equal(ok, false);
  assert.deepEqual(validatorsOf(errors), [V.VERIFY_0059, V.VERIFY_100].sort(), explain(errors));
  for (const e of errors) {
    assert.equal(e.index, i);
    assert.match(e.message, /No active tool call found with ID 'call-unknown'/);
  }
});

test("events after RUN_FINISHED are caught by both verifyEvents", async () => {
  const events = validStream();
  events.push({ type: "CUSTOM", name: "late", value: 1 });
  const { ok, errors } = await validateEvents(events);
  assert.equal(ok, false);
  assert.deepEqual(validatorsOf(errors), [V.VERIFY_0059, V.VERIFY_100].sort(), explain(errors));
  for (const e of errors) {
    assert.equal(e.index, events.length - 1);
    assert.match(e.message, /already finished with 'RUN_FINISHED'/);
  }
});

test("a new RUN_STARTED after RUN_FINISHED is allowed, so is RUN_ERROR", async () => {
  const again = [...validStream(), { type: "RUN_STARTED", threadId: "thread-1", runId: "run-2" }, { type: "RUN_ERROR", message: "boom" }];
  const r = await validateEvents(again);
  assert.equal(r.ok, true, explain(r.errors));
});

for (const [label, args, why] of [
  ["an array", "[1,2]", /an array, not a plain object/],
  ["a string", '"x"', /string, not a plain object/],
  ["invalid JSON", '{"query":', /not valid JSON/],
  ["empty", "", /not valid JSON/],
]) {
  test(`TOOL_CALL_END whose arguments are ${label} is caught by ours/tool-call-args only`, async () => {
    const events = validStream().filter((e) => e.type !== "TOOL_CALL_ARGS" && e.type !== "MESSAGES_SNAPSHOT");
    const end = idx(events, (e) => e.type === "TOOL_CALL_END");
    if (args !== "") events.splice(end, 0, { type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: args });
    const { ok, errors } = await validateEvents(events);
    assert.equal(ok, false);
    assert.deepEqual(validatorsOf(errors), [V.TOOL_ARGS], explain(errors));
    assert.equal(errors[0].index, idx(events, (e) => e.type === "TOOL_CALL_END"));
    assert.match(errors[0].message, why);
  });
}

function midCallSnapshotStream(snapshotArguments, { omitCall = false } = {}) {
  return [
    { type: "RUN_STARTED", ...RUN },
    { type: "TOOL_CALL_START", toolCallId: "call-9", toolCallName: "fill" },
    { type: "TOOL_CALL_ARGS", toolCallId: "call-9", delta: "not json at all" },
    {
      type: "MESSAGES_SNAPSHOT",
      messages: omitCall
        ? [{ id: "a-1", role: "assistant", content: "" }]
        : [
            {
              id: "a-1",
              role: "assistant",
              toolCalls: [{ id: "call-9", type: "function", function: { name: "fill", arguments: snapshotArguments } }],
            },
          ],
    },
    { type: "TOOL_CALL_END", toolCallId: "call-9" },
    { type: "RUN_FINISHED", ...RUN },
  ];
}

test("a MESSAGES_SNAPSHOT mid tool call supplies the arguments checked at TOOL_CALL_END", async () => {
  const good = await validateEvents(midCallSnapshotStream('{"field":"name"}'));
  assert.equal(good.ok, true, explain(good.errors));

  const bad = await validateEvents(midCallSnapshotStream("[]"));
  assert.equal(bad.ok, false);
  assert.deepEqual(validatorsOf(bad.errors), [V.TOOL_ARGS], explain(bad.errors));
  assert.match(bad.errors[0].message, /MESSAGES_SNAPSHOT/);
});

test("a MESSAGES_SNAPSHOT that drops the open call removes it: no arguments check", async () => {
  const r = await validateEvents(midCallSnapshotStream(undefined, { omitCall: true }));
  assert.equal(r.ok, true, explain(r.errors));
});

test("malformed MESSAGES_SNAPSHOT messages are reported", async () => {
  const events = validStream();
  const i = idx(events, (e) => e.type === "MESSAGES_SNAPSHOT");
  events[i] = {
    type: "MESSAGES_SNAPSHOT",
    messages: [
      { id: "m", role: "assistant", toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "[]" } }] },
      { id: "m", role: "tool", toolCallId: "nope", content: "x" },
      { id: "s", role: "system" },
    ],
  };
  const { ok, errors } = await validateEvents(events);
  assert.equal(ok, false);
  assert.deepEqual(validatorsOf(errors), [V.SCHEMA_0059, V.SCHEMA_100, V.SNAPSHOT].sort(), explain(errors));
  const ours = errors.filter((e) => e.validator === V.SNAPSHOT).map((e) => e.message).join("\n");
  assert.match(ours, /duplicate message id 'm'/);
  assert.match(ours, /toolCallId 'nope'/);
  assert.match(ours, /an array, not a plain object/);
  const schema = errors.find((e) => e.validator === V.SCHEMA_100);
  assert.match(schema.message, /messages\/2\/content/); // system content is required
});

test("keys the schemas do not declare are reported (exact shapes)", async () => {
  const events = validStream();
  events[0] = { ...events[0], sessionId: "s-1" };
  const snap = idx(events, (e) => e.type === "MESSAGES_SNAPSHOT");
  events[snap].messages[0] = { ...events[snap].messages[0], createdAt: 1 };
  const { ok, errors } = await validateEvents(events);
  assert.equal(ok, false);
  assert.deepEqual(validatorsOf(errors), [V.KEYS_0059, V.KEYS_100].sort(), explain(errors));
  const text = errors.map((e) => `${e.index}:${e.message}`).join("\n");
  assert.match(text, /0:.*\/sessionId/);
  assert.match(text, new RegExp(`${snap}:.*/messages/0/createdAt`));
});

test("differences between 1.0.0 and 0.0.59 are told apart", async () => {
  // content parts in TOOL_CALL_RESULT: 1.0.0 only
  const parts = validStream();
  const r = idx(parts, (e) => e.type === "TOOL_CALL_RESULT");
  parts[r] = { ...parts[r], content: [{ type: "text", text: "sunny" }] };
  const a = await validateEvents(parts);
  assert.deepEqual(validatorsOf(a.errors), [V.SCHEMA_0059], explain(a.errors));

  // THINKING_* events: 0.0.59 only
  const thinking = validStream();
  thinking.splice(1, 0, { type: "THINKING_START" }, { type: "THINKING_END" });
  const b = await validateEvents(thinking);
  assert.deepEqual(validatorsOf(b.errors), [V.SCHEMA_100], explain(b.errors));

  // non-integer timestamp: 1.0.0 requires an integer
  const ts = validStream();
  ts[0] = { ...ts[0], timestamp: 1.5 };
  const c = await validateEvents(ts);
  assert.deepEqual(validatorsOf(c.errors), [V.SCHEMA_100], explain(c.errors));

  // the cancelled outcome: 1.0.0 only
  const cancelled = withEnd({ outcome: { type: "cancelled" } });
  const d = await validateEvents(cancelled);
  assert.deepEqual(validatorsOf(d.errors), [V.SCHEMA_0059], explain(d.errors));

  // pendingToolCallIds on the success outcome: 1.0.0 only (0.0.59's success outcome is strict)
  const pending = withEnd({ outcome: { type: "success", pendingToolCallIds: ["call-1"] } });
  const e = await validateEvents(pending);
  assert.deepEqual(validatorsOf(e.errors), [V.KEYS_0059, V.SCHEMA_0059].sort(), explain(e.errors));

  // usage: both; its cacheWriteInputTokens: 1.0.0 only (0.0.59 strips it)
  const usage = { provider: "anthropic", model: "claude-sonnet-4-5", inputTokens: 3652, outputTokens: 39, totalTokens: 3691, cachedInputTokens: 1800 };
  assert.deepEqual((await validateEvents(withEnd({ usage: [usage] }))).errors, []);
  const f = await validateEvents(withEnd({ usage: [{ ...usage, cacheWriteInputTokens: 1800 }] }));
  assert.deepEqual(validatorsOf(f.errors), [V.KEYS_0059], explain(f.errors));
  const error = [...validStream().slice(0, -1), { type: "RUN_ERROR", message: "boom", usage: [usage] }];
  assert.deepEqual((await validateEvents(error)).errors, []);
});

/** The valid stream, its RUN_FINISHED with `fields` besides. */
function withEnd(fields) {
  const events = validStream();
  events[events.length - 1] = { ...events.at(-1), ...fields };
  return events;
}

test("the 0.0.59 reports of 1.0's own fields are told from every other error", async () => {
  const events = withEnd({
    outcome: { type: "success", pendingToolCallIds: ["call-1"] },
    usage: [{ inputTokens: 10, cacheWriteInputTokens: 4 }],
  });
  const r = idx(events, (e) => e.type === "TOOL_CALL_RESULT");
  events[r] = { ...events[r], content: [{ type: "text", text: "sunny" }, { type: "image", source: { type: "url", value: "https://x.test/a.png" } }] };
  const known = await validateEvents(events);
  const split = splitVersionDifferences(events, known.errors);
  assert.deepEqual(split.others, [], explain(split.others));
  assert.equal(split.onlyIn10.length, 3, explain(known.errors));
  assert.ok(split.onlyIn10.every(({ error }) => error.validator.includes("0.0.59")));

  // A key 0.0.59 does not declare beside a 1.0 field's, an interrupt outcome that is
  // malformed, a cancelled outcome on another event: still errors.
  const bad = withEnd({ usage: [{ inputTokens: 10, cacheWriteInputTokens: 4, cost: 1 }] });
  bad.splice(1, 0, { type: "CUSTOM", name: "x", value: 1, outcome: { type: "cancelled" } });
  const unknown = await validateEvents(bad);
  const rest = splitVersionDifferences(bad, unknown.errors).others;
  assert.ok(rest.some((e) => e.validator === V.KEYS_100 && /\/usage\/0\/cost/.test(e.message)), explain(rest));
  assert.ok(rest.some((e) => e.validator === V.KEYS_0059 && /cost/.test(e.message)), explain(rest));
  assert.ok(rest.some((e) => e.type === "CUSTOM"), explain(rest));
  const interrupt = withEnd({ outcome: { type: "interrupt", interrupts: [] } });
  const i = await validateEvents(interrupt);
  assert.ok(splitVersionDifferences(interrupt, i.errors).others.length > 0, explain(i.errors));
});

test("CLI: exit code and PASS/FAIL per file", async () => {
  const dir = await mkdtemp(join(tmpdir(), "agui-validate-"));
  try {
    const good = join(dir, "good.jsonl");
    const bad = join(dir, "bad.jsonl");
    await writeFile(good, validStream().map((e) => JSON.stringify(e)).join("\n") + "\n");
    await writeFile(bad, validStream().slice(1).map((e) => JSON.stringify(e)).join("\n") + "\nnot json\n");
    const cli = fileURLToPath(new URL("./validate.mjs", import.meta.url));
    const run = promisify(execFile);

    const okRun = await run(process.execPath, [cli, good]);
    assert.match(okRun.stdout, /^PASS .*good\.jsonl/m);

    await assert.rejects(run(process.execPath, [cli, good, bad]), (err) => {
      assert.equal(err.code, 1);
      assert.match(err.stdout, /^PASS .*good\.jsonl/m);
      assert.match(err.stdout, /^FAIL .*bad\.jsonl/m);
      assert.match(err.stdout, /\[client-1\.0\.0\/verifyEvents\] event #0/);
      assert.match(err.stdout, /\[input\]: line \d+: invalid JSON/);
      return true;
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
