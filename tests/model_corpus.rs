//! The genuine-output corpus: what real local models wrote for the question set of
//! `tests/corpus/cases.jsonl` (single-turn requests, two-turn cases whose first call and result
//! are given, and cases that want an answer in words), recorded by `scripts/record-corpus.mjs`
//! as replay transcripts (`tests/corpus/MODEL/SET.jsonl`, the model, its quantisation and the
//! settings in `SET.meta.json`). Each recorded output goes through the streaming parser and
//! repair as a run reads it, whole and in pieces; its AG-UI events are kept in
//! `tests/golden/corpus/` (the AG-UI validators read them, `make test-agui`), and the rates
//! of right calls are asserted:
//!
//! - the set recorded from the messages the code sends now (`text`; its fingerprints must be
//!   those of `examples/corpus_requests.rs`, else it is stale: record it again) gives the
//!   right call in at least 15 of the 20 single-turn cases;
//! - its two-turn rate is above that of the set recorded before results were shown as
//!   `<tool_response>` (`text-before`);
//! - no prose becomes a call: an output that gave a call starts with a call's marker or is
//!   wholly a bare call (a case that wants words may still get a call the model wrote as
//!   one: the rates show it), and no fewer cases that want words are answered in words than
//!   in `text-before`.
//!
//! `cargo test --test model_corpus -- --nocapture` prints the rates;
//! `UPDATE_EXPECT=1 cargo test --test model_corpus` rewrites the event logs.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::rc::Rc;

use common::chunk::{random_sized, Lcg};
use common::corpus::{self, Case};
use serde_json::Value;
use webmcp_host::core::agui::Event;
use webmcp_host::core::provider::replay::parse_transcript;
use webmcp_host::core::stream::parse_run;
use webmcp_host::core::toolset::ToolSet;

/// One recorded output, read.
struct Reading {
    case: Case,
    calls: Vec<(String, Value)>,
}

/// What a set gave, by kind: (right, of).
#[derive(Default, Debug)]
struct Rates {
    by_kind: BTreeMap<String, (usize, usize)>,
    wrong: Vec<String>,
    /// Outputs that are not wholly a call (prose first) yet gave one: never allowed.
    prose_calls: Vec<String>,
}

impl Rates {
    fn of(&self, kind: &str) -> (usize, usize) {
        self.by_kind.get(kind).copied().unwrap_or_default()
    }
}

/// Whether a reading is right: the one expected call (exactly one call, matching), or for a
/// case that wants words, no call at all.
fn right(reading: &Reading) -> bool {
    match &reading.case.expect {
        None => reading.calls.is_empty(),
        Some(expect) => {
            reading.calls.len() == 1
                && corpus::matches(expect, &reading.calls[0].0, &reading.calls[0].1)
        }
    }
}

/// Whether an output is written as calls: it starts with a call's marker or is wholly one
/// bare call (a JSON object, or a fence around one). Prose that mentions a tool or holds JSON
/// after words starts otherwise.
fn written_as_call(text: &str) -> bool {
    let text = text.trim_start();
    ["{", "```", "<tool_call>", "[TOOL_CALLS]", "<|python_tag|>"]
        .iter()
        .any(|marker| text.starts_with(marker))
}

fn calls_of(events: &[Event]) -> Vec<(String, Value)> {
    let Some(finished) = events.iter().rev().find_map(|e| match e {
        Event::RunFinished { result, .. } => Some(result.clone()),
        _ => None,
    }) else {
        return Vec::new();
    };
    let finished = serde_json::to_value(finished).expect("a result serializes");
    finished["calls"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["arguments"].clone(),
            )
        })
        .collect()
}

fn lines(events: &[Event]) -> String {
    events.iter().map(|e| e.to_json_line() + "\n").collect()
}

