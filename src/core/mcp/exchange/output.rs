//! What the exchange machine says and hears: stream ids, an answer's head, the outputs the
//! shell performs, and the failures that end a job (each naming its cap or cause).

use crate::core::http::HttpRequest;
use crate::core::mcp::auth::{BearerChallenge, MAX_AUTHORIZATIONS};
use crate::core::mcp::{McpError, McpEvent};

/// One HTTP exchange the machine asked for; the shell feeds its answer back under this id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StreamId(pub u64);

/// An answer's status line and the headers the machine reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The HTTP status.
    pub status: u16,
    /// `Content-Type`: JSON, SSE, or nothing.
    pub content_type: Option<String>,
    /// `Mcp-Session-Id`.
    pub session_id: Option<String>,
    /// `WWW-Authenticate`, with a 401 or 403.
    pub www_authenticate: Option<String>,
    /// `Location`, with a redirect (which is not followed).
    pub location: Option<String>,
    /// `Retry-After`, as a model's refusal says when to try again.
    pub retry_after: Option<String>,
}

/// Why the server refused a request's credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 401: sign in, or refresh the token.
    Unauthorized {
        /// Its `WWW-Authenticate` header, if any.
        challenge: Option<String>,
    },
    /// 403 `insufficient_scope`: sign in again for more scope (a step-up).
    InsufficientScope {
        /// Its `WWW-Authenticate` header, if any.
        challenge: Option<String>,
    },
}

impl Refusal {
    /// The HTTP status of the refusal (401 or 403).
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Unauthorized { .. } => 401,
            Refusal::InsufficientScope { .. } => 403,
        }
    }

    /// The `WWW-Authenticate` header that came with it.
    pub fn challenge(&self) -> Option<&str> {
        match self {
            Refusal::Unauthorized { challenge } | Refusal::InsufficientScope { challenge } => {
                challenge.as_deref()
            }
        }
    }

    /// The refusal as the session's error, for a client that cannot sign in.
    pub fn error(self) -> McpError {
        match self {
            Refusal::Unauthorized { challenge } => McpError::Unauthorized {
                www_authenticate: challenge,
            },
            Refusal::InsufficientScope { challenge } => McpError::InsufficientScope {
                www_authenticate: challenge,
            },
        }
    }
}

/// What a client that never opens a sign-in by itself (the extension during a run) does
/// about a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recourse {
    /// Refresh the token, then [`super::Exchange::authorized`]; when that fails, give up with
    /// [`Recourse::refresh_failed`].
    Refresh,
    /// Give up: [`super::Exchange::unauthorized`] with this text.
    GiveUp(String),
}

impl Recourse {
    /// A 401 is refreshed once when the client is signed in; anything else asks the person to
    /// sign in (again) to `server`.
    pub fn after(refusal: &Refusal, attempt: u32, signed_in: bool, server: &str) -> Recourse {
        match refusal {
            Refusal::Unauthorized { .. } if attempt == 1 && signed_in => Recourse::Refresh,
            Refusal::Unauthorized { .. } => Recourse::GiveUp(format!(
                "the server requires authorization (401): sign in to {server} first"
            )),
            Refusal::InsufficientScope { challenge } => {
                let scope = BearerChallenge::from_header(challenge.as_deref())
                    .scope
                    .map(|s| format!(" (scope \"{s}\")"))
                    .unwrap_or_default();
                Recourse::GiveUp(format!(
                    "the server needs more scope{scope} (403 insufficient_scope): sign in to {server} again to grant it"
                ))
            }
        }
    }

    /// Why a refresh after a 401 did not help.
    pub fn refresh_failed(server: &str) -> String {
        format!("the server refused the sign-in (401): sign in to {server} again")
    }
}

/// The next thing the shell does.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Send `request` (every header decided) and feed its answer back under `stream`.
    Send {
        /// The id its answer is fed back under.
        stream: StreamId,
        /// The request.
        request: HttpRequest,
    },
    /// Send `request` and do not read its answer (a reply to the server, a cancellation).
    Post(HttpRequest),
    /// Stop reading `stream`; what still comes of it is ignored.
    Abort(StreamId),
    /// A server message for the caller as it comes (progress, `tools/list_changed`).
    Event(McpEvent),
    /// A line for the client's log.
    Log(String),
    /// The server refused the credentials (`attempt` counts from 1): sign in or refresh, then
    /// [`super::Exchange::authorized`], or [`super::Exchange::unauthorized`] with why not.
    Authorize {
        /// What the server refused.
        refusal: Refusal,
        /// The how-manieth authorization of the request (from 1).
        attempt: u32,
    },
    /// A 404 ended the session and a new one was started: a client that keeps a GET stream
    /// opens it again.
    Reconnected,
    /// The job's end: every message read meanwhile, or why there is no answer.
    Done(Result<Vec<McpEvent>, Failure>),
}

