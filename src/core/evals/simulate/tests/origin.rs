//! A simulation holds the origin its tab showed at the suite's start: after a case (or a
//! turn) took the tab to another site, no setup call, no agent turn and no DOM read happens
//! there, and nothing the other site shows is kept.

use serde_json::json;

use super::super::*;
use super::{judge_answer, play, request, world};
use crate::core::page::bridge::Target;
use crate::core::page::tabs::fixture;

const ELSEWHERE: &str = "the tab shows https://pay.test, not https://shop.test where the suite began: nothing is called or read on another origin";

/// Two cases: the first pays (its agent's turn takes the tab to the payment site), the
/// second empties the cart (when `setup`), adds two mugs and checks the cart.
fn pay_then_add(setup: bool) -> Simulate {
    let mut adds = json!({"name": "adds", "userMessage": "Add two mugs.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]});
    if setup {
        adds["setup"] = json!([{"functionName": "empty_cart", "arguments": {}}]);
    }
    let cases = json!([{"name": "pays", "userMessage": "Pay.", "successCriteria": "paid"}, adds]);
    Simulate::new(request(cases, json!({})), None, "s".into())
}

/// Whether `next` acts on the page or reads it.
fn touches_the_page(next: &Next) -> bool {
    matches!(
        next,
        Next::Call { .. }
            | Next::QueryDom { .. }
            | Next::Run {
                role: Role::Agent,
                ..
            }
    )
}

#[test]
fn a_later_case_calls_and_reads_nothing_on_the_origin_an_earlier_case_took_the_tab_to() {
    for setup in [true, false] {
        let mut sim = pay_then_add(setup);
        let mut moved = false;
        let mut scripted = world(&[], "2", judge_answer(true, &["paid"]));
        let mut there = Vec::new();
        let (answer, _) = play(&mut sim, |next| {
            if moved && touches_the_page(next) {
                there.push(format!("{next:?}"));
            }
            match next {
                Next::ListTools { .. } if moved => {
                    Reply::Listed(fixture::listed("https://pay.test/", &["empty_cart"]))
                }
                Next::Run {
                    role: Role::Agent, ..
                } => {
                    // The first case's turn pays: the tab is on the payment site from then on.
                    moved = true;
                    scripted(next)
                }
                _ => scripted(next),
            }
        });
        assert!(
            there.is_empty(),
            "setup {setup}: on the payment site: {there:#?}"
        );
        let second = &answer["results"][1];
        assert_eq!(second["outcome"], "error", "setup {setup}: {second:#}");
        let step = match setup {
            true => "setup call 1 (empty_cart): ",
            false => "before the agent's turn 1, ",
        };
        assert_eq!(
            second["error"],
            format!(
                "{step}{ELSEWHERE}; with `reload: true` each case starts on the suite's first page"
            ),
        );
    }
}

#[test]
fn the_dom_is_not_read_when_the_tab_left_the_suites_origin_before_the_reads() {
    let calls = [("checkout", json!({}), json!("paid"))];
    let case = json!([{"name": "pays", "userMessage": "Pay.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]}]);
    let mut sim = Simulate::new(request(case, json!({})), None, "s".into());
    let mut moved = false;
    let mut scripted = world(&calls, "7", judge_answer(true, &["paid"]));
    let (answer, asked) = play(&mut sim, |next| match next {
        Next::ListTools { .. } if moved => Reply::Listed(fixture::listed("https://pay.test/", &[])),
        Next::Run {
            role: Role::Agent, ..
        } => {
            moved = true;
            scripted(next)
        }
        _ => scripted(next),
    });
    let read = asked.iter().any(|n| matches!(n, Next::QueryDom { .. }));
    let result = &answer["results"][0];
    assert!(!read, "the payment site's DOM was read: {result:#}");
    assert_eq!(result["outcome"], "error");
    assert_eq!(result["assertionResults"], json!([]), "no value kept");
    assert_eq!(
        result["error"],
        format!("before the DOM assertions, {ELSEWHERE}; with `reload: true` each case starts on the suite's first page")
    );
}
#[test]
fn the_dom_reads_go_to_the_document_checked_before_them_and_keep_nothing_when_it_is_gone() {
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    let case = json!([{"name": "adds", "userMessage": "Two mugs.",
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}]}]);
    for gone in [false, true] {
        let mut sim = Simulate::new(request(case.clone(), json!({})), None, "s".into());
        let mut scripted = world(&calls, "2", judge_answer(true, &["x"]));
        let (answer, asked) = play(&mut sim, |next| match next {
            Next::ListTools { .. } => {
                let mut tab = fixture::tab("https://shop.test/cart", &["add_to_cart"]);
                tab.documents.insert(0, "doc-9".into());
                Reply::Listed(Ok(std::rc::Rc::new(tab)))
            }
            // The tab holds another document by the time the reads arrive: Chrome delivers
            // them nowhere.
            Next::QueryDom { .. } if gone => Reply::Queried(Err(
                "Could not establish connection. Receiving end does not exist.".into(),
            )),
            _ => scripted(next),
        });
        let targets: Vec<&Target> = (asked.iter())
            .filter_map(|n| match n {
                Next::QueryDom { target, .. } => Some(target),
                _ => None,
            })
            .collect();
        let checked = Target {
            frame_id: 0,
            document_id: Some("doc-9".into()),
        };
        assert_eq!(targets, [&checked], "gone {gone}");
        let result = &answer["results"][0];
        match gone {
            false => assert_eq!(result["outcome"], "pass", "{result:#}"),
            true => {
                assert_eq!(result["outcome"], "error", "{result:#}");
                assert!(result["assertionResults"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|r| r.get("actual").is_none()));
                let error = result["error"].as_str().unwrap();
                assert!(error.contains("Receiving end does not exist"), "{error}");
            }
        }
    }
}

#[test]
fn a_setup_call_goes_to_the_document_its_listing_found() {
    let mut sim = pay_then_add(true);
    let mut scripted = world(&[], "2", judge_answer(true, &["paid"]));
    let (_, asked) = play(&mut sim, |next| match next {
        Next::ListTools { .. } => {
            let mut tab = fixture::tab("https://shop.test/", &["empty_cart"]);
            tab.documents.insert(0, "doc-4".into());
            Reply::Listed(Ok(std::rc::Rc::new(tab)))
        }
        _ => scripted(next),
    });
    let expect = (asked.iter())
        .find_map(|n| match n {
            Next::Call { expect, .. } => expect.clone(),
            _ => None,
        })
        .expect("the setup call's decision");
    assert_eq!(
        (expect.tool.name.as_str(), expect.document_id.as_deref()),
        ("empty_cart", Some("doc-4"))
    );
}
