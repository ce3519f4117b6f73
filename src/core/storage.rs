//! Every key the host writes in `chrome.storage`, in one table: its area, what it holds and who
//! writes it. The modules that read and write a key take its name from here, and a test holds
//! the table, the code and `docs/storage.md` to each other, so a key cannot be added in one
//! place only. A key that ends in `.` is a prefix: one entry per run, conversation or key
//! reference follows it.

/// A storage area of the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Area {
    /// `chrome.storage.local`: kept across sessions.
    Local,
    /// `chrome.storage.session`: gone when the browser closes.
    Session,
}

impl Area {
    /// The area's name in `chrome.storage`.
    pub fn name(self) -> &'static str {
        match self {
            Area::Local => "local",
            Area::Session => "session",
        }
    }
}

/// The model registry.
pub const MODELS: &str = "webmcpHost.models";
/// The MCP servers.
pub const SERVERS: &str = "webmcpHost.servers";
/// The site policies.
pub const SITES: &str = "webmcpHost.sites";
/// The global middleware layers.
pub const MIDDLEWARE: &str = "webmcpHost.middleware";
/// The person's keys, one entry per key reference after the prefix.
pub const KEY_PREFIX: &str = "webmcpHost.key.";
/// The price table.
pub const PRICES: &str = "webmcpHost.prices";
/// The trace collectors.
pub const COLLECTORS: &str = "webmcpHost.collectors";
/// The MCP tools exposed to origins.
pub const EXPOSURES: &str = "webmcpHost.exposures";
/// MCP sign-ins for this browser session.
pub const SIGN_INS: &str = "webmcpHostAuth";
/// MCP sign-ins the person asked to be remembered.
pub const SIGN_INS_KEPT: &str = "webmcpHostAuthKept";
/// The kept runs' summaries.
pub const RUNS: &str = "webmcpHost.ui.runs";
/// A run's log, one entry per run id after the prefix.
pub const RUN_PREFIX: &str = "webmcpHost.ui.run.";
/// The acting calls under way of a run, one entry per run id after the prefix.
pub const INTENT_PREFIX: &str = "webmcpHost.intent.";
/// The conversations' index.
pub const CONVERSATIONS: &str = "webmcpHost.conversations";
/// A conversation's record, one entry per thread id after the prefix.
pub const CONVERSATION_PREFIX: &str = "webmcpHost.conversation.";
/// The servers' last checks.
pub const SERVER_STATES: &str = "webmcpHost.ui.serverStates";
/// The first definition of every tool seen, per origin (the inventory's "changed").
pub const SEEN: &str = "webmcpHost.seen";
/// The Call view's history of calls by hand: one entry per tab after the prefix, and `mcp`
/// for the calls to MCP servers (written by the popup, `popup/views/call.js`).
pub const MANUAL_CALLS_PREFIX: &str = "webmcpHost.ui.manualCalls.";
/// An origin's last crawl: the fingerprints of each page's tools (`core::crawl`), by origin
/// after the prefix.
pub const CRAWL_PREFIX: &str = "webmcpHost.crawl.";
/// The origins whose crawls are kept, most recently crawled first (`core::crawl::index`).
pub const CRAWLED: &str = "webmcpHost.crawled";

/// One storage key: its name, its area and what it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StorageKey {
    /// The key (a prefix when it ends in `.`).
    pub key: &'static str,
    /// The area it lives in.
    pub area: Area,
    /// What it holds.
    pub holds: &'static str,
}

const fn key(key: &'static str, area: Area, holds: &'static str) -> StorageKey {
    StorageKey { key, area, holds }
}

/// Every storage key of the host.
pub const TABLE: &[StorageKey] = &[
    key(
        MODELS,
        Area::Local,
        "the model registry and the default model",
    ),
    key(SERVERS, Area::Local, "the MCP servers"),
    key(SITES, Area::Local, "the site policies"),
    key(MIDDLEWARE, Area::Local, "the global middleware layers"),
    key(PRICES, Area::Local, "the price table"),
    key(COLLECTORS, Area::Local, "the trace collectors"),
    key(EXPOSURES, Area::Local, "the MCP tools exposed to origins"),
    key(
        SIGN_INS_KEPT,
        Area::Local,
        "MCP sign-ins the person asked to be remembered",
    ),
    key(KEY_PREFIX, Area::Session, "a key, by its reference"),
    key(
        SIGN_INS,
        Area::Session,
        "MCP sign-ins of this browser session",
    ),
    key(RUNS, Area::Session, "the kept runs' summaries"),
    key(RUN_PREFIX, Area::Session, "a run's log, by run id"),
    key(
        INTENT_PREFIX,
        Area::Session,
        "a run's acting calls under way, by run id",
    ),
    key(CONVERSATIONS, Area::Session, "the conversations' index"),
    key(
        CONVERSATION_PREFIX,
        Area::Session,
        "a conversation's record, by thread id",
    ),
    key(SERVER_STATES, Area::Session, "the servers' last checks"),
    key(
        SEEN,
        Area::Session,
        "the first definition of each tool seen, by origin",
    ),
    key(
        MANUAL_CALLS_PREFIX,
        Area::Session,
        "the Call view's calls by hand: by tab, and `mcp` for MCP servers' (the popup's)",
    ),
    key(
        CRAWL_PREFIX,
        Area::Local,
        "an origin's last crawl: its pages' tool fingerprints, by origin",
    ),
    key(
        CRAWLED,
        Area::Local,
        "the origins whose crawls are kept, most recently crawled first",
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_listed_once_and_none_is_a_prefix_of_another() {
        for (i, a) in TABLE.iter().enumerate() {
            for b in &TABLE[i + 1..] {
                assert_ne!(a.key, b.key, "listed twice");
                let overlap = |p: &str, k: &str| p.ends_with('.') && k.starts_with(p);
                assert!(
                    !overlap(a.key, b.key) && !overlap(b.key, a.key),
                    "{} and {} overlap",
                    a.key,
                    b.key
                );
            }
        }
    }
}
