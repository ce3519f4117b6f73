//! An MCP server's tools by hand: `listTools({server})` lists a configured server's tools with
//! their input schemas and annotations, `callTool({server, name, args, timeoutMs?})` calls one.
//!
//! The shell opens the server as a run does (its key, its sign-in, its deadlines and caps: the
//! `mcp::exchange` machine), and asks here what to do: which server, which tool (a server's
//! `filter` holds for calls by hand too), whether the arguments may be sent (checked against
//! the tool's schema before anything reaches the server), whether the person must allow the
//! call first (a tool that is not read-only, unless the server is trusted: as in a run) and
//! with which words, and what the call answers (every secret of the connection redacted).
//!
//! Invariant: a call whose arguments are invalid, or whose question cannot be shown, is never
//! sent; a call that needs the person's yes is sent only after it.

use serde_json::{json, Map, Value};

use super::validate::{validate_arguments, Validation};
use crate::core::error::RequestError;
use crate::core::limits::{DEFAULT_CALL_TIMEOUT_MS, MAX_CALL_TIMEOUT_MS};
use crate::core::mcp::redact_result;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::{result_line, McpTool};
use crate::core::mcp::CallResult;
use crate::core::naming::kind;

/// The prefix of the run id under which a manual call waits for the person (`pending`), so
/// that `answer`/`decline` reach it as they reach a run's confirmation.
pub const MANUAL_RUN_PREFIX: &str = "manual-";

/// Whose tools `listTools` / `callTool` is asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A tab's (`tabId`): the page tools.
    Tab,
    /// A configured MCP server's, by its name.
    Server(String),
}

/// Reads `tabId` / `server` of a `listTools` or `callTool` request: exactly one of them.
pub fn target(value: &Value, what: &str) -> Result<Target, RequestError> {
    let bad = |m: String| RequestError(format!("{what}: {m}"));
    let map = value
        .as_object()
        .ok_or_else(|| bad(format!("takes an object, not {}", kind(value))))?;
    let given = |key: &str| map.get(key).is_some_and(|v| !v.is_null());
    match (given("tabId"), map.get("server").filter(|v| !v.is_null())) {
        (true, Some(_)) => Err(bad(
            "give `tabId` (a tab's tools) or `server` (an MCP server's), not both".into(),
        )),
        (true, None) => Ok(Target::Tab),
        (false, Some(Value::String(name))) if !name.trim().is_empty() => {
            Ok(Target::Server(name.clone()))
        }
        (false, Some(other)) => Err(bad(format!(
            "`server` must be a configured MCP server's name (a non-empty string), not {}",
            kind(other)
        ))),
        (false, None) => Err(bad(
            "`tabId` (a tab's tools) or `server` (an MCP server's name) is required".into(),
        )),
    }
}

/// `callTool({server, name, args?, timeoutMs?})`.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCallRequest {
    /// The configured server's name.
    pub server: String,
    /// The tool's name on the server.
    pub name: String,
    /// The tool's input.
    pub args: Map<String, Value>,
    /// How long the call (`tools/call`, after the server is open) may take, in ms.
    pub timeout_ms: u32,
}

impl ServerCallRequest {
    /// Parses `{server, name, args?, timeoutMs?}` (a `frameId` has no meaning here).
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        let bad = |m: String| RequestError(format!("callTool: {m}"));
        let Target::Server(server) = target(value, "callTool")? else {
            return Err(bad("`server` is required".into()));
        };
        let map = value.as_object().expect("target checked an object");
        if map.get("frameId").is_some_and(|v| !v.is_null()) {
            return Err(bad(
                "`frameId` is for a tab's tools, not an MCP server's".into()
            ));
        }
        let name = match map.get("name") {
            Some(Value::String(s)) if !s.is_empty() => s.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(bad("`name` is required".into()))
            }
            Some(other) => {
                return Err(bad(format!("`name` must be a string, not {}", kind(other))))
            }
        };
        let args = match map.get("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(other) => {
                return Err(bad(format!(
                    "`args` must be an object (the tool's input), not {}",
                    kind(other)
                )))
            }
        };
        let timeout_ms = match map.get("timeoutMs") {
            None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT_MS,
            Some(v) => match v.as_u64() {
                Some(ms) if ms >= 1 && ms <= u64::from(MAX_CALL_TIMEOUT_MS) => ms as u32,
                _ => {
                    return Err(bad(format!(
                        "`timeoutMs` must be between 1 and {MAX_CALL_TIMEOUT_MS}, not {v}"
                    )))
                }
            },
        };
        Ok(ServerCallRequest {
            server,
            name,
            args,
            timeout_ms,
        })
    }
}

