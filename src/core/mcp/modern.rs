//! MCP revision 2026-07-28 on the wire, as pure functions: which revisions the client speaks,
//! the `_meta` keys every request carries, the standard request headers (`Mcp-Method`,
//! `Mcp-Name`) and their value encoding, and the tool parameters a server asks to see as
//! headers (`x-mcp-header`, mirrored as `Mcp-Param-{Name}`; a tool whose annotation breaks
//! the rules is left out of its listing).

use serde_json::{Map, Value};

use super::auth::base64_standard;
use crate::core::limits::MAX_MCP_HEADER_SCHEMA_DEPTH;

/// The stateless revision: no `initialize`, no session; every request carries `_meta`.
pub const MODERN_PROTOCOL: &str = "2026-07-28";
/// The stateless revisions the client speaks, most preferred first.
pub const MODERN_PROTOCOLS: [&str; 1] = [MODERN_PROTOCOL];

/// `_meta` key: the request's protocol revision (required).
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities (required; `{}` for none).
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's name and version.
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Result `_meta` key: the server's name and version (self-reported, for display only).
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key of a subscription's notifications: the id of its `subscriptions/listen`.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Which protocol generations a client tries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Protocols {
    /// `server/discover` first: 2026-07-28 where the server offers it, else `initialize`
    /// (2025-11-25 and the older revisions).
    #[default]
    Auto,
    /// Only `initialize` (2025-11-25, 2025-06-18, 2025-03-26).
    Legacy,
    /// Only 2026-07-28: a server that does not offer it is an error.
    Modern,
}

impl Protocols {
    /// The choice named by a protocol revision or `auto`/`legacy`/`modern` (`--protocol`, the
    /// conformance suite's `MCP_CONFORMANCE_PROTOCOL_VERSION`).
    pub fn named(name: &str) -> Option<Protocols> {
        match name {
            "auto" => Some(Protocols::Auto),
            "legacy" => Some(Protocols::Legacy),
            "modern" => Some(Protocols::Modern),
            v if MODERN_PROTOCOLS.contains(&v) => Some(Protocols::Modern),
            v if super::SUPPORTED_PROTOCOLS.contains(&v) => Some(Protocols::Legacy),
            _ => None,
        }
    }
}

/// A header value as 2026-07-28 sends it: plain when it is visible ASCII (inner spaces
/// allowed) with no leading or trailing whitespace and does not look like the sentinel, else
/// `=?base64?{Base64(UTF-8)}?=`.
pub fn encode_header_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !value.starts_with(' ')
        && !value.ends_with(' ')
        && !looks_encoded(value);
    if plain {
        value.to_owned()
    } else {
        format!("=?base64?{}?=", base64_standard(value.as_bytes()))
    }
}

fn looks_encoded(value: &str) -> bool {
    value.len() >= 11
        && value.as_bytes()[..9].eq_ignore_ascii_case(b"=?base64?")
        && value.ends_with("?=")
}

/// The `Mcp-Name` of a request: `params.name` of `tools/call` and `prompts/get`,
/// `params.uri` of `resources/read`.
pub fn mcp_name<'a>(method: &str, params: Option<&'a Value>) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params?.get(key)?.as_str()
}

/// A tool parameter mirrored into a header: the property's path from the arguments' root
/// (through `properties` only) and the header's name after `Mcp-Param-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The property names from the root of the arguments to the value.
    pub path: Vec<String>,
    /// The name the server gave (`x-mcp-header`).
    pub name: String,
}

/// The headers a tool's input schema designates (`x-mcp-header`), or why the tool must be
/// left out: an annotation that is empty, not an RFC 9110 token, repeated (case-insensitively),
/// on a property that is not a string, integer or boolean, or reached other than through
/// `properties` from the root.
pub fn param_headers(schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(schema, Some(Vec::new()), 0, &mut found)?;
    for (at, header) in found.iter().enumerate() {
        if found[..at]
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case(&header.name))
        {
            return Err(format!(
                "x-mcp-header `{}` is given twice (names are case-insensitive)",
                header.name
            ));
        }
    }
    Ok(found)
}

