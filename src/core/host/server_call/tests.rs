//! MCP calls outside runs, by hand and from an exposure: the tool and its arguments decided
//! before the gate, the gate before the question, a no or a withdrawn exposure sends nothing,
//! the result read with the connection's secrets redacted, and an input not asked for.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::*;
use crate::core::expose::page_tools;
use crate::core::expose::Exposure;
use crate::core::mcp::tools::parse_tools;
use crate::core::mcp::CallResult;
use crate::core::setup::store::MIDDLEWARE_KEY;

const ORIGIN: &str = "https://shop.example";

fn server() -> McpServerConfig {
    serde_json::from_value(json!({
        "name": "records", "url": "https://records.example/mcp", "namespace": "rec"
    }))
    .unwrap()
}

fn tools() -> Vec<McpTool> {
    parse_tools(&[
        json!({"name": "add", "description": "Adds.", "annotations": {"readOnlyHint": true},
            "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}),
        json!({"name": "delete_record", "description": "Deletes.",
            "annotations": {"destructiveHint": true},
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}}}),
    ])
    .0
}

fn by_hand(name: &str, args: Value) -> ServerCall {
    let request = ServerCallRequest::parse(
        &json!({"server": "records", "name": name, "args": args, "timeoutMs": 900}),
    )
    .unwrap();
    ServerCall::by_hand(request, "1")
}

fn exposure() -> Exposure {
    Exposure {
        server: "records".into(),
        origins: vec![ORIGIN.into()],
        tools: None,
    }
}

fn exposed_tools() -> Vec<PageTool> {
    page_tools(&exposure(), &server(), &tools(), &mut HashSet::new()).0
}

fn exposed(name: &str, args: Value) -> ServerCall {
    let request = CallExposedRequest::parse(&json!({"name": name, "args": args})).unwrap();
    ServerCall::exposed(ORIGIN.into(), 7, request, "1")
}

/// Plays a call by hand to the server's tools, with the stored layers `layers`.
fn to_the_gate(host: &Host, call: &mut ServerCall, layers: Value) -> Next {
    let effect = host.server_call(call, None, 0.0);
    assert!(
        matches!(&effect, Step::Do(Output::Storage(Storage::Read { key, .. })) if key == SERVERS_KEY),
        "{effect:?}"
    );
    let effect = host.server_call(call, servers(), 0.0);
    assert!(
        matches!(&effect, Step::Do(Output::Mcp(Mcp::Tools { pool: Pool::ByHand, server })) if server.name == "records"),
        "{effect:?}"
    );
    let effect = host.server_call(call, Some(Input::McpTools(Ok(tools()))), 0.0);
    assert!(
        matches!(&effect, Step::Do(Output::Storage(Storage::Read { key, .. })) if key == MIDDLEWARE_KEY),
        "{effect:?}"
    );
    host.server_call(call, Some(Input::Read(Ok(Some(layers)))), 0.0)
}

/// The configured servers, as stored.
fn servers() -> Option<Input> {
    let stored =
        json!([{"name": "records", "url": "https://records.example/mcp", "namespace": "rec"}]);
    Some(Input::Read(Ok(Some(stored))))
}

fn done(effect: Next) -> Result<Value, String> {
    match effect {
        Step::Done(answer) => answer,
        other => panic!("not done: {other:?}"),
    }
}

fn called(text: &str) -> Option<Input> {
    Some(Input::McpCalled {
        result: Some(CallResult::Ok {
            text: text.into(),
            structured: None,
            parts: Vec::new(),
        }),
        secrets: vec!["sk-live-123456789".into()],
    })
}

