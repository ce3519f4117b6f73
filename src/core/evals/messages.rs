//! A case's conversation as a run's AG-UI messages, and a run's answer read back: the calls it
//! made (the case's own earlier calls left out), their results, the tokens it reported.
//!
//! Invariant: pure; a malformed answer gives fewer calls, never a panic.

use serde_json::{json, Value};

use super::{ActualCall, EvalMessage};

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

/// The tool calls a run made (its answer's AG-UI messages, the case's own calls left out),
/// each with its result when it ran (JSON results parsed).
pub fn calls_made(answer: &Value) -> Vec<ActualCall> {
    let messages = answer.get("messages").and_then(Value::as_array);
    let messages = messages.map(Vec::as_slice).unwrap_or_default();
    let result_of = |id: &str| {
        messages.iter().find_map(|m| {
            (m.get("role") == Some(&json!("tool")) && m.get("toolCallId") == Some(&json!(id)))
                .then(|| result_seen(m.get("content").and_then(Value::as_str).unwrap_or_default()))
        })
    };
    let mut calls = Vec::new();
    for message in messages {
        for call in message
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
            if id.starts_with("eval_c") {
                continue;
            }
            let function = call.get("function").cloned().unwrap_or_default();
            calls.push(ActualCall {
                name: function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                args: parsed(
                    function
                        .get("arguments")
                        .and_then(Value::as_str)
                        .unwrap_or("{}"),
                ),
                result: result_of(id),
            });
        }
    }
    calls
}

/// The tokens a run used, when its answer reports them (`usage.totalTokens`, or its
/// `inputTokens` + `outputTokens`); `None`: unknown (a provider or replay that reports none).
pub fn run_tokens(answer: &Value) -> Option<u64> {
    let usage = answer.get("usage")?;
    usage
        .get("totalTokens")
        .and_then(Value::as_u64)
        .or_else(|| {
            Some(usage.get("inputTokens")?.as_u64()? + usage.get("outputTokens")?.as_u64()?)
        })
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
