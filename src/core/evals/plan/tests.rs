use serde_json::{json, Value};

use super::*;
use crate::core::evals::report::{self, escape, eval_report, percentile, Format};
use crate::core::evals::{matcher, messages, EvalMessage};
use crate::core::page::call::CallAnswer;
use crate::core::page::tabs::fixture;
use crate::core::run::RunOutcome;

pub(super) fn request(evals: Value, mode: &str, extra: Value) -> EvaluateRequest {
    let mut r = json!({"tabId": 7, "evals": evals, "mode": mode});
    for (k, v) in extra.as_object().unwrap() {
        r[k] = v.clone();
    }
    EvaluateRequest::parse(&r).expect("parses")
}

fn shop_evals() -> Value {
    json!([
        {"name": "search", "messages": [{"role": "user", "type": "message", "content": "find mugs"}],
         "expectedCall": [{"functionName": "search", "arguments": {"query": {"$contains": "mug"}, "max": {"$gt": 4}},
                           "result": {"count": {"$gte": 1}}}]},
        {"name": "chat", "messages": [{"role": "user", "type": "message", "content": "hello"}], "expectedCall": null},
        {"messages": [{"role": "user", "type": "message", "content": "buy two"}],
         "expectedCall": [{"ordered": [{"functionName": "search", "arguments": {"query": "cup"}},
                                       {"unordered": [{"functionName": "add", "arguments": {"qty": 2}},
                                                      {"functionName": "note", "optional": true}]}]}]}
    ])
}

