//! What the shell feeds the machine: an answer's status and headers ([`Exchange::handle_head`]:
//! a refusal, a redirect, a 404 or a sign-in asked for), pieces of its body
//! ([`Exchange::handle_body`], JSON or SSE, within their caps), its end
//! ([`Exchange::handle_end`]: resumed, re-issued or failed when the response did not come) and
//! time passing ([`Exchange::handle_timeout`]).

use super::{
    session_purpose, Cap, Exchange, Failure, Head, Kind, Listening, Output, Reader, Refusal,
    Renewal, Role, Stage, StreamId, MAX_ANSWER_BYTES, MAX_RESUMES,
};
use crate::core::limits::MCP_RESUME_WAIT_MS as RETRY_MS;
use crate::core::mcp::auth::MAX_AUTHORIZATIONS;
use crate::core::mcp::jsonrpc::parse_messages;
use crate::core::mcp::{Body, McpError, McpEvent, Session};
use crate::core::provider::sse::{SseDecoder, MAX_SSE_EVENT_BYTES};

impl Exchange {
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