/// The configured server of that name (a disabled server too: the person asks for it).
pub fn find_server<'a>(
    servers: &'a [McpServerConfig],
    name: &str,
) -> Result<&'a McpServerConfig, String> {
    let server = servers.iter().find(|s| s.name == name).ok_or_else(|| {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        match names.is_empty() {
            true => format!("no MCP server `{name}`: none is configured"),
            false => format!("no MCP server `{name}` (configured: {})", names.join(", ")),
        }
    })?;
    server.validate()?;
    Ok(server)
}

/// The server's tools a person may call: those its `filter` keeps.
pub fn offered<'a>(server: &McpServerConfig, listed: &'a [McpTool]) -> Vec<&'a McpTool> {
    listed
        .iter()
        .filter(|t| {
            server
                .filter
                .as_ref()
                .is_none_or(|only| only.contains(&t.name))
        })
        .collect()
}

/// `listTools({server})`' value: `{tools, problems}` as for a tab, each tool `{name, title?,
/// description, inputSchema, outputSchema?, annotations, server, needsConfirmation}`.
pub fn tools_response(server: &McpServerConfig, listed: &[McpTool]) -> Value {
    let tools: Vec<Value> = offered(server, listed)
        .into_iter()
        .map(|tool| {
            let mut line = json!({
                "name": tool.name,
                "description": tool.description,
                "inputSchema": tool.input_schema,
                "annotations": tool.annotations,
                "server": server.name,
                "needsConfirmation": tool.needs_confirmation(server.trusted),
            });
            if let Some(title) = &tool.title {
                line["title"] = json!(title);
            }
            if let Some(schema) = &tool.output_schema {
                line["outputSchema"] = schema.to_value();
            }
            line
        })
        .collect();
    json!({"tools": tools, "problems": []})
}

/// A manual call the shell may carry out.
#[derive(Debug, Clone, PartialEq)]
pub struct Planned {
    /// The tool as the server listed it.
    pub tool: McpTool,
    /// The question the person must answer yes to first (in `pending`), when the tool acts.
    pub question: Option<String>,
}

/// Decides a manual call against the server's listing: the tool (offered by the server and
/// its filter), the arguments (valid for its input schema), the confirmation. `Err` is
/// `callTool`'s answer as it is: `{ok: false, error, errors?}`; nothing is sent then.
pub fn plan_call(
    server: &McpServerConfig,
    listed: &[McpTool],
    request: &ServerCallRequest,
) -> Result<Planned, Value> {
    let refuse = |error: String| json!({"ok": false, "error": error});
    let offered = offered(server, listed);
    let Some(tool) = offered.iter().find(|t| t.name == request.name) else {
        let names: Vec<&str> = offered.iter().take(20).map(|t| t.name.as_str()).collect();
        return Err(refuse(format!(
            "the MCP server `{}` offers no tool named `{}` (its tools: {})",
            server.name,
            request.name,
            if names.is_empty() {
                "none".into()
            } else {
                names.join(", ")
            }
        )));
    };
    let Validation { valid, errors, .. } =
        validate_arguments(&tool.input_schema, &Value::Object(request.args.clone()));
    if !valid {
        let listed: Vec<String> = errors
            .iter()
            .map(|e| {
                format!(
                    "{}: {}",
                    if e.path.is_empty() {
                        "arguments"
                    } else {
                        &e.path
                    },
                    e.message
                )
            })
            .collect();
        let mut answer = refuse(format!(
            "not sent: the arguments do not match the input schema of `{}` ({})",
            tool.name,
            listed.join("; ")
        ));
        answer["errors"] = json!(errors);
        return Err(answer);
    }
    let acting = crate::core::gate::Acting::Mcp {
        server: &server.name,
        tool: &tool.name,
        acts: tool.needs_confirmation(server.trusted),
        page: None,
    };
    let decision =
        crate::core::gate::decide(crate::core::gate::Asker::ByHand, acting, &request.args);
    let question = decision.map_err(refuse)?.question().map(str::to_owned);
    Ok(Planned {
        tool: (*tool).clone(),
        question,
    })
}

/// The answer of a call that ran out of its `timeoutMs`.
pub fn timed_out(request: &ServerCallRequest) -> Value {
    json!({"ok": false, "error": format!(
        "`{}` of the MCP server `{}` gave no answer within {} ms",
        request.name, request.server, request.timeout_ms
    )})
}

/// `callTool`'s answer for a server's result: `{ok: true, result, structuredContent?}` or
/// `{ok: false, error}`, every secret of the connection (`secrets`) redacted first, and
/// structured content checked against the tool's output schema.
pub fn call_answer<S: AsRef<str>>(tool: &McpTool, result: CallResult, secrets: &[S]) -> Value {
    result_line(Some(tool), &redact_result(result, secrets)).1
}

#[cfg(test)]
mod tests;
