//! The page call machine against scripted browser answers.

use serde_json::{json, Map, Value};

use super::*;

mod destination;

fn tool(name: &str, frame_id: i64, consequential: bool) -> PageTool {
    PageTool {
        frame_id,
        ..PageTool::sample(name, consequential)
    }
}

/// The tools, each listed from document `d1` of its frame.
fn tools(list: Vec<PageTool>) -> Result<std::rc::Rc<TabTools>, String> {
    Ok(std::rc::Rc::new(TabTools {
        documents: list.iter().map(|t| (t.frame_id, "d1".into())).collect(),
        tools: list,
        problems: Vec::new(),
        ..TabTools::default()
    }))
}

/// A page call for `request`, through the gate with no layers.
fn new_call(request: CallRequest, id: String) -> PageCall {
    let asker = crate::core::gate::Asker::CallTool;
    let pass = crate::core::gate::screen(&[], asker, &[&request.name], 1).expect("no layers");
    PageCall::new(pass.permit(request), id)
}

fn request(name: &str) -> CallRequest {
    CallRequest {
        tab_id: 7,
        name: name.into(),
        args: Map::new(),
        frame_id: None,
        timeout_ms: 30_000,
        call: None,
        expect: None,
    }
}

fn frame(document: &str, url: &str) -> Input {
    Input::Frame(Some(FrameState {
        url: url.into(),
        document_id: Some(document.into()),
    }))
}

fn tab(id: i64, opener: Option<i64>, complete: bool) -> Tab {
    Tab {
        id,
        opener,
        complete,
    }
}

/// Resolves `buy` (top frame) and sends it: the machine then waits for the reply.
fn sent(consequential: bool) -> PageCall {
    let mut call = new_call(request("buy"), "c1".into());
    assert_eq!(call.step(), Step::KeptTools { tab_id: 7 });
    call.handle(Input::Tools(tools(vec![tool("buy", 0, consequential)])));
    // Sent at once (to the listed document), the tabs listed as it leaves.
    assert!(matches!(
        call.step(),
        Step::Send {
            list_tabs: true,
            ..
        }
    ));
    call.handle(Input::Tabs(vec![tab(7, None, true), tab(3, None, true)]));
    assert!(matches!(
        call.step(),
        Step::Send {
            list_tabs: false,
            ..
        }
    ));
    call
}

/// A call decided on the tab's kept listing of `list` (each tool version 1).
fn kept(name: &str, list: Vec<PageTool>) -> PageCall {
    let mut listing = std::rc::Rc::unwrap_or_clone(tools(list).unwrap());
    listing.versions = listing
        .tools
        .iter()
        .map(|t| ((t.frame_id, t.name.clone()), 1))
        .collect();
    let mut call = new_call(request(name), "c1".into());
    assert_eq!(call.step(), Step::KeptTools { tab_id: 7 });
    call.handle(Input::Kept(std::rc::Rc::new(listing)));
    call
}

fn reply(text: &str) -> Input {
    Input::Reply(Ok(text.into()))
}

const CHANGED: &str =
    r#"{"ok":false,"error":{"name":"ToolChangedError","message":"tool changed: not run"}}"#;
const NOT_FOUND: &str =
    r#"{"ok":false,"error":{"name":"NotFoundError","message":"no tool named \"buy\""}}"#;
const GONE: &str = "Could not establish connection. Receiving end does not exist.";

fn done(call: &PageCall) -> Value {
    match call.step() {
        Step::Done(answer) => answer.to_json(),
        other => panic!("not done: {other:?}"),
    }
}

#[test]
fn a_reply_is_the_answer_and_a_consequential_tool_asks_first() {
    let mut call = sent(true);
    let Step::Send {
        target,
        message,
        timeout_ms,
        ..
    } = call.step()
    else {
        panic!("a send")
    };
    assert_eq!(
        (target.options(), timeout_ms),
        (json!({"frameId": 0, "documentId": "d1"}), 30_000),
        "to the document the tool was listed from"
    );
    assert_eq!(message["call"], "c1");
    assert!(message["confirm"]
        .as_str()
        .is_some_and(|t| t.contains("“buy” on https://shop.test")));
    call.handle(Input::Reply(Ok(r#"{"ok":true,"result":"bought"}"#.into())));
    assert_eq!(done(&call), json!({"ok": true, "result": "bought"}));
}

#[test]
fn an_unknown_tool_or_a_changed_one_is_not_sent() {
    let mut call = new_call(request("sell"), "c1".into());
    call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "no page tool named `sell`; the tab offers: buy"})
    );
    let mut changed = request("buy");
    changed.expect = Some(Listed {
        tool: tool("buy", 0, true),
        document_id: Some("d1".into()),
    });
    let mut call = new_call(changed, "c1".into());
    call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
    assert!(done(&call)["error"]
        .as_str()
        .is_some_and(|e| e.contains("changed the definition")));
}

