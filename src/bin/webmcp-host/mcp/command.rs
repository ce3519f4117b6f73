//! The `mcp` command itself: its arguments, what `mcp URL …` does once connected (list the
//! tools, run the calls given or a JSON-lines script of calls), and the conformance suite's
//! client.

use std::process::ExitCode;

use serde_json::{Map, Value};
use webmcp_host::core::mcp::modern::Protocols;
use webmcp_host::core::mcp::tools;

use super::{sign_in_setup, Driver};

/// `webmcp-host mcp …`: lists a server's tools or calls one, or runs a conformance scenario.
pub fn command(args: &[&str]) -> ExitCode {
    if let ["--conformance", .., url] = args {
        return conformance(url);
    }
    let (mut headers, mut namespace, mut trusted, mut sign_in) = (Vec::new(), None, false, true);
    let (mut client_id, mut metadata_document) = (None, None);
    let mut timeout_ms = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    let mut protocols = Protocols::Auto;
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
            "--protocol" => (value("auto, legacy, modern or a revision").ok())
                .and_then(Protocols::named)
                .map(|p| protocols = p)
                .ok_or(
                    "--protocol takes auto, legacy (2025-11-25), modern (2026-07-28) or a revision"
                        .to_owned(),
                ),
            "--timeout" => (value("milliseconds").ok())
                .and_then(|t| t.parse::<u32>().ok().filter(|t| *t > 0))
                .map(|t| timeout_ms = t)
                .ok_or("--timeout takes milliseconds".to_owned()),
            other if other.starts_with("--") => Err(format!("unknown option `{other}`")),
            other => Ok(other).map(|p| positional.push(p)),
        };
        if let Err(message) = result {
            return crate::usage_error(&message);
        }
    }
    let (url, action) = match positional.as_slice() {
        [url, "tools"] => (*url, Action::Tools),
        [url, "call"] => (*url, Action::Script),
        [url, "call", pairs @ ..] if pairs.len() % 2 == 0 => {
            let mut calls = Vec::new();
            for pair in pairs.chunks(2) {
                match arguments_of(pair[1]) {
                    Ok(arguments) => calls.push((pair[0], arguments)),
                    Err(e) => return crate::usage_error(&format!("`{}`: {e}", pair[0])),
                }
            }
            (*url, Action::Calls(calls))
        }
        _ => {
            return crate::usage_error(
                "mcp takes URL tools, URL call NAME JSON [NAME JSON]…, or URL call (JSON lines of {\"name\", \"arguments\"} on stdin)",
            )
        }
    };
    if let Err(message) = webmcp_host::core::url::check_base_url(url) {
        return crate::usage_error(&message.replace("base URL", "server URL"));
    }
    let secret = std::env::var("WEBMCP_HOST_CLIENT_SECRET").ok();
    let setup = sign_in.then(|| sign_in_setup(client_id, secret, metadata_document, 300));
    let mut driver = Driver::new(url, headers, timeout_ms, setup, protocols);
    let outcome = run_mcp(&mut driver, action, namespace, trusted);
    driver.finish(outcome, url, ExitCode::from(2))
}

