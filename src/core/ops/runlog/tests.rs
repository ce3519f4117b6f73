//! The run log store: pushes, the save loop's decisions, the event cap, the run list, logs
//! read back `since`, and the ending of runs a restart cut.

use super::*;
use serde_json::json;

fn started(log: &mut RunLog, id: &str, at: f64) -> Vec<Effect> {
    log.on_start(id, "t", Some(4), &json!({"prompt": "hi"}), at)
}

#[test]
fn a_start_pushes_the_summary_and_asks_for_one_save_loop() {
    let mut log = RunLog::default();
    let effects = started(&mut log, "r1", 10.0);
    assert_eq!(effects.len(), 2);
    let Effect::Push { kind, body } = &effects[0] else {
        panic!("a push first: {effects:?}")
    };
    assert_eq!(*kind, "started");
    assert_eq!(body["run"]["runId"], "r1");
    assert_eq!(body["run"]["prompt"], "hi");
    assert_eq!(body["run"]["state"], "running");
    assert_eq!(effects[1], Effect::SaveAfter { ms: SAVE_EVERY_MS });
    assert_eq!(log.save_state("r1"), Some(Save::Changed));
    // A loop runs: later changes ask for none.
    let effects = log.on_event("r1", &json!({"type": "RUN_STARTED"}), 11.0);
    assert_eq!(
        effects,
        vec![Effect::Push {
            kind: "event",
            body: json!({"runId": "r1", "seq": 0, "time": 11.0, "event": {"type": "RUN_STARTED"}})
        }]
    );
}

#[test]
fn the_save_loop_goes_on_while_the_record_changes() {
    let mut log = RunLog::default();
    started(&mut log, "r1", 0.0);
    let (summary, events) = log.snapshot("r1").expect("kept");
    assert_eq!(summary.run_id, "r1");
    assert!(events.events.is_empty());
    assert_eq!(log.save_state("r1"), Some(Save::Saving));
    log.on_event("r1", &json!({"type": "X"}), 1.0);
    assert_eq!(log.saved("r1"), Next::Again);
    let (summary, events) = log.snapshot("r1").expect("kept");
    assert_eq!(summary.event_count, 1);
    assert_eq!(events.events.len(), 1);
    assert_eq!(log.saved("r1"), Next::Stop);
    assert_eq!(log.save_state("r1"), Some(Save::Saved));
    // Saved: the next change starts a new loop.
    let effects = log.on_event("r1", &json!({"type": "Y"}), 2.0);
    assert_eq!(
        effects.last(),
        Some(&Effect::SaveAfter { ms: SAVE_EVERY_MS })
    );
    // A run no longer kept ends its loop.
    assert_eq!(log.snapshot("gone"), None);
    assert_eq!(log.saved("gone"), Next::Stop);
    assert!(log.on_event("gone", &json!({}), 0.0).is_empty());
}

#[test]
fn a_finish_dismisses_the_waits_and_tells_the_pages() {
    let mut log = RunLog::default();
    started(&mut log, "r1", 0.0);
    let effects = log.on_finish("r1", &json!({"type": "success"}));
    assert_eq!(effects[0], Effect::DismissWaits);
    assert_eq!(
        effects[1],
        Effect::Push {
            kind: "finished",
            body: json!({"runId": "r1", "outcome": {"type": "success"}})
        }
    );
    assert_eq!(
        effects[2],
        Effect::Push {
            kind: "pending",
            body: json!({})
        }
    );
    let (summary, _) = log.snapshot("r1").unwrap();
    assert_eq!(summary.state, "finished");
    assert_eq!(summary.outcome, Some(json!({"type": "success"})));
}

#[test]
fn events_past_the_cap_are_counted_not_kept() {
    let mut log = RunLog::default();
    started(&mut log, "r1", 0.0);
    for i in 0..MAX_STORED_EVENTS + 3 {
        log.on_event("r1", &json!({"i": i}), i as f64);
    }
    let live = log.live_log("r1", MAX_STORED_EVENTS - 1).unwrap();
    assert_eq!(live["total"], MAX_STORED_EVENTS + 3);
    assert_eq!(live["events"].as_array().unwrap().len(), 1);
    assert_eq!(live["since"], MAX_STORED_EVENTS - 1);
    let (summary, events) = log.snapshot("r1").unwrap();
    assert_eq!(summary.event_count, MAX_STORED_EVENTS + 3);
    assert_eq!(events.dropped, 3);
    assert_eq!(events.times.len(), MAX_STORED_EVENTS);
}

