//! Exposing an MCP server's tools to a site's own WebMCP (product.md §7), as values.
//!
//! The person names a configured MCP server and the origins that may use it
//! ([`Exposure`], changed with [`ExposeRequest`] and [`apply`]). The content script of a tab's
//! top frame asks the worker which tools its origin gets (`exposedTools`), registers them with
//! `document.modelContext.registerTool`, and runs a call through the worker (`callExposed`).
//! The origin is always the one Chrome reports for the sender ([`sender_origin`]), never one a
//! message names. Here: the configuration, origin matching, the registrations built from a
//! server's `tools/list`, and a `tools/call` outcome as the page's result or error. No turn
//! runs: no model, no context; a result goes to the page as its text.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::api::RequestError;
use super::mcp::source::McpServerConfig;
use super::mcp::tools::{check_structured, namespaced, McpTool};
use super::mcp::CallResult;
use super::sender::Sender;
use super::tool::{is_valid_name, kind};

/// At most this many origins in one exposure, and exposures in all.
pub const MAX_ORIGINS: usize = 256;
pub const MAX_EXPOSURES: usize = 256;

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
    pub server: String,
    pub origin: String,
    pub enabled: bool,
    /// Sorted and without repeats; `None`: all the server's tools.
    pub tools: Option<Vec<String>>,
}

fn bad(message: impl Into<String>) -> RequestError {
    RequestError(message.into())
}

impl ExposeRequest {
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
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

fn tool_names(names: &[Value]) -> Result<Vec<String>, RequestError> {
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        match name.as_str() {
            Some(name) if is_valid_name(name, 128) => out.push(name.to_owned()),
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
    let shown = || text.chars().take(80).collect::<String>();
    let invalid = |why: &str| format!("`{}` is not an origin ({why})", shown());
    let trimmed = text.trim();
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let (scheme, authority) = trimmed
        .split_once("://")
        .ok_or_else(|| invalid("write it as https://host or http://host:port"))?;
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "https" => "443",
        "http" => "80",
        _ => return Err(invalid("only http and https origins can be exposed to")),
    };
    if authority.is_empty() {
        return Err(invalid("it has no host"));
    }
    if authority
        .chars()
        .any(|c| matches!(c, '/' | '?' | '#' | '@' | '*' | '\\') || c.is_whitespace())
    {
        return Err(invalid(
            "an origin has no path, query, user or wildcard: only scheme, host and port",
        ));
    }
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest
            .split_once(']')
            .ok_or_else(|| invalid("an IPv6 host needs its closing ]"))?;
        if inside.is_empty()
            || !inside
                .chars()
                .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
        {
            return Err(invalid("the IPv6 host is malformed"));
        }
        let port = match after {
            "" => None,
            _ => Some(
                after
                    .strip_prefix(':')
                    .ok_or_else(|| invalid("only a port may follow the host"))?,
            ),
        };
        (format!("[{}]", inside.to_ascii_lowercase()), port)
    } else {
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        };
        if host.is_empty()
            || host.starts_with('.')
            || host.contains("..")
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
        {
            return Err(invalid("the host is not a host name or an IPv4 address"));
        }
        (host.to_ascii_lowercase(), port)
    };
    let port = match port {
        None => None,
        Some(port) => match port.parse::<u16>() {
            Ok(n) if n > 0 && port.bytes().all(|b| b.is_ascii_digit()) => {
                let n = n.to_string();
                (n != default_port).then_some(n)
            }
            _ => return Err(invalid("the port is not a number from 1 to 65535")),
        },
    };
    Ok(match port {
        Some(port) => format!("{scheme}://{host}:{port}"),
        None => format!("{scheme}://{host}"),
    })
}

/// The origin of a page's URL, when it is an http(s) page.
pub fn origin_of_url(url: &str) -> Option<String> {
    let start = url.find("://")? + 3;
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    normalize_origin(&url[..end]).ok()
}

