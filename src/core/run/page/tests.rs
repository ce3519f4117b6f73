//! Page tools as run tools, and page answers as outcomes.

use serde_json::json;

use super::*;
use crate::core::page::tabs::FrameAnswer;

#[test]
fn page_tools_become_run_tools() {
    let raw = r#"{"ok":true,"supported":true,"origin":"http://a.test","tools":[
        {"name":"read","description":"Reads","annotations":{"untrustedContentHint":true}},{"name":"buy","title":"Buy it","description":"Buys"}]}"#;
    let frame = |id: i64| FrameAnswer {
        frame_id: id,
        url: "http://a.test/".into(),
        answer: Ok(crate::core::page::bridge::parse_listing(
            raw,
            id,
            &crate::core::limits::Limits::DEFAULT,
        )
        .unwrap()),
    };
    let tools = TabTools::from_frames(vec![frame(0), frame(4)]);
    let (run_tools, bindings, errors) = page_run_tools(&tools);
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<(&str, &str, i64)> = bindings
        .iter()
        .map(|b| (b.run_name.as_str(), b.tool.name.as_str(), b.tool.frame_id))
        .collect();
    assert_eq!(
        names,
        [
            ("read", "read", 0),
            ("buy", "buy", 0),
            ("read__frame4", "read", 4),
            ("buy__frame4", "buy", 4)
        ],
        "equal names in two frames stay distinct"
    );
    assert_eq!(
        run_tools[0].data_source.as_deref(),
        Some("page http://a.test")
    );
    assert_eq!(
        run_tools[1].spec.description,
        "(In the top frame, http://a.test.) Buy it. Buys"
    );
    assert_eq!(
        run_tools[3].spec.description,
        "(In frame 4, http://a.test.) Buy it. Buys"
    );
    assert_eq!(run_tools[3].spec.name, "buy__frame4");

    let single = TabTools::from_frames(vec![frame(0)]);
    let (run_tools, _, _) = page_run_tools(&single);
    assert_eq!(
        run_tools[1].spec.description, "Buy it. Buys",
        "no frame note without a clash"
    );
}

/// What the person's middleware layers hand back, as the run takes it.
fn layered(response: &serde_json::Value) -> crate::core::run::ToolOutcome {
    crate::core::run::middleware::layered_answer(response).outcome
}

#[test]
fn call_responses_become_outcomes() {
    use crate::core::run::ToolOutcome;
    assert_eq!(
        layered(&json!({"ok": true, "result": "5"})),
        ToolOutcome::Ok("5".into())
    );
    assert_eq!(
        layered(&json!({"ok": true, "navigated": true, "url": "http://a.test/2"})),
        ToolOutcome::Ok("{\"navigated\":true,\"url\":\"http://a.test/2\"}".into())
    );
    assert_eq!(
        layered(
            &json!({"ok": true, "navigated": true, "url": "http://a.test/2", "tools": ["pay"], "extra": 1})
        ),
        ToolOutcome::Ok(
            "{\"navigated\":true,\"url\":\"http://a.test/2\",\"tools\":[\"pay\"]}".into()
        )
    );
    // The destination's JSON-LD goes to the model as a value, with where it came from.
    assert_eq!(
        layered(&json!({"ok": true, "navigated": true, "url": "http://b.test/r",
            "crossOrigin": "http://b.test", "result": "{\"orderId\":\"o-1\"}"})),
        ToolOutcome::Ok(
            "{\"navigated\":true,\"url\":\"http://b.test/r\",\"crossOrigin\":\"http://b.test\",\"result\":{\"orderId\":\"o-1\"}}"
                .into()
        )
    );
    assert_eq!(
        layered(&json!({"ok": true, "navigated": true, "url": "http://a.test/2",
            "resultNote": "the destination has no JSON-LD"})),
        ToolOutcome::Ok(
            "{\"navigated\":true,\"url\":\"http://a.test/2\",\"resultNote\":\"the destination has no JSON-LD\"}"
                .into()
        )
    );
    assert_eq!(
        layered(&json!({"ok": false, "error": "boom"})),
        ToolOutcome::Error("boom".into())
    );
    assert_eq!(
        layered(&json!({"ok": true, "result": "shown", "endTurn": {"view": "v"}})),
        ToolOutcome::EndTurn {
            result: "shown".into(),
            outcome: json!({"view": "v"})
        }
    );
}

#[test]
fn an_answers_media_parts_come_with_its_text() {
    use crate::core::agui::{ContentPart, PartSource};
    use crate::core::run::ToolOutcome;
    let image = json!({"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}});
    assert_eq!(
        layered(&json!({"ok": true, "result": "a chart", "parts": [image,
            {"type": "text", "text": "not the model's"}, {"type": "image"}, "junk"]})),
        ToolOutcome::Media {
            text: "a chart".into(),
            parts: vec![ContentPart::Image {
                source: PartSource::Data {
                    value: "AAAA".into(),
                    mime_type: "image/png".into()
                }
            }]
        },
        "text parts and what does not read as a part are dropped"
    );
    for parts in [
        json!([]),
        json!("AAAA"),
        json!([{"type": "text", "text": "x"}]),
    ] {
        assert_eq!(
            layered(&json!({"ok": true, "result": "plain", "parts": parts})),
            ToolOutcome::Ok("plain".into())
        );
    }
}

/// A page call's answer reaches the run as a value, and says to it what the same answer
/// written for the middleware layers says once read back.
#[test]
fn a_page_calls_typed_answer_and_its_written_form_give_the_run_the_same() {
    use crate::core::page::call::{CallAnswer, Destination, Ended};
    let answers = [
        CallAnswer::text("5"),
        CallAnswer::failed("TypeError: boom"),
        CallAnswer {
            confirmation: Some("allowed by site policy https://shop.test".into()),
            ..CallAnswer::from(Ended::Result {
                text: "{\"orderId\": 7}".into(),
                text_input: true,
                output_errors: Some(vec![json!({"pointer": "/orderId", "message": "no"})]),
            })
        },
        CallAnswer::from(Ended::Navigated(Destination {
            url: Some("http://b.test/r".into()),
            tools: Some(vec!["pay".into()]),
            opened_tab: Some(9),
            result: Some("{\"orderId\":\"o-1\"}".into()),
            result_note: None,
            cross_origin: Some("http://b.test".into()),
        })),
        CallAnswer::from(Ended::Navigated(Destination {
            result_note: Some("the destination has no JSON-LD".into()),
            ..Destination::default()
        })),
        CallAnswer::from(Ended::InFrame {
            frame_id: 3,
            url: "http://a.test/f".into(),
            text: "{\"title\":\"Done\"}".into(),
            cross_origin: None,
        }),
    ];
    for answer in answers {
        let typed = page_answer(&answer);
        let written = crate::core::run::middleware::layered_answer(&answer.to_json());
        assert_eq!(typed, written, "{answer:?}");
    }
    let navigated = page_answer(&CallAnswer::from(Ended::Navigated(Destination {
        url: Some("http://b.test/r".into()),
        result: Some("{\"orderId\":\"o-1\"}".into()),
        ..Destination::default()
    })));
    assert_eq!(
        navigated.outcome,
        crate::core::run::ToolOutcome::Ok(
            "{\"navigated\":true,\"url\":\"http://b.test/r\",\"result\":{\"orderId\":\"o-1\"}}"
                .into()
        ),
        "the destination's JSON-LD as a value"
    );
}
