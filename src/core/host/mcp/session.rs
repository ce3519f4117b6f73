//! The machines of one MCP connection: [`Opening`] (connect, listen, list every tool, within
//! its time; closed when it fails), [`Relisting`], [`Calling`] (`tools/call`, after the
//! listing a change asks for) and [`Closing`] (the session ended with `DELETE`, without
//! waiting for long).

use std::rc::Rc;

use serde_json::{json, Map, Value};

use super::super::io::{Fetched, Http, Input, Mcp, Output, Step};
use super::super::Host;
use super::exchanging::Exchanging;
use super::listen::Listener;
use super::signins::Refresh;
use super::ClientId;
use crate::core::limits::{MCP_CLOSE_MS, MCP_RELIST_POLL_MS};
use crate::core::mcp::client::{call_result, BeforeCall, Connection, OpenMiss};
use crate::core::mcp::exchange::{Exchange, Settings};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::McpTool;
use crate::core::mcp::{redact_result, CallResult, ToolListing};

/// `tools/list` over all its pages on the client's session; a complete listing is kept
/// while its `ttlMs` says.
#[derive(Debug)]
struct ListTools {
    client: ClientId,
    listing: ToolListing,
    current: Option<Exchanging>,
    until: Option<f64>,
}

impl ListTools {
    fn new(client: ClientId, until: Option<f64>) -> ListTools {
        ListTools {
            client,
            listing: ToolListing::default(),
            current: None,
            until,
        }
    }

    fn open_fetch(&self) -> Option<u64> {
        self.current.as_ref().and_then(Exchanging::open_fetch)
    }