/// Why a job ended without its answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// No answer before the deadline; the request was cancelled.
    Timeout {
        /// The request's method.
        method: String,
        /// The time it had, in ms.
        ms: u32,
    },
    /// The request could not be sent, or its answer not read.
    Unreachable {
        /// The request's method.
        method: String,
        /// Why.
        error: String,
    },
    /// A JSON answer broke off.
    Broken {
        /// The request's method.
        method: String,
        /// Why.
        error: String,
    },
    /// The server answered with a redirect, which is not followed.
    Redirect {
        /// The request's method.
        method: String,
        /// Where the redirect pointed.
        location: String,
    },
    /// The server refused (an HTTP status, a bad session id, an unknown content type).
    Refused {
        /// The request's method.
        method: String,
        /// Why.
        error: McpError,
    },
    /// A JSON answer passed `cap` bytes (`max_answer_bytes`).
    AnswerCap {
        /// The request's method.
        method: String,
        /// The cap passed, in bytes.
        cap: usize,
    },
    /// An SSE event passed `cap` bytes (`max_sse_event_bytes`).
    EventCap {
        /// The request's method.
        method: String,
        /// The cap passed, in bytes.
        cap: usize,
    },
    /// A JSON answer that is not JSON-RPC.
    Malformed {
        /// The request's method.
        method: String,
        /// Why.
        error: String,
    },
    /// The answer ended (and could not be resumed) without the response.
    NoResponse {
        /// The request's method.
        method: String,
        /// What was seen of the answer meanwhile.
        notes: Vec<String>,
    },
    /// The server answered the request with an error.
    Rejected(String),
    /// Signing in (or refreshing) failed, as the shell says.
    SignIn {
        /// The request's method.
        method: String,
        /// Why, as the shell says.
        why: String,
    },
    /// The server still refused after [`MAX_AUTHORIZATIONS`] sign-ins.
    StillRefused {
        /// The request's method.
        method: String,
        /// The last refusal's status.
        status: u16,
        /// The last refusal's `WWW-Authenticate`, if any.
        challenge: Option<String>,
    },
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Timeout { method, ms } => {
                write!(f, "{method}: no answer within {ms} ms (cancelled)")
            }
            Failure::Unreachable { method, error } => {
                write!(f, "{method}: the server could not be reached: {error}")
            }
            Failure::Broken { method, error } => write!(f, "{method}: the answer broke: {error}"),
            Failure::Redirect { method, location } => write!(
                f,
                "the server answered {method} with a redirect to {location}; redirects are not followed"
            ),
            Failure::Refused { method, error } => write!(f, "{method}: {error}"),
            Failure::AnswerCap { method, cap } => write!(
                f,
                "{method}: the server's answer passed {cap} bytes (max_answer_bytes)"
            ),
            Failure::EventCap { method, cap } => write!(
                f,
                "{method}: an SSE event of the server passed {cap} bytes (max_sse_event_bytes)"
            ),
            Failure::Malformed { method, error } => write!(f, "{method}: {error}"),
            Failure::NoResponse { method, notes } if notes.is_empty() => {
                write!(f, "{method}: the server ended its answer without a response")
            }
            Failure::NoResponse { method, notes } => write!(
                f,
                "{method}: the server ended its answer without a response ({})",
                notes.join("; ")
            ),
            Failure::Rejected(error) => write!(f, "{error}"),
            Failure::SignIn { method, why } => write!(f, "{method}: {why}"),
            Failure::StillRefused {
                method,
                status,
                challenge,
            } => {
                let challenge = BearerChallenge::from_header(challenge.as_deref());
                write!(
                    f,
                    "{method}: the server still refuses after {MAX_AUTHORIZATIONS} sign-ins ({status}{}); giving up",
                    challenge
                        .error_description
                        .or(challenge.error)
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default()
                )
            }
        }
    }
}

/// Whether the GET stream for server messages is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listening {
    /// None open (never asked, refused, or ended).
    Off,
    /// Sent; its status not yet known.
    Opening,
    /// Open: server messages may come on it.
    Open,
}
