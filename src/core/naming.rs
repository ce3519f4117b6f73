//! Two words the whole core shares: whether a name is a tool name ([`is_valid_name`]), and
//! what a JSON value is called in an error ([`kind`]). A leaf: every area that checks a tool
//! name or says what it was given instead (pages, MCP servers, models, requests) uses these
//! without importing another area.

use serde_json::Value;

/// Is `name` a valid tool name: 1 to `max_bytes` bytes of `[A-Za-z0-9_-]`?
pub fn is_valid_name(name: &str, max_bytes: usize) -> bool {
    !name.is_empty()
        && name.len() <= max_bytes
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A short name for a JSON value's type, for error messages.
pub fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
