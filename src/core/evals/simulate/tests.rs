//! A simulation played by hand: the conversation, the DOM assertions, the judge, the budgets,
//! replays and reports.

use serde_json::{json, Value};

use super::*;
use crate::core::page::bridge::DomObserved;
use crate::core::page::call::CallAnswer;
use crate::core::run::RunOutcome;

pub(super) fn request(cases: Value, extra: Value) -> SimulateRequest {
    let mut value =
        json!({"tabId": 4, "mode": "simulate", "simulations": cases, "judgeModel": "judge"});
    for (k, v) in extra.as_object().unwrap() {
        value[k] = v.clone();
    }
    SimulateRequest::parse(&value).unwrap()
}

/// A run's end: its text, the calls it made (name, args, result) after the history it was
/// given, its transcript and tokens.
fn agent_answer(request: &Value, text: &str, calls: &[(&str, Value, Value)]) -> RunEnded {
    let mut messages = request["messages"].as_array().cloned().unwrap_or_default();
    for (i, (name, args, result)) in calls.iter().enumerate() {
        let id = format!("{}-c{i}", request["runId"].as_str().unwrap());
        messages.push(json!({"id": format!("{id}-a"), "role": "assistant", "toolCalls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}));
        messages.push(json!({"id": format!("{id}-t"), "role": "tool", "toolCallId": id, "content": result.to_string()}));
    }
    messages.push(json!({"id": "last", "role": "assistant", "content": text}));
    let run_id = request["runId"].as_str().unwrap();
    let completed = RunOutcome::Completed { text: text.into() };
    RunEnded::told(run_id, completed, json!(messages))
        .with_transcript(json!({"text": text}).to_string())
        .with_tokens(10, 5)
}

pub(super) fn judge_answer(passed: bool, evidence: &[&str]) -> RunEnded {
    let verdict =
        json!({"passed": passed, "reasoning": "The cart shows it.\nMore.", "evidence": evidence});
    let transcript = json!({"calls": [{"name": "submit_result", "arguments": verdict}]});
    let submitted = RunOutcome::Submitted { value: verdict };
    RunEnded::told("j", submitted, json!([])).with_transcript(transcript.to_string())
}

/// Plays the evaluation to its end, `answer` answering each request (at 1 s a step); the
/// answer and every request made.
pub(super) fn play(
    sim: &mut Simulate,
    mut answer: impl FnMut(&Next) -> Reply,
) -> (Value, Vec<Next>) {
    let mut asked = Vec::new();
    let mut now = 1_000.0;
    for _ in 0..200 {
        let next = sim.poll(now);
        if let Next::Done(value) = next {
            return (value, asked);
        }
        let reply = answer(&next);
        asked.push(next);
        now += 1_000.0;
        sim.handle(reply, now);
    }
    panic!("no end in 200 steps: {asked:#?}")
}

pub(super) fn listed(names: &[&str]) -> Reply {
    Reply::Listed(crate::core::page::tabs::fixture::listed(
        "https://shop.test/",
        names,
    ))
}

fn seen(count: u64, text: &str) -> DomObserved {
    DomObserved {
        count,
        text: Some(text.into()),
        attribute: None,
        error: None,
    }
}

pub(super) fn runs(asked: &[Next], role: Role) -> Vec<Value> {
    asked
        .iter()
        .filter_map(|n| match n {
            Next::Run {
                role: r, request, ..
            } if *r == role => Some(request.clone()),
            _ => None,
        })
        .collect()
}

const CART: &str = "a cart with two mugs";

fn cart_case() -> Value {
    json!([{
        "name": "two mugs",
        "setup": [{"functionName": "empty_cart", "arguments": {}}],
        "userScenario": "You want two blue mugs in your cart.",
        "maxTurns": 4,
        "assertions": [{"type": "dom", "selector": ".cart-count", "expect": {"text": "2"}}],
        "successCriteria": CART,
    }])
}

/// The scripted world: the user asks then ends; the agent calls `calls`; the page shows
/// `cart`; the judge says `verdict`.
pub(super) fn world<'a>(
    calls: &'a [(&'a str, Value, Value)],
    cart: &'a str,
    verdict: RunEnded,
) -> impl FnMut(&Next) -> Reply + 'a {
    let mut user_turns = 0;
    move |next| match next {
        Next::ListTools { .. } => listed(&["empty_cart", "add_to_cart"]),
        Next::Call { .. } => Reply::Called(CallAnswer::text(r#"{"emptied": true}"#)),
        Next::Run {
            role: Role::User,
            request,
            ..
        } => {
            user_turns += 1;
            let text = match user_turns {
                1 => "I'd like two blue mugs please.",
                _ => "Great, thanks!\n[[END_CONVERSATION]]",
            };
            Reply::Ran(Ok(agent_answer(request, text, &[])))
        }
        Next::Run {
            role: Role::Agent,
            request,
            ..
        } => Reply::Ran(Ok(agent_answer(request, "Added two mugs.", calls))),
        Next::Run {
            role: Role::Judge, ..
        } => Reply::Ran(Ok(verdict.clone())),
        Next::QueryDom { .. } => Reply::Queried(Ok(vec![seen(1, cart)])),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_goal_reached_by_two_call_sequences_passes_both_times() {
    let one = [(
        "add_to_cart",
        json!({"id": "mug-1", "qty": 2}),
        json!({"cart": 2}),
    )];
    let two = [
        (
            "add_to_cart",
            json!({"id": "mug-1", "qty": 1}),
            json!({"cart": 1}),
        ),
        (
            "add_to_cart",
            json!({"id": "mug-1", "qty": 1}),
            json!({"cart": 2}),
        ),
    ];
    for calls in [&one[..], &two[..]] {
        let mut sim = Simulate::new(
            request(cart_case(), json!({"models": ["agent"]})),
            None,
            "sim_t".into(),
        );
        let (answer, asked) = play(
            &mut sim,
            world(
                calls,
                "2",
                judge_answer(true, &["add_to_cart → {\"cart\":2}"]),
            ),
        );
        let result = &answer["results"][0];
        assert_eq!(result["outcome"], "pass", "{result:#}");
        assert_eq!(result["verdict"]["passed"], true);
        assert_eq!(result["verdict"]["endedBy"], "user");
        assert_eq!(result["verdict"]["turnsUsed"], 1);
        assert_eq!(result["conversation"]["closingMessage"], "Great, thanks!");
        assert_eq!(
            result["conversation"]["turns"][0]["toolCalls"]
                .as_array()
                .unwrap()
                .len(),
            calls.len()
        );
        assert_eq!(result["setupCalls"][0]["outcome"], "pass");
        assert_eq!(answer["mode"], "simulate");
        assert_eq!(answer["passCount"], 1);
        // The suite's start listed the tab; the setup call was listed, then made; the user and
        // the judge had no tool.
        assert!(asked[..2]
            .iter()
            .all(|n| matches!(n, Next::ListTools { .. })));
        assert!(matches!(asked[2], Next::Call { .. }));
        for r in runs(&asked, Role::User)
            .iter()
            .chain(&runs(&asked, Role::Judge))
        {
            assert_eq!(r["noTools"], true, "{r}");
            assert!(r.get("tabId").is_none());
        }
        // The user never sees the success criteria; the judge does.
        for r in runs(&asked, Role::User) {
            assert!(!r.to_string().contains(CART), "{r}");
        }
        let judge = &runs(&asked, Role::Judge)[0];
        assert!(judge.to_string().contains(CART));
        assert_eq!(judge["model"], "judge");
        assert!(judge["outputSchema"].is_object());
        // The agent ran on the tab, with its model, tagged as this evaluation's.
        let agent = &runs(&asked, Role::Agent)[0];
        assert_eq!(
            (agent["tabId"].clone(), agent["model"].clone()),
            (json!(4), json!("agent"))
        );
        assert_eq!(agent["eval"]["suite"], "sim_t");
    }
}

#[test]
fn a_missed_goal_fails_on_the_dom_assertion_and_no_judge_is_asked() {
    let calls = [(
        "add_to_cart",
        json!({"id": "mug-1", "qty": 1}),
        json!({"cart": 1}),
    )];
    let mut sim = Simulate::new(
        request(cart_case(), json!({})),
        Some("dflt".into()),
        "s".into(),
    );
    let (answer, asked) = play(&mut sim, world(&calls, "1", judge_answer(true, &["x"])));
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "fail");
    assert_eq!(result["assertionResults"][0]["outcome"], "fail");
    assert_eq!(result["assertionResults"][0]["actual"], "1");
    assert!(
        result["reason"]
            .as_str()
            .unwrap()
            .contains("expected \"2\""),
        "{result}"
    );
    assert!(
        runs(&asked, Role::Judge).is_empty(),
        "a measured mismatch is final"
    );
    assert!(result.get("verdict").is_none());
    assert_eq!(result["model"], "dflt");
}

#[test]
fn the_judges_failing_verdict_fails_the_case_with_its_reasoning() {
    let case = json!([{"name": "c", "userMessage": "Two mugs please", "successCriteria": CART}]);
    let calls = [("add_to_cart", json!({"qty": 1}), json!({"cart": 1}))];
    let mut sim = Simulate::new(request(case, json!({})), None, "s".into());
    let (answer, asked) = play(
        &mut sim,
        world(&calls, "", judge_answer(false, &["only one mug was added"])),
    );
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "fail");
    assert_eq!(result["reason"], "The cart shows it.");
    assert_eq!(result["verdict"]["evidence"][0], "only one mug was added");
    assert_eq!(result["verdict"]["endedBy"], "singleTurn");
    assert!(
        runs(&asked, Role::User).is_empty(),
        "a userMessage case needs no user model"
    );
    assert!(result.get("userModel").is_none());
}

#[test]
fn a_judge_that_passes_the_agents_claim_without_evidence_does_not_pass_it() {
    let case = json!([{"name": "c", "userMessage": "Two mugs please", "successCriteria": CART}]);
    // The agent claims, and calls nothing.
    let mut sim = Simulate::new(request(case.clone(), json!({})), None, "s".into());
    let (answer, _) = play(
        &mut sim,
        world(
            &[],
            "",
            judge_answer(true, &["The assistant said it added two mugs"]),
        ),
    );
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "fail", "{result:#}");
    assert_eq!(result["verdict"]["passed"], false);
    assert!(result["verdict"]["overruled"]
        .as_str()
        .unwrap()
        .contains("claims alone"));
    // A verdict that cites nothing is no verdict.
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    let mut sim = Simulate::new(request(case, json!({})), None, "s".into());
    let (answer, _) = play(&mut sim, world(&calls, "", judge_answer(true, &["  "])));
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "error");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("cites no evidence"),
        "{result}"
    );
}

