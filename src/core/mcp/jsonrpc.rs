//! JSON-RPC 2.0 messages as MCP uses them, parsed from untrusted text with clear errors.

use serde_json::{json, Map, Value};

use crate::core::naming::kind;

/// A request id: a number or a string (never null in a request).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Id {
    /// A number id.
    Number(i64),
    /// A string id.
    Text(String),
}

impl Id {
    /// The id as JSON.
    pub fn to_value(&self) -> Value {
        match self {
            Id::Number(n) => json!(n),
            Id::Text(s) => json!(s),
        }
    }

    fn from_value(value: &Value) -> Option<Id> {
        match value {
            Value::Number(n) => n.as_i64().map(Id::Number),
            Value::String(s) => Some(Id::Text(s.clone())),
            _ => None,
        }
    }
}

impl std::fmt::Display for Id {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Id::Number(n) => write!(f, "{n}"),
            Id::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The error code.
    pub code: i64,
    /// The error message.
    pub message: String,
    /// More about the error, if any.
    pub data: Option<Value>,
}

impl RpcError {
    /// The method is unknown.
    pub const METHOD_NOT_FOUND: i64 = -32601;
    /// The parameters are wrong.
    pub const INVALID_PARAMS: i64 = -32602;
    /// MCP up to 2025-11-25: the resource is not found (2026-07-28 uses -32602; still read).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// MCP 2026-07-28: the HTTP headers disagree with the body (`HeaderMismatch`).
    pub const HEADER_MISMATCH: i64 = -32020;
    /// MCP 2026-07-28: the request needs a client capability it did not declare.
    pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// MCP 2026-07-28: the protocol version asked for is not one the server speaks; `data`
    /// names `supported` and `requested`.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

    /// Whether the code is one the MCP specification defines from 2026-07-28 on (-32020 to
    /// -32099): an answer carrying it comes from a server of that revision or later.
    pub fn is_modern(code: i64) -> bool {
        (-32099..=-32020).contains(&code)
    }
}

/// One message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request: an answer is expected.
    Request {
        /// Its id.
        id: Id,
        /// Its method.
        method: String,
        /// Its parameters.
        params: Option<Value>,
    },
    /// A notification: no answer.
    Notification {
        /// Its method.
        method: String,
        /// Its parameters.
        params: Option<Value>,
    },
    /// A successful answer.
    Response {
        /// The request's id.
        id: Id,
        /// The result.
        result: Value,
    },
    /// An error answer.
    Error {
        /// The request's id (none when it could not be read).
        id: Option<Id>,
        /// The error.
        error: RpcError,
    },
    /// Something JSON-RPC-shaped that answers nothing we asked (a `result` without an `id`,
    /// which some servers send for notifications); noted, not fatal.
    Stray(String),
}

impl Message {
    /// The message with every one of `secrets` redacted from its parameters, result and
    /// error ([`crate::core::egress`]): what a server sends, before anything reads it.
    pub fn redacted(self, secrets: &[String]) -> Message {
        use crate::core::egress::{redact, redact_value};
        if secrets.is_empty() {
            return self;
        }
        let value = |v: Option<Value>| v.map(|v| redact_value(&v, secrets));
        match self {
            Message::Request { id, method, params } => Message::Request {
                id,
                method,
                params: value(params),
            },
            Message::Notification { method, params } => Message::Notification {
                method,
                params: value(params),
            },
            Message::Response { id, result } => Message::Response {
                id,
                result: redact_value(&result, secrets),
            },
            Message::Error { id, mut error } => {
                error.message = redact(&error.message, secrets);
                error.data = value(error.data);
                Message::Error { id, error }
            }
            Message::Stray(what) => Message::Stray(redact(&what, secrets)),
        }
    }

    /// A request message.
    pub fn request(id: Id, method: &str, params: Option<Value>) -> Value {
        let mut message = json!({"jsonrpc": "2.0", "id": id.to_value(), "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        message
    }

    /// A notification message.
    pub fn notification(method: &str, params: Option<Value>) -> Value {
        let mut message = json!({"jsonrpc": "2.0", "method": method});
        if let Some(params) = params {
            message["params"] = params;
        }
        message
    }

    /// A success answer to `id`.
    pub fn response(id: &Id, result: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id.to_value(), "result": result})
    }

