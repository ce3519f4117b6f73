//! A page that registers tools per view: after a page call the tab is listed again, and the
//! next model step has the page's tools as they are now (same origin only).

use super::*;
use crate::core::page::tabs::{TabTools, TopPage};
use crate::core::run::ToolOutcome;

/// The model searches, then adds the result it found to the cart (a tool the search view
/// registers), then answers.
const SEARCH_THEN_ADD: &str = r#"{"text":"","calls":[{"name":"search","arguments":{"q":"mug"}}],"finish":"stop"}
{"text":"","calls":[{"name":"add_result","arguments":{"index":0}}],"finish":"stop"}
{"text":"Added.","finish":"stop"}"#;

fn page(origin: &str, names: &[&str]) -> std::rc::Rc<TabTools> {
    let mut tools = TabTools {
        tools: names.iter().map(|n| page_tool(n, false)).collect(),
        ..TabTools::default()
    };
    tools.page = Some(TopPage {
        url: format!("{origin}/search"),
        origin: origin.into(),
        title: "Shop".into(),
        loading: false,
    });
    std::rc::Rc::new(tools)
}

fn run_with_search() -> (Drive, Vec<Action>) {
    let mut input = RunInput::new("t1", "r1", vec![user("Add a mug")]);
    input.tools = vec![RunTool {
        spec: ToolSpec {
            name: "search".into(),
            description: "Searches".into(),
            input_schema: json!({"type": "object"}),
        },
        kind: ToolKind::Page,
        data_source: None,
    }];
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model: model(Provider::Replay, Some(SEARCH_THEN_ADD)),
            key: Ok(None),
            tab_id: Some(7),
            origin: Some("https://shop.test".into()),
            bindings: vec![(
                "search".into(),
                Binding::Page(listed(page_tool("search", false))),
            )],
            hook: false,
        },
    );
    let mut actions = Vec::new();
    while let Some(action) = drive.poll() {
        actions.push(action);
    }
    (drive, actions)
}

fn tool_call(actions: &[Action]) -> Option<String> {
    actions.iter().find_map(|a| match a {
        Action::Tool { call_id, .. } => Some(call_id.clone()),
        _ => None,
    })
}

fn poll_all(drive: &mut Drive) -> Vec<Action> {
    let mut actions = Vec::new();
    while let Some(action) = drive.poll() {
        actions.push(action);
    }
    actions
}

#[test]
fn a_tool_the_page_registers_after_a_call_is_offered_in_the_next_step() {
    let (mut drive, actions) = run_with_search();
    let search = tool_call(&actions).expect("the search runs");
    drive.handle(Answer::ToolDone {
        call_id: search,
        answer: ToolOutcome::Ok("1 result".into()).into(),
    });
    let actions = poll_all(&mut drive);
    assert!(
        matches!(actions.as_slice(), [.., Action::ListTabTools { tab_id: 7 }]),
        "the tab is listed again before the next step: {actions:?}"
    );
    drive.handle(Answer::TabTools(Ok(page(
        "https://shop.test",
        &["search", "add_result"],
    ))));
    let actions = poll_all(&mut drive);
    let text = format!("{actions:?}");
    assert!(text.contains("webmcp_host.tools_changed"), "{text}");
    assert!(
        text.contains("\"added\": Array [String(\"add_result\")]"),
        "{text}"
    );
    let add = tool_call(&actions).expect("the new tool runs, bound to the page");
    drive.handle(Answer::ToolDone {
        call_id: add,
        answer: ToolOutcome::Ok("added".into()).into(),
    });
    let actions = poll_all(&mut drive);
    // Listed again: nothing changed, nothing said.
    assert!(matches!(actions.last(), Some(Action::ListTabTools { .. })));
    drive.handle(Answer::TabTools(Ok(page(
        "https://shop.test",
        &["search", "add_result"],
    ))));
    let actions = poll_all(&mut drive);
    assert_eq!(
        format!("{actions:?}").matches("tools_changed").count(),
        0,
        "{actions:?}"
    );
    assert_eq!(
        outcome(&actions),
        Some(RunOutcome::Completed {
            text: "Added.".into()
        })
    );
}

#[test]
fn another_origins_tools_never_join_the_run() {
    for listing in [
        Ok(page("https://evil.test", &["search", "add_result"])),
        Err("the tab is gone".to_owned()),
    ] {
        let (mut drive, actions) = run_with_search();
        let search = tool_call(&actions).unwrap();
        drive.handle(Answer::ToolDone {
            call_id: search,
            answer: ToolOutcome::Ok("1 result".into()).into(),
        });
        poll_all(&mut drive);
        drive.handle(Answer::TabTools(listing));
        let actions = poll_all(&mut drive);
        assert!(
            tool_call(&actions).is_none(),
            "add_result is unknown: {actions:?}"
        );
        assert!(!format!("{actions:?}").contains("tools_changed"));
        assert!(
            format!("{actions:?}").contains("add_result"),
            "the model is told the call was rejected"
        );
    }
}

#[test]
fn a_page_that_registers_thousands_of_tools_mid_run_stays_within_the_request_cap() {
    let (mut drive, actions) = run_with_search();
    let search = tool_call(&actions).unwrap();
    drive.handle(Answer::ToolDone {
        call_id: search,
        answer: ToolOutcome::Ok("1 result".into()).into(),
    });
    poll_all(&mut drive);
    let names: Vec<String> = (0..3000).map(|i| format!("t{i}")).collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    drive.handle(Answer::TabTools(Ok(page("https://shop.test", &names))));
    let text = format!("{:?}", poll_all(&mut drive));
    let max = crate::core::limits::MAX_TOOLS_PER_REQUEST;
    assert!(
        text.contains(&format!("{} of the page's tools left out", 3000 - max)),
        "said: {}",
        &text[..text.len().min(2000)]
    );
    assert!(text.contains("\"t0\""), "the first ones are offered");
    assert!(
        !text.contains(&format!("\"t{max}\"")),
        "a tool past the cap is not offered"
    );
}
