//! The run log store as a value: what the worker keeps of every run for the person's side
//! (its summary, and its events with when each was emitted), what to push to the open pages as
//! it happens, when to save it (debounced: one save loop per run, [`SAVE_EVERY_MS`]), the
//! stored record's shape, a log read back `since` an index, and the ending of the runs a
//! previous worker left running. The shell performs the pushes, the timers and the storage.
//!
//! Invariant: a run has at most one save loop ([`Save`]: a loop is asked to start only from
//! [`Save::Saved`]); events past [`MAX_STORED_EVENTS`] are counted, never kept.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::runs::{
    mark_interrupted, prompt_of, remember_run, EvalTag, RunSummary, MAX_STORED_EVENTS,
};
use crate::core::limits::{MAX_RUN_LOG_BYTES, MAX_STORED_EVENT_BYTES};
use crate::core::provider::usage::RunUsage;
use crate::core::restart::{end_interrupted, Intent, RESTART_CODE};

/// How long the stored record of a running run may lag behind (ms).
pub const SAVE_EVERY_MS: u32 = crate::core::limits::RUN_LOG_SAVE_EVERY_MS;

/// Something the shell must do for the run log.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Push `{webmcpHostUi: kind, ...body}` to every open page of the extension.
    Push {
        /// The news's kind (`started`, `event`, `finished`, `pending`).
        kind: &'static str,
        /// The news's other fields (an object).
        body: Value,
    },
    /// Start this run's save loop: wait this long, then save [`RunLog::snapshot`].
    SaveAfter {
        /// How long to wait (ms).
        ms: u32,
    },
    /// Dismiss what still waits for the person in this run.
    DismissWaits,
}

/// Where a kept run's record stands against its stored copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Save {
    /// Stored as it is; no save loop runs.
    Saved,
    /// A save loop runs, and nothing changed since its last snapshot.
    Saving,
    /// Changed since the last snapshot (a save loop runs, or is starting).
    Changed,
}

/// What the save loop does after saving a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Wait again and save the newer record.
    Again,
    /// Stop: the stored copy is current (or the run is no longer kept).
    Stop,
}

/// A run's events as kept and as stored (under `webmcpHost.ui.run.<runId>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Events {
    /// The events, as the run emitted them.
    #[serde(default)]
    pub events: Vec<Value>,
    /// When each event was emitted (ms since the epoch).
    #[serde(default)]
    pub times: Vec<f64>,
    /// Events past [`MAX_STORED_EVENTS`] or [`MAX_RUN_LOG_BYTES`], counted only.
    #[serde(default)]
    pub dropped: usize,
    /// Bytes of the events kept, as JSON text.
    #[serde(default)]
    pub bytes: usize,
}

/// `value` with every string longer than `keep` bytes cut to about `keep`, followed by
/// `… [N bytes not stored: <cap>]`: how a record too large to store whole is stored.
pub fn cut_long_strings(value: &Value, keep: usize, cap: &str) -> Value {
    match value {
        Value::String(text) if text.len() > keep => {
            let end = (0..=keep)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            Value::String(format!(
                "{}… [{} bytes not stored: {cap}]",
                &text[..end],
                text.len() - end
            ))
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| cut_long_strings(v, keep, cap))
                .collect(),
        ),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), cut_long_strings(v, keep, cap)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// `event` as a run log stores it: within [`MAX_STORED_EVENT_BYTES`], its strings longer than
/// 1 KiB cut with a marker (`… [N bytes not stored: max_stored_event_bytes]`); an event still
/// over the cap keeps only its type and what was cut. Returns it with its size.
pub fn stored_event(event: &Value) -> (Value, usize) {
    let size = event.to_string().len();
    if size <= MAX_STORED_EVENT_BYTES {
        return (event.clone(), size);
    }
    let shorter = cut_long_strings(event, 1024, "max_stored_event_bytes");
    let cut_size = shorter.to_string().len();
    if cut_size <= MAX_STORED_EVENT_BYTES {
        return (shorter, cut_size);
    }
    let stub = json!({
        "type": event.get("type").cloned().unwrap_or(Value::Null),
        "notStored": format!("an event of {size} bytes, over max_stored_event_bytes ({MAX_STORED_EVENT_BYTES})"),
    });
    let stub_size = stub.to_string().len();
    (stub, stub_size)
}

