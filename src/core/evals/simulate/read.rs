//! What a case's parts answered, read: a run's end (its outcome, text, transcript and tokens;
//! a turn's calls); a setup call's failure; the DOM assertions judged on what the page showed; the
//! judge's verdict.

use serde_json::{json, Value};

use super::{DomAssertion, Expect, Simulation, Turn, TurnCall};
use crate::core::evals::messages::{calls_of, cut_short, run_tokens};
use crate::core::limits::{MAX_SIM_EVIDENCE, SIM_DURATION_MS, SIM_VERDICT_CHARS};
use crate::core::page::bridge::DomObserved;
use crate::core::page::call::CallAnswer;
use crate::core::run::{RunEnded, RunOutcome};

/// Whether the case's time budget is spent at `now_ms`.
pub(super) fn past(started: Option<f64>, now_ms: f64, case: &Simulation) -> bool {
    let budget = case.max_duration_ms.unwrap_or(SIM_DURATION_MS) as f64;
    started.is_some_and(|s| now_ms - s >= budget)
}

/// What a run gave: its text, its transcript, its tokens.
pub(super) struct Ran {
    pub(super) text: String,
    pub(super) transcript: String,
    pub(super) tokens: Option<u64>,
}

/// A run that answered in text (completed, or its budget spent), or why not.
pub(super) fn ran(answer: &Result<RunEnded, String>) -> Result<Ran, String> {
    let ended = ran_outcome(answer)?;
    match &ended.outcome {
        RunOutcome::Completed { text } | RunOutcome::BudgetSpent { text } => Ok(Ran {
            text: text.clone(),
            transcript: ended.transcript.clone(),
            tokens: run_tokens(&ended.usage),
        }),
        other => Err(format!("the run ended {}", other.kind())),
    }
}

/// A run that ended on its own; an error for one that did not run, failed or was stopped.
pub(super) fn ran_outcome(answer: &Result<RunEnded, String>) -> Result<&RunEnded, String> {
    let ended = answer.as_ref().map_err(Clone::clone)?;
    match cut_short(&ended.outcome) {
        Some(why) => Err(why),
        None => Ok(ended),
    }
}

/// The calls of a turn: those of the run's messages past the `before` it was given.
pub(super) fn turn_calls(ended: &RunEnded, before: usize) -> Vec<TurnCall> {
    calls_of(ended.messages.get(before..).unwrap_or_default())
        .into_iter()
        .map(|c| TurnCall {
            function_name: c.name,
            args: c.args,
            result: c.result,
        })
        .collect()
}

pub(super) fn turn_value(turn: &Turn) -> Value {
    let calls: Vec<Value> = (turn.tool_calls.iter())
        .map(|c| {
            let mut call = json!({"functionName": c.function_name, "args": c.args});
            if let Some(r) = &c.result {
                call["result"] = r.clone();
            }
            call
        })
        .collect();
    let mut value = json!({
        "index": turn.index,
        "userMessage": turn.user_message,
        "agentText": turn.agent_text,
        "toolCalls": calls,
    });
    if let Some(id) = &turn.run_id {
        value["runId"] = json!(id);
    }
    value
}

/// Why a setup call failed, when it did: the call's error, or a result that says so (an
/// `error:` text, or JSON text of `{success: false}`, `{isError: true}`, a non-empty `error`).
pub(super) fn setup_failure(answer: &CallAnswer) -> Option<String> {
    if let Some(error) = answer.error() {
        return Some(error.to_owned());
    }
    let text = answer.result()?;
    if text.trim_start().to_lowercase().starts_with("error") {
        return Some(text.to_owned());
    }
    let result: Value = serde_json::from_str(text).ok()?;
    let said = |m: &serde_json::Map<String, Value>, key: &str, value: bool| {
        m.get(key) == Some(&Value::Bool(value))
    };
    match &result {
        Value::Object(m) if said(m, "success", false) || said(m, "isError", true) => Some(format!(
            "the tool answered {}",
            crate::core::evals::messages::short(&result)
        )),
        Value::Object(m) => m
            .get("error")
            .and_then(Value::as_str)
            .filter(|e| !e.trim().is_empty())
            .map(str::to_owned),
        _ => None,
    }
}

