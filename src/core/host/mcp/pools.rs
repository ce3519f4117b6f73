//! The host's kept MCP connections: a [`Pool`] holds at most one open connection (one MCP
//! session) per server name, for the server's current configuration, key and sign-in.
//! [`Connecting`] opens one on first use, reuses it while all three stay the same, and
//! replaces it when one changed ([`connect`] decides); a connection forgotten (after a failed
//! call, so the next call starts afresh, when nothing needs it any more, after a sign-in or
//! a sign-out) is closed in a task of its own ([`Mcp::Close`]). Each caller keeps its own
//! pool: the servers exposed to pages (their connections listen to the server) and the
//! servers called by hand (theirs do not, and close once idle: [`Idling`]), so that a page's
//! calls and a person's never share a session. A worker that Chrome stops loses them; the
//! next use opens again.
//!
//! Invariant: at most one kept connection per server and pool, for its current configuration,
//! key and sign-in.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value};

use super::super::io::{unasked, ClientId, Input, Mcp, Output, Pool, Step, Storage};
use super::super::uses::Idle;
use super::super::Host;
use super::session::{Calling, Closing, Opening, Relisting};
use super::signins::Refresh;
use crate::core::expose::{connect, Connect, Identity};
use crate::core::limits::MCP_OPEN_MS;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::McpTool;
use crate::core::mcp::CallResult;
use crate::core::provider::redact;
use crate::core::setup::store::{key, key_slot};
use crate::core::storage::Area;

/// A kept connection.
#[derive(Debug, Clone)]
pub struct Kept {
    /// The server as configured when it opened.
    pub config: McpServerConfig,
    /// The key it sends.
    pub key: Option<String>,
    /// Its client.
    pub client: ClientId,
    /// The tools listed when it opened.
    pub tools: Rc<Vec<McpTool>>,
}

/// Both pools, by server name.
#[derive(Debug, Default)]
pub struct Pools {
    by_hand: HashMap<String, Kept>,
    exposures: HashMap<String, Kept>,
}

impl Pools {
    fn of(&mut self, pool: Pool) -> &mut HashMap<String, Kept> {
        match pool {
            Pool::ByHand => &mut self.by_hand,
            Pool::Exposures => &mut self.exposures,
        }
    }
}

impl Host {
    /// The kept connection of `name`, when there is one.
    pub fn kept(&self, pool: Pool, name: &str) -> Option<Kept> {
        self.pools.borrow_mut().of(pool).get(name).cloned()
    }

    /// The servers the pool keeps a connection to.
    pub fn kept_names(&self, pool: Pool) -> Vec<String> {
        self.pools.borrow_mut().of(pool).keys().cloned().collect()
    }

    /// Forgets a server's kept connection: its client, to close.
    pub fn forget_kept(&self, pool: Pool, name: &str) -> Option<ClientId> {
        let kept = self.pools.borrow_mut().of(pool).remove(name);
        kept.map(|k| k.client)
    }

    /// Forgets the kept connections to server `name` in every pool (after a sign-in or a
    /// sign-out: none goes on with the token it held): the clients to close.
    pub fn forget_kept_everywhere(&self, name: &str) -> Vec<ClientId> {
        [Pool::Exposures, Pool::ByHand]
            .into_iter()
            .filter_map(|pool| self.forget_kept(pool, name))
            .collect()
    }

    /// Whether `kept` serves what `now` would send.
    fn serves(&self, kept: Option<&Kept>, now: &Identity<'_>) -> Connect {
        let sign_in = kept.map(|k| {
            let session = self.mcp_session(k.client);
            session.auth().map(|r| r.tokens.access_token.clone())
        });
        let kept = kept.map(|k| Identity {
            config: &k.config,
            key: k.key.as_deref(),
            sign_in: sign_in.flatten(),
        });
        connect(kept, now.clone())
    }
}

