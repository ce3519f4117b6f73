//! Reliability over repeated runs, the models' tokens and cost, and the Markdown and SARIF
//! reports.

use serde_json::{json, Value};

use super::{markdown, md, reliability, sarif};
use crate::core::evals::messages::Mode;
use crate::core::evals::report::{eval_report, summary};

/// An agent result of `case` with `model`, run `run`, passed or failed, with its tokens.
fn result(case: &str, model: &str, run: u64, pass: bool, cost: Option<f64>) -> Value {
    json!({"name": case, "model": model, "runIndex": run, "runId": format!("r_{case}_{run}"),
           "outcome": if pass { "pass" } else { "fail" },
           "reason": if pass { Value::Null } else { json!("missing call: add_to_cart") },
           "calls": [], "prompt": "p", "expected": null, "latencyMs": 100.0 + run as f64,
           "tokens": 30, "usage": {"inputTokens": 20, "outputTokens": 10, "cachedInputTokens": null},
           "cost": cost})
}

/// Three runs per case: `finds` passes all three, `adds` two of three, `orders` none.
fn three_runs() -> Value {
    let mut results = Vec::new();
    for (case, passes) in [
        ("finds", [true, true, true]),
        ("adds", [true, false, true]),
        ("orders", [false; 3]),
    ] {
        for (run, pass) in passes.into_iter().enumerate() {
            results.push(result(case, "m", run as u64, pass, Some(0.001)));
        }
    }
    summary(Mode::Agent, results)
}

#[test]
fn each_case_reports_its_pass_rate_pass_hat_k_and_pass_at_k() {
    let answer = three_runs();
    let cases = answer["cases"].as_array().unwrap();
    let row = |name: &str| cases.iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(
        row("adds"),
        json!({"name": "adds", "model": "m", "runs": 3, "passed": 2,
               "passRate": 2.0 / 3.0, "pass^k": false, "pass@k": true})
    );
    assert_eq!(
        (
            row("finds")["pass^k"].clone(),
            row("finds")["pass@k"].clone()
        ),
        (json!(true), json!(true))
    );
    assert_eq!(
        (
            row("orders")["pass^k"].clone(),
            row("orders")["pass@k"].clone()
        ),
        (json!(false), json!(false))
    );
    // The model: k runs a case, one case in three passed every run, two at least once.
    let m = &answer["models"]["m"];
    assert_eq!(m["k"], 3);
    assert_eq!(m["pass^k"], json!(1.0 / 3.0));
    assert_eq!(m["pass@k"], json!(2.0 / 3.0));
    assert_eq!(m["passRate"], json!(5.0 / 9.0));
    // Its tokens as AG-UI's TokenUsage (a count some run did not report is left out) and cost.
    assert_eq!(
        m["usage"],
        json!({"model": "m", "inputTokens": 180, "outputTokens": 90, "totalTokens": 270})
    );
    assert!((m["costUsd"].as_f64().unwrap() - 0.009).abs() < 1e-12);
    // One run not priced: the model's cost is unknown, not a smaller sum.
    let mut results = three_runs()["results"].as_array().unwrap().clone();
    results[4]["cost"] = Value::Null;
    assert_eq!(
        summary(Mode::Agent, results)["models"]["m"]["costUsd"],
        Value::Null
    );
    // Smoke: one run a case.
    let smoke = summary(
        Mode::Smoke,
        vec![json!({"name": "s", "runIndex": 0, "outcome": "pass", "calls": []})],
    );
    assert_eq!(
        reliability(smoke["results"].as_array().unwrap())[0]["runs"],
        1
    );
    assert_eq!(smoke["cases"][0]["pass^k"], true);
}

#[test]
fn the_markdown_summary_has_the_counts_the_models_the_shaky_cases_and_the_failures() {
    let text = eval_report(&json!({"report": three_runs(), "format": "markdown"})).unwrap();
    let text = text.as_str().unwrap();
    assert!(text.starts_with("## ❌ WebMCP evals (agent)\n"), "{text}");
    assert!(
        text.contains("**9 results**: 5 passed, 4 failed, 0 errors."),
        "{text}"
    );
    assert!(
        text.contains("| m | 56% | 33% | 67% | 3 | 101 ms | 102 ms | 270 | $0.0090 |"),
        "{text}"
    );
    assert!(text.contains("| adds | m | 2/3 | no | yes |"), "{text}");
    assert!(text.contains("| orders | m | 0/3 | no | no |"), "{text}");
    assert!(
        !text.contains("| finds | m |"),
        "a case that passed every run is not listed"
    );
    assert!(
        text.contains("<details><summary>4 not passed</summary>"),
        "{text}"
    );
    assert!(
        text.contains("- **adds** (m, run 2): fail: missing call: add\\_to\\_cart"),
        "{text}"
    );
    let green = summary(
        Mode::Smoke,
        vec![json!({"name": "s", "runIndex": 0, "outcome": "pass", "calls": []})],
    );
    assert!(markdown(&green).starts_with("## ✅ WebMCP evals (smoke)"));
}

#[test]
fn text_from_an_eval_file_or_a_page_is_inert_in_markdown() {
    let evil = "x](https://attacker.test) | ![i](https://attacker.test/p.png) <img src=x onerror=alert(1)>\n# heading";
    let mut bad = result(evil, evil, 0, false, None);
    bad["reason"] = json!(evil);
    let text = markdown(&summary(Mode::Agent, vec![bad]));
    for raw in ["](https://", "![", "<img", "\n# heading", "| ![", " | ![i]"] {
        assert!(!text.contains(raw), "{raw} in {text}");
    }
    assert_eq!(md("a|b\nc", 10), "a\\|b c");
    assert_eq!(md("abcdef", 3), "abc…");
}