    /// An error answer to `id`.
    pub fn error_response(id: &Id, code: i64, message: &str) -> Value {
        json!({"jsonrpc": "2.0", "id": id.to_value(), "error": {"code": code, "message": message}})
    }
}

/// Parses a body: one message or a batch (an array of messages).
pub fn parse_messages(text: &str) -> Result<Vec<Message>, String> {
    let value: Value = serde_json::from_str(text)
        .map_err(|e| format!("the server sent JSON-RPC that is not JSON: {e}"))?;
    match value {
        Value::Array(items) => items.into_iter().map(parse_message).collect(),
        other => Ok(vec![parse_message(other)?]),
    }
}

/// Parses one message value.
pub fn parse_message(value: Value) -> Result<Message, String> {
    let Value::Object(mut map) = value else {
        return Err(format!(
            "a JSON-RPC message is {}, not an object",
            kind(&value)
        ));
    };
    if map.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return Err("a JSON-RPC message lacks \"jsonrpc\": \"2.0\"".into());
    }
    let id = map.get("id").cloned();
    if let Some(method) = map.get("method") {
        let method = method
            .as_str()
            .ok_or("a JSON-RPC `method` is not a string")?
            .to_owned();
        let params = map.remove("params");
        return match id {
            None => Ok(Message::Notification { method, params }),
            Some(id) => {
                let id =
                    Id::from_value(&id).ok_or_else(|| format!("a request id is {}", kind(&id)))?;
                Ok(Message::Request { id, method, params })
            }
        };
    }
    if let Some(error) = map.remove("error") {
        let error = parse_error(&error)?;
        let id = id.as_ref().and_then(Id::from_value);
        return Ok(Message::Error { id, error });
    }
    match (id, map.remove("result")) {
        (None | Some(Value::Null), Some(_)) => Ok(Message::Stray("a result without an id".into())),
        (Some(id), Some(result)) => {
            let id =
                Id::from_value(&id).ok_or_else(|| format!("a response id is {}", kind(&id)))?;
            Ok(Message::Response { id, result })
        }
        _ => Err("a JSON-RPC message is neither a request, a notification nor a response".into()),
    }
}

fn parse_error(value: &Value) -> Result<RpcError, String> {
    let map: &Map<String, Value> = value
        .as_object()
        .ok_or("a JSON-RPC `error` is not an object")?;
    Ok(RpcError {
        code: map.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: map
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("an error without a message")
            .chars()
            .take(500)
            .collect(),
        data: map.get("data").cloned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_every_kind() {
        let parsed = parse_messages(
            r#"[{"jsonrpc":"2.0","id":1,"result":{"ok":true}},
                {"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}},
                {"jsonrpc":"2.0","id":"a","method":"ping"},
                {"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"nope"}}]"#,
        )
        .unwrap();
        assert_eq!(
            parsed[0],
            Message::Response {
                id: Id::Number(1),
                result: json!({"ok": true})
            }
        );
        assert!(
            matches!(&parsed[1], Message::Notification { method, .. } if method == "notifications/progress")
        );
        assert!(matches!(&parsed[2], Message::Request { id: Id::Text(t), .. } if t == "a"));
        assert!(
            matches!(&parsed[3], Message::Error { id: Some(Id::Number(2)), error } if error.code == -32601)
        );
    }

    #[test]
    fn malformed_messages_are_errors() {
        assert!(parse_messages("{").unwrap_err().contains("not JSON"));
        assert!(parse_messages("[1]").unwrap_err().contains("a number"));
        assert!(parse_messages(r#"{"id":1,"result":{}}"#)
            .unwrap_err()
            .contains("2.0"));
        assert!(parse_messages(r#"{"jsonrpc":"2.0","id":{},"result":{}}"#)
            .unwrap_err()
            .contains("an object"));
        assert!(parse_messages(r#"{"jsonrpc":"2.0"}"#).is_err());
        // Some servers answer a notification with a result and no id: noted, not an error.
        assert!(matches!(
            parse_messages(r#"{"jsonrpc":"2.0","result":{}}"#).unwrap()[0],
            Message::Stray(_)
        ));
    }

    #[test]
    fn encoding() {
        assert_eq!(
            Message::request(Id::Number(3), "tools/list", Some(json!({"cursor": "c"}))),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"cursor": "c"}})
        );
        assert_eq!(
            Message::notification("notifications/initialized", None),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
    }
}
