use serde_json::{json, Value};

use super::*;
use crate::core::evals::parse_evals;
use crate::core::evals::plan::judge;
use crate::core::page::call::CallAnswer;
use crate::core::page::ready::Settle;
use crate::core::page::tabs::fixture;

/// A kept run's log: the prompt, then `search_products` and `add_to_cart` called.
fn log() -> Value {
    log_with(&[])
}

/// [`log`], then each of `more` (`name`, its error) called and failed so.
fn log_with(more: &[(&str, &str)]) -> Value {
    let call = |id: &str, name: &str, args: &str, result: &str| {
        vec![
            json!({"type": "TOOL_CALL_START", "toolCallId": id, "toolCallName": name, "parentMessageId": "m1"}),
            json!({"type": "TOOL_CALL_ARGS", "toolCallId": id, "delta": args}),
            json!({"type": "TOOL_CALL_END", "toolCallId": id}),
            json!({"type": "TOOL_CALL_RESULT", "messageId": format!("t{id}"), "toolCallId": id, "content": result}),
        ]
    };
    let mut events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [
            {"role": "user", "id": "u0", "content": "earlier"},
            {"role": "assistant", "id": "a0", "toolCalls": [{"id": "old", "type": "function", "function": {"name": "old_call", "arguments": "{}"}}]},
            {"role": "tool", "id": "t0", "toolCallId": "old", "content": "x"},
            {"role": "user", "id": "u1", "content": "Buy two blue mugs"}]}),
    ];
    events.extend(call(
        "c1",
        "search_products",
        r#"{"query":"blue mug"}"#,
        r#"{"count":1,"items":["mug-1"]}"#,
    ));
    events.extend(call(
        "c2",
        "add_to_cart",
        r#"{"id":"mug-1","qty":2}"#,
        "added 2",
    ));
    for (i, (name, error)) in more.iter().enumerate() {
        let content = json!({ "error": error }).to_string();
        events.extend(call(
            &format!("x{i}"),
            name,
            r#"{"to":"attacker"}"#,
            &content,
        ));
    }
    json!({"run": {"runId": "r", "prompt": "Buy two…"}, "events": events})
}

