//! The run log in the worker: the core's [`RunLog`] (in the host) decides what is kept, pushed
//! and saved; the host's run log machines ([`RunStore`], [`RunList`], …) store and read the
//! records back (including, at a worker's start, the ending of the runs a previous worker left
//! running). This module pushes to the open pages, dismisses what waits for a run that ended
//! and starts each run's save loop.
//!
//! Invariant: events are pushed and stored as the run emits them (they carry no key); a run's
//! store is written by one save loop at a time (the core asks for one only when none runs).
//!
//! [`RunLog`]: crate::core::ops::runlog::RunLog

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::io::now_ms;
use super::pages::push;
use super::{drive, waits};
use crate::core::host::runlog::{RunList, RunLogRead, RunStore};
use crate::core::ops::runlog::{Effect, RunLog};

fn with<T>(f: impl FnOnce(&mut RunLog) -> T) -> T {
    super::state::host(|host| f(&mut host.runs.borrow_mut()))
}

/// Performs one of the host's run log machines, then the effects it answers.
async fn store(run_id: &str, mut machine: RunStore) -> Result<(), String> {
    let stored = drive(|host, input, now| host.store_run(&mut machine, input, now)).await;
    perform(run_id, stored.effects);
    stored.result
}

/// A run started (any run: from the popup or from `webmcpHost.run`): resolves once its record
/// is stored, before anything of it can act.
pub(crate) async fn on_start(run_id: &str, thread_id: &str, tab_id: Option<i64>, request: &Value) {
    let effects = with(|log| log.on_start(run_id, thread_id, tab_id, request, now_ms()));
    perform(run_id, effects);
    let _ = store(run_id, RunStore::flush(run_id)).await;
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

pub(crate) fn perform(run_id: &str, effects: Vec<Effect>) {
    for effect in effects {
        match effect {
            Effect::Push { kind, body } => push(kind, body),
            Effect::DismissWaits => waits::dismiss(run_id),
            Effect::SaveAfter { ms } => {
                let run_id = run_id.to_owned();
                spawn_local(async move {
                    let _ = store(&run_id, RunStore::every(&run_id, ms)).await;
                });
            }
        }
    }
}

/// `recover()`, run by the worker's loader at every start (not an operation): the runs a
/// previous worker left running end now, each with a `RUN_ERROR` in its stored log. How many.
#[wasm_bindgen]
pub async fn recover() -> usize {
    let mut list = RunList::default();
    drive(|host, input, now| host.recover(&mut list, input, now)).await
}

/// `runLog({runId, since?})` → `{run, events, times, since, total}`: the run's events from
/// index `since`, from this worker or, after a restart, from storage.
pub(crate) async fn run_log(run_id: &str, since: usize) -> Result<Value, String> {
    let mut log = RunLogRead::new(run_id, since);
    drive(|host, input, now| host.run_log(&mut log, input, now)).await
}
