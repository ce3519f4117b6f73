//! The run log store: what the worker keeps of every run for the person's side (its summary
//! and events, with when each was emitted), pushed to the open pages as it happens and stored
//! in `chrome.storage.session` (debounced, 250 ms; capped in runs and events) so that a closed
//! popup or a restarted worker still shows a run's log; and, at a worker's start, the ending
//! of the runs a previous worker left running.
//!
//! Invariant: events are pushed and stored as the run emits them (they carry no key); a run's
//! store is written by one save loop at a time.

use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::convert::{self, describe};
use super::io::{now_ms, sleep, storage_get, storage_remove, storage_set};
use super::pages::push;
use super::{chrome, restart, waits};
use crate::core::ops::runs::{
    mark_interrupted, prompt_of, remember_run, RunSummary, MAX_STORED_EVENTS,
};

const AREA: &str = "session";
const LIST_KEY: &str = "webmcpHost.ui.runs";
const RUN_KEY: &str = "webmcpHost.ui.run.";
/// How long the stored events of a running run may lag behind.
const SAVE_EVERY_MS: u32 = 250;

/// Where a kept run's record stands against its stored copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Store {
    /// Stored as it is; no save loop runs.
    Saved,
    /// A save loop runs, and nothing changed since its last snapshot.
    Saving,
    /// Changed since the last snapshot (a save loop runs, or is starting).
    Changed,
}

/// A run's events, as kept and as stored (under `webmcpHost.ui.run.<runId>`).
#[derive(Clone, Default, Serialize, Deserialize)]
struct Events {
    #[serde(default)]
    events: Vec<Value>,
    /// When each event was emitted (ms since the epoch).
    #[serde(default)]
    times: Vec<f64>,
    /// Events past [`MAX_STORED_EVENTS`], counted only.
    #[serde(default)]
    dropped: usize,
}