/// The origin whose exposures a sender gets: a content script's page origin, from the URL
/// Chrome reported for it. Nothing else has one.
pub fn sender_origin(sender: &Sender) -> Option<String> {
    match sender {
        Sender::ContentScript { url, .. } => origin_of_url(url),
        _ => None,
    }
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

/// The answer to `exposedTools`: `{ok: true, tools: [registration]}`. Problems are the
/// person's business (server names, errors), not the page's: the shell logs them.
pub fn tools_reply(tools: &[PageTool]) -> Value {
    json!({"ok": true, "tools": tools.iter().map(PageTool::registration).collect::<Vec<_>>()})
}

/// `callExposed({name, args})` from a page's content script.
#[derive(Debug, Clone, PartialEq)]
pub struct CallExposedRequest {
    pub name: String,
    pub args: Map<String, Value>,
}

impl CallExposedRequest {
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
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

/// The question shown with `confirm()` in the page before a tool that needs it runs.
pub fn confirmation_text(origin: &str, tool: &PageTool, args: &Map<String, Value>) -> String {
    crate::core::confirm::exposed_tool(origin, &tool.server, &tool.tool.name, args)
}

/// The answer to `callExposed`: `{ok: true, result}` (the result's text, which the content
/// script returns as is) or `{ok: false, error}` (which it throws), for `isError`, a protocol
/// error or structured content that breaks the tool's output schema.
pub fn call_reply(tool: &McpTool, result: &CallResult) -> Value {
    match result {
        CallResult::Ok { text, structured } => match check_structured(tool, structured.as_ref()) {
            Ok(()) => json!({"ok": true, "result": text}),
            Err(error) => json!({"ok": false, "error": error}),
        },
        CallResult::Error(error) => json!({"ok": false, "error": error}),
    }
}

/// A refusal of `callExposed` before anything ran.
pub fn declined() -> Value {
    json!({"ok": false, "error": "declined: the person did not allow this call"})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::mcp::tools::parse_tools;

    fn server(name: &str, namespace: Option<&str>) -> McpServerConfig {
        McpServerConfig {
            name: name.into(),
            url: "https://mcp.example/mcp".into(),
            namespace: namespace.map(str::to_owned),
            ..McpServerConfig::context7(None)
        }
    }

    fn listing() -> Vec<McpTool> {
        parse_tools(&[
            json!({"name": "add", "title": "Sum", "description": "Adds two numbers.",
                   "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "delete_record", "description": "Deletes a record.",
                   "annotations": {"destructiveHint": true}}),
            json!({"name": "note", "description": "Adds a note.",
                   "annotations": {"destructiveHint": false}}),
        ])
        .0
    }

    fn request(value: Value) -> Result<ExposeRequest, String> {
        ExposeRequest::parse(&value).map_err(|e| e.0)
    }

    #[test]
    fn origins_normalize() {
        for (given, expected) in [
            ("https://Site.Example", "https://site.example"),
            ("https://site.example/", "https://site.example"),
            ("https://site.example:443", "https://site.example"),
            ("http://site.example:80", "http://site.example"),
            ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
            ("HTTP://localhost:3000/", "http://localhost:3000"),
            ("http://[::1]:81", "http://[::1]:81"),
        ] {
            assert_eq!(normalize_origin(given).as_deref(), Ok(expected), "{given}");
        }
        for bad in [
            "site.example",
            "ftp://site.example",
            "chrome-extension://abc",
            "https://",
            "https://site.example/path",
            "https://*.site.example",
            "https://user@site.example",
            "https://site.example:0",
            "https://site.example:99999",
            "https://site.example:8o",
            "https://site..example",
            "https://[::1",
            "https://site example",
        ] {
            assert!(normalize_origin(bad).is_err(), "{bad} was accepted");
        }
        assert!(normalize_origin("ftp://x")
            .unwrap_err()
            .contains("only http and https"));
    }

    #[test]
    fn a_sender_origin_comes_from_its_url() {
        let script = |url: &str| Sender::ContentScript {
            tab_id: 1,
            frame_id: 0,
            url: url.into(),
        };
        assert_eq!(
            sender_origin(&script("http://127.0.0.1:4000/expose.html?x=1#y")).as_deref(),
            Some("http://127.0.0.1:4000")
        );
        assert_eq!(
            sender_origin(&script("https://Site.Example:443")).as_deref(),
            Some("https://site.example")
        );
        assert_eq!(sender_origin(&script("about:blank")), None);
        assert_eq!(sender_origin(&script("data:text/html,hi")), None);
        assert_eq!(sender_origin(&script("file:///tmp/x.html")), None);
        assert_eq!(sender_origin(&Sender::ExtensionPage), None);
    }

    #[test]
    fn requests_parse_with_clear_errors() {
        assert_eq!(
            request(
                json!({"server": "own", "origin": "https://a.example/", "enabled": true, "tools": ["b", "a", "b"]})
            ),
            Ok(ExposeRequest {
                server: "own".into(),
                origin: "https://a.example".into(),
                enabled: true,
                tools: Some(vec!["a".into(), "b".into()]),
            })
        );
        assert_eq!(
            request(json!({"origin": "https://a.example", "enabled": true})).unwrap_err(),
            "expose: `server` is required (an MCP server's name)"
        );
        assert_eq!(
            request(json!({"server": "own", "enabled": true})).unwrap_err(),
            "expose: `origin` is required"
        );
        assert_eq!(
            request(json!({"server": "own", "origin": "https://a.example"})).unwrap_err(),
            "expose: `enabled` is required (true or false)"
        );
        assert!(request(
            json!({"server": "own", "origin": "https://a.example/x", "enabled": true})
        )
        .unwrap_err()
        .starts_with("expose: `https://a.example/x` is not an origin"));
        assert!(request(
            json!({"server": "own", "origin": "https://a.example", "enabled": true, "tools": []})
        )
        .unwrap_err()
        .contains("`tools` is empty"));
        assert!(request(json!({"server": "own", "origin": "https://a.example", "enabled": true, "tools": ["a b"]}))
            .is_err());
        assert_eq!(
            request(json!([])).unwrap_err(),
            "expose takes an object, not an array"
        );
    }

    #[test]
    fn switching_on_and_off() {
        let on = |origin: &str, tools: Option<Vec<&str>>| ExposeRequest {
            server: "own".into(),
            origin: origin.into(),
            enabled: true,
            tools: tools.map(|t| t.into_iter().map(str::to_owned).collect()),
        };
        let a = "https://a.example";
        let b = "https://b.example";
        let list = apply(&[], &on(a, None)).unwrap();
        assert_eq!(
            list,
            [Exposure {
                server: "own".into(),
                origins: vec![a.into()],
                tools: None
            }]
        );
        // The same again changes nothing; another origin joins the same exposure.
        assert_eq!(apply(&list, &on(a, None)).unwrap(), list);
        let list = apply(&list, &on(b, None)).unwrap();
        assert_eq!(list[0].origins, [a, b]);
        // Other tools for one origin: it moves to an exposure of its own.
        let list = apply(&list, &on(b, Some(vec!["add"]))).unwrap();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].origins, [a]);
        assert_eq!(list[1].origins, [b]);
        assert_eq!(list[1].tools, Some(vec!["add".to_owned()]));
        assert_eq!(for_origin(&list, b), [&list[1]]);
        assert!(for_origin(&list, "https://c.example").is_empty());
        // Off: the origin leaves, and an exposure left empty goes.
        let off = ExposeRequest {
            enabled: false,
            ..on(b, None)
        };
        let list = apply(&list, &off).unwrap();
        assert_eq!(list.len(), 1);
        assert!(for_origin(&list, b).is_empty());
        // Another server's exposure is left alone.
        let other = ExposeRequest {
            server: "docs".into(),
            ..on(a, None)
        };
        let list = apply(&list, &other).unwrap();
        let list = apply(
            &list,
            &ExposeRequest {
                enabled: false,
                ..on(a, None)
            },
        )
        .unwrap();
        assert_eq!(list.len(), 1);
        assert_eq!(list[0].server, "docs");
    }

    #[test]
    fn stored_exposures_are_read_leniently() {
        let (list, problems) = parse_stored(&json!([
            {"server": "own", "origins": ["https://A.example/", "https://a.example", "nope"]},
            {"server": "docs", "origins": []},
            {"origins": ["https://b.example"]},
        ]));
        assert_eq!(
            list,
            [Exposure {
                server: "own".into(),
                origins: vec!["https://a.example".into()],
                tools: None
            }]
        );
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(parse_stored(&Value::Null), (vec![], vec![]));
        assert_eq!(parse_stored(&json!({})).1.len(), 1);
    }

    #[test]
    fn registrations_from_a_listing() {
        let exposure = Exposure {
            server: "own".into(),
            origins: vec!["https://a.example".into()],
            tools: None,
        };
        let mut taken = HashSet::new();
        let (tools, problems) = page_tools(&exposure, &server("own", None), &listing(), &mut taken);
        assert!(problems.is_empty());
        assert_eq!(
            tools
                .iter()
                .map(|t| (t.name.as_str(), t.needs_confirmation))
                .collect::<Vec<_>>(),
            [("add", false), ("delete_record", true), ("note", false)]
        );
        assert_eq!(
            tools[0].registration(),
            json!({
                "name": "add",
                "description": "Sum. Adds two numbers.",
                "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
                "annotations": {"readOnlyHint": true, "consequentialHint": false, "untrustedContentHint": true},
            })
        );
        assert_eq!(
            tools[1].registration()["annotations"],
            json!({"readOnlyHint": false, "consequentialHint": true, "untrustedContentHint": true})
        );
        assert_eq!(
            tools[2].registration()["annotations"]["consequentialHint"],
            json!(false)
        );
        assert_eq!(
            tools_reply(&tools[..1]),
            json!({"ok": true, "tools": [tools[0].registration()]})
        );

        // A second server of the same names clashes unless it has a namespace.
        let (clash, problems) =
            page_tools(&exposure, &server("docs", None), &listing(), &mut taken);
        assert!(clash.is_empty());
        assert_eq!(problems.len(), 3);
        assert!(problems[0].contains("`add` of the MCP server docs left out"));
        let (spaced, _) = page_tools(
            &exposure,
            &server("docs", Some("docs")),
            &listing(),
            &mut taken,
        );
        assert_eq!(spaced[0].name, "docs__add");
        assert_eq!(spaced[0].tool.name, "add");
    }

    #[test]
    fn filters_and_trust() {
        let exposure = Exposure {
            server: "own".into(),
            origins: vec!["https://a.example".into()],
            tools: Some(vec!["add".into(), "delete_record".into(), "gone".into()]),
        };
        let filtered = McpServerConfig {
            filter: Some(vec!["add".into(), "note".into()]),
            ..server("own", None)
        };
        let (tools, problems) = page_tools(&exposure, &filtered, &listing(), &mut HashSet::new());
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["add"]
        );
        assert_eq!(
            problems,
            ["the MCP server own has no tool `gone` to expose"]
        );
        let trusted = McpServerConfig {
            trusted: true,
            ..server("own", None)
        };
        let (tools, _) = page_tools(&exposure, &trusted, &listing(), &mut HashSet::new());
        assert!(tools.iter().all(|t| !t.needs_confirmation));
        // Trust skips our confirmation; the hint still tells the page's agents what it does.
        assert_eq!(
            tools[1].registration()["annotations"]["consequentialHint"],
            json!(true)
        );
    }

    #[test]
    fn calls_parse_resolve_and_answer() {
        let call = CallExposedRequest::parse(
            &json!({"op": "callExposed", "name": "add", "args": {"a": 2}}),
        )
        .unwrap();
        assert_eq!(call.name, "add");
        assert_eq!(call.args["a"], json!(2));
        assert!(CallExposedRequest::parse(&json!({"name": "add"}))
            .unwrap()
            .args
            .is_empty());
        assert_eq!(
            CallExposedRequest::parse(&json!({"name": "add", "args": [1]}))
                .unwrap_err()
                .0,
            "callExposed: `args` must be an object (the tool's input), not an array"
        );
        assert!(CallExposedRequest::parse(&json!({"name": "a b"})).is_err());
        assert!(CallExposedRequest::parse(&json!({})).is_err());

        let mut taken = HashSet::new();
        let exposure = Exposure {
            server: "own".into(),
            origins: vec![],
            tools: None,
        };
        let (tools, _) = page_tools(&exposure, &server("own", None), &listing(), &mut taken);
        assert_eq!(
            resolve(&tools, "delete_record").unwrap().tool.name,
            "delete_record"
        );
        assert_eq!(
            resolve(&tools, "other").unwrap_err(),
            "no tool named `other` is exposed to this page"
        );
        let text = confirmation_text("https://a.example", &tools[1], &call.args);
        assert_eq!(
            text,
            "WebMCP Host\n\nThis page (https://a.example) wants to run “delete_record” of the MCP server own with:\n{\n  \"a\": 2\n}\n\nAllow it?"
        );

        let add = &tools[0].tool;
        assert_eq!(
            call_reply(
                add,
                &CallResult::Ok {
                    text: "2 + 40 = 42".into(),
                    structured: None
                }
            ),
            json!({"ok": true, "result": "2 + 40 = 42"})
        );
        assert_eq!(
            call_reply(add, &CallResult::Error("it failed".into())),
            json!({"ok": false, "error": "it failed"})
        );
        let with_schema = McpTool {
            output_schema: Some(json!({"type": "object", "required": ["sum"]})),
            ..add.clone()
        };
        let reply = call_reply(
            &with_schema,
            &CallResult::Ok {
                text: "{}".into(),
                structured: Some(json!({"total": 3})),
            },
        );
        assert_eq!(reply["ok"], json!(false));
        assert!(reply["error"]
            .as_str()
            .unwrap()
            .contains("does not match its output schema"));
        assert_eq!(declined()["ok"], json!(false));
    }
}