#[test]
fn the_stored_record_round_trips_and_reads_from_since() {
    let events = Events {
        events: vec![json!({"a": 1}), json!({"b": 2})],
        times: vec![1.0, 2.0],
        dropped: 0,
        bytes: 14,
    };
    let stored = events.to_stored();
    assert_eq!(
        stored,
        json!({"events": [{"a": 1}, {"b": 2}], "times": [1.0, 2.0], "dropped": 0, "bytes": 14})
    );
    assert_eq!(Events::from_stored(Some(stored)), events);
    assert_eq!(Events::from_stored(Some(json!("junk"))), Events::default());
    assert_eq!(Events::from_stored(None), Events::default());
    let mut log = RunLog::default();
    started(&mut log, "r", 0.0);
    let (run, _) = log.snapshot("r").unwrap();
    let read = events.stored_log(&run, 1);
    assert_eq!(read["events"], json!([{"b": 2}]));
    assert_eq!(read["times"], json!([2.0]));
    assert_eq!(read["total"], 2);
    assert_eq!(events.stored_log(&run, 9)["events"], json!([]));
    assert_eq!(log.live_log("other", 0), None);
}

#[test]
fn the_list_marks_cut_runs_keeps_the_first_read_and_drops_the_oldest() {
    let mut log = RunLog::default();
    started(&mut log, "live", 0.0);
    let stored = json!([
        {"runId": "live", "threadId": "t", "startedMs": 1.0, "state": "running"},
        {"runId": "cut", "threadId": "t", "startedMs": 2.0, "state": "running"},
        {"runId": "done", "threadId": "t", "startedMs": 3.0, "state": "finished"},
    ]);
    let list = log.read_list(Some(stored));
    let states: Vec<&str> = list.iter().map(|r| r.state.as_str()).collect();
    assert_eq!(states, ["running", "interrupted", "finished"]);
    assert!(needs_ending(&list[1]) && !needs_ending(&list[2]));
    assert!(log.read_list(Some(json!({"not": "a list"}))).is_empty());
    assert_eq!(log.list(), None);
    assert_eq!(log.keep_list(list.clone()), list);
    assert_eq!(log.keep_list(Vec::new()), list, "the first read is kept");
    // runs(): this worker's summaries replace the stored ones; newest first; by tab.
    let runs = log.runs(list.clone(), None);
    let ids: Vec<&str> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["runId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["done", "cut", "live"]);
    assert_eq!(runs[2]["tabId"], 4);
    assert_eq!(log.runs(list.clone(), Some(4)).as_array().unwrap().len(), 1);
    // Remembering past the cap drops the oldest, which is no longer kept.
    let mut full = Vec::new();
    for i in 0..super::super::runs::MAX_STORED_RUNS {
        let mut run = list[2].clone();
        run.run_id = format!("old{i}");
        full.push(run);
    }
    full.push(list[0].clone());
    let (summary, _) = log.snapshot("live").unwrap();
    let mut other = summary.clone();
    other.run_id = "new".into();
    let (kept, dropped) = log.remember(full, other);
    assert_eq!(kept[0].run_id, "new");
    assert_eq!(kept.len(), super::super::runs::MAX_STORED_RUNS);
    assert_eq!(dropped, ["old19", "live"]);
    assert_eq!(log.snapshot("live"), None);
    assert_eq!(log.list(), Some(kept));
}

#[test]
fn a_cut_run_ends_with_a_run_error_once() {
    let mut run: RunSummary = serde_json::from_value(
        json!({"runId": "r", "threadId": "t", "startedMs": 1.0, "state": "interrupted", "eventCount": 1}),
    )
    .unwrap();
    let mut events = Events {
        events: vec![json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})],
        times: vec![1.0],
        dropped: 0,
        bytes: 0,
    };
    assert!(end_cut_run(&mut run, &mut events, &[], 9.0));
    assert_eq!(events.events.len(), events.times.len());
    assert_eq!(events.times.last(), Some(&9.0));
    assert_eq!(events.events.last().unwrap()["type"], "RUN_ERROR");
    assert_eq!(run.event_count, events.events.len());
    assert!(run.outcome.is_some());
    assert!(!needs_ending(&run));
    // A log a restart ended already (another reader of the list, at the same worker start or
    // an earlier one, ended it first): the run still reads as interrupted, with that outcome,
    // and nothing is added.
    let mut again = run.clone();
    again.outcome = None;
    let count = events.events.len();
    assert!(!end_cut_run(&mut again, &mut events, &[], 10.0));
    assert_eq!(again.state, "interrupted");
    assert_eq!(again.outcome, run.outcome);
    assert_eq!(events.events.len(), count, "one RUN_ERROR");
    // A log that ended by itself (the worker stopped after storing it, before the list): the
    // run reads as finished.
    for last in [
        json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}),
        json!({"type": "RUN_ERROR", "message": "the model refused"}),
    ] {
        let mut ended = events.clone();
        *ended.events.last_mut().unwrap() = last;
        let mut again = run.clone();
        again.outcome = None;
        assert!(!end_cut_run(&mut again, &mut ended, &[], 10.0));
        assert_eq!(again.state, "finished");
    }
}