impl Events {
    /// A run's stored events (none when nothing readable is stored).
    async fn stored(run_id: &str) -> Events {
        let stored = storage_get(AREA, &format!("{RUN_KEY}{run_id}")).await.ok();
        stored
            .and_then(|v| convert::to_json(&v).ok())
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    async fn store(&self, run_id: &str) -> Result<JsValue, JsValue> {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        storage_set(
            AREA,
            &format!("{RUN_KEY}{run_id}"),
            convert::from_json(&value),
        )
        .await
    }
}

/// What the worker keeps of a run for the person's side.
struct Kept {
    summary: RunSummary,
    log: Events,
    store: Store,
}

/// The runs of this worker, and the stored run list once read.
#[derive(Default)]
struct RunLog {
    runs: HashMap<String, Kept>,
    /// The stored run list, once read (`None`: not read yet in this worker).
    list: Option<Vec<RunSummary>>,
}

thread_local! {
    static LOG: RefCell<RunLog> = RefCell::new(RunLog::default());
}

fn with<T>(f: impl FnOnce(&mut RunLog) -> T) -> T {
    LOG.with(|log| f(&mut log.borrow_mut()))
}

/// A run started (any run: from the popup or from `webmcpHost.run`).
pub(crate) fn on_start(run_id: &str, thread_id: &str, tab_id: Option<i64>, request: &Value) {
    let summary = RunSummary {
        run_id: run_id.to_owned(),
        thread_id: thread_id.to_owned(),
        tab_id,
        prompt: prompt_of(request),
        started_ms: now_ms(),
        state: "running".into(),
        outcome: None,
        event_count: 0,
    };
    with(|log| {
        log.runs.insert(
            run_id.to_owned(),
            Kept {
                summary: summary.clone(),
                log: Events::default(),
                store: Store::Saved,
            },
        )
    });
    push("started", json!({"run": summary}));
    changed(run_id);
}

/// An event of a run: kept, pushed to the open pages, stored soon.
pub(crate) fn on_event(run_id: &str, event: &Value) {
    let time = now_ms();
    let seq = with(|log| {
        let kept = log.runs.get_mut(run_id)?;
        let log = &mut kept.log;
        let seq = log.events.len() + log.dropped;
        if log.events.len() < MAX_STORED_EVENTS {
            log.events.push(event.clone());
            log.times.push(time);
        } else {
            log.dropped += 1;
        }
        kept.summary.event_count = seq + 1;
        Some(seq)
    });
    let Some(seq) = seq else { return };
    push(
        "event",
        json!({"runId": run_id, "seq": seq, "time": time, "event": event}),
    );
    changed(run_id);
}

/// A run ended: its record is final, and what still waited for the person is dismissed.
pub(crate) fn on_finish(run_id: &str, outcome: &Value) {
    with(|log| {
        if let Some(kept) = log.runs.get_mut(run_id) {
            kept.summary.state = "finished".into();
            kept.summary.outcome = Some(outcome.clone());
        }
    });
    waits::dismiss(run_id);
    push("finished", json!({"runId": run_id, "outcome": outcome}));
    push("pending", json!({}));
    changed(run_id);
}

/// A run's record changed: stored soon, by its save loop (started when none runs).
fn changed(run_id: &str) {
    let start = with(|log| match log.runs.get_mut(run_id) {
        Some(kept) => {
            let was = std::mem::replace(&mut kept.store, Store::Changed);
            was == Store::Saved
        }
        None => false,
    });
    if !start {
        return;
    }
    let run_id = run_id.to_owned();
    spawn_local(async move {
        loop {
            let _ = JsFuture::from(sleep(SAVE_EVERY_MS)).await;
            let snapshot = with(|log| {
                let kept = log.runs.get_mut(&run_id)?;
                kept.store = Store::Saving;
                Some((kept.summary.clone(), kept.log.clone()))
            });
            let Some((summary, events)) = snapshot else {
                return;
            };
            save(summary, events).await;
            let again = with(|log| match log.runs.get_mut(&run_id) {
                Some(kept) if kept.store == Store::Changed => true,
                Some(kept) => {
                    kept.store = Store::Saved;
                    false
                }
                None => false,
            });
            if !again {
                return;
            }
        }
    });
}

/// Stores a run's events and its place in the run list (dropping the oldest runs).
async fn save(summary: RunSummary, events: Events) {
    let run_id = summary.run_id.clone();
    let mut list = run_list().await;
    let dropped = remember_run(&mut list, summary);
    with(|log| log.list = Some(list.clone()));
    let list = serde_json::to_value(&list).unwrap_or(Value::Null);
    let results = [
        events.store(&run_id).await,
        storage_set(AREA, LIST_KEY, convert::from_json(&list)).await,
    ];
    for result in results {
        if let Err(error) = result {
            chrome::warn(&format!(
                "webmcp-host: the record of run {run_id} could not be stored: {}",
                describe(&error)
            ));
        }
    }
    for old in dropped {
        let _ = storage_remove(AREA, &format!("{RUN_KEY}{old}")).await;
        with(|log| log.runs.remove(&old));
    }
}

/// The run list: the stored one (read once per worker), with the runs this worker holds.
pub(crate) async fn run_list() -> Vec<RunSummary> {
    if let Some(list) = with(|log| log.list.clone()) {
        return list;
    }
    let stored = storage_get(AREA, LIST_KEY).await.ok();
    let mut list: Vec<RunSummary> = stored
        .and_then(|v| convert::to_json(&v).ok())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    with(|log| mark_interrupted(&mut list, |id| log.runs.contains_key(id)));
    let mut ended = false;
    for run in list
        .iter_mut()
        .filter(|r| r.state == "interrupted" && r.outcome.is_none())
    {
        ended |= end_interrupted_run(run).await;
    }
    if ended {
        let value = serde_json::to_value(&list).unwrap_or(Value::Null);
        let _ = storage_set(AREA, LIST_KEY, convert::from_json(&value)).await;
    }
    with(|log| {
        // A concurrent read may have filled it already: keep the first.
        log.list.get_or_insert(list).clone()
    })
}

/// `recover()`, run by the worker's loader at every start (not an operation): the runs a
/// previous worker left running end now, each with a `RUN_ERROR` in its stored log. How many.
#[wasm_bindgen]
pub async fn recover() -> usize {
    run_list()
        .await
        .iter()
        .filter(|r| r.state == "interrupted")
        .count()
}

/// Ends the stored log of a run a worker restart cut (see `core::restart`); whether it did.
async fn end_interrupted_run(run: &mut RunSummary) -> bool {
    let mut stored = Events::stored(&run.run_id).await;
    let intents = restart::stored(&run.run_id).await;
    let before = stored.events.len();
    let Some(outcome) = crate::core::restart::end_interrupted(
        &run.thread_id,
        &run.run_id,
        &mut stored.events,
        &intents,
    ) else {
        run.state = "finished".into();
        return false;
    };
    stored.times.resize(stored.events.len(), now_ms());
    let added = stored.events.len() - before;
    let _ = stored.store(&run.run_id).await;
    restart::forget(&run.run_id).await;
    run.outcome = Some(outcome);
    run.event_count += added;
    true
}

/// `runs({tabId?})` → the kept runs, newest first (`RunSummary`s).
pub(crate) async fn runs(tab_id: Option<i64>) -> Value {
    let mut list = run_list().await;
    // The runs of this worker are fresher than what is stored.
    with(|log| {
        for kept in log.runs.values() {
            list.retain(|r| r.run_id != kept.summary.run_id);
            list.push(kept.summary.clone());
        }
    });
    list.sort_by(|a, b| b.started_ms.total_cmp(&a.started_ms));
    list.retain(|r| tab_id.is_none() || r.tab_id == tab_id);
    serde_json::to_value(&list).unwrap_or(Value::Null)
}

/// `runLog({runId, since?})` → `{run, events, times, since, total}`: the run's events from
/// index `since`, from this worker or, after a restart, from storage.
pub(crate) async fn run_log(run_id: &str, since: usize) -> Result<Value, String> {
    let live = with(|log| {
        log.runs.get(run_id).map(|k| {
            (
                k.summary.clone(),
                k.log.events.get(since..).unwrap_or_default().to_vec(),
                k.log.times.get(since..).unwrap_or_default().to_vec(),
                k.log.events.len() + k.log.dropped,
            )
        })
    });
    let (summary, events, times, total) = match live {
        Some(found) => found,
        None => {
            let summary = run_list()
                .await
                .into_iter()
                .find(|r| r.run_id == run_id)
                .ok_or_else(|| format!("runLog: no run `{run_id}` is kept"))?;
            let stored = Events::stored(run_id).await;
            let total = stored.events.len();
            (
                summary,
                stored.events.get(since..).unwrap_or_default().to_vec(),
                stored.times.get(since..).unwrap_or_default().to_vec(),
                total,
            )
        }
    };
    Ok(json!({
        "run": summary, "events": events, "times": times, "since": since, "total": total,
    }))
}
