//! `webmcp-host`: the native CLI, a second shell over the same core as the extension.
//! It reads files and stdin and writes stdout; every decision is the core's.

use std::io::{Read, Write};
use std::process::ExitCode;

#[cfg(not(target_arch = "wasm32"))]
mod mcp;

use webmcp_host::core::cli::{self, chunks};
use webmcp_host::core::limits::Limits;
use webmcp_host::core::page::tool::parse_tools;
use webmcp_host::core::repair::repair_body;
use webmcp_host::core::stream::parse_run_each;
use webmcp_host::core::toolset::ToolSet;

const USAGE: &str = r#"webmcp-host — the WebMCP Host command line

USAGE:
    webmcp-host parse --tools FILE [--chunk N] [--cut]
                               read one model output on stdin and print the AG-UI events
                               of the run as JSONL (calls repaired; no reask without a
                               model). --chunk N feeds the output to the parser N bytes at
                               a time (the events do not depend on N); --cut says the
                               output was cut at the token limit
    webmcp-host repair --tools FILE
                               read one raw call on stdin, as a model wrote it, and print
                               {"ok":true,"call":{"name","arguments"},"fixes":[…]} or
                               {"ok":false,"error":…}
    webmcp-host mcp URL tools [--header K:V]… [--namespace NS] [--trusted] [--timeout MS]
                               list an MCP server's tools (Streamable HTTP), one JSON
                               object a line, with whether a call needs confirmation
    webmcp-host mcp URL call NAME JSON [--header K:V]… [--namespace NS] [--timeout MS]
                               call one tool and print {"ok":true,"result":…} or
                               {"ok":false,"error":…}
    webmcp-host mcp … [--client-id ID] [--client-metadata-url URL] [--no-sign-in]
                               a server that answers 401 is signed in to (MCP
                               authorization: OAuth 2.1 with PKCE): with the given client
                               id (its secret, if any, from env WEBMCP_HOST_CLIENT_SECRET),
                               else the client metadata document URL where the server
                               supports it, else dynamic registration. An authorization
                               server that approves at once is followed without a browser;
                               otherwise the URL to open is printed and the redirect comes
                               back to a loopback port (5 minutes at most)
    webmcp-host mcp … [--protocol auto|legacy|modern|REVISION]
                               the MCP revisions tried: auto (server/discover for
                               2026-07-28, else initialize for 2025-11-25 and older),
                               legacy (initialize only) or modern (2026-07-28 only)
    webmcp-host mcp --conformance URL
                               the client of the MCP conformance suite (the scenario comes
                               from MCP_CONFORMANCE_SCENARIO)
    webmcp-host tools FILE     check a tools file (a JSON array of {name, description,
                               inputSchema, annotations?}): prints the tools as the host
                               reads them, one JSON object a line, and every entry it skips
    webmcp-host audit TOOLS.json [--format json|sarif]
                               audit a tools file (docs/audit.md): findings and scores as
                               JSON or a SARIF 2.1.0 log; exit 1 on an error-level finding
    webmcp-host eval-report ANSWER.json [--format junit|html|json|markdown|sarif] [--evals FILE]
                               write an answer of evaluate as a report; exit 1 on a failure
    webmcp-host --version      print the version
    webmcp-host --help         print this help

Exit status: 0 on success, 1 when the input has problems, 2 on a usage error."#;

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
        ["parse", rest @ ..] => parse(rest),
        ["mcp", rest @ ..] => mcp_command(rest),
        ["repair", rest @ ..] => repair(rest),
        ["audit", rest @ ..] => answer(cli::audit(rest, std::fs::read_to_string)),
        ["eval-report", rest @ ..] => answer(cli::eval_report(rest, std::fs::read_to_string)),
        [command, ..] => usage_error(&format!("unknown command `{command}`")),
    }
}

fn tools(file: &str) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return fail(2, &format!("cannot read {file}: {e}")),
    };
    let entries = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Array(entries)) => entries,
        Ok(_) => return fail(1, &format!("{file}: a tools file is a JSON array")),
        Err(e) => return fail(1, &format!("{file}: not JSON: {e}")),
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
        let name = problem.tool.as_deref().map(|n| format!(" `{n}`"));
        let (name, message) = (name.unwrap_or_default(), &problem.message);
        eprintln!("webmcp-host: {file}: skipped{name}: {message}");
    }
    ExitCode::from(u8::from(!parsed.problems.is_empty()))
}