#[test]
fn the_judge_prompt_marks_tool_results_as_evidence_and_setup_as_not_the_agents() {
    let setup = [SetupOutcome {
        function_name: "empty_cart".into(),
        arguments: Default::default(),
        result: Some(json!("emptied")),
        error: None,
    }];
    let turns = [Turn {
        index: 1,
        user_message: "two mugs".into(),
        agent_text: "Done!".into(),
        tool_calls: vec![TurnCall {
            function_name: "add_to_cart".into(),
            args: json!({"qty": 2}),
            result: Some(json!({"cart": 2})),
        }],
        run_id: None,
    }];
    let prompt = prompts::judge_prompt(CART, &setup, &turns, Some("thanks"), EndedBy::User);
    for want in [
        CART,
        "not the assistant's work",
        "1. tool \"empty_cart\", arguments {}",
        "   result: \"emptied\"",
        "- call 1: tool \"add_to_cart\", arguments {\"qty\":2}",
        "  result from the application: {\"cart\":2}",
        "Assistant said (a claim, not evidence): \"Done!\"",
        "User's parting message: \"thanks\"",
        "The user ended the conversation",
    ] {
        assert!(prompt.contains(want), "{want}: {prompt}");
    }
    // Huge results are cut, and the whole stays within its budget.
    let big = [Turn {
        tool_calls: vec![
            TurnCall {
                function_name: "f".into(),
                args: json!({}),
                result: Some(json!("x".repeat(500_000)))
            };
            3
        ],
        ..turns[0].clone()
    }];
    let prompt = prompts::judge_prompt(CART, &[], &big, None, EndedBy::MaxTurns);
    assert!(
        prompt.len() <= crate::core::limits::MAX_SIM_TRANSCRIPT_BYTES,
        "{}",
        prompt.len()
    );
    assert!(prompt.contains("… (cut)"));
}

