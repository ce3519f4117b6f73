//! Runs as the person's side sees them: the items waiting for the person (visitor inputs,
//! confirmations of runs without a tab) and their answers, and the capped list of run
//! summaries the worker keeps so that a closed popup or a restarted worker can still show a
//! run's log.
//!
//! Invariant: the run list holds at most [`MAX_STORED_RUNS`] of the person's runs and
//! [`MAX_STORED_EVAL_RUNS`] of evaluations', newest first.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::OpName;

pub use crate::core::limits::{
    EVAL_TAG_CHARS, MAX_RUN_LOGS_BYTES, MAX_STORED_EVAL_RUNS, MAX_STORED_EVENTS, MAX_STORED_RUNS,
};

/// An item waiting for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PendingItem {
    /// A visitor tool's call: answered with a value, or declined.
    Input {
        /// The run that waits.
        run_id: String,
        /// The call that waits.
        call_id: String,
        /// The visitor tool's name.
        name: String,
        /// The call's arguments.
        args: Map<String, Value>,
    },
    /// An MCP tool that needs confirmation in a run without a tab: allowed or declined.
    Confirmation {
        /// The run that waits.
        run_id: String,
        /// The call that waits.
        call_id: String,
        /// The MCP tool's name.
        name: String,
        /// The MCP server's name.
        server: String,
        /// The call's arguments.
        args: Map<String, Value>,
        /// The question to show, as [`crate::core::confirm::mcp_tool`] words it (names and
        /// arguments escaped and capped); `None` when it cannot be shown honestly (the
        /// call can then only be declined).
        question: Option<String>,
        /// The same page's calls refused while this question waits (a page calling an
        /// exposed tool again and again is shown as this one item with its count).
        #[serde(skip_serializing_if = "is_zero")]
        repeats: u32,
    },
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl PendingItem {
    /// The run the item belongs to.
    pub fn run_id(&self) -> &str {
        match self {
            PendingItem::Input { run_id, .. } | PendingItem::Confirmation { run_id, .. } => run_id,
        }
    }
    /// The call the item belongs to.
    pub fn call_id(&self) -> &str {
        match self {
            PendingItem::Input { call_id, .. } | PendingItem::Confirmation { call_id, .. } => {
                call_id
            }
        }
    }
}

/// A person's answer to a pending item, parsed from `answer`/`decline` requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The run answered.
    pub run_id: String,
    /// The call answered.
    pub call_id: String,
    /// `Ok(value)` answers (for a confirmation: allows); `Err(reason)` declines.
    pub verdict: Result<String, Option<String>>,
}

impl Answer {
    /// `{runId, callId, value}`: a string value is taken as is, anything else as JSON.
    pub fn parse_answer(request: &Value) -> Result<Answer, String> {
        let (run_id, call_id) = ids(request, OpName::Answer.as_str())?;
        let value = match request.get("value") {
            None => return Err("answer: `value` is required".into()),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        Ok(Answer {
            run_id,
            call_id,
            verdict: Ok(value),
        })
    }

    /// `{runId, callId, reason?}`.
    pub fn parse_decline(request: &Value) -> Result<Answer, String> {
        let (run_id, call_id) = ids(request, OpName::Decline.as_str())?;
        let reason = request
            .get("reason")
            .and_then(Value::as_str)
            .map(|s| s.chars().take(2_000).collect::<String>())
            .filter(|s| !s.trim().is_empty());
        Ok(Answer {
            run_id,
            call_id,
            verdict: Err(reason),
        })
    }
}

fn ids(request: &Value, what: &str) -> Result<(String, String), String> {
    let field = |key: &str| {
        request
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("{what}: `{key}` is required"))
    };
    Ok((field("runId")?, field("callId")?))
}

/// The summary of a run in the worker's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    /// The run's id.
    pub run_id: String,
    /// The run's thread.
    pub thread_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The run's tab, when it has one.
    pub tab_id: Option<i64>,
    /// The person's prompt (the last user message), shortened.
    #[serde(default)]
    pub prompt: String,
    /// When it started (ms since the epoch).
    pub started_ms: f64,
    /// `running`, `finished`, or (read back after the worker stopped mid-run) `interrupted`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How it ended, once it did.
    pub outcome: Option<Value>,
    #[serde(default)]
    /// How many events it emitted.
    pub event_count: usize,
    /// Its tokens and cost so far: the `run` total of its last `webmcp_host.usage` event
    /// (`core::observe`); none before its first model step ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// The page the run was made on, once its tab's tools were read: `{url, origin,
    /// documentId?}` of the top frame as Chrome listed it. A bug report includes the tab's
    /// facts only while the tab still shows that document.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Value>,
    /// Bytes of its stored log (the run list keeps [`MAX_RUN_LOGS_BYTES`] in all).
    #[serde(default)]
    pub bytes: usize,
    /// A run an evaluation made: its suite, case and run. Such runs are kept apart from the
    /// person's (their own count, dropped first for bytes) and grouped under their suite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<EvalTag>,
}

