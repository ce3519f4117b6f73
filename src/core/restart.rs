//! What survives a worker restart. Chrome stops an extension's service worker when it idles
//! (30 s), when one event takes too long (5 min), or when it crashes; a run in memory is then
//! gone. The shell keeps each run's events in session storage as they come, and records an
//! [`Intent`] before every call that acts (a consequential page tool, a destructive MCP tool:
//! once the person allowed it, when it is confirmed first) and drops it once the call's result
//! is stored. A worker that finds a run still marked running ends its
//! stored log with a `RUN_ERROR` that says what happened and which acting calls were under
//! way: those may have run, and nothing runs them again (runs are not resumed, so no call is
//! ever executed twice because of a restart).

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::core::agui::TokenUsage;

/// A call that acts, recorded before it starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Intent {
    /// The id of the call in its run.
    pub call_id: String,
    /// The tool's name as the run knows it.
    pub name: String,
    /// Where it runs: `page https://…`, `MCP server NAME`.
    pub source: String,
}

/// Where a run's intents live in session storage.
pub fn intent_slot(run_id: &str) -> String {
    format!("{}{run_id}", crate::core::storage::INTENT_PREFIX)
}

/// The intents a previous worker stored for a run (none when nothing or nothing readable).
pub fn stored_intents(stored: Option<Value>) -> Vec<Intent> {
    stored
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

/// The `code` of the `RUN_ERROR` that ends a run cut by a restart.
pub const RESTART_CODE: &str = "worker_restarted";

/// Ends the stored events of a run that a worker restart cut: a `RUN_ERROR` after what was
/// stored, naming the acting calls that were under way, with the run's `usage` (AG-UI's, of
/// the model steps the log holds; none given: left out). Returns the run's outcome, or `None`
/// when the log already ended (the run finished before the restart; only its summary lagged).
pub fn end_interrupted(
    thread_id: &str,
    run_id: &str,
    events: &mut Vec<Value>,
    intents: &[Intent],
    usage: &[TokenUsage],
) -> Option<Value> {
    let ended = events.last().is_some_and(|e| {
        matches!(
            e.get("type").and_then(Value::as_str),
            Some("RUN_FINISHED" | "RUN_ERROR")
        )
    });
    if ended {
        return None;
    }
    let mut message = String::from(
        "The host's service worker stopped during this run (Chrome ended it), so the run cannot go on; start it again.",
    );
    for intent in intents {
        message.push_str(&format!(
            " `{}` ({}, call {}) was running: it may have run, and it was not run again.",
            intent.name, intent.source, intent.call_id
        ));
    }
    if events.is_empty() {
        events.push(json!({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}));
    }
    let mut error = json!({"type": "RUN_ERROR", "message": message, "code": RESTART_CODE});
    if !usage.is_empty() {
        error["usage"] = json!(usage);
    }
    events.push(error);
    Some(json!({"type": "failed", "message": message}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_log_ends_with_run_error_naming_the_calls_under_way() {
        let mut events = vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "own__delete_record"}),
        ];
        let intents = [Intent {
            call_id: "c1".into(),
            name: "own__delete_record".into(),
            source: "MCP server own".into(),
        }];
        let outcome = end_interrupted("t", "r", &mut events, &intents, &[]).unwrap();
        assert_eq!(events.len(), 3);
        assert_eq!(events[2]["type"], "RUN_ERROR");
        assert_eq!(events[2]["code"], RESTART_CODE);
        let message = events[2]["message"].as_str().unwrap();
        assert!(message.starts_with("The host's service worker stopped during this run"));
        assert!(message.contains(
            "`own__delete_record` (MCP server own, call c1) was running: it may have run, and it was not run again."
        ));
        assert_eq!(outcome, json!({"type": "failed", "message": message}));
    }

    #[test]
    fn a_finished_log_is_left_alone() {
        for last in ["RUN_FINISHED", "RUN_ERROR"] {
            let mut events = vec![
                json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
                json!({"type": last, "threadId": "t", "runId": "r", "message": "x"}),
            ];
            assert_eq!(end_interrupted("t", "r", &mut events, &[], &[]), None);
            assert_eq!(events.len(), 2);
        }
        let mut empty = Vec::new();
        assert!(
            end_interrupted("t", "r", &mut empty, &[], &[]).is_some(),
            "a run cut before its first event"
        );
        assert_eq!(
            empty[0],
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
        );
        assert_eq!(empty[1]["type"], "RUN_ERROR");
    }
}