#[test]
fn a_call_by_hand_that_acts_is_asked_after_the_gate_and_sent_with_its_whole_arguments() {
    let host = Host::default();
    let mut call = by_hand("delete_record", json!({"id": "r-1"}));
    let effect = to_the_gate(&host, &mut call, json!([]));
    let Step::Do(Output::Ui(Ui::Confirm {
        asked,
        call_id,
        server,
        tool,
        args,
        question,
    })) = effect
    else {
        panic!("asked first: {effect:?}")
    };
    assert_eq!(
        (asked.as_str(), call_id.as_str()),
        ("manual-1", QUESTION_CALL_ID)
    );
    assert_eq!(
        (server.as_str(), tool.as_str()),
        ("records", "delete_record")
    );
    assert_eq!(Value::Object(args), json!({"id": "r-1"}));
    assert!(question.contains("r-1"), "{question}");

    let effect = host.server_call(&mut call, Some(Input::Confirmed(true)), 0.0);
    let Step::Do(Output::Mcp(Mcp::Call {
        server,
        permit,
        within_ms,
        forget_on_error,
        ..
    })) = effect
    else {
        panic!("sent: {effect:?}")
    };
    assert_eq!(
        (server.as_str(), within_ms, forget_on_error),
        ("records", Some(900), false)
    );
    assert_eq!(permit.asker(), Asker::ByHand);
    assert_eq!(permit.call().tool.name, "delete_record");
    assert_eq!(
        Value::Object(permit.call().arguments.clone()),
        json!({"id": "r-1"})
    );

    let answer =
        done(host.server_call(&mut call, called("gone; key sk-live-123456789"), 0.0)).unwrap();
    assert_eq!(answer["ok"], true, "{answer}");
    assert!(
        !answer.to_string().contains("sk-live-123456789"),
        "{answer}"
    );
}

#[test]
fn a_call_by_hand_the_gate_blocks_by_its_run_name_asks_nobody_and_sends_nothing() {
    let host = Host::default();
    let mut call = by_hand("delete_record", json!({"id": "r-1"}));
    let layers = json!([{"kind": "block", "tool": "rec__delete_record", "reason": "frozen"}]);
    let answer = done(to_the_gate(&host, &mut call, layers)).unwrap();
    assert_eq!(answer, json!({"ok": false, "error": "blocked: frozen"}));
}

#[test]
fn a_no_declines_and_a_read_only_tool_goes_without_a_question() {
    let host = Host::default();
    let mut call = by_hand("delete_record", json!({"id": "r-1"}));
    to_the_gate(&host, &mut call, json!([]));
    let answer = done(host.server_call(&mut call, Some(Input::Confirmed(false)), 0.0));
    assert_eq!(answer, Ok(declined()));

    let host = Host::default();
    let mut call = by_hand("add", json!({"a": 1}));
    let effect = to_the_gate(&host, &mut call, json!([]));
    assert!(
        matches!(effect, Step::Do(Output::Mcp(Mcp::Call { .. }))),
        "{effect:?}"
    );
    let timed_out = done(host.server_call(
        &mut call,
        Some(Input::McpCalled {
            result: None,
            secrets: Vec::new(),
        }),
        0.0,
    ))
    .unwrap();
    assert_eq!(timed_out["ok"], false);
    assert!(
        timed_out["error"]
            .as_str()
            .unwrap()
            .contains("within 900 ms"),
        "{timed_out}"
    );
}

#[test]
fn a_call_by_hand_is_refused_before_the_gate_for_a_wrong_server_tool_or_arguments() {
    let host = Host::default();
    let mut call = by_hand("add", json!({"a": 1}));
    host.server_call(&mut call, None, 0.0);
    let missing = host.server_call(&mut call, Some(Input::Read(Ok(None))), 0.0);
    assert!(done(missing).unwrap_err().contains("records"));

    for (name, args) in [("nope", json!({})), ("add", json!({"a": "one"}))] {
        let mut call = by_hand(name, args);
        host.server_call(&mut call, None, 0.0);
        host.server_call(&mut call, servers(), 0.0);
        let effect = host.server_call(&mut call, Some(Input::McpTools(Ok(tools()))), 0.0);
        let refusal = done(effect).unwrap();
        assert_eq!(refusal["ok"], false, "{name}: {refusal}");
    }

    let mut call = by_hand("add", json!({"a": 1}));
    host.server_call(&mut call, None, 0.0);
    host.server_call(&mut call, servers(), 0.0);
    let unreachable =
        host.server_call(&mut call, Some(Input::McpTools(Err("refused".into()))), 0.0);
    assert_eq!(done(unreachable), Err("refused".into()));
}

