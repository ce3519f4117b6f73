//! [`Session`]: one MCP session, the parts both protocol generations share: its state, the
//! credentials and secrets every request carries, building and posting a request, reading an
//! answer's status and headers ([`Session::answer`]), and turning the server's messages into
//! [`McpEvent`]s ([`Session::receive`]).
//!
//! What only one generation does lives beside, in more `impl Session` blocks: `legacy.rs`
//! (up to 2025-11-25: `initialize`, the session id, cancellation, answers to server requests,
//! the GET stream, a request again after a 404, `DELETE`) and `modern.rs` (2026-07-28:
//! `server/discover`, `_meta` and the standard headers, `subscriptions/listen`, re-issue with a
//! new id, `input_required`).

mod legacy;
mod modern;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::auth::metadata::strings;
use super::auth::{self, AuthRecord};
use super::jsonrpc::{Id, Message, RpcError};
use super::modern::{ParamHeader, MODERN_PROTOCOL};
use super::tools::{self, parse_tools_owned, McpTool};
use super::{Body, CallResult, McpError, McpEvent, Outgoing, Purpose};
use crate::core::http::HttpRequest;

/// One MCP session.
#[derive(Debug, Clone)]
pub struct Session {
    url: String,
    protocol: Option<String>,
    session_id: Option<String>,
    next_id: i64,
    pending: Vec<(i64, Purpose)>,
    server: String,
    /// Headers every request carries (an API key, `--header`), before the Bearer token.
    extra: Vec<(String, String)>,
    /// The sign-in whose Bearer token every request carries.
    auth: Option<AuthRecord>,
    /// 2026-07-28 was chosen: every request carries `_meta` and the standard headers.
    modern: bool,
    /// The server said it announces changes of its tools (`capabilities.tools.listChanged`
    /// of `server/discover`).
    tools_change: bool,
    /// The client's `_meta` of 2026-07-28: its capabilities and info.
    client: (Value, Value),
    /// The `Mcp-Param-*` headers of each listed tool that designates some (2026-07-28).
    param_headers: BTreeMap<String, Vec<ParamHeader>>,
}

impl Session {
    /// A session with the server at `url`, not yet initialized.
    pub fn new(url: impl Into<String>) -> Self {
        Session {
            url: url.into(),
            protocol: None,
            session_id: None,
            next_id: 0,
            pending: Vec::new(),
            server: String::new(),
            extra: Vec::new(),
            auth: None,
            modern: false,
            tools_change: false,
            client: (
                json!({}),
                json!({"name": "webmcp-host", "version": crate::VERSION}),
            ),
            param_headers: BTreeMap::new(),
        }
    }

    /// Whether 2026-07-28 was chosen (no session; `_meta` on every request).
    pub fn is_modern(&self) -> bool {
        self.modern
    }

    /// The server's name as it gave it (`serverInfo`), once connected.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Headers every request carries from now on (an API key header, the CLI's `--header`).
    pub fn with_headers(mut self, headers: Vec<(String, String)>) -> Self {
        self.extra = headers;
        self
    }

    /// The sign-in whose Bearer token every request carries from now on.
    pub fn set_auth(&mut self, record: Option<AuthRecord>) {
        self.auth = record;
    }

    /// `text` without any secret this session sends ([`Session::secrets`]).
    pub fn redact(&self, text: &str) -> String {
        crate::core::egress::redact(text, &self.secrets())
    }

    /// Every secret the session sends: its extra headers' values (and the credential after
    /// `Bearer`), and its sign-in's tokens and client secret.
    pub fn secrets(&self) -> Vec<String> {
        // Headers that never carry a credential are not secrets.
        let plain = [
            "accept",
            "content-type",
            "user-agent",
            "mcp-protocol-version",
        ];
        let headers =
            (self.extra.iter()).filter(|(name, _)| !plain.contains(&&*name.to_ascii_lowercase()));
        let mut out: Vec<String> = headers
            .flat_map(|(_, value)| crate::core::egress::header_secrets(value))
            .collect();
        if let Some(record) = &self.auth {
            out.extend(record.secrets().into_iter().map(str::to_owned));
        }
        out
    }