#[test]
fn the_turn_and_time_budgets_end_the_conversation_and_are_reported() {
    // The user never ends it: four turns, then maxTurns; the page is right, so a pass.
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    let mut user = 0;
    let mut sim = Simulate::new(request(cart_case(), json!({})), None, "s".into());
    let mut scripted = world(&calls, "2", judge_answer(true, &["cart 2"]));
    let (answer, asked) = play(&mut sim, |next| match next {
        Next::Run {
            role: Role::User,
            request,
            ..
        } => {
            user += 1;
            Reply::Ran(Ok(agent_answer(request, &format!("more {user}"), &[])))
        }
        other => scripted(other),
    });
    let result = &answer["results"][0];
    assert_eq!(result["conversation"]["endedBy"], "maxTurns");
    assert_eq!(result["conversation"]["turnsUsed"], 4);
    assert_eq!(runs(&asked, Role::Agent).len(), 4);
    assert_eq!(result["outcome"], "pass");
    // Each agent turn carries the conversation so far: turn 4 sees the three before.
    let last = runs(&asked, Role::Agent).pop().unwrap();
    let users = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .count();
    assert_eq!(users, 4);
    // A 1.5 s budget: the first agent turn ends past it (the clock moves 1 s a step).
    let case = json!([{"name": "t", "userScenario": "s", "maxTurns": 9, "maxDurationMs": 1500, "successCriteria": CART}]);
    let mut sim = Simulate::new(request(case, json!({})), None, "s".into());
    let (answer, asked) = play(
        &mut sim,
        world(&calls, "2", judge_answer(true, &["cart 2"])),
    );
    let result = &answer["results"][0];
    assert_eq!(result["conversation"]["endedBy"], "timeout", "{result:#}");
    assert_eq!(runs(&asked, Role::Agent).len(), 1);
    // After the suite's start (its listing), the user's first line.
    let Next::Run { within_ms, .. } = &asked[1] else {
        panic!()
    };
    assert_eq!(*within_ms, 1500, "the run is told the time left");
    assert_eq!(
        result["verdict"]["endedBy"], "timeout",
        "an exhausted budget is still judged"
    );
}