    fn step(
        &mut self,
        host: &Host,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<Result<Vec<McpTool>, String>> {
        loop {
            if let Some(current) = self.current.as_mut() {
                let events = match current.step(host, input.take(), now) {
                    Step::Do(output) => return Step::Do(output),
                    Step::Done(events) => events,
                };
                self.current = None;
                match events.and_then(|events| self.listing.absorb(events)) {
                    Err(error) => return Step::Done(Err(error)),
                    Ok(false) => {}
                    Ok(true) => {
                        let tools = std::mem::take(&mut self.listing.tools);
                        let ttl = self.listing.ttl_ms.unwrap_or(0);
                        host.with_client(self.client, |c| {
                            c.listing.keep(Rc::new(tools.clone()), ttl, now)
                        });
                        return Step::Done(Ok(tools));
                    }
                }
            }
            let listing = &mut self.listing;
            let request = host.with_client(self.client, |c| listing.request(&mut c.session));
            let outgoing = match request {
                None => {
                    return Step::Done(
                        host.mcp_refuses(self.client, "tools/list")
                            .map(|()| Vec::new()),
                    )
                }
                Some(Err(error)) => return Step::Done(Err(error)),
                Some(Ok(outgoing)) => outgoing,
            };
            match Exchanging::request(host, self.client, outgoing, now) {
                Some(exchanging) => self.current = Some(exchanging.within(self.until)),
                None => {
                    return Step::Done(
                        host.mcp_refuses(self.client, "tools/list")
                            .map(|()| Vec::new()),
                    )
                }
            }
        }
    }
}

/// Connects (`server/discover`, else `initialize` and `notifications/initialized`), opens
/// the listening stream when the connection listens, and lists every tool, within its time in
/// all. A server that fails or runs out of time is closed (its session ended, its listening
/// stream aborted), so nothing of it outlives the error.
#[derive(Debug)]
pub struct Opening {
    start: Option<(McpServerConfig, Option<String>, bool)>,
    within_ms: u32,
    client: ClientId,
    until: f64,
    phase: Opened,
}

#[derive(Debug)]
enum Opened {
    Start,
    Record(Refresh),
    Connect(Exchanging, String),
    Listen(Listener),
    /// The open listening stream handed to a task of its own.
    Handed,
    Listing(ListTools),
    /// Out of time: the fetch under way aborted.
    Aborting(String),
    Closing(Closing, String),
}

impl Opening {
    /// A connection to `config` with `key`, within `within_ms` (from the sign-in on);
    /// `listens`: whether it opens the stream for server messages (a connection kept between
    /// a person's calls does not: idle, it must not hold one of the browser's few connections
    /// to the server's host).
    pub fn new(
        config: McpServerConfig,
        key: Option<String>,
        within_ms: u32,
        listens: bool,
    ) -> Opening {
        Opening {
            start: Some((config, key, listens)),
            within_ms,
            client: ClientId(0),
            until: f64::INFINITY,
            phase: Opened::Start,
        }
    }
}

/// An opening's answer: the client and its tools, or why it failed.
pub type OpenAnswer = Result<(ClientId, Vec<McpTool>), String>;

impl Host {
    /// One step of an [`Opening`].
    pub fn mcp_open(&self, m: &mut Opening, input: Option<Input>, now: f64) -> Step<OpenAnswer> {
        let mut input = input;
        loop {
            let timed_out = now >= m.until && input.is_some();
            let phase = std::mem::replace(&mut m.phase, Opened::Start);
            let open_fetch = match &phase {
                Opened::Connect(exchanging, _) => exchanging.open_fetch(),
                Opened::Listen(listener) => listener.open_fetch(),
                Opened::Listing(list) => list.open_fetch(),
                _ => None,
            };
            let under_way = matches!(
                phase,
                Opened::Connect(..) | Opened::Listen(_) | Opened::Listing(_) | Opened::Handed
            );
            if timed_out && under_way {
                let failure = OpenMiss::Timeout {
                    within_ms: m.within_ms,
                }
                .to_string();
                if let Some(id) = open_fetch {
                    m.phase = Opened::Aborting(failure);
                    return Step::Do(Output::Http(Http::Abort { id }));
                }
                m.phase = Opened::Closing(Closing::new(m.client), failure);
                input = None;
                continue;
            }
            match phase {
                Opened::Start => {
                    let Some((config, key, listens)) = m.start.take() else {
                        return Step::Done(Err("internal error: an opening stepped again".into()));
                    };
                    m.client = self.mcp_new(config.clone(), key, listens);
                    m.phase = Opened::Record(Refresh::for_connection(config));
                }
                Opened::Record(mut refresh) => match refresh.step(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Opened::Record(refresh);
                        return Step::Do(output);
                    }
                    Step::Done(record) => {
                        m.until = now + f64::from(m.within_ms);
                        let url = self.with_client(m.client, |c| {
                            c.session.set_auth(record);
                            c.session.url().to_owned()
                        });
                        let protocols = self.mcp.borrow().eras.protocols(&url.unwrap_or_default());
                        let connect = self.with_client(m.client, |c| {
                            let url = c.session.url().to_owned();
                            let mut settings = Settings::extension(&c.config);
                            settings.protocols = protocols;
                            let mut machine = Exchange::new(settings);
                            machine.connect(&mut c.session, now);
                            (machine, url)
                        });
                        let Some((machine, url)) = connect else {
                            return Step::Done(Err("initialize: the connection was closed".into()));
                        };
                        let exchanging = Exchanging::new(m.client, machine, Some(m.until));
                        m.phase = Opened::Connect(exchanging, url);
                    }
                },
                Opened::Connect(mut exchanging, url) => {
                    match exchanging.step(self, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Opened::Connect(exchanging, url);
                            return Step::Do(output);
                        }
                        Step::Done(Err(error)) => {
                            self.mcp.borrow_mut().eras.forget(&url);
                            m.phase = Opened::Closing(Closing::new(m.client), error);
                        }
                        Step::Done(Ok(_)) => {
                            let modern = self.with_client(m.client, |c| c.session.is_modern());
                            (self.mcp.borrow_mut().eras).spoke(&url, modern.unwrap_or(false));
                            m.phase = Opened::Listen(Listener::new(m.client).within(m.until));
                        }
                    }
                }
                Opened::Listen(mut listener) => match listener.open(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Opened::Listen(listener);
                        return Step::Do(output);
                    }
                    Step::Done(()) if listener.is_open() => {
                        let client = m.client;
                        self.with_client(client, |c| c.parked = Some(Box::new(listener)));
                        m.phase = Opened::Handed;
                        return Step::Do(Output::Mcp(Mcp::Listen { client }));
                    }
                    Step::Done(()) => {
                        m.phase = Opened::Listing(ListTools::new(m.client, Some(m.until)))
                    }
                },
                Opened::Handed => {
                    input = None;
                    m.phase = Opened::Listing(ListTools::new(m.client, Some(m.until)));
                }
                Opened::Listing(mut list) => match list.step(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Opened::Listing(list);
                        return Step::Do(output);
                    }
                    Step::Done(Ok(tools)) => return Step::Done(Ok((m.client, tools))),
                    Step::Done(Err(error)) => {
                        m.phase = Opened::Closing(Closing::new(m.client), error)
                    }
                },
                Opened::Aborting(failure) => {
                    input = None;
                    m.phase = Opened::Closing(Closing::new(m.client), failure);
                }
                Opened::Closing(mut closing, failure) => {
                    match self.mcp_close(&mut closing, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Opened::Closing(closing, failure);
                            return Step::Do(output);
                        }
                        Step::Done(()) => return Step::Done(Err(failure)),
                    }
                }
            }
        }
    }
}