/// A run's end whose assistant made these calls (name, args, result text).
pub(super) fn run_answer(calls: &[(&str, Value, &str)]) -> RunEnded {
    let mut messages = vec![json!({"role": "user", "id": "u", "content": "x"})];
    for (i, (name, args, result)) in calls.iter().enumerate() {
        messages.push(json!({"role": "assistant", "id": format!("a{i}"), "toolCalls": [
            {"id": format!("c{i}"), "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}));
        messages.push(json!({"role": "tool", "id": format!("t{i}"), "toolCallId": format!("c{i}"), "content": result}));
    }
    let ok = RunOutcome::Completed { text: "ok".into() };
    RunEnded::told("r1", ok, json!(messages))
}

#[test]
fn requests_parse_with_clear_errors() {
    let ok = request(shop_evals(), "smoke", json!({}));
    assert_eq!(
        (ok.tab_id, ok.cases.len(), ok.mode, ok.runs),
        (7, 3, Mode::Smoke, 1)
    );
    let text = request(
        json!(shop_evals().to_string()),
        "agent",
        json!({"models": ["a", "b"], "runs": 3}),
    );
    assert_eq!(
        (text.models.len(), text.runs),
        (2, 3),
        "evals may be the file's text"
    );
    for (bad, says) in [
        (json!({"evals": [], "mode": "smoke"}), "tabId"),
        (json!({"tabId": 1, "mode": "smoke"}), "evals"),
        (json!({"tabId": 1, "evals": [], "mode": "fast"}), "mode"),
        (
            json!({"tabId": 1, "evals": [], "mode": "agent", "runs": 0}),
            "runs",
        ),
        (
            json!({"tabId": 1, "evals": [], "mode": "agent", "models": [3]}),
            "models",
        ),
        (
            json!({"tabId": 1, "evals": "[{}]", "mode": "agent"}),
            "expectedCall",
        ),
        (
            json!({"tabId": 1, "evals": [], "mode": "agent", "format": "pdf"}),
            "pdf",
        ),
        (
            json!({"tabId": 1, "evals": [], "mode": "smoke", "reload": "yes"}),
            "reload",
        ),
        (json!("nope"), "object"),
    ] {
        let error = EvaluateRequest::parse(&bad).unwrap_err();
        assert!(error.contains(says), "{error} should name {says}");
    }
}

#[test]
fn concrete_values_satisfy_their_matchers() {
    let value = json!({"q": {"$contains": "mug"}, "n": {"$gt": 4}, "m": {"$lt": 2.5}, "k": {"$lte": 9},
        "p": {"$pattern": "^Paris$"}, "r": {"$pattern": "^a.*b$"}, "t": {"$type": "boolean"}, "any": {"$any": true},
        "list": [{"$type": "number"}], "plain": {"x": 1, "$skip": 2}});
    let got = concrete(&value);
    assert_eq!(
        got,
        json!({"q": "mug", "n": 5, "m": 1.5, "k": 9, "p": "Paris", "r": "sample", "t": true,
        "any": "sample", "list": [1], "plain": {"x": 1}})
    );
    for key in ["q", "n", "m", "k", "p", "t", "list"] {
        assert!(matcher::matches(&value[key], &got[key]).unwrap(), "{key}");
    }
}

/// The suite's start: its first listing answered with the shop.
pub(super) fn start(ev: &mut Evaluation) {
    assert_eq!(
        ev.poll(),
        Next::ListTools {
            tab_id: 7,
            name: None,
            after_ms: 0,
            settle: crate::core::page::ready::Settle::Loaded,
        },
        "the suite's start reads the tab's origin"
    );
    let tools = fixture::listed("https://shop.test/", &[]);
    assert_eq!(ev.handle(Reply::Listed { tools, now_ms: 0.0 }), None);
}

/// The next step of an evaluation, each listing answered with the tool it asks for.
pub(super) fn poll_smoke(ev: &mut Evaluation) -> Next {
    loop {
        match ev.poll() {
            Next::ListTools { name, .. } => {
                let name = name.unwrap_or_default();
                let tools = fixture::listed("https://shop.test/", &[name.as_str()]);
                assert_eq!(ev.handle(Reply::Listed { tools, now_ms: 0.0 }), None);
            }
            next => return next,
        }
    }
}

#[test]
fn smoke_mode_performs_the_calls_in_listed_order_and_checks_results() {
    let mut ev = Evaluation::new(request(shop_evals(), "smoke", json!({})), None);
    let Next::Call {
        name, args, tab_id, ..
    } = poll_smoke(&mut ev)
    else {
        panic!("a call")
    };
    assert_eq!((tab_id, name.as_str()), (7, "search"));
    assert_eq!(Value::Object(args), json!({"query": "mug", "max": 5}));
    let done = ev.handle(Reply::Called {
        answer: CallAnswer {
            confirmation: Some("allowed by site policy https://shop.test".into()),
            ..CallAnswer::text("{\"count\": 0}")
        },
        now_ms: f64::NAN,
    });
    let done = done.expect("the case ended");
    // A call that acted without the question says how it was allowed, in the result and report.
    assert_eq!(
        done["calls"][0]["confirmation"],
        "allowed by site policy https://shop.test"
    );
    let page = Format::Html.render(&report::summary(Mode::Smoke, vec![done.clone()]));
    assert!(page.contains("allowed by site policy https://shop.test"));
    assert_eq!(done["outcome"], "fail");
    assert!(
        done["reason"].as_str().unwrap().contains("does not match"),
        "{done}"
    );
    assert_eq!(done["calls"][0]["result"], json!({"count": 0}));
    // The case with no call passes without calling; the third calls search, add, note in order.
    let mut names = Vec::new();
    loop {
        match poll_smoke(&mut ev) {
            Next::Call { name, .. } => {
                names.push(name);
                ev.handle(Reply::Called {
                    answer: CallAnswer::text("done"),
                    now_ms: f64::NAN,
                });
            }
            Next::Done(answer) => {
                assert_eq!(names, ["search", "add", "note"]);
                assert_eq!(answer["results"][1]["outcome"], "pass");
                assert_eq!(
                    answer["results"][2]["name"], "buy two",
                    "named by its prompt"
                );
                assert_eq!(
                    (answer["testCount"].as_u64(), answer["passCount"].as_u64()),
                    (Some(3), Some(2))
                );
                assert_eq!(answer["failCount"], 1);
                assert_eq!(answer["models"], json!({}));
                break;
            }
            Next::Run { .. } | Next::Log { .. } | Next::ListTools { .. } | Next::Reload { .. } => {
                panic!("no run, and no reload unless asked, in smoke mode")
            }
        }
    }
}

#[test]
fn smoke_errors_stop_the_case_and_reported_failures_fail_it() {
    let evals = json!([{"name": "two", "messages": [], "expectedCall": [
        {"functionName": "a", "arguments": {}}, {"functionName": "b", "arguments": {}}]}]);
    let mut ev = Evaluation::new(request(evals.clone(), "smoke", json!({})), None);
    poll_smoke(&mut ev);
    let r = ev
        .handle(Reply::Called {
            answer: CallAnswer::failed("unknown tool `a`"),
            now_ms: f64::NAN,
        })
        .unwrap();
    assert_eq!(
        (r["outcome"].as_str(), r["reason"].as_str()),
        (Some("error"), Some("step 1 (a): unknown tool `a`"))
    );
    assert_eq!(
        r["calls"][0].get("made"),
        None,
        "a call that ran and failed was made"
    );
    assert!(
        matches!(ev.poll(), Next::Done(_)),
        "b is not called after a failed"
    );
    // A tool the tab does not offer: the call is recorded as not made, with what the tab offers.
    let mut ev = Evaluation::new(request(evals.clone(), "smoke", json!({})), None);
    poll_smoke(&mut ev);
    let r = ev
        .handle(Reply::Called {
            answer: CallAnswer::failed(
                "no page tool named `a`; the tab offers: search_teas, add_to_cart",
            ),
            now_ms: f64::NAN,
        })
        .unwrap();
    assert_eq!(r["calls"][0]["made"], false);
    let page = Format::Html.render(&report::summary(Mode::Smoke, vec![r.clone()]));
    assert!(page.contains("not made: no page tool named `a`"), "{page}");
    assert!(r["calls"][0]["error"]
        .as_str()
        .unwrap()
        .ends_with("the tab offers: search_teas, add_to_cart"));
    for failure in [
        "Error: out of stock",
        "{\"success\": false, \"error\": \"nope\"}",
        "{\"isError\": true}",
    ] {
        let mut ev = Evaluation::new(request(evals.clone(), "smoke", json!({})), None);
        poll_smoke(&mut ev);
        let r = ev
            .handle(Reply::Called {
                answer: CallAnswer::text(failure),
                now_ms: f64::NAN,
            })
            .unwrap();
        assert_eq!(r["outcome"], "fail", "{failure}");
    }
    let bad = json!([{"messages": [], "expectedCall": [{"functionName": "a", "arguments": {"$type": "object"}}]}]);
    let mut ev = Evaluation::new(request(bad, "smoke", json!({})), None);
    let Next::Done(answer) = poll_smoke(&mut ev) else {
        panic!("no call")
    };
    assert_eq!(answer["errorCount"], 1);
}

#[test]
fn case_messages_become_agui_messages() {
    let case: Vec<EvalMessage> = serde_json::from_value(json!([
        {"role": "user", "type": "message", "content": "hi"},
        {"role": "model", "type": "functioncall", "name": "a", "arguments": {"x": 1}},
        {"role": "model", "type": "functioncall", "name": "b", "arguments": {}},
        {"role": "user", "type": "functionresponse", "name": "b", "response": {"ok": true}},
        {"role": "user", "type": "functionresponse", "name": "a", "response": "done"},
        {"role": "user", "type": "functionresponse", "name": "zzz", "response": "lost"},
        {"role": "model", "type": "message", "content": "ok"}
    ]))
    .unwrap();
    let messages = agui_messages(&case);
    assert_eq!(messages.len(), 5);
    assert_eq!(
        messages[1]["toolCalls"].as_array().unwrap().len(),
        2,
        "consecutive calls: one message"
    );
    assert_eq!(
        messages[2],
        json!({"role": "tool", "id": "eval_m3", "toolCallId": "eval_c2", "content": "{\"ok\":true}"})
    );
    assert_eq!(messages[3]["toolCallId"], "eval_c1");
    assert_eq!(messages[4]["role"], "assistant");
    for m in &messages {
        let _: crate::core::agui::Message =
            serde_json::from_value(m.clone()).expect("an AG-UI message");
    }
}

#[test]
fn agent_mode_runs_each_case_per_model_and_run_and_judges_the_calls() {
    let evals = json!([
        {"name": "search", "messages": [{"role": "user", "type": "message", "content": "find mugs"},
            {"role": "model", "type": "functioncall", "name": "old", "arguments": {}}],
         "expectedCall": [{"functionName": "search", "arguments": {"query": "mugs"}}]},
        {"name": "chat", "messages": [{"role": "user", "type": "message", "content": "hello"}], "expectedCall": null}
    ]);
    let mut ev = Evaluation::new(
        request(evals, "agent", json!({"models": ["m1", "m2"], "runs": 2})),
        None,
    )
    .with_suite("eval_s1".into());
    let mut seen = Vec::new();
    let mut tags = Vec::new();
    let answers = [
        Ok(run_answer(&[(
            "search",
            json!({"query": "mugs"}),
            "3 found",
        )])), // pass
        Ok(run_answer(&[("search", json!({"query": "cups"}), "0")])), // wrong argument
        Ok(run_answer(&[])),                                          // missing call
        Err("no model named `m2`".to_owned()),                        // error
        Ok(run_answer(&[("search", json!({}), "x")])),                // extra call (none expected)
        Ok(run_answer(&[])),
        Ok(RunEnded::told("", failed("model down"), json!([]))),
        Ok(run_answer(&[])),
    ];
    let mut answers = answers.into_iter();
    let answer = loop {
        match ev.poll() {
            Next::Run { model, request } => {
                seen.push(model);
                tags.push(request["eval"].clone());
                assert_eq!(request["tabId"], 7);
                assert!(request["model"].is_string());
                ev.handle(Reply::Ran {
                    answer: answers.next().unwrap(),
                    latency_ms: 100.0 * seen.len() as f64,
                });
            }
            Next::Log { run_id } => {
                assert_eq!(run_id, "r1");
                ev.handle(Reply::Logged(Err("runLog: no run `r1` is kept".into())));
            }
            Next::Done(answer) => break answer,
            // The suite's start, then before each run: the tab's origin read and checked.
            Next::ListTools { name: None, .. } => {
                let tools = fixture::listed("https://shop.test/", &[]);
                ev.handle(Reply::Listed { tools, now_ms: 0.0 });
            }
            Next::Call { .. } | Next::ListTools { .. } | Next::Reload { .. } => {
                panic!("no call, and no reload unless asked, in agent mode")
            }
        }
    };
    assert_eq!(seen, ["m1", "m1", "m2", "m2", "m1", "m1", "m2", "m2"]);
    // Each run is tagged with its suite, case, run and model (the run list groups them, traces
    // carry them); the answer names its suite.
    assert_eq!(
        tags[3],
        json!({"suite": "eval_s1", "case": "search", "run": 1, "model": "m2"})
    );
    assert_eq!(tags[4]["case"], "chat");
    assert_eq!(answer["suite"], "eval_s1");
    assert_eq!(
        answer["results"][0]["timelineError"],
        "runLog: no run `r1` is kept"
    );
    assert!(
        answer["results"][3].get("timelineError").is_none(),
        "no run, no log"
    );
    let outcomes: Vec<&str> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes,
        ["pass", "fail", "fail", "error", "fail", "pass", "error", "pass"]
    );
    let reason = |i: usize| answer["results"][i]["reason"].as_str().unwrap().to_owned();
    assert!(
        reason(1).contains("search called with {\"query\":\"cups\"}"),
        "{}",
        reason(1)
    );
    assert!(reason(2).contains("missing call: search"), "{}", reason(2));
    assert!(
        reason(4).starts_with("expected no tool call; made search"),
        "{}",
        reason(4)
    );
    assert!(reason(6).contains("model down"));
    assert_eq!(
        answer["results"][0]["calls"],
        json!([{"name": "search", "args": {"query": "mugs"}, "result": "3 found"}]),
        "the case's own calls are left out"
    );
    assert_eq!(answer["results"][1]["runIndex"], 1);
    assert_eq!(answer["models"]["m1"]["passRate"], 0.5);
    assert_eq!(
        answer["models"]["m1"]["latencyMs"],
        json!({"median": 200.0, "p95": 600.0})
    );
    assert_eq!(
        answer["models"]["m1"]["tokens"],
        Value::Null,
        "unknown tokens are null"
    );
    assert_eq!(
        (answer["testCount"].as_u64(), answer["errorCount"].as_u64()),
        (Some(8), Some(2))
    );
}

#[test]
fn tokens_are_read_when_a_run_reports_them() {
    let reported = run_answer(&[]).with_tokens(5, 2).with_tokens(3, 1);
    assert_eq!(run_tokens(&reported.usage), Some(11));
    assert_eq!(run_tokens(&run_answer(&[]).usage), None, "unknown");
}

/// A run that failed with this message.
fn failed(message: &str) -> RunOutcome {
    RunOutcome::Failed {
        message: message.into(),
    }
}

#[test]
fn percentiles_are_nearest_rank() {
    assert_eq!(percentile(&[], 50.0), Value::Null);
    assert_eq!(percentile(&[5.0], 95.0), json!(5.0));
    let v: Vec<f64> = (1..=20).map(f64::from).collect();
    assert_eq!(
        (percentile(&v, 50.0), percentile(&v, 95.0)),
        (json!(10.0), json!(19.0))
    );
}

fn hostile_answer() -> Value {
    let evil = "<script>alert(1)</script>\"&'\u{1}";
    json!({"mode": "agent", "testCount": 2, "passCount": 1, "failCount": 1, "errorCount": 0,
    "models": {evil: {"passRate": 0.5, "runs": 2, "latencyMs": {"median": 1.0, "p95": 2.0}, "tokens": null}},
    "results": [
        {"name": evil, "model": evil, "runIndex": 0, "outcome": "pass", "calls": [{"name": evil, "args": {"x": evil}, "result": evil}], "prompt": evil, "expected": [{"functionName": evil}], "latencyMs": 1.0},
        {"name": "b", "model": evil, "runIndex": 1, "outcome": "fail", "reason": evil, "calls": [], "prompt": "p", "expected": null, "latencyMs": 2.0}
    ]})
}

#[test]
fn reports_escape_everything_a_page_or_model_wrote() {
    let answer = hostile_answer();
    let html = Format::Html.render(&answer);
    assert!(!html.contains("<script>"), "no markup from the page");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;&#39;\u{FFFD}"));
    assert!(html.contains("Content-Security-Policy"));
    let xml = Format::Junit.render(&answer);
    assert!(!xml.contains("<script>") && !xml.contains('\u{1}'));
    assert!(xml.contains("<failure message=\"&lt;script&gt;"));
    assert!(xml.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"webmcp-evals\" tests=\"2\" failures=\"1\" errors=\"0\">"));
    assert_eq!(escape("a\tb\u{0}"), "a\tb\u{FFFD}");
    let json_text = eval_report(&json!({"report": answer, "format": "json"})).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(json_text.as_str().unwrap()).unwrap(),
        hostile_answer()
    );
    assert!(eval_report(&json!({"report": {}, "format": "html"}))
        .unwrap_err()
        .contains("report"));
    assert!(
        eval_report(&json!({"report": hostile_answer(), "format": "csv"}))
            .unwrap_err()
            .contains("csv")
    );
}

#[test]
fn a_format_adds_the_report_to_the_answer() {
    let evals = json!([{"name": "none", "messages": [], "expectedCall": null}]);
    let mut ev = Evaluation::new(request(evals, "smoke", json!({"format": "junit"})), None);
    let Next::Done(answer) = poll_smoke(&mut ev) else {
        panic!("done")
    };
    assert!(answer["report"]
        .as_str()
        .unwrap()
        .contains("<testcase classname=\"webmcp-evals.smoke\" name=\"none\""));
}

#[test]
fn the_cli_writes_a_saved_answer_as_a_report() {
    use crate::core::cli::eval_report;
    let saved = hostile_answer().to_string();
    let read = |_: &str| Ok::<_, String>(saved.clone());
    let junit = eval_report(&["answer.json"], read);
    assert_eq!(junit.code, 1, "a failed result: exit 1");
    assert!(junit.stdout.starts_with("<?xml"));
    assert!(junit.stderr.contains("1 result(s) failed or errored"));
    let html = eval_report(&["answer.json", "--format=html"], read);
    assert!(html.stdout.starts_with("<!doctype html>"));
    let summary = eval_report(&["answer.json", "--format", "markdown"], read);
    assert_eq!(summary.code, 1);
    assert!(
        summary.stdout.starts_with("## ❌ WebMCP evals"),
        "{}",
        summary.stdout
    );
    let sarif = eval_report(
        &[
            "answer.json",
            "--format=sarif",
            "--evals",
            "shop evals.json",
        ],
        read,
    );
    let log: Value = serde_json::from_str(&sarif.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let uri = &log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"];
    assert_eq!(uri, "shop%20evals.json");
    for (args, says) in [
        (&["a.json", "--evals"][..], "--evals needs"),
        (&["answer.json", "--format", "pdf"][..], "pdf"),
        (&[][..], "needs an answer"),
        (&["a.json", "b.json"][..], "one answer file"),
        (&["a.json", "--fast"][..], "unknown option"),
    ] {
        let answer = eval_report(args, read);
        assert_eq!(answer.code, 2);
        assert!(answer.stderr.contains(says), "{}", answer.stderr);
    }
    let unreadable = eval_report(&["gone.json"], |_| Err("no such file"));
    assert!(unreadable
        .stderr
        .contains("cannot read gone.json: no such file"));
    let not_json = eval_report(&["x.json"], |_| Ok::<_, String>("nope".into()));
    assert!(not_json.stderr.contains("not JSON"));
}

#[test]
fn untrusted_results_are_judged_as_the_tool_gave_them() {
    let wrapped =
        crate::core::run::wrap_as_data("https://shop.test", r#"{"count": 2, "note": "<b>"}"#);
    assert_eq!(
        messages::result_seen(&wrapped),
        json!({"count": 2, "note": "<b>"})
    );
    assert_eq!(messages::result_seen("plain"), json!("plain"));
    assert_eq!(
        messages::result_seen("<data source=\"x\">broken"),
        json!("<data source=\"x\">broken")
    );
}

#[test]
fn reports_of_odd_answers_never_panic() {
    let odd = json!({"results": [1, "x", null, {}, {"outcome": 3, "calls": "no", "runIndex": -1, "model": 5}], "models": {"m": 1}});
    for format in ["json", "junit", "html"] {
        let written = eval_report(&json!({"report": odd, "format": format})).unwrap();
        assert!(!written.as_str().unwrap().is_empty(), "{format}");
    }
    let junit = eval_report(&json!({"report": odd, "format": "junit"})).unwrap();
    assert_eq!(junit.as_str().unwrap().matches("<testcase ").count(), 5);
}

/// A run log (as `runLog` answers) of a run that called `search` with hostile text and answered.
fn search_log(evil: &str) -> Value {
    let events = json!([
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {"type": "STEP_STARTED", "stepName": "step_1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Searching."},
        {"type": "TOOL_CALL_START", "toolCallId": "c0", "toolCallName": "search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c0", "delta": "{\"query\":\"mugs\"}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c0"},
        {"type": "TOOL_CALL_RESULT", "messageId": "r", "toolCallId": "c0", "content": evil},
        {"type": "CUSTOM", "name": "webmcp_host.usage", "value": {"step": 1, "usage": "reported", "inputTokens": 120, "outputTokens": 8, "cachedInputTokens": null, "cost": 0.00042}},
        {"type": "STEP_FINISHED", "stepName": "step_1"},
        {"type": "STEP_STARTED", "stepName": "step_2"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m2", "delta": "Found 3 mugs."},
        {"type": "CUSTOM", "name": "webmcp_host.usage", "value": {"step": 2, "usage": "unknown", "inputTokens": null, "outputTokens": null}},
        {"type": "STEP_FINISHED", "stepName": "step_2"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1", "result": {"type": "completed", "text": "Found 3 mugs."}}
    ]);
    let times: Vec<f64> = (0..events.as_array().unwrap().len())
        .map(|i| 10.0 * i as f64)
        .collect();
    json!({"run": {"runId": "r1", "prompt": "find mugs", "state": "finished"}, "events": events, "times": times})
}

#[test]
fn an_agent_result_carries_its_runs_timeline_and_the_html_report_shows_it() {
    let evil = "<img src=x onerror=alert(1)>";
    let evals = json!([{"name": "search", "messages": [{"role": "user", "type": "message", "content": "find mugs"}],
        "expectedCall": [{"functionName": "search", "arguments": {"query": "mugs"}}]}]);
    let mut ev = Evaluation::new(request(evals, "agent", json!({"format": "html"})), None);
    assert!(matches!(poll_smoke(&mut ev), Next::Run { .. }));
    let done = ev.handle(Reply::Ran {
        answer: Ok(run_answer(&[("search", json!({"query": "mugs"}), evil)])),
        latency_ms: 50.0,
    });
    assert_eq!(done, None, "the result waits for its run's log");
    assert_eq!(ev.progress(), (0, 1));
    let Next::Log { run_id } = ev.poll() else {
        panic!("the run's log is read")
    };
    assert_eq!(run_id, "r1");
    let result = ev
        .handle(Reply::Logged(Ok(search_log(evil))))
        .expect("the result");
    let timeline = &result["timeline"];
    assert_eq!(timeline["state"], "finished");
    assert_eq!(timeline["answer"], "Found 3 mugs.");
    assert_eq!(timeline["entries"][0]["calls"][0]["name"], "search");
    assert_eq!(timeline["entries"][0]["tokens"]["inputTokens"], 120);
    let Next::Done(answer) = ev.poll() else {
        panic!("done")
    };
    assert_eq!(answer["results"][0]["timeline"], *timeline);
    let html = answer["report"].as_str().unwrap();
    assert!(html.contains("<details class=\"timeline\" open>"), "{html}");
    assert!(html.contains("Call <b>search</b>"));
    assert!(html.contains("Found 3 mugs."));
    assert!(html.contains("120 in · 8 out · $0.000420"));
    assert!(html.contains("tokens unknown"));
    assert!(
        !html.contains("<img"),
        "the page's text never becomes markup"
    );
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    assert!(html.contains("default-src 'none'"));
}

#[test]
fn hostile_timelines_are_escaped_and_odd_ones_never_panic() {
    let evil = "<script>x</script>";
    let mut answer = hostile_answer();
    answer["results"][0]["timeline"] = json!({"prompt": evil, "state": evil, "entries": [
        {"kind": "step", "text": evil, "tokens": {"usage": evil}, "calls": [
            {"name": evil, "writtenName": evil, "args": evil, "repairs": [evil], "confirmation": evil, "rejected": evil}]},
        {"kind": "error", "message": evil, "code": evil},
        {"kind": evil, "name": evil, "value": {"x": evil}},
        "not an entry"], "answer": evil});
    answer["results"][1]["timelineError"] = json!(evil);
    let html = Format::Html.render(&answer);
    assert!(!html.contains("<script>"), "{html}");
    assert_eq!(
        html.matches("&lt;script&gt;x&lt;/script&gt;").count(),
        15,
        "{html}"
    );
    answer["results"][0]["timeline"] = json!({"entries": 5, "durationMs": "x"});
    assert!(Format::Html.render(&answer).contains("0 steps"));
}

#[test]
fn a_smoke_case_takes_the_time_from_its_first_listing_to_its_last_answer() {
    let evals = json!([
        {"name": "one", "messages": [], "expectedCall": [{"functionName": "a", "arguments": {}}]},
        {"name": "two", "messages": [], "expectedCall": [{"functionName": "a", "arguments": {}}]}
    ]);
    let mut ev = Evaluation::new(request(evals, "smoke", json!({})), None);
    start(&mut ev);
    for (listed_at, answered_at) in [(1_000.0, 1_250.0), (2_000.0, 2_004.0)] {
        let Next::ListTools { name, .. } = ev.poll() else {
            panic!("a listing first")
        };
        let tools = fixture::listed("https://shop.test/", &[name.as_deref().unwrap()]);
        ev.handle(Reply::Listed {
            tools,
            now_ms: listed_at,
        });
        assert!(matches!(ev.poll(), Next::Call { .. }));
        ev.handle(Reply::Called {
            answer: CallAnswer::text("ok"),
            now_ms: answered_at,
        });
    }
    let Next::Done(answer) = ev.poll() else {
        panic!("done")
    };
    let times: Vec<&Value> = answer["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| &r["latencyMs"])
        .collect();
    assert_eq!(times, [&json!(250.0), &json!(4.0)]);
    let junit = Format::Junit.render(&answer);
    assert!(junit.contains("time=\"0.250\""), "{junit}");
    assert!(junit.contains("time=\"0.004\""), "{junit}");
}

#[test]
fn a_smoke_pass_whose_page_said_not_found_is_flagged_and_still_passes() {
    let one = |result: Value| -> Value {
        let evals = json!([{"name": "find", "messages": [],
            "expectedCall": [{"functionName": "find", "arguments": {}}]}]);
        let mut ev = Evaluation::new(request(evals, "smoke", json!({})), None);
        poll_smoke(&mut ev);
        let answer = CallAnswer::text(match result {
            Value::String(text) => text,
            other => other.to_string(),
        });
        if let Some(done) = ev.handle(Reply::Called {
            answer,
            now_ms: f64::NAN,
        }) {
            return done; // a failure ends the case at once
        }
        match poll_smoke(&mut ev) {
            Next::Done(answer) => answer["results"][0].clone(),
            _ => panic!("one call, then done"),
        }
    };
    let flagged = one(json!("Order not found"));
    assert_eq!(flagged["outcome"], "pass");
    assert_eq!(
        flagged["warning"],
        "passed, but the page said \"Order not found\" (step 1, `find`)"
    );
    let object = one(json!("{\"status\": \"Unavailable today\", \"items\": []}"));
    assert_eq!(object["outcome"], "pass");
    assert!(object["warning"]
        .as_str()
        .unwrap()
        .contains("Unavailable today"));
    // A result that says nothing of the kind has no warning.
    for quiet in [json!("3 rooms found"), json!("{\"count\": 2}"), json!("42")] {
        let r = one(quiet.clone());
        assert_eq!(
            (r["outcome"].as_str(), r.get("warning")),
            (Some("pass"), None),
            "{quiet}"
        );
    }
    // A failure the page reported fails the case: no warning on top.
    let failed = one(json!("error: out of stock"));
    assert_eq!(
        (failed["outcome"].as_str(), failed.get("warning")),
        (Some("fail"), None)
    );
}

mod origin;
mod refused;
mod wait;

#[test]
fn a_run_stopped_or_failed_is_an_error_that_says_why() {
    let cases = [
        (
            RunOutcome::Stopped {
                reason: "the person stopped it".into(),
            },
            "the run stopped: the person stopped it",
        ),
        (failed("model down"), "the run failed: model down"),
    ];
    for (outcome, why) in cases {
        let evals = json!([{"name": "chat", "expectedCall": null,
            "messages": [{"role": "user", "type": "message", "content": "hello"}]}]);
        let mut ev = Evaluation::new(request(evals, "agent", json!({"models": ["m1"]})), None);
        let answer = loop {
            match poll_smoke(&mut ev) {
                Next::Run { .. } => {
                    let answer = Ok(RunEnded::told("", outcome.clone(), json!([])));
                    ev.handle(Reply::Ran {
                        answer,
                        latency_ms: 1.0,
                    });
                }
                Next::Done(answer) => break answer,
                other => panic!("not asked here: {other:?}"),
            }
        };
        assert_eq!(answer["results"][0]["outcome"], "error", "{answer:#}");
        assert_eq!(answer["results"][0]["reason"], why);
    }
}
