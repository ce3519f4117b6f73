#!/usr/bin/env node
// AG-UI event-stream validator built on the official npm packages.
//
// Library:  import { validateEvents } from "./validate.mjs";
//           const { ok, errors } = await validateEvents(arrayOfEvents);
// CLI:      node tests/agui/validate.mjs FILE.jsonl [FILE2.jsonl ...]
//           (one AG-UI event object per line; blank lines are ignored;
//            exit 0 if every file passes, 1 otherwise)
//
// Every stream is checked by these validators (the `validator` field of an error):
//   core-1.0.0/schema          @ag-ui/core 1.0.0 EventSchemas (zod, from "@ag-ui/core/schemas")
//   core-1.0.0/unknown-keys    keys that the 1.0.0 schemas do not declare (its objects are
//                              "loose": zod passes them through, the 1.0.0 client strips them)
//   client-1.0.0/verifyEvents  @ag-ui/client 1.0.0 transformChunks -> verifyEvents (RxJS)
//   core-0.0.59/schema         @ag-ui/core 0.0.59 EventSchemas (re-exported by @ag-ui/client 0.0.59)
//   core-0.0.59/unknown-keys   keys that the 0.0.59 schemas do not declare (events pass them
//                              through, messages strip them silently)
//   client-0.0.59/verifyEvents @ag-ui/client 0.0.59 transformChunks -> verifyEvents (RxJS)
//   ours/tool-call-args        at TOOL_CALL_END the call's arguments JSON.parse to a plain object
//   ours/messages-snapshot     MESSAGES_SNAPSHOT structure beyond the schemas
//                              (both "ours" rules see *_CHUNK events expanded by the 1.0.0
//                              transformChunks, reported at the index of the chunk event)
// Opt-in (off by default, not a rule of 1.0.0 or 0.0.59):
//   compat/empty-delta         with { rejectEmptyDeltas: true } / --reject-empty-deltas:
//                              the non-empty delta refine that @ag-ui/core <= 0.0.49 applied.
//
// verifyEvents is an RxJS operator that errors the stream at the first violation,
// so each verifyEvents validator reports at most one error (the first one).
//
// AG-UI 1.0 fields that 0.0.59 does not know (ONLY_IN_1_0, splitVersionDifferences): every
// validator still reports them; splitVersionDifferences tells those errors, matched exactly
// (validator, event type, message, and the field present), from every other error.

import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import process from "node:process";

import { EventSchemas as EventSchemas100 } from "@ag-ui/core/schemas";
import {
  verifyEvents as verifyEvents100,
  transformChunks as transformChunks100,
} from "@ag-ui/client";
import {
  EventSchemas as EventSchemas0059,
  verifyEvents as verifyEvents0059,
  transformChunks as transformChunks0059,
} from "ag-ui-client-0059";

// rxjs is a dependency of @ag-ui/client (not of this project): load the copy the
// clients themselves use instead of relying on npm hoisting.
const requireFromClient = createRequire(fileURLToPath(import.meta.resolve("@ag-ui/client")));
const { from, lastValueFrom, map, toArray } = requireFromClient("rxjs");

export const VALIDATORS = Object.freeze({
  SCHEMA_100: "core-1.0.0/schema",
  KEYS_100: "core-1.0.0/unknown-keys",
  VERIFY_100: "client-1.0.0/verifyEvents",
  SCHEMA_0059: "core-0.0.59/schema",
  KEYS_0059: "core-0.0.59/unknown-keys",
  VERIFY_0059: "client-0.0.59/verifyEvents",
  TOOL_ARGS: "ours/tool-call-args",
  SNAPSHOT: "ours/messages-snapshot",
  EMPTY_DELTA: "compat/empty-delta",
  INPUT: "input",
});

// ---------------------------------------------------------------------------
// zod introspection (zod 4 for core 1.0.0, zod 3 for core 0.0.59)

const isZod4 = (s) => !!(s && s._zod && s._zod.def);
const isZod3 = (s) => !!(s && s._def && typeof s._def.typeName === "string");

