//! `webmcp-host`: the native CLI, a second shell over the same core as the extension.
//! It reads files and stdin and writes stdout; every decision is the core's.

use std::io::Write;
use std::process::ExitCode;

use std::io::Read;

#[cfg(not(target_arch = "wasm32"))]
mod mcp;

#[cfg(not(target_arch = "wasm32"))]
use webmcp_host::core::mcp::tools;

use webmcp_host::core::limits::Limits;
use webmcp_host::core::repair::repair_body;
use webmcp_host::core::stream::parse_run;
use webmcp_host::core::tool::parse_tools;
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
    webmcp-host mcp --conformance URL
                               the client of the MCP conformance suite (the scenario comes
                               from MCP_CONFORMANCE_SCENARIO)
    webmcp-host tools FILE     check a tools file (a JSON array of {name, description,
                               inputSchema, annotations?}): prints the tools as the host
                               reads them, one JSON object a line, and every entry it skips
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
        [command, ..] => {
            let known = matches!(*command, "mcp");
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

/// Splits `text` into pieces of about `n` bytes, never inside a character.
fn chunks(text: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + n).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
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
    let events = parse_run(&tools, pieces, options.cut);
    let mut out = std::io::stdout().lock();
    for event in events {
        if writeln!(out, "{}", event.to_json_line()).is_err() {
            return ExitCode::from(1);
        }
    }
    ExitCode::SUCCESS
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
fn mcp_command(args: &[&str]) -> ExitCode {
    if let ["--conformance", .., url] = args {
        return conformance(url);
    }
    let (mut headers, mut namespace, mut trusted, mut sign_in) = (Vec::new(), None, false, true);
    let (mut client_id, mut metadata_document) = (None, None);
    let mut timeout_ms = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    let mut positional: Vec<&str> = Vec::new();
    let mut rest = args.iter().copied();
    while let Some(arg) = rest.next() {
        let mut value = |what: &str| rest.next().ok_or(format!("{arg} needs {what}"));
        let result = match arg {
            "--trusted" => Ok(true).map(|t| trusted = t),
            "--no-sign-in" => Ok(false).map(|s| sign_in = s),
            "--header" => value("K:V").and_then(parse_header).map(|h| headers.push(h)),
            "--namespace" => value("a name").map(|n| namespace = Some(n)),
            "--client-id" => value("an id").map(|c| client_id = Some(c.to_owned())),
            "--client-metadata-url" => (value("an https URL").ok())
                .filter(|u| u.starts_with("https://"))
                .map(|u| metadata_document = Some(u.to_owned()))
                .ok_or("--client-metadata-url needs an https URL".to_owned()),
            "--timeout" => (value("milliseconds").ok())
                .and_then(|t| t.parse::<u32>().ok().filter(|t| *t > 0))
                .map(|t| timeout_ms = t)
                .ok_or("--timeout takes milliseconds".to_owned()),
            other if other.starts_with("--") => Err(format!("unknown option `{other}`")),
            other => Ok(other).map(|p| positional.push(p)),
        };
        if let Err(message) = result {
            return usage_error(&message);
        }
    }
    let (url, action) = match positional.as_slice() {
        [url, "tools"] => (*url, None),
        [url, "call", name, json] => (*url, Some((*name, *json))),
        _ => return usage_error("mcp takes URL tools, or URL call NAME JSON"),
    };
    if let Err(message) = webmcp_host::core::provider::check_base_url(url) {
        return usage_error(&message.replace("base URL", "server URL"));
    }
    let secret = std::env::var("WEBMCP_HOST_CLIENT_SECRET").ok();
    let setup = sign_in.then(|| mcp::sign_in_setup(client_id, secret, metadata_document, 300));
    let mut driver = mcp::Driver::new(url, headers, timeout_ms, setup);
    let outcome = run_mcp(&mut driver, action, namespace, trusted);
    driver.finish(outcome, url, ExitCode::from(2))
}

#[cfg(not(target_arch = "wasm32"))]
fn run_mcp(
    driver: &mut mcp::Driver,
    action: Option<(&str, &str)>,
    namespace: Option<&str>,
    trusted: bool,
) -> Result<ExitCode, String> {
    driver.connect()?;
    let (tools, problems) = driver.tools()?;
    for problem in &problems {
        eprintln!("webmcp-host: skipped: {problem}");
    }
    let Some((name, json)) = action else {
        for tool in &tools {
            println!("{}", tools::listing_line(tool, namespace, trusted));
        }
        return Ok(ExitCode::SUCCESS);
    };
    let name = namespace
        .and_then(|ns| name.strip_prefix(&format!("{ns}__")))
        .unwrap_or(name);
    let arguments = match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => map,
        Ok(_) => return Err("the call's JSON must be an object of arguments".into()),
        Err(e) => return Err(format!("the call's arguments are not JSON: {e}")),
    };
    let Some(tool) = tools.iter().find(|t| t.name == name) else {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        return Err(format!(
            "no tool `{name}`; the server offers: {}",
            names.join(", ")
        ));
    };
    let (ok, line) = tools::result_line(Some(tool), &driver.call(name, &arguments)?);
    println!("{line}");
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The conformance suite's client: the scenario (`MCP_CONFORMANCE_SCENARIO`) names what to
/// do. Its authorization server approves at once; some scenarios give pre-registered
/// credentials in `MCP_CONFORMANCE_CONTEXT`, and `auth/basic-cimd` expects this client's
/// metadata document URL.
#[cfg(not(target_arch = "wasm32"))]
fn conformance(url: &str) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let text = |name: &str| {
        context
            .get(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let metadata = Some("https://conformance-test.local/client-metadata.json".to_owned());
    let setup = mcp::sign_in_setup(text("client_id"), text("client_secret"), metadata, 10);
    let timeout = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    let mut driver = mcp::Driver::new(url, Vec::new(), timeout, Some(setup));
    let outcome = (|| -> Result<ExitCode, String> {
        driver.connect()?;
        if scenario != "initialize" {
            for tool in &driver.tools()?.0 {
                let result =
                    driver.call(&tool.name, &tools::example_arguments(&tool.input_schema))?;
                println!("{}", tools::result_line(Some(tool), &result).1);
            }
        }
        Ok(ExitCode::SUCCESS)
    })();
    let what = format!("conformance scenario {scenario:?}");
    driver.finish(outcome, &what, ExitCode::from(1))
}

/// Parses `--header K:V` values.
#[cfg(not(target_arch = "wasm32"))]
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("--header takes K:V, not `{text}`"))?;
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok((name, value.trim().to_owned()))
}