    /// The sign-in in use, if any.
    pub fn auth(&self) -> Option<&AuthRecord> {
        self.auth.as_ref()
    }

    /// `request` with this session's current credentials (after a refresh or a new sign-in).
    pub fn restamp(&self, mut request: HttpRequest) -> HttpRequest {
        let names: Vec<String> = self.credentials().into_iter().map(|(k, _)| k).collect();
        request.headers.retain(|(k, _)| !names.contains(k));
        request.headers.extend(self.credentials());
        request
    }

    /// The extra headers, then the Bearer token (which replaces an extra header of its name).
    fn credentials(&self) -> Vec<(String, String)> {
        let mut headers = self.extra.clone();
        if let Some(record) = &self.auth {
            let bearer = record.bearer();
            headers.retain(|(k, _)| *k != bearer.0);
            headers.push(bearer);
        }
        headers
    }

    /// The server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The protocol revision agreed, once initialized.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// Whether `initialize` was answered.
    pub fn is_initialized(&self) -> bool {
        self.protocol.is_some()
    }

    /// Ids of requests still waiting for an answer.
    pub fn pending(&self) -> impl Iterator<Item = (i64, &Purpose)> {
        self.pending.iter().map(|(id, p)| (*id, p))
    }

    /// Forgets the session (after a 404): the next step is a new `initialize`.
    pub fn reset(&mut self) {
        self.protocol = None;
        self.session_id = None;
        self.modern = false;
        self.pending.clear();
    }

    fn headers(&self, accept: &str) -> Vec<(String, String)> {
        let mut headers = vec![("accept".to_owned(), accept.to_owned())];
        if let Some(id) = &self.session_id {
            headers.push(("mcp-session-id".to_owned(), id.clone()));
        }
        if let Some(protocol) = &self.protocol {
            headers.push(("mcp-protocol-version".to_owned(), protocol.clone()));
        }
        headers.extend(self.credentials());
        headers
    }

    fn post(&mut self, body: Value, purpose: Option<Purpose>) -> Outgoing {
        let mut headers = self.headers("application/json, text/event-stream");
        headers.push(("content-type".to_owned(), "application/json".to_owned()));
        let id = purpose.map(|purpose| {
            let id = body["id"].as_i64().expect("requests carry a numeric id");
            self.pending.push((id, purpose));
            id
        });
        Outgoing {
            id,
            request: HttpRequest {
                method: "POST".into(),
                url: self.url.clone(),
                headers,
                body: body.to_string(),
            },
        }
    }

    fn request(&mut self, method: &str, params: Option<Value>, purpose: Purpose) -> Outgoing {
        self.next_id += 1;
        let version = match (&purpose, self.modern) {
            (_, true) => self.protocol.clone(),
            (Purpose::Discover, false) => Some(MODERN_PROTOCOL.to_owned()),
            _ => None,
        };
        let Some(version) = version else {
            let body = Message::request(Id::Number(self.next_id), method, params);
            return self.post(body, Some(purpose));
        };
        self.modern_request(method, params, purpose, version)
    }

    /// Stops waiting for the answer to request `id` (its stream was closed).
    pub fn forget(&mut self, id: i64) {
        self.pending.retain(|(p, _)| *p != id);
    }

    /// `tools/list`, from `cursor` when given.
    pub fn list_tools(&mut self, cursor: Option<&str>) -> Outgoing {
        if cursor.is_none() {
            self.param_headers.clear();
        }
        let params = cursor.map(|c| json!({"cursor": c}));
        self.request("tools/list", params, Purpose::ListTools)
    }

    /// `tools/call`; with a progress token the server may send progress notifications.
    pub fn call_tool(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
        progress_token: Option<Value>,
    ) -> Outgoing {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(token) = progress_token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.request(
            "tools/call",
            Some(params),
            Purpose::CallTool {
                name: name.to_owned(),
            },
        )
    }

    /// Any other request (`ping`, `resources/list`, …).
    pub fn call(&mut self, method: &str, params: Option<Value>) -> Outgoing {
        self.request(method, params, Purpose::Other(method.to_owned()))
    }

