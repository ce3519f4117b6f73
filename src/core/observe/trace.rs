//! A run's log as OpenTelemetry spans, with the generative-AI semantic conventions
//! (`gen_ai.*`) and OpenInference's span kinds (`openinference.span.kind`, which Arize Phoenix
//! shows):
//!
//! - the run: `invoke_agent webmcp-host` (from `RUN_STARTED` to `RUN_FINISHED`/`RUN_ERROR`),
//!   its conversation, outcome and token totals;
//! - each model step: `chat {model id}` (`STEP_STARTED` to `STEP_FINISHED`), with the step's
//!   `webmcp_host.usage` event: model, provider, tokens, finish reason, and, when priced, its
//!   cost (also as OpenInference's `llm.cost.total`);
//! - each tool call, a child of its step: `execute_tool {name}` (`TOOL_CALL_START` to its
//!   `TOOL_CALL_RESULT`, or its rejection): name, call id, outcome, repair, confirmation.
//!
//! Prompt, model text, arguments and results are left out unless `include_text`. Ids are
//! derived from the run's id (the same run gives the same trace), times come from the log.

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::otlp::{AttrValue, Span, SpanKind};
use crate::core::agui::ToolContent;
use crate::core::agui::{
    CUSTOM_TOOL_CALL_REJECTED as REJECTED, CUSTOM_TOOL_REPAIR as REPAIR, CUSTOM_USAGE,
};
use crate::core::confirm::DECLINED;

/// The trace id of a run: the first 16 bytes of SHA-256 of `webmcp-host trace {runId}`.
pub fn trace_id(run_id: &str) -> [u8; 16] {
    let digest = Sha256::digest(format!("webmcp-host trace {run_id}"));
    digest[..16].try_into().expect("16 bytes")
}

/// The id of a run's span `what` (`run`, `step_1`, `tool {callId}`).
pub fn span_id(run_id: &str, what: &str) -> [u8; 8] {
    let digest = Sha256::digest(format!("webmcp-host span {run_id} {what}"));
    digest[..8].try_into().expect("8 bytes")
}

fn ns(ms: f64) -> u64 {
    if ms.is_finite() && ms > 0.0 {
        // Whole milliseconds apart: f64 holds no nanosecond count since the epoch exactly.
        (ms.trunc() as u64) * 1_000_000 + (ms.fract() * 1_000_000.0).round() as u64
    } else {
        0
    }
}

fn s(text: &str) -> AttrValue {
    AttrValue::Str(text.to_owned())
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

struct Builder<'a> {
    run_id: &'a str,
    trace: [u8; 16],
    include_text: bool,
    spans: Vec<Span>,
    /// Index of the open step span, and of the open tool spans (by call id).
    step: Option<usize>,
    tools: Vec<(String, usize)>,
    text: String,
}

impl Builder<'_> {
    fn open(&mut self, what: &str, parent: Option<[u8; 8]>, name: String, at: u64) -> usize {
        self.spans.push(Span {
            trace_id: self.trace,
            span_id: span_id(self.run_id, what),
            parent_span_id: parent,
            name,
            kind: SpanKind::Internal,
            start_ns: at,
            end_ns: at,
            attributes: Vec::new(),
            error: None,
        });
        self.spans.len() - 1
    }

    fn close_tool(&mut self, call_id: &str, at: u64) -> Option<usize> {
        let found = self.tools.iter().position(|(id, _)| id == call_id)?;
        let (_, index) = self.tools.remove(found);
        self.spans[index].end_ns = at;
        Some(index)
    }

    fn close_step(&mut self, at: u64) {
        for (_, index) in std::mem::take(&mut self.tools) {
            self.spans[index].end_ns = at;
        }
        if let Some(index) = self.step.take() {
            self.spans[index].end_ns = at;
            if self.include_text && !self.text.is_empty() {
                let text = std::mem::take(&mut self.text);
                self.spans[index].set("output.value", AttrValue::Str(text));
            }
        }
        self.text.clear();
    }

    fn tool(&self, call_id: &str) -> Option<usize> {
        self.tools
            .iter()
            .find_map(|(id, index)| (id == call_id).then_some(*index))
    }

    fn usage(&mut self, value: &Value) {
        let Some(index) = self.step else { return };
        let span = &mut self.spans[index];
        let model_id = str_of(value, "modelId");
        span.name = format!("chat {model_id}");
        span.kind = SpanKind::Client;
        span.set("gen_ai.request.model", s(model_id));
        span.set("gen_ai.provider.name", s(str_of(value, "provider")));
        span.set("gen_ai.system", s(str_of(value, "provider")));
        span.set("webmcp_host.model", s(str_of(value, "model")));
        span.set("webmcp_host.usage", s(str_of(value, "usage")));
        set_tokens(span, value);
        if let Some(reason) = value.get("finishReason").and_then(Value::as_str) {
            span.set(
                "gen_ai.response.finish_reasons",
                AttrValue::Strs(vec![reason.to_owned()]),
            );
        }
        if let Some(cost) = value.get("cost").and_then(Value::as_f64) {
            set_cost(span, cost);
        }
    }
}

