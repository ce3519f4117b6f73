//! The run log's storage played through the host: records stored, read back by a new worker,
//! the runs a restart cut ended once.

use serde_json::{json, Value};

use super::*;
use crate::core::host::play::Play;

/// A run of tab 4 started in the host, with its `RUN_STARTED`, and its record stored now.
fn started(play: &mut Play, run_id: &str) {
    let now = play.now;
    let mut log = play.host.runs.borrow_mut();
    log.on_start(run_id, "t1", Some(4), &json!({"prompt": "Buy a mug"}), now);
    let event = json!({"type": "RUN_STARTED", "threadId": "t1", "runId": run_id});
    log.on_event(run_id, &event, now);
    drop(log);
    let mut flush = RunStore::flush(run_id);
    let stored = play.drive(|host, input, now| host.store_run(&mut flush, input, now));
    assert_eq!(stored.result, Ok(()));
}

fn run_log(play: &mut Play, run_id: &str) -> Result<Value, String> {
    let mut read = RunLogRead::new(run_id, 0);
    play.drive(|host, input, now| host.run_log(&mut read, input, now))
}

#[test]
fn a_finished_runs_log_is_read_back_after_a_restart() {
    let mut play = Play::shop(&[]);
    started(&mut play, "r1");
    let outcome = json!({"type": "succeeded"});
    let effects = play.host.runs.borrow_mut().on_finish("r1", &outcome);
    assert!(effects.contains(&Effect::SaveAfter {
        ms: crate::core::ops::runlog::SAVE_EVERY_MS
    }));
    let mut every = RunStore::every("r1", 10);
    play.drive(|host, input, now| host.store_run(&mut every, input, now));
    let live = run_log(&mut play, "r1").unwrap();

    // The worker's memory is lost; what it stored stays.
    play.host = Host::default();
    let stored = run_log(&mut play, "r1").unwrap();
    assert_eq!(stored["run"]["state"], "finished");
    assert_eq!(stored["events"], live["events"]);
    let mut runs = Runs::new(Some(4));
    let listed = play.drive(|host, input, now| host.runs_of(&mut runs, input, now));
    assert_eq!(listed[0]["runId"], "r1");
    assert_eq!(
        run_log(&mut play, "r2"),
        Err("runLog: no run `r2` is kept".into())
    );
}

#[test]
fn a_run_a_restart_cut_is_ended_once_in_its_stored_log() {
    let mut play = Play::shop(&[]);
    started(&mut play, "r1");
    play.host = Host::default();
    let mut list = RunList::default();
    assert_eq!(
        play.drive(|host, input, now| host.recover(&mut list, input, now)),
        1
    );
    let log = run_log(&mut play, "r1").unwrap();
    assert_eq!(log["run"]["state"], "interrupted");
    let last = log["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["type"], "RUN_ERROR");
    // Another worker reads the same ending, and adds none.
    play.host = Host::default();
    let again = run_log(&mut play, "r1").unwrap();
    assert_eq!(again["events"], log["events"]);
}

#[test]
fn intents_are_stored_after_the_record_and_forgotten() {
    let mut play = Play::shop(&[]);
    started(&mut play, "r1");
    let intent = Intent {
        call_id: "c1".into(),
        name: "pay".into(),
        source: "page https://shop.test".into(),
    };
    let mut store = RunStore::intents("r1", &[intent]);
    let stored = play.drive(|host, input, now| host.store_run(&mut store, input, now));
    assert_eq!(stored.result, Ok(()));
    assert!(play.session.contains_key(&intent_slot("r1")));
    let mut forget = RunStore::forget_intents("r1");
    play.drive(|host, input, now| host.store_run(&mut forget, input, now));
    assert!(!play.session.contains_key(&intent_slot("r1")));
}

#[test]
fn a_failed_write_is_warned_of_and_is_the_intents_answer() {
    let mut play = Play::shop(&[]);
    play.host
        .runs
        .borrow_mut()
        .on_start("r1", "t1", None, &json!({}), 0.0);
    play.storage_error = Some("QUOTA_BYTES quota exceeded".into());
    let mut store = RunStore::intents("r1", &[]);
    let stored = play.drive(|host, input, now| host.store_run(&mut store, input, now));
    assert_eq!(stored.result, Err("QUOTA_BYTES quota exceeded".into()));
    assert_eq!(
        play.warnings,
        [
            "webmcp-host: the record of run r1 could not be stored: QUOTA_BYTES quota exceeded",
            "webmcp-host: the record of run r1 could not be stored: QUOTA_BYTES quota exceeded",
            "webmcp-host: run r1's intents were not stored: QUOTA_BYTES quota exceeded",
        ]
    );
}

#[test]
fn an_eval_case_is_made_of_a_runs_log_or_says_why_not() {
    let mut play = Play::shop(&[]);
    let mut to_eval = ToEval::new("nope", json!({"runId": "nope"}));
    let error = play.drive(|host, input, now| host.to_eval(&mut to_eval, input, now));
    assert!(error.is_err(), "{error:?}");
}
