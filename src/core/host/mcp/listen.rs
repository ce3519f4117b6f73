//! A session's listening stream for server messages (`notifications/tools/list_changed` above
//! all): the GET stream, or `subscriptions/listen` in 2026-07-28, opened within
//! [`MCP_LISTEN_MS`] and read in the background until it or the session ends. A server
//! without one (405, or any other refusal) is fine: messages then come only on the answers
//! to requests. What each message means is the exchange machine's; the events change the
//! client's [`ToolWatch`](crate::core::mcp::client::ToolWatch) and listing.

use super::super::io::{Fetched, Http, Input, Output, Piece, Step};
use super::super::Host;
use super::ClientId;
use crate::core::limits::MCP_LISTEN_MS;
use crate::core::mcp::client::Connection;
use crate::core::mcp::exchange::{
    Exchange, Listening, Output as ExchangeOutput, Settings, StreamId,
};
use crate::core::mcp::source::McpServerConfig;

/// The machine: see the module's documentation.
#[derive(Debug)]
pub struct Listener {
    client: ClientId,
    machine: Option<Exchange>,
    phase: Phase,
    /// The end of an outer limit (an opening's time), if any.
    until: Option<f64>,
    /// Opened: read on.
    reading: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Start,
    /// The previous stream aborted.
    Aborted,
    Opening(StreamId, u64),
    /// Open: read on in the background.
    Open(StreamId, u64),
    Reading(StreamId, u64),
    /// A post of the stream's answer sent.
    Posted(StreamId, u64),
    /// Its end: the stream aborted.
    Ending,
}

impl Listener {
    /// A listener for `client`'s session (a client that does not listen ends it at once).
    pub fn new(client: ClientId) -> Listener {
        Listener {
            client,
            machine: None,
            phase: Phase::Start,
            until: None,
            reading: false,
        }
    }

    /// Within an outer limit too.
    pub(super) fn within(mut self, until: f64) -> Listener {
        self.until = Some(until);
        self
    }

    /// Whether it is open, to be read on in the background.
    pub fn is_open(&self) -> bool {
        matches!(self.phase, Phase::Open(..))
    }

    /// The fetch the listener holds, for an outer limit to abort.
    pub(super) fn open_fetch(&self) -> Option<u64> {
        match self.phase {
            Phase::Opening(_, id)
            | Phase::Open(_, id)
            | Phase::Reading(_, id)
            | Phase::Posted(_, id) => Some(id),
            _ => None,
        }
    }

    /// One step of the opening: done once it is open (then [`Listener::is_open`]) or not to
    /// be opened.
    pub(super) fn open(&mut self, host: &Host, input: Option<Input>, now: f64) -> Step<()> {
        let client = self.client;
        match (self.phase, input) {
            (Phase::Start, None) => {
                let previous = host.with_client(client, |c| match c.listens {
                    true => Some(c.listening.take()),
                    false => None,
                });
                match previous.flatten() {
                    None => self.begin(host, now),
                    Some(Some(id)) => {
                        self.phase = Phase::Aborted;
                        Step::Do(Output::Http(Http::Abort { id }))
                    }
                    Some(None) => self.begin(host, now),
                }
            }
            (Phase::Aborted, Some(Input::Done(_))) => self.begin(host, now),
            (Phase::Opening(stream, id), Some(Input::Fetched(Fetched::Head(head)))) => {
                let Some(machine) = self.machine.as_mut() else {
                    return Step::Done(());
                };
                let open = host.with_client(client, |c| {
                    machine.handle_head(&mut c.session, stream, head, now);
                    c.connection != Connection::Closed && machine.listening() == Listening::Open
                });
                if open != Some(true) {
                    self.phase = Phase::Ending;
                    return Step::Do(Output::Http(Http::Abort { id }));
                }
                host.with_client(client, |c| c.listening = Some(id));
                self.phase = Phase::Open(stream, id);
                Step::Done(())
            }
            (Phase::Opening(..), Some(Input::Fetched(_))) => Step::Done(()),
            (Phase::Ending, Some(Input::Done(_))) => {
                self.phase = Phase::Start;
                self.machine = None;
                Step::Done(())
            }
            // Anything else ends the opening: nothing is listened to.
            (_, _) => Step::Done(()),
        }
    }

