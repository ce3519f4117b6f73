//! One MCP request's lifecycle over a [`Session`], sans-IO: the machine both shells drive.
//!
//! The shell starts a job ([`Exchange::connect`], [`Exchange::request`]) or the GET stream
//! ([`Exchange::listen`]), performs what [`Exchange::poll`] asks (send a request and feed its
//! answer back under its [`StreamId`], post one whose answer is not read, abort a stream, pass
//! an event on, sign in), feeds what it reads ([`Exchange::handle_head`],
//! [`Exchange::handle_body`], [`Exchange::handle_end`]) and wakes the machine at
//! [`Exchange::poll_timeout`] ([`Exchange::handle_timeout`]). Time is a value the shell passes
//! in; the machine never reads a clock.
//!
//! Connecting tries `server/discover` first (unless [`Settings::protocols`] says
//! [`Protocols::Legacy`]): a server that offers 2026-07-28 is spoken to statelessly from then
//! on; one that answers otherwise (an error without a 2026-07-28 code, a 4xx without a JSON-RPC
//! error, no answer) is an older server, and `initialize` follows. In 2026-07-28 a request
//! refused for its version (-32022) is sent again once with a new id, one answered
//! `input_required` is answered as [`Settings::elicitation`] says and sent again with a new id
//! (at most [`MAX_MCP_INPUT_ROUNDS`] rounds), a broken stream re-issues the request with a new
//! id (no `Last-Event-ID`), a timeout only closes the stream, and server requests are noted,
//! never answered.
//!
//! Invariants: at most one job at a time, and it ends in exactly one [`Output::Done`]; a
//! job's request is resumed at most [`MAX_RESUMES`] times, re-initialised at most once (404),
//! authorized at most [`MAX_AUTHORIZATIONS`](super::auth::MAX_AUTHORIZATIONS) times; a JSON
//! answer stops at [`MAX_ANSWER_BYTES`] and an SSE event at the decoder's cap; the deadline
//! moves only on progress, and never past [`MAX_EXTENDED_MS`] after the request was sent.

use std::collections::VecDeque;

use serde_json::Value;

use super::modern::Protocols;
use super::{McpEvent, Outgoing, Purpose, Session};
use crate::core::provider::sse::SseDecoder;

pub use crate::core::limits::{
    MAX_ANSWER_BYTES, MAX_EXTENDED_MS, MAX_MCP_INPUT_ROUNDS, MAX_RESUMES,
};

mod handle;
mod job;
mod modern;
mod output;
mod reply;

pub use output::{Failure, Head, Listening, Output, Recourse, Refusal, StreamId};
pub use reply::{answer, Elicitation};

/// Whether progress notifications extend a request's deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deadline {
    /// `timeout` in all, whatever the server sends.
    Fixed,
    /// Each progress notification gives `timeout` again, up to [`MAX_EXTENDED_MS`].
    ExtendedByProgress,
}

/// What the machine is told once: who the client is and its policies.
#[derive(Debug, Clone)]
pub struct Settings {
    /// `clientInfo.name` of `initialize`.
    pub client_name: String,
    /// `clientInfo.version` of `initialize`.
    pub client_version: String,
    /// The client's capabilities (`{"elicitation": {}}`).
    pub capabilities: Value,
    /// Time for one request, in ms.
    pub timeout_ms: u32,
    /// Whether progress extends the deadline.
    pub deadline: Deadline,
    /// How the server's `elicitation/create` is answered (a server request up to
    /// 2025-11-25, an input request of `input_required` in 2026-07-28).
    pub elicitation: Elicitation,
    /// Which protocol generations connecting tries.
    pub protocols: Protocols,
}

/// What a job is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `initialize`, then `notifications/initialized`.
    Connect,
    /// One request (or notification); `Renewable` until a 404 was answered with a new session.
    Request(Renewal),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Renewal {
    Renewable,
    Renewed,
}

/// Where a job stands.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    /// `server/discover` sent (connecting).
    Discovering,
    /// `initialize` sent (connecting, or after a 404).
    Initializing,
    /// `notifications/initialized` sent.
    Notifying,
    /// The request sent; its answer read on `reading` (none: the answer may come on the GET
    /// stream).
    Awaiting,
    /// The answer's stream ended without the response: resume at `until`.
    Resting {
        until: f64,
        last_event_id: Option<String>,
    },
    /// Waiting for the shell to sign in.
    Authorizing,
}

#[derive(Debug)]
struct Job {
    kind: Kind,
    stage: Stage,
    /// The request as first asked (sent again after a 404 or a sign-in).
    outgoing: Outgoing,
    method: String,
    /// The stream of the job's current request.
    reading: Option<StreamId>,
    started: f64,
    deadline: f64,
    resumes: u32,
    authorizations: u32,
    /// The request was sent again for another protocol version (-32022), at most once.
    version_retried: bool,
    /// Rounds of `input_required` answered.
    input_rounds: u32,
    events: Vec<McpEvent>,
}

/// How a stream's body is read.
#[derive(Debug)]
enum Reader {
    /// The head has not come yet.
    Head,
    Json(Vec<u8>),
    Sse {
        decoder: SseDecoder,
        /// Bytes of a character cut between chunks.
        carry: Vec<u8>,
        last_event_id: Option<String>,
        retry_ms: Option<u64>,
    },
    Empty,
}