function unwrap(schema) {
  let s = schema;
  for (let i = 0; i < 50 && s; i++) {
    if (isZod4(s)) {
      const d = s._zod.def;
      if (["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"].includes(d.type)) {
        s = d.innerType;
      } else if (d.type === "pipe") {
        s = d.in;
      } else if (d.type === "lazy") {
        s = d.getter();
      } else return s;
    } else if (isZod3(s)) {
      const d = s._def;
      if (["ZodOptional", "ZodNullable", "ZodDefault", "ZodReadonly", "ZodCatch", "ZodBranded"].includes(d.typeName)) {
        s = d.innerType ?? d.type;
      } else if (d.typeName === "ZodEffects") {
        s = d.schema;
      } else if (d.typeName === "ZodPipeline") {
        s = d.in;
      } else if (d.typeName === "ZodLazy") {
        s = d.getter();
      } else return s;
    } else return s;
  }
  return s;
}

function kindOf(s) {
  if (isZod4(s)) {
    const d = s._zod.def;
    switch (d.type) {
      case "object": return "object";
      case "array": return "array";
      case "record": return "record";
      case "union": return "union";
      default: return "leaf";
    }
  }
  if (isZod3(s)) {
    switch (s._def.typeName) {
      case "ZodObject": return "object";
      case "ZodArray": return "array";
      case "ZodRecord": return "record";
      case "ZodUnion": return "union";
      case "ZodDiscriminatedUnion": return "union";
      default: return "leaf";
    }
  }
  return "leaf";
}

const shapeOf = (s) => (isZod4(s) ? s._zod.def.shape : s.shape);
const elementOf = (s) => (isZod4(s) ? s._zod.def.element : s._def.type);
const recordValueOf = (s) => (isZod4(s) ? s._zod.def.valueType : s._def.valueType);
const unionOptionsOf = (s) => (isZod4(s) ? s._zod.def.options : [...(s._def.options instanceof Map ? s._def.options.values() : s._def.options)]);
const discriminatorOf = (s) => (isZod4(s) ? s._zod.def.discriminator : s._def.discriminator);
// JSON Patch operations are open on purpose in 1.0.0 (RFC 6902 says ignore unknown members).
const isSpecOpen = (s) => {
  try {
    return isZod4(s) && typeof s.meta === "function" && s.meta()?.specOpen === true;
  } catch {
    return false;
  }
};
const isPlainObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v);

// Report every key present in `value` that `schema` does not declare.
// Opaque payloads (z.any / z.custom / records of any, e.g. rawEvent, metadata,
// CUSTOM.value, state) are not descended into.
function collectUnknownKeys(value, schema, path, out) {
  const s = unwrap(schema);
  switch (kindOf(s)) {
    case "object": {
      if (!isPlainObject(value)) return;
      const shape = shapeOf(s);
      const open = isSpecOpen(s);
      for (const key of Object.keys(value)) {
        if (!Object.prototype.hasOwnProperty.call(shape, key)) {
          if (!open) out.push(`${path}/${key}`);
          continue;
        }
        collectUnknownKeys(value[key], shape[key], `${path}/${key}`, out);
      }
      return;
    }
    case "array": {
      if (!Array.isArray(value)) return;
      value.forEach((item, i) => collectUnknownKeys(item, elementOf(s), `${path}/${i}`, out));
      return;
    }
    case "record": {
      if (!isPlainObject(value)) return;
      for (const key of Object.keys(value)) collectUnknownKeys(value[key], recordValueOf(s), `${path}/${key}`, out);
      return;
    }
    case "union": {
      const options = unionOptionsOf(s);
      const disc = discriminatorOf(s);
      let chosen;
      if (disc !== undefined) {
        if (!isPlainObject(value)) return;
        chosen = options.find((o) => {
          const u = unwrap(o);
          const d = kindOf(u) === "object" ? shapeOf(u)[disc] : undefined;
          return d !== undefined && d.safeParse(value[disc]).success;
        });
      } else {
        chosen = options.find((o) => o.safeParse(value).success);
      }
      if (chosen) collectUnknownKeys(value, chosen, path, out);
      return;
    }
    default:
      return;
  }
}