    /// Reads an answer's status and headers. `content_type` and `session_id` are the
    /// `Content-Type` and `Mcp-Session-Id` headers; `had_session` says whether the request
    /// carried a session id.
    pub fn answer(
        &mut self,
        status: u16,
        content_type: Option<&str>,
        session_id: Option<&str>,
        had_session: bool,
        www_authenticate: Option<&str>,
    ) -> Result<Body, McpError> {
        let stateless = self.modern || self.pending.iter().any(|(_, p)| *p == Purpose::Discover);
        let json = content_type.is_some_and(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        });
        match status {
            200..=299 => {}
            // 2026-07-28 refuses with a JSON-RPC error in the body (400: a version, header or
            // capability problem; 404: an unknown method): read it.
            400..=499 if stateless && json && status != 401 && status != 403 => {
                return Ok(Body::Json)
            }
            404 if had_session => return Err(McpError::SessionExpired),
            401 => {
                return Err(McpError::Unauthorized {
                    www_authenticate: www_authenticate.map(str::to_owned),
                })
            }
            403 if auth::BearerChallenge::from_header(www_authenticate).insufficient_scope() => {
                return Err(McpError::InsufficientScope {
                    www_authenticate: www_authenticate.map(str::to_owned),
                })
            }
            _ => {
                return Err(McpError::Http {
                    status,
                    message: String::new(),
                })
            }
        }
        if let Some(id) = session_id {
            // A session id is visible ASCII (0x21–0x7E), as the spec says.
            if id.is_empty() || id.len() > 1024 || !id.bytes().all(|b| (0x21..=0x7e).contains(&b)) {
                return Err(McpError::Protocol(
                    "the server sent an invalid Mcp-Session-Id".into(),
                ));
            }
            if self.session_id.is_none() && !stateless {
                self.session_id = Some(id.to_owned());
            }
        }
        if status == 202 || status == 204 {
            return Ok(Body::Empty);
        }
        let kind = content_type
            .unwrap_or("")
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match kind.as_str() {
            "application/json" => Ok(Body::Json),
            "text/event-stream" => Ok(Body::Sse),
            "" => Ok(Body::Empty),
            other => Err(McpError::Protocol(format!(
                "the server answered with content type {other}, not JSON or SSE"
            ))),
        }
    }

    /// A message from the server, every secret this session sends redacted from it first
    /// ([`Session::secrets`]): a server that echoes its key in a tool's description, a
    /// result or an error hands nothing on.
    pub fn receive(&mut self, message: Message) -> Vec<McpEvent> {
        let message = message.redacted(&self.secrets());
        match message {
            Message::Response {
                id: Id::Number(id),
                result,
            } => self.result(id, result),
            Message::Response { id, .. } => vec![McpEvent::Note(format!(
                "a response for an id we never sent ({id})"
            ))],
            Message::Error {
                id: Some(Id::Number(id)),
                error,
            } => match self.take(id) {
                Some(purpose)
                    if error.code == RpcError::UNSUPPORTED_PROTOCOL_VERSION
                        && (self.modern || purpose == Purpose::Discover) =>
                {
                    let supported = error.data.as_ref().and_then(|d| d.get("supported"));
                    let supported = strings(supported).unwrap_or_default();
                    vec![McpEvent::VersionRejected {
                        id,
                        purpose,
                        supported,
                    }]
                }
                Some(purpose) => {
                    let error = format!(
                        "{} failed: {} ({})",
                        describe(&purpose),
                        error.message,
                        error.code
                    );
                    match purpose {
                        Purpose::CallTool { name } => vec![McpEvent::CallDone {
                            id,
                            name,
                            result: CallResult::Error(error),
                        }],
                        _ => vec![McpEvent::Failed { id, error }],
                    }
                }
                None => vec![McpEvent::Note(format!(
                    "an error for an id we never sent ({id})"
                ))],
            },
            Message::Error { error, .. } => vec![McpEvent::Note(format!(
                "the server reported: {}",
                error.message
            ))],
            Message::Notification { method, params } => match method.as_str() {
                "notifications/tools/list_changed" => vec![McpEvent::ToolsChanged],
                "notifications/progress" => {
                    let params = params.unwrap_or(Value::Null);
                    vec![McpEvent::Progress {
                        token: params.get("progressToken").cloned().unwrap_or(Value::Null),
                        progress: params
                            .get("progress")
                            .and_then(Value::as_f64)
                            .unwrap_or(0.0),
                        total: params.get("total").and_then(Value::as_f64),
                        message: params
                            .get("message")
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                    }]
                }
                other => vec![McpEvent::Note(format!("notification {other}"))],
            },
            Message::Request { id, method, params } => {
                vec![McpEvent::ServerRequest { id, method, params }]
            }
            Message::Stray(what) => vec![McpEvent::Note(format!("ignored {what}"))],
        }
    }

    fn take(&mut self, id: i64) -> Option<Purpose> {
        let at = self.pending.iter().position(|(p, _)| *p == id)?;
        Some(self.pending.remove(at).1)
    }

    fn result(&mut self, id: i64, mut result: Value) -> Vec<McpEvent> {
        let Some(purpose) = self.take(id) else {
            return vec![McpEvent::Note(format!(
                "a response for an id we never sent ({id}) or already gave up on"
            ))];
        };
        if self.modern || purpose == Purpose::Discover {
            // 2026-07-28: a result without `resultType` is complete; one the client does not
            // know is invalid.
            match result.get("resultType") {
                None => {}
                Some(Value::String(kind)) if kind == "complete" => {}
                Some(Value::String(kind))
                    if kind == "input_required" && modern::may_need_input(&purpose) =>
                {
                    return self.input_required(id, purpose, result)
                }
                Some(other) => {
                    let error = format!(
                        "{} answered an invalid resultType {other}",
                        describe(&purpose)
                    );
                    return vec![failure(id, purpose, error)];
                }
            }
        }
        match purpose {
            Purpose::Discover => self.discover_answered(id, &result),
            Purpose::Initialize => self.initialize_answered(id, &result),
            Purpose::ListTools => {
                let (tools, problems) = match result.get_mut("tools").map(Value::take) {
                    Some(Value::Array(entries)) => self.parse_tools(entries),
                    _ => (
                        Vec::new(),
                        vec!["tools/list answered without a `tools` array".to_owned()],
                    ),
                };
                let ttl_ms = super::modern::ttl_ms(&result);
                let next_cursor = result
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned);
                vec![McpEvent::Tools {
                    tools,
                    problems,
                    next_cursor,
                    ttl_ms,
                }]
            }
            Purpose::CallTool { name } => vec![McpEvent::CallDone {
                id,
                result: tools::call_result(&result),
                name,
            }],
            Purpose::Other(_) => vec![McpEvent::Note(format!("request {id} answered"))],
        }
    }
}

