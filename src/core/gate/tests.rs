use serde_json::json;

use super::*;
use crate::core::run::declared;

fn layers(value: serde_json::Value) -> Vec<Middleware> {
    declared(&value, "layers").expect("layers parse")
}

#[test]
fn a_block_refuses_the_call_for_every_asker_and_either_name() {
    let layers = layers(json!([{"kind": "block", "tool": "transfer", "reason": "not here"}]));
    for asker in Asker::ALL {
        let refused = screen(&layers, asker, &["transfer"], 1).unwrap_err();
        assert_eq!(refused, "blocked: not here", "{asker:?}");
        // An MCP tool named as a run knows it, or by its own name.
        assert!(screen(&layers, asker, &["bank__transfer", "transfer"], 1).is_err());
        assert!(screen(&layers, asker, &["lookup"], 1).is_ok());
    }
}

#[test]
fn fail_counts_calls_and_delay_adds_up_to_its_cap() {
    let layers = layers(json!([
        {"kind": "delay", "ms": 40_000},
        {"kind": "fail", "tool": "flaky", "error": "boom", "times": 2},
        {"kind": "delay", "tool": "flaky", "ms": 40_000},
    ]));
    assert_eq!(
        screen(&layers, Asker::Run, &["flaky"], 2).unwrap_err(),
        "boom"
    );
    let pass = screen(&layers, Asker::Run, &["flaky"], 3).unwrap();
    assert_eq!(pass.delay_ms(), MAX_DELAY_MS);
    assert_eq!(
        screen(&layers, Asker::Smoke, &["other"], 1)
            .unwrap()
            .delay_ms(),
        40_000
    );
}

#[test]
fn layers_after_a_refusal_are_not_reached() {
    let layers =
        layers(json!([{"kind": "observe"}, {"kind": "block", "tool": "x"}, {"kind": "observe"}]));
    let mut seen = 0;
    let screened = screen_each(&layers, Asker::Run, &["x"], 1, |l| {
        seen += usize::from(*l == Middleware::Observe)
    });
    assert!(screened.is_err());
    assert_eq!(seen, 1);
}

#[test]
fn stored_layers_that_cannot_be_used_refuse_the_call() {
    let broken = screen_stored(
        Ok(Some(json!([{"kind": "nonsense"}]))),
        Asker::Replay,
        &["a"],
    );
    assert!(broken
        .unwrap_err()
        .starts_with("replayDiff: the call was not made"));
    let unread = screen_stored(Err("quota".into()), Asker::Probe, &["a"]);
    assert!(unread.unwrap_err().contains("could not be read: quota"));
    let none = screen_stored(Ok(None), Asker::CallTool, &["a"]).unwrap();
    let permit = none.permit(7);
    assert_eq!((*permit.call(), permit.asker()), (7, Asker::CallTool));
}

fn page_tool(consequential: bool, allow_acting: bool) -> crate::core::page::tool::PageTool {
    let mut tool = crate::core::page::tool::PageTool::sample("buy", consequential);
    tool.annotations.allow_acting = allow_acting;
    tool
}

#[test]
fn a_page_tool_that_acts_is_asked_in_the_page_unless_its_site_allows_it() {
    let args = json!({"sku": "mug"}).as_object().unwrap().clone();
    for asker in Asker::ALL {
        let read = decide(asker, Acting::Page(&page_tool(false, false)), &args);
        assert_eq!(read, Ok(Decision::Runs { allowed: None }), "{asker:?}");
        let asked = decide(asker, Acting::Page(&page_tool(true, false)), &args).unwrap();
        assert!(
            matches!(
                &asked,
                Decision::Ask {
                    asked_in: AskedIn::Page,
                    ..
                }
            ),
            "{asker:?}"
        );
        let question = asked.question().unwrap();
        assert!(
            question.contains("“buy” on https://shop.test")
                && question.contains("\"sku\": \"mug\"")
        );
        let allowed = decide(asker, Acting::Page(&page_tool(true, true)), &args);
        assert_eq!(
            allowed,
            Ok(Decision::Runs {
                allowed: Some("allowed by site policy https://shop.test".into())
            })
        );
    }
}

#[test]
fn an_mcp_tool_that_acts_is_asked_in_the_extension_in_the_askers_words() {
    let args = json!({"id": 7}).as_object().unwrap().clone();
    let mcp = |acts, page| Acting::Mcp {
        server: "bank",
        tool: "transfer",
        acts,
        page,
    };
    for asker in Asker::ALL {
        assert_eq!(
            decide(asker, mcp(false, None), &args),
            Ok(Decision::Runs { allowed: None })
        );
        let asked = decide(asker, mcp(true, None), &args).unwrap();
        assert!(
            matches!(
                &asked,
                Decision::Ask {
                    asked_in: AskedIn::Extension,
                    ..
                }
            ),
            "{asker:?}"
        );
        let exposed = decide(asker, mcp(true, Some("https://a.example")), &args).unwrap();
        assert!(exposed
            .question()
            .unwrap()
            .contains("This page (https://a.example) wants to run"));
    }
    let words = |asker| {
        decide(asker, mcp(true, None), &args)
            .unwrap()
            .question()
            .unwrap()
            .to_owned()
    };
    assert!(words(Asker::Run).contains("The agent wants to run “transfer” of the MCP server bank"));
    assert!(words(Asker::ByHand).contains("A call by hand wants to run “transfer”"));
}

#[test]
fn a_question_that_cannot_show_every_argument_refuses_the_call() {
    let many: serde_json::Map<String, serde_json::Value> =
        (0..200).map(|i| (format!("k{i}"), json!(i))).collect();
    let page = decide(
        Asker::CallTool,
        Acting::Page(&page_tool(true, false)),
        &many,
    );
    assert!(page.is_err());
    let mcp = Acting::Mcp {
        server: "bank",
        tool: "transfer",
        acts: true,
        page: None,
    };
    assert!(decide(Asker::Run, mcp, &many).is_err());
    // A call that is not asked about shows nothing, and runs.
    let quiet = Acting::Mcp {
        server: "bank",
        tool: "balance",
        acts: false,
        page: None,
    };
    assert!(decide(Asker::Run, quiet, &many).is_ok());
}
