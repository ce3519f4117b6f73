//! The MCP client over Streamable HTTP, sans-IO.
//!
//! [`Session`] builds every HTTP request of a session (initialize, the initialized
//! notification, `tools/list` with pagination, `tools/call`, cancellation, answers to server
//! requests, the optional GET stream with `Last-Event-ID`, `DELETE` at the end) with
//! `Mcp-Session-Id` and `MCP-Protocol-Version` once known, and turns what the server answers
//! (status, headers, JSON bodies or SSE events) into [`McpEvent`]s. The shells perform the
//! requests: the worker's fetch, and the CLI's blocking HTTP driver.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod exchange;
pub mod jsonrpc;
mod result;
pub mod source;
pub mod tools;

use serde_json::{json, Map, Value};

use self::auth::AuthRecord;
use self::jsonrpc::{Id, Message};
use self::tools::{parse_tools_owned, McpTool};
use super::provider::HttpRequest;

/// The protocol revision the client asks for, and those it accepts.
pub const LATEST_PROTOCOL: &str = "2025-11-25";
/// The protocol revisions the client accepts.
pub const SUPPORTED_PROTOCOLS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
pub use crate::core::limits::MCP_TIMEOUT_MS as DEFAULT_TIMEOUT_MS;
pub use result::{redact_result, secrets_of, CallResult};

/// Why a request was made, to read its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    /// `initialize`.
    Initialize,
    /// `tools/list`.
    ListTools,
    /// `tools/call`.
    CallTool {
        /// The tool called.
        name: String,
    },
    /// Any other method.
    Other(String),
}

/// A request for the shell to send; `id` is the JSON-RPC id when an answer is expected.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// The JSON-RPC id, when an answer is expected.
    pub id: Option<i64>,
    /// The HTTP request.
    pub request: HttpRequest,
}

/// What kind of body follows an answer's status and headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// One JSON body.
    Json,
    /// An SSE stream.
    Sse,
    /// 202 Accepted, or nothing to read.
    Empty,
}

/// A failed exchange.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpError {
    /// 404 for a request that carried a session id: start a new session.
    SessionExpired,
    /// 401: the server wants authorization (see [`auth`]).
    Unauthorized {
        /// The `WWW-Authenticate` header, if any.
        www_authenticate: Option<String>,
    },
    /// 403 with a Bearer `error="insufficient_scope"` challenge: authorize again with more
    /// scope (a step-up).
    InsufficientScope {
        /// The `WWW-Authenticate` header, if any.
        www_authenticate: Option<String>,
    },
    /// Any other refusal: its status and what the server said.
    Http {
        /// The HTTP status.
        status: u16,
        /// The server's words (clipped).
        message: String,
    },
    /// An answer that breaks the protocol.
    Protocol(String),
}

impl std::fmt::Display for McpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McpError::SessionExpired => write!(f, "the server ended the session (404)"),
            McpError::Unauthorized { .. } => {
                write!(f, "the server requires authorization (401): sign in to it")
            }
            McpError::InsufficientScope { www_authenticate } => {
                let scope = auth::BearerChallenge::from_header(www_authenticate.as_deref()).scope;
                write!(
                    f,
                    "the server refused the token: it needs more scope (403 insufficient_scope{})",
                    scope
                        .map(|s| format!(", scope \"{s}\""))
                        .unwrap_or_default()
                )
            }
            McpError::Http { status, message } => write!(
                f,
                "the server answered {status}{}",
                if message.is_empty() {
                    String::new()
                } else {
                    format!(": {message}")
                }
            ),
            McpError::Protocol(message) => write!(f, "{message}"),
        }
    }
}

/// What the server's messages mean to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum McpEvent {
    /// The initialize answer was read.
    Initialized {
        /// The protocol revision agreed.
        protocol: String,
        /// The server's name and version.
        server: String,
    },
    /// A page of `tools/list`.
    Tools {
        /// The tools of the page.
        tools: Vec<McpTool>,
        /// Why some tools were left out.
        problems: Vec<String>,
        /// The cursor of the next page, if any.
        next_cursor: Option<String>,
    },
    /// `notifications/tools/list_changed`.
    ToolsChanged,
    /// A `tools/call` answered.
    CallDone {
        /// The request's id.
        id: i64,
        /// The tool called.
        name: String,
        /// Its result.
        result: CallResult,
    },
    /// `notifications/progress` for a request.
    Progress {
        /// The progress token of the request.
        token: Value,
        /// How far it is.
        progress: f64,
        /// Of how much, if known.
        total: Option<f64>,
        /// The server's words, if any.
        message: Option<String>,
    },
    /// A request from the server, which the client must answer ([`Session::reply`]).
    ServerRequest {
        /// The server's id for it.
        id: Id,
        /// Its method.
        method: String,
        /// Its parameters.
        params: Option<Value>,
    },
    /// A request of ours failed.
    Failed {
        /// The request's id.
        id: i64,
        /// Why.
        error: String,
    },
    /// A message the client takes note of but does not act on (logging, resource updates).
    Note(String),
}