#[test]
fn an_exposed_tool_is_asked_in_the_extension_and_sent_only_while_still_exposed() {
    let host = Host::default();
    let mut call = exposed("rec__delete_record", json!({"id": "r-9"}));
    let effect = host.server_call(&mut call, None, 0.0);
    assert!(
        matches!(&effect, Step::Do(Output::Mcp(Mcp::Exposed { origin })) if origin == ORIGIN),
        "{effect:?}"
    );
    host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), 0.0);
    let effect = host.server_call(&mut call, Some(Input::Read(Ok(None))), 0.0);
    let Step::Do(Output::Ui(Ui::Confirm {
        asked, question, ..
    })) = effect
    else {
        panic!("asked: {effect:?}")
    };
    assert_eq!(asked, "exposed_1");
    assert!(question.contains(ORIGIN), "{question}");
    // Withdrawn while the person was asked: nothing is sent.
    let effect = host.server_call(&mut call, Some(Input::Confirmed(true)), 0.0);
    assert!(
        matches!(effect, Step::Do(Output::Storage(Storage::Exposures))),
        "{effect:?}"
    );
    let withdrawn = host.server_call(&mut call, Some(Input::Exposures(Vec::new())), 0.0);
    assert!(done(withdrawn).unwrap_err().contains("no longer exposed"));

    // Still exposed: sent, the connection dropped should it fail, the text redacted.
    let mut call = exposed("rec__delete_record", json!({"id": "r-9"}));
    host.server_call(&mut call, None, 0.0);
    host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), 0.0);
    host.server_call(&mut call, Some(Input::Confirmed(true)), 0.0);
    let effect = host.server_call(&mut call, Some(Input::Exposures(vec![exposure()])), 0.0);
    let Step::Do(Output::Mcp(Mcp::Call {
        permit,
        within_ms,
        forget_on_error,
        ..
    })) = effect
    else {
        panic!("sent: {effect:?}")
    };
    assert_eq!(
        (permit.asker(), within_ms, forget_on_error),
        (Asker::Exposure, None, true)
    );
    let text = done(host.server_call(&mut call, called("deleted sk-live-123456789"), 0.0));
    assert_eq!(text, Ok(json!("deleted [redacted]")));
}

#[test]
fn an_exposed_call_is_refused_as_an_error_a_page_throws() {
    let host = Host::default();
    let mut call = exposed("rec__nope", json!({}));
    host.server_call(&mut call, None, 0.0);
    let unknown = host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), 0.0);
    assert!(done(unknown).unwrap_err().contains("no tool named"));

    let mut call = exposed("rec__add", json!({"a": 1}));
    host.server_call(&mut call, None, 0.0);
    host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), 0.0);
    let layers = json!([{"kind": "block", "tool": "add", "reason": "no"}]);
    let blocked = host.server_call(&mut call, Some(Input::Read(Ok(Some(layers)))), 0.0);
    assert_eq!(done(blocked), Err("blocked: no".into()));
}

#[test]
fn an_input_the_call_did_not_ask_for_ends_it_and_sends_nothing() {
    let host = Host::default();
    let mut call = by_hand("add", json!({"a": 1}));
    let effect = host.server_call(&mut call, Some(Input::Confirmed(true)), 0.0);
    let why = done(effect).unwrap_err();
    assert!(
        why.starts_with("internal error: an answer of the person"),
        "{why}"
    );
    // And the call stays ended.
    let again = done(host.server_call(&mut call, None, 0.0)).unwrap_err();
    assert!(again.starts_with("internal error"), "{again}");
}

#[test]
fn a_call_by_hand_is_one_use_of_its_server_from_its_start_to_its_end() {
    let host = Host::default();
    let mut call = by_hand("add", json!({"a": 1}));
    to_the_gate(&host, &mut call, json!([]));
    assert_eq!(call.take_idle(), None, "under way");
    assert_eq!(
        done(host.server_call(&mut call, called("2"), 0.0)).unwrap()["ok"],
        true
    );
    let idle = call.take_idle().expect("its end");
    assert_eq!(idle.server, "records");
    assert!(host.idle(&idle), "unused since");

    let mut exposed = exposed("rec__add", json!({"a": 1}));
    host.server_call(&mut exposed, None, 0.0);
    host.server_call(&mut exposed, Some(Input::Exposed(Vec::new())), 0.0);
    assert_eq!(exposed.take_idle(), None, "a page's call is no use by hand");
}

/// An exposed tool's call of page `tab`, played to its question (or its refusal) at `now`.
fn exposed_to_the_question(host: &Host, tab: i64, id: &str, now: f64) -> Next {
    exposed_call(host, tab, id, now).1
}