/// A run an evaluation made: its suite, case, run and model as attributes of its own, as
/// OpenInference's `metadata` (a JSON text Phoenix filters on) and the tag `eval`.
fn eval_attributes(span: &mut Span, tag: &Value) {
    let (suite, case, model) = (
        str_of(tag, "suite"),
        str_of(tag, "case"),
        str_of(tag, "model"),
    );
    let run = tag.get("run").and_then(Value::as_i64).unwrap_or(0);
    span.set("webmcp_host.eval.suite", s(suite));
    span.set("webmcp_host.eval.case", s(case));
    span.set("webmcp_host.eval.run", AttrValue::Int(run));
    let metadata = serde_json::json!({"eval.suite": suite, "eval.case": case, "eval.run": run, "eval.model": model});
    span.set("metadata", s(&metadata.to_string()));
    span.set("tag.tags", AttrValue::Strs(vec!["eval".into()]));
}

/// A priced step's cost, in US dollars: the host's own `webmcp_host.cost_usd` and
/// OpenInference's `llm.cost.total`. An unpriced step (`cost` null) gets neither, never a 0.
///
/// `llm.cost.prompt` and `llm.cost.completion` are left out: the log carries a step's cost
/// as one number, not the prices it came from, and a cost is not split back into input and
/// output from the token counts alone (cached and uncached input tokens may have different
/// prices).
fn set_cost(span: &mut Span, cost: f64) {
    span.set("webmcp_host.cost_usd", AttrValue::Double(cost));
    span.set("llm.cost.total", AttrValue::Double(cost));
}

/// `gen_ai.usage.*` from a usage value's known counts.
fn set_tokens(span: &mut Span, value: &Value) {
    let pairs = [
        ("inputTokens", "gen_ai.usage.input_tokens"),
        ("outputTokens", "gen_ai.usage.output_tokens"),
        ("cachedInputTokens", "gen_ai.usage.cache_read.input_tokens"),
    ];
    for (field, key) in pairs {
        if let Some(n) = value.get(field).and_then(Value::as_i64) {
            span.set(key, AttrValue::Int(n));
        }
    }
}