/// Schema keywords whose values are data, not schemas (an `x-mcp-header` key there is no
/// annotation).
const DATA_KEYWORDS: [&str; 5] = ["default", "const", "enum", "examples", "example"];

fn walk(
    node: &Value,
    path: Option<Vec<String>>,
    depth: usize,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    if depth > MAX_MCP_HEADER_SCHEMA_DEPTH {
        return Err(format!(
            "the input schema is nested deeper than {MAX_MCP_HEADER_SCHEMA_DEPTH} (looking for x-mcp-header)"
        ));
    }
    let Value::Object(object) = node else {
        if let Value::Array(items) = node {
            for item in items {
                walk(item, None, depth + 1, found)?;
            }
        }
        return Ok(());
    };
    if let Some(annotation) = object.get("x-mcp-header") {
        let Some(path) = path.as_ref().filter(|p| !p.is_empty()) else {
            return Err(
                "x-mcp-header is only allowed on a property reached through `properties`".into(),
            );
        };
        let Some(name) = annotation.as_str() else {
            return Err(format!(
                "x-mcp-header of `{}` is not a string",
                path.join(".")
            ));
        };
        check_header_name(name)?;
        match object.get("type").and_then(Value::as_str) {
            Some("string" | "integer" | "boolean") => {}
            other => {
                return Err(format!(
                "x-mcp-header `{name}` is on a property of type {}, not string, integer or boolean",
                other.unwrap_or("(none)")
            ))
            }
        }
        found.push(ParamHeader {
            path: path.clone(),
            name: name.to_owned(),
        });
    }
    for (key, value) in object {
        if DATA_KEYWORDS.contains(&key.as_str()) || key == "x-mcp-header" {
            continue;
        }
        if key == "properties" {
            if let Value::Object(properties) = value {
                for (name, property) in properties {
                    let inner = path.clone().map(|mut p| {
                        p.push(name.clone());
                        p
                    });
                    walk(property, inner, depth + 1, found)?;
                }
                continue;
            }
        }
        walk(value, None, depth + 1, found)?;
    }
    Ok(())
}

/// An RFC 9110 token (`1*tchar`).
fn check_header_name(name: &str) -> Result<(), String> {
    let tchar = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() {
        return Err("x-mcp-header is empty".into());
    }
    if !name.bytes().all(tchar) {
        return Err(format!(
            "x-mcp-header {:?} is not an HTTP header name (an RFC 9110 token)",
            name.escape_default().to_string()
        ));
    }
    Ok(())
}

/// The `Mcp-Param-*` headers of a call: each designated argument that is present and not
/// null, a string as it is, a number in decimal, a boolean as `true`/`false` (encoded as
/// [`encode_header_value`] says).
pub fn param_header_values(
    headers: &[ParamHeader],
    arguments: &Map<String, Value>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for header in headers {
        let mut at = None;
        let mut map = Some(arguments);
        for key in &header.path {
            at = map.and_then(|m| m.get(key));
            map = at.and_then(Value::as_object);
        }
        let text = match at {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            _ => continue,
        };
        out.push((
            format!("mcp-param-{}", header.name.to_ascii_lowercase()),
            encode_header_value(&text),
        ));
    }
    out
}

/// The `ttlMs` of a cacheable result, as a client honours it: absent, negative or not a
/// number is 0; at most [`crate::core::limits::MAX_MCP_TTL_MS`].
pub fn ttl_ms(result: &Value) -> u64 {
    match result.get("ttlMs").and_then(Value::as_f64) {
        Some(ms) if ms > 0.0 => (ms as u64).min(crate::core::limits::MAX_MCP_TTL_MS),
        _ => 0,
    }
}

#[cfg(test)]
mod tests;