impl McpEvent {
    /// A progress notification as a line for a person (`progress 1/3 message`).
    pub fn progress_text(&self) -> Option<String> {
        let McpEvent::Progress {
            progress,
            total,
            message,
            ..
        } = self
        else {
            return None;
        };
        let total = total.map(|t| format!("/{t}")).unwrap_or_default();
        let message = message
            .as_deref()
            .map(|m| format!(" {m}"))
            .unwrap_or_default();
        Some(format!("progress {progress}{total}{message}"))
    }

    /// The outcome of `tools/call` `name` among a request's events: its result, the request's
    /// failure, or `None` when the server did not answer it. By name: after a 404 the call was
    /// sent again with a new id.
    pub fn call_outcome(events: Vec<McpEvent>, name: &str) -> Option<Result<CallResult, String>> {
        events.into_iter().find_map(|event| match event {
            McpEvent::CallDone {
                name: done, result, ..
            } if done == name => Some(Ok(result)),
            McpEvent::Failed { error, .. } => Some(Err(error)),
            _ => None,
        })
    }
}

/// `tools/list` over all its pages: ask [`ToolListing::request`], feed the answer's events to
/// [`ToolListing::absorb`] until it says the list is complete.
#[derive(Debug, Default)]
pub struct ToolListing {
    cursor: Option<String>,
    pages: usize,
    /// The tools so far.
    pub tools: Vec<McpTool>,
    /// Why some tools were left out.
    pub problems: Vec<String>,
}

impl ToolListing {
    /// Pages read at most (a server that never stops paging).
    pub const MAX_PAGES: usize = crate::core::limits::MAX_MCP_PAGES;
    /// Tools one server may list (`max_mcp_tools`).
    pub const MAX_TOOLS: usize = crate::core::limits::MAX_MCP_TOOLS;

    /// The request for the next page.
    pub fn request(&mut self, session: &mut Session) -> Result<Outgoing, String> {
        if self.pages >= Self::MAX_PAGES {
            return Err(format!(
                "tools/list still had pages after {}",
                Self::MAX_PAGES
            ));
        }
        self.pages += 1;
        Ok(session.list_tools(self.cursor.as_deref()))
    }

    /// A page's events; `Ok(true)` once the list is complete.
    pub fn absorb(&mut self, events: Vec<McpEvent>) -> Result<bool, String> {
        let mut next = None;
        let mut answered = false;
        for event in events {
            match event {
                McpEvent::Tools {
                    tools,
                    problems,
                    next_cursor,
                } => {
                    self.tools.extend(tools);
                    self.problems.extend(problems);
                    if self.tools.len() > Self::MAX_TOOLS {
                        return Err(format!(
                            "tools/list: the server lists more than {} tools (max_mcp_tools)",
                            Self::MAX_TOOLS
                        ));
                    }
                    next = next_cursor;
                    answered = true;
                }
                McpEvent::Failed { error, .. } => return Err(error),
                _ => {}
            }
        }
        if !answered {
            return Err("the server did not answer tools/list".into());
        }
        match next {
            Some(next) if Some(&next) == self.cursor.as_ref() => {
                Err("tools/list returned the same cursor twice".into())
            }
            Some(next) => {
                self.cursor = Some(next);
                Ok(false)
            }
            None => Ok(true),
        }
    }
}

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
        }
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

    /// The `Mcp-Session-Id` the server gave, if any.
    pub fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
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
        let body = Message::request(Id::Number(self.next_id), method, params);
        self.post(body, Some(purpose))
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

    /// `tools/list`, from `cursor` when given.
    pub fn list_tools(&mut self, cursor: Option<&str>) -> Outgoing {
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
        match status {
            200..=299 => {}
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
            if self.session_id.is_none() {
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
        match purpose {
            Purpose::Initialize => {
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
            Purpose::ListTools => {
                let (tools, problems) = match result.get_mut("tools").map(Value::take) {
                    Some(Value::Array(entries)) => parse_tools_owned(entries),
                    _ => (
                        Vec::new(),
                        vec!["tools/list answered without a `tools` array".to_owned()],
                    ),
                };
                let next_cursor = result
                    .get("nextCursor")
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty())
                    .map(str::to_owned);
                vec![McpEvent::Tools {
                    tools,
                    problems,
                    next_cursor,
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

fn describe(purpose: &Purpose) -> String {
    match purpose {
        Purpose::Initialize => "initialize".into(),
        Purpose::ListTools => "tools/list".into(),
        Purpose::CallTool { name } => format!("tools/call `{name}`"),
        Purpose::Other(method) => method.clone(),
    }
}

#[cfg(test)]
mod tests;