/// The kept connection to a server, opened when there is none for its current
/// configuration, key and sign-in; and whether it was opened now (its tools just listed).
#[derive(Debug)]
pub struct Connecting {
    pool: Pool,
    server: McpServerConfig,
    key: Option<String>,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    Start,
    Key(String),
    Record(Box<Refresh>),
    /// The connection it replaces, closed in a task of its own.
    Replaced,
    Opening(Box<Opening>),
    /// Another request opened the same server meanwhile: the one opened now is closed.
    Other(Kept),
}

impl Connecting {
    /// The connection of `pool` to `server`.
    pub fn new(pool: Pool, server: McpServerConfig) -> Connecting {
        Connecting {
            pool,
            server,
            key: None,
            phase: Phase::Start,
        }
    }
}

impl Host {
    /// One step of a [`Connecting`].
    pub fn mcp_connect(
        &self,
        m: &mut Connecting,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<Result<(Kept, bool), String>> {
        loop {
            match std::mem::replace(&mut m.phase, Phase::Start) {
                Phase::Start => match m.server.key_ref.clone() {
                    Some(reference) if input.is_none() => {
                        m.phase = Phase::Key(reference.clone());
                        return Step::Do(Output::Storage(Storage::Read {
                            area: Area::Session,
                            key: key_slot(&reference),
                        }));
                    }
                    _ => {
                        m.phase = Phase::Record(Box::new(Refresh::for_connection(m.server.clone())))
                    }
                },
                Phase::Key(reference) => {
                    let Some(Input::Read(stored)) = input.take() else {
                        return Step::Done(Err(ended(input.as_ref())));
                    };
                    match stored.and_then(|stored| key(&reference, stored)) {
                        Err(error) => return Step::Done(Err(error)),
                        Ok(found) => m.key = found,
                    }
                    m.phase = Phase::Record(Box::new(Refresh::for_connection(m.server.clone())));
                }
                Phase::Record(mut refresh) => match refresh.step(self, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Phase::Record(refresh);
                        return Step::Do(output);
                    }
                    // The sign-in as stored now: signed out, signed in anew or failed to
                    // refresh, a kept session is replaced rather than sending the token it
                    // holds.
                    Step::Done(record) => {
                        let now_sends = Identity {
                            config: &m.server,
                            key: m.key.as_deref(),
                            sign_in: record.map(|r| r.tokens.access_token),
                        };
                        let kept = self.kept(m.pool, &m.server.name);
                        match self.serves(kept.as_ref(), &now_sends) {
                            Connect::Reuse => {
                                return Step::Done(Ok((kept.expect("a kept connection"), false)))
                            }
                            Connect::Replace => {
                                m.phase = Phase::Replaced;
                                let forgotten = self.forget_kept(m.pool, &m.server.name);
                                let client = forgotten.expect("a kept connection");
                                return Step::Do(Output::Mcp(Mcp::Close { client }));
                            }
                            Connect::Open => m.phase = Phase::Replaced,
                        }
                    }
                },
                Phase::Replaced => {
                    input = None;
                    let within = m.server.timeout_ms.unwrap_or(MCP_OPEN_MS);
                    let listens = m.pool == Pool::Exposures;
                    let opening = Opening::new(m.server.clone(), m.key.clone(), within, listens);
                    m.phase = Phase::Opening(Box::new(opening));
                }
                Phase::Opening(mut opening) => match self.mcp_open(&mut opening, input.take(), now)
                {
                    Step::Do(output) => {
                        m.phase = Phase::Opening(opening);
                        return Step::Do(output);
                    }
                    Step::Done(Err(error)) => {
                        return Step::Done(Err(redact(&error, m.key.as_deref())))
                    }
                    Step::Done(Ok((client, tools))) => {
                        let opened = Kept {
                            config: m.server.clone(),
                            key: m.key.clone(),
                            client,
                            tools: Rc::new(tools),
                        };
                        // Another request may have opened the same server meanwhile: keep
                        // one of the two.
                        let other = self.kept(m.pool, &m.server.name);
                        let sends = Identity {
                            config: &opened.config,
                            key: opened.key.as_deref(),
                            sign_in: (self.mcp_session(client).auth())
                                .map(|r| r.tokens.access_token.clone()),
                        };
                        match (self.serves(other.as_ref(), &sends), other) {
                            (Connect::Reuse, Some(other)) => {
                                m.phase = Phase::Other(other);
                                return Step::Do(Output::Mcp(Mcp::Close { client }));
                            }
                            _ => {
                                let name = m.server.name.clone();
                                self.pools
                                    .borrow_mut()
                                    .of(m.pool)
                                    .insert(name, opened.clone());
                                return Step::Done(Ok((opened, true)));
                            }
                        }
                    }
                },
                Phase::Other(other) => return Step::Done(Ok((other, false))),
            }
        }
    }
}

