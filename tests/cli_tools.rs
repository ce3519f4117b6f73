//! `webmcp-host tools FILE`: the tools as the host reads them, and every skipped entry.
#![cfg(not(target_arch = "wasm32"))]

use std::process::Command;

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_webmcp-host"))
        .args(args)
        .output()
        .expect("the CLI runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("webmcp-host-cli-{}-{name}", std::process::id()));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn prints_valid_tools_and_reports_skipped_ones() {
    let file = temp_file(
        "tools.json",
        r#"[{"name":"search","description":"Find","inputSchema":{"type":"object","properties":{"q":{"type":"string"}}}},
            {"name":"no spaces allowed"}]"#,
    );
    let (code, stdout, stderr) = run(&["tools", file.to_str().unwrap()]);
    assert_eq!(code, 1);
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["name"], "search");
    assert_eq!(lines[0]["inputSchema"]["properties"]["q"]["type"], "string");
    assert!(
        stderr.contains("skipped `no spaces allowed`: the name must be"),
        "{stderr}"
    );
}

#[test]
fn a_clean_file_exits_zero_and_usage_errors_exit_two() {
    let file = temp_file("ok.json", r#"[{"name":"a","description":"b"}]"#);
    assert_eq!(run(&["tools", file.to_str().unwrap()]).0, 0);
    let (code, _, stderr) = run(&["tools", "/nonexistent/tools.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read /nonexistent/tools.json"));
    let not_array = temp_file("obj.json", r#"{"name":"a"}"#);
    let (code, _, stderr) = run(&["tools", not_array.to_str().unwrap()]);
    assert_eq!(
        (code, stderr.contains("a tools file is a JSON array")),
        (1, true)
    );
    let (code, _, stderr) = run(&["mcp"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("mcp takes URL tools"));
    let (code, _, stderr) = run(&["frobnicate"]);
    assert_eq!(
        (code, stderr.contains("unknown command `frobnicate`")),
        (2, true)
    );
    let (code, _, stderr) = run(&["parse"]);
    assert_eq!(
        (code, stderr.contains("--tools FILE is required")),
        (2, true)
    );
    let (code, stdout, _) = run(&["--version"]);
    assert_eq!(
        (code, stdout.trim()),
        (
            0,
            format!("webmcp-host {}", env!("CARGO_PKG_VERSION")).as_str()
        )
    );
}