/// The DOM assertions judged on what the page answered.
pub(super) fn judge_dom(
    assertions: &[DomAssertion],
    observed: Result<Vec<DomObserved>, String>,
) -> Vec<Value> {
    assertions
        .iter()
        .enumerate()
        .map(|(i, assertion)| {
            let expected = assertion.expect.expected();
            let mut result = json!({
                "assertion": assertion.raw,
                "kind": assertion.expect.kind(),
                "expected": expected,
            });
            let seen = match &observed {
                Err(why) => Err(why.clone()),
                Ok(all) => match all.get(i) {
                    None => Err("the page returned no observation".into()),
                    Some(o) => match &o.error {
                        Some(e) => Err(e.clone()),
                        None => Ok(o),
                    },
                },
            };
            let seen = match seen {
                Err(why) => {
                    result["outcome"] = json!("error");
                    result["error"] = json!(why);
                    return result;
                }
                Ok(seen) => seen,
            };
            let actual = match &assertion.expect {
                Expect::Exists(_) => json!(seen.count > 0),
                Expect::Count(_) => json!(seen.count),
                Expect::Text(_) => seen
                    .text
                    .clone()
                    .filter(|_| seen.count > 0)
                    .map_or(Value::Null, Value::String),
                Expect::Attribute { .. } => {
                    seen.attribute.clone().map_or(Value::Null, Value::String)
                }
            };
            result["actual"] = actual.clone();
            match crate::core::evals::matcher::matches(&expected, &actual) {
                Ok(true) => result["outcome"] = json!("pass"),
                Ok(false) => result["outcome"] = json!("fail"),
                Err(why) => {
                    result["outcome"] = json!("error");
                    result["error"] = json!(why);
                }
            }
            result
        })
        .collect()
}

/// The judge's verdict from its run's outcome (`submit_result`'s arguments, or a text that is
/// the verdict's JSON): `{passed, reasoning, evidence}`, or why it is not one (no reasoning,
/// no evidence: a verdict that cites nothing cannot be audited).
pub(super) fn verdict(outcome: &RunOutcome) -> Result<Value, String> {
    let value: Value = match outcome {
        RunOutcome::Submitted { value } => value.clone(),
        RunOutcome::Completed { text } | RunOutcome::BudgetSpent { text } => {
            let start = text.find('{').ok_or("it answered without a verdict")?;
            let end = text.rfind('}').ok_or("it answered without a verdict")?;
            serde_json::from_str(&text[start..=end])
                .map_err(|_| "its answer is not a verdict".to_owned())?
        }
        other => return Err(format!("its run ended {}", other.kind())),
    };
    let passed = value["passed"]
        .as_bool()
        .ok_or("its verdict has no `passed`")?;
    let reasoning = (value["reasoning"].as_str())
        .map(str::trim)
        .unwrap_or_default();
    if reasoning.is_empty() {
        return Err("its verdict gives no reasoning".into());
    }
    let cut = |s: &str| s.chars().take(SIM_VERDICT_CHARS).collect::<String>();
    let evidence: Vec<String> = (value["evidence"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default())
    .iter()
    .filter_map(Value::as_str)
    .map(str::trim)
    .filter(|e| !e.is_empty())
    .take(MAX_SIM_EVIDENCE)
    .map(cut)
    .collect();
    if evidence.is_empty() {
        return Err(
            "its verdict cites no evidence, and a verdict that cites nothing cannot be audited"
                .into(),
        );
    }
    Ok(json!({"passed": passed, "reasoning": cut(reasoning), "evidence": evidence}))
}

pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub(super) fn add(total: &mut Option<u64>, tokens: Option<u64>) {
    if let Some(t) = tokens {
        *total = Some(total.unwrap_or(0).saturating_add(t));
    }
}
