//! The audit's rules tested as data: every `tests/audit/{rules,pages}/NAME.tools.json` is
//! audited and compared with `NAME.expected.json` (the score, each tool's score, and each
//! finding's rule, severity, tool and pointer; messages are checked to be there and to say
//! what to do). Each audit's SARIF log is validated against the official SARIF 2.1.0 schema
//! vendored in `tests/audit/sarif/`.
//!
//! After a deliberate change of the rules, `UPDATE_EXPECT=1 cargo test --test audit_rules`
//! rewrites the expected files; review their diff.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use webmcp_host::core::audit::{audit_text, Audit, Format, Severity};

fn cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/audit");
    let mut files: Vec<PathBuf> = ["rules", "pages"]
        .iter()
        .flat_map(|dir| std::fs::read_dir(root.join(dir)).expect("tests/audit/{dir} exists"))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the cases are there: {files:?}");
    files
}

fn audit(path: &Path) -> Audit {
    let text = std::fs::read_to_string(path).unwrap();
    audit_text(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What an expected file holds.
fn summary(audit: &Audit) -> Value {
    json!({
        "score": audit.score,
        "tools": audit.tools.iter().map(|t| json!({"name": t.name, "score": t.score})).collect::<Vec<_>>(),
        "findings": audit.findings.iter().map(|f| {
            let mut line = json!({"rule": f.rule, "severity": f.severity, "tool": f.tool});
            if let Some(pointer) = &f.pointer {
                line["pointer"] = json!(pointer);
            }
            line
        }).collect::<Vec<_>>(),
    })
}

fn expected_path(path: &Path) -> PathBuf {
    let name = path
        .to_string_lossy()
        .replace(".tools.json", ".expected.json");
    PathBuf::from(name)
}

#[test]
fn every_tools_file_gives_its_expected_findings() {
    let bless = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for path in cases() {
        let actual = summary(&audit(&path));
        let expected_file = expected_path(&path);
        if bless {
            let text = serde_json::to_string_pretty(&actual).unwrap() + "\n";
            std::fs::write(&expected_file, text).unwrap();
            continue;
        }
        let expected: Value = match std::fs::read_to_string(&expected_file) {
            Ok(text) => serde_json::from_str(&text).unwrap(),
            Err(e) => panic!(
                "{}: {e} (UPDATE_EXPECT=1 writes it)",
                expected_file.display()
            ),
        };
        if actual != expected {
            failures.push(format!(
                "{}:\nexpected {}\nactual   {}",
                path.display(),
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(&actual).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_message_says_what_is_wrong_and_what_to_do() {
    for path in cases() {
        for finding in audit(&path).findings {
            let m = &finding.message;
            assert!(m.len() > 40, "{}: too short: {finding:?}", path.display());
            assert!(
                m.contains(':') || m.contains(';'),
                "{}: a message says what is wrong, then the fix: {finding:?}",
                path.display()
            );
        }
    }
}

#[test]
fn a_clean_well_described_page_scores_at_least_90() {
    let clean =
        audit(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/audit/rules/clean.tools.json"));
    assert!(clean.score >= 90, "{clean:?}");
    assert!(clean.tools.iter().all(|t| t.score >= 90), "{clean:?}");
    assert!(
        clean.findings.iter().all(|f| f.severity == Severity::Note),
        "{:?}",
        clean.findings
    );
}

#[test]
fn every_rule_is_exercised_by_some_case() {
    let mut seen = std::collections::BTreeSet::new();
    for path in cases() {
        for finding in audit(&path).findings {
            seen.insert(finding.rule);
        }
    }
    let missing: Vec<_> = webmcp_host::core::audit::rules::RULES
        .iter()
        .map(|r| r.id)
        .filter(|id| !seen.contains(id))
        .collect();
    assert!(missing.is_empty(), "rules no case exercises: {missing:?}");
}

fn sarif_validator() -> jsonschema::Validator {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/audit/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("the SARIF schema compiles")
}

#[test]
fn every_sarif_log_is_valid_sarif_2_1_0() {
    let validator = sarif_validator();
    for path in cases() {
        let audit = audit(&path);
        for artifact in [None, Some("tests/audit/a file with spaces.tools.json")] {
            let log = audit.render(Format::Sarif, artifact);
            let errors: Vec<String> = validator
                .iter_errors(&log)
                .map(|e| format!("{} at {}", e, e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{}: {errors:#?}", path.display());
            let results = log["runs"][0]["results"].as_array().unwrap();
            assert_eq!(results.len(), audit.findings.len());
        }
    }
}

#[test]
fn the_schema_check_can_fail() {
    let validator = sarif_validator();
    let bad = json!({"version": "2.1.0", "runs": [{"tool": {"driver": {}}, "results": [
        {"ruleId": "x", "level": "fatal", "message": {"text": "m"}}
    ]}]});
    assert!(
        !validator.is_valid(&bad),
        "no driver name, an unknown level"
    );
}

#[test]
fn every_rule_is_in_the_docs_table() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/audit.md"))
        .unwrap();
    for rule in webmcp_host::core::audit::rules::all() {
        let row = format!("| `{}` | {} |", rule.id, rule.severity.as_str());
        assert!(docs.contains(&row), "docs/audit.md has no row {row}");
    }
}

#[test]
fn an_evaluations_sarif_log_is_valid_sarif_2_1_0() {
    use webmcp_host::core::evals::ci::sarif;
    let validator = sarif_validator();
    let result = |name: &str, outcome: &str, extra: Value| {
        let mut r = json!({"name": name, "model": "m", "runIndex": 1, "outcome": outcome,
                           "reason": "missing call: add", "calls": []});
        for (k, v) in extra.as_object().unwrap() {
            r[k] = v.clone();
        }
        r
    };
    let answer = json!({"mode": "agent", "results": [
        result("adds <b>two</b>", "fail", json!({})),
        result("runs", "error", json!({"reason": null})),
        result("finds", "pass", json!({"warning": "passed, but the page said \"not found\""})),
        result("clean", "pass", json!({})),
    ]});
    for file in [None, Some("evals/a file with spaces.json")] {
        let log = sarif(&answer, file);
        let errors: Vec<String> = validator
            .iter_errors(&log)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
        assert_eq!(log["runs"][0]["results"].as_array().unwrap().len(), 3);
    }
}
