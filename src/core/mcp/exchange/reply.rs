//! Answers to the server's requests while no person is asked: `ping`, elicitation by policy,
//! and -32601 for the rest (sampling, roots).

use serde_json::{json, Map, Value};

use crate::core::mcp::jsonrpc::RpcError;

/// How an `elicitation/create` of the server is answered (no person is asked yet).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elicitation {
    /// Always `{"action": "decline"}`.
    Decline,
    /// Accepted with the schema's defaults when they cover every required field.
    Defaults,
}

/// The answer to a server request: `ping`; an elicitation as `policy` says; sampling, roots
/// and the rest are not supported (-32601).
pub fn answer(
    policy: Elicitation,
    method: &str,
    params: Option<&Value>,
) -> Result<Value, (i64, String)> {
    match (method, policy) {
        ("ping", _) => Ok(json!({})),
        ("elicitation/create", Elicitation::Decline) => Ok(json!({"action": "decline"})),
        ("elicitation/create", Elicitation::Defaults) => {
            let schema = params
                .and_then(|p| p.get("requestedSchema"))
                .cloned()
                .unwrap_or(Value::Null);
            let mut content = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    if let Some(default) = property.get("default") {
                        content.insert(key.clone(), default.clone());
                    }
                }
            }
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if required.iter().all(|r| content.contains_key(*r)) {
                Ok(json!({"action": "accept", "content": content}))
            } else {
                Ok(json!({"action": "decline"}))
            }
        }
        (other, _) => Err((
            RpcError::METHOD_NOT_FOUND,
            format!("{other} is not supported by this client"),
        )),
    }
}