/// [`exposed_to_the_question`], with the call.
fn exposed_call(host: &Host, tab: i64, id: &str, now: f64) -> (ServerCall, Next) {
    let request =
        CallExposedRequest::parse(&json!({"name": "rec__delete_record", "args": {"id": id}}))
            .unwrap();
    let mut call = ServerCall::exposed(ORIGIN.into(), tab, request, id);
    host.server_call(&mut call, None, now);
    let effect = host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), now);
    let effect = match effect {
        Step::Do(Output::Storage(Storage::Read { .. })) => {
            host.server_call(&mut call, Some(Input::Read(Ok(None))), now)
        }
        other => other,
    };
    let effect = match effect {
        Step::Do(Output::Ui(Ui::Push { .. })) => {
            host.server_call(&mut call, Some(Input::Pushed), now)
        }
        other => other,
    };
    (call, effect)
}

#[test]
fn a_burst_of_a_pages_calls_puts_one_question_counted_and_none_just_after_a_no() {
    let host = Host::default();
    // The attack: 25 calls at once of an exposed tool that asks.
    let mut calls: Vec<ServerCall> = Vec::new();
    let mut asked = 0;
    for i in 0..25 {
        let request = CallExposedRequest::parse(
            &json!({"name": "rec__delete_record", "args": {"id": format!("r-{i}")}}),
        )
        .unwrap();
        let mut call = ServerCall::exposed(ORIGIN.into(), 7, request, &i.to_string());
        host.server_call(&mut call, None, 0.0);
        let mut effect = host.server_call(&mut call, Some(Input::Exposed(exposed_tools())), 0.0);
        if let Step::Do(Output::Storage(Storage::Read { .. })) = effect {
            effect = host.server_call(&mut call, Some(Input::Read(Ok(None))), 0.0);
        }
        match effect {
            Step::Do(Output::Ui(Ui::Confirm {
                asked: id,
                call_id,
                server,
                tool,
                args,
                question,
            })) => {
                asked += 1;
                host.waits.borrow_mut().ask_with(
                    &id,
                    &call_id,
                    &server,
                    &tool,
                    &args,
                    Some(question),
                );
                calls.push(call);
            }
            Step::Do(Output::Ui(Ui::Push { .. })) => {
                let busy = done(host.server_call(&mut call, Some(Input::Pushed), 0.0));
                assert_eq!(busy, Err(BUSY_WAITS.into()));
            }
            other => panic!("call {i}: {other:?}"),
        }
    }
    assert_eq!(asked, 1, "one question for the page");
    let pending = host.waits.borrow().pending();
    assert_eq!(pending.as_array().unwrap().len(), 1, "{pending}");
    assert_eq!(pending[0]["repeats"], 24, "{pending}");

    // Another tab of the origin is another page: its own question.
    assert!(matches!(
        exposed_to_the_question(&host, 8, "other-tab", 0.0),
        Step::Do(Output::Ui(Ui::Confirm { .. }))
    ));

    // The person says no: the page is refused for a while, then may ask again.
    let mut open = calls.pop().unwrap();
    let no = host.server_call(&mut open, Some(Input::Confirmed(false)), 1_000.0);
    assert_eq!(done(no), Err(DECLINED.into()));
    let quiet = exposed_to_the_question(&host, 7, "again", 1_000.0 + 29_999.0);
    assert_eq!(done(quiet), Err(BUSY_DECLINED.into()));
    let later = exposed_to_the_question(&host, 7, "later", 1_000.0 + f64::from(EXPOSED_QUIET_MS));
    assert!(
        matches!(later, Step::Do(Output::Ui(Ui::Confirm { .. }))),
        "{later:?}"
    );
}

#[test]
fn a_yes_lets_the_page_ask_again_at_once() {
    let host = Host::default();
    let (mut first, asked) = exposed_call(&host, 7, "a", 0.0);
    assert!(
        matches!(asked, Step::Do(Output::Ui(Ui::Confirm { .. }))),
        "{asked:?}"
    );
    let yes = host.server_call(&mut first, Some(Input::Confirmed(true)), 5.0);
    assert!(
        matches!(yes, Step::Do(Output::Storage(Storage::Exposures))),
        "{yes:?}"
    );
    let (_, next) = exposed_call(&host, 7, "b", 6.0);
    assert!(
        matches!(next, Step::Do(Output::Ui(Ui::Confirm { .. }))),
        "{next:?}"
    );
}
