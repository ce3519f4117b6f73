//! The evaluation's waits: smoke mode's wait for a tool the page registers late, and
//! `reload` (a fresh page before each case and run; in agent mode, the wait for the tools the
//! case expects).

use serde_json::{json, Value};

use super::super::*;
use super::{poll_smoke, request, run_answer, start};
use crate::core::page::call::CallAnswer;
use crate::core::page::ready::Settle;
use crate::core::page::tabs::fixture;
use crate::core::run::RunOutcome;

/// Lists the tools `present` at `now_ms` for the next step; the next step after it.
fn listed(ev: &mut Evaluation, present: &[&str], now_ms: f64) -> (Option<Value>, Next) {
    let done = ev.handle(Reply::Listed {
        tools: fixture::listed("https://shop.test/", present),
        now_ms,
    });
    (done, ev.poll())
}

#[test]
fn smoke_waits_up_to_5_s_for_a_tool_registered_late() {
    let evals = json!([{"name": "late", "messages": [], "expectedCall": [{"functionName": "late_tool", "arguments": {}}]}]);
    let mut ev = Evaluation::new(request(evals.clone(), "smoke", json!({})), None);
    start(&mut ev);
    let first = ev.poll();
    assert_eq!(
        first,
        Next::ListTools {
            tab_id: 7,
            name: Some("late_tool".into()),
            after_ms: 0,
            settle: Settle::Loaded,
        },
        "listed before its call, once its page is parsed"
    );
    // Not there yet: listed again every 100 ms.
    let (_, next) = listed(&mut ev, &["other"], 1_000.0);
    assert!(
        matches!(next, Next::ListTools { after_ms: 100, .. }),
        "{next:?}"
    );
    let (_, next) = listed(&mut ev, &[], 3_000.0);
    assert!(
        matches!(next, Next::ListTools { after_ms: 100, .. }),
        "{next:?}"
    );
    // The last wait is cut to the 5 s.
    let (_, next) = listed(&mut ev, &[], 5_950.0);
    assert!(
        matches!(next, Next::ListTools { after_ms: 50, .. }),
        "{next:?}"
    );
    let (done, next) = listed(&mut ev, &["late_tool"], 5_990.0);
    assert_eq!(done, None);
    assert!(
        matches!(next, Next::Call { ref name, .. } if name == "late_tool"),
        "{next:?}"
    );
    ev.handle(Reply::Called {
        answer: CallAnswer::text("ok"),
        now_ms: f64::NAN,
    });
    let Next::Done(answer) = ev.poll() else {
        panic!("done")
    };
    assert_eq!(answer["results"][0]["outcome"], "pass");

    // Never there: an error once 5 s have passed, and the tool is not called.
    let mut ev = Evaluation::new(request(evals.clone(), "smoke", json!({})), None);
    start(&mut ev);
    ev.poll();
    let (_, next) = listed(&mut ev, &[], 0.0);
    assert!(matches!(next, Next::ListTools { .. }));
    let (done, next) = listed(&mut ev, &["search", "add", "search"], 5_000.0);
    let done = done.expect("the case ended");
    assert_eq!(done["outcome"], "error");
    assert_eq!(
        done["reason"],
        "step 1 (late_tool): the tool is not on the page (waited 5000 ms for it to appear); the tab offers: search, add"
    );
    assert_eq!(done["calls"][0]["name"], "late_tool");
    assert_eq!(done["calls"][0]["made"], false, "never called");
    assert!(matches!(next, Next::Done(_)));

    // A shorter call timeout bounds the wait; a listing that fails is the case's error: the
    // call is not made where the tab's origin cannot be checked.
    let mut ev = Evaluation::new(
        request(evals.clone(), "smoke", json!({"timeoutMs": 300})),
        None,
    );
    start(&mut ev);
    ev.poll();
    listed(&mut ev, &[], 0.0);
    let (done, _) = listed(&mut ev, &[], 300.0);
    assert_eq!(done.unwrap()["outcome"], "error");
    let mut ev = Evaluation::new(request(evals, "smoke", json!({})), None);
    start(&mut ev);
    ev.poll();
    let done = ev.handle(Reply::Listed {
        tools: Err("tab 7 is closed".into()),
        now_ms: 0.0,
    });
    let done = done.expect("the case ended");
    assert_eq!(done["reason"], "step 1 (late_tool): tab 7 is closed");
    assert_eq!(done["calls"][0]["made"], false);
    assert!(matches!(ev.poll(), Next::Done(_)));
}

#[test]
fn a_tool_wait_without_a_clock_lists_once() {
    use crate::core::evals::wait::{Seen, ToolWait};
    let mut wait = ToolWait::default();
    let none = fixture::listed("https://shop.test/", &[]);
    assert!(matches!(
        wait.listed("t", &none, f64::NAN, 10_000),
        Seen::Missing(_)
    ));
    let mut wait = ToolWait::default();
    assert_eq!(
        wait.listed(
            "t",
            &fixture::listed("https://shop.test/", &["u"]),
            0.0,
            10_000
        ),
        Seen::ListAgain(100)
    );
    // A clock that goes back does not wait longer than the cap.
    assert_eq!(wait.listed("t", &none, -50.0, 10_000), Seen::ListAgain(100));
}

