//! An evaluation for CI: how reliable each case is over its runs ([`reliability`]: pass rate,
//! pass^k, pass@k), the tokens and cost of each model in AG-UI's `TokenUsage` shape
//! ([`model_usage`]), and two more ways to write the answer: a Markdown summary for a CI job
//! summary or a pull-request comment ([`markdown`]) and a SARIF 2.1.0 log whose results are the
//! cases that did not pass, each located at its case ([`sarif`]).
//!
//! Invariants: pure; text from an eval file, a page or a model is escaped for Markdown (it can
//! add no link, image, table cell or HTML) and held as data in SARIF; a count is read as a whole
//! number whatever the answer file held.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use crate::core::limits::{
    MAX_SUMMARY_BYTES as MARKDOWN_BYTES, MAX_SUMMARY_RESULTS as MARKDOWN_FAILURES,
};

/// Per case (and model, in agent mode), in the order the cases first appear: `{name, model?,
/// runs, passed, passRate, "pass^k", "pass@k"}`. With `k` runs of a case, pass^k says all `k`
/// passed (how reliable it is) and pass@k that at least one did (whether it can pass at all).
pub fn reliability(results: &[Value]) -> Vec<Value> {
    // A case is its index in the suite (two cases may share a name); an answer file written
    // before results carried it falls back to the name.
    type Key = (Option<u64>, String, Option<String>);
    let mut order: Vec<Key> = Vec::new();
    let mut counts: BTreeMap<Key, (u64, u64)> = BTreeMap::new();
    for r in results {
        let key = (
            r["caseIndex"].as_u64(),
            r["name"].as_str().unwrap_or_default().to_owned(),
            r.get("model").and_then(Value::as_str).map(str::to_owned),
        );
        let entry = counts.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (0, 0)
        });
        entry.0 += 1;
        entry.1 += u64::from(r["outcome"] == "pass");
    }
    order
        .into_iter()
        .map(|key| {
            let (runs, passed) = counts[&key];
            let mut case = json!({
                "name": key.1,
                "runs": runs,
                "passed": passed,
                "passRate": passed as f64 / runs as f64,
                "pass^k": passed == runs,
                "pass@k": passed > 0,
            });
            if let Some(index) = key.0 {
                case["caseIndex"] = json!(index);
            }
            if let Some(model) = key.2 {
                case["model"] = json!(model);
            }
            case
        })
        .collect()
}

/// A model's share of [`reliability`]: `(k, pass^k, pass@k)`, the runs per case (the most
/// any case had) and the fractions of its cases that passed every run and at least one.
pub fn model_reliability(cases: &[Value], model: &str) -> (u64, f64, f64) {
    let mine: Vec<&Value> = cases.iter().filter(|c| c["model"] == model).collect();
    if mine.is_empty() {
        return (0, 0.0, 0.0);
    }
    let k = mine
        .iter()
        .filter_map(|c| c["runs"].as_u64())
        .max()
        .unwrap_or(0);
    let share =
        |key: &str| mine.iter().filter(|c| c[key] == true).count() as f64 / mine.len() as f64;
    (k, share("pass^k"), share("pass@k"))
}

/// A model's tokens summed over its runs, as AG-UI's `TokenUsage` (`{model, inputTokens,
/// outputTokens, totalTokens, cachedInputTokens}`: a count is left out when any run did not
/// report it), and its cost in US dollars (`null` when any run was not priced).
pub fn model_usage(runs: &[&Value], model: &str) -> (Value, Value) {
    // Results that never ran (no run id) used no tokens; any run that did not report a count
    // leaves it unknown. Sums saturate: a server's counts cannot wrap them.
    let ran: Vec<&&Value> = runs.iter().filter(|r| r.get("runId").is_some()).collect();
    if ran.is_empty() {
        return (json!({"model": model}), Value::Null);
    }
    let sum = |key: &str| -> Option<u64> {
        ran.iter()
            .map(|r| r["usage"][key].as_u64())
            .try_fold(0u64, |total, n| n.map(|n| total.saturating_add(n)))
    };
    let mut usage = Map::new();
    usage.insert("model".into(), json!(model));
    let (input, output) = (sum("inputTokens"), sum("outputTokens"));
    for (key, value) in [
        ("inputTokens", input),
        ("outputTokens", output),
        (
            "totalTokens",
            input.zip(output).map(|(i, o)| i.saturating_add(o)),
        ),
        ("cachedInputTokens", sum("cachedInputTokens")),
    ] {
        if let Some(n) = value {
            usage.insert(key.into(), json!(n));
        }
    }
    let cost: Option<f64> = ran.iter().map(|r| r["cost"].as_f64()).sum();
    (Value::Object(usage), json!(cost))
}

