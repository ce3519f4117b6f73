//! The extension's MCP client between its requests, as values: the [`Settings`] its exchange
//! machines run with, whether it is [`Connection::Closed`], and [`ToolWatch`], what it knows
//! of the server's tools after `notifications/tools/list_changed`, and [`ListingCache`], a
//! listing kept while its `ttlMs` says. The worker holds these beside its fetch handles and
//! only performs what they say.
//!
//! Invariants: after a change the tools are listed again before the next call, once for every
//! call waiting on it; a call of a tool whose definition changed (or that is gone) is refused;
//! a closed client sends nothing more.

use std::rc::Rc;

use serde_json::json;

use super::exchange::{Deadline, Elicitation, Exchange, Head, Settings};
use super::modern::Protocols;
use super::source::McpServerConfig;
use super::tools::{still_same, McpTool};
use super::{CallResult, McpEvent, DEFAULT_TIMEOUT_MS};

/// The longest wait (ms) the worker's timers are given when nothing waits on time.
pub const NO_DEADLINE_MS: u32 = crate::core::limits::NO_DEADLINE_MS;

impl Settings {
    /// The extension's client: 2026-07-28 where the server offers it, else 2025-11-25 and
    /// older; elicitation (and 2026-07-28's `input_required`) declined, deadlines extended by
    /// progress, the server's own timeout or [`DEFAULT_TIMEOUT_MS`].
    pub fn extension(config: &McpServerConfig) -> Settings {
        Settings {
            client_name: "webmcp-host".into(),
            client_version: crate::VERSION.into(),
            capabilities: json!({"elicitation": {}}),
            timeout_ms: config.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
            deadline: Deadline::ExtendedByProgress,
            elicitation: Elicitation::Decline,
            protocols: Protocols::Auto,
        }
    }
}

impl Head {
    /// An answer's head from its status and a header lookup (by lower-case name).
    pub fn read(status: u16, header: impl Fn(&str) -> Option<String>) -> Head {
        Head {
            status,
            content_type: header("content-type"),
            session_id: header("mcp-session-id"),
            www_authenticate: header("www-authenticate"),
            location: None,
            retry_after: header("retry-after"),
        }
    }
}

impl Exchange {
    /// Ms from `now` until the machine's next deadline ([`NO_DEADLINE_MS`] when none).
    pub fn wait_ms(&self, now: f64) -> u32 {
        self.poll_timeout().map_or(NO_DEADLINE_MS, |at| {
            (at - now).ceil().clamp(0.0, f64::from(NO_DEADLINE_MS)) as u32
        })
    }
}

/// Whether the client may still send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Connection {
    /// Requests are sent.
    #[default]
    Open,
    /// Closed: nothing more is sent (an opening that ran out of time may still be under way).
    Closed,
}

impl Connection {
    /// The error of a request `method` that would be sent on a closed connection.
    pub fn refuses(self, method: &str) -> Result<(), String> {
        match self {
            Connection::Open => Ok(()),
            Connection::Closed => Err(format!("{method}: the connection was closed")),
        }
    }
}

/// What a call does first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeforeCall {
    /// List the tools again (for every call waiting), then [`ToolWatch::check`].
    List,
    /// Wait for the listing under way, if any, then [`ToolWatch::check`].
    Check,
}

/// What the client knows of the server's tools since it opened.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolWatch {
    /// A `tools/list_changed` not yet followed by a listing.
    changed: bool,
    /// The last listing after a change: the tools, or why it failed.
    latest: Option<Result<Rc<Vec<McpTool>>, String>>,
}

impl ToolWatch {
    /// Takes an event the server sent: a change of its tools is noted.
    pub fn event(&mut self, event: &McpEvent) {
        if *event == McpEvent::ToolsChanged {
            self.changed = true;
        }
    }

    /// Before a call: list again when the tools changed since the last listing.
    pub fn before_call(&mut self) -> BeforeCall {
        match std::mem::take(&mut self.changed) {
            true => BeforeCall::List,
            false => BeforeCall::Check,
        }
    }