/// Lists the tools again on an open connection, unless the last listing is still fresh (its
/// `ttlMs`, 2026-07-28); a listing that came is the latest the calls are checked against.
#[derive(Debug)]
pub struct Relisting {
    client: ClientId,
    list: Option<ListTools>,
}

impl Relisting {
    /// A listing of `client`'s tools.
    pub fn new(client: ClientId) -> Relisting {
        Relisting { client, list: None }
    }
}

impl Host {
    /// One step of a [`Relisting`].
    pub fn mcp_relist(
        &self,
        m: &mut Relisting,
        input: Option<Input>,
        now: f64,
    ) -> Step<Result<Vec<McpTool>, String>> {
        let list = match m.list.as_mut() {
            Some(list) => list,
            None => {
                let fresh = self
                    .with_client(m.client, |c| c.listing.fresh(now))
                    .flatten();
                if let Some(fresh) = fresh {
                    return Step::Done(Ok(Rc::unwrap_or_clone(fresh)));
                }
                m.list.insert(ListTools::new(m.client, None))
            }
        };
        match list.step(self, input, now) {
            Step::Do(output) => Step::Do(output),
            Step::Done(Ok(listed)) => {
                self.with_client(m.client, |c| c.tools.listed(Ok(listed.clone())));
                Step::Done(Ok(listed))
            }
            Step::Done(Err(error)) => Step::Done(Err(error)),
        }
    }
}

/// `tools/call` of a tool as the caller was given it. After `notifications/tools/list_changed`
/// the tools are listed again first (once for every call waiting on it), and a tool whose
/// definition changed is not called.
#[derive(Debug)]
pub struct Calling {
    client: ClientId,
    tool: McpTool,
    arguments: Map<String, Value>,
    progress: String,
    within_ms: Option<u32>,
    until: Option<f64>,
    /// The secrets the connection sent at the start, should it close meanwhile.
    secrets: Vec<String>,
    /// How long it waits at most on another call's listing.
    wait_until: f64,
    phase: Call,
}

#[derive(Debug)]
enum Call {
    Start,
    Listing(ListTools),
    Waiting,
    Sending(Exchanging),
    /// Out of time: the fetch under way aborted.
    Aborting,
}

impl Calling {
    /// A call of `tool` with `arguments` on `client`, under progress token `progress`; at
    /// most `within_ms` when the caller set a limit.
    pub fn new(
        client: ClientId,
        tool: McpTool,
        arguments: Map<String, Value>,
        progress: String,
        within_ms: Option<u32>,
    ) -> Calling {
        Calling {
            client,
            tool,
            arguments,
            progress,
            within_ms,
            until: None,
            secrets: Vec::new(),
            wait_until: 0.0,
            phase: Call::Start,
        }
    }
}