    /// The stream asked for, when the client listens.
    fn begin(&mut self, host: &Host, now: f64) -> Step<()> {
        let client = self.client;
        let asked = host.with_client(client, |c| {
            if !c.listens {
                return None;
            }
            let mut machine = Exchange::new(host_settings(&c.config));
            machine.listen(&mut c.session);
            match machine.poll() {
                Some(ExchangeOutput::Send { stream, request }) => Some((machine, stream, request)),
                _ => None,
            }
        });
        let Some((machine, stream, request)) = asked.flatten() else {
            return Step::Done(());
        };
        self.machine = Some(machine);
        let id = host.fetch_id();
        self.phase = Phase::Opening(stream, id);
        let limit = self.until.map_or(u32::MAX, |u| (u - now).max(0.0) as u32);
        Step::Do(Output::Http(Http::Fetch {
            id,
            request,
            within_ms: MCP_LISTEN_MS.min(limit),
        }))
    }

    /// One step of the reading in the background, after the opening.
    pub(super) fn read(&mut self, host: &Host, input: Option<Input>, now: f64) -> Step<()> {
        let client = self.client;
        let Some(machine) = self.machine.as_mut() else {
            return Step::Done(());
        };
        let (stream, id) = match (self.phase, input) {
            (Phase::Open(stream, id), None) => (stream, id),
            (Phase::Posted(stream, id), Some(Input::Done(_))) => (stream, id),
            (Phase::Reading(stream, id), Some(Input::Piece(Piece::Text(text)))) => {
                let fed = host.with_client(client, |c| {
                    machine.handle_body(&mut c.session, stream, text.as_bytes(), now)
                });
                if fed.is_none() {
                    self.phase = Phase::Ending;
                    return Step::Do(Output::Http(Http::Abort { id }));
                }
                (stream, id)
            }
            (Phase::Reading(stream, id), Some(Input::Piece(Piece::Late))) => (stream, id),
            (Phase::Reading(stream, id), Some(Input::Piece(_))) => {
                return self.end(host, stream, id, now);
            }
            (Phase::Ending, Some(Input::Done(_))) => return Step::Done(()),
            _ => return Step::Done(()),
        };
        let machine = self.machine.as_mut().expect("a machine while reading");
        while let Some(output) = machine.poll() {
            match output {
                ExchangeOutput::Post(request) => {
                    self.phase = Phase::Posted(stream, id);
                    return Step::Do(Output::Http(Http::Post { request }));
                }
                ExchangeOutput::Event(event) => host.mcp_event(client, &event),
                _ => {}
            }
        }
        if machine.listening() != Listening::Open {
            // The stream is left: its end noted, then it is aborted.
            let _ = self.end(host, stream, id, now);
            return Step::Do(Output::Http(Http::Abort { id }));
        }
        self.phase = Phase::Reading(stream, id);
        Step::Do(Output::Http(Http::Read {
            id,
            within_ms: None,
        }))
    }

    /// Its end: a `subscriptions/listen` is no longer waited for; the client no longer
    /// holds it.
    fn end(&mut self, host: &Host, stream: StreamId, id: u64, now: f64) -> Step<()> {
        if let Some(mut machine) = self.machine.take() {
            host.with_client(self.client, |c| {
                machine.handle_end(&mut c.session, stream, None, now);
                if c.listening == Some(id) {
                    c.listening = None;
                }
            });
        }
        self.phase = Phase::Ending;
        Step::Done(())
    }
}

fn host_settings(config: &McpServerConfig) -> Settings {
    Settings::extension(config)
}

impl Host {
    /// A session's listening stream, opened (unless it was already) and then read until it
    /// ends: a task of its own ([`Mcp::Listen`](super::super::io::Mcp::Listen)).
    pub fn mcp_listen(&self, listener: &mut Listener, input: Option<Input>, now: f64) -> Step<()> {
        if listener.phase == Phase::Start && input.is_none() {
            // The stream the client opened while connecting, if any, is read on.
            let parked = self.with_client(listener.client, |c| c.parked.take());
            if let Some(parked) = parked.flatten() {
                *listener = *parked;
            }
        }
        if listener.reading {
            return listener.read(self, input, now);
        }
        match listener.open(self, input, now) {
            Step::Do(output) => Step::Do(output),
            Step::Done(()) if listener.is_open() => {
                listener.reading = true;
                listener.read(self, None, now)
            }
            Step::Done(()) => Step::Done(()),
        }
    }
}
