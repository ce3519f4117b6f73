//! Exposing an MCP server's tools to a site's own WebMCP, as values.
//!
//! The person names a configured MCP server and the origins that may use it
//! ([`Exposure`], changed with [`ExposeRequest`] and [`apply`]). The content script of a tab's
//! top frame asks the worker which tools its origin gets (`exposedTools`), registers them with
//! `document.modelContext.registerTool`, and runs a call through the worker (`callExposed`).
//! The origin is always the one Chrome reports for the sender (`Sender::page_origin`), never one a
//! message names. Here: the configuration, origin matching, the registrations built from a
//! server's `tools/list`, and a `tools/call` outcome as the page's result or error. No turn
//! runs: no model, no context; a result goes to the page as its text.

#![warn(missing_docs)]

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::egress::redact as redact_secrets;
use super::mcp::source::McpServerConfig;
use super::mcp::tools::{check_structured, namespaced, McpTool};
use super::mcp::CallResult;
use crate::core::naming::{is_valid_name, kind};

pub use crate::core::limits::{MAX_EXPOSURES, MAX_ORIGINS};

/// One MCP server offered to some origins' WebMCP.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Exposure {
    /// The MCP server's name as configured.
    pub server: String,
    /// Normalized origins (`scheme://host[:port]`, default ports left out).
    pub origins: Vec<String>,
    /// Only these tools (their names on the server); all when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<String>>,
}

/// `expose({server, origin, enabled, tools?})`: switches one server on or off for one origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposeRequest {
    /// The MCP server's name as configured.
    pub server: String,
    /// The origin, normalized (`scheme://host[:port]`).
    pub origin: String,
    /// Exposed to the origin (`true`) or no longer (`false`).
    pub enabled: bool,
    /// Sorted and without repeats; `None`: all the server's tools.
    pub tools: Option<Vec<String>>,
}

fn bad(message: impl Into<String>) -> String {
    message.into()
}

impl ExposeRequest {
    /// Reads the request (untrusted): an error says what is wrong.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let map = value
            .as_object()
            .ok_or_else(|| bad(format!("expose takes an object, not {}", kind(value))))?;
        let server = match map.get("server") {
            Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
            Some(Value::String(_)) | None | Some(Value::Null) => {
                return Err(bad("expose: `server` is required (an MCP server's name)"))
            }
            Some(other) => {
                return Err(bad(format!(
                    "expose: `server` must be a string, not {}",
                    kind(other)
                )))
            }
        };
        let origin = match map.get("origin") {
            Some(Value::String(s)) => {
                normalize_origin(s).map_err(|e| bad(format!("expose: {e}")))?
            }
            None | Some(Value::Null) => return Err(bad("expose: `origin` is required")),
            Some(other) => {
                return Err(bad(format!(
                    "expose: `origin` must be a string, not {}",
                    kind(other)
                )))
            }
        };
        let enabled = match map.get("enabled") {
            Some(Value::Bool(b)) => *b,
            None | Some(Value::Null) => {
                return Err(bad("expose: `enabled` is required (true or false)"))
            }
            Some(other) => {
                return Err(bad(format!(
                    "expose: `enabled` must be true or false, not {}",
                    kind(other)
                )))
            }
        };
        let tools = match map.get("tools") {
            None | Some(Value::Null) => None,
            Some(Value::Array(names)) => Some(tool_names(names)?),
            Some(other) => {
                return Err(bad(format!(
                    "expose: `tools` must be an array of tool names, not {}",
                    kind(other)
                )))
            }
        };
        Ok(ExposeRequest {
            server,
            origin,
            enabled,
            tools,
        })
    }
}