#[test]
fn a_failed_setup_call_is_an_error_and_nothing_else_runs() {
    let mut sim = Simulate::new(request(cart_case(), json!({})), None, "s".into());
    let (answer, asked) = play(&mut sim, |next| match next {
        Next::ListTools { .. } => listed(&["empty_cart"]),
        Next::Call { .. } => {
            Reply::Called(CallAnswer::text(r#"{"success": false, "why": "locked"}"#))
        }
        other => panic!("unexpected {other:?}"),
    });
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "error");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .starts_with("setup call 1 (empty_cart) failed"),
        "{result}"
    );
    assert_eq!(result["setupCalls"][0]["outcome"], "error");
    assert_eq!(
        asked.len(),
        3,
        "the suite's start, the setup call listed, then made"
    );
}

#[test]
fn an_unreadable_dom_is_an_error_not_a_failure() {
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    let mut sim = Simulate::new(request(cart_case(), json!({})), None, "s".into());
    let mut scripted = world(&calls, "2", judge_answer(true, &["x"]));
    let (answer, _) = play(&mut sim, |next| match next {
        Next::QueryDom { .. } => Reply::Queried(Ok(vec![DomObserved {
            count: 0,
            text: None,
            attribute: None,
            error: Some("invalid selector".into()),
        }])),
        other => scripted(other),
    });
    assert_eq!(answer["results"][0]["outcome"], "error");
    assert!(answer["results"][0]["error"]
        .as_str()
        .unwrap()
        .contains("invalid selector"));
}