impl Host {
    /// One step of a [`Calling`]: the result (`None`: none within the caller's limit).
    pub fn mcp_call(
        &self,
        m: &mut Calling,
        input: Option<Input>,
        now: f64,
    ) -> Step<Option<CallResult>> {
        let mut input = input;
        loop {
            let phase = std::mem::replace(&mut m.phase, Call::Start);
            if input.is_some() && m.until.is_some_and(|until| now >= until) {
                let open = match &phase {
                    Call::Listing(list) => list.open_fetch(),
                    Call::Sending(exchanging) => exchanging.open_fetch(),
                    _ => None,
                };
                if let Call::Listing(_) = phase {
                    self.with_client(m.client, |c| c.relisting = false);
                }
                if let Some(id) = open {
                    m.phase = Call::Aborting;
                    return Step::Do(Output::Http(Http::Abort { id }));
                }
                return Step::Done(None);
            }
            match phase {
                Call::Aborting => return Step::Done(None),
                Call::Start => {
                    m.until = m.within_ms.map(|ms| now + f64::from(ms));
                    m.secrets = self.mcp_secrets(m.client);
                    let before = self.with_client(m.client, |c| {
                        let timeout = Settings::extension(&c.config).timeout_ms;
                        (c.tools.before_call(), timeout)
                    });
                    let (before, timeout) = before.unwrap_or((BeforeCall::Check, 0));
                    m.wait_until = now + f64::from(timeout);
                    if before == BeforeCall::List {
                        self.with_client(m.client, |c| c.relisting = true);
                        m.phase = Call::Listing(ListTools::new(m.client, m.until));
                    } else {
                        m.phase = Call::Waiting;
                    }
                }
                Call::Listing(mut list) => match list.step(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Call::Listing(list);
                        return Step::Do(output);
                    }
                    Step::Done(listed) => {
                        self.with_client(m.client, |c| {
                            c.tools.listed(listed);
                            c.relisting = false;
                        });
                        m.phase = Call::Waiting;
                    }
                },
                Call::Waiting => {
                    input = None;
                    // Another call's listing under way: waited on, up to a request's time.
                    let relisting = self.with_client(m.client, |c| c.relisting);
                    if relisting == Some(true) && now < m.wait_until {
                        m.phase = Call::Waiting;
                        return Step::Do(Output::Sleep {
                            ms: MCP_RELIST_POLL_MS,
                        });
                    }
                    let name = m.tool.name.clone();
                    let (tool, arguments) = (&m.tool, &m.arguments);
                    let progress = Some(json!(m.progress));
                    let request = self.with_client(m.client, |c| {
                        c.tools.check(tool)?;
                        Ok(c.session.call_tool(&name, arguments, progress))
                    });
                    let outgoing = match request {
                        Some(Ok(outgoing)) => outgoing,
                        Some(Err(refused)) => return Step::Done(Some(CallResult::Error(refused))),
                        None => return Step::Done(Some(closed())),
                    };
                    match Exchanging::request(self, m.client, outgoing, now) {
                        Some(exchanging) => m.phase = Call::Sending(exchanging.within(m.until)),
                        None => return Step::Done(Some(closed())),
                    }
                }
                Call::Sending(mut exchanging) => {
                    match exchanging.step(self, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Call::Sending(exchanging);
                            return Step::Do(output);
                        }
                        Step::Done(events) => {
                            let result = call_result(events, &m.tool.name);
                            // What the session sends now: a token refreshed meanwhile too.
                            let open = self.with_client(m.client, |_| ()).is_some();
                            let secrets = match open {
                                true => self.mcp_secrets(m.client),
                                false => m.secrets.clone(),
                            };
                            return Step::Done(Some(redact_result(result, &secrets)));
                        }
                    }
                }
            }
        }
    }
}

/// A call on a closed connection.
fn closed() -> CallResult {
    CallResult::Error(
        Connection::Closed
            .refuses("tools/call")
            .err()
            .unwrap_or_default(),
    )
}

/// Ends the session (`DELETE`), without waiting for long: the client is closed at once (it
/// sends nothing more), its listening stream aborted, and the host forgets it.
#[derive(Debug)]
pub struct Closing {
    client: ClientId,
    phase: Close,
}

#[derive(Debug, Clone, Copy)]
enum Close {
    Start,
    Aborted,
    Deleting(u64),
    Dropping,
}

impl Closing {
    /// Closes `client`.
    pub fn new(client: ClientId) -> Closing {
        Closing {
            client,
            phase: Close::Start,
        }
    }
}

impl Host {
    /// One step of a [`Closing`].
    pub fn mcp_close(&self, m: &mut Closing, input: Option<Input>, _now: f64) -> Step<()> {
        match (m.phase, input) {
            (Close::Start, _) => {
                let listening = self
                    .with_client(m.client, |c| {
                        c.connection = Connection::Closed;
                        c.listening.take()
                    })
                    .flatten();
                if let Some(id) = listening {
                    m.phase = Close::Aborted;
                    return Step::Do(Output::Http(Http::Abort { id }));
                }
                self.delete(m)
            }
            (Close::Aborted, _) => self.delete(m),
            (Close::Deleting(id), Some(Input::Fetched(Fetched::Head(_)))) => {
                m.phase = Close::Dropping;
                Step::Do(Output::Http(Http::Abort { id }))
            }
            _ => Step::Done(()),
        }
    }

    fn delete(&self, m: &mut Closing) -> Step<()> {
        let gone = self.mcp.borrow_mut().open.remove(&m.client);
        let Some(request) = gone.and_then(|c| c.session.terminate()) else {
            return Step::Done(());
        };
        let id = self.fetch_id();
        m.phase = Close::Deleting(id);
        Step::Do(Output::Http(Http::Fetch {
            id,
            request,
            within_ms: MCP_CLOSE_MS,
        }))
    }
}