/// The steps of an evaluation, each answered: reloads by `reload`, listings with the tool,
/// calls and runs with a pass; `(what was asked, the answer)`.
fn drive(
    ev: &mut Evaluation,
    reload: impl Fn(usize) -> Result<(), String>,
) -> (Vec<String>, Value) {
    let mut steps = Vec::new();
    loop {
        match poll_smoke(ev) {
            Next::Reload { tab_id } => {
                assert_eq!(tab_id, 7);
                steps.push("reload".to_owned());
                let reloads = steps.iter().filter(|s| *s == "reload").count();
                ev.handle(Reply::Reloaded(reload(reloads)));
            }
            Next::Call { name, .. } => {
                steps.push(name);
                ev.handle(Reply::Called {
                    answer: CallAnswer::text("{\"count\": 3}"),
                    now_ms: f64::NAN,
                });
            }
            Next::Run { model, .. } => {
                steps.push(format!("run {model}"));
                let answer = Ok(run_answer(&[("search", json!({"query": "mugs"}), "3")]));
                ev.handle(Reply::Ran {
                    answer,
                    latency_ms: 1.0,
                });
            }
            Next::Log { .. } => {
                ev.handle(Reply::Logged(Err("no log".into())));
            }
            Next::ListTools { .. } => unreachable!("answered by poll_smoke"),
            Next::Done(answer) => return (steps, answer),
        }
    }
}