/// A result that breaks the tool's own output schema is reported with the answer, each error
/// at its pointer; one that matches, none; text that is not JSON cannot match.
#[test]
fn a_result_is_checked_against_the_tools_output_schema() {
    let schema = json!({"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]});
    assert_eq!(output_errors(&schema, r#"{"orderId": "o-1"}"#), None);
    let errors = output_errors(&schema, r#"{"orderId": 7}"#).expect("an error");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["pointer"], "/orderId");
    assert!(
        errors[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("string")),
        "{errors:?}"
    );
    let text = output_errors(&schema, "order placed").expect("an error");
    assert_eq!(text[0]["pointer"], "");
    assert!(text[0]["message"]
        .as_str()
        .is_some_and(|m| m.contains("not JSON")));
    // Through the machine: the answer carries `outputErrors` beside the result.
    let mut typed = tool("buy", 0, false);
    typed.output_schema = Some(schema);
    let mut call = new_call(request("buy"), "c1".into());
    call.handle(Input::Tools(tools(vec![typed])));
    assert!(matches!(call.step(), Step::Send { .. }));
    call.handle(Input::Reply(Ok(
        r#"{"ok":true,"result":"{\"orderId\": 7}"}"#.into(),
    )));
    let answer = done(&call);
    assert_eq!(answer["result"], "{\"orderId\": 7}");
    assert_eq!(answer["outputErrors"][0]["pointer"], "/orderId");
}

/// A call decided on a listing of document `d0` goes there or nowhere: a listing that shows
/// the frame holding `d1` now (a look-alike, defined identically) does not get it, even after
/// the tab is listed again; one that knows no document sends to `d0`.
#[test]
fn a_call_goes_to_the_document_it_was_decided_on() {
    let decided = || {
        let mut asked = request("buy");
        asked.expect = Some(Listed {
            tool: tool("buy", 0, false),
            document_id: Some("d0".into()),
        });
        asked
    };
    let mut call = new_call(decided(), "c1".into());
    call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "the frame that offered `buy` holds another document since this run listed its tools; the call was not sent"})
    );
    let mut call = new_call(decided(), "c1".into());
    call.handle(Input::Tools(Ok(std::rc::Rc::new(TabTools {
        tools: vec![tool("buy", 0, false)],
        ..TabTools::default()
    }))));
    match call.step() {
        Step::Send { target, .. } => assert_eq!(target.document_id.as_deref(), Some("d0")),
        step => panic!("expected the call sent to d0, got {step:?}"),
    }
}

#[test]
fn a_removed_frame_or_a_closed_tab_is_said_so() {
    let mut call = sent(false);
    call.handle(Input::ChannelFailed("gone".into()));
    call.handle(Input::Frame(None));
    assert_eq!(call.step(), Step::Tabs);
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "the frame that offered `buy` was removed while it ran"})
    );

    let mut call = sent(false);
    call.handle(Input::ChannelFailed("gone".into()));
    call.handle(Input::Frame(None));
    call.handle(Input::Tabs(vec![tab(3, None, true)]));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "the tab was closed while `buy` ran"})
    );
}

#[test]
fn a_frame_that_holds_another_document_than_the_listed_one_does_not_get_the_call() {
    for (now, error) in [
        (
            frame("d2", "https://pay.test/"),
            "the frame that offered `buy` holds another document (https://pay.test/) since its tools were listed; the call was not sent",
        ),
        (
            Input::Frame(None),
            "the frame that offered `buy` is gone since its tools were listed; the call was not sent",
        ),
    ] {
        let target = Target {
            frame_id: 0,
            document_id: Some("d1".into()),
        };
        let now = match now {
            Input::Frame(now) => now,
            _ => unreachable!(),
        };
        assert_eq!(still_listed("buy", &target, now.as_ref()), Err(error.into()));
    }
    // The document changed between that look and the send: Chrome finds no listener in the
    // listed document, and nothing ran.
    let mut call = sent(true);
    call.handle(Input::ChannelFailed(
        "Could not establish connection. Receiving end does not exist.".into(),
    ));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "the frame that offered `buy` holds another document since its tools were listed; the call was not sent (Could not establish connection. Receiving end does not exist.)"})
    );
    // A listing without document ids (an older browser) sends to the frame as it is.
    let mut call = new_call(request("buy"), "c1".into());
    call.handle(Input::Tools(Ok(std::rc::Rc::new(TabTools {
        tools: vec![tool("buy", 0, false)],
        ..TabTools::default()
    }))));
    call.handle(frame("d2", "https://pay.test/"));
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    assert!(
        matches!(call.step(), Step::Send { target, .. } if target == Target::from(0)),
        "{:?}",
        call.step()
    );
}

