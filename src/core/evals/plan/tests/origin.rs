//! A suite holds the origin its tab showed at its start: a case that took the tab to another
//! site (a checkout on a payment provider's origin) leaves the later cases, and the later
//! steps of its own, nothing to call there; a tab whose origin cannot be read runs no case.

use serde_json::{json, Value};

use super::super::*;
use super::{request, run_answer};
use crate::core::page::call::CallAnswer;
use crate::core::page::tabs::fixture;

const SHOP: &str = "https://shop.test/";
const PAY: &str = "https://pay.test/";

/// What the suite says when the tab shows the payment site.
const ELSEWHERE: &str = "the tab shows https://pay.test, not https://shop.test where the suite began: nothing is called or read on another origin";

/// Two cases: the first pays (its checkout takes the tab to the payment site), the second
/// adds mugs.
fn pay_then_add() -> Value {
    json!([
        {"name": "pays", "messages": [{"role": "user", "type": "message", "content": "pay"}],
         "expectedCall": [{"functionName": "checkout"}]},
        {"name": "adds", "messages": [{"role": "user", "type": "message", "content": "add"}],
         "expectedCall": [{"functionName": "add"}]}
    ])
}

/// The next step that is not a listing, each listing answered with the tab at `url`, which
/// offers `checkout` and `add`; a run's log answered too.
fn on(ev: &mut Evaluation, url: &str) -> Next {
    loop {
        match ev.poll() {
            Next::ListTools { .. } => {
                let tools = fixture::listed(url, &["checkout", "add"]);
                ev.handle(Reply::Listed { tools, now_ms: 0.0 });
            }
            Next::Log { .. } => {
                ev.handle(Reply::Logged(Err("no log".into())));
            }
            next => return next,
        }
    }
}

#[test]
fn smoke_calls_nothing_on_the_origin_an_earlier_call_took_the_tab_to() {
    let mut ev = Evaluation::new(request(pay_then_add(), "smoke", json!({})), None);
    let next = on(&mut ev, SHOP);
    assert!(
        matches!(&next, Next::Call { name, .. } if name == "checkout"),
        "{next:?}"
    );
    ev.handle(Reply::Called {
        answer: CallAnswer::text("paid"),
        now_ms: 0.0,
    });
    // The checkout took the tab to the payment site, which offers a tool of the same name.
    let next = on(&mut ev, PAY);
    let Next::Done(answer) = next else {
        panic!("nothing is called on the payment site: {next:?}")
    };
    let second = &answer["results"][1];
    assert_eq!(second["outcome"], "error");
    assert_eq!(
        second["reason"],
        format!("step 1 (add): {ELSEWHERE}; with `reload: true` each case starts on the suite's first page")
    );
    assert_eq!(
        second["calls"],
        json!([{"name": "add", "args": {}, "made": false,
        "error": format!("{ELSEWHERE}; with `reload: true` each case starts on the suite's first page")}])
    );

    // Within a case too: the step after the checkout is not made there.
    let evals = json!([{"name": "pays and adds", "messages": [],
        "expectedCall": [{"functionName": "checkout"}, {"functionName": "add"}]}]);
    let mut ev = Evaluation::new(request(evals, "smoke", json!({"reload": true})), None);
    assert!(
        matches!(ev.poll(), Next::ListTools { .. }),
        "the suite's start"
    );
    ev.handle(Reply::Listed {
        tools: fixture::listed(SHOP, &[]),
        now_ms: 0.0,
    });
    assert!(matches!(ev.poll(), Next::Reload { .. }));
    ev.handle(Reply::Reloaded(Ok(())));
    assert!(matches!(on(&mut ev, SHOP), Next::Call { .. }));
    ev.handle(Reply::Called {
        answer: CallAnswer::text("paid"),
        now_ms: 0.0,
    });
    let next = on(&mut ev, PAY);
    let Next::Done(answer) = next else {
        panic!("nothing is called on the payment site: {next:?}")
    };
    assert_eq!(
        answer["results"][0]["reason"],
        format!("step 2 (add): {ELSEWHERE}")
    );
}

