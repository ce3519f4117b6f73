//! The host's MCP client: every connection's state that is plain data ([`Client`]: its
//! session and sign-in, what it knows of the server's tools, whether it listens and is
//! closed), held by the [`Host`] under a [`ClientId`], and the machines that drive a session
//! over the host's vocabulary ([`Http`](super::io::Http) for every request,
//! [`Storage`](super::io::Storage) for the sign-ins): opening a connection ([`Opening`]:
//! `server/discover`, else `initialize`, then every tool listed, within its time), listing
//! again ([`Relisting`]), a `tools/call` ([`Calling`]), closing ([`Closing`]), and the
//! listening stream ([`Listener`]). The shell keeps only the fetch handles, by id.
//!
//! Every decision of the protocol (resumption, a new session after 404, cancellation, caps,
//! answers to server requests, deadlines extended by progress) is the exchange machine's
//! ([`crate::core::mcp::exchange`]); a refusal (401) of a signed-in connection is answered
//! with a refresh of its sign-in, once; a 401 without a usable sign-in, or a 403
//! `insufficient_scope`, is the request's error (the person signs in again with `signIn`).
//!
//! Invariants: a closed client sends nothing more (a job in flight ends at its next input);
//! the listing after `tools/list_changed` is made once for every call waiting on it.

use std::collections::HashMap;

use super::Host;
use crate::core::mcp::client::{Connection, Eras, ListingCache, ToolWatch};
use crate::core::mcp::exchange::Settings;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::{McpEvent, Session};

pub mod by_hand;
mod exchanging;
pub mod exposed;
mod listen;
pub mod pools;
mod session;
pub mod signin;
pub mod signins;
pub mod text;

pub use by_hand::ServerTools;
pub use exposed::{ExposedReply, ExposedTools, Exposing, Exposures};
pub use listen::Listener;
pub use pools::{Connecting, Idling, Kept, KeptCall, ListedNow};
pub use session::{Calling, Closing, Opening, Relisting};
pub use signin::{AuthState, SignIn, SigningIn, SigningOut};

pub use super::io::ClientId;

/// One server's MCP client between its requests.
#[derive(Debug)]
pub struct Client {
    /// The server as configured when it opened.
    pub config: McpServerConfig,
    /// Carries the key header and the sign-in's Bearer token into every request.
    pub session: Session,
    /// The key it sends, if any.
    pub key: Option<String>,
    /// What the client knows of the server's tools since a `tools/list_changed`.
    tools: ToolWatch,
    /// The last listing, while its `ttlMs` (2026-07-28) says it is fresh.
    listing: ListingCache,
    /// A listing after a change is under way: every call waits on it.
    relisting: bool,
    /// The listening stream's fetch while it is open.
    listening: Option<u64>,
    /// Whether it opens that stream at all.
    listens: bool,
    /// The stream opened while connecting, until its task reads it.
    parked: Option<Box<Listener>>,
    connection: Connection,
}

/// The host's MCP clients, and the servers found to speak only the revisions up to
/// 2025-11-25.
#[derive(Debug, Default)]
pub struct Clients {
    next: u64,
    open: HashMap<ClientId, Client>,
    eras: Eras,
}

impl Host {
    /// A fresh id for a fetch ([`Http`](super::io::Http)), unique in the host: every
    /// machine that fetches takes its ids here, so that fetches of many machines may be in
    /// flight at once.
    pub fn fetch_id(&self) -> u64 {
        let id = self.fetch_ids.get() + 1;
        self.fetch_ids.set(id);
        id
    }

    /// `f` on the client, while it is open (`None`: closed).
    pub fn with_client<T>(&self, id: ClientId, f: impl FnOnce(&mut Client) -> T) -> Option<T> {
        self.mcp.borrow_mut().open.get_mut(&id).map(f)
    }

    /// A copy of the client's session as it is now (a closed client's is empty).
    pub fn mcp_session(&self, id: ClientId) -> Session {
        self.with_client(id, |c| c.session.clone())
            .unwrap_or_else(|| Session::new(""))
    }

    /// The MCP revision the connection speaks (`2026-07-28`, `2025-11-25`, …).
    pub fn mcp_protocol(&self, id: ClientId) -> String {
        self.with_client(id, |c| c.session.protocol().unwrap_or_default().to_owned())
            .unwrap_or_default()
    }

    /// Every secret the connection sends now (its key, its sign-in's tokens).
    pub fn mcp_secrets(&self, id: ClientId) -> Vec<String> {
        self.with_client(id, |c| {
            crate::core::mcp::secrets_of(c.key.as_deref(), c.session.auth())
        })
        .unwrap_or_default()
    }

    /// A new client for `config`, its key header set.
    fn mcp_new(&self, config: McpServerConfig, key: Option<String>, listens: bool) -> ClientId {
        let session = Session::new(config.url.clone())
            .with_headers(key.iter().map(|k| config.key_header(k)).collect());
        let mut clients = self.mcp.borrow_mut();
        clients.next += 1;
        let id = ClientId(clients.next);
        let client = Client {
            config,
            session,
            key,
            tools: ToolWatch::default(),
            listing: ListingCache::default(),
            relisting: false,
            listening: None,
            listens,
            parked: None,
            connection: Connection::Open,
        };
        clients.open.insert(id, client);
        id
    }

    /// The settings of the client's exchanges (`None`: closed).
    fn mcp_settings(&self, id: ClientId) -> Option<Settings> {
        self.with_client(id, |c| Settings::extension(&c.config))
    }

    /// The error of a request `method` the client would send now, when it is closed.
    fn mcp_refuses(&self, id: ClientId, method: &str) -> Result<(), String> {
        let connection = self.with_client(id, |c| c.connection);
        connection.unwrap_or(Connection::Closed).refuses(method)
    }

    /// An event the server sent: a change of its tools is noted.
    fn mcp_event(&self, id: ClientId, event: &McpEvent) {
        self.with_client(id, |c| {
            c.tools.event(event);
            c.listing.event(event);
        });
    }
}

#[cfg(test)]
mod tests;