function formatZodError(error) {
  const issues = error?.issues ?? [];
  if (issues.length === 0) return String(error?.message ?? error);
  return issues
    .map((issue) => {
      const p = (issue.path ?? []).join("/");
      let msg = issue.message;
      if (Array.isArray(issue.unionErrors) && issue.unionErrors.length) {
        msg += ` (${issue.unionErrors.map((e) => formatZodError(e)).join(" | ")})`;
      } else if (Array.isArray(issue.errors) && issue.errors.length && issue.code === "invalid_union") {
        msg += ` (${issue.errors.map((branch) => branch.map((i) => `${(i.path ?? []).join("/") || "<root>"}: ${i.message}`).join(", ")).join(" | ")})`;
      }
      if (issue.note) msg += ` [${issue.note}]`;
      return `${p ? `/${p}` : "<root>"}: ${msg}`;
    })
    .join("; ");
}

function describe(event) {
  if (isPlainObject(event) && typeof event.type === "string") return event.type;
  return event === null ? "null" : Array.isArray(event) ? "array" : typeof event;
}

// ---------------------------------------------------------------------------
// a. + c. (schemas)

function checkSchemas(events, schema, schemaValidator, keysValidator, errors) {
  events.forEach((event, index) => {
    const type = describe(event);
    const result = schema.safeParse(event);
    if (!result.success) {
      errors.push({ validator: schemaValidator, index, type, message: formatZodError(result.error) });
    }
    const unknown = [];
    try {
      collectUnknownKeys(event, schema, "", unknown);
    } catch (e) {
      unknown.push(`<introspection failed: ${e?.message ?? e}>`);
    }
    if (unknown.length) {
      errors.push({
        validator: keysValidator,
        index,
        type,
        message: `keys not declared by the schema: ${unknown.join(", ")}`,
      });
    }
  });
}

// ---------------------------------------------------------------------------
// b. + c. (verifyEvents)

async function checkVerify(events, transformChunks, verifyEvents, validator, errors) {
  // Index of the input event currently being pushed; `from` emits synchronously
  // and both operators are synchronous, so this tells which event tripped the error.
  let current = -1;
  const source$ = from(events).pipe(
    map((event, i) => {
      current = i;
      return event;
    }),
  );
  try {
    await lastValueFrom(source$.pipe(transformChunks(false), verifyEvents(false), toArray()));
  } catch (err) {
    const index = current >= 0 ? current : undefined;
    errors.push({
      validator,
      index,
      type: index !== undefined ? describe(events[index]) : undefined,
      message: err?.message ?? String(err),
    });
  }
}

// ---------------------------------------------------------------------------
// d. (our own rules)

function parsesToPlainObject(text) {
  if (typeof text !== "string") return { ok: false, why: `arguments is ${text === null ? "null" : typeof text}, not a string` };
  try {
    const v = JSON.parse(text);
    if (isPlainObject(v)) return { ok: true };
    return { ok: false, why: `arguments parse to ${v === null ? "null" : Array.isArray(v) ? "an array" : typeof v}, not a plain object` };
  } catch (e) {
    return { ok: false, why: `arguments are not valid JSON (${e.message})` };
  }
}

const short = (s) => {
  const t = JSON.stringify(s);
  return t && t.length > 120 ? `${t.slice(0, 117)}...` : t;
};

// TEXT_MESSAGE_CHUNK / TOOL_CALL_CHUNK / REASONING_MESSAGE_CHUNK expanded into
// START/CONTENT|ARGS/END the way the 1.0.0 client does (transformChunks), each
// output event tagged with the index of the input event that produced it.
// Streams without chunk events come back unchanged. If the transform fails, the
// events up to the failure are returned (verifyEvents reports the failure).
async function expandChunks(events) {
  let current = -1;
  const out = [];
  try {
    await lastValueFrom(
      from(events).pipe(
        map((event, i) => {
          current = i;
          return event;
        }),
        transformChunks100(false),
        map((event) => {
          out.push({ event, index: current, original: events[current] });
          return event;
        }),
        toArray(),
      ),
    );
  } catch {
    /* reported by the verifyEvents validators */
  }
  return out;
}

