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
//! [`Session`] is defined in `session/`: what both generations share in its `mod.rs`, each
//! generation's own requests and answers in `legacy.rs` and `modern.rs` beside it.
//!
//! The shells perform the requests: the worker's fetch, and the CLI's blocking HTTP driver.

#![warn(missing_docs)]

pub mod auth;
pub mod client;
pub mod exchange;
pub mod jsonrpc;
pub mod modern;
mod result;
mod session;
pub mod source;
pub mod tools;

use serde_json::{Map, Value};

use self::jsonrpc::Id;
use self::tools::McpTool;
use super::http::HttpRequest;

/// The protocol revision the client asks for, and those it accepts.
pub const LATEST_PROTOCOL: &str = "2025-11-25";
/// The protocol revisions the client accepts.
pub const SUPPORTED_PROTOCOLS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];
pub use crate::core::limits::MCP_TIMEOUT_MS as DEFAULT_TIMEOUT_MS;
pub use result::{redact_result, secrets_of, CallResult};
pub use session::Session;

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

#[cfg(test)]
mod tests;