/// Which evaluation made a run: the suite's id (one per `evaluate`), the case's name, the
/// run's index (from 0) and the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalTag {
    /// The evaluation's id.
    pub suite: String,
    /// The case's name.
    pub case: String,
    /// The run's index among the case's runs with its model (from 0).
    pub run: u32,
    /// The model it ran with.
    #[serde(default)]
    pub model: String,
}

impl EvalTag {
    /// The run request's `eval` (as the evaluation wrote it): `None` when absent or not one;
    /// each text cut to [`EVAL_TAG_CHARS`] characters.
    pub fn of_request(request: &Value) -> Option<EvalTag> {
        let tag = request.get("eval")?.as_object()?;
        let text = |key: &str| -> Option<String> {
            let s = tag.get(key)?.as_str()?;
            Some(s.chars().take(EVAL_TAG_CHARS).collect())
        };
        Some(EvalTag {
            suite: text("suite").filter(|s| !s.is_empty())?,
            case: text("case").unwrap_or_default(),
            run: tag
                .get("run")
                .and_then(Value::as_u64)
                .map_or(0, |n| n.min(u64::from(u32::MAX)) as u32),
            model: text("model").unwrap_or_default(),
        })
    }
}

/// The capped list of runs: newest first, at most [`MAX_STORED_RUNS`] of the person's runs
/// and [`MAX_STORED_EVAL_RUNS`] of evaluations' (so a suite never pushes the person's runs
/// out), and [`MAX_RUN_LOGS_BYTES`] of logs in all: over it, evaluations' oldest runs go
/// first, then the person's oldest; the newest run always stays. Returns the ids of the runs
/// dropped from it (whose stored events the shell removes).
pub fn remember_run(list: &mut Vec<RunSummary>, summary: RunSummary) -> Vec<String> {
    list.retain(|r| r.run_id != summary.run_id);
    list.insert(0, summary);
    let (mut people, mut evals) = (0, 0);
    let mut keep: Vec<bool> = list
        .iter()
        .map(|r| {
            let count = if r.eval.is_some() {
                &mut evals
            } else {
                &mut people
            };
            *count += 1;
            *count
                <= if r.eval.is_some() {
                    MAX_STORED_EVAL_RUNS
                } else {
                    MAX_STORED_RUNS
                }
        })
        .collect();
    let mut total: usize = (list.iter().zip(&keep))
        .filter(|(_, kept)| **kept)
        .map(|(r, _)| r.bytes)
        .sum();
    for evals_first in [true, false] {
        for i in (1..list.len()).rev() {
            if total <= MAX_RUN_LOGS_BYTES {
                break;
            }
            // A run with no bytes stored frees none: it stays.
            if keep[i] && list[i].bytes > 0 && list[i].eval.is_some() == evals_first {
                keep[i] = false;
                total -= list[i].bytes;
            }
        }
    }
    let mut dropped = Vec::new();
    let mut kept = keep.iter();
    list.retain(|r| {
        let stays = *kept.next().unwrap_or(&false);
        if !stays {
            dropped.push(r.run_id.clone());
        }
        stays
    });
    dropped
}

/// A stored list read back by a worker that does not hold these runs: those still
/// `running` were cut by a worker restart.
pub fn mark_interrupted(list: &mut [RunSummary], live: impl Fn(&str) -> bool) {
    for run in list.iter_mut() {
        if run.state == "running" && !live(&run.run_id) {
            run.state = "interrupted".into();
        }
    }
}

/// `startRun`'s ids: the request's `runId` and `threadId`, each made (`new_id` with the prefix
/// `run`/`thread`: `run_<id>`) and written into the request when missing. `(runId, threadId)`.
pub fn fill_run_ids(
    request: &mut Map<String, Value>,
    mut new_id: impl FnMut() -> String,
) -> (String, String) {
    let mut id = |key: &str, prefix: &str| {
        let value = request
            .entry(key)
            .or_insert_with(|| Value::String(format!("{prefix}_{}", new_id())));
        value.as_str().unwrap_or_default().to_owned()
    };
    (id("runId", "run"), id("threadId", "thread"))
}

/// What the open pages are told (`finished`) of a started run that could not begin.
pub fn not_started(run_id: &str, message: &str) -> Value {
    serde_json::json!({"runId": run_id, "outcome": {"type": "failed", "message": message}})
}

/// The prompt a run summary shows: the last user message of the request, at most 200
/// characters.
pub fn prompt_of(request: &Value) -> String {
    let text = match request.get("prompt").and_then(Value::as_str) {
        Some(prompt) => prompt.to_owned(),
        None => request
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| {
                m.iter()
                    .rev()
                    .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            })
            .and_then(|m| m.get("content").and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned(),
    };
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests;
