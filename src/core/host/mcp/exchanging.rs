//! One [`Exchange`] job driven over the host's vocabulary: the requests it sends fetched
//! ([`Http::Fetch`]), the stream it waits on read ([`Http::Read`]) until its deadline, a
//! refusal answered with a refresh of the sign-in ([`Refresh`]), the session's listening
//! stream opened again after a new session ([`Mcp::Listen`]), until its one
//! [`ExchangeOutput::Done`]. Every decision is the exchange machine's; this sub-machine only
//! carries its outputs out and its inputs in, as the shell's loop did.

use super::super::io::{Fetched, Http, Input, Mcp, Output, Piece, Step};
use super::super::Host;
use super::signins::Refresh;
use super::ClientId;
use crate::core::mcp::exchange::{Exchange, Output as ExchangeOutput, Recourse, StreamId};
use crate::core::mcp::{McpEvent, Outgoing};
use crate::core::provider::redact;

/// What a job gives: its events, or its failure (secrets redacted).
pub type Exchanged = Result<Vec<McpEvent>, String>;

/// The sub-machine: see the module's documentation.
#[derive(Debug)]
pub struct Exchanging {
    client: ClientId,
    machine: Exchange,
    /// The stream the job reads, and its fetch.
    reading: Option<(StreamId, u64)>,
    waiting: Waiting,
    /// The end of an outer limit (an opening's time), if any: no wait outlasts it.
    until: Option<f64>,
    /// The answer, given once the stream still read is aborted.
    answer: Option<Exchanged>,
}

#[derive(Debug)]
enum Waiting {
    Nothing,
    Head(StreamId, u64),
    Body(StreamId, u64),
    Slept,
    Done,
    Authorizing(Box<Refresh>),
}

impl Exchanging {
    /// Drives `machine`, whose job was started on the session of `client`.
    pub fn new(client: ClientId, machine: Exchange, until: Option<f64>) -> Exchanging {
        Exchanging {
            client,
            machine,
            reading: None,
            waiting: Waiting::Nothing,
            until,
            answer: None,
        }
    }

    /// One request of the client's session (`None`: the client is closed).
    pub fn request(
        host: &Host,
        client: ClientId,
        outgoing: Outgoing,
        now: f64,
    ) -> Option<Exchanging> {
        let mut machine = Exchange::new(host.mcp_settings(client)?);
        machine.request(outgoing, now);
        Some(Exchanging::new(client, machine, None))
    }

    /// Within an outer limit too.
    pub fn within(mut self, until: Option<f64>) -> Exchanging {
        self.until = until;
        self
    }

    /// The fetch still read, for an outer limit that ends the job to abort.
    pub fn open_fetch(&self) -> Option<u64> {
        match self.waiting {
            Waiting::Body(_, id) => Some(id),
            _ => self.reading.map(|(_, id)| id),
        }
    }

    /// Ms to wait at most now: until the machine's deadline and the outer limit.
    fn left(&self, now: f64) -> u32 {
        let limit = self
            .until
            .map_or(u32::MAX, |until| (until - now).max(0.0) as u32);
        self.machine.wait_ms(now).min(limit)
    }

    /// One step.
    pub fn step(&mut self, host: &Host, input: Option<Input>, now: f64) -> Step<Exchanged> {
        if let Some(answer) = self.answer.take() {
            return Step::Done(answer);
        }
        let client = self.client;
        if input.is_some() && host.with_client(client, |_| ()).is_none() {
            // Closed meanwhile: nothing more is read or sent.
            let method = self.machine.job_method().unwrap_or_default();
            let closed = host.mcp_refuses(client, method).err().unwrap_or_default();
            self.waiting = Waiting::Nothing;
            return self.finish(Err(closed));
        }
        let machine = &mut self.machine;
        let feed = |f: &mut dyn FnMut(&mut crate::core::mcp::Session)| {
            host.with_client(client, |c| f(&mut c.session));
        };
        match (
            std::mem::replace(&mut self.waiting, Waiting::Nothing),
            input,
        ) {
            (Waiting::Nothing, None) | (Waiting::Done, Some(Input::Done(_))) => {}
            (Waiting::Head(stream, id), Some(Input::Fetched(fetched))) => match fetched {
                Fetched::Head(head) => {
                    let mut head = Some(head);
                    feed(&mut |s| {
                        if let Some(head) = head.take() {
                            machine.handle_head(s, stream, head, now)
                        }
                    });
                    self.reading = Some((stream, id));
                }
                Fetched::TimedOut => feed(&mut |s| machine.handle_timeout(s, now)),
                Fetched::Failed(error) => {
                    let mut error = Some(error);
                    feed(&mut |s| machine.handle_end(s, stream, error.take(), now));
                }
            },
            (Waiting::Body(stream, _), Some(Input::Piece(piece))) => match piece {
                Piece::Late => feed(&mut |s| machine.handle_timeout(s, now)),
                Piece::Text(text) => {
                    feed(&mut |s| machine.handle_body(s, stream, text.as_bytes(), now))
                }
                Piece::End => {
                    self.reading = None;
                    feed(&mut |s| machine.handle_end(s, stream, None, now));
                }
                Piece::Failed(error) => {
                    self.reading = None;
                    let mut error = Some(error);
                    feed(&mut |s| machine.handle_end(s, stream, error.take(), now));
                }
            },
            (Waiting::Slept, Some(Input::Slept)) => feed(&mut |s| machine.handle_timeout(s, now)),
            (Waiting::Authorizing(mut refresh), input) => match refresh.step(host, input, now) {
                Step::Do(output) => {
                    self.waiting = Waiting::Authorizing(refresh);
                    return Step::Do(output);
                }
                Step::Done(fresh) => {
                    let name = host.with_client(client, |c| c.config.name.clone());
                    let mut fresh = fresh;
                    let authorized = host.with_client(client, |c| match fresh.take() {
                        Some(record) => {
                            c.session.set_auth(Some(record));
                            machine.authorized(&mut c.session, now);
                            true
                        }
                        None => false,
                    });
                    if authorized != Some(true) {
                        machine.unauthorized(Recourse::refresh_failed(&name.unwrap_or_default()));
                    }
                }
            },
            (_, input) => {
                return Step::Done(Err(format!(
                    "internal error: {} came where an MCP exchange did not ask for it",
                    super::super::io::unasked(input.as_ref())
                )))
            }
        }
        self.next(host, now)
    }