function checkOurRules(tagged, errors, { rejectEmptyDeltas }) {
  // toolCallId -> { args: string, source: string, removed: boolean }
  const open = new Map();

  tagged.forEach(({ event, index, original }) => {
    if (!isPlainObject(event)) return;
    const type = event.type;
    // Errors are reported against the input event; a chunk-derived event says so.
    const report = (validator, message) =>
      errors.push({
        validator,
        index,
        type: describe(original),
        message: event === original ? message : `(${type} synthesised by transformChunks) ${message}`,
      });

    if (
      rejectEmptyDeltas &&
      (type === "TEXT_MESSAGE_CONTENT" || type === "REASONING_MESSAGE_CONTENT" || type === "THINKING_TEXT_MESSAGE_CONTENT") &&
      event.delta === ""
    ) {
      report(VALIDATORS.EMPTY_DELTA, "delta is the empty string (rejected by @ag-ui/core <= 0.0.49: 'Delta must not be an empty string')");
    }

    switch (type) {
      case "TOOL_CALL_START":
        if (typeof event.toolCallId === "string") {
          open.set(event.toolCallId, { args: "", source: "TOOL_CALL_ARGS deltas", removed: false });
        }
        break;
      case "TOOL_CALL_ARGS": {
        const call = open.get(event.toolCallId);
        // Appended like the client's defaultApplyEvents does; a call that a
        // snapshot removed ignores further deltas (the client warns and drops them).
        if (call && !call.removed && typeof event.delta === "string") call.args += event.delta;
        break;
      }
      case "TOOL_CALL_END": {
        const call = open.get(event.toolCallId);
        if (!call) break; // END without START is verifyEvents' business
        open.delete(event.toolCallId);
        if (call.removed) break; // removed by a MESSAGES_SNAPSHOT: nothing to check
        const r = parsesToPlainObject(call.args);
        if (!r.ok) {
          report(VALIDATORS.TOOL_ARGS, `tool call '${event.toolCallId}': ${r.why}; arguments (from ${call.source}) = ${short(call.args)}`);
        }
        break;
      }
      case "MESSAGES_SNAPSHOT": {
        const problems = checkSnapshot(event.messages, open);
        for (const message of problems) report(VALIDATORS.SNAPSHOT, message);
        // A snapshot taken while calls are open replaces what the client holds for them.
        if (Array.isArray(event.messages)) {
          for (const [id, call] of open) {
            const entry = findToolCallEntry(event.messages, id);
            if (entry) {
              call.args = entry.function?.arguments;
              call.source = `the MESSAGES_SNAPSHOT at event #${index} plus later deltas`;
              call.removed = false;
            } else {
              call.removed = true;
            }
          }
        }
        break;
      }
      default:
        break;
    }
  });
}

function findToolCallEntry(messages, id) {
  for (const m of messages) {
    if (isPlainObject(m) && m.role === "assistant" && Array.isArray(m.toolCalls)) {
      const entry = m.toolCalls.find((tc) => isPlainObject(tc) && tc.id === id);
      if (entry) return entry;
    }
  }
  return undefined;
}

// Structural rules the zod schemas cannot express. Per-message shapes (roles,
// required content, toolCalls entry format, unknown keys) are reported by the
// core-*/schema and core-*/unknown-keys validators, so they are not repeated here:
//   - message ids are non-empty and unique within the snapshot
//   - tool call ids are non-empty and unique within the snapshot
//   - every toolCalls entry that is not still streaming has arguments that
//     JSON.parse to a plain object
//   - a tool message answers a tool call carried by an earlier assistant message
function checkSnapshot(messages, openCalls) {
  const problems = [];
  if (!Array.isArray(messages)) return ["`messages` is not an array"];
  const messageIds = new Set();
  const toolCallIds = new Set();
  messages.forEach((m, i) => {
    const where = `messages/${i}`;
    if (!isPlainObject(m)) return; // shape errors come from the schema validators
    if (typeof m.id !== "string" || m.id === "") problems.push(`${where}: id must be a non-empty string`);
    else if (messageIds.has(m.id)) problems.push(`${where}: duplicate message id '${m.id}'`);
    else messageIds.add(m.id);
    if (m.role === "assistant" && Array.isArray(m.toolCalls)) {
      m.toolCalls.forEach((tc, j) => {
        const w = `${where}/toolCalls/${j}`;
        if (!isPlainObject(tc)) return;
        if (typeof tc.id !== "string" || tc.id === "") problems.push(`${w}: id must be a non-empty string`);
        else if (toolCallIds.has(tc.id)) problems.push(`${w}: duplicate tool call id '${tc.id}'`);
        else toolCallIds.add(tc.id);
        // Calls still streaming are checked at their TOOL_CALL_END instead.
        if (isPlainObject(tc.function) && typeof tc.function.arguments === "string" && !openCalls.has(tc.id)) {
          const r = parsesToPlainObject(tc.function.arguments);
          if (!r.ok) problems.push(`${w} ('${tc.id}'): ${r.why}`);
        }
      });
    }
    if (m.role === "tool" && typeof m.toolCallId === "string" && !toolCallIds.has(m.toolCallId)) {
      problems.push(`${where}: tool message answers toolCallId '${m.toolCallId}', which no earlier assistant message in this snapshot carries`);
    }
  });
  return problems;
}