/// Reads one recorded set: every line through the parser (whole and in pieces), its events
/// checked against the kept log; the failures so far are pushed to `failures`.
fn read_set(
    model: &str,
    set: &str,
    path: &Path,
    current: bool,
    failures: &mut Vec<String>,
) -> Rates {
    let text = common::read(path);
    let steps = parse_transcript(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let cases: BTreeMap<String, Case> = corpus::cases()
        .into_iter()
        .map(|c| (c.id.clone(), c))
        .collect();
    let tools = Rc::new(
        ToolSet::from_json_text(&corpus::tools_text())
            .expect("tests/corpus/tools.json")
            .0,
    );
    let mut rates = Rates::default();
    for (line, step) in text.lines().filter(|l| !l.trim().is_empty()).zip(&steps) {
        let recorded: Value = serde_json::from_str(line).expect("a transcript line");
        let id = recorded["case"].as_str().expect("a line's case");
        let case = cases
            .get(id)
            .unwrap_or_else(|| panic!("{model}/{set}: no case {id} in cases.jsonl"))
            .clone();
        if current {
            let now = corpus::fingerprint(&corpus::request_messages(&case));
            if recorded["fingerprint"] != now.as_str() {
                failures.push(format!(
                    "{model}/{set} {id}: recorded from other messages than the host sends now \
                     (the text call format changed): record the set again with \
                     `node scripts/record-corpus.mjs --set {set}`"
                ));
            }
        }
        let cut = step.finish.as_deref() == Some("length");
        let whole = parse_run(&tools, [step.text.as_str()], cut);
        let mut rng = Lcg(id.len() as u64 * 7919 + step.text.len() as u64);
        for _ in 0..24 {
            if parse_run(&tools, random_sized(&step.text, 8, &mut rng), cut) != whole {
                failures.push(format!("{model}/{set} {id}: a chunking gives other events"));
                break;
            }
        }
        let log = common::golden(&format!("corpus/{model}/{set}/{id}.events.jsonl"));
        if !common::expect(&log, &lines(&whole)) {
            failures.push(format!(
                "{model}/{set} {id}: events differ from {} (UPDATE_EXPECT=1 rewrites it)",
                log.display()
            ));
        }
        let reading = Reading {
            calls: calls_of(&whole),
            case,
        };
        if !reading.calls.is_empty() && !written_as_call(&step.text) {
            rates
                .prose_calls
                .push(format!("{set} {id}: {:?}", step.text));
        }
        let ok = right(&reading);
        let entry = rates.by_kind.entry(reading.case.kind.clone()).or_default();
        entry.1 += 1;
        if ok {
            entry.0 += 1;
        } else {
            rates.wrong.push(format!(
                "{id}: {}",
                match reading.calls.as_slice() {
                    [] => "no call".to_owned(),
                    calls => calls
                        .iter()
                        .map(|(n, a)| format!("{n} {a}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            ));
        }
    }
    rates
}

#[test]
fn real_models_outputs_give_the_right_calls() {
    let root = corpus::dir("");
    let mut models: Vec<_> = std::fs::read_dir(&root)
        .expect("tests/corpus")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_dir())
        .collect();
    models.sort();
    assert!(!models.is_empty(), "no recorded model in tests/corpus/");
    let mut failures = Vec::new();
    let mut checked = 0;
    for dir in models {
        let model = dir.file_name().unwrap().to_str().unwrap().to_owned();
        let mut sets = BTreeMap::new();
        for path in common::files(&dir, Some("jsonl")) {
            let set = path.file_stem().unwrap().to_str().unwrap().to_owned();
            let meta: Value =
                serde_json::from_str(&common::read(&dir.join(format!("{set}.meta.json"))))
                    .unwrap_or_else(|e| panic!("{model}/{set}.meta.json: {e}"));
            assert!(
                meta["model"].is_string() && meta["settings"].is_object(),
                "{model}/{set}.meta.json names the model and the settings"
            );
            let current = set == "text";
            let rates = read_set(&model, &set, &path, current, &mut failures);
            println!("{model} / {set} ({}):", meta["model"].as_str().unwrap());
            for (kind, (ok, of)) in &rates.by_kind {
                println!("  {kind:9} {ok:2} of {of:2} right");
            }
            for wrong in &rates.wrong {
                println!("    not right: {wrong}");
            }
            sets.insert(set, rates);
        }
        let Some(now) = sets.get("text") else {
            continue;
        };
        checked += 1;
        let (single, of) = now.of("single");
        assert_eq!(of, 20, "{model}: the set has 20 single-turn cases");
        if single < 15 {
            failures.push(format!(
                "{model}: {single} of 20 single-turn outputs give the right call (at least 15 expected)"
            ));
        }
        for prose in &now.prose_calls {
            failures.push(format!("{model}: prose became a call: {prose}"));
        }
        if let Some(before) = sets.get("text-before") {
            let (words, _) = now.of("no-call");
            let (earlier, _) = before.of("no-call");
            if words < earlier {
                failures.push(format!(
                    "{model}: {words} cases that want words were answered in words, fewer than the {earlier} before"
                ));
            }
            let (after, _) = now.of("two-turn");
            let (earlier, _) = before.of("two-turn");
            if after <= earlier {
                failures.push(format!(
                    "{model}: two-turn cases right {after}, not above {earlier} before results were shown as <tool_response>"
                ));
            }
        }
    }
    assert!(checked > 0, "no model has a `text` set in tests/corpus/");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
