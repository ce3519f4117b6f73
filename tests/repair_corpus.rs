//! The repair corpus: tool calls as real models write them, each with the outcome a careful
//! engineer wants from `repair_body` against `tests/golden/repair/tools.json`.
//!
//! - `corpus.jsonl`: one case a line, `{id, pattern, source, raw, expect}`; `expect` is
//!   `{"ok": true, "name", "arguments", "steps"}` (`steps`: the distinct repair steps of the fixes,
//!   in order of first appearance; `[]` when the call needed no fix) or
//!   `{"ok": false, "error_contains"}`. Every case must hold.
//! - `disputed.jsonl`: cases where the code does something else than wanted. Same fields, plus
//!   `current` (what the code does now, in the form of `expect`) and `why`. Each must still behave
//!   as `current`: when one starts to meet its `expect`, move it to `corpus.jsonl`; when it
//!   changes otherwise, update its `current`.
//! - `SOURCES.md`: the report behind every `source` key.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::HashSet;
use std::path::PathBuf;

use serde_json::{Map, Value};
use webmcp_host::core::repair::{repair_body, Repaired, Unrepaired};
use webmcp_host::core::toolset::ToolSet;

const MIN_CORPUS: usize = 300;

fn dir() -> PathBuf {
    common::golden("repair")
}

fn read(name: &str) -> String {
    common::read(&dir().join(name))
}

fn tools() -> ToolSet {
    common::tool_set(&dir().join("tools.json"))
}

/// One line of a corpus file.
struct Case {
    file: &'static str,
    line: usize,
    id: String,
    source: String,
    raw: String,
    expect: Value,
    current: Option<Value>,
    object: Map<String, Value>,
}

impl Case {
    fn at(&self) -> String {
        format!("{} ({}:{})", self.id, self.file, self.line)
    }
}

fn load(file: &'static str) -> Vec<Case> {
    let text = read(file);
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line_no = i + 1;
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("{file}:{line_no}: not JSON: {e}"));
        let Value::Object(object) = value else {
            panic!("{file}:{line_no}: not an object");
        };
        let text_field = |key: &str| match object.get(key) {
            Some(Value::String(s)) => s.clone(),
            _ => panic!("{file}:{line_no}: `{key}` must be a string"),
        };
        cases.push(Case {
            file,
            line: line_no,
            id: text_field("id"),
            source: text_field("source"),
            raw: text_field("raw"),
            expect: object
                .get("expect")
                .cloned()
                .unwrap_or_else(|| panic!("{file}:{line_no}: no `expect`")),
            current: object.get("current").cloned(),
            object,
        });
    }
    cases
}

/// The distinct steps of the fixes, in order of first appearance.
fn distinct_steps(fixes: &[webmcp_host::core::repair::Fix]) -> Vec<String> {
    let mut steps: Vec<String> = Vec::new();
    for fix in fixes {
        let step = serde_json::to_value(fix.step).unwrap();
        let step = step.as_str().unwrap().to_owned();
        if !steps.contains(&step) {
            steps.push(step);
        }
    }
    steps
}

fn describe(result: &Result<Repaired, Unrepaired>) -> String {
    match result {
        Ok(call) => format!(
            "ok {} {} steps {:?}",
            call.name,
            Value::Object(call.arguments.clone()),
            distinct_steps(&call.fixes)
        ),
        Err(unrepaired) => format!("error {:?}", unrepaired.error),
    }
}

/// Checks the shape of an `expect` (or `current`) value.
fn check_shape(outcome: &Value) -> Result<(), String> {
    match outcome.get("ok") {
        Some(Value::Bool(true)) => {
            if !outcome.get("name").is_some_and(Value::is_string) {
                return Err("`name` must be a string".into());
            }
            if !outcome.get("arguments").is_some_and(Value::is_object) {
                return Err("`arguments` must be an object".into());
            }
            let steps = outcome
                .get("steps")
                .and_then(Value::as_array)
                .ok_or("`steps` must be an array")?;
            for step in steps {
                if !matches!(
                    step.as_str(),
                    Some("json" | "name" | "coerce" | "reask" | "hook")
                ) {
                    return Err(format!("unknown step {step}"));
                }
            }
            Ok(())
        }
        Some(Value::Bool(false)) => match outcome.get("error_contains") {
            Some(Value::String(fragment)) if !fragment.is_empty() => Ok(()),
            _ => Err("`error_contains` must be a non-empty string".into()),
        },
        _ => Err("`ok` must be true or false".into()),
    }
}