#[test]
fn a_recorded_failure_replays_to_the_same_verdict_with_no_model_call() {
    let calls = [("add_to_cart", json!({"qty": 1}), json!({"cart": 1}))];
    let case =
        json!([{"name": "c", "userScenario": "two mugs", "maxTurns": 3, "successCriteria": CART}]);
    let mut sim = Simulate::new(request(case.clone(), json!({})), None, "s".into());
    let (first, _) = play(
        &mut sim,
        world(&calls, "", judge_answer(false, &["cart is 1"])),
    );
    let recorded = &first["results"][0];
    assert_eq!(recorded["outcome"], "fail");
    assert_eq!(recorded["recording"]["user"].as_array().unwrap().len(), 2);
    assert_eq!(recorded["recording"]["agent"].as_array().unwrap().len(), 1);
    assert!(
        recorded["recording"]["judge"]["input"]
            .as_str()
            .unwrap()
            .len()
            == 64
    );

    // Replayed: every run carries its recorded transcript (the replay provider answers, not a
    // model), and the unchanged judge transcript is answered as recorded.
    let mut sim = Simulate::new(
        request(
            case.clone(),
            json!({"replay": first.clone(), "judgeModel": null}),
        ),
        None,
        "s2".into(),
    );
    let (again, asked) = play(
        &mut sim,
        world(&calls, "", judge_answer(false, &["cart is 1"])),
    );
    for r in runs(&asked, Role::User)
        .iter()
        .chain(&runs(&asked, Role::Agent))
        .chain(&runs(&asked, Role::Judge))
    {
        assert!(r["replay"].is_string(), "{r}");
    }
    let result = &again["results"][0];
    assert_eq!(result["outcome"], "fail");
    assert_eq!(
        result["verdict"]["reasoning"],
        recorded["verdict"]["reasoning"]
    );
    assert_eq!(result["replayed"], true);

    // The site fixed: the agent's same call now answers otherwise, so the judge's transcript
    // changed; with no judge named, that is said, not guessed.
    let fixed = [("add_to_cart", json!({"qty": 1}), json!({"cart": 2}))];
    let mut sim = Simulate::new(
        request(
            case.clone(),
            json!({"replay": first.clone(), "judgeModel": null}),
        ),
        None,
        "s3".into(),
    );
    let (changed, asked) = play(
        &mut sim,
        world(&fixed, "", judge_answer(true, &["cart is 2"])),
    );
    assert!(runs(&asked, Role::Judge).is_empty());
    assert!(changed["results"][0]["error"]
        .as_str()
        .unwrap()
        .contains("no `judgeModel`"));
    // With a judge named, only the judge is asked again (no replay transcript for it).
    let mut sim = Simulate::new(request(case, json!({"replay": first})), None, "s4".into());
    let (rejudged, asked) = play(
        &mut sim,
        world(&fixed, "", judge_answer(true, &["\"cart\": 2"])),
    );
    assert!(runs(&asked, Role::Judge)[0].get("replay").is_none());
    assert!(runs(&asked, Role::Agent)[0]["replay"].is_string());
    assert_eq!(rejudged["results"][0]["outcome"], "pass");
}

#[test]
fn runs_and_models_give_pass_k_and_the_judge_is_never_the_agent_unasked() {
    let case = json!([{"name": "c", "userMessage": "Two mugs", "successCriteria": CART}]);
    let error =
        SimulateRequest::parse(&json!({"tabId": 1, "mode": "simulate", "simulations": case}))
            .unwrap_err();
    assert!(error.contains("`judgeModel` is required"), "{error}");
    let calls = [("add_to_cart", json!({"qty": 2}), json!({"cart": 2}))];
    let mut sim = Simulate::new(
        request(case, json!({"models": ["a", "judge"], "runs": 2})),
        None,
        "s".into(),
    );
    let mut n = 0;
    let mut scripted = world(&calls, "", judge_answer(true, &["cart 2"]));
    let (answer, _) = play(&mut sim, |next| match next {
        Next::Run {
            role: Role::Judge, ..
        } => {
            n += 1;
            Reply::Ran(Ok(judge_answer(n != 2, &["cart"])))
        }
        other => scripted(other),
    });
    assert_eq!(answer["testCount"], 4);
    assert_eq!(
        answer["models"]["a"]["pass^k"], 0.0,
        "{:#}",
        answer["models"]
    );
    assert_eq!(answer["models"]["judge"]["pass^k"], 1.0);
    assert_eq!(
        answer["judgeIsAgent"], true,
        "the report says the judge is an agent model"
    );
    assert_eq!(answer["results"][2]["judgeIsAgent"], true);
    assert!(answer["results"][0].get("judgeIsAgent").is_none());
}