/// The spans of a run from its log: `log` is `runLog`'s answer (`{run, events, times}`).
/// No spans when the log has no `RUN_STARTED`.
pub fn spans(log: &Value, include_text: bool) -> Vec<Span> {
    let run = log.get("run").cloned().unwrap_or_default();
    let run_id = str_of(&run, "runId");
    let events = log.get("events").and_then(Value::as_array);
    let times = log.get("times").and_then(Value::as_array);
    let (Some(events), Some(times)) = (events, times) else {
        return Vec::new();
    };
    let mut b = Builder {
        run_id,
        trace: trace_id(run_id),
        include_text,
        spans: Vec::new(),
        step: None,
        tools: Vec::new(),
        text: String::new(),
    };
    let mut last = 0;
    for (event, time) in events.iter().zip(times) {
        let at = ns(time.as_f64().unwrap_or(0.0));
        last = last.max(at);
        let kind = str_of(event, "type");
        if b.spans.is_empty() && kind != "RUN_STARTED" {
            continue;
        }
        let root = b.spans.first().map(|r| r.span_id);
        match kind {
            "RUN_STARTED" if b.spans.is_empty() => {
                let i = b.open("run", None, "invoke_agent webmcp-host".into(), at);
                let span = &mut b.spans[i];
                span.set("openinference.span.kind", s("AGENT"));
                span.set("gen_ai.operation.name", s("invoke_agent"));
                span.set("gen_ai.agent.name", s("webmcp-host"));
                span.set("gen_ai.conversation.id", s(str_of(event, "threadId")));
                span.set("session.id", s(str_of(event, "threadId")));
                span.set("webmcp_host.run_id", s(run_id));
                if include_text {
                    span.set("input.value", s(str_of(&run, "prompt")));
                }
                if let Some(tag) = run.get("eval").filter(|t| t.is_object()) {
                    eval_attributes(span, tag);
                }
            }
            "STEP_STARTED" => {
                b.close_step(at);
                let step = str_of(event, "stepName").to_owned();
                let i = b.open(&step, root, format!("chat {step}"), at);
                b.spans[i].set("openinference.span.kind", s("LLM"));
                b.spans[i].set("gen_ai.operation.name", s("chat"));
                b.step = Some(i);
            }
            "STEP_FINISHED" => b.close_step(at),
            "TEXT_MESSAGE_CONTENT" if include_text => b.text.push_str(str_of(event, "delta")),
            "CUSTOM" => custom(&mut b, event, at),
            "TOOL_CALL_START" => {
                let call_id = str_of(event, "toolCallId").to_owned();
                let name = str_of(event, "toolCallName");
                let parent = b.step.map(|i| b.spans[i].span_id).or(root);
                let i = b.open(
                    &format!("tool {call_id}"),
                    parent,
                    format!("execute_tool {name}"),
                    at,
                );
                let span = &mut b.spans[i];
                span.kind = SpanKind::Client;
                span.set("openinference.span.kind", s("TOOL"));
                span.set("gen_ai.operation.name", s("execute_tool"));
                span.set("gen_ai.tool.name", s(name));
                span.set("tool.name", s(name));
                span.set("gen_ai.tool.call.id", s(&call_id));
                b.tools.push((call_id, i));
            }
            "TOOL_CALL_ARGS" if include_text => {
                if let Some(i) = b.tool(str_of(event, "toolCallId")) {
                    let mut args = match b.spans[i].get("gen_ai.tool.call.arguments") {
                        Some(AttrValue::Str(a)) => a.clone(),
                        _ => String::new(),
                    };
                    args.push_str(str_of(event, "delta"));
                    b.spans[i].set("gen_ai.tool.call.arguments", AttrValue::Str(args));
                }
            }
            "TOOL_CALL_RESULT" => {
                let content = ToolContent::text_of(&event["content"]);
                if let Some(i) = b.close_tool(str_of(event, "toolCallId"), at) {
                    result(&mut b.spans[i], &content, include_text);
                }
            }
            "RUN_FINISHED" | "RUN_ERROR" => {
                b.close_step(at);
                let root = &mut b.spans[0];
                root.end_ns = at;
                if kind == "RUN_ERROR" {
                    root.error = Some(str_of(event, "message").to_owned());
                    root.set("webmcp_host.outcome", s("failed"));
                } else if let Some(outcome) = event.pointer("/result/type").and_then(Value::as_str)
                {
                    root.set("webmcp_host.outcome", s(outcome));
                }
                break;
            }
            _ => {}
        }
    }
    // A log cut short: what is still open ends at its last event.
    if b.spans.first().is_some_and(|r| r.end_ns == r.start_ns) {
        b.close_step(last);
        b.spans[0].end_ns = last;
    }
    b.spans
}

fn custom(b: &mut Builder, event: &Value, at: u64) {
    let value = event.get("value").cloned().unwrap_or_default();
    match str_of(event, "name") {
        CUSTOM_USAGE => {
            b.usage(&value);
            if let Some(run) = value.get("run") {
                set_tokens(&mut b.spans[0], run);
                // The run's total stays the host's own attribute: `llm.cost.*` is a model
                // call's cost, and on the run span as well it would be counted twice by
                // whatever sums a trace's `llm.cost.total`.
                if let Some(cost) = run.get("cost").and_then(Value::as_f64) {
                    b.spans[0].set("webmcp_host.cost_usd", AttrValue::Double(cost));
                }
            }
        }
        REPAIR => {
            if let Some(i) = b.tool(str_of(&value, "toolCallId")) {
                let fixes = value
                    .get("fixes")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                b.spans[i].set("webmcp_host.tool.repaired", AttrValue::Bool(true));
                b.spans[i].set("webmcp_host.tool.fixes", AttrValue::Int(fixes as i64));
            }
        }
        REJECTED => {
            if let Some(i) = b.close_tool(str_of(&value, "toolCallId"), at) {
                b.spans[i].set("webmcp_host.tool.outcome", s("rejected"));
                b.spans[i].error = Some(format!("rejected: {}", str_of(&value, "reason")));
            }
        }
        _ => {}
    }
}

/// A tool span's outcome from its result: an error result is `{"error": …}`; a call the
/// person did not allow says `declined`.
fn result(span: &mut Span, content: &str, include_text: bool) {
    let error = serde_json::from_str::<Value>(content)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned));
    match &error {
        Some(error) => {
            // The host's own words for a declined call, exactly: a tool's failure that only
            // starts so is a failure (and its text stays out unless asked for).
            let declined =
                [DECLINED, &format!("NotAllowedError: {DECLINED}")].contains(&error.as_str());
            span.set("webmcp_host.tool.outcome", s("error"));
            if declined {
                span.set("webmcp_host.tool.confirmation", s("declined"));
            }
            span.error = Some(match (include_text, declined) {
                (true, _) => error.clone(),
                (false, true) => DECLINED.into(),
                (false, false) => "the tool call failed".into(),
            });
        }
        None => span.set("webmcp_host.tool.outcome", s("ok")),
    }
    if include_text {
        span.set("gen_ai.tool.call.result", s(content));
    }
}
