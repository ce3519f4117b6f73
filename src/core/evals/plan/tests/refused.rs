//! Agent mode's `result` constraints against calls that never reached the application: a call
//! the person declined or the host refused has no result for a constraint to find, while a
//! failure the tool itself reported stays its answer.

use serde_json::{json, Value};

use super::super::*;
use super::{request, run_answer};
use crate::core::page::tabs::fixture;

/// The outcome and reason of one agent run of a case expecting `expected`, the run's calls
/// `calls` (name, args, result text).
fn judged(expected: Value, calls: &[(&str, Value, &str)]) -> (String, String) {
    let case = json!([{"name": "order",
        "messages": [{"role": "user", "type": "message", "content": "order two mugs"}],
        "expectedCall": expected}]);
    let mut ev = Evaluation::new(request(case, "agent", json!({"models": ["m"]})), None);
    let mut answers = vec![Ok(run_answer(calls))].into_iter();
    let answer = loop {
        match ev.poll() {
            Next::Run { .. } => {
                ev.handle(Reply::Ran {
                    answer: answers.next().expect("one run"),
                    latency_ms: 1.0,
                });
            }
            Next::Log { .. } => {
                ev.handle(Reply::Logged(Err("no log".into())));
            }
            // The suite's start, then before the run: the tab's origin read and checked.
            Next::ListTools { name: None, .. } => {
                let tools = fixture::listed("https://shop.test/", &[]);
                ev.handle(Reply::Listed { tools, now_ms: 0.0 });
            }
            Next::Done(answer) => break answer,
            other => panic!("unexpected {other:?}"),
        }
    };
    let result = &answer["results"][0];
    (
        result["outcome"].as_str().unwrap_or_default().to_owned(),
        result["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

#[test]
fn a_result_constraint_is_not_met_by_a_call_the_person_declined_or_the_host_refused() {
    let any_object = json!([{"functionName": "place_order", "result": {"$type": "object"}}]);
    let subset = json!([{"functionName": "place_order", "result": {}}]);
    for error in [
        "NotAllowedError: declined: the person did not allow this call",
        "declined: the person did not allow this call",
        "blocked: ordering is not allowed on this site",
    ] {
        let record = json!({"error": error}).to_string();
        for expected in [&any_object, &subset] {
            let calls = [("place_order", json!({"sku": "mug-1"}), record.as_str())];
            let (outcome, reason) = judged(expected.clone(), &calls);
            assert_eq!(outcome, "fail", "{error}, {expected}: {reason}");
            assert!(
                reason.contains("place_order got no result from the application"),
                "{reason}"
            );
        }
    }
    // The application's answer meets it.
    let calls = [("place_order", json!({}), r#"{"orderId":"A-1001"}"#)];
    assert_eq!(judged(any_object.clone(), &calls).0, "pass");
    // With no `result` constraint the call is judged as made: the agent chose it.
    let declined = r#"{"error":"declined: the person did not allow this call"}"#;
    let calls = [("place_order", json!({}), declined)];
    assert_eq!(
        judged(json!([{"functionName": "place_order"}]), &calls).0,
        "pass"
    );
    // A failure the tool reported is its answer: a case may expect it.
    let thrown = r#"{"error":"Error: out of stock"}"#;
    let calls = [("place_order", json!({}), thrown)];
    let expects_it = json!([{"functionName": "place_order",
        "result": {"error": {"$contains": "out of stock"}}}]);
    assert_eq!(judged(expects_it, &calls).0, "pass");
}