fn tool_names(names: &[Value]) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        match name.as_str() {
            Some(name) if is_valid_name(name, crate::core::limits::MAX_TOOL_NAME_BYTES) => {
                out.push(name.to_owned())
            }
            _ => {
                return Err(bad(format!(
                "expose: `tools` must name tools (1 to 128 of A-Z, a-z, 0-9, '_', '-'), not {name}"
            )))
            }
        }
    }
    if out.is_empty() {
        return Err(bad(
            "expose: `tools` is empty; leave it out to expose every tool, or switch the exposure off",
        ));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `scheme://host[:port]` in its normal form: http or https only, lowercase, the default port
/// left out, nothing after the authority but an optional `/`.
pub fn normalize_origin(text: &str) -> Result<String, String> {
    crate::core::url::normalize_origin(text).map_err(|e| e.to_string())
}

/// The origin of a page's URL, when it is an http(s) page.
pub fn origin_of_url(url: &str) -> Option<String> {
    crate::core::url::http_origin(url)
}

/// Reads the stored exposures; entries that no longer make sense are dropped with a reason.
pub fn parse_stored(value: &Value) -> (Vec<Exposure>, Vec<String>) {
    let mut exposures = Vec::new();
    let mut problems = Vec::new();
    let Some(entries) = value.as_array() else {
        if !value.is_null() {
            problems.push(format!(
                "the stored exposures are {}, not a list",
                kind(value)
            ));
        }
        return (exposures, problems);
    };
    for entry in entries.iter().take(MAX_EXPOSURES) {
        match serde_json::from_value::<Exposure>(entry.clone()) {
            Ok(mut exposure) => {
                let mut origins = Vec::new();
                for origin in &exposure.origins {
                    match normalize_origin(origin) {
                        Ok(origin) if !origins.contains(&origin) => origins.push(origin),
                        Ok(_) => {}
                        Err(e) => problems.push(format!("exposure of `{}`: {e}", exposure.server)),
                    }
                }
                origins.truncate(MAX_ORIGINS);
                exposure.origins = origins;
                if !exposure.origins.is_empty() {
                    exposures.push(exposure);
                }
            }
            Err(e) => problems.push(format!("a stored exposure is unreadable: {e}")),
        }
    }
    (exposures, problems)
}

/// The exposures after a request: the origin leaves every exposure of that server and, when
/// enabled, joins the one with the request's tools (made when missing). Exposures left
/// without origins are dropped.
pub fn apply(exposures: &[Exposure], request: &ExposeRequest) -> Result<Vec<Exposure>, String> {
    let mut out: Vec<Exposure> = exposures
        .iter()
        .cloned()
        .map(|mut e| {
            if e.server == request.server {
                e.origins.retain(|o| *o != request.origin);
            }
            e
        })
        .filter(|e| !e.origins.is_empty())
        .collect();
    if request.enabled {
        let count = out.len();
        match out
            .iter_mut()
            .find(|e| e.server == request.server && e.tools == request.tools)
        {
            Some(exposure) if exposure.origins.len() >= MAX_ORIGINS => {
                return Err(format!(
                    "`{}` is already exposed to {MAX_ORIGINS} origins, the most there may be",
                    request.server
                ))
            }
            Some(exposure) => exposure.origins.push(request.origin.clone()),
            None if count >= MAX_EXPOSURES => {
                return Err(format!(
                    "there are already {MAX_EXPOSURES} exposures, the most there may be"
                ))
            }
            None => out.push(Exposure {
                server: request.server.clone(),
                origins: vec![request.origin.clone()],
                tools: request.tools.clone(),
            }),
        }
    }
    Ok(out)
}

/// The exposures that include an origin, in their order.
pub fn for_origin<'a>(exposures: &'a [Exposure], origin: &str) -> Vec<&'a Exposure> {
    exposures
        .iter()
        .filter(|e| e.origins.iter().any(|o| o == origin))
        .collect()
}

/// An MCP tool as a page gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct PageTool {
    /// The name registered in the page: the server's namespace, if any, then the tool's name.
    pub name: String,
    /// The MCP server's name as configured.
    pub server: String,
    /// The tool as the server listed it.
    pub tool: McpTool,
    /// Confirmed in the page before it runs (MCP's defaults; not for a trusted server).
    pub needs_confirmation: bool,
}