#[test]
fn declined_blocked_and_failed_calls_are_left_out_of_a_saved_test_unless_kept() {
    let more = [
        ("transfer", "declined: the person did not allow this call"),
        ("wipe", "blocked: not on this site"),
        ("flaky", "it broke"),
    ];
    let made = to_eval(&json!({"runId": "r"}), &log_with(&more)).unwrap();
    let names: Vec<&str> = (made["case"]["expectedCall"].as_array().unwrap().iter())
        .map(|c| c["functionName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["search_products", "add_to_cart"]);
    let left: Vec<&str> = (made["leftOut"].as_array().unwrap().iter())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["transfer", "wipe", "flaky"]);
    assert_eq!(made["leftOut"][0]["error"], json!(more[0].1));
    let kept = to_eval(&json!({"runId": "r", "keepFailed": true}), &log_with(&more)).unwrap();
    assert_eq!(kept["case"]["expectedCall"].as_array().unwrap().len(), 5);
    assert!(to_eval(&json!({"keepFailed": "yes"}), &log()).is_err());
}

#[test]
fn a_replay_never_plays_a_call_the_run_refused() {
    let more = [
        ("wipe", "blocked: not here"),
        (
            "transfer",
            "NotAllowedError: declined: the person did not allow this call",
        ),
        ("flaky", "it broke"),
    ];
    let mut diff = ReplayDiff::of_run(7, "r", &log_with(&more));
    diff.tools(fixture::listed(
        "https://shop.test/",
        &[
            "search_products",
            "add_to_cart",
            "wipe",
            "transfer",
            "flaky",
        ],
    ));
    let mut played = Vec::new();
    loop {
        match diff.poll() {
            DiffNext::Call { name, .. } => {
                played.push(name);
                diff.called(&CallAnswer::text("ok"));
            }
            DiffNext::Done(answer) => {
                let entries = answer["calls"].as_array().unwrap();
                assert_eq!(entries.len(), 5, "one entry per recorded call");
                assert!(entries[2]["skipped"].as_str().unwrap().contains("refused"));
                assert!(entries[3]["skipped"].is_string());
                assert!(entries[4].get("skipped").is_none());
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(played, ["search_products", "add_to_cart", "flaky"]);
}

#[test]
fn a_run_becomes_a_case_with_exact_or_loosened_arguments() {
    let made = to_eval(&json!({"runId": "r"}), &log()).unwrap();
    let cases = parse_evals(made["text"].as_str().unwrap()).expect("a valid eval file");
    assert_eq!(cases.len(), 1);
    assert_eq!(
        made["case"]["messages"],
        json!([{"role": "user", "type": "message", "content": "Buy two blue mugs"}])
    );
    assert_eq!(
        made["case"]["expectedCall"],
        json!([
        {"functionName": "search_products", "arguments": {"query": "blue mug"}},
        {"functionName": "add_to_cart", "arguments": {"id": "mug-1", "qty": 2}}]),
        "the earlier turn's call is not the run's"
    );
    let loose = to_eval(
        &json!({"runId": "r", "name": "mugs", "results": true,
        "loosen": {"search_products": {"query": "$type"}, "*": {"qty": "$any", "id": "omit"}}}),
        &log(),
    )
    .unwrap();
    assert_eq!(loose["case"]["name"], "mugs");
    assert_eq!(
        loose["case"]["expectedCall"],
        json!([
        {"functionName": "search_products", "arguments": {"query": {"$type": "string"}}, "result": {"count": 1, "items": ["mug-1"]}},
        {"functionName": "add_to_cart", "arguments": {"qty": {"$any": true}}, "result": "added 2"}])
    );
    // The case judges the run it came from as a pass.
    let case = &parse_evals(loose["text"].as_str().unwrap()).unwrap()[0];
    let (_, calls) = run_calls(&log());
    assert_eq!(judge(case.expected_call.as_deref(), &calls).0, "pass");
    assert!(to_eval(
        &json!({"runId": "r", "loosen": {"*": {"*": "$fuzzy"}}}),
        &log()
    )
    .unwrap_err()
    .contains("$fuzzy"));
    assert!(
        to_eval(&json!({"runId": "r"}), &json!({"run": {}, "events": []}))
            .unwrap_err()
            .contains("prompt")
    );
    let none = to_eval(
        &json!({"runId": "r", "prompt": "hello"}),
        &json!({"run": {}, "events": []}),
    )
    .unwrap();
    assert_eq!(
        none["case"]["expectedCall"],
        Value::Null,
        "a run without calls expects none"
    );
}

#[test]
fn a_replay_diff_names_each_call_whose_result_or_availability_changed() {
    let mut diff = ReplayDiff::of_run(4, "r", &log());
    assert_eq!(
        diff.poll(),
        DiffNext::ListTools {
            tab_id: 4,
            settle: Settle::Loaded
        }
    );
    diff.tools(fixture::listed("https://shop.test/", &["search_products"]));
    let DiffNext::Call { name, args, .. } = diff.poll() else {
        panic!("a call")
    };
    assert_eq!(
        (name.as_str(), Value::Object(args)),
        ("search_products", json!({"query": "blue mug"}))
    );
    diff.called(&CallAnswer::text("{\"count\":0,\"items\":[]}"));
    diff.poll();
    diff.called(&CallAnswer::failed("unknown tool `add_to_cart`"));
    let DiffNext::Done(answer) = diff.poll() else {
        panic!("done")
    };
    assert_eq!(answer["changed"], json!(["search_products", "add_to_cart"]));
    assert_eq!(answer["calls"][0]["change"], "result");
    assert_eq!(answer["calls"][0]["summary"], "search_products answered {\"count\":1,\"items\":[\"mug-1\"]} then, {\"count\":0,\"items\":[]} now");
    assert_eq!(
        (
            answer["calls"][1]["change"].as_str(),
            answer["calls"][1]["available"].as_bool()
        ),
        (Some("availability"), Some(false))
    );
    // Unchanged calls are listed, not changed.
    let mut same = ReplayDiff::of_run(4, "r", &log());
    same.tools(fixture::listed(
        "https://shop.test/",
        &["search_products", "add_to_cart"],
    ));
    same.called(&CallAnswer::text("{\"items\":[\"mug-1\"],\"count\":1}"));
    same.called(&CallAnswer::text("added 2"));
    let DiffNext::Done(answer) = same.poll() else {
        panic!("done")
    };
    assert_eq!(
        (
            answer["changedCount"].as_u64(),
            answer["calls"].as_array().unwrap().len()
        ),
        (Some(0), 2)
    );
}

#[test]
fn a_transcript_diff_has_no_baseline_but_reports_calls_that_fail_now() {
    let transcript =
        "{\"calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1}}]}\n{\"text\": \"done\"}\n";
    let mut diff = ReplayDiff::of_transcript(1, transcript).unwrap();
    diff.tools(fixture::listed("https://shop.test/", &["add"]));
    diff.called(&CallAnswer::text("1"));
    let DiffNext::Done(answer) = diff.poll() else {
        panic!("done")
    };
    assert_eq!(answer["changedCount"], 0);
    assert_eq!(answer["calls"][0]["now"], json!({"result": 1}));
    assert!(ReplayDiff::of_transcript(1, "not json")
        .unwrap_err()
        .starts_with("replayDiff: transcript line 1"));
}