    /// The machine's next output carried out, or the wait for what it waits on.
    fn next(&mut self, host: &Host, now: f64) -> Step<Exchanged> {
        let client = self.client;
        while let Some(output) = self.machine.poll() {
            match output {
                ExchangeOutput::Send { stream, request } => {
                    let method = self.machine.job_method().unwrap_or_default();
                    if let Err(error) = host.mcp_refuses(client, method) {
                        return self.finish(Err(error));
                    }
                    let id = host.fetch_id();
                    self.waiting = Waiting::Head(stream, id);
                    let within_ms = self.left(now);
                    return Step::Do(Output::Http(Http::Fetch {
                        id,
                        request,
                        within_ms,
                    }));
                }
                ExchangeOutput::Abort(stream) => {
                    if let Some((_, id)) = self.reading.take_if(|(s, _)| *s == stream) {
                        self.waiting = Waiting::Done;
                        return Step::Do(Output::Http(Http::Abort { id }));
                    }
                }
                ExchangeOutput::Authorize { refusal, attempt } => {
                    let known =
                        host.with_client(client, |c| (c.config.clone(), c.session.auth().cloned()));
                    let Some((config, record)) = known else {
                        let method = self.machine.job_method().unwrap_or_default();
                        let closed = host.mcp_refuses(client, method).err();
                        self.machine.unauthorized(closed.unwrap_or_default());
                        continue;
                    };
                    if let crate::core::mcp::exchange::Refusal::InsufficientScope {
                        challenge: Some(challenge),
                    } = &refusal
                    {
                        (host.challenges.borrow_mut())
                            .insert(config.name.clone(), challenge.clone());
                    }
                    match Recourse::after(&refusal, attempt, record.is_some(), &config.name) {
                        Recourse::GiveUp(why) => self.machine.unauthorized(why),
                        Recourse::Refresh => {
                            let Some(record) = record else {
                                self.machine
                                    .unauthorized(Recourse::refresh_failed(&config.name));
                                continue;
                            };
                            let mut refresh = Box::new(Refresh::after_refusal(config, record));
                            match refresh.step(host, None, now) {
                                Step::Do(output) => {
                                    self.waiting = Waiting::Authorizing(refresh);
                                    return Step::Do(output);
                                }
                                Step::Done(_) => {
                                    let name = host.with_client(client, |c| c.config.name.clone());
                                    self.machine.unauthorized(Recourse::refresh_failed(
                                        &name.unwrap_or_default(),
                                    ));
                                }
                            }
                        }
                    }
                }
                ExchangeOutput::Reconnected => {
                    self.waiting = Waiting::Done;
                    return Step::Do(Output::Mcp(Mcp::Listen { client }));
                }
                ExchangeOutput::Post(request) => {
                    self.waiting = Waiting::Done;
                    return Step::Do(Output::Http(Http::Post { request }));
                }
                ExchangeOutput::Event(event) => host.mcp_event(client, &event),
                ExchangeOutput::Done(outcome) => {
                    let key = host.with_client(client, |c| c.key.clone()).flatten();
                    return self
                        .finish(outcome.map_err(|f| redact(&f.to_string(), key.as_deref())));
                }
                _ => {}
            }
        }
        let left = self.left(now);
        match self.reading {
            Some((stream, id)) => {
                self.waiting = Waiting::Body(stream, id);
                Step::Do(Output::Http(Http::Read {
                    id,
                    within_ms: Some(left),
                }))
            }
            None => {
                self.waiting = Waiting::Slept;
                Step::Do(Output::Sleep { ms: left })
            }
        }
    }

    /// The job's answer; a stream still read is aborted first (its handle let go).
    fn finish(&mut self, answer: Exchanged) -> Step<Exchanged> {
        match self.reading.take() {
            Some((_, id)) => {
                self.answer = Some(answer);
                self.waiting = Waiting::Done;
                Step::Do(Output::Http(Http::Abort { id }))
            }
            None => Step::Done(answer),
        }
    }
}
