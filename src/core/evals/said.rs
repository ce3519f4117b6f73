//! What a tool's result says about a smoke case: a failure the tool reported (which fails the
//! case), or failure-like text the case did not check for (a pass with a warning).

use serde_json::{json, Value};

use super::messages::short;

/// Words of a result that sound like a failure the case did not check for ("not found").
const FAILURE_WORDS: &[&str] = &[
    "not found",
    "no such",
    "no results",
    "error",
    "fail",
    "invalid",
    "unavailable",
    "not available",
    "could not",
    "couldn't",
    "cannot",
    "can't",
    "unable",
    "denied",
    "not allowed",
];

/// A passed smoke case whose page answered a call with failure-like text (a string result, or
/// an object's `message`/`status`/`result` text): "passed, but the page said …", for the
/// person to look at. The outcome stays a pass: only [`reported_failure`] fails a case.
pub fn page_said(calls: &[Value]) -> Option<String> {
    calls.iter().enumerate().find_map(|(i, call)| {
        let result = call.get("result")?;
        let text = match result {
            Value::String(text) => text.as_str(),
            Value::Object(map) => ["message", "status", "result"]
                .iter()
                .find_map(|key| map.get(*key).and_then(Value::as_str))?,
            _ => return None,
        };
        let lower = text.to_lowercase();
        FAILURE_WORDS.iter().any(|w| lower.contains(w)).then(|| {
            let name = call.get("name").and_then(Value::as_str).unwrap_or("?");
            format!(
                "passed, but the page said {} (step {}, `{name}`)",
                short(&json!(text)),
                i + 1
            )
        })
    })
}

/// A failure a tool reported in its result (`error: …` text, `{success: false}`, `{isError:
/// true}`, `{error: "…"}`).
pub fn reported_failure(result: &Value) -> Option<String> {
    match result {
        Value::String(text) => {
            let t = text.trim_start();
            let lower = t.get(..6).map(str::to_ascii_lowercase);
            (lower.as_deref() == Some("error:") || lower.as_deref() == Some("error "))
                .then(|| format!("the tool reported a failure: {}", short(result)))
        }
        Value::Object(map) => {
            let failed = map.get("success") == Some(&Value::Bool(false))
                || map.get("isError") == Some(&Value::Bool(true))
                || map.get("error").is_some_and(Value::is_string);
            failed.then(|| {
                let detail = map.get("error").or(map.get("message")).unwrap_or(result);
                format!("the tool reported a failure: {}", short(detail))
            })
        }
        _ => None,
    }
}