#[test]
fn agent_mode_starts_no_run_on_the_origin_an_earlier_run_took_the_tab_to() {
    let mut ev = Evaluation::new(
        request(pay_then_add(), "agent", json!({"models": ["m"], "runs": 2})),
        None,
    );
    let next = on(&mut ev, SHOP);
    assert!(matches!(next, Next::Run { .. }), "{next:?}");
    ev.handle(Reply::Ran {
        answer: Ok(run_answer(&[("checkout", json!({}), "paid")])),
        latency_ms: 1.0,
    });
    // Before each further run (of this case, and of the next), the tab shows the payment site.
    let next = on(&mut ev, PAY);
    let Next::Done(answer) = next else {
        panic!("no run on the payment site: {next:?}")
    };
    let results = answer["results"].as_array().expect("results");
    assert_eq!(results.len(), 4, "every run has its result");
    assert_eq!(results[0]["outcome"], "pass");
    for result in &results[1..] {
        assert_eq!(result["outcome"], "error", "{result}");
        assert_eq!(
            result["reason"],
            format!("before this run, {ELSEWHERE}; with `reload: true` each case starts on the suite's first page")
        );
    }
}

#[test]
fn after_a_reload_that_lands_on_another_origin_no_case_runs_there() {
    for mode in ["smoke", "agent"] {
        let mut ev = Evaluation::new(request(pay_then_add(), mode, json!({"reload": true})), None);
        assert!(
            matches!(ev.poll(), Next::ListTools { .. }),
            "the suite's start"
        );
        ev.handle(Reply::Listed {
            tools: fixture::listed(SHOP, &[]),
            now_ms: 0.0,
        });
        assert!(matches!(ev.poll(), Next::Reload { .. }));
        ev.handle(Reply::Reloaded(Ok(())));
        // The first page now sends the tab on to the payment site.
        let next = on(&mut ev, PAY);
        assert!(matches!(next, Next::Reload { .. }), "{mode}: {next:?}");
        let first = &ev.results()[0];
        assert_eq!(first["outcome"], "error", "{mode}: {first}");
        assert_eq!(
            first["reason"],
            format!("after the reload, {ELSEWHERE}"),
            "{mode}"
        );
    }
}

#[test]
fn a_tab_whose_origin_cannot_be_read_at_the_start_runs_no_case() {
    for mode in ["smoke", "agent"] {
        let mut ev = Evaluation::new(request(pay_then_add(), mode, json!({})), None);
        let answer = loop {
            match ev.poll() {
                Next::ListTools { .. } => {
                    ev.handle(Reply::Listed {
                        tools: Err("No tab with id: 7.".into()),
                        now_ms: 0.0,
                    });
                }
                Next::Done(answer) => break answer,
                other => panic!("{mode}: nothing is done where the origin is unknown: {other:?}"),
            }
        };
        for result in answer["results"].as_array().expect("results") {
            assert_eq!(result["outcome"], "error", "{mode}: {result}");
            assert_eq!(
                result["reason"],
                "the suite could not list its tab at its start (No tab with id: 7.): its origin is unknown, so no case runs",
                "{mode}"
            );
        }
    }
}

#[test]
fn a_smoke_call_goes_to_the_document_its_listing_found() {
    let mut ev = Evaluation::new(request(pay_then_add(), "smoke", json!({})), None);
    let expect = loop {
        match ev.poll() {
            Next::ListTools { .. } => {
                let mut tab = fixture::tab(SHOP, &["checkout"]);
                tab.documents.insert(0, "doc-3".into());
                let tools = Ok(std::rc::Rc::new(tab));
                ev.handle(Reply::Listed { tools, now_ms: 0.0 });
            }
            Next::Call { expect, .. } => break expect.expect("the call's decision"),
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(
        (expect.tool.name.as_str(), expect.document_id.as_deref()),
        ("checkout", Some("doc-3"))
    );
}