/// Whether `result` is the outcome `outcome` describes; `Err` says how it differs.
fn meets(outcome: &Value, result: &Result<Repaired, Unrepaired>) -> Result<(), String> {
    let got = || describe(result);
    if outcome["ok"] == Value::Bool(true) {
        let Ok(call) = result else {
            return Err(format!("expected a call, got {}", got()));
        };
        let arguments = Value::Object(call.arguments.clone());
        let steps: Vec<Value> = distinct_steps(&call.fixes)
            .into_iter()
            .map(Value::String)
            .collect();
        if call.name != outcome["name"]
            || arguments != outcome["arguments"]
            || Value::Array(steps) != outcome["steps"]
        {
            return Err(format!(
                "expected ok {} {} steps {}, got {}",
                outcome["name"].as_str().unwrap_or_default(),
                outcome["arguments"],
                outcome["steps"],
                got()
            ));
        }
        Ok(())
    } else {
        let fragment = outcome["error_contains"].as_str().unwrap_or_default();
        match result {
            Err(unrepaired) if unrepaired.error.contains(fragment) => Ok(()),
            _ => Err(format!(
                "expected an error with {fragment:?}, got {}",
                got()
            )),
        }
    }
}

fn report(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} {what}:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// How many cases of both files repair handles as wanted (their `expect`), printed as the
/// corpus rate (`cargo test --test repair_corpus -- --nocapture` shows it).
#[test]
fn the_corpus_rate() {
    let tools = tools();
    let cases: Vec<Case> = load("corpus.jsonl")
        .into_iter()
        .chain(load("disputed.jsonl"))
        .collect();
    let met = cases
        .iter()
        .filter(|case| meets(&case.expect, &repair_body(&case.raw, &tools)).is_ok())
        .count();
    println!(
        "repair corpus rate: {met} of {} cases as wanted ({:.1}%)",
        cases.len(),
        100.0 * met as f64 / cases.len() as f64
    );
}

#[test]
fn the_corpus_holds() {
    let tools = tools();
    let cases = load("corpus.jsonl");
    assert!(
        cases.len() >= MIN_CORPUS,
        "the corpus has {} cases; it must keep at least {MIN_CORPUS}",
        cases.len()
    );
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let result = repair_body(&case.raw, &tools);
            meets(&case.expect, &result)
                .err()
                .map(|why| format!("{}: {why}", case.at()))
        })
        .collect();
    report("corpus cases fail", &failures);
}

#[test]
fn disputed_cases_still_behave_as_recorded() {
    let tools = tools();
    let mut failures = Vec::new();
    for case in load("disputed.jsonl") {
        let Some(current) = &case.current else {
            continue; // reported by the well-formedness test
        };
        let result = repair_body(&case.raw, &tools);
        if meets(&case.expect, &result).is_ok() {
            failures.push(format!(
                "{}: now meets its `expect`; move it to corpus.jsonl",
                case.at()
            ));
        } else if let Err(why) = meets(current, &result) {
            failures.push(format!(
                "{}: no longer behaves as its `current` ({why}); update `current`",
                case.at()
            ));
        }
    }
    report("disputed cases changed", &failures);
}

#[test]
fn the_corpus_files_are_well_formed() {
    let sources_md = read("SOURCES.md");
    let sources: HashSet<&str> = sources_md
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    assert!(
        sources.contains("synthetic"),
        "SOURCES.md lists no `synthetic`"
    );

    let corpus = load("corpus.jsonl");
    let disputed = load("disputed.jsonl");
    let mut failures = Vec::new();
    let mut ids = HashSet::new();
    for case in corpus.iter().chain(&disputed) {
        if !ids.insert(case.id.as_str()) {
            failures.push(format!("{}: the id is used twice", case.at()));
        }
        if !sources.contains(case.source.as_str()) {
            failures.push(format!(
                "{}: source `{}` is not in SOURCES.md",
                case.at(),
                case.source
            ));
        }
        if case.source == "synthetic" && !case.object.contains_key("note") {
            failures.push(format!("{}: a synthetic case needs a `note`", case.at()));
        }
        if !case.object.get("pattern").is_some_and(Value::is_string) {
            failures.push(format!("{}: `pattern` must be a string", case.at()));
        }
        if let Err(why) = check_shape(&case.expect) {
            failures.push(format!("{}: expect: {why}", case.at()));
        }
    }
    for case in &disputed {
        match &case.current {
            None => failures.push(format!("{}: a disputed case needs `current`", case.at())),
            Some(current) => {
                if let Err(why) = check_shape(current) {
                    failures.push(format!("{}: current: {why}", case.at()));
                }
                if *current == case.expect {
                    failures.push(format!("{}: `current` equals `expect`", case.at()));
                }
            }
        }
        let why = case.object.get("why").and_then(Value::as_str).unwrap_or("");
        if why.trim().is_empty() {
            failures.push(format!("{}: a disputed case needs a `why`", case.at()));
        }
    }
    for case in &corpus {
        if case.current.is_some() || case.object.contains_key("why") {
            failures.push(format!(
                "{}: `current`/`why` belong in disputed.jsonl",
                case.at()
            ));
        }
    }
    report("problems in the corpus files", &failures);
}