impl PageTool {
    /// What the content script registers (`execute` is its own): name, description, input
    /// schema, and WebMCP's hints: `readOnlyHint` from MCP's, `consequentialHint` for a tool
    /// MCP counts as destructive, and `untrustedContentHint` always (a remote server's text).
    pub fn registration(&self) -> Value {
        let hints = &self.tool.annotations;
        let read_only = hints.read_only_hint == Some(true);
        json!({
            "name": self.name,
            "description": description(&self.tool),
            "inputSchema": self.tool.input_schema,
            "annotations": {
                "readOnlyHint": read_only,
                "consequentialHint": !read_only && hints.destructive_hint != Some(false),
                "untrustedContentHint": true,
            },
        })
    }
}

fn description(tool: &McpTool) -> String {
    match &tool.title {
        Some(title) if !tool.description.contains(title.as_str()) => {
            format!("{title}. {}", tool.description)
        }
        _ => tool.description.clone(),
    }
}

/// The page tools of one exposure, from its server's listing: filtered by the exposure's
/// tools and the server's own filter, named as runs name them. A name already `taken` (by an
/// earlier exposure of the same origin) is left out with a reason.
pub fn page_tools(
    exposure: &Exposure,
    server: &McpServerConfig,
    listed: &[McpTool],
    taken: &mut HashSet<String>,
) -> (Vec<PageTool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    let allowed =
        |list: &Option<Vec<String>>, name: &String| list.as_ref().is_none_or(|l| l.contains(name));
    for tool in listed {
        if !allowed(&exposure.tools, &tool.name) || !allowed(&server.filter, &tool.name) {
            continue;
        }
        let name = namespaced(server.namespace.as_deref(), &tool.name);
        if !taken.insert(name.clone()) {
            problems.push(format!(
                "`{name}` of the MCP server {} left out: another exposed server has a tool of that name (give one a namespace)",
                server.name
            ));
            continue;
        }
        tools.push(PageTool {
            name,
            server: server.name.clone(),
            tool: tool.clone(),
            needs_confirmation: tool.needs_confirmation(server.trusted),
        });
    }
    if let Some(wanted) = &exposure.tools {
        for name in wanted {
            if !listed.iter().any(|t| &t.name == name) {
                problems.push(format!(
                    "the MCP server {} has no tool `{name}` to expose",
                    server.name
                ));
            }
        }
    }
    (tools, problems)
}

/// The value of `exposedTools`: the registrations. Problems are the person's business
/// (server names, errors), not the page's: the shell logs them.
pub fn tools_reply(tools: &[PageTool]) -> Value {
    Value::Array(tools.iter().map(PageTool::registration).collect())
}

/// `callExposed({name, args})` from a page's content script.
#[derive(Debug, Clone, PartialEq)]
pub struct CallExposedRequest {
    /// The tool's name as registered in the page.
    pub name: String,
    /// The call's arguments.
    pub args: Map<String, Value>,
}

impl CallExposedRequest {
    /// Reads the request (untrusted, from a page): an error says what is wrong.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let name = match value.get("name") {
            Some(Value::String(name)) if is_valid_name(name, 256) => name.clone(),
            Some(Value::String(_)) => return Err(bad("callExposed: `name` is not a tool name")),
            Some(other) => {
                return Err(bad(format!(
                    "callExposed: `name` must be a string, not {}",
                    kind(other)
                )))
            }
            None => return Err(bad("callExposed: `name` is required")),
        };
        let args = match value.get("args") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(other) => {
                return Err(bad(format!(
                    "callExposed: `args` must be an object (the tool's input), not {}",
                    kind(other)
                )))
            }
        };
        Ok(CallExposedRequest { name, args })
    }
}

/// The tool a call names, among those exposed to the caller's origin.
pub fn resolve<'a>(tools: &'a [PageTool], name: &str) -> Result<&'a PageTool, String> {
    tools
        .iter()
        .find(|t| t.name == name)
        .ok_or_else(|| format!("no tool named `{name}` is exposed to this page"))
}

/// The question asked in the extension before a page of `origin` runs an exposed tool that
/// acts, as the gate decides ([`crate::core::gate::decide`]); `None` when it does not act.
/// `Err`: the arguments cannot be shown honestly, and the call is not made.
pub fn confirmation_text(
    origin: &str,
    tool: &PageTool,
    args: &Map<String, Value>,
) -> Result<Option<String>, String> {
    let acting = crate::core::gate::Acting::Mcp {
        server: &tool.server,
        tool: &tool.tool.name,
        acts: tool.needs_confirmation,
        page: Some(origin),
    };
    let decision = crate::core::gate::decide(crate::core::gate::Asker::Exposure, acting, args)?;
    Ok(decision.question().map(str::to_owned))
}

