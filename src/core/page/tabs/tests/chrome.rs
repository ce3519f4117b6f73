//! What Chrome answers about frames and tabs, and a frame's reply, read without a browser.

use serde_json::json;

use super::super::*;
use crate::core::page::call::{FrameState, Input, Tab};

#[test]
fn frames_are_read_from_get_all_frames() {
    let listed = json!([{"frameId": 0, "url": "https://a.test/", "documentId": "D0"}, {"frameId": 4}, {"url": "x"}]);
    assert_eq!(
        frames(7, &listed),
        Ok(vec![
            Frame {
                frame_id: 0,
                url: "https://a.test/".into(),
                document_id: Some("D0".into())
            },
            Frame {
                frame_id: 4,
                url: String::new(),
                document_id: None
            },
        ])
    );
    let gone = frames(7, &Value::Null).expect_err("no tab");
    assert_eq!(gone, "tab 7: no such tab, or its frames are not known yet");
}

#[test]
fn a_frame_that_reports_another_origin_than_chromes_gives_no_tools() {
    let at = |url: &str| Frame {
        frame_id: 3,
        url: url.into(),
        document_id: None,
    };
    let text =
        r#"{"ok":true,"supported":true,"origin":"https://bank.example","tools":[{"name":"t"}]}"#;
    let forged = listing(
        at("http://127.0.0.1:8080/x"),
        Reply::Answered(Ok(text.into())),
    );
    let failure = forged.answer.clone().expect_err("forged");
    assert_eq!(
        failure,
        FrameFailure::Origin {
            reported: "https://bank.example".into(),
            chrome: "http://127.0.0.1:8080".into()
        }
    );
    let merged = TabTools::from_frames(vec![forged]);
    assert!(merged.tools.is_empty());
    assert!(
        merged.problems[0].message.contains(
            "reports the origin https://bank.example, but Chrome lists it at http://127.0.0.1:8080"
        ),
        "{:?}",
        merged.problems
    );
    // Chrome's URL agrees (its origin written in another case or with a default port): kept.
    let agreed = listing(
        at("HTTPS://Bank.Example:443/p"),
        Reply::Answered(Ok(text.into())),
    );
    assert_eq!(
        agreed.answer.expect("agreed").tools.tools[0].origin,
        "https://bank.example"
    );
    // about:blank inherits an origin Chrome does not list: the content script's stands.
    let blank = listing(at("about:blank"), Reply::Answered(Ok(text.into())));
    assert!(blank.answer.is_ok());
}

#[test]
fn a_frame_reply_becomes_its_listing_or_why_not() {
    let frame = || Frame {
        frame_id: 2,
        url: "https://f.test/".into(),
        document_id: Some("D2".into()),
    };
    let text = r#"{"ok":true,"supported":true,"origin":"https://f.test","documentId":"forged",
                   "tools":[{"name":"t"}]}"#;
    let listed = listing(frame(), Reply::Answered(Ok(text.into())));
    assert_eq!(
        (listed.frame_id, listed.url.as_str()),
        (2, "https://f.test/")
    );
    let document = listed.answer.as_ref().map(|l| l.document_id.clone());
    assert_eq!(document, Ok(Some("D2".into())), "Chrome's, not the reply's");
    // The tab's tools remember it: a call of `t` goes to frame 2's document D2 only.
    let tools = TabTools::from_frames(vec![listed]);
    assert_eq!(
        tools.target(&tools.tools[0]).options(),
        json!({"frameId": 2, "documentId": "D2"})
    );
    let broken = listing(frame(), Reply::Answered(Ok("[]".into())));
    assert!(matches!(broken.answer, Err(FrameFailure::Bridge(_))));
    let late = listing(frame(), Reply::TimedOut);
    assert_eq!(
        late.answer.expect_err("late"),
        FrameFailure::Unreachable(format!("no answer within {FRAME_LIST_MS} ms"))
    );
    for reply in [
        Reply::Failed("gone".into()),
        Reply::Answered(Err("gone".into())),
    ] {
        assert_eq!(
            listing(frame(), reply).answer.expect_err("unreachable"),
            FrameFailure::Unreachable("gone".into())
        );
    }
}

#[test]
fn a_reply_is_a_page_call_input() {
    assert_eq!(
        Input::from(Reply::Answered(Ok("{}".into()))),
        Input::Reply(Ok("{}".into()))
    );
    assert_eq!(Input::from(Reply::TimedOut), Input::Timeout);
    assert_eq!(
        Input::from(Reply::Failed("x".into())),
        Input::ChannelFailed("x".into())
    );
}

#[test]
fn tabs_and_frame_states_are_read_from_chrome() {
    let listed = json!([
        {"id": 3, "openerTabId": 1, "status": "complete"},
        {"id": 4, "status": "loading"},
        {"status": "complete"},
    ]);
    assert_eq!(
        Tab::list(&listed),
        vec![
            Tab {
                id: 3,
                opener: Some(1),
                complete: true
            },
            Tab {
                id: 4,
                opener: None,
                complete: false
            },
        ]
    );
    assert!(Tab::list(&json!({})).is_empty());
    assert_eq!(
        FrameState::of(&json!({"url": "https://a.test/", "documentId": "d1"})),
        Some(FrameState {
            url: "https://a.test/".into(),
            document_id: Some("d1".into())
        })
    );
    assert_eq!(FrameState::of(&Value::Null), None);
}