/// Text of an eval file, a page or a model made inert in Markdown: one line, its markup
/// characters escaped (no link, image, emphasis, table cell or HTML), and what GitHub would
/// make a link or a mention by itself (`https://…`, `www.…`, `@name`) broken by a zero-width
/// space; at most `max` characters.
pub fn md(text: &str, max: usize) -> String {
    const ZWSP: char = '\u{200B}';
    let mut out = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        let next = |k: usize| chars.get(i + k).copied();
        match c {
            '@' => {
                out.push('@');
                out.push(ZWSP);
            }
            ':' if next(1) == Some('/') && next(2) == Some('/') => {
                out.push(':');
                out.push(ZWSP);
            }
            'w' | 'W'
                if chars[i..]
                    .iter()
                    .take(4)
                    .collect::<String>()
                    .eq_ignore_ascii_case("www.") =>
            {
                out.push(c);
                out.push(ZWSP);
            }
            '\n' | '\r' | '\t' => out.push(' '),
            '\\' | '`' | '*' | '_' | '{' | '}' | '[' | ']' | '(' | ')' | '#' | '+' | '-' | '!'
            | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

fn percent(share: f64) -> String {
    format!("{}%", (share * 100.0).round())
}

fn whole(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// The answer as a Markdown summary: the counts, the models' table (pass rate, pass^k, pass@k,
/// latency, tokens, cost), the cases that did not pass every run, and each failure's reason.
pub fn markdown(answer: &Value) -> String {
    let mut out = markdown_body(answer);
    // Within what a pull-request comment holds.
    if out.len() > MARKDOWN_BYTES {
        out.truncate(crate::core::limits::cut_to(&out, MARKDOWN_BYTES).len());
        out.push_str("\n\n… cut here: the full report has the rest.\n");
    }
    out
}

fn markdown_body(answer: &Value) -> String {
    let results = answer["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let (pass, fail, error) = (
        whole(&answer["passCount"]),
        whole(&answer["failCount"]),
        whole(&answer["errorCount"]),
    );
    let mode = answer["mode"].as_str().unwrap_or("smoke");
    let mut out = String::new();
    let mark = if fail + error == 0 { "✅" } else { "❌" };
    let _ = writeln!(out, "## {mark} WebMCP evals ({})\n", md(mode, 16));
    let _ = writeln!(
        out,
        "**{} results**: {pass} passed, {fail} failed, {error} errors.\n",
        whole(&answer["testCount"])
    );
    if let Some(note) = super::simulate::report::judge_note(answer) {
        let mark = if answer["judgeIsAgent"] == true {
            "⚠️ "
        } else {
            ""
        };
        let _ = writeln!(out, "{mark}{}\n", md(&note, 300));
    }
    if let Some(models) = answer["models"].as_object().filter(|m| !m.is_empty()) {
        out.push_str(
            "| Model | Pass rate | pass^k | pass@k | k | Median | p95 | Tokens | Cost |\n",
        );
        out.push_str("|---|---|---|---|---|---|---|---|---|\n");
        for (name, m) in models {
            let ms = |v: &Value| {
                v.as_f64()
                    .map_or("–".into(), |n| format!("{} ms", n.round()))
            };
            let share = |v: &Value| v.as_f64().map_or("–".into(), percent);
            let tokens = m["usage"]["totalTokens"]
                .as_u64()
                .or(m["tokens"].as_u64())
                .map_or("unknown".into(), |n| n.to_string());
            let cost = m["costUsd"]
                .as_f64()
                .map_or("unknown".into(), |c| format!("${c:.4}"));
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {tokens} | {cost} |",
                md(name, 80),
                share(&m["passRate"]),
                share(&m["pass^k"]),
                share(&m["pass@k"]),
                whole(&m["k"]),
                ms(&m["latencyMs"]["median"]),
                ms(&m["latencyMs"]["p95"]),
            );
        }
        out.push('\n');
    }
    let cases = answer["cases"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let shaky: Vec<&Value> = cases.iter().filter(|c| c["pass^k"] != true).collect();
    if !shaky.is_empty() && cases.iter().any(|c| whole(&c["runs"]) > 1) {
        out.push_str("| Case | Model | Passed | pass^k | pass@k |\n|---|---|---|---|---|\n");
        for c in &shaky {
            let yes = |v: &Value| if *v == true { "yes" } else { "no" };
            let _ = writeln!(
                out,
                "| {} | {} | {}/{} | {} | {} |",
                md(c["name"].as_str().unwrap_or_default(), 120),
                md(c["model"].as_str().unwrap_or("–"), 80),
                whole(&c["passed"]),
                whole(&c["runs"]),
                yes(&c["pass^k"]),
                yes(&c["pass@k"]),
            );
        }
        out.push('\n');
    }
    let bad: Vec<&Value> = results.iter().filter(|r| r["outcome"] != "pass").collect();
    if !bad.is_empty() {
        let _ = writeln!(
            out,
            "<details><summary>{} not passed</summary>\n",
            bad.len()
        );
        if bad.len() > MARKDOWN_FAILURES {
            let more = bad.len() - MARKDOWN_FAILURES;
            let _ = writeln!(
                out,
                "The first {MARKDOWN_FAILURES} (and {more} more in the full report):\n"
            );
        }
        for r in bad.into_iter().take(MARKDOWN_FAILURES) {
            let run = match r.get("model").and_then(Value::as_str) {
                Some(model) => format!(" ({}, run {})", md(model, 80), whole(&r["runIndex"]) + 1),
                None => String::new(),
            };
            let _ = writeln!(
                out,
                "- **{}**{run}: {}: {}",
                md(r["name"].as_str().unwrap_or_default(), 120),
                md(r["outcome"].as_str().unwrap_or("error"), 8),
                md(r["reason"].as_str().unwrap_or("no reason given"), 400),
            );
        }
        out.push_str("\n</details>\n");
    }
    let warned: Vec<&Value> = results
        .iter()
        .filter(|r| r["warning"].is_string())
        .collect();
    if !warned.is_empty() {
        let _ = writeln!(out, "\n⚠️ {} passed with a warning:\n", warned.len());
        for r in warned.into_iter().take(MARKDOWN_FAILURES) {
            let _ = writeln!(
                out,
                "- **{}**: {}",
                md(r["name"].as_str().unwrap_or_default(), 120),
                md(r["warning"].as_str().unwrap_or_default(), 300)
            );
        }
    }
    out
}

/// SARIF's plain text with its embedded-link syntax made inert (`[text](target)` is a link
/// in a SARIF message: §3.11.6): `[` and `]` escaped.
fn sarif_text(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('[', "\\[")
        .replace(']', "\\]")
}

/// The answer as a SARIF 2.1.0 log: one run of `webmcp-host evals` with the rules `eval-fail`
/// and `eval-error`, one result per result that did not pass (level `error`; a pass with a
/// `warning` is a `warning` of the rule `eval-warning`), located at its case: the eval file
/// (`file`, when given) and the case as a logical location (`name [model #run]`).
pub fn sarif(answer: &Value, file: Option<&str>) -> Value {
    let results = answer["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let rule = |id: &str, text: &str| {
        json!({"id": id, "name": id, "shortDescription": {"text": text},
               "helpUri": "https://github.com/GoogleChromeLabs/webmcp-tools/tree/main/webmcp-evals"})
    };
    let rules = [
        rule(
            "eval-fail",
            "An eval case did not pass: the calls made differ from the calls it expects",
        ),
        rule(
            "eval-error",
            "An eval case could not be judged: a call or a run failed",
        ),
        rule(
            "eval-warning",
            "An eval case passed, but the page said something the case did not check",
        ),
    ];
    let found: Vec<Value> = results
        .iter()
        .filter_map(|r| {
            let (rule_id, index, level, text) = match (r["outcome"].as_str(), r["warning"].as_str()) {
                (Some("pass"), Some(warning)) => ("eval-warning", 2, "warning", warning.to_owned()),
                (Some("pass"), None) => return None,
                (Some("fail"), _) => ("eval-fail", 0, "error", r["reason"].as_str().unwrap_or("failed").to_owned()),
                _ => ("eval-error", 1, "error", r["reason"].as_str().unwrap_or("error").to_owned()),
            };
            let name = r["name"].as_str().unwrap_or_default();
            let case = match r.get("model").and_then(Value::as_str) {
                Some(model) => format!("{name} [{model} #{}]", whole(&r["runIndex"]) + 1),
                None => name.to_owned(),
            };
            let mut location = json!({"logicalLocations": [{"name": case, "fullyQualifiedName": case, "kind": "test"}]});
            if let Some(file) = file {
                let uri = crate::core::audit::sarif::uri_reference(file);
                location["physicalLocation"] = json!({"artifactLocation": {"uri": uri}});
            }
            Some(json!({
                "ruleId": rule_id,
                "ruleIndex": index,
                "level": level,
                "message": {"text": sarif_text(&format!("{case}: {text}"))},
                "locations": [location],
            }))
        })
        .collect();
    json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "webmcp-host evals",
                "version": crate::VERSION,
                "informationUri": "https://github.com/GoogleChromeLabs/webmcp-tools/tree/main/webmcp-evals",
                "rules": rules,
            }},
            "results": found,
        }],
    })
}

#[cfg(test)]
mod tests;