#[test]
fn a_timeout_cancels_the_call_in_its_frame() {
    let mut call = sent(false);
    call.handle(Input::Timeout);
    assert_eq!(
        call.step(),
        Step::Cancel {
            tab_id: 7,
            target: Target {
                frame_id: 0,
                document_id: Some("d1".into())
            },
            message: json!({"webmcpHost": 1, "op": "cancel", "call": "c1"})
        }
    );
    call.handle(Input::Performed);
    // Not a channel failure: one look at the frame, no waiting.
    call.handle(frame("d1", "https://shop.test/"));
    assert_eq!(
        done(&call),
        json!({"ok": false, "error": "`buy` did not finish within 30000 ms; it was cancelled in the page"})
    );
}

#[test]
fn a_cancel_reply_says_when_a_declarative_form_waited_for_a_submit() {
    let timed_out = |reply: Input| {
        let mut call = sent(false);
        call.handle(Input::Timeout);
        assert!(matches!(call.step(), Step::Cancel { .. }));
        call.handle(reply);
        call.handle(frame("d1", "https://shop.test/"));
        done(&call)["error"].as_str().unwrap().to_owned()
    };
    let plain = "`buy` did not finish within 30000 ms; it was cancelled in the page";
    let waited = timed_out(Input::Reply(Ok(
        r#"{"ok":true,"cancelled":true,"awaitingSubmit":true}"#.into(),
    )));
    assert_eq!(
        waited,
        format!("{plain}; its form was filled in and waited for someone to submit it in the page (a declarative tool without `toolautosubmit`)")
    );
    // Anything else ends the call with the plain error: a reply without it, a frame that
    // gave none, a reply that is not the bridge's.
    for reply in [
        Input::Reply(Ok(
            r#"{"ok":true,"cancelled":true,"awaitingSubmit":false}"#.into()
        )),
        Input::Reply(Ok(r#"{"ok":true,"cancelled":false}"#.into())),
        Input::Reply(Ok("not json".into())),
        Input::Reply(Ok(format!(
            r#"{{"awaitingSubmit":true,"pad":"{}"}}"#,
            "x".repeat(2000)
        ))),
        Input::Reply(Err("unreadable".into())),
        Input::ChannelFailed("closed".into()),
        Input::Timeout,
        Input::Performed,
    ] {
        assert_eq!(timed_out(reply.clone()), plain, "{reply:?}");
    }
}

#[test]
fn settling_gives_up_after_its_time() {
    let mut call = sent(false);
    call.handle(Input::ChannelFailed("closed".into()));
    let mut waits = 0;
    while call.step() != Step::Done(CallAnswer::failed("closed")) {
        match call.step() {
            Step::Frame { .. } => call.handle(frame("d1", "https://shop.test/")),
            Step::Wait { .. } => {
                waits += 1;
                call.handle(Input::Performed)
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(waits, (SETTLE_MS / SETTLE_POLL_MS) as usize);
}

#[test]
fn an_input_out_of_turn_ends_the_call() {
    let mut call = new_call(request("buy"), "c1".into());
    call.handle(Input::Performed);
    assert!(done(&call)["error"]
        .as_str()
        .is_some_and(|e| e.contains("a bug in the host")));
}

#[test]
fn call_responses() {
    assert_eq!(
        CallAnswer::of(&Ok(CallOutcome::Text {
            text: "7".into(),
            text_input: false
        }))
        .to_json(),
        json!({"ok": true, "result": "7"})
    );
    assert_eq!(
        CallAnswer::of(&Ok(CallOutcome::Navigated { url: None })).to_json(),
        json!({"ok": true, "navigated": true})
    );
    assert_eq!(
        CallAnswer::of(&Ok(CallOutcome::Failed {
            name: "UnknownError".into(),
            message: "x".into()
        }))
        .to_json(),
        json!({"ok": false, "error": "UnknownError: x"})
    );
    assert_eq!(
        CallAnswer::of(&Err("timed out".into())).to_json(),
        json!({"ok": false, "error": "timed out"})
    );
}

#[test]
fn interrupted_calls() {
    let at = |url: &str, doc: &str| FrameState {
        url: url.into(),
        document_id: Some(doc.into()),
    };
    let before = at("http://a.test/1", "D1");
    assert_eq!(
        interrupted(
            "go",
            "port closed".into(),
            Some(&before),
            true,
            Some(&at("http://a.test/2", "D2"))
        ),
        Ok(CallOutcome::Navigated {
            url: Some("http://a.test/2".into())
        })
    );
    assert_eq!(
        interrupted(
            "go",
            "port closed".into(),
            Some(&before),
            true,
            Some(&before)
        ),
        Err("port closed".into()),
        "the same document: the failure stands"
    );
    assert_eq!(
        interrupted("go", "x".into(), Some(&before), false, None),
        Err("the tab was closed while `go` ran".into())
    );
    assert_eq!(
        interrupted("go", "x".into(), Some(&before), true, None),
        Err("the frame that offered `go` was removed while it ran".into())
    );
    assert_eq!(
        interrupted("go", "x".into(), None, true, Some(&before)),
        Err("x".into()),
        "nothing known before: no guess"
    );
}

#[test]
fn a_page_tool_that_changed_is_not_called() {
    let raw = |origin: &str, description: &str| {
        format!(
            r#"{{"ok":true,"supported":true,"origin":"{origin}","tools":[{{"name":"buy","description":"{description}"}}]}}"#
        )
    };
    let tool = |origin: &str, description: &str| {
        crate::core::page::bridge::parse_listing(
            &raw(origin, description),
            0,
            &crate::core::limits::Limits::DEFAULT,
        )
        .unwrap()
        .tools
        .tools
        .remove(0)
    };
    let given = tool("https://shop.test", "Buys");
    assert_eq!(
        still_same_page_tool(&given, &tool("https://shop.test", "Buys")),
        Ok(())
    );
    assert_eq!(
        still_same_page_tool(&given, &tool("https://evil.test", "Buys")).unwrap_err(),
        "`buy` now belongs to https://evil.test (the run began with it on https://shop.test); the call was not sent"
    );
    assert!(
        still_same_page_tool(&given, &tool("https://shop.test", "Buys all"))
            .unwrap_err()
            .contains("changed the definition of `buy`")
    );
}

#[test]
fn a_consequential_call_whose_arguments_cannot_be_shown_is_not_made() {
    let many: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
    let mut call = new_call(
        CallRequest {
            args: many.clone(),
            ..request("buy")
        },
        "c1".into(),
    );
    call.handle(Input::Tools(tools(vec![tool("buy", 0, true)])));
    let answer = done(&call);
    assert_eq!(answer["ok"], false);
    assert!(answer["error"]
        .as_str()
        .is_some_and(|e| e.starts_with("not run: its arguments cannot all be shown")));
    // A tool that needs no confirmation takes them.
    let mut call = new_call(
        CallRequest {
            args: many,
            ..request("buy")
        },
        "c1".into(),
    );
    call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
    assert!(matches!(call.step(), Step::Send { .. }));
}

#[test]
fn a_call_names_the_version_of_the_tool_it_was_decided_on() {
    let call = kept("buy", vec![tool("buy", 0, false)]);
    let Step::Send { message, .. } = call.step() else {
        panic!("a send")
    };
    assert_eq!(message["version"], 1);
    assert_eq!(message.get("confirm"), None);
}

/// The frame found the tool changed since its listing (read-only then, acting now): nothing
/// ran; the tab is listed again and the call decided again, now with a confirmation.
#[test]
fn a_tool_changed_since_its_listing_is_listed_again_and_decided_again() {
    for first in [true, false] {
        let mut call = if first {
            kept("buy", vec![tool("buy", 0, false)])
        } else {
            let mut call = new_call(request("buy"), "c1".into());
            call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
            call
        };
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        call.handle(reply(CHANGED));
        assert_eq!(call.step(), Step::ListTools { tab_id: 7 }, "kept: {first}");
        call.handle(Input::Tools(tools(vec![tool("buy", 0, true)])));
        let Step::Send { message, .. } = call.step() else {
            panic!("a send")
        };
        assert!(message["confirm"]
            .as_str()
            .is_some_and(|t| t.contains("buy")));
        // Changed again: once is enough, the call ends.
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        call.handle(reply(CHANGED));
        assert_eq!(
            done(&call),
            json!({"ok": false, "error": "ToolChangedError: tool changed: not run"})
        );
    }
}

/// A kept listing that no longer holds (the name unknown, the document gone, the frame without
/// the tool) lists the tab again once; a fresh one is the answer.
#[test]
fn a_kept_listing_that_does_not_hold_is_listed_again_once() {
    let mut call = kept("sell", vec![tool("buy", 0, false)]);
    assert_eq!(call.step(), Step::ListTools { tab_id: 7 });
    call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
    assert!(done(&call)["error"]
        .as_str()
        .is_some_and(|e| e.contains("no page tool named `sell`")));

    for failure in [Input::ChannelFailed(GONE.into()), reply(NOT_FOUND)] {
        let mut call = kept("buy", vec![tool("buy", 0, false)]);
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        call.handle(failure.clone());
        assert_eq!(call.step(), Step::ListTools { tab_id: 7 }, "{failure:?}");
        call.handle(Input::Tools(tools(vec![tool("buy", 0, false)])));
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        call.handle(failure.clone());
        assert_eq!(done(&call)["ok"], false, "{failure:?}");
    }

    // A fresh listing is not listed again.
    let mut call = sent(false);
    call.handle(reply(NOT_FOUND));
    assert!(matches!(call.step(), Step::Done(_)));
}

/// `buy` (consequential) on https://shop.test under the site policies `sites`, as listed.
fn under_policies(sites: Value) -> PageTool {
    let mut listing = TabTools {
        tools: vec![tool("buy", 0, true)],
        ..TabTools::default()
    };
    let sites: Vec<crate::core::page::site::SitePolicy> = serde_json::from_value(sites).unwrap();
    crate::core::page::site::validate(&sites).unwrap();
    crate::core::page::site::apply(&sites, &mut listing);
    listing.tools.remove(0)
}

/// Sends `buy` decided on `listed`; the message sent and the answer to `bought`.
fn send_and_answer(listed: PageTool) -> (Value, Value) {
    let mut call = new_call(request("buy"), "c1".into());
    call.handle(Input::Tools(tools(vec![listed])));
    let Step::Send { message, .. } = call.step() else {
        panic!("a send")
    };
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(reply(r#"{"ok":true,"result":"bought"}"#));
    (message, done(&call))
}

#[test]
fn allow_acting_for_the_site_calls_without_the_question_and_says_so() {
    let allowed = under_policies(json!([{"origin": "https://shop.test", "allowActing": true}]));
    let (message, answer) = send_and_answer(allowed.clone());
    assert_eq!(message.get("confirm"), None, "no question in the page");
    assert_eq!(
        answer,
        json!({"ok": true, "result": "bought", "confirmation": "allowed by site policy https://shop.test"})
    );
    assert_eq!(
        allowed_by_site(&allowed).as_deref(),
        Some("allowed by site policy https://shop.test")
    );
    // A tool that does not act needs no allowance, and says none.
    let mut read = allowed.clone();
    read.annotations.consequential_hint = false;
    assert_eq!(
        send_and_answer(read).1,
        json!({"ok": true, "result": "bought"})
    );
}

#[test]
fn always_confirm_wins_over_allow_acting_and_other_sites_are_still_asked() {
    for sites in [
        json!([{"origin": "https://shop.test", "allowActing": true, "alwaysConfirm": true}]),
        json!([{"origin": "https://shop.test", "allowActing": true}, {"origin": "*", "alwaysConfirm": true}]),
        json!([{"origin": "https://shop.test:443", "allowActing": true}]),
        json!([{"origin": "http://shop.test", "allowActing": true}]),
        json!([{"origin": "https://other.test", "allowActing": true}]),
        json!([]),
    ] {
        let (message, answer) = send_and_answer(under_policies(sites.clone()));
        assert!(
            message["confirm"]
                .as_str()
                .is_some_and(|t| t.contains("“buy” on https://shop.test")),
            "asked under {sites}"
        );
        assert_eq!(answer, json!({"ok": true, "result": "bought"}), "{sites}");
    }
}

#[test]
fn a_call_not_sent_or_refused_by_its_frame_is_not_said_allowed() {
    let allowed = under_policies(json!([{"origin": "https://shop.test", "allowActing": true}]));
    // The frame found the tool changed: nothing ran; relisted without the policy, it is asked.
    let mut call = new_call(request("buy"), "c1".into());
    call.handle(Input::Tools(tools(vec![allowed.clone()])));
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(reply(CHANGED));
    call.handle(Input::Tools(tools(vec![tool("buy", 0, true)])));
    let Step::Send { message, .. } = call.step() else {
        panic!("a send")
    };
    assert!(message["confirm"].is_string());
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(reply(r#"{"ok":true,"result":"bought"}"#));
    assert_eq!(done(&call), json!({"ok": true, "result": "bought"}));
    // A policy changed during a run is not a changed definition.
    assert_eq!(
        still_same_page_tool(&tool("buy", 0, true), &allowed),
        Ok(())
    );
}