impl Events {
    /// A stored record read back (none when nothing readable is stored).
    pub fn from_stored(value: Option<Value>) -> Events {
        value
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    /// The record as stored.
    pub fn to_stored(&self) -> Value {
        serde_json::to_value(self).expect("events serialize")
    }

    /// The answer of `runLog` from a stored record: `{run, events, times, since, total}`
    /// from index `since` (`total`: the events stored).
    pub fn stored_log(&self, run: &RunSummary, since: usize) -> Value {
        self.log(run, since, self.events.len())
    }

    fn log(&self, run: &RunSummary, since: usize, total: usize) -> Value {
        json!({
            "run": run,
            "events": self.events.get(since..).unwrap_or_default(),
            "times": self.times.get(since..).unwrap_or_default(),
            "since": since,
            "total": total,
        })
    }
}

/// What the worker keeps of a run.
#[derive(Debug, Clone)]
struct Kept {
    summary: RunSummary,
    log: Events,
    save: Save,
}

/// The runs of this worker, and the stored run list once read.
#[derive(Debug, Default)]
pub struct RunLog {
    runs: HashMap<String, Kept>,
    /// The stored run list, once read (`None`: not read yet in this worker).
    list: Option<Vec<RunSummary>>,
}

fn push(kind: &'static str, body: Value) -> Effect {
    Effect::Push { kind, body }
}

impl RunLog {
    /// A run started at `now_ms` (any run: from the popup or from `webmcpHost.run`).
    pub fn on_start(
        &mut self,
        run_id: &str,
        thread_id: &str,
        tab_id: Option<i64>,
        request: &Value,
        now_ms: f64,
    ) -> Vec<Effect> {
        let summary = RunSummary {
            run_id: run_id.to_owned(),
            thread_id: thread_id.to_owned(),
            tab_id,
            prompt: prompt_of(request),
            started_ms: now_ms,
            state: "running".into(),
            outcome: None,
            event_count: 0,
            usage: None,
            page: None,
            bytes: 0,
            eval: EvalTag::of_request(request),
        };
        let kept = Kept {
            summary: summary.clone(),
            log: Events::default(),
            save: Save::Saved,
        };
        self.runs.insert(run_id.to_owned(), kept);
        let mut effects = vec![push("started", json!({"run": summary}))];
        effects.extend(self.changed(run_id));
        effects
    }

    /// An event of a run, emitted at `now_ms`: kept, pushed, stored soon. Nothing for a run
    /// not kept.
    pub fn on_event(&mut self, run_id: &str, event: &Value, now_ms: f64) -> Vec<Effect> {
        let Some(kept) = self.runs.get_mut(run_id) else {
            return Vec::new();
        };
        let log = &mut kept.log;
        let seq = log.events.len() + log.dropped;
        let (stored, size) = stored_event(event);
        if log.events.len() < MAX_STORED_EVENTS && log.bytes + size <= MAX_RUN_LOG_BYTES {
            log.events.push(stored);
            log.times.push(now_ms);
            log.bytes += size;
        } else {
            log.dropped += 1;
        }
        kept.summary.bytes = log.bytes;
        kept.summary.event_count = seq + 1;
        // The run's conversation is settled once its tools are read: a new one carrying the
        // history when they changed. Its `RUN_STARTED` names it.
        if event.get("type").and_then(Value::as_str) == Some("RUN_STARTED") {
            if let Some(thread_id) = event.get("threadId").and_then(Value::as_str) {
                kept.summary.thread_id = thread_id.to_owned();
            }
        }
        if event.get("name").and_then(Value::as_str) == Some(crate::core::agui::CUSTOM_USAGE) {
            kept.summary.usage = event.pointer("/value/run").cloned();
        }
        let body = json!({"runId": run_id, "seq": seq, "time": now_ms, "event": event});
        let mut effects = vec![push("event", body)];
        effects.extend(self.changed(run_id));
        effects
    }

    /// The page a run was made on (`RunSummary::page`), recorded once its tab was listed.
    pub fn on_page(&mut self, run_id: &str, page: Value) -> Vec<Effect> {
        let Some(kept) = self.runs.get_mut(run_id) else {
            return Vec::new();
        };
        kept.summary.page = Some(page);
        self.changed(run_id).into_iter().collect()
    }

    /// A run ended: its record is final, and what still waited for the person is dismissed.
    pub fn on_finish(&mut self, run_id: &str, outcome: &Value) -> Vec<Effect> {
        if let Some(kept) = self.runs.get_mut(run_id) {
            kept.summary.state = "finished".into();
            kept.summary.outcome = Some(outcome.clone());
        }
        let mut effects = vec![
            Effect::DismissWaits,
            push("finished", json!({"runId": run_id, "outcome": outcome})),
            push("pending", json!({})),
        ];
        effects.extend(self.changed(run_id));
        effects
    }

    /// A run's record changed: a save loop starts unless one runs.
    fn changed(&mut self, run_id: &str) -> Option<Effect> {
        let kept = self.runs.get_mut(run_id)?;
        let was = std::mem::replace(&mut kept.save, Save::Changed);
        (was == Save::Saved).then_some(Effect::SaveAfter { ms: SAVE_EVERY_MS })
    }

    /// Where a run's record stands (`None`: not kept).
    pub fn save_state(&self, run_id: &str) -> Option<Save> {
        self.runs.get(run_id).map(|k| k.save)
    }