/// Prints a core command's answer and exits with its code.
fn answer(answer: cli::Answer) -> ExitCode {
    eprint!("{}", answer.stderr);
    let printed = std::io::stdout().write_all(answer.stdout.as_bytes());
    ExitCode::from(if printed.is_ok() { answer.code } else { 1 })
}

/// Says `message` and exits with `code`.
fn fail(code: u8, message: &str) -> ExitCode {
    eprintln!("webmcp-host: {message}");
    ExitCode::from(code)
}

/// Options of `parse` and `repair`.
struct Options {
    tools: ToolSet,
    chunk: Option<usize>,
    cut: bool,
}

fn options(args: &[&str], allow_chunking: bool) -> Result<Options, String> {
    let mut tools = None;
    let mut chunk = None;
    let mut cut = false;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match *arg {
            "--tools" => {
                let file = rest.next().ok_or("--tools needs a file")?;
                let text = std::fs::read_to_string(file)
                    .map_err(|e| format!("cannot read {file}: {e}"))?;
                let (set, problems) =
                    ToolSet::from_json_text(&text).map_err(|e| format!("{file}: {e}"))?;
                for problem in problems {
                    eprintln!("webmcp-host: {file}: {problem}");
                }
                tools = Some(set);
            }
            "--chunk" if allow_chunking => {
                let n = rest.next().ok_or("--chunk needs a number of bytes")?;
                chunk = Some(
                    n.parse::<usize>()
                        .ok()
                        .filter(|n| *n > 0)
                        .ok_or(format!("--chunk takes a number ≥ 1, not `{n}`"))?,
                );
            }
            "--cut" if allow_chunking => cut = true,
            other => return Err(format!("unknown option `{other}`")),
        }
    }
    let tools = tools.ok_or("--tools FILE is required")?;
    Ok(Options { tools, chunk, cut })
}

fn read_stdin() -> Result<String, String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| format!("cannot read stdin as UTF-8 text: {e}"))?;
    Ok(input)
}

fn usage_error(message: &str) -> ExitCode {
    eprintln!("webmcp-host: {message}");
    eprintln!("{USAGE}");
    ExitCode::from(2)
}

fn parse(args: &[&str]) -> ExitCode {
    let options = match options(args, true) {
        Ok(options) => options,
        Err(message) => return usage_error(&message),
    };
    let input = match read_stdin() {
        Ok(input) => input,
        Err(message) => return usage_error(&message),
    };
    let pieces = match options.chunk {
        Some(n) => chunks(&input, n),
        None => vec![input.as_str()],
    };
    let tools = std::rc::Rc::new(options.tools);
    // Each event is written as soon as it is whole: what is held does not grow with the output.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut written: std::io::Result<()> = Ok(());
    parse_run_each(&tools, pieces, options.cut, |event| {
        if written.is_ok() {
            written = serde_json::to_writer(&mut out, &event)
                .map_err(std::io::Error::from)
                .and_then(|()| out.write_all(b"\n"));
        }
    });
    match written {
        Ok(()) if out.flush().is_ok() => ExitCode::SUCCESS,
        _ => ExitCode::from(1),
    }
}

fn repair(args: &[&str]) -> ExitCode {
    let options = match options(args, false) {
        Ok(options) => options,
        Err(message) => return usage_error(&message),
    };
    let input = match read_stdin() {
        Ok(input) => input,
        Err(message) => return usage_error(&message),
    };
    let line = match repair_body(&input, &options.tools) {
        Ok(repaired) => serde_json::json!({
            "ok": true,
            "call": {"name": repaired.name, "arguments": repaired.arguments},
            "fixes": repaired.fixes,
        }),
        Err(unrepaired) => {
            serde_json::json!({"ok": false, "error": unrepaired.error, "fixes": unrepaired.fixes})
        }
    };
    println!("{line}");
    ExitCode::SUCCESS
}

#[cfg(target_arch = "wasm32")]
fn mcp_command(_: &[&str]) -> ExitCode {
    usage_error("mcp needs the native build")
}

#[cfg(not(target_arch = "wasm32"))]
use mcp::command as mcp_command;
