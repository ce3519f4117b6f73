//! `webmcp-host audit TOOLS.json [--format json|sarif]`: its output and exit codes (0 clean or
//! warnings only, 1 an error-level finding, 2 a usage error or a file that is not a tools file).
#![cfg(not(target_arch = "wasm32"))]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_webmcp-host"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the CLI runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_clean_file_exits_0_with_its_audit_as_json() {
    let (code, stdout, stderr) = run(&["audit", "tests/audit/rules/clean.tools.json"]);
    assert_eq!((code, stderr.as_str()), (0, ""));
    let audit: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(audit["score"], 100);
    assert_eq!(audit["tools"].as_array().unwrap().len(), 5);
    assert_eq!(audit["findings"], serde_json::json!([]));
}

#[test]
fn an_error_level_finding_exits_1_in_either_format() {
    for format in ["json", "sarif"] {
        let file = "tests/audit/pages/hostile-injection.tools.json";
        let (code, stdout, stderr) = run(&["audit", file, "--format", format]);
        assert_eq!(code, 1, "{format}: {stderr}");
        assert!(stderr.contains("error-level finding"), "{stderr}");
        let value: Value = serde_json::from_str(&stdout).unwrap();
        if format == "sarif" {
            assert_eq!(value["version"], "2.1.0");
            let results = value["runs"][0]["results"].as_array().unwrap();
            assert!(results
                .iter()
                .any(|r| r["ruleId"] == "description-injection"));
            assert_eq!(value["runs"][0]["artifacts"][0]["location"]["uri"], file);
        } else {
            assert!(value["score"].as_u64().unwrap() < 90);
        }
    }
}

#[test]
fn warnings_alone_exit_0() {
    let (code, stdout, _) = run(&[
        "audit",
        "--format=json",
        "tests/audit/pages/results.tools.json",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("property-description-missing"));
}

#[test]
fn usage_errors_and_unreadable_files_exit_2() {
    let not_tools = std::env::temp_dir().join(format!("webmcp-audit-{}.json", std::process::id()));
    std::fs::write(&not_tools, r#"{"name": "a"}"#).unwrap();
    let not_tools = not_tools.to_str().unwrap().to_owned();
    for (args, says) in [
        (vec!["audit"], "needs a tools file"),
        (
            vec!["audit", "x.json", "--format", "xml"],
            "unknown format `xml`",
        ),
        (
            vec!["audit", "/nonexistent/tools.json"],
            "cannot read /nonexistent/tools.json",
        ),
        (vec!["audit", not_tools.as_str()], "expected a JSON array"),
        (
            vec![
                "audit",
                "packages/playwright-webmcp-host/example/shop.evals.json",
            ],
            "this is an eval file",
        ),
    ] {
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, 2, "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert_eq!(stdout, "");
    }
    assert!(Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/audit")
        .is_dir());
}

#[test]
fn the_help_names_the_command() {
    let (code, stdout, _) = run(&["--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("webmcp-host audit TOOLS.json [--format json|sarif]"));
}