    /// The save loop's tick: the record to store now (`None`: the run is no longer kept, the
    /// loop ends).
    pub fn snapshot(&mut self, run_id: &str) -> Option<(RunSummary, Events)> {
        let kept = self.runs.get_mut(run_id)?;
        kept.save = Save::Saving;
        Some((kept.summary.clone(), kept.log.clone()))
    }

    /// The snapshot was stored: whether the loop goes on.
    pub fn saved(&mut self, run_id: &str) -> Next {
        match self.runs.get_mut(run_id) {
            Some(kept) if kept.save == Save::Changed => Next::Again,
            Some(kept) => {
                kept.save = Save::Saved;
                Next::Stop
            }
            None => Next::Stop,
        }
    }

    /// A summary saved into the run list (`list`, as read): the list to store, and the ids of
    /// the runs it dropped (their records are removed, and no longer kept here).
    pub fn remember(
        &mut self,
        mut list: Vec<RunSummary>,
        summary: RunSummary,
    ) -> (Vec<RunSummary>, Vec<String>) {
        let dropped = remember_run(&mut list, summary);
        for old in &dropped {
            self.runs.remove(old);
        }
        self.list = Some(list.clone());
        (list, dropped)
    }

    /// The run list, when read already in this worker.
    pub fn list(&self) -> Option<Vec<RunSummary>> {
        self.list.clone()
    }

    /// The stored run list read back (`stored`: its JSON): the runs left `running` that this
    /// worker does not hold are `interrupted`.
    pub fn read_list(&self, stored: Option<Value>) -> Vec<RunSummary> {
        let mut list: Vec<RunSummary> = stored
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        mark_interrupted(&mut list, |id| self.runs.contains_key(id));
        list
    }

    /// The run list read (and its interrupted runs ended): kept, unless a concurrent read kept
    /// one first. The list kept.
    pub fn keep_list(&mut self, list: Vec<RunSummary>) -> Vec<RunSummary> {
        self.list.get_or_insert(list).clone()
    }

    /// `runs({tabId?})` → the runs of `list` and of this worker (fresher), newest first.
    pub fn runs(&self, mut list: Vec<RunSummary>, tab_id: Option<i64>) -> Value {
        for kept in self.runs.values() {
            list.retain(|r| r.run_id != kept.summary.run_id);
            list.push(kept.summary.clone());
        }
        list.sort_by(|a, b| b.started_ms.total_cmp(&a.started_ms));
        list.retain(|r| tab_id.is_none() || r.tab_id == tab_id);
        serde_json::to_value(&list).expect("summaries serialize")
    }

    /// `runLog` of a run this worker holds (`total` counts the events not kept; `None`: read
    /// it from storage).
    pub fn live_log(&self, run_id: &str, since: usize) -> Option<Value> {
        let kept = self.runs.get(run_id)?;
        let total = kept.log.events.len() + kept.log.dropped;
        Some(kept.log.log(&kept.summary, since, total))
    }
}

/// The message of `event` when it is the `RUN_ERROR` a restart ended a cut run with.
fn restart_error(event: &Value) -> Option<&str> {
    (event["type"] == "RUN_ERROR" && event["code"] == RESTART_CODE)
        .then(|| event["message"].as_str())
        .flatten()
}

/// Whether a listed run was cut by a worker restart and still needs its ending.
pub fn needs_ending(run: &RunSummary) -> bool {
    run.state == "interrupted" && run.outcome.is_none()
}

/// Ends the stored log of a run a worker restart cut (see `core::restart`), at `now_ms`:
/// whether it did (then the shell stores `events` and forgets the run's intents). A log a
/// restart ended already (another reader of the list got there first: the worker's start and
/// an open page read it at once) leaves the run `interrupted`, with that ending as its outcome;
/// a log that had ended by itself (stored before the list was) marks the run `finished`.
pub fn end_cut_run(
    run: &mut RunSummary,
    events: &mut Events,
    intents: &[Intent],
    now_ms: f64,
) -> bool {
    if let Some(message) = events.events.last().and_then(restart_error) {
        run.outcome = Some(json!({"type": "failed", "message": message}));
        return false;
    }
    let before = events.events.len();
    // The steps' use, from their usage events: only when the log kept every event.
    let usage = match events.dropped {
        0 => RunUsage::from_log(&events.events).token_usage(),
        _ => Vec::new(),
    };
    let Some(outcome) = end_interrupted(
        &run.thread_id,
        &run.run_id,
        &mut events.events,
        intents,
        &usage,
    ) else {
        run.state = "finished".into();
        return false;
    };
    events.times.resize(events.events.len(), now_ms);
    run.outcome = Some(outcome);
    run.event_count += events.events.len() - before;
    true
}

#[cfg(test)]
mod tests;