#[test]
fn a_cut_runs_run_error_carries_the_usage_its_log_kept() {
    let summary = || -> RunSummary {
        serde_json::from_value(json!({"runId": "r", "threadId": "t", "startedMs": 1.0,
            "state": "interrupted", "eventCount": 2}))
        .unwrap()
    };
    let step = json!({"type": "CUSTOM", "name": "webmcp_host.usage", "value": {"step": 1,
        "model": "gpt", "modelId": "gpt-4.1", "provider": "openai", "usage": "reported",
        "inputTokens": 120, "outputTokens": 8, "cachedInputTokens": null, "finishReason": "tool_calls",
        "cost": null}});
    let logged = |dropped| Events {
        events: vec![
            json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
            step.clone(),
        ],
        times: vec![1.0, 2.0],
        dropped,
        bytes: 0,
    };
    let mut events = logged(0);
    assert!(end_cut_run(&mut summary(), &mut events, &[], 9.0));
    let error = events.events.last().unwrap();
    assert_eq!(error["code"], "worker_restarted");
    assert_eq!(
        error["usage"],
        json!([{"provider": "openai", "model": "gpt-4.1", "inputTokens": 120, "outputTokens": 8, "totalTokens": 128}])
    );
    // A log that lost events may have lost usage events too: no usage is said.
    let mut events = logged(3);
    assert!(end_cut_run(&mut summary(), &mut events, &[], 9.0));
    assert_eq!(events.events.last().unwrap().get("usage"), None);
}

#[test]
fn a_large_event_is_stored_cut_and_a_run_log_stops_at_its_byte_budget() {
    use crate::core::limits::{MAX_RUN_LOG_BYTES, MAX_STORED_EVENT_BYTES};
    let big = "x".repeat(300_000);
    let event = json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": big});
    let (stored, size) = stored_event(&event);
    assert!(size <= MAX_STORED_EVENT_BYTES, "{size}");
    assert_eq!(stored["toolCallId"], "c1");
    let content = stored["content"].as_str().unwrap();
    assert!(
        content.ends_with("[298976 bytes not stored: max_stored_event_bytes]"),
        "{}",
        &content[1000..]
    );
    // Many short strings that stay over the cap: only the type is kept, and why.
    let many = json!({"type": "CUSTOM", "value": vec!["y".repeat(100); 2000]});
    let (stub, _) = stored_event(&many);
    assert_eq!(stub["type"], "CUSTOM");
    assert!(stub["notStored"]
        .as_str()
        .unwrap()
        .contains("max_stored_event_bytes"));
    // A small event is kept as it is.
    let small = json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"});
    assert_eq!(stored_event(&small).0, small);
    // A run whose results keep coming: its log stays within its budget, the rest counted.
    let mut log = RunLog::default();
    log.on_start("r", "t", None, &json!({"prompt": "p"}), 0.0);
    for i in 0..40 {
        let event = json!({"type": "TOOL_CALL_RESULT", "toolCallId": format!("c{i}"), "content": "z".repeat(60_000)});
        log.on_event("r", &event, i as f64);
    }
    let (summary, events) = log.snapshot("r").unwrap();
    assert!(events.bytes <= MAX_RUN_LOG_BYTES && summary.bytes == events.bytes);
    assert!(events.dropped > 0 && events.events.len() + events.dropped == 40);
}
