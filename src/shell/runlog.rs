//! The run log store's effects: the core's [`RunLog`] decides what is kept, pushed and saved;
//! this module pushes to the open pages, runs each run's save loop (its timer and
//! `chrome.storage.session` writes), keeps the intents of a run's acting calls (stored before
//! the call starts, removed only once the log holds its result: `core::restart`), and reads
//! stored records back, including, at a worker's start, the ending of the runs a previous
//! worker left running.
//!
//! Invariant: events are pushed and stored as the run emits them (they carry no key); a run's
//! store is written by one save loop at a time (the core asks for one only when none runs).

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::io::{now_ms, sleep};
use super::pages::push;
use super::store::{put, read};
use super::{chrome, waits};
use crate::core::ops::runlog::{end_cut_run, needs_ending, Effect, Events, Next, RunLog};
use crate::core::ops::runs::RunSummary;
use crate::core::restart::{intent_slot, stored_intents, Intent};
use crate::core::setup::store::Area::Session;

const LIST_KEY: &str = crate::core::storage::RUNS;
const RUN_KEY: &str = crate::core::storage::RUN_PREFIX;

fn with<T>(f: impl FnOnce(&mut RunLog) -> T) -> T {
    super::state::host(|host| f(&mut host.runs.borrow_mut()))
}

/// A run started (any run: from the popup or from `webmcpHost.run`): resolves once its record
/// is stored, before anything of it can act.
pub(crate) async fn on_start(run_id: &str, thread_id: &str, tab_id: Option<i64>, request: &Value) {
    let effects = with(|log| log.on_start(run_id, thread_id, tab_id, request, now_ms()));
    perform(run_id, effects);
    flush(run_id).await;
}

/// Stores the intents of a run's acting calls (none: removes them), after its log: the result
/// of a call that ended is stored before its intent goes. Resolves once stored.
pub(crate) async fn on_intents(run_id: &str, intents: &[Intent]) -> Result<(), String> {
    flush(run_id).await;
    let value = (!intents.is_empty()).then(|| serde_json::to_value(intents).unwrap_or_default());
    let stored = put(Session, &intent_slot(run_id), value.as_ref()).await;
    if let Err(error) = &stored {
        chrome::warn(&format!(
            "webmcp-host: run {run_id}'s intents were not stored: {error}"
        ));
    }
    stored
}

/// A run's record stored now, not at its save loop's next tick; a change meanwhile goes on.
async fn flush(run_id: &str) {
    if let Some((summary, events)) = with(|log| log.snapshot(run_id)) {
        save(summary, events).await;
        if with(|log| log.saved(run_id)) == Next::Again {
            spawn_local(save_loop(run_id.to_owned(), 0));
        }
    }
}

/// The run ended, or was ended after a restart: its intents are no longer kept.
pub(crate) async fn forget_intents(run_id: &str) {
    let _ = put(Session, &intent_slot(run_id), None).await;
}

/// An event of a run: kept, pushed to the open pages, stored soon.
pub(crate) fn on_event(run_id: &str, event: &Value) {
    perform(run_id, with(|log| log.on_event(run_id, event, now_ms())));
}

/// The page a run was made on, recorded once its tab was listed.
pub(crate) fn on_page(run_id: &str, page: Value) {
    perform(run_id, with(|log| log.on_page(run_id, page)));
}

/// A run ended: its record is final, and what still waited for the person is dismissed.
pub(crate) fn on_finish(run_id: &str, outcome: &Value) {
    perform(run_id, with(|log| log.on_finish(run_id, outcome)));
}

fn perform(run_id: &str, effects: Vec<Effect>) {
    for effect in effects {
        match effect {
            Effect::Push { kind, body } => push(kind, body),
            Effect::DismissWaits => waits::dismiss(run_id),
            Effect::SaveAfter { ms } => spawn_local(save_loop(run_id.to_owned(), ms)),
        }
    }
}

/// A run's save loop: waits, stores the record's snapshot, and again while it changed.
async fn save_loop(run_id: String, ms: u32) {
    loop {
        let _ = JsFuture::from(sleep(ms)).await;
        let Some((summary, events)) = with(|log| log.snapshot(&run_id)) else {
            return;
        };
        save(summary, events).await;
        if with(|log| log.saved(&run_id)) == Next::Stop {
            return;
        }
    }
}

/// Stores a run's events and its place in the run list (removing the runs dropped from it).
async fn save(summary: RunSummary, events: Events) {
    let run_id = summary.run_id.clone();
    let read = run_list().await;
    let (list, dropped) = with(|log| log.remember(read, summary));
    let list = serde_json::to_value(&list).unwrap_or(Value::Null);
    let results = [
        store_events(&run_id, &events).await,
        put(Session, LIST_KEY, Some(&list)).await,
    ];
    for error in results.into_iter().filter_map(Result::err) {
        chrome::warn(&format!(
            "webmcp-host: the record of run {run_id} could not be stored: {error}"
        ));
    }
    for old in dropped {
        let _ = put(Session, &format!("{RUN_KEY}{old}"), None).await;
    }
}

async fn stored_events(run_id: &str) -> Events {
    Events::from_stored(
        read(Session, &format!("{RUN_KEY}{run_id}"))
            .await
            .ok()
            .flatten(),
    )
}

async fn store_events(run_id: &str, events: &Events) -> Result<(), String> {
    put(
        Session,
        &format!("{RUN_KEY}{run_id}"),
        Some(&events.to_stored()),
    )
    .await
}

/// The run list: the stored one (read once per worker; the runs a restart cut are ended).
pub(crate) async fn run_list() -> Vec<RunSummary> {
    if let Some(list) = with(|log| log.list()) {
        return list;
    }
    let stored = read(Session, LIST_KEY).await.ok().flatten();
    let mut list = with(|log| log.read_list(stored));
    let mut ended = false;
    for run in list.iter_mut().filter(|r| needs_ending(r)) {
        let mut events = stored_events(&run.run_id).await;
        let intents = stored_intents(
            read(Session, &intent_slot(&run.run_id))
                .await
                .ok()
                .flatten(),
        );
        if end_cut_run(run, &mut events, &intents, now_ms()) {
            let _ = store_events(&run.run_id, &events).await;
            forget_intents(&run.run_id).await;
            ended = true;
        }
    }
    if ended {
        let value = serde_json::to_value(&list).unwrap_or(Value::Null);
        let _ = put(Session, LIST_KEY, Some(&value)).await;
    }
    with(|log| log.keep_list(list))
}

/// `recover()`, run by the worker's loader at every start (not an operation): the runs a
/// previous worker left running end now, each with a `RUN_ERROR` in its stored log. How many.
#[wasm_bindgen]
pub async fn recover() -> usize {
    let list = run_list().await;
    list.iter().filter(|r| r.state == "interrupted").count()
}

/// `runs({tabId?})` → the kept runs, newest first (`RunSummary`s).
pub(crate) async fn runs(tab_id: Option<i64>) -> Value {
    let list = run_list().await;
    with(|log| log.runs(list, tab_id))
}

/// `runLog({runId, since?})` → `{run, events, times, since, total}`: the run's events from
/// index `since`, from this worker or, after a restart, from storage.
pub(crate) async fn run_log(run_id: &str, since: usize) -> Result<Value, String> {
    if let Some(live) = with(|log| log.live_log(run_id, since)) {
        return Ok(live);
    }
    let list = run_list().await;
    let summary = list.iter().find(|r| r.run_id == run_id);
    let summary = summary.ok_or_else(|| format!("runLog: no run `{run_id}` is kept"))?;
    Ok(stored_events(run_id).await.stored_log(summary, since))
}