impl Session {
    /// A page of tools; in 2026-07-28, a tool whose `x-mcp-header` annotations break the
    /// rules is left out (and said why), and the others' designated headers are kept for
    /// their calls.
    fn parse_tools(&mut self, mut entries: Vec<Value>) -> (Vec<McpTool>, Vec<String>) {
        let mut problems = Vec::new();
        if self.modern {
            entries.retain(|entry| {
                let name = entry.get("name").and_then(Value::as_str).unwrap_or("");
                let schema = entry.get("inputSchema").unwrap_or(&Value::Null);
                match super::modern::param_headers(schema) {
                    Ok(headers) if headers.is_empty() => true,
                    Ok(headers) => {
                        self.param_headers.insert(name.to_owned(), headers);
                        true
                    }
                    Err(why) => {
                        problems.push(format!("tool `{}` left out: {why}", name.escape_default()));
                        false
                    }
                }
            });
        }
        let (tools, more) = parse_tools_owned(entries);
        problems.extend(more);
        (tools, problems)
    }
}

/// A request's failure as its event: a call's is its error result.
fn failure(id: i64, purpose: Purpose, error: String) -> McpEvent {
    match purpose {
        Purpose::CallTool { name } => McpEvent::CallDone {
            id,
            name,
            result: CallResult::Error(error),
        },
        _ => McpEvent::Failed { id, error },
    }
}

fn describe(purpose: &Purpose) -> String {
    match purpose {
        Purpose::Initialize => "initialize".into(),
        Purpose::Discover => "server/discover".into(),
        Purpose::ListTools => "tools/list".into(),
        Purpose::CallTool { name } => format!("tools/call `{name}`"),
        Purpose::Other(method) => method.clone(),
    }
}
