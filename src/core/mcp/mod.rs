//! The MCP client over Streamable HTTP, sans-IO.
//!
//! [`Session`] builds every HTTP request of a session and turns what the server answers
//! (status, headers, JSON bodies or SSE events) into [`McpEvent`]s. Two generations:
//!
//! - up to 2025-11-25 (2025-03-26, 2025-06-18, 2025-11-25): initialize, the initialized
//!   notification, `Mcp-Session-Id` and `MCP-Protocol-Version` once known, cancellation,
//!   answers to server requests, the optional GET stream with `Last-Event-ID`, `DELETE` at
//!   the end;
//! - 2026-07-28 ([`modern`]), chosen by `server/discover`: no session; every request carries
//!   `_meta` (protocol version, client capabilities, client info) and the headers
//!   `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*`; results carry
//!   `resultType` (`input_required` is answered and the request sent again with a new id).
//!
//! The shells perform the requests: the worker's fetch, and the CLI's blocking HTTP driver.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod exchange;
pub mod jsonrpc;
pub mod modern;
mod result;
pub mod source;
pub mod tools;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use self::auth::AuthRecord;
use self::jsonrpc::{Id, Message, RpcError};
use self::modern::{ParamHeader, MODERN_PROTOCOL, MODERN_PROTOCOLS};
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
    /// `server/discover` (2026-07-28).
    Discover,
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
    /// Any other refusal: its status and what the server said (read from a JSON-RPC error
    /// in its body, when it had one).
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
    /// The initialize answer was read, or `server/discover` chose 2026-07-28.
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
        /// How long the page may be reused, in ms (`ttlMs` of 2026-07-28; 0 when absent).
        ttl_ms: u64,
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
    /// A 2026-07-28 request needs input first (`resultType: "input_required"`): answer
    /// `requests` and send it again with a new id ([`Session::retry_with_inputs`]).
    InputRequired {
        /// The request's id.
        id: i64,
        /// What it was for.
        purpose: Purpose,
        /// The input requests by key (`{method, params}` each).
        requests: Map<String, Value>,
        /// The `requestState` to echo exactly, if the server gave one.
        state: Option<Value>,
    },
    /// The server does not speak the protocol version asked (-32022): send the request again
    /// with one of `supported`.
    VersionRejected {
        /// The request's id.
        id: i64,
        /// What it was for.
        purpose: Purpose,
        /// The versions the server named.
        supported: Vec<String>,
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
    /// How long the listing may be reused, in ms: the shortest `ttlMs` of its pages.
    pub ttl_ms: Option<u64>,
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
                    ttl_ms,
                } => {
                    self.ttl_ms = Some(self.ttl_ms.map_or(ttl_ms, |t| t.min(ttl_ms)));
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

    /// The client as 2026-07-28 requests name it in `_meta`: its name, version and
    /// capabilities.
    pub fn set_client(&mut self, name: &str, version: &str, capabilities: Value) {
        self.client = (capabilities, json!({"name": name, "version": version}));
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
        self.modern = false;
        self.pending.clear();
    }

    /// The `_meta` a 2026-07-28 request carries for `version`.
    fn meta(&self, version: &str) -> Value {
        json!({
            modern::META_PROTOCOL_VERSION: version,
            modern::META_CLIENT_CAPABILITIES: self.client.0,
            modern::META_CLIENT_INFO: self.client.1,
        })
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
        // 2026-07-28: `_meta` in every request's params, beside the caller's own keys.
        let mut params = match params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let mut meta = self.meta(&version);
        if let (Some(Value::Object(given)), Some(all)) =
            (params.remove("_meta"), meta.as_object_mut())
        {
            all.extend(given);
        }
        params.insert("_meta".into(), meta);
        let params = Value::Object(params);
        let mut headers = vec![("mcp-method".to_owned(), modern::encode_header_value(method))];
        if let Some(name) = modern::mcp_name(method, Some(&params)) {
            headers.push(("mcp-name".to_owned(), modern::encode_header_value(name)));
        }
        if let (Purpose::CallTool { name }, Some(arguments)) =
            (&purpose, params.get("arguments").and_then(Value::as_object))
        {
            if let Some(designated) = self.param_headers.get(name) {
                headers.extend(modern::param_header_values(designated, arguments));
            }
        }
        let body = Message::request(Id::Number(self.next_id), method, Some(params));
        let mut outgoing = self.post(body, Some(purpose));
        let request = &mut outgoing.request;
        request
            .headers
            .retain(|(k, _)| k != "mcp-protocol-version" && k != "mcp-session-id");
        request
            .headers
            .insert(1, ("mcp-protocol-version".to_owned(), version));
        request.headers.extend(headers);
        outgoing
    }

    /// `subscriptions/listen` for changes of the server's tools (2026-07-28, in place of the
    /// GET stream), when the server said it announces them.
    pub fn subscribe(&mut self) -> Option<Outgoing> {
        if !(self.modern && self.tools_change) {
            return None;
        }
        let params = json!({"notifications": {"toolsListChanged": true}});
        Some(self.request(
            "subscriptions/listen",
            Some(params),
            Purpose::Other("subscriptions/listen".into()),
        ))
    }

    /// Stops waiting for the answer to request `id` (its stream was closed).
    pub fn forget(&mut self, id: i64) {
        self.pending.retain(|(p, _)| *p != id);
    }

    /// `server/discover` (2026-07-28): which versions and capabilities the server has. A
    /// server that offers 2026-07-28 makes the session speak it ([`McpEvent::Initialized`]);
    /// one that does not answer it is an older server, for `initialize`.
    pub fn discover(&mut self) -> Outgoing {
        self.reset();
        self.request("server/discover", None, Purpose::Discover)
    }

    /// The same request again under a new id (2026-07-28: after a broken stream, or with
    /// another protocol version): its params and headers kept, `_meta`'s version and the
    /// header set to the session's.
    pub fn reissue(&mut self, previous: &HttpRequest, purpose: Purpose) -> Outgoing {
        self.rebuild(previous, purpose, |_| {})
    }

    /// A request answered `input_required`, sent again with a new id, `inputResponses` and
    /// the server's `requestState` echoed exactly (left out when it gave none).
    pub fn retry_with_inputs(
        &mut self,
        previous: &HttpRequest,
        purpose: Purpose,
        responses: Map<String, Value>,
        state: Option<Value>,
    ) -> Outgoing {
        self.rebuild(previous, purpose, |params| {
            params.insert("inputResponses".into(), Value::Object(responses));
            match state {
                Some(state) => params.insert("requestState".into(), state),
                None => params.remove("requestState"),
            };
        })
    }

    fn rebuild(
        &mut self,
        previous: &HttpRequest,
        purpose: Purpose,
        change: impl FnOnce(&mut Map<String, Value>),
    ) -> Outgoing {
        let mut body: Value = serde_json::from_str(&previous.body).unwrap_or(Value::Null);
        let mut params = match body.get_mut("params").map(Value::take) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        change(&mut params);
        let version = self.protocol.clone().filter(|_| self.modern);
        if let (Some(version), Some(meta)) = (&version, params.get_mut("_meta")) {
            meta[modern::META_PROTOCOL_VERSION] = json!(version);
        }
        self.next_id += 1;
        body["id"] = json!(self.next_id);
        body["params"] = Value::Object(params);
        self.pending.push((self.next_id, purpose));
        let mut request = self.restamp(previous.clone());
        request.body = body.to_string();
        if let Some(version) = version {
            for (name, value) in request.headers.iter_mut() {
                if name == "mcp-protocol-version" {
                    value.clone_from(&version);
                }
            }
        }
        Outgoing {
            id: Some(self.next_id),
            request,
        }
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
                    let supported = (error.data.as_ref())
                        .and_then(|d| d.get("supported"))
                        .and_then(Value::as_array)
                        .map(|v| {
                            v.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_owned)
                                .collect()
                        })
                        .unwrap_or_default();
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
                    if kind == "input_required" && may_need_input(&purpose) =>
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
            Purpose::Discover => {
                let versions: Vec<String> = (result.get("supportedVersions"))
                    .and_then(Value::as_array)
                    .map(|v| {
                        v.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default();
                let Some(version) = MODERN_PROTOCOLS
                    .iter()
                    .find(|v| versions.iter().any(|s| s == *v))
                else {
                    return vec![McpEvent::Failed {
                        id,
                        error: format!(
                            "server/discover offers {versions:?}; this client speaks {} statelessly",
                            MODERN_PROTOCOLS.join(", ")
                        ),
                    }];
                };
                self.modern = true;
                self.tools_change =
                    result.pointer("/capabilities/tools/listChanged") == Some(&json!(true));
                self.protocol = Some((*version).to_owned());
                self.session_id = None;
                self.server = (result.pointer("/_meta/io.modelcontextprotocol~1serverInfo/name"))
                    .or_else(|| result.pointer("/serverInfo/name"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_owned();
                vec![McpEvent::Initialized {
                    protocol: (*version).to_owned(),
                    server: self.server.clone(),
                }]
            }
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
                    Some(Value::Array(entries)) => self.parse_tools(entries),
                    _ => (
                        Vec::new(),
                        vec!["tools/list answered without a `tools` array".to_owned()],
                    ),
                };
                let ttl_ms = modern::ttl_ms(&result);
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
                match modern::param_headers(schema) {
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

    /// An `input_required` result: its requests and state, within their caps
    /// (`MAX_MCP_INPUT_REQUESTS`, `MAX_MCP_REQUEST_STATE_BYTES`).
    fn input_required(&mut self, id: i64, purpose: Purpose, mut result: Value) -> Vec<McpEvent> {
        use crate::core::limits::{MAX_MCP_INPUT_REQUESTS, MAX_MCP_REQUEST_STATE_BYTES};
        let requests = match result.get_mut("inputRequests").map(Value::take) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                let error = format!(
                    "{} answered input_required with inputRequests that are not an object",
                    describe(&purpose)
                );
                return vec![failure(id, purpose, error)];
            }
        };
        let state = result.get_mut("requestState").map(Value::take);
        let state_bytes = state.as_ref().map_or(0, |s| s.to_string().len());
        if requests.len() > MAX_MCP_INPUT_REQUESTS || state_bytes > MAX_MCP_REQUEST_STATE_BYTES {
            let error = format!(
                "{} asked for {} inputs with a state of {state_bytes} bytes, over the caps of {MAX_MCP_INPUT_REQUESTS} and {MAX_MCP_REQUEST_STATE_BYTES}",
                describe(&purpose),
                requests.len()
            );
            return vec![failure(id, purpose, error)];
        }
        vec![McpEvent::InputRequired {
            id,
            purpose,
            requests,
            state,
        }]
    }
}

/// Whether a request may be answered `input_required` (2026-07-28).
fn may_need_input(purpose: &Purpose) -> bool {
    match purpose {
        Purpose::CallTool { .. } => true,
        Purpose::Other(method) => method == "prompts/get" || method == "resources/read",
        _ => false,
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

#[cfg(test)]
mod tests;
