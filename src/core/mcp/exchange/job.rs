//! A job's course inside the machine: started, its requests sent on streams that are opened
//! and dropped, `initialize` then `notifications/initialized`, the messages of its answers
//! read (server requests answered, progress extending the deadline), whether it got what it
//! waited for, and its end in exactly one [`Output::Done`].

use serde_json::Value;

use super::{
    answer, Deadline, Exchange, Failure, Job, Kind, Listening, Output, Reader, Role, Stage, Stream,
    StreamId, MAX_EXTENDED_MS,
};
use crate::core::http::HttpRequest;
use crate::core::mcp::jsonrpc::parse_messages;
use crate::core::mcp::{McpEvent, Outgoing, Session};

impl Exchange {
    pub(super) fn initialize(&self, session: &mut Session) -> Outgoing {
        session.initialize(
            &self.settings.client_name,
            &self.settings.client_version,
            self.settings.capabilities.clone(),
        )
    }

    pub(super) fn start(&mut self, kind: Kind, outgoing: Outgoing, now: f64) {
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

    pub(super) fn send_job(&mut self, request: HttpRequest) {
        let stream = self.open(Role::Job, request);
        if let Some(job) = self.job.as_mut() {
            job.reading = Some(stream);
        }
    }

    pub(super) fn open(&mut self, role: Role, request: HttpRequest) -> StreamId {
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

    pub(super) fn drop_stream(&mut self, stream: StreamId) {
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

    pub(super) fn method(&self) -> String {
        self.job_method().unwrap_or_default().to_owned()
    }

    pub(super) fn log(&mut self, line: String) {
        self.outputs.push_back(Output::Log(line));
    }

    /// Ends the job with `failure`, closing its stream.
    pub(super) fn fail(&mut self, failure: Failure) {
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
    pub(super) fn initialized(&mut self, session: &mut Session, now: f64) {
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
    pub(super) fn check_answered(&mut self, session: &mut Session, now: f64) -> bool {
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
    pub(super) fn receive(&mut self, session: &mut Session, text: &str, now: f64) {
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