// ---------------------------------------------------------------------------
// AG-UI 1.0 fields that 0.0.59 does not know

// Each entry is one 1.0 field the host emits where it says something, and exactly how the
// 0.0.59 validators report it. A `core-0.0.59/schema` error is matched whole (its message);
// a `core-0.0.59/unknown-keys` error lists keys, and each listed key must match `key`.
// `holds` checks that the event really carries the field.
export const ONLY_IN_1_0 = Object.freeze([
  {
    field: "RUN_FINISHED outcome {type: 'cancelled'} (a stopped run)",
    validator: VALIDATORS.SCHEMA_0059,
    types: ["RUN_FINISHED"],
    message: /^\/outcome\/type: Invalid discriminator value\. Expected 'success' \| 'interrupt'$/,
    holds: (e) => e.outcome?.type === "cancelled",
  },
  {
    field: "RUN_FINISHED outcome.pendingToolCallIds (frontend tool calls left to the client)",
    validator: VALIDATORS.SCHEMA_0059,
    types: ["RUN_FINISHED"],
    message: /^\/outcome: Unrecognized key\(s\) in object: 'pendingToolCallIds'$/,
    holds: (e) => e.outcome?.type === "success" && Array.isArray(e.outcome.pendingToolCallIds),
  },
  {
    field: "RUN_FINISHED outcome.pendingToolCallIds (frontend tool calls left to the client)",
    validator: VALIDATORS.KEYS_0059,
    types: ["RUN_FINISHED"],
    key: /^\/outcome\/pendingToolCallIds$/,
    holds: (e) => Array.isArray(e.outcome?.pendingToolCallIds),
  },
  {
    field: "usage[].cacheWriteInputTokens (tokens written to a provider's cache)",
    validator: VALIDATORS.KEYS_0059,
    types: ["RUN_FINISHED", "RUN_ERROR"],
    key: /^\/usage\/\d+\/cacheWriteInputTokens$/,
    holds: (e) => Array.isArray(e.usage) && e.usage.some((u) => u?.cacheWriteInputTokens !== undefined),
  },
  {
    field: "TOOL_CALL_RESULT content as parts (a result with media)",
    validator: VALIDATORS.SCHEMA_0059,
    types: ["TOOL_CALL_RESULT"],
    message: /^\/content: Expected string, received array$/,
    holds: (e) => Array.isArray(e.content),
  },
]);

const KEYS_PREFIX = "keys not declared by the schema: ";

/**
 * Splits the errors of `validateEvents(events)` into the 0.0.59 reports of AG-UI 1.0 fields
 * (ONLY_IN_1_0) and every other error. An unknown-keys error is a 1.0 field's only when
 * every key it lists is one.
 * @returns {{ onlyIn10: { error: object, fields: string[] }[], others: object[] }}
 */
export function splitVersionDifferences(events, errors) {
  const onlyIn10 = [];
  const others = [];
  for (const error of errors) {
    const event = events[error.index];
    const rules = ONLY_IN_1_0.filter(
      (r) => r.validator === error.validator && r.types.includes(error.type) && isPlainObject(event) && r.holds(event),
    );
    let fields = null;
    if (error.validator === VALIDATORS.KEYS_0059 && error.message.startsWith(KEYS_PREFIX)) {
      const keys = error.message.slice(KEYS_PREFIX.length).split(", ");
      const matched = keys.map((k) => rules.find((r) => r.key?.test(k)));
      if (matched.every(Boolean)) fields = [...new Set(matched.map((r) => r.field))];
    } else {
      const rule = rules.find((r) => r.message?.test(error.message));
      if (rule) fields = [rule.field];
    }
    if (fields) onlyIn10.push({ error, fields });
    else others.push(error);
  }
  return { onlyIn10, others };
}