#[test]
fn a_run_request_with_no_tools_or_a_replay_is_checked() {
    use crate::core::ops::request::RunRequest;
    let ok =
        RunRequest::parse(&json!({"prompt": "hi", "noTools": true, "replay": "{\"text\":\"x\"}"}))
            .unwrap();
    assert!(ok.no_tools && ok.replay.is_some());
    for (bad, want) in [
        (
            json!({"prompt": "hi", "noTools": true, "tabId": 3}),
            "no `tabId`",
        ),
        (
            json!({"prompt": "hi", "noTools": "yes"}),
            "`noTools` must be true or false",
        ),
        (
            json!({"prompt": "hi", "replay": "not json"}),
            "`replay`: transcript line 1",
        ),
    ] {
        let error = RunRequest::parse(&bad).unwrap_err().0;
        assert!(error.contains(want), "{bad}: {error}");
    }
}

#[test]
fn the_reports_show_the_verdict_the_dom_and_the_turns_escaped_and_say_when_the_judge_is_an_agent() {
    let case = json!([{"name": "c", "userMessage": "<b>Two</b> mugs", "successCriteria": CART,
        "assertions": [{"type": "dom", "selector": ".cart", "expect": {"text": "2"}}]}]);
    let calls = [(
        "add_to_cart",
        json!({"qty": 2}),
        json!("<script>alert(1)</script>"),
    )];
    let mut sim = Simulate::new(
        request(case, json!({"models": ["judge"]})),
        None,
        "s".into(),
    );
    let (answer, _) = play(
        &mut sim,
        world(
            &calls,
            "2",
            judge_answer(true, &["add_to_cart: <img src=x>"]),
        ),
    );
    let html = crate::core::evals::report::Format::parse("html")
        .unwrap()
        .render(&answer);
    for want in [
        "Judge's reasoning",
        "Evidence the judge cited",
        "add_to_cart: &lt;img src=x&gt;",
        "DOM assertions",
        "&lt;script&gt;alert(1)&lt;/script&gt;",
        "&lt;b&gt;Two&lt;/b&gt; mugs",
        "grades its own runs",
    ] {
        assert!(html.contains(want), "{want}");
    }
    assert!(!html.contains("<script>") && !html.contains("<img src=x>"));
    let markdown = crate::core::evals::report::Format::parse("markdown")
        .unwrap()
        .render(&answer);
    assert!(
        markdown.contains("⚠️") && markdown.contains("grades its own runs"),
        "{markdown}"
    );
}

#[test]
fn a_conversation_is_not_carried_to_another_origin() {
    let calls = [("add_to_cart", json!({"qty": 1}), json!({"cart": 1}))];
    let case =
        json!([{"name": "c", "userScenario": "two mugs", "maxTurns": 3, "successCriteria": CART}]);
    let mut sim = Simulate::new(request(case, json!({})), None, "s".into());
    let mut listings = 0;
    let mut user = 0;
    let mut scripted = world(&calls, "", judge_answer(true, &["cart 1"]));
    let (answer, asked) = play(&mut sim, |next| match next {
        Next::ListTools { .. } => {
            listings += 1;
            // The suite's start and the first turn on the shop; the agent's first call took
            // the tab to another site.
            let origin = if listings <= 2 {
                "https://shop.test"
            } else {
                "https://evil.test"
            };
            Reply::Listed(crate::core::page::tabs::fixture::listed(
                &format!("{origin}/"),
                &[],
            ))
        }
        Next::Run {
            role: Role::User,
            request,
            ..
        } => {
            user += 1;
            Reply::Ran(Ok(agent_answer(request, &format!("line {user}"), &[])))
        }
        other => scripted(other),
    });
    let result = &answer["results"][0];
    assert_eq!(result["outcome"], "error");
    assert!(
        result["error"]
            .as_str()
            .unwrap()
            .contains("before the agent's turn 2, the tab shows https://evil.test, not https://shop.test where the suite began"),
        "{result}"
    );
    assert_eq!(
        runs(&asked, Role::Agent).len(),
        1,
        "no turn on the other origin"
    );
    assert!(runs(&asked, Role::Judge).is_empty());
}

mod judge;
mod origin;
mod ready;
