//! Record → test and replay diffs: a finished run's log made into an eval case
//! ([`to_eval`], for `webmcpHost.toEval`), and a recorded run's calls played against the site
//! as it is now ([`ReplayDiff`], for `webmcpHost.replayDiff`).
//!
//! Invariants: pure; a log that cannot be read is an error naming the run; a diff has one
//! entry per recorded call, in order.

use serde_json::{json, Map, Value};

use crate::core::page::call::CallAnswer;
use crate::core::page::ready::Settle;
use crate::core::page::tabs::Listed;

use super::messages::short;
use super::messages::{calls_of, failure, parsed, refused};
use super::{write_evals, ActualCall, EvalCase, EvalMessage, Expected, ExpectedCall};
use crate::core::agui::Message;
use crate::core::history::rebuild;
use crate::core::limits::DEFAULT_CALL_TIMEOUT_MS;
use crate::core::provider::replay::parse_transcript;

/// A run's prompt and calls, read from its log (`runLog`'s answer): the calls after the last
/// person's message of the run's messages, each with its result.
pub fn run_calls(log: &Value) -> (String, Vec<ActualCall>) {
    let events = log["events"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let (messages, _) = rebuild(Vec::new(), events);
    let last_user = messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }));
    let prompt = match last_user.map(|i| &messages[i]) {
        Some(Message::User { content, .. }) => content.clone(),
        _ => log["run"]["prompt"].as_str().unwrap_or_default().to_owned(),
    };
    let after = last_user.map_or(0, |i| i + 1);
    (prompt, calls_of(&messages[after..]))
}

/// How an argument is loosened: `exact` (kept as recorded), `$type` (its type), `$any` (any
/// value), `omit` (not checked).
fn loosened(how: &str, value: &Value) -> Result<Option<Value>, String> {
    Ok(match how {
        "exact" => Some(value.clone()),
        "$any" => Some(json!({"$any": true})),
        "omit" => None,
        "$type" => Some(json!({"$type": match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }})),
        other => {
            return Err(format!(
                "toEval: unknown loosening {:?}; known: exact, $type, $any, omit",
                other.chars().take(32).collect::<String>()
            ))
        }
    })
}

/// `toEval({runId, name?, prompt?, loosen?, results?})` given the run's log: an eval case
/// whose message is the run's prompt and whose expected calls are the calls it made, in
/// order. `loosen` is `{tool: {argument: how}}` (`how`: `exact`, `$type`, `$any`, `omit`;
/// `*` for every tool or argument); `results: true` keeps each call's recorded result as an
/// exact `result` constraint. Answers `{case, text}` (`text`: an eval file of that case).
pub fn to_eval(request: &Value, log: &Value) -> Result<Value, String> {
    let (recorded_prompt, calls) = run_calls(log);
    let prompt = request["prompt"]
        .as_str()
        .map_or(recorded_prompt, str::to_owned);
    if prompt.trim().is_empty() {
        return Err("toEval: the run has no prompt (give `prompt`)".into());
    }
    let loosen = match &request["loosen"] {
        Value::Null => Map::new(),
        Value::Object(map) => map.clone(),
        _ => return Err("toEval: `loosen` must be {tool: {argument: how}}".into()),
    };
    let rule = |tool: &str, arg: &str| -> Option<&str> {
        [tool, "*"].iter().find_map(|t| {
            let per = loosen.get(*t)?;
            [arg, "*"].iter().find_map(|a| per.get(*a)?.as_str())
        })
    };
    let results = request["results"].as_bool().unwrap_or(false);
    let keep_failed = match &request["keepFailed"] {
        Value::Null => false,
        Value::Bool(keep) => *keep,
        _ => return Err("toEval: `keepFailed` must be true or false".into()),
    };
    let mut expected = Vec::new();
    let mut left_out = Vec::new();
    for call in &calls {
        // A call that was declined, blocked, refused or failed is no call the case expects
        // (smoke mode would perform it), unless asked for.
        if let Some(error) = failure(call).filter(|_| !keep_failed) {
            left_out.push(json!({"name": call.name, "arguments": call.args, "error": error}));
            continue;
        }
        let mut args = Map::new();
        if let Value::Object(given) = &call.args {
            for (key, value) in given {
                if let Some(kept) = loosened(rule(&call.name, key).unwrap_or("exact"), value)? {
                    args.insert(key.clone(), kept);
                }
            }
        }
        expected.push(Expected::Call(Box::new(ExpectedCall {
            function_name: call.name.clone(),
            arguments: Some(Value::Object(args)),
            result: call.result.clone().filter(|_| results),
            optional: false,
            mock_output: None,
        })));
    }
    let case = EvalCase {
        name: Some(
            request["name"]
                .as_str()
                .map_or_else(|| prompt.chars().take(80).collect(), str::to_owned),
        ),
        messages: vec![EvalMessage::Message {
            role: "user".into(),
            content: prompt,
        }],
        expected_call: (!expected.is_empty()).then_some(expected),
    };
    let text = write_evals(std::slice::from_ref(&case));
    Ok(json!({"case": case, "text": text, "leftOut": left_out}))
}

/// What a replay diff plays: the calls of a run's log (with their results then) or of a
/// replay transcript (no results then).
#[derive(Debug)]
pub struct ReplayDiff {
    tab_id: i64,
    run_id: Option<String>,
    calls: Vec<ActualCall>,
    baseline: bool,
    tools: Option<Vec<String>>,
    entries: Vec<Value>,
}