/// A server's kept connection and its tools as listed now: one `tools/list` on the kept
/// session, or a new connection when there is none, the server's settings or key changed, or
/// the kept one no longer answers (a listing is safe to send twice; a call is never sent
/// again).
#[derive(Debug)]
pub struct ListedNow {
    connecting: Connecting,
    phase: Listed,
}

#[derive(Debug)]
enum Listed {
    First,
    Relisting(Box<(Kept, Relisting)>),
    /// The kept one failed: closed, then a connection again.
    Forgotten,
    Again,
}

impl ListedNow {
    /// The tools of `server` on `pool`'s connection.
    pub fn new(pool: Pool, server: McpServerConfig) -> ListedNow {
        ListedNow {
            connecting: Connecting::new(pool, server),
            phase: Listed::First,
        }
    }
}

/// A connection and its tools, or why there is none.
pub type ListedAnswer = Result<(Kept, Vec<McpTool>), String>;

impl Host {
    /// One step of a [`ListedNow`].
    pub fn mcp_listed_now(
        &self,
        m: &mut ListedNow,
        mut input: Option<Input>,
        now: f64,
    ) -> Step<ListedAnswer> {
        loop {
            match std::mem::replace(&mut m.phase, Listed::Forgotten) {
                Listed::First => match self.mcp_connect(&mut m.connecting, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Listed::First;
                        return Step::Do(output);
                    }
                    Step::Done(Err(error)) => return Step::Done(Err(error)),
                    Step::Done(Ok((kept, true))) => {
                        let tools = kept.tools.to_vec();
                        return Step::Done(Ok((kept, tools)));
                    }
                    Step::Done(Ok((kept, false))) => {
                        let relisting = Relisting::new(kept.client);
                        m.phase = Listed::Relisting(Box::new((kept, relisting)));
                    }
                },
                Listed::Relisting(mut both) => {
                    let (kept, relisting) = &mut *both;
                    match self.mcp_relist(relisting, input.take(), now) {
                        Step::Do(output) => {
                            m.phase = Listed::Relisting(both);
                            return Step::Do(output);
                        }
                        Step::Done(Ok(tools)) => return Step::Done(Ok((kept.clone(), tools))),
                        Step::Done(Err(_)) => {
                            let (pool, name) = (m.connecting.pool, &m.connecting.server.name);
                            let forgotten = self.forget_kept(pool, name);
                            m.connecting = Connecting::new(pool, m.connecting.server.clone());
                            if let Some(client) = forgotten {
                                m.phase = Listed::Forgotten;
                                return Step::Do(Output::Mcp(Mcp::Close { client }));
                            }
                            m.phase = Listed::Again;
                        }
                    }
                }
                Listed::Forgotten => {
                    input = None;
                    m.phase = Listed::Again;
                }
                Listed::Again => match self.mcp_connect(&mut m.connecting, input.take(), now) {
                    Step::Do(output) => {
                        m.phase = Listed::Again;
                        return Step::Do(output);
                    }
                    Step::Done(connected) => {
                        return Step::Done(connected.map(|(kept, _)| {
                            let tools = kept.tools.to_vec();
                            (kept, tools)
                        }))
                    }
                },
            }
        }
    }
}

/// A call on a server's kept connection (the one its tools were just listed on), within the
/// caller's limit; the connection closed after a failed call when the caller says, so the
/// next call starts afresh.
#[derive(Debug)]
pub struct KeptCall {
    pool: Pool,
    server: String,
    forget_on_error: bool,
    start: Option<Start>,
    phase: Option<(Kept, Vec<String>, Calling)>,
    /// The answer, given once the failed connection is closed.
    answer: Option<(Option<CallResult>, Vec<String>)>,
}

