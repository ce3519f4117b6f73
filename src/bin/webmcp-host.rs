//! `webmcp-host`: the native CLI, a second shell over the same core as the extension.
//! It reads files and stdin and writes stdout; every decision is the core's.

use std::io::Write;
use std::process::ExitCode;

use webmcp_host::core::limits::Limits;
use webmcp_host::core::tool::parse_tools;

const USAGE: &str = "\
webmcp-host — the WebMCP Host command line

USAGE:
    webmcp-host tools FILE     check a tools file (a JSON array of {name, description,
                               inputSchema, annotations?}): prints the tools as the host
                               reads them, one JSON object a line, and every entry it skips
    webmcp-host --version      print the version
    webmcp-host --help         print this help

Exit status: 0 on success, 1 when the input has problems, 2 on a usage error.";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["--version" | "-V" | "version"] => {
            println!("webmcp-host {}", webmcp_host::VERSION);
            ExitCode::SUCCESS
        }
        [] | ["--help" | "-h" | "help"] => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        ["tools", file] => tools(file),
        [command, ..] => {
            let known = matches!(*command, "parse" | "repair" | "mcp");
            if known {
                eprintln!(
                    "webmcp-host: `{command}` is not part of version {} yet",
                    webmcp_host::VERSION
                );
            } else {
                eprintln!("webmcp-host: unknown command `{command}`");
            }
            eprintln!("{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn tools(file: &str) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("webmcp-host: cannot read {file}: {e}");
            return ExitCode::from(2);
        }
    };
    let entries = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(entries)) => entries,
        Ok(_) => {
            eprintln!("webmcp-host: {file}: a tools file is a JSON array");
            return ExitCode::from(1);
        }
        Err(e) => {
            eprintln!("webmcp-host: {file}: not JSON: {e}");
            return ExitCode::from(1);
        }
    };
    let parsed = parse_tools(&entries, 0, "file", &Limits::DEFAULT);
    let mut out = std::io::stdout().lock();
    for tool in &parsed.tools {
        let line = serde_json::json!({
            "name": tool.name, "description": tool.description,
            "inputSchema": tool.input_schema, "annotations": tool.annotations,
        });
        if writeln!(out, "{line}").is_err() {
            return ExitCode::from(1);
        }
    }
    for problem in &parsed.problems {
        let name = problem
            .tool
            .as_deref()
            .map(|n| format!(" `{n}`"))
            .unwrap_or_default();
        eprintln!("webmcp-host: {file}: skipped{name}: {}", problem.message);
    }
    if parsed.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
