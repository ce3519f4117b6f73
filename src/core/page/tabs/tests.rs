//! Merging frames and resolving names.

use super::*;
use crate::core::limits::Limits;
use crate::core::page::bridge::parse_listing;

fn answer(frame_id: i64, tools: &str) -> FrameAnswer {
    let raw = format!(
        r#"{{"ok":true,"supported":true,"origin":"http://f{frame_id}.test","tools":{tools}}}"#
    );
    FrameAnswer {
        frame_id,
        url: format!("http://f{frame_id}.test/"),
        answer: Ok(parse_listing(&raw, frame_id, &Limits::DEFAULT).unwrap()),
    }
}

#[test]
fn merging_frames_keeps_order_and_reports_top_frame_failures_only() {
    let tools = TabTools::from_frames(vec![
        answer(5, r#"[{"name":"b"}]"#),
        FrameAnswer {
            frame_id: 7,
            url: "about:blank".into(),
            answer: Err(FrameFailure::Unreachable("no receiver".into())),
        },
        answer(0, r#"[{"name":"a"},{"name":"bad name"}]"#),
    ]);
    let names: Vec<_> = tools
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.frame_id))
        .collect();
    assert_eq!(names, [("a", 0), ("b", 5)]);
    assert_eq!(tools.problems.len(), 1);

    let top_gone = TabTools::from_frames(vec![FrameAnswer {
        frame_id: 0,
        url: "http://a.test/".into(),
        answer: Err(FrameFailure::Unreachable("no receiver".into())),
    }]);
    assert_eq!(
        top_gone.problems[0].message,
        "frame 0 (http://a.test/): no answer: no receiver"
    );
}

#[test]
fn resolving_names_across_frames() {
    let tools = TabTools::from_frames(vec![
        answer(0, r#"[{"name":"search"},{"name":"buy"}]"#),
        answer(3, r#"[{"name":"search"}]"#),
    ]);
    assert_eq!(tools.resolve("buy", None).unwrap().frame_id, 0);
    assert_eq!(tools.resolve("search", Some(3)).unwrap().frame_id, 3);
    assert_eq!(
        tools.resolve("search", None).unwrap_err(),
        "`search` is offered by frame 0 (http://f0.test) and frame 3 (http://f3.test); pass `frameId` to choose"
    );
    assert_eq!(
        tools.resolve("sell", None).unwrap_err(),
        "no page tool named `sell`; the tab offers: search, buy"
    );
    assert!(tools
        .resolve("buy", Some(3))
        .unwrap_err()
        .contains("in frame 3"));
}

#[test]
fn an_unreachable_top_frame_without_our_script_is_orphaned() {
    let unreachable = |frame_id: i64, message: &str| FrameAnswer {
        frame_id,
        url: "https://a.test/".into(),
        answer: Err(FrameFailure::Unreachable(message.into())),
    };
    let gone = "Could not establish connection. Receiving end does not exist.";
    assert!(orphaned(&[unreachable(0, gone)]));
    assert!(!orphaned(&[unreachable(3, gone)]));
    assert!(!orphaned(&[unreachable(0, "no answer within 5000 ms")]));
}

#[test]
fn the_listing_as_text_is_the_listing_and_versions_are_kept_by_frame() {
    let tools = TabTools::from_frames(vec![
        answer(
            0,
            r#"[{"name":"a","title":"A","version":3,"annotations":{"readOnlyHint":true},
                "inputSchema":{"type":"object","properties":{"z":{},"b":{}}}},{"name":"bad name"}]"#,
        ),
        answer(2, r#"[{"name":"a","version":1}]"#),
    ]);
    let text: Value = serde_json::from_str(&tools.response_text()).unwrap();
    assert_eq!(text, tools.response());
    assert_eq!(
        serde_json::to_string(&text["tools"][0]["inputSchema"]).unwrap(),
        r#"{"type":"object","properties":{"z":{},"b":{}}}"#,
        "the page's order"
    );
    assert_eq!(tools.version(&tools.tools[0]), Some(3));
    assert_eq!(tools.version(&tools.tools[1]), Some(1));
}

#[test]
fn frames_together_offer_at_most_the_tabs_cap_top_frame_first() {
    let tools = |frame: i64, n: usize| {
        let list: Vec<String> = (0..n)
            .map(|i| format!(r#"{{"name":"t{frame}_{i}"}}"#))
            .collect();
        answer(frame, &format!("[{}]", list.join(",")))
    };
    // 32 frames of 200 tools: 6,400 offered, the cap kept, the top frame's all in.
    let frames: Vec<FrameAnswer> = (0..32).rev().map(|f| tools(f, 200)).collect();
    let tab = TabTools::from_frames(frames);
    assert_eq!(tab.tools.len(), MAX_TOOLS_PER_TAB);
    assert!(tab.tools[..200].iter().all(|t| t.frame_id == 0));
    let left_out: Vec<&str> = (tab.problems.iter())
        .filter(|p| p.message.contains("max_tools_per_tab"))
        .map(|p| p.message.as_str())
        .collect();
    assert_eq!(left_out.len(), 30, "{left_out:?}");
    assert!(left_out[0].starts_with("frame 2 (http://f2.test/): 88 of its 200 tools left out"));
    // Under the cap: nothing left out, nothing said.
    let small = TabTools::from_frames(vec![tools(0, 3), tools(1, 3)]);
    assert_eq!(small.tools.len(), 6);
    assert!(small.problems.is_empty());
}

#[test]
fn what_a_tab_offers_is_said_once_each_and_capped_where_asked() {
    use super::offered;
    assert_eq!(offered(["a", "b", "a"], usize::MAX), "a, b");
    assert_eq!(offered([], 20), "none");
    let many: Vec<String> = (0..23).map(|i| format!("t{i}")).collect();
    let said = offered(many.iter().map(String::as_str), 20);
    assert!(said.starts_with("t0, t1, "), "{said}");
    assert!(said.ends_with("t19 and 3 more"), "{said}");
}

mod chrome;