/// The outcome of `callExposed`: the result's text (which the content script returns as is)
/// or an error (which it throws), for `isError`, a protocol error or structured content that
/// breaks the tool's output schema. Either is redacted of `secrets` (every secret the
/// connection sends: [`secrets_of`](crate::core::mcp::secrets_of)) before the page gets it.
pub fn call_reply(
    tool: &McpTool,
    result: &CallResult,
    secrets: &[String],
) -> Result<String, String> {
    let reply = match result {
        CallResult::Ok {
            text, structured, ..
        } => check_structured(tool, structured.as_ref()).map(|()| text.clone()),
        CallResult::Error(error) => Err(error.clone()),
    };
    let redact = |text: String| redact_secrets(&text, secrets);
    reply.map(redact).map_err(redact)
}

/// The message that tells a page's `expose.js` to ask for its tools again.
pub fn sync_message() -> Value {
    json!({"webmcpHostExpose": 1, "op": "sync"})
}

/// Whether a tab whose top frame shows `top_url` is told of a change to `origin`'s exposures.
pub fn tells(origin: &str, top_url: &str) -> bool {
    origin_of_url(top_url).as_deref() == Some(origin)
}

/// An exposure switched on must name a configured server.
pub fn check_configured(
    request: &ExposeRequest,
    servers: &[McpServerConfig],
) -> Result<(), String> {
    if !request.enabled || servers.iter().any(|s| s.name == request.server) {
        return Ok(());
    }
    Err(format!(
        "expose: no MCP server named `{}` is configured (configure it first)",
        request.server
    ))
}

/// The servers of the kept connections (`open`) that no exposure names any more: closed.
pub fn unused<'a>(
    open: impl IntoIterator<Item = &'a String>,
    exposures: &[Exposure],
) -> Vec<String> {
    open.into_iter()
        .filter(|name| !exposures.iter().any(|e| &e.server == *name))
        .cloned()
        .collect()
}

/// What to do with a server's kept connection before using it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connect {
    /// It was opened for the server's current configuration, key and sign-in: use it.
    Reuse,
    /// The configuration, the key or the sign-in changed since (a sign-out, a new sign-in, a
    /// refresh that failed): close it and open another.
    Replace,
    /// None is kept: open one.
    Open,
}

/// What a kept connection sends: the server's configuration, its key and its sign-in's
/// access token.
#[derive(Debug, Clone, PartialEq)]
pub struct Identity<'a> {
    /// The server's configuration.
    pub config: &'a McpServerConfig,
    /// The key its header carries.
    pub key: Option<&'a str>,
    /// The sign-in's access token its `Authorization` carries.
    pub sign_in: Option<String>,
}

/// Whether a kept connection (`kept`: what it was opened with, its sign-in as its session
/// holds it now) serves `now`: the same configuration, key and sign-in, or it is replaced (a
/// kept session never goes on sending a token the person signed out of).
pub fn connect(kept: Option<Identity<'_>>, now: Identity<'_>) -> Connect {
    match kept {
        Some(kept) if kept == now => Connect::Reuse,
        Some(_) => Connect::Replace,
        None => Connect::Open,
    }
}

/// After the person allowed a call: its server must still be exposed to the origin (it may
/// have been switched off meanwhile), or the call does not run.
pub fn still_exposed(exposures: &[Exposure], origin: &str, tool: &PageTool) -> Result<(), String> {
    if for_origin(exposures, origin)
        .iter()
        .any(|e| e.server == tool.server)
    {
        return Ok(());
    }
    Err(format!("`{}` is no longer exposed to this page", tool.name))
}

/// A call whose server's connection was closed meanwhile.
pub fn not_connected(name: &str) -> String {
    format!("the MCP server of `{name}` is not connected any more")
}

#[cfg(test)]
mod tests;
