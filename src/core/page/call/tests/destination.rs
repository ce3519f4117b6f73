//! What a call says of the document it loaded: a navigation's destination and its result,
//! or the frame a form loaded.

use super::*;
use crate::core::limits::MAX_PAGE_RESULT_BYTES;

/// The channel fails and the frame shows a new document: the call navigated; the destination
/// loads and its tools come with the answer.
#[test]
fn navigated_then_destination_with_tools() {
    let mut call = sent(false);
    call.handle(Input::ChannelFailed("message channel closed".into()));
    assert_eq!(
        call.step(),
        Step::Frame {
            tab_id: 7,
            frame_id: 0
        }
    );
    // The browser has not reported the new document yet: wait and look again.
    call.handle(frame("d1", "https://shop.test/"));
    assert_eq!(call.step(), Step::Wait { ms: SETTLE_POLL_MS });
    call.handle(Input::Performed);
    call.handle(frame("d2", "https://shop.test/done"));
    // The destination: no opened tab, the tab's document moved, but it is still loading.
    assert_eq!(call.step(), Step::Tabs);
    call.handle(Input::Tabs(vec![tab(7, None, false)]));
    assert_eq!(
        call.step(),
        Step::Frame {
            tab_id: 7,
            frame_id: 0
        }
    );
    call.handle(frame("d2", "https://shop.test/done"));
    assert_eq!(
        call.step(),
        Step::Wait {
            ms: DESTINATION_POLL_MS
        }
    );
    call.handle(Input::Performed);
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(frame("d2", "https://shop.test/done"));
    assert_eq!(
        call.step(),
        Step::Frame {
            tab_id: 7,
            frame_id: 0
        }
    );
    call.handle(frame("d2", "https://shop.test/done"));
    assert_eq!(call.step(), Step::ListTools { tab_id: 7 });
    call.handle(Input::Tools(tools(vec![tool("receipt", 0, false)])));
    // Then the destination's result, from the document that listed its tools.
    assert_eq!(
        call.step(),
        Step::ReadResult {
            tab_id: 7,
            target: Target {
                frame_id: 0,
                document_id: Some("d1".into())
            },
            message: json!({"webmcpHost": 1, "op": "readResult"})
        }
    );
    call.handle(reply(
        r#"{"ok":true,"url":"https://shop.test/done","title":"Done","jsonLd":[{"@type":"Order","orderId":"o-7"}],"skipped":0,"text":"Thanks"}"#,
    ));
    assert_eq!(
        done(&call),
        json!({"ok": true, "navigated": true, "url": "https://shop.test/done", "tools": ["receipt"],
               "result": r#"{"@type":"Order","orderId":"o-7"}"#})
    );
}

#[test]
fn a_tab_the_call_opened_is_the_destination() {
    let mut call = sent(false);
    call.handle(Input::Reply(Ok(
        r#"{"ok":true,"result":null,"url":"https://shop.test/"}"#.into(),
    )));
    call.handle(Input::Tabs(vec![tab(7, None, true), tab(9, Some(7), true)]));
    assert_eq!(
        call.step(),
        Step::Frame {
            tab_id: 9,
            frame_id: 0
        }
    );
    call.handle(frame("n1", "https://pay.test/"));
    assert_eq!(call.step(), Step::ListTools { tab_id: 9 });
    call.handle(Input::Tools(Err("no frames".into())));
    assert!(matches!(call.step(), Step::ReadResult { tab_id: 9, .. }));
    call.handle(reply(
        r#"{"ok":true,"url":"https://pay.test/","title":"Pay","jsonLd":[{"paid":true}],"skipped":0,"text":""}"#,
    ));
    assert_eq!(
        done(&call),
        json!({"ok": true, "navigated": true, "url": "https://pay.test/", "openedTab": 9,
               "result": r#"{"paid":true}"#, "crossOrigin": "https://pay.test"})
    );
}

#[test]
fn a_destination_that_never_loads_ends_the_wait() {
    let mut call = sent(false);
    call.handle(Input::Reply(Ok(
        r#"{"ok":true,"result":null,"url":"https://shop.test/next"}"#.into(),
    )));
    let mut waits = 0;
    loop {
        match call.step() {
            Step::Tabs => call.handle(Input::Tabs(vec![tab(7, None, false)])),
            Step::Frame { .. } => call.handle(frame("d1", "https://shop.test/")),
            Step::Frames { .. } => call.handle(Input::Frames(Vec::new())),
            Step::Wait { ms } => {
                assert_eq!(ms, DESTINATION_POLL_MS);
                waits += 1;
                call.handle(Input::Performed)
            }
            Step::Done(answer) => {
                assert_eq!(
                    answer.to_json(),
                    json!({"ok": true, "navigated": true, "url": "https://shop.test/",
                           "resultNote": "the destination gave no result within 5 s"})
                );
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(waits, (DESTINATION_MS / DESTINATION_POLL_MS) as usize);
}

/// A destination without JSON-LD, or whose result cannot be read, is said so; one on another
/// origin is named.
#[test]
fn a_destinations_result_or_why_there_is_none() {
    let to_destination = |url: &str| {
        let mut call = sent(false);
        call.handle(reply(&format!(
            r#"{{"ok":true,"result":null,"url":"{url}"}}"#
        )));
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        call.handle(frame("d2", url));
        call.handle(frame("d2", url));
        call.handle(Input::Tools(tools(vec![])));
        assert!(matches!(call.step(), Step::ReadResult { .. }));
        call
    };
    let mut call = to_destination("https://shop.test/thanks");
    call.handle(reply(
        r#"{"ok":true,"url":"https://shop.test/thanks","title":"Thanks","jsonLd":[],"skipped":1,"text":"Thanks"}"#,
    ));
    assert_eq!(
        done(&call)["resultNote"],
        json!(format!("the destination has no JSON-LD (script[type=\"application/ld+json\"]); 1 unreadable or over {MAX_PAGE_RESULT_BYTES} bytes"))
    );
    assert_eq!(done(&call).get("result"), None);
    assert_eq!(done(&call).get("crossOrigin"), None);

    let mut call = to_destination("https://pay.test/receipt");
    call.handle(reply(
        r#"{"ok":true,"url":"https://pay.test/receipt","title":"Paid","jsonLd":[{"a":1},{"b":2}],"skipped":0,"text":""}"#,
    ));
    assert_eq!(done(&call)["result"], json!(r#"[{"a":1},{"b":2}]"#));
    assert_eq!(done(&call)["crossOrigin"], json!("https://pay.test"));

    // The destination's script is not listening yet: look again (its time is the
    // destination's), then read.
    let mut call = to_destination("https://shop.test/done");
    call.handle(Input::ChannelFailed(GONE.into()));
    assert_eq!(
        call.step(),
        Step::Wait {
            ms: DESTINATION_POLL_MS
        }
    );
    call.handle(Input::Performed);
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(frame("d2", "https://shop.test/done"));
    call.handle(frame("d2", "https://shop.test/done"));
    call.handle(Input::Tools(tools(vec![])));
    call.handle(reply(
        r#"{"ok":false,"error":{"name":"Error","message":"boom"}}"#,
    ));
    assert_eq!(
        done(&call)["resultNote"],
        json!("the destination's result could not be read: Error: boom")
    );
}

/// A form that targets a frame: the top page stays, a frame holds a new document, and its
/// result is the call's (its JSON-LD, else its title and text), with the frame named.
#[test]
fn a_call_that_loads_a_frame_answers_with_the_frames_result() {
    let loaded = || {
        let mut call = sent(false);
        call.handle(reply(
            r#"{"ok":true,"result":null,"url":"https://shop.test/"}"#,
        ));
        call.handle(Input::Tabs(vec![tab(7, None, true)]));
        // The top frame holds the document it was listed with.
        call.handle(frame("d1", "https://shop.test/"));
        assert_eq!(call.step(), Step::Frames { tab_id: 7 });
        // Frame 3 holds a document it was not listed with (frame 0 was listed from d1).
        call.handle(Input::Frames(vec![
            Frame {
                frame_id: 0,
                url: "https://shop.test/".into(),
                document_id: Some("d1".into()),
            },
            Frame {
                frame_id: 3,
                url: "https://shop.test/order-done".into(),
                document_id: Some("f9".into()),
            },
        ]));
        assert_eq!(
            call.step(),
            Step::ReadResult {
                tab_id: 7,
                target: Target {
                    frame_id: 3,
                    document_id: Some("f9".into())
                },
                message: json!({"webmcpHost": 1, "op": "readResult"})
            }
        );
        call
    };
    let mut call = loaded();
    call.handle(reply(
        r#"{"ok":true,"url":"https://shop.test/order-done","title":"Order","jsonLd":[{"orderId":"o-1"}],"skipped":0,"text":"Done"}"#,
    ));
    assert_eq!(
        done(&call),
        json!({"ok": true, "result": r#"{"orderId":"o-1"}"#,
               "frame": {"frameId": 3, "url": "https://shop.test/order-done"}})
    );
    let mut call = loaded();
    call.handle(reply(
        r#"{"ok":true,"url":"https://shop.test/order-done","title":"Order","jsonLd":[],"skipped":0,"text":"Your order is placed"}"#,
    ));
    let result: Value = serde_json::from_str(done(&call)["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        result,
        json!({"title": "Order", "text": "Your order is placed"})
    );
    // No frame changed yet: wait, as for a navigation.
    let mut call = sent(false);
    call.handle(reply(
        r#"{"ok":true,"result":null,"url":"https://shop.test/"}"#,
    ));
    call.handle(Input::Tabs(vec![tab(7, None, true)]));
    call.handle(frame("d1", "https://shop.test/"));
    call.handle(Input::Frames(vec![Frame {
        frame_id: 0,
        url: "https://shop.test/".into(),
        document_id: Some("d1".into()),
    }]));
    assert_eq!(
        call.step(),
        Step::Wait {
            ms: DESTINATION_POLL_MS
        }
    );
}