#[test]
fn reload_loads_the_page_afresh_before_each_case_and_each_run() {
    let evals = json!([
        {"name": "one", "messages": [{"role": "user", "type": "message", "content": "a"}],
         "expectedCall": [{"functionName": "search"}, {"functionName": "add"}]},
        {"name": "none", "messages": [{"role": "user", "type": "message", "content": "b"}], "expectedCall": null},
        {"name": "two", "messages": [{"role": "user", "type": "message", "content": "c"}],
         "expectedCall": [{"functionName": "search"}]}
    ]);
    let plain = request(evals.clone(), "smoke", json!({}));
    assert!(!plain.reload, "off unless asked");
    let (steps, _) = drive(&mut Evaluation::new(plain, None), |_| Ok(()));
    assert_eq!(steps, ["search", "add", "search"]);

    let smoke = request(evals.clone(), "smoke", json!({"reload": true}));
    let (steps, answer) = drive(&mut Evaluation::new(smoke, None), |_| Ok(()));
    assert_eq!(
        steps,
        ["reload", "search", "add", "reload", "reload", "search"],
        "once before each case, not before each call"
    );
    assert_eq!(answer["passCount"], 3);

    // A reload that fails makes that case an error; the next case reloads and runs.
    let smoke = request(evals.clone(), "smoke", json!({"reload": true}));
    let fail_first = |n: usize| match n {
        1 => Err("tab 7 was closed".to_owned()),
        _ => Ok(()),
    };
    let (steps, answer) = drive(&mut Evaluation::new(smoke, None), fail_first);
    assert_eq!(steps, ["reload", "reload", "reload", "search"]);
    let outcomes: Vec<_> = (answer["results"].as_array().unwrap().iter())
        .map(|r| {
            (
                r["outcome"].as_str().unwrap(),
                r["reason"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        outcomes[0],
        ("error", "the tab could not be reloaded: tab 7 was closed")
    );
    assert_eq!((outcomes[1].0, outcomes[2].0), ("pass", "pass"));

    // Agent mode: before each run of each model; a failed reload is that run's error.
    let agent = request(
        json!([evals[0].clone()]),
        "agent",
        json!({"reload": true, "models": ["m1", "m2"], "runs": 2}),
    );
    let second_fails = |n: usize| match n {
        2 => Err("the tab did not finish loading within 30 s".to_owned()),
        _ => Ok(()),
    };
    let (steps, answer) = drive(&mut Evaluation::new(agent, None), second_fails);
    assert_eq!(
        steps,
        ["reload", "run m1", "reload", "reload", "run m2", "reload", "run m2"]
    );
    let results = answer["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "every model and run has its result");
    assert_eq!(
        (
            &results[1]["model"],
            &results[1]["runIndex"],
            &results[1]["outcome"]
        ),
        (&json!("m1"), &json!(1), &json!("error"))
    );
    assert!(results[1]["reason"]
        .as_str()
        .unwrap()
        .contains("could not be reloaded: the tab did not finish loading"));
}

/// After a reload: answers the listing that waits for the page (the host's listing waits
/// until it is ready, `core::host::listing`); the next step after it.
fn page_ready(ev: &mut Evaluation) -> Next {
    let next = ev.poll();
    assert_eq!(
        next,
        Next::ListTools {
            tab_id: 7,
            name: None,
            after_ms: 0,
            settle: Settle::AfterLoad
        },
        "the reloaded page is listed once it is ready, no tool awaited yet"
    );
    listed(ev, &["search"], 0.0);
    ev.poll()
}

#[test]
fn after_a_reload_the_page_is_awaited_and_a_page_that_never_loads_is_the_cases_error() {
    let evals = json!([{"name": "buys", "messages": [{"role": "user", "type": "message", "content": "buy"}],
         "expectedCall": [{"functionName": "search"}]}]);
    for mode in ["smoke", "agent"] {
        let mut ev = Evaluation::new(request(evals.clone(), mode, json!({"reload": true})), None);
        start(&mut ev);
        assert!(matches!(ev.poll(), Next::Reload { .. }));
        ev.handle(Reply::Reloaded(Ok(())));
        // Then the wait for the expected tool, in both modes (before the call, its page as
        // parsed; before the run).
        let next = page_ready(&mut ev);
        let want = if mode == "smoke" {
            Settle::Loaded
        } else {
            Settle::Now
        };
        assert!(
            matches!(next, Next::ListTools { name: Some(ref name), settle, .. } if name == "search" && settle == want),
            "{mode}: {next:?}"
        );

        // A page that never loads: the case's (or run's) error, said as the listing said it.
        let mut ev = Evaluation::new(request(evals.clone(), mode, json!({"reload": true})), None);
        start(&mut ev);
        ev.poll();
        ev.handle(Reply::Reloaded(Ok(())));
        assert!(matches!(
            ev.poll(),
            Next::ListTools {
                settle: Settle::AfterLoad,
                ..
            }
        ));
        let done = ev.handle(Reply::Listed {
            tools: Err("the tab's page was not ready after 10000 ms (budget 10000 ms): the page https://shop.test/ was still loading".into()),
            now_ms: 0.0,
        });
        let result = done.expect("the case's (or run's) result");
        assert_eq!(result["outcome"], "error", "{mode}: {result}");
        assert!(
            result["reason"]
                .as_str()
                .unwrap()
                .contains("after the reload, the tab's page was not ready after 10000 ms"),
            "{mode}: {result}"
        );
    }
}

#[test]
fn after_a_reload_an_agent_run_waits_for_the_tools_its_case_expects() {
    let evals = json!([
        {"name": "buys", "messages": [{"role": "user", "type": "message", "content": "buy"}],
         "expectedCall": [{"functionName": "search"}, {"functionName": "add"},
                          {"functionName": "search"}, {"functionName": "note", "optional": true}]},
        {"name": "greets", "messages": [{"role": "user", "type": "message", "content": "hi"}], "expectedCall": null}
    ]);
    let mut ev = Evaluation::new(
        request(evals.clone(), "agent", json!({"reload": true})),
        None,
    );
    start(&mut ev);
    assert!(matches!(ev.poll(), Next::Reload { .. }));
    ev.handle(Reply::Reloaded(Ok(())));
    // Nothing listed yet: asked again 100 ms later; `search` first, then `add`; `note` is optional.
    let Next::ListTools { name, after_ms, .. } = page_ready(&mut ev) else {
        panic!("a listing before the run")
    };
    assert_eq!((name.as_deref(), after_ms), (Some("search"), 0));
    let Next::ListTools { name, after_ms, .. } = listed(&mut ev, &[], 1_000.0).1 else {
        panic!("listed again")
    };
    assert_eq!((name.as_deref(), after_ms), (Some("search"), 100));
    let next = listed(&mut ev, &["search"], 1_300.0).1;
    assert!(matches!(next, Next::ListTools { name: Some(name), .. } if name == "add"));
    let next = listed(&mut ev, &["search", "add"], 1_400.0).1;
    assert!(
        matches!(next, Next::Run { .. }),
        "both expected tools are there"
    );
    ev.handle(Reply::Ran {
        answer: Ok(RunEnded::told(
            "",
            RunOutcome::Completed { text: "".into() },
            json!([]),
        )),
        latency_ms: 1.0,
    });

    // No call expected: the run starts as soon as the page has loaded.
    assert!(matches!(ev.poll(), Next::Reload { .. }));
    ev.handle(Reply::Reloaded(Ok(())));
    assert!(matches!(page_ready(&mut ev), Next::Run { .. }));

    // A tool that never comes: after 5 s the run starts all the same.
    let one = json!([evals[0].clone()]);
    let mut ev = Evaluation::new(request(one, "agent", json!({"reload": true})), None);
    start(&mut ev);
    ev.poll();
    ev.handle(Reply::Reloaded(Ok(())));
    page_ready(&mut ev);
    let next = listed(&mut ev, &["add"], 0.0).1;
    assert!(matches!(next, Next::ListTools { name: Some(name), .. } if name == "search"));
    let next = listed(&mut ev, &["add"], 5_000.0).1;
    assert!(matches!(next, Next::Run { .. }), "the wait is over");

    // Without reload an agent run waits for no tool: once its page is listed, on the suite's
    // origin, it starts.
    let plain = json!([evals[0].clone()]);
    let mut ev = Evaluation::new(request(plain, "agent", json!({})), None);
    start(&mut ev);
    let check = Next::ListTools {
        tab_id: 7,
        name: None,
        after_ms: 0,
        settle: Settle::Loaded,
    };
    assert_eq!(ev.poll(), check);
    listed(&mut ev, &[], 0.0);
    assert!(matches!(ev.poll(), Next::Run { .. }));
}
