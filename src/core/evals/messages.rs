//! A case's conversation as a run's AG-UI messages, and a run's end read: the calls it made
//! (the case's own earlier calls left out), their results, the tokens it reported, why it was
//! cut short.
//!
//! Invariant: pure; a call whose arguments or result are not JSON is read as text, never a
//! panic.

use serde_json::{json, Value};

use super::{ActualCall, EvalMessage};
use crate::core::agui::Message;
use crate::core::provider::usage::RunUsage;
use crate::core::run::RunOutcome;

/// A case's messages as AG-UI messages for `run`: `model` text and calls become assistant
/// messages (consecutive calls one message), responses tool messages answering the earliest
/// unanswered call of that name.
pub fn agui_messages(messages: &[EvalMessage]) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut open: Vec<(String, String)> = Vec::new(); // (call id, name) not answered yet
    for (i, message) in messages.iter().enumerate() {
        let id = format!("eval_m{i}");
        match message {
            EvalMessage::Message { role, content } => out.push(json!({
                "role": if role == "model" { "assistant" } else { "user" },
                "id": id,
                "content": content,
            })),
            EvalMessage::FunctionCall {
                name, arguments, ..
            } => {
                let call_id = format!("eval_c{i}");
                let call = json!({"id": call_id, "type": "function", "function": {
                    "name": name,
                    "arguments": arguments.to_string(),
                }});
                open.push((call_id, name.clone()));
                match out.last_mut() {
                    Some(last) if last.get("toolCalls").is_some() => last["toolCalls"]
                        .as_array_mut()
                        .expect("an array")
                        .push(call),
                    _ => out.push(json!({"role": "assistant", "id": id, "toolCalls": [call]})),
                }
            }
            EvalMessage::FunctionResponse { name, response, .. } => {
                let at = open.iter().position(|(_, n)| n == name);
                let call_id = match at {
                    Some(at) => open.remove(at).0,
                    None => continue, // a response to no call: the model could not place it
                };
                let content = match response {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                out.push(
                    json!({"role": "tool", "id": id, "toolCallId": call_id, "content": content}),
                );
            }
        }
    }
    out
}

/// The tool calls of a run's messages (the case's own calls left out), each with its result
/// when it ran (JSON results parsed).
pub fn calls_of(messages: &[Message]) -> Vec<ActualCall> {
    let result_of = |id: &str| {
        messages.iter().find_map(|m| match m {
            Message::Tool {
                content,
                tool_call_id,
                ..
            } if tool_call_id == id => Some(result_seen(content)),
            _ => None,
        })
    };
    let calls = messages.iter().flat_map(|m| match m {
        Message::Assistant { tool_calls, .. } => tool_calls.as_slice(),
        _ => &[],
    });
    calls
        .filter(|call| !call.id.starts_with("eval_c"))
        .map(|call| ActualCall {
            name: call.function.name.clone(),
            args: parsed(&call.function.arguments),
            result: result_of(&call.id),
        })
        .collect()
}

/// The error a call ended with when it did not go through: its result is `{"error": …}` and
/// nothing else, as the run records every call the host refused, the person declined, a layer
/// blocked or failed, or the tool did not answer (a tool whose own result is just that reads
/// alike, and counts as failed).
pub fn failure(call: &ActualCall) -> Option<&str> {
    failed(call.result.as_ref()?)
}

/// [`failure`] of a result.
pub fn failed(result: &Value) -> Option<&str> {
    match result {
        Value::Object(map) if map.len() == 1 => map.get("error").and_then(Value::as_str),
        _ => None,
    }
}

/// Whether a call's failure was the host's or the person's refusal (a `block` layer, a
/// declined confirmation, in the page or in the extension): such a call never reached the
/// application.
pub fn refused(error: &str) -> bool {
    let error = error.strip_prefix("NotAllowedError: ").unwrap_or(error);
    error.starts_with("blocked: ") || error.starts_with("declined")
}

/// The calls as a `result` constraint reads them: a call the host or the person refused never
/// reached the application, so it has no result to match (its record, `{"error": …}`, is the
/// host's, not the application's answer); a failure the tool reported stays its result.
pub fn reached(calls: &[ActualCall]) -> Vec<ActualCall> {
    (calls.iter())
        .map(|call| match failure(call) {
            Some(error) if refused(error) => ActualCall {
                result: None,
                ..call.clone()
            },
            _ => call.clone(),
        })
        .collect()
}

/// The tokens a run used (its steps' input and output tokens), when its provider reported
/// them; `None`: unknown (a provider or replay that reports none).
pub fn run_tokens(usage: &RunUsage) -> Option<u64> {
    let total = usage.total()?;
    Some(total.input_tokens.saturating_add(total.output_tokens))
}

/// Why a run did not end on its own, as a result says it (`the run failed: …`, `the run
/// stopped: …`); `None` for every other end.
pub fn cut_short(outcome: &RunOutcome) -> Option<String> {
    match outcome {
        RunOutcome::Failed { message: why } | RunOutcome::Stopped { reason: why } => {
            Some(format!("the run {}: {why}", outcome.kind()))
        }
        _ => None,
    }
}

/// A call as results show it: `{name, args, result?}`.
pub fn call_value(call: &ActualCall) -> Value {
    let mut value = json!({"name": call.name, "args": call.args});
    if let Some(result) = &call.result {
        value["result"] = result.clone();
    }
    value
}

/// A tool message's content as the tool gave it: the data wrapper of untrusted results
/// (`run::middleware::wrap_as_data`) taken off (its `&lt;` read back as `<`), then parsed.
pub fn result_seen(content: &str) -> Value {
    let inner = content
        .strip_prefix("<data source=\"")
        .and_then(|rest| rest.split_once("\">\n"))
        .and_then(|(_, rest)| rest.rsplit_once("\n</data>\n"))
        .map(|(inner, _)| inner.replace("&lt;", "<"));
    parsed(inner.as_deref().unwrap_or(content))
}

/// Text that is JSON, parsed; other text as a string.
pub fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// How the cases are run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The expected calls performed on the page, no model.
    Smoke,
    /// Each case run by each model, its calls judged.
    Agent,
    /// Each simulation played with each model, its outcome judged (DOM assertions, a judge
    /// model): [`super::simulate`].
    Simulate,
}

/// A value as short JSON text (at most 200 characters).
pub fn short(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}