/// What `mcp URL …` does once connected.
enum Action<'a> {
    /// `tools`: lists them.
    Tools,
    /// `call NAME JSON [NAME JSON]…`: those calls, in order, on one session.
    Calls(Vec<(&'a str, serde_json::Map<String, serde_json::Value>)>),
    /// `call` alone: the calls of a JSON-lines script on standard input, on one session.
    Script,
}

fn run_mcp(
    driver: &mut Driver,
    action: Action,
    namespace: Option<&str>,
    trusted: bool,
) -> Result<ExitCode, String> {
    driver.connect()?;
    let (tools, problems) = driver.tools()?;
    for problem in &problems {
        eprintln!("webmcp-host: skipped: {problem}");
    }
    let mut failed = false;
    let mut one = |driver: &mut Driver,
                   name: &str,
                   arguments: Result<serde_json::Map<String, serde_json::Value>, String>|
     -> Result<(), String> {
        let line = arguments.and_then(|arguments| {
            let name = namespace
                .and_then(|ns| name.strip_prefix(&format!("{ns}__")))
                .unwrap_or(name);
            let Some(tool) = tools.iter().find(|t| t.name == name) else {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "no tool `{name}`; the server offers: {}",
                    names.join(", ")
                ));
            };
            // A broken session ends the script (`?` below); a failed call is its line.
            Ok(driver
                .call(name, &arguments)
                .map(|result| tools::result_line(Some(tool), &result)))
        });
        let (ok, line) = match line {
            Ok(called) => called?,
            Err(error) => (false, serde_json::json!({"ok": false, "error": error})),
        };
        failed |= !ok;
        println!("{line}");
        Ok(())
    };
    match action {
        Action::Tools => {
            for tool in &tools {
                println!("{}", tools::listing_line(tool, namespace, trusted));
            }
        }
        Action::Calls(calls) => {
            for (name, arguments) in calls {
                one(driver, name, Ok(arguments))?;
            }
        }
        Action::Script => {
            use std::io::BufRead;
            for (at, line) in std::io::stdin().lock().lines().enumerate() {
                let line = line.map_err(|e| format!("standard input could not be read: {e}"))?;
                if line.trim().is_empty() {
                    continue;
                }
                let (name, arguments) = script_line(&line);
                let arguments = arguments.map_err(|e| format!("line {}: {e}", at + 1));
                one(driver, &name, arguments)?;
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A call's arguments from its JSON text: an object, or why not.
fn arguments_of(json: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err("the call's JSON must be an object of arguments".into()),
        Err(e) => Err(format!("the call's arguments are not JSON: {e}")),
    }
}

/// One line of a call script: `{"name": "…", "arguments": {…}}` (`arguments` may be left out).
fn script_line(
    line: &str,
) -> (
    String,
    Result<serde_json::Map<String, serde_json::Value>, String>,
) {
    let value = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(value) => value,
        Err(e) => return (String::new(), Err(format!("not JSON: {e}"))),
    };
    let name = value
        .get("name")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .to_owned();
    if name.is_empty() {
        return (
            name,
            Err("a call is {\"name\": \"…\", \"arguments\": {…}}: no name".into()),
        );
    }
    match value.get("arguments") {
        None | Some(serde_json::Value::Null) => (name, Ok(serde_json::Map::new())),
        Some(serde_json::Value::Object(map)) => (name, Ok(map.clone())),
        Some(_) => (name, Err("`arguments` must be an object".into())),
    }
}

/// The conformance suite's client: the scenario (`MCP_CONFORMANCE_SCENARIO`) names what to
/// do. Its authorization server approves at once; some scenarios give pre-registered
/// credentials in `MCP_CONFORMANCE_CONTEXT`, and `auth/basic-cimd` expects this client's
/// metadata document URL.
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
    let setup = sign_in_setup(text("client_id"), text("client_secret"), metadata, 10);
    let timeout = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    // The suite names the revision to speak: 2026-07-28 statelessly, the others with
    // `initialize` (its mocks speak only that one).
    let protocols = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| Protocols::named(&v))
        .unwrap_or(Protocols::Legacy);
    let mut driver = Driver::new(url, Vec::new(), timeout, Some(setup), protocols);
    // The calls the scenario asks for (`toolCalls`: each name with its arguments), else
    // every listed tool with example arguments.
    let asked: Option<Vec<(String, Map<String, Value>)>> = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            (calls.iter())
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    let arguments = c.get("arguments").and_then(Value::as_object).cloned();
                    Some((name, arguments.unwrap_or_default()))
                })
                .collect()
        });
    let outcome = (|| -> Result<ExitCode, String> {
        driver.connect()?;
        if scenario != "initialize" {
            let listed = driver.tools()?.0;
            let mut calls: Vec<(String, Map<String, Value>)> = match &asked {
                Some(asked) => asked.clone(),
                None => (listed.iter())
                    .map(|t| (t.name.clone(), tools::example_arguments(&t.input_schema)))
                    .collect(),
            };
            // This scenario reads what the client kept of a tool's schema: its echo tool is
            // given that schema as listed.
            if scenario == "json-schema-2020-12-preservation" {
                let kept = listed.iter().find(|t| t.name == "json_schema_2020_12_tool");
                for (name, arguments) in &mut calls {
                    if let (true, Some(tool)) = (name == "json_schema_echo", kept) {
                        arguments.insert("schema".into(), tool.input_schema.to_value());
                    }
                }
            }
            for (name, arguments) in calls {
                let tool = listed.iter().find(|t| t.name == name);
                let result = driver.call(&name, &arguments)?;
                println!("{}", tools::result_line(tool, &result).1);
            }
        }
        Ok(ExitCode::SUCCESS)
    })();
    let what = format!("conformance scenario {scenario:?}");
    driver.finish(outcome, &what, ExitCode::from(1))
}

/// Parses `--header K:V` values.
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
