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
//! authorized at most [`MAX_AUTHORIZATIONS`] times; a JSON answer stops at
//! [`MAX_ANSWER_BYTES`] and an SSE event at the decoder's cap; the deadline moves only on
//! progress, and never past [`MAX_EXTENDED_MS`] after the request was sent.

use std::collections::VecDeque;

use serde_json::Value;

use super::auth::MAX_AUTHORIZATIONS;
use super::jsonrpc::parse_messages;
use super::modern::{Protocols, MODERN_PROTOCOLS};
use super::{Body, McpError, McpEvent, Outgoing, Purpose, Session};
use crate::core::provider::sse::{SseDecoder, MAX_SSE_EVENT_BYTES};
use crate::core::provider::HttpRequest;

use crate::core::limits::MCP_RESUME_WAIT_MS as RETRY_MS;
pub use crate::core::limits::{
    MAX_ANSWER_BYTES, MAX_EXTENDED_MS, MAX_MCP_INPUT_ROUNDS, MAX_RESUMES,
};

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

    /// An answer's status and headers.
    pub fn handle_head(&mut self, session: &mut Session, stream: StreamId, head: Head, now: f64) {
        let Some(at) = self.streams.iter().position(|s| s.id == stream) else {
            return;
        };
        let (role, had_session) = (self.streams[at].role, self.streams[at].had_session);
        self.streams[at].status = head.status;
        if role == Role::Listen {
            let answer = session.answer(
                head.status,
                head.content_type.as_deref(),
                head.session_id.as_deref(),
                true,
                head.www_authenticate.as_deref(),
            );
            match answer {
                Ok(body) if (200..300).contains(&head.status) => {
                    self.streams[at].reader = reader(body);
                    self.listening = Listening::Open;
                }
                refused => {
                    if let Err(error) = refused {
                        if !matches!(error, McpError::Http { status: 405, .. }) {
                            self.log(format!("a side stream failed: {error}"));
                        }
                    }
                    self.drop_stream(stream);
                }
            }
            return;
        }
        let method = self.method();
        if (300..400).contains(&head.status) {
            let location = head.location.unwrap_or_default();
            self.drop_stream(stream);
            return self.fail(Failure::Redirect { method, location });
        }
        let answer = session.answer(
            head.status,
            head.content_type.as_deref(),
            head.session_id.as_deref(),
            had_session,
            head.www_authenticate.as_deref(),
        );
        let error = match answer {
            Ok(body) => {
                self.streams[at].reader = reader(body);
                return;
            }
            Err(error) => error,
        };
        self.drop_stream(stream);
        let job = self.job.as_mut().expect("a job stream belongs to a job");
        let refused = matches!(
            error,
            McpError::Unauthorized { .. } | McpError::InsufficientScope { .. }
        );
        if job.stage == Stage::Discovering && !refused {
            return self.not_discovered(session, format!("{error}"), now);
        }
        match error {
            McpError::SessionExpired if job.kind == Kind::Request(Renewal::Renewable) => {
                job.kind = Kind::Request(Renewal::Renewed);
                self.log("the session expired (404); starting a new one".into());
                let init = self.initialize(session);
                let job = self.job.as_mut().expect("checked above");
                job.stage = Stage::Initializing;
                job.deadline = now + f64::from(self.settings.timeout_ms);
                self.send_job(init.request);
            }
            McpError::Unauthorized { www_authenticate }
            | McpError::InsufficientScope { www_authenticate } => {
                job.authorizations += 1;
                if job.authorizations > MAX_AUTHORIZATIONS {
                    return self.fail(Failure::StillRefused {
                        method,
                        status: head.status,
                        challenge: www_authenticate,
                    });
                }
                let refusal = if head.status == 401 {
                    Refusal::Unauthorized {
                        challenge: www_authenticate,
                    }
                } else {
                    Refusal::InsufficientScope {
                        challenge: www_authenticate,
                    }
                };
                job.stage = Stage::Authorizing;
                let attempt = job.authorizations;
                self.outputs
                    .push_back(Output::Authorize { refusal, attempt });
            }
            error => self.fail(Failure::Refused { method, error }),
        }
    }

    /// A piece of an answer's body.
    pub fn handle_body(&mut self, session: &mut Session, stream: StreamId, bytes: &[u8], now: f64) {
        let Some(at) = self.streams.iter().position(|s| s.id == stream) else {
            return;
        };
        let role = self.streams[at].role;
        let mut texts = Vec::new();
        let mut capped = None;
        match &mut self.streams[at].reader {
            Reader::Json(text) => {
                text.extend_from_slice(bytes);
                if text.len() > MAX_ANSWER_BYTES {
                    capped = Some(Cap::Answer);
                }
            }
            Reader::Sse {
                decoder,
                carry,
                last_event_id,
                retry_ms,
            } => {
                carry.extend_from_slice(bytes);
                let valid = match std::str::from_utf8(carry) {
                    Ok(_) => carry.len(),
                    Err(e) => e.valid_up_to(),
                };
                let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
                carry.drain(..valid);
                for event in decoder.push(&text) {
                    if event.truncated {
                        capped = Some(Cap::Event);
                        break;
                    }
                    if event.id.is_some() {
                        last_event_id.clone_from(&event.id);
                    }
                    if event.retry.is_some() {
                        *retry_ms = event.retry;
                    }
                    if !event.data.trim().is_empty() {
                        texts.push(event.data);
                    }
                }
            }
            Reader::Head | Reader::Empty => {}
        }
        if let Some(cap) = capped {
            self.drop_stream(stream);
            if role == Role::Job {
                let method = self.method();
                self.fail(match cap {
                    Cap::Answer => Failure::AnswerCap {
                        method,
                        cap: MAX_ANSWER_BYTES,
                    },
                    Cap::Event => Failure::EventCap {
                        method,
                        cap: MAX_SSE_EVENT_BYTES,
                    },
                });
            }
            return;
        }
        for text in texts {
            self.receive(session, &text, now);
        }
        self.check_answered(session, now);
    }

    /// The end of an answer's body (`error`: it broke, or could not be had at all).
    pub fn handle_end(
        &mut self,
        session: &mut Session,
        stream: StreamId,
        error: Option<String>,
        now: f64,
    ) {
        let Some(at) = self.streams.iter().position(|s| s.id == stream) else {
            return;
        };
        let finished = self.streams.remove(at);
        if finished.role == Role::Listen {
            self.listening = Listening::Off;
            if let Some(id) = finished.request_id {
                session.forget(id);
            }
            if let Some(error) = error {
                self.log(format!("a stream broke: {error}"));
            }
            return;
        }
        let method = self.method();
        let (json, last_event_id, retry_ms) = match finished.reader {
            Reader::Head => {
                let error = error.unwrap_or_else(|| "no answer".into());
                return self.fail(Failure::Unreachable { method, error });
            }
            Reader::Json(text) => {
                if let Some(error) = error {
                    return self.fail(Failure::Broken { method, error });
                }
                let text = String::from_utf8_lossy(&text).into_owned();
                if !text.trim().is_empty() {
                    // A JSON answer is all there is: one that does not parse is the error.
                    if let Err(error) = parse_messages(&text) {
                        return self.fail(Failure::Malformed { method, error });
                    }
                    self.receive(session, &text, now);
                }
                (true, None, None)
            }
            Reader::Sse {
                mut decoder,
                last_event_id,
                retry_ms,
                ..
            } => {
                if let Some(error) = error {
                    self.log(format!("a stream broke: {error}"));
                }
                if let Some(event) = decoder.finish() {
                    if !event.data.trim().is_empty() {
                        self.receive(session, &event.data, now);
                    }
                }
                (false, last_event_id, retry_ms)
            }
            Reader::Empty => (true, None, None),
        };
        if self.check_answered(session, now) {
            return;
        }
        let Some(job) = self.job.as_mut() else { return };
        job.reading = None;
        let status = finished.status;
        match job.stage {
            Stage::Discovering => {
                let why = match status {
                    200..=299 => "no answer to server/discover".to_owned(),
                    status => format!("server/discover was answered {status}"),
                };
                return self.not_discovered(session, why, now);
            }
            _ if !(200..300).contains(&status) && status != 0 => {
                // A 2026-07-28 refusal whose body held no answer to the request.
                let error = McpError::Http {
                    status,
                    message: String::new(),
                };
                return self.fail(Failure::Refused { method, error });
            }
            Stage::Initializing => {
                let error = "the server did not answer initialize".to_owned();
                return self.fail(Failure::Rejected(error));
            }
            Stage::Notifying => return self.initialized(session, now),
            _ => {}
        }
        // The answer's stream ended without the response.
        job.resumes += 1;
        if session.is_modern() {
            // 2026-07-28 resumes nothing: the request is sent again with a new id.
            if job.resumes > MAX_RESUMES || json {
                return self.fail(Failure::NoResponse {
                    method,
                    notes: Vec::new(),
                });
            }
            let purpose = session_purpose(&job.outgoing);
            if let Some(id) = job.outgoing.id {
                session.forget(id);
            }
            let again = session.reissue(&job.outgoing.request, purpose);
            self.log(format!(
                "the stream broke; {method} sent again with a new id"
            ));
            return self.resend(again, now);
        }
        let listening = self.listening == Listening::Open;
        if job.resumes > MAX_RESUMES || json && !listening {
            let notes = job
                .events
                .iter()
                .filter_map(|e| match e {
                    McpEvent::Note(note) if !note.starts_with("notification ") => {
                        Some(note.clone())
                    }
                    _ => None,
                })
                .take(2)
                .collect();
            return self.fail(Failure::NoResponse { method, notes });
        }
        if listening && last_event_id.is_none() {
            return; // the answer may still come on the GET stream, until the deadline
        }
        let wait = retry_ms.unwrap_or(RETRY_MS.0).min(RETRY_MS.1);
        job.stage = Stage::Resting {
            until: now + wait as f64,
            last_event_id,
        };
    }

    /// Time passed: resume a stream after its wait, or give up at the deadline.
    pub fn handle_timeout(&mut self, session: &mut Session, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        if job.stage == Stage::Authorizing {
            return;
        }
        if now >= job.deadline {
            let (id, method) = (job.outgoing.id, job.method.clone());
            if let Some(stream) = job.reading {
                self.drop_stream(stream);
            }
            if let Some(id) = id.filter(|id| session.pending().any(|(p, _)| p == *id)) {
                if session.is_modern() {
                    // 2026-07-28 over HTTP: closing the stream is the cancellation.
                    session.forget(id);
                } else {
                    let cancel = session.cancel(id, "timed out");
                    self.outputs.push_back(Output::Post(cancel.request));
                }
            }
            let ms = self.settings.timeout_ms;
            return self.fail(Failure::Timeout { method, ms });
        }
        if let Stage::Resting {
            until,
            last_event_id,
        } = &job.stage
        {
            if now >= *until {
                let last_event_id = last_event_id.clone();
                job.stage = Stage::Awaiting;
                self.log(format!(
                    "resuming the stream after event {}",
                    last_event_id.as_deref().unwrap_or("(none)")
                ));
                let request = session.listen(last_event_id.as_deref());
                self.send_job(request);
            }
        }
    }

    /// `server/discover` was not answered with a version this client speaks statelessly:
    /// an older server, for `initialize` ([`Protocols::Auto`]), or the end ([`Protocols::Modern`]).
    fn not_discovered(&mut self, session: &mut Session, why: String, now: f64) {
        if let Some(stream) = self.job.as_ref().and_then(|j| j.reading) {
            self.drop_stream(stream);
        }
        if self.settings.protocols == Protocols::Modern {
            let why = format!(
                "the server does not speak MCP {} ({why})",
                MODERN_PROTOCOLS.join(", ")
            );
            return self.fail(Failure::Rejected(why));
        }
        self.log(format!(
            "server/discover: {why}; connecting with initialize (MCP up to 2025-11-25)"
        ));
        let init = self.initialize(session);
        let Some(job) = self.job.as_mut() else { return };
        job.events.clear();
        job.stage = Stage::Initializing;
        job.outgoing = init.clone();
        job.method = "initialize".into();
        job.deadline = now + f64::from(self.settings.timeout_ms);
        self.send_job(init.request);
    }

    /// The server refused the request's protocol version (-32022): sent again once with a
    /// new id when it names a version this client speaks statelessly; otherwise an older
    /// server when connecting, or the job's failure.
    fn version_rejected(&mut self, session: &mut Session, supported: Vec<String>, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        let ours = MODERN_PROTOCOLS
            .iter()
            .any(|v| supported.iter().any(|s| s == v));
        let discovering = job.stage == Stage::Discovering;
        if ours && !job.version_retried {
            job.version_retried = true;
            let purpose = session_purpose(&job.outgoing);
            let again = session.reissue(&job.outgoing.request, purpose);
            self.log(format!(
                "the server asked for a version of {supported:?}; sent again"
            ));
            return self.resend(again, now);
        }
        if discovering && !ours {
            let why = format!("the server speaks {supported:?}");
            return self.not_discovered(session, why, now);
        }
        let method = job.method.clone();
        self.fail(Failure::Rejected(format!(
            "{method}: the server refused the protocol version, and names {supported:?} (this client speaks {} and {})",
            MODERN_PROTOCOLS.join(", "),
            super::SUPPORTED_PROTOCOLS.join(", ")
        )))
    }

    /// `input_required`: each input request answered as [`Settings::elicitation`] says (an
    /// input the client never declared fails the job), the request sent again with a new id.
    fn input_required(
        &mut self,
        session: &mut Session,
        purpose: Purpose,
        requests: serde_json::Map<String, Value>,
        state: Option<Value>,
        now: f64,
    ) {
        let Some(job) = self.job.as_mut() else { return };
        let method = job.method.clone();
        job.input_rounds += 1;
        if job.input_rounds > MAX_MCP_INPUT_ROUNDS {
            return self.fail(Failure::Rejected(format!(
                "{method}: the server still asked for input after {MAX_MCP_INPUT_ROUNDS} rounds"
            )));
        }
        let mut responses = serde_json::Map::new();
        for (key, request) in requests {
            let asked = request.get("method").and_then(Value::as_str).unwrap_or("");
            if asked != "elicitation/create" {
                return self.fail(Failure::Rejected(format!(
                    "{method}: the server asked for {asked:?} input, which this client did not declare"
                )));
            }
            match answer(self.settings.elicitation, asked, request.get("params")) {
                Ok(response) => responses.insert(key, response),
                Err((_, why)) => return self.fail(Failure::Rejected(format!("{method}: {why}"))),
            };
        }
        let Some(job) = self.job.as_ref() else { return };
        let again = session.retry_with_inputs(&job.outgoing.request, purpose, responses, state);
        self.log(format!(
            "{method}: answered the server's input requests; sent again"
        ));
        self.resend(again, now);
    }

    /// The job's request replaced by `again` (a new id), sent on a new stream.
    fn resend(&mut self, again: Outgoing, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        if let Some(stream) = job.reading {
            self.drop_stream(stream);
        }
        let Some(job) = self.job.as_mut() else { return };
        let discovering = job.stage == Stage::Discovering;
        job.events.retain(|e| {
            !matches!(
                e,
                McpEvent::InputRequired { .. } | McpEvent::VersionRejected { .. }
            )
        });
        job.outgoing = again.clone();
        job.stage = if discovering {
            Stage::Discovering
        } else {
            Stage::Awaiting
        };
        job.deadline = job.deadline.max(now);
        self.send_job(again.request);
    }

    fn initialize(&self, session: &mut Session) -> Outgoing {
        session.initialize(
            &self.settings.client_name,
            &self.settings.client_version,
            self.settings.capabilities.clone(),
        )
    }

    fn start(&mut self, kind: Kind, outgoing: Outgoing, now: f64) {
        let method = serde_json::from_str::<Value>(&outgoing.request.body)
            .ok()
            .and_then(|b| b["method"].as_str().map(str::to_owned))
            .unwrap_or_else(|| outgoing.request.method.clone());
        let request = outgoing.request.clone();
        self.job = Some(Job {
            stage: if kind == Kind::Connect {
                Stage::Initializing
            } else {
                Stage::Awaiting
            },
            kind,
            outgoing,
            method,
            reading: None,
            started: now,
            deadline: now + f64::from(self.settings.timeout_ms),
            resumes: 0,
            authorizations: 0,
            version_retried: false,
            input_rounds: 0,
            events: Vec::new(),
        });
        self.send_job(request);
    }

    fn send_job(&mut self, request: HttpRequest) {
        let stream = self.open(Role::Job, request);
        if let Some(job) = self.job.as_mut() {
            job.reading = Some(stream);
        }
    }

    fn open(&mut self, role: Role, request: HttpRequest) -> StreamId {
        self.next_stream += 1;
        let id = StreamId(self.next_stream);
        let had_session = request.headers.iter().any(|(k, _)| k == "mcp-session-id");
        self.streams.push(Stream {
            id,
            role,
            request_id: None,
            status: 0,
            had_session,
            reader: Reader::Head,
        });
        self.outputs.push_back(Output::Send {
            stream: id,
            request,
        });
        id
    }

    fn drop_stream(&mut self, stream: StreamId) {
        if let Some(at) = self.streams.iter().position(|s| s.id == stream) {
            if self.streams.remove(at).role == Role::Listen {
                self.listening = Listening::Off;
            }
            self.outputs.push_back(Output::Abort(stream));
        }
        if let Some(job) = self.job.as_mut() {
            if job.reading == Some(stream) {
                job.reading = None;
            }
        }
    }

    fn method(&self) -> String {
        self.job_method().unwrap_or_default().to_owned()
    }

    fn log(&mut self, line: String) {
        self.outputs.push_back(Output::Log(line));
    }

    /// Ends the job with `failure`, closing its stream.
    fn fail(&mut self, failure: Failure) {
        if let Some(job) = self.job.take() {
            if let Some(stream) = job.reading {
                self.drop_stream(stream);
            }
            self.outputs.push_back(Output::Done(Err(failure)));
        }
    }

    /// Ends the job with its answer, closing its stream.
    fn finish(&mut self) {
        if let Some(job) = self.job.take() {
            if let Some(stream) = job.reading {
                self.drop_stream(stream);
            }
            self.outputs.push_back(Output::Done(Ok(job.events)));
        }
    }

    /// `initialize` was answered: `notifications/initialized` next (then the request again,
    /// when this was a new session after a 404).
    fn initialized(&mut self, session: &mut Session, now: f64) {
        let Some(job) = self.job.as_mut() else { return };
        match job.stage {
            Stage::Initializing => {
                job.stage = Stage::Notifying;
                let request = session.initialized().request;
                self.send_job(request);
            }
            Stage::Notifying if job.kind == Kind::Connect => self.finish(),
            Stage::Notifying => {
                let again = session.again(&job.outgoing.request);
                job.outgoing = again.clone();
                job.stage = Stage::Awaiting;
                job.started = now;
                job.deadline = now + f64::from(self.settings.timeout_ms);
                self.outputs.push_back(Output::Reconnected);
                self.send_job(again.request);
            }
            _ => {}
        }
    }

    /// Whether the job got what it waited for (then it is done).
    fn check_answered(&mut self, session: &mut Session, now: f64) -> bool {
        let Some(job) = self.job.as_ref() else {
            return false;
        };
        match job.stage {
            Stage::Discovering => {
                let ended = job.events.iter().find_map(|e| match e {
                    McpEvent::Initialized { .. } => Some(Ok(())),
                    McpEvent::VersionRejected { supported, .. } => {
                        Some(Err(Some(supported.clone())))
                    }
                    McpEvent::Failed { .. } => Some(Err(None)),
                    _ => None,
                });
                match ended {
                    Some(Ok(())) => self.finish(),
                    Some(Err(Some(supported))) => self.version_rejected(session, supported, now),
                    Some(Err(None)) => {
                        let error = job.events.iter().rev().find_map(|e| match e {
                            McpEvent::Failed { error, .. } => Some(error.clone()),
                            _ => None,
                        });
                        self.not_discovered(session, error.unwrap_or_default(), now)
                    }
                    None => return false,
                }
                true
            }
            Stage::Initializing => {
                let ended = job.events.iter().find_map(|e| match e {
                    McpEvent::Initialized { .. } => Some(Ok(())),
                    McpEvent::Failed { error, .. } => Some(Err(error.clone())),
                    _ => None,
                });
                match ended {
                    Some(Ok(())) => {
                        if let Some(stream) = job.reading {
                            self.drop_stream(stream);
                        }
                        self.initialized(session, now);
                    }
                    Some(Err(error)) => self.fail(Failure::Rejected(error)),
                    None => return false,
                }
                true
            }
            Stage::Awaiting | Stage::Resting { .. } => match job.outgoing.id {
                Some(id) if !session.pending().any(|(p, _)| p == id) => {
                    let follow = job.events.iter().rev().find_map(|e| match e {
                        McpEvent::InputRequired {
                            id: asked,
                            purpose,
                            requests,
                            state,
                        } if *asked == id => {
                            Some(Err((purpose.clone(), requests.clone(), state.clone())))
                        }
                        McpEvent::VersionRejected {
                            id: asked,
                            supported,
                            ..
                        } if *asked == id => Some(Ok(supported.clone())),
                        _ => None,
                    });
                    match follow {
                        None => self.finish(),
                        Some(Ok(supported)) => self.version_rejected(session, supported, now),
                        Some(Err((purpose, requests, state))) => {
                            self.input_required(session, purpose, requests, state, now)
                        }
                    }
                    true
                }
                _ => false,
            },
            _ => false,
        }
    }

    /// A body's messages: fed to the session, server requests answered, notifications passed
    /// on, progress extending the deadline.
    fn receive(&mut self, session: &mut Session, text: &str, now: f64) {
        let messages = match parse_messages(text) {
            Ok(messages) => messages,
            Err(error) => {
                self.note(McpEvent::Note(format!("skipped: {error}")));
                return;
            }
        };
        for message in messages {
            for event in session.receive(message) {
                match &event {
                    McpEvent::ServerRequest { method, .. } if session.is_modern() => {
                        // 2026-07-28 servers send no requests; the client sends no responses.
                        self.log(format!("ignored a request from the server ({method}): servers send none in this revision"));
                    }
                    McpEvent::ServerRequest { id, method, params } => {
                        let answer = answer(self.settings.elicitation, method, params.as_ref());
                        let reply = session.reply(id, answer);
                        self.log(format!("answered the server's {method}"));
                        self.outputs.push_back(Output::Post(reply.request));
                    }
                    McpEvent::ToolsChanged => {
                        self.outputs.push_back(Output::Event(event.clone()));
                    }
                    McpEvent::Progress { .. } => {
                        self.outputs.push_back(Output::Event(event.clone()));
                        let timeout = f64::from(self.settings.timeout_ms);
                        if let (Some(job), Deadline::ExtendedByProgress) =
                            (self.job.as_mut(), self.settings.deadline)
                        {
                            job.deadline = (now + timeout).min(job.started + MAX_EXTENDED_MS);
                        }
                    }
                    _ => {}
                }
                self.note(event);
            }
        }
    }

    fn note(&mut self, event: McpEvent) {
        if let Some(job) = self.job.as_mut() {
            job.events.push(event);
        }
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

fn reader(body: Body) -> Reader {
    match body {
        Body::Json => Reader::Json(Vec::new()),
        Body::Sse => Reader::Sse {
            decoder: SseDecoder::new(),
            carry: Vec::new(),
            last_event_id: None,
            retry_ms: None,
        },
        Body::Empty => Reader::Empty,
    }
}

#[cfg(test)]
mod tests;
