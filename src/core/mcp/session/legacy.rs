//! The parts of [`Session`] that only the session-based revisions (2025-03-26 to 2025-11-25)
//! have: `initialize` and its answer, `notifications/initialized`, the `Mcp-Session-Id`,
//! cancellation, answers to server requests, the GET stream with `Last-Event-ID`, a request
//! sent again for a new session after a 404, and `DELETE` at the end.

use serde_json::{json, Value};

use super::Session;
use crate::core::http::HttpRequest;
use crate::core::mcp::jsonrpc::{Id, Message};
use crate::core::mcp::{McpEvent, Outgoing, Purpose, LATEST_PROTOCOL, SUPPORTED_PROTOCOLS};

impl Session {
    /// The `Mcp-Session-Id` the server gave, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }

    /// `initialize`; `capabilities` are the client's (e.g. `{"elicitation": {}}`).
    pub fn initialize(
        &mut self,
        client_name: &str,
        client_version: &str,
        capabilities: Value,
    ) -> Outgoing {
        self.reset();
        let params = json!({
            "protocolVersion": LATEST_PROTOCOL,
            "capabilities": capabilities,
            "clientInfo": {"name": client_name, "version": client_version},
        });
        self.request("initialize", Some(params), Purpose::Initialize)
    }

    /// `notifications/initialized`, sent once the initialize answer arrived.
    pub fn initialized(&mut self) -> Outgoing {
        self.post(
            Message::notification("notifications/initialized", None),
            None,
        )
    }

    /// `notifications/cancelled` for a request of ours (abort or timeout); it is no longer
    /// pending.
    pub fn cancel(&mut self, id: i64, reason: &str) -> Outgoing {
        self.pending.retain(|(p, _)| *p != id);
        self.post(
            Message::notification(
                "notifications/cancelled",
                Some(json!({"requestId": id, "reason": reason})),
            ),
            None,
        )
    }

    /// Answers a server request: a result, or an error `(code, message)`.
    pub fn reply(&mut self, id: &Id, answer: Result<Value, (i64, String)>) -> Outgoing {
        let body = match answer {
            Ok(result) => Message::response(id, result),
            Err((code, message)) => Message::error_response(id, code, &message),
        };
        self.post(body, None)
    }

    /// The GET stream for server messages, resuming after `last_event_id` when given.
    pub fn listen(&self, last_event_id: Option<&str>) -> HttpRequest {
        let mut headers = self.headers("text/event-stream");
        if let Some(id) = last_event_id {
            headers.push(("last-event-id".to_owned(), id.to_owned()));
        }
        HttpRequest {
            method: "GET".into(),
            url: self.url.clone(),
            headers,
            body: String::new(),
        }
    }

    /// The same request again, for this session (after a 404 ended the previous one): its
    /// method and params, with a new id and this session's headers.
    pub fn again(&mut self, previous: &HttpRequest) -> Outgoing {
        let body: Value = serde_json::from_str(&previous.body).unwrap_or(Value::Null);
        let params = body.get("params").cloned();
        match body["method"].as_str().unwrap_or("") {
            "tools/list" => self.list_tools(params.as_ref().and_then(|p| p["cursor"].as_str())),
            "tools/call" => {
                let name = params
                    .as_ref()
                    .and_then(|p| p["name"].as_str())
                    .unwrap_or("")
                    .to_owned();
                let arguments = params
                    .as_ref()
                    .and_then(|p| p["arguments"].as_object())
                    .cloned()
                    .unwrap_or_default();
                self.call_tool(&name, &arguments, None)
            }
            other => self.call(other, params),
        }
    }

    /// `DELETE` to end the session, when the server gave one.
    pub fn terminate(&self) -> Option<HttpRequest> {
        self.session_id.as_ref()?;
        Some(HttpRequest {
            method: "DELETE".into(),
            url: self.url.clone(),
            headers: self.headers("application/json"),
            body: String::new(),
        })
    }

    /// `initialize` answered: the revision agreed when this client speaks it, and the
    /// server's name; else the request's failure.
    pub(super) fn initialize_answered(&mut self, id: i64, result: &Value) -> Vec<McpEvent> {
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !SUPPORTED_PROTOCOLS.contains(&version) {
            return vec![McpEvent::Failed {
                id,
                error: format!(
                    "the server speaks MCP {version:?}; this client speaks {}",
                    SUPPORTED_PROTOCOLS.join(", ")
                ),
            }];
        }
        self.protocol = Some(version.to_owned());
        self.server = result
            .pointer("/serverInfo/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        vec![McpEvent::Initialized {
            protocol: version.to_owned(),
            server: self.server.clone(),
        }]
    }
}
