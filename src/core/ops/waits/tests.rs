//! The waits table: listing inputs, answers reaching their waiter, confirmations, dismissal.

use super::*;
use serde_json::json;

fn input(call_id: &str) -> PendingInput {
    PendingInput {
        call_id: call_id.into(),
        turn_id: "t".into(),
        name: "ask".into(),
        args: Map::new(),
    }
}

fn answer(run: &str, call: &str, verdict: Result<String, Option<String>>) -> Answer {
    Answer {
        run_id: run.into(),
        call_id: call.into(),
        verdict,
    }
}

#[test]
fn inputs_are_listed_once_and_unlisted_when_no_longer_waited_for() {
    let mut waits = Waits::default();
    let inputs = [input("a"), input("b")];
    let (listing, waiter) = waits.list_inputs("r", &inputs);
    assert_eq!(listing, Listing::Changed);
    assert_eq!(waiter, Some(Waiter::Inputs { run_id: "r".into() }));
    assert_eq!(waits.pending().as_array().unwrap().len(), 2);
    assert_eq!(waits.pending()[0]["kind"], "input");
    assert_eq!(waits.pending()[0]["callId"], "a");
    assert_eq!(waits.list_inputs("r", &inputs).0, Listing::Same);
    assert_eq!(waits.list_inputs("r", &inputs[1..]).0, Listing::Changed);
    assert_eq!(waits.pending().as_array().unwrap().len(), 1);
}

#[test]
fn an_answer_wakes_the_run_and_becomes_its_input() {
    let mut waits = Waits::default();
    let inputs = [input("a"), input("b")];
    waits.list_inputs("r", &inputs);
    assert_eq!(
        waits.deliver(answer("r", "zz", Ok("x".into()))),
        Err("answer: nothing waits for call `zz` of run `r`: it was answered already, or its run ended (a run the worker's restart cut ends with all it waited for)".into())
    );
    assert_eq!(
        waits.deliver(answer("r", "a", Ok("yes".into()))),
        Ok(Waiter::Inputs { run_id: "r".into() })
    );
    assert!(waits
        .deliver(answer("r", "a", Ok("again".into())))
        .is_err_and(|e| e.starts_with("answer: nothing waits for call `a`")));
    assert!(waits
        .deliver(answer("r", "b", Err(Some("no".into()))))
        .is_ok());
    // An answer is there: no wait.
    let (_, waiter) = waits.list_inputs("r", &inputs);
    assert_eq!(waiter, None);
    let taken = waits.take_inputs("r", &inputs);
    assert_eq!(
        taken,
        vec![
            Input::SubmitToolResult {
                call_id: "a".into(),
                value: "yes".into()
            },
            Input::RejectToolCall {
                call_id: "b".into(),
                error: Some("no".into())
            },
        ]
    );
    assert!(waits.take_inputs("r", &inputs).is_empty());
}

/// A run's call of `tool` of server `srv` asks, with the question a run's drive writes.
fn ask(waits: &mut Waits, call_id: &str, args: &Map<String, Value>) -> Waiter {
    let question = crate::core::confirm::mcp_tool("srv", "tool", args).ok();
    waits.ask_with("r", call_id, "srv", "tool", args, question)
}

#[test]
fn a_confirmation_allows_only_with_a_yes() {
    let mut waits = Waits::default();
    let args = json!({"q": 1}).as_object().unwrap().clone();
    let waiter = ask(&mut waits, "c", &args);
    assert_eq!(
        waiter,
        Waiter::Confirmation {
            run_id: "r".into(),
            call_id: "c".into()
        }
    );
    assert_eq!(waiter.run_id(), "r");
    assert_eq!(
        waits.pending(),
        json!([{"kind": "confirmation", "runId": "r", "callId": "c", "name": "tool", "server": "srv", "args": {"q": 1},
            "question": "WebMCP Host\n\nThe agent wants to run “tool” of the MCP server srv with:\n{\n  \"q\": 1\n}\n\nAllow it?"}])
    );
    assert_eq!(
        waits.deliver(answer("r", "c", Ok("true".into()))),
        Ok(waiter)
    );
    assert!(waits.confirmed("r", "c"));
    // No answer (time ran out): declined, and unlisted.
    ask(&mut waits, "d", &args);
    assert!(!waits.confirmed("r", "d"));
    assert_eq!(waits.pending(), json!([]));
    ask(&mut waits, "e", &args);
    assert!(waits.deliver(answer("r", "e", Err(None))).is_ok());
    assert!(!waits.confirmed("r", "e"));
    // Once its wait is over, an answer finds nothing.
    assert!(waits
        .deliver(answer("r", "e", Err(None)))
        .is_err_and(|e| e.starts_with("decline: nothing waits for call `e` of run `r`")));
}

#[test]
fn a_confirmation_that_cannot_be_shown_is_declined_whatever_the_answer() {
    let mut waits = Waits::default();
    let args: Map<String, Value> = (0..50).map(|i| (format!("k{i}"), json!(i))).collect();
    ask(&mut waits, "c", &args);
    assert_eq!(waits.pending()[0]["question"], Value::Null);
    assert!(waits.deliver(answer("r", "c", Ok("true".into()))).is_ok());
    assert!(!waits.confirmed("r", "c"));
}

#[test]
fn a_finished_run_leaves_nothing_behind() {
    let mut waits = Waits::default();
    waits.list_inputs("r", &[input("a")]);
    waits.list_inputs("s", &[input("a")]);
    assert!(waits.deliver(answer("r", "a", Ok("x".into()))).is_ok());
    waits.dismiss("r");
    assert_eq!(waits.pending().as_array().unwrap().len(), 1);
    // An answer to what the ended run waited for is an error, not a silent no-op.
    assert!(waits.deliver(answer("r", "a", Ok("y".into()))).is_err());
    assert!(waits.take_inputs("r", &[input("a")]).is_empty());
}