    /// The listing's outcome.
    pub fn listed(&mut self, outcome: Result<Vec<McpTool>, String>) {
        self.latest = Some(outcome.map(Rc::new));
    }

    /// Whether `tool`, as the run was given it, may be called: refused when the listing after
    /// a change failed, or the tool changed or went.
    pub fn check(&self, tool: &McpTool) -> Result<(), String> {
        match &self.latest {
            None => Ok(()),
            Some(Ok(latest)) => still_same(tool, latest),
            Some(Err(error)) => Err(format!(
                "the server changed its tools, and listing them again failed ({error}); the call was not sent"
            )),
        }
    }
}

/// A server's tool listing kept while its `ttlMs` (2026-07-28) says it is fresh: a listing
/// asked for again within that time is this one, without a request. A listing without
/// `ttlMs` (every earlier revision) is never kept; `tools/list_changed` drops it. One cache
/// belongs to one connection, so to one sign-in (a `private` listing is never shared).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListingCache {
    kept: Option<(Rc<Vec<McpTool>>, f64)>,
}

impl ListingCache {
    /// The kept listing, while `now` is before its end.
    pub fn fresh(&self, now: f64) -> Option<Rc<Vec<McpTool>>> {
        let (tools, until) = self.kept.as_ref()?;
        (now < *until).then(|| tools.clone())
    }

    /// Keeps a listing made at `now` for `ttl_ms` (0: not kept).
    pub fn keep(&mut self, tools: Rc<Vec<McpTool>>, ttl_ms: u64, now: f64) {
        self.kept = (ttl_ms > 0).then_some((tools, now + ttl_ms as f64));
    }

    /// Takes an event the server sent: a change of its tools drops the listing.
    pub fn event(&mut self, event: &McpEvent) {
        if *event == McpEvent::ToolsChanged {
            self.kept = None;
        }
    }
}

/// The servers (by URL) found to speak only the revisions up to 2025-11-25, for as long as the
/// worker lives: they are not asked `server/discover` again before `initialize` (2026-07-28
/// asks a client to keep a server's era rather than probe it each time). At most
/// `MAX_KEPT_ERAS`, the oldest forgotten first; a server seen speaking 2026-07-28 is forgotten.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Eras {
    legacy: Vec<String>,
}

impl Eras {
    /// Which revisions to try with the server at `url`.
    pub fn protocols(&self, url: &str) -> Protocols {
        match self.legacy.iter().any(|u| u == url) {
            true => Protocols::Legacy,
            false => Protocols::Auto,
        }
    }

    /// The server at `url` could not be connected to: it is probed afresh next time.
    pub fn forget(&mut self, url: &str) {
        self.legacy.retain(|u| u != url);
    }

    /// The server at `url` connected, speaking 2026-07-28 (`modern`) or not.
    pub fn spoke(&mut self, url: &str, modern: bool) {
        self.legacy.retain(|u| u != url);
        if !modern {
            if self.legacy.len() >= crate::core::limits::MAX_KEPT_ERAS {
                self.legacy.remove(0);
            }
            self.legacy.push(url.to_owned());
        }
    }
}

/// `tools/call` `name`'s result from its exchange.
pub fn call_result(exchange: Result<Vec<McpEvent>, String>, name: &str) -> CallResult {
    match exchange.map(|events| McpEvent::call_outcome(events, name)) {
        Ok(Some(Ok(result))) => result,
        Ok(Some(Err(error))) | Err(error) => CallResult::Error(error),
        Ok(None) => CallResult::Error(format!("the server did not answer tools/call `{name}`")),
    }
}

/// Why an opening (connect and list, within `within_ms`) gave no tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenMiss {
    /// Time ran out.
    Timeout {
        /// The time it had.
        within_ms: u32,
    },
}

impl std::fmt::Display for OpenMiss {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenMiss::Timeout { within_ms } => write!(f, "no answer in time ({within_ms} ms)"),
        }
    }
}

#[cfg(test)]
mod tests;