// ---------------------------------------------------------------------------
// public API

/**
 * Validate one AG-UI event stream.
 * @param {unknown[]} events  the events, in order
 * @param {{ rejectEmptyDeltas?: boolean }} [options]
 * @returns {Promise<{ ok: boolean, errors: { validator: string, index?: number, type?: string, message: string }[] }>}
 */
export async function validateEvents(events, options = {}) {
  if (!Array.isArray(events)) throw new TypeError("validateEvents expects an array of events");
  const errors = [];
  checkSchemas(events, EventSchemas100, VALIDATORS.SCHEMA_100, VALIDATORS.KEYS_100, errors);
  checkSchemas(events, EventSchemas0059, VALIDATORS.SCHEMA_0059, VALIDATORS.KEYS_0059, errors);
  await checkVerify(events, transformChunks100, verifyEvents100, VALIDATORS.VERIFY_100, errors);
  await checkVerify(events, transformChunks0059, verifyEvents0059, VALIDATORS.VERIFY_0059, errors);
  checkOurRules(await expandChunks(events), errors, { rejectEmptyDeltas: !!options.rejectEmptyDeltas });
  return { ok: errors.length === 0, errors };
}

/**
 * A run's events as the host must emit them: every validator's errors, but for the 0.0.59
 * reports of AG-UI 1.0's own fields (`ONLY_IN_1_0`, matched exactly), which 0.0.59 cannot know.
 * @param {unknown[]} events  the events, in order
 * @returns {Promise<{ ok: boolean, errors: object[], onlyIn10: { error: object, fields: string[] }[] }>}
 */
export async function validateRunEvents(events, options = {}) {
  const { errors } = await validateEvents(events, options);
  const { onlyIn10, others } = splitVersionDifferences(events, errors);
  return { ok: others.length === 0, errors: others, onlyIn10 };
}

export function formatError(err) {
  const at = err.index !== undefined ? ` event #${err.index}${err.type ? ` (${err.type})` : ""}` : "";
  return `[${err.validator}]${at}: ${err.message}`;
}

/** Parse JSONL text: one event per non-blank line. */
export function parseJsonl(text) {
  const events = [];
  const errors = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === "") return;
    try {
      events.push(JSON.parse(line));
    } catch (e) {
      errors.push({ validator: VALIDATORS.INPUT, message: `line ${i + 1}: invalid JSON (${e.message})` });
    }
  });
  return { events, errors };
}

export async function validateFile(file, options = {}) {
  const { events, errors: inputErrors } = parseJsonl(await readFile(file, "utf8"));
  const { errors } = await validateEvents(events, options);
  const all = [...inputErrors, ...errors];
  return { ok: all.length === 0, errors: all, count: events.length };
}

async function main(argv) {
  const options = {};
  const files = [];
  for (const a of argv) {
    if (a === "--reject-empty-deltas") options.rejectEmptyDeltas = true;
    else if (a === "-h" || a === "--help") {
      console.log("usage: node tests/agui/validate.mjs [--reject-empty-deltas] FILE.jsonl [FILE2.jsonl ...]");
      return 0;
    } else files.push(a);
  }
  if (files.length === 0) {
    console.error("usage: node tests/agui/validate.mjs [--reject-empty-deltas] FILE.jsonl [FILE2.jsonl ...]");
    return 2;
  }
  let allOk = true;
  for (const file of files) {
    let result;
    try {
      result = await validateFile(file, options);
    } catch (e) {
      result = { ok: false, errors: [{ validator: VALIDATORS.INPUT, message: e?.message ?? String(e) }], count: 0 };
    }
    allOk &&= result.ok;
    console.log(`${result.ok ? "PASS" : "FAIL"} ${file} (${result.count} events)`);
    for (const err of result.errors) console.log(`  ${formatError(err)}`);
  }
  return allOk ? 0 : 1;
}

const invokedDirectly = process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