/// What the worker does next for a [`ReplayDiff`].
#[derive(Debug, Clone, PartialEq)]
pub enum DiffNext {
    /// List the tab's tools (`listTools`), its page as settled as `settle` says, then
    /// [`ReplayDiff::tools`].
    ListTools {
        /// The tab.
        tab_id: i64,
        /// [`Settle::Loaded`]: a tab still loading is listed again, never taken for a page
        /// without tools.
        settle: Settle,
    },
    /// Call this page tool (as `callTool`), then [`ReplayDiff::called`].
    Call {
        /// The tab.
        tab_id: i64,
        /// The tool.
        name: String,
        /// Its arguments.
        args: Map<String, Value>,
        /// Its timeout, ms.
        timeout_ms: u32,
    },
    /// The diff.
    Done(Value),
}

impl ReplayDiff {
    /// A diff of the run whose log is `log` (`runLog`'s answer).
    pub fn of_run(tab_id: i64, run_id: &str, log: &Value) -> Self {
        let (_, calls) = run_calls(log);
        Self::new(tab_id, Some(run_id.to_owned()), calls, true)
    }

    /// A diff of a replay transcript (JSONL, as the `replay` provider reads it).
    pub fn of_transcript(tab_id: i64, transcript: &str) -> Result<Self, String> {
        let steps = parse_transcript(transcript).map_err(|e| format!("replayDiff: {e}"))?;
        let calls = (steps.iter().flat_map(|s| &s.calls))
            .map(|c| ActualCall {
                name: c.name.clone(),
                args: match &c.arguments {
                    Value::String(text) => parsed(text),
                    other => other.clone(),
                },
                result: None,
            })
            .collect();
        Ok(Self::new(tab_id, None, calls, false))
    }

    fn new(tab_id: i64, run_id: Option<String>, calls: Vec<ActualCall>, baseline: bool) -> Self {
        ReplayDiff {
            tab_id,
            run_id,
            calls,
            baseline,
            tools: None,
            entries: Vec::new(),
        }
    }

    /// What to do next.
    pub fn poll(&self) -> DiffNext {
        if self.tools.is_none() {
            return DiffNext::ListTools {
                tab_id: self.tab_id,
                settle: Settle::Loaded,
            };
        }
        match self.calls.get(self.entries.len()) {
            Some(call) => DiffNext::Call {
                tab_id: self.tab_id,
                name: call.name.clone(),
                args: call.args.as_object().cloned().unwrap_or_default(),
                timeout_ms: DEFAULT_CALL_TIMEOUT_MS,
            },
            None => DiffNext::Done(self.answer()),
        }
    }

    /// The tab's tools now (or why they could not be listed: no tool then).
    pub fn tools(&mut self, listed: Listed) {
        let names = listed.iter().flat_map(|t| t.tools.iter());
        self.tools = Some(names.map(|t| t.name.clone()).collect());
        self.skip_refused();
    }

    /// How the next call ended.
    pub fn called(&mut self, answer: &CallAnswer) {
        self.record(answer);
        self.skip_refused();
    }

    /// The recorded calls next in line that the run refused (blocked, declined): entered as
    /// not played, never performed again.
    fn skip_refused(&mut self) {
        while let Some(call) = self.calls.get(self.entries.len()) {
            let Some(error) = failure(call).filter(|e| refused(e)) else {
                return;
            };
            let entry = json!({
                "index": self.entries.len(),
                "name": call.name,
                "args": call.args,
                "available": (self.tools.iter().flatten()).any(|n| *n == call.name),
                "before": {"error": error},
                "now": Value::Null,
                "changed": false,
                "skipped": format!("not played again: the run refused it ({})", short(&json!(error))),
            });
            self.entries.push(entry);
        }
    }

    fn record(&mut self, answer: &CallAnswer) {
        let Some(call) = self.calls.get(self.entries.len()) else {
            return;
        };
        let available = (self.tools.iter().flatten()).any(|n| *n == call.name);
        let now = match (answer.error(), answer.result()) {
            (Some(error), _) => json!({"error": error}),
            (None, Some(text)) => json!({"result": parsed(text)}),
            (None, None) => json!({"navigated": true}),
        };
        let before = match &call.result {
            Some(result) => json!({"result": result}),
            None => Value::Null,
        };
        let change = if !available {
            Some("availability")
        } else if now.get("error").is_some() {
            Some("error")
        } else if self.baseline && before.get("result") != now.get("result") {
            Some("result")
        } else {
            None
        };
        let mut entry = json!({
            "index": self.entries.len(),
            "name": call.name,
            "args": call.args,
            "available": available,
            "before": before,
            "now": now,
            "changed": change.is_some(),
        });
        if let Some(change) = change {
            entry["change"] = json!(change);
            entry["summary"] = json!(match change {
                "availability" => format!("{} is no longer offered by the page", call.name),
                "error" => format!("{} now fails: {}", call.name, short(&now["error"])),
                _ => format!(
                    "{} answered {} then, {} now",
                    call.name,
                    short(&before["result"]),
                    short(&now["result"])
                ),
            });
        }
        self.entries.push(entry);
    }

    fn answer(&self) -> Value {
        let changed: Vec<&Value> = self
            .entries
            .iter()
            .filter(|e| e["changed"] == true)
            .collect();
        json!({
            "runId": self.run_id,
            "calls": self.entries,
            "changed": changed.iter().map(|e| e["name"].clone()).collect::<Vec<_>>(),
            "changedCount": changed.len(),
        })
    }
}

#[cfg(test)]
mod tests;
