//! Answers, the run list and prompts.

use super::*;
use serde_json::json;

#[test]
fn answers_parse_and_decline_defaults() {
    let a = Answer::parse_answer(&json!({"runId": "r", "callId": "c", "value": {"x": 1}})).unwrap();
    assert_eq!(a.verdict, Ok("{\"x\":1}".into()));
    let a = Answer::parse_answer(&json!({"runId": "r", "callId": "c", "value": "yes"})).unwrap();
    assert_eq!(a.verdict, Ok("yes".into()));
    assert!(Answer::parse_answer(&json!({"runId": "r", "callId": "c"})).is_err());
    assert!(Answer::parse_answer(&json!({"callId": "c", "value": 1})).is_err());
    let d = Answer::parse_decline(&json!({"runId": "r", "callId": "c", "reason": "  "})).unwrap();
    assert_eq!(d.verdict, Err(None));
    let d = Answer::parse_decline(&json!({"runId": "r", "callId": "c", "reason": "no"})).unwrap();
    assert_eq!(d.verdict, Err(Some("no".into())));
}

fn summary(id: &str, state: &str) -> RunSummary {
    RunSummary {
        run_id: id.into(),
        thread_id: "t".into(),
        tab_id: None,
        prompt: String::new(),
        started_ms: 0.0,
        state: state.into(),
        outcome: None,
        event_count: 0,
        usage: None,
        page: None,
        bytes: 0,
        eval: None,
    }
}

#[test]
fn the_run_list_is_capped_newest_first() {
    let mut list = Vec::new();
    let mut dropped = Vec::new();
    for i in 0..MAX_STORED_RUNS + 3 {
        dropped.extend(remember_run(
            &mut list,
            summary(&format!("r{i}"), "running"),
        ));
    }
    assert_eq!(list.len(), MAX_STORED_RUNS);
    assert_eq!(list[0].run_id, format!("r{}", MAX_STORED_RUNS + 2));
    assert_eq!(dropped, ["r0", "r1", "r2"]);
    // Updating a run moves it to the front without a duplicate.
    remember_run(&mut list, summary("r5", "finished"));
    assert_eq!(list.len(), MAX_STORED_RUNS);
    assert_eq!(
        (list[0].run_id.as_str(), list[0].state.as_str()),
        ("r5", "finished")
    );
    mark_interrupted(&mut list, |id| id == "r6");
    assert_eq!(
        list.iter().find(|r| r.run_id == "r6").unwrap().state,
        "running"
    );
    assert_eq!(
        list.iter().find(|r| r.run_id == "r7").unwrap().state,
        "interrupted"
    );
    assert_eq!(list[0].state, "finished");
}

#[test]
fn prompts_come_from_the_request() {
    assert_eq!(prompt_of(&json!({"prompt": "Hi"})), "Hi");
    assert_eq!(
        prompt_of(
            &json!({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})
        ),
        "c"
    );
}

#[test]
fn started_runs_get_their_missing_ids() {
    let mut request = json!({"prompt": "hi", "threadId": "mine"})
        .as_object()
        .unwrap()
        .clone();
    let mut made = 0;
    let ids = fill_run_ids(&mut request, || {
        made += 1;
        format!("id{made}")
    });
    assert_eq!(ids, ("run_id1".to_owned(), "mine".to_owned()));
    assert_eq!(request["runId"], "run_id1");
    assert_eq!(made, 1);
    assert_eq!(
        not_started("r", "no model"),
        json!({"runId": "r", "outcome": {"type": "failed", "message": "no model"}})
    );
}

#[test]
fn the_run_list_keeps_its_logs_within_their_byte_budget_oldest_forgotten_first() {
    let sized = |id: &str, bytes: usize| RunSummary {
        bytes,
        ..summary(id, "finished")
    };
    let mut list = Vec::new();
    for i in 0..3 {
        assert!(
            remember_run(&mut list, sized(&format!("r{i}"), MAX_RUN_LOGS_BYTES / 4)).is_empty()
        );
    }
    // A fourth and a fifth: the budget is passed, the oldest goes.
    assert!(remember_run(&mut list, sized("r3", MAX_RUN_LOGS_BYTES / 4)).is_empty());
    assert_eq!(
        remember_run(&mut list, sized("r4", MAX_RUN_LOGS_BYTES / 4)),
        ["r0"]
    );
    // One run larger than the whole budget: it alone is kept.
    let dropped = remember_run(&mut list, sized("huge", MAX_RUN_LOGS_BYTES * 2));
    assert_eq!(dropped, ["r4", "r3", "r2", "r1"]);
    assert_eq!(list.len(), 1);
}

#[test]
fn an_evaluations_runs_never_push_the_persons_out() {
    let tagged = |id: &str, case: &str| RunSummary {
        eval: EvalTag::of_request(&json!({"eval": {"suite": "eval_1", "case": case, "run": 1}})),
        bytes: MAX_RUN_LOGS_BYTES / 100,
        ..summary(id, "finished")
    };
    let mut list = Vec::new();
    for i in 0..5 {
        remember_run(&mut list, summary(&format!("p{i}"), "finished"));
    }
    // A suite of 45 runs after the person's five: the person's stay, the suite's oldest go.
    let mut dropped = Vec::new();
    for i in 0..MAX_STORED_EVAL_RUNS + 5 {
        dropped.extend(remember_run(&mut list, tagged(&format!("e{i}"), "finds")));
    }
    assert_eq!(dropped, ["e0", "e1", "e2", "e3", "e4"]);
    assert_eq!(list.iter().filter(|r| r.eval.is_none()).count(), 5);
    assert_eq!(list.len(), 5 + MAX_STORED_EVAL_RUNS);
    // Over the byte budget, the suite's oldest runs go before any of the person's.
    let big = |id: &str| RunSummary {
        bytes: MAX_RUN_LOGS_BYTES / 2,
        ..summary(id, "finished")
    };
    remember_run(&mut list, big("p5"));
    let dropped = remember_run(&mut list, big("p6"));
    assert_eq!(dropped.len(), MAX_STORED_EVAL_RUNS, "{dropped:?}");
    assert!(dropped.iter().all(|id| id.starts_with('e')));
    assert!(list.iter().all(|r| r.eval.is_none()));
    assert_eq!(list.len(), 7);
    // Still over with the person's runs alone: their oldest with a log go (one without frees
    // nothing), the newest always stays.
    let dropped = remember_run(&mut list, big("p7"));
    assert_eq!(dropped, ["p5"]);
    assert_eq!(list.len(), 7);
}

#[test]
fn an_eval_tag_is_read_from_the_run_request_and_capped() {
    let tag = EvalTag::of_request(
        &json!({"eval": {"suite": "eval_9", "case": "x".repeat(500), "run": 3, "model": "m"}}),
    )
    .unwrap();
    assert_eq!(
        (tag.suite.as_str(), tag.run, tag.model.as_str()),
        ("eval_9", 3, "m")
    );
    assert_eq!(tag.case.chars().count(), EVAL_TAG_CHARS);
    for not_one in [
        json!({}),
        json!({"eval": "x"}),
        json!({"eval": {"case": "c"}}),
        json!({"eval": {"suite": ""}}),
    ] {
        assert_eq!(EvalTag::of_request(&not_one), None, "{not_one}");
    }
    let summary = serde_json::to_value(summary("r", "finished")).unwrap();
    assert!(
        summary.get("eval").is_none(),
        "a person's run says nothing of evals"
    );
}