/// A call's tool, arguments, progress token and limit, until it starts.
type Start = (McpTool, Map<String, Value>, String, Option<u32>);

impl KeptCall {
    /// A call of `tool` with `arguments` under progress token `progress`, at most
    /// `within_ms` when given.
    pub fn new(
        pool: Pool,
        server: String,
        call: (McpTool, Map<String, Value>),
        progress: String,
        within_ms: Option<u32>,
        forget_on_error: bool,
    ) -> KeptCall {
        KeptCall {
            pool,
            server,
            forget_on_error,
            start: Some((call.0, call.1, progress, within_ms)),
            phase: None,
            answer: None,
        }
    }
}

impl Host {
    /// One step of a [`KeptCall`]: the result (`None`: none within the limit, or no kept
    /// connection) and every secret the connection sends, to redact.
    pub fn mcp_kept_call(
        &self,
        m: &mut KeptCall,
        input: Option<Input>,
        now: f64,
    ) -> Step<(Option<CallResult>, Vec<String>)> {
        if let Some(answer) = m.answer.take() {
            return Step::Done(answer);
        }
        if let Some((tool, arguments, progress, within_ms)) = m.start.take() {
            let Some(kept) = self.kept(m.pool, &m.server) else {
                return Step::Done((None, Vec::new()));
            };
            let before = self.mcp_secrets(kept.client);
            let calling = Calling::new(kept.client, tool, arguments, progress, within_ms);
            m.phase = Some((kept, before, calling));
        }
        let Some((kept, before, calling)) = m.phase.as_mut() else {
            return Step::Done((None, Vec::new()));
        };
        let result = match self.mcp_call(calling, input, now) {
            Step::Do(output) => return Step::Do(output),
            Step::Done(result) => result,
        };
        // What the session sends now: a token refreshed during the call too (what it sent
        // at the start, when it was closed meanwhile).
        let now_sends = self.mcp_secrets(kept.client);
        let secrets = Some(now_sends)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| before.clone());
        let still = self.kept(m.pool, &m.server).map(|k| k.client) == Some(kept.client);
        if m.forget_on_error && matches!(result, Some(CallResult::Error(_))) && still {
            if let Some(client) = self.forget_kept(m.pool, &m.server) {
                m.answer = Some((result, secrets));
                return Step::Do(Output::Mcp(Mcp::Close { client }));
            }
        }
        Step::Done((result, secrets))
    }
}

/// The end of a use by hand: the server's connection is closed when the host says, after
/// the time the end asks for, that the server has been unused since ([`Host::idle`]).
#[derive(Debug)]
pub struct Idling {
    pool: Pool,
    idle: Idle,
    closing: Option<Closing>,
}

impl Idling {
    /// The end `idle` of a use of `pool`.
    pub fn new(pool: Pool, idle: Idle) -> Idling {
        Idling {
            pool,
            idle,
            closing: None,
        }
    }
}

impl Host {
    /// One step of an [`Idling`].
    pub fn mcp_idling(&self, m: &mut Idling, input: Option<Input>, now: f64) -> Step<()> {
        if let Some(closing) = m.closing.as_mut() {
            return self.mcp_close(closing, input, now);
        }
        match input {
            None => Step::Do(Output::Sleep {
                ms: m.idle.after_ms,
            }),
            Some(Input::Slept) if self.idle(&m.idle) => {
                match self.forget_kept(m.pool, &m.idle.server) {
                    Some(client) => {
                        self.mcp_close(m.closing.insert(Closing::new(client)), None, now)
                    }
                    None => Step::Done(()),
                }
            }
            Some(_) => Step::Done(()),
        }
    }
}

fn ended(input: Option<&Input>) -> String {
    format!(
        "internal error: {} came where a connection did not ask for it",
        unasked(input)
    )
}

#[cfg(test)]
mod tests;