#[test]
fn the_sarif_log_has_a_result_per_case_not_passed_located_at_its_case() {
    let mut answer = three_runs();
    answer["results"][0]["warning"] =
        json!("passed, but the page said \"not found\" (step 1, `find`)");
    let log = sarif(&answer, Some("evals/shop.json"));
    let results = log["runs"][0]["results"].as_array().unwrap();
    let ids: Vec<&str> = results
        .iter()
        .map(|r| r["ruleId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "eval-warning",
            "eval-fail",
            "eval-fail",
            "eval-fail",
            "eval-fail"
        ]
    );
    let failed = &results[1];
    assert_eq!(failed["level"], "error");
    assert_eq!(
        failed["locations"][0]["logicalLocations"][0]["fullyQualifiedName"],
        "adds [m #2]"
    );
    assert_eq!(
        failed["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "evals/shop.json"
    );
    // Brackets escaped: SARIF reads `[text](target)` in a message as a link.
    assert_eq!(
        failed["message"]["text"],
        "adds \\[m #2\\]: missing call: add_to_cart"
    );
    assert_eq!(results[0]["level"], "warning");
    // Each result's rule index points at its rule.
    let rules = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    for r in results {
        assert_eq!(
            rules[r["ruleIndex"].as_u64().unwrap() as usize]["id"],
            r["ruleId"]
        );
    }
    // Without a file, no physical location; a clean answer, no result.
    let clean = summary(
        Mode::Smoke,
        vec![json!({"name": "s", "runIndex": 0, "outcome": "pass", "calls": []})],
    );
    assert_eq!(sarif(&clean, None)["runs"][0]["results"], json!([]));
    assert!(
        sarif(&answer, None)["runs"][0]["results"][1]["locations"][0]
            .get("physicalLocation")
            .is_none()
    );
    assert!(eval_report(&json!({"report": answer, "format": "sarif", "file": 7})).is_err());
}

#[test]
fn a_result_that_never_ran_leaves_the_models_tokens_known_and_sums_never_wrap() {
    let mut results = three_runs()["results"].as_array().unwrap().clone();
    // A run that could not start: no run id, no usage.
    results.push(
        json!({"name": "late", "model": "m", "runIndex": 0, "outcome": "error",
                        "reason": "no model named `m`", "calls": []}),
    );
    let m = &summary(Mode::Agent, results.clone())["models"]["m"];
    assert_eq!(m["usage"]["inputTokens"], 180);
    assert!(m["costUsd"].is_number());
    // Counts near the top of u64 saturate instead of wrapping (or panicking).
    results[0]["usage"]["inputTokens"] = json!(u64::MAX);
    let m = &summary(Mode::Agent, results)["models"]["m"];
    assert_eq!(m["usage"]["inputTokens"], json!(u64::MAX));
    assert_eq!(m["usage"]["totalTokens"], json!(u64::MAX));
    // Nothing ran: nothing is known, not zero.
    let none = summary(
        Mode::Agent,
        vec![json!({"name": "x", "model": "m", "runIndex": 0, "outcome": "error", "calls": []})],
    );
    assert_eq!(none["models"]["m"]["usage"], json!({"model": "m"}));
    assert_eq!(none["models"]["m"]["costUsd"], Value::Null);
}

#[test]
fn a_bare_link_or_a_mention_in_an_eval_file_does_not_become_one_on_github() {
    let evil = "see https://attacker.test and www.attacker.test, ask @octocat or @org/team";
    let mut bad = result(evil, "m", 0, false, None);
    bad["reason"] = json!(evil);
    let text = markdown(&summary(Mode::Agent, vec![bad]));
    for raw in ["https://attacker", "www.attacker", "@octocat", "@org"] {
        assert!(!text.contains(raw), "{raw} in {text}");
    }
    assert!(text.contains("https:\u{200B}//attacker.test"));
    // SARIF's embedded links are escaped too.
    let mut linked = result("[click](https://attacker.test)", "m", 0, false, None);
    linked["reason"] = json!("[here](https://attacker.test)");
    let log = sarif(&summary(Mode::Agent, vec![linked]), None);
    let message = log["runs"][0]["results"][0]["message"]["text"]
        .as_str()
        .unwrap();
    assert!(
        !message.contains("[click]") && !message.contains("[here]"),
        "{message}"
    );
    assert!(
        message.contains("\\[click\\](https://attacker.test)"),
        "{message}"
    );
}

#[test]
fn a_summary_of_many_failures_fits_a_pull_request_comment() {
    let results: Vec<Value> = (0..500)
        .map(|i| {
            let mut r = result(&format!("case {i}"), "m", 0, false, None);
            r["reason"] = json!("x".repeat(400));
            r
        })
        .collect();
    let text = markdown(&summary(Mode::Agent, results));
    assert!(
        text.len() <= crate::core::limits::MAX_SUMMARY_BYTES + 100,
        "{} bytes",
        text.len()
    );
    assert!(text.contains("The first 50 (and 450 more in the full report)"));
}

#[test]
fn two_cases_with_one_name_are_two_cases() {
    let mut a = result("greets", "m", 0, true, None);
    a["caseIndex"] = json!(0);
    let mut b = result("greets", "m", 0, false, None);
    b["caseIndex"] = json!(1);
    let cases = reliability(&[a, b]);
    assert_eq!(cases.len(), 2);
    assert_eq!(
        (cases[0]["pass^k"].clone(), cases[1]["pass^k"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(cases[1]["caseIndex"], 1);
}