/// Which cap a body passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cap {
    Answer,
    Event,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Job,
    Listen,
}

#[derive(Debug)]
struct Stream {
    id: StreamId,
    role: Role,
    /// The JSON-RPC id of the request it answers (a `subscriptions/listen`).
    request_id: Option<i64>,
    /// The answer's HTTP status, once known.
    status: u16,
    /// The request carried a session id (a 404 then means the session ended).
    had_session: bool,
    reader: Reader,
}

/// The machine: see the module's documentation.
#[derive(Debug)]
pub struct Exchange {
    settings: Settings,
    job: Option<Job>,
    streams: Vec<Stream>,
    listening: Listening,
    next_stream: u64,
    outputs: VecDeque<Output>,
}

impl Exchange {
    /// A machine with no job.
    pub fn new(settings: Settings) -> Self {
        Exchange {
            settings,
            job: None,
            streams: Vec::new(),
            listening: Listening::Off,
            next_stream: 0,
            outputs: VecDeque::new(),
        }
    }

    /// Whether the GET stream is open.
    pub fn listening(&self) -> Listening {
        self.listening
    }

    /// Whether a job is under way.
    pub fn busy(&self) -> bool {
        self.job.is_some()
    }

    /// The JSON-RPC method (or HTTP method) of the job under way.
    pub fn job_method(&self) -> Option<&str> {
        self.job.as_ref().map(|j| j.method.as_str())
    }

    /// The next thing to do.
    pub fn poll(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When [`Exchange::handle_timeout`] is due, if anything waits on time.
    pub fn poll_timeout(&self) -> Option<f64> {
        let job = self.job.as_ref()?;
        Some(match job.stage {
            Stage::Resting { until, .. } => until.min(job.deadline),
            Stage::Authorizing => return None,
            _ => job.deadline,
        })
    }

    /// Connects: `server/discover` (2026-07-28), else (or with [`Protocols::Legacy`])
    /// `initialize` and `notifications/initialized`.
    pub fn connect(&mut self, session: &mut Session, now: f64) {
        let settings = &self.settings;
        session.set_client(
            &settings.client_name,
            &settings.client_version,
            settings.capabilities.clone(),
        );
        if self.settings.protocols == Protocols::Legacy {
            let init = self.initialize(session);
            return self.start(Kind::Connect, init, now);
        }
        let discover = session.discover();
        self.start(Kind::Connect, discover, now);
        if let Some(job) = self.job.as_mut() {
            job.stage = Stage::Discovering;
        }
    }

    /// Starts one request (or notification) built by the session; a 404 on a live session
    /// starts a new session and sends it again, once.
    pub fn request(&mut self, outgoing: Outgoing, now: f64) {
        self.start(Kind::Request(Renewal::Renewable), outgoing, now);
    }

    /// Opens the GET stream for server messages (its messages are handled like any other);
    /// in 2026-07-28, `subscriptions/listen` for tool changes, when the server announces them.
    pub fn listen(&mut self, session: &mut Session) {
        if let Some(previous) = self.streams.iter().find(|s| s.role == Role::Listen) {
            let id = previous.id;
            self.drop_stream(id);
        }
        if session.is_modern() {
            if let Some(subscribe) = session.subscribe() {
                let stream = self.open(Role::Listen, subscribe.request);
                if let Some(at) = self.streams.iter().position(|s| s.id == stream) {
                    self.streams[at].request_id = subscribe.id;
                }
                self.listening = Listening::Opening;
            }
            return;
        }
        self.open(Role::Listen, session.listen(None));
        self.listening = Listening::Opening;
    }

    /// The shell signed in (or refreshed; the session holds the new record): send again.
    pub fn authorized(&mut self, session: &mut Session, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        if job.stage != Stage::Authorizing {
            return;
        }
        job.stage = match session_purpose(&job.outgoing) {
            Purpose::Discover => Stage::Discovering,
            // Connecting: its answer is followed by `notifications/initialized`.
            Purpose::Initialize if job.kind == Kind::Connect => Stage::Initializing,
            _ => Stage::Awaiting,
        };
        job.deadline = now + f64::from(self.settings.timeout_ms);
        let request = session.restamp(job.outgoing.request.clone());
        self.send_job(request);
    }

    /// The shell could not sign in: the job fails with `why`.
    pub fn unauthorized(&mut self, why: String) {
        let Some(job) = self.job.as_ref() else { return };
        let method = job.method.clone();
        self.fail(Failure::SignIn { method, why });
    }
}

/// What a job's request was for, read from its body (to send it again).
fn session_purpose(outgoing: &Outgoing) -> Purpose {
    let body: Value = serde_json::from_str(&outgoing.request.body).unwrap_or(Value::Null);
    match body["method"].as_str().unwrap_or("") {
        "server/discover" => Purpose::Discover,
        "initialize" => Purpose::Initialize,
        "tools/list" => Purpose::ListTools,
        "tools/call" => Purpose::CallTool {
            name: body
                .pointer("/params/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        },
        other => Purpose::Other(other.to_owned()),
    }
}

#[cfg(test)]
mod tests;
