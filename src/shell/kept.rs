//! Kept MCP connections: a [`Pool`] holds at most one open connection (one MCP session) per
//! server name, for the server's current configuration and key. [`connection`] opens one on
//! first use, reuses it while both stay the same, and replaces it when either changed (the
//! core's `expose::connect` decides); [`forget`] closes one (after a failed call, so the next
//! call starts afresh, or when nothing needs it any more). A worker that Chrome stops loses
//! them; the next use opens again.
//!
//! Two pools use it: the servers exposed to pages (`expose.rs`) and the servers called by hand
//! (`workbench.rs`), each its own, so that a page's calls and a person's never share a session.
//!
//! Invariant: at most one kept connection per server and pool, for its current configuration
//! and key; nothing is borrowed across an await.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;

use super::mcp;
pub use super::state::{Open, Pool};
use super::store::read_key;
use crate::core::expose::{connect, Connect, Identity};
use crate::core::host::uses::Idle;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::McpTool;
use crate::core::provider::redact;

impl Open {
    /// What it sends now: the server's configuration, key and the access token its session
    /// holds (a refresh during a call included).
    fn identity(&self) -> Identity<'_> {
        let session = &self.client.borrow().session;
        Identity {
            config: &self.config,
            key: self.key.as_deref(),
            sign_in: session.auth().map(|r| r.tokens.access_token.clone()),
        }
    }
}

impl Pool {
    /// A pool whose connections hear the server's messages (its GET stream).
    pub fn listening() -> Pool {
        Pool {
            open: RefCell::default(),
            listens: true,
        }
    }

    /// A pool whose connections open no GET stream: idle, they hold none of the browser's
    /// connections to the server's host (at most 6 over HTTP/1.1, shared with its pages).
    pub fn quiet() -> Pool {
        Pool {
            open: RefCell::default(),
            listens: false,
        }
    }
}

/// Which pool: each user keeps its own, held by the shell's driver (`state::Driver`); the
/// host names them in its outputs ([`crate::core::host::io::Pool`]).
pub use crate::core::host::io::Pool as Kept;

impl Kept {
    /// `f` on the pool (never across an await).
    fn with<T>(self, f: impl FnOnce(&Pool) -> T) -> T {
        super::state::driver(|driver| {
            f(match self {
                Kept::Exposures => &driver.exposures,
                Kept::ByHand => &driver.by_hand,
            })
        })
    }
}

/// `f` on the pool's map (never across an await).
pub fn with<T>(pool: Kept, f: impl FnOnce(&mut HashMap<String, Rc<Open>>) -> T) -> T {
    pool.with(|p| f(&mut p.open.borrow_mut()))
}

/// The kept connection of `name`, when there is one.
pub fn get(pool: Kept, name: &str) -> Option<Rc<Open>> {
    with(pool, |open| open.get(name).cloned())
}

/// Whether `open` is still the pool's connection to `name`.
pub fn is_kept(pool: Kept, name: &str, open: &Rc<Open>) -> bool {
    with(pool, |kept| {
        kept.get(name).is_some_and(|k| Rc::ptr_eq(k, open))
    })
}

/// The kept connection to a server, opened when there is none for its current configuration
/// and key.
pub async fn connection(pool: Kept, server: &McpServerConfig) -> Result<Rc<Open>, String> {
    Ok(connection_or_new(pool, server).await?.0)
}

/// [`connection`], and whether it was opened now (its `tools` just listed).
pub async fn connection_or_new(
    pool: Kept,
    server: &McpServerConfig,
) -> Result<(Rc<Open>, bool), String> {
    let key = match &server.key_ref {
        Some(reference) => read_key(reference).await?,
        None => None,
    };
    // The sign-in as stored now: signed out, signed in anew or failed to refresh, a kept
    // session is replaced rather than sending the token it holds.
    let record = super::signins::record_for(server).await;
    let now = Identity {
        config: server,
        key: key.as_deref(),
        sign_in: record.map(|r| r.tokens.access_token),
    };
    let kept = get(pool, &server.name);
    match connect(kept.as_deref().map(Open::identity), now) {
        Connect::Reuse => return Ok((kept.expect("a kept connection"), false)),
        Connect::Replace => forget(pool, &server.name),
        Connect::Open => {}
    }
    let within = server
        .timeout_ms
        .unwrap_or(crate::core::limits::MCP_OPEN_MS);
    let opening = match pool.with(|p| p.listens) {
        true => mcp::open(server.clone(), key.clone(), within).await,
        false => mcp::open_without_stream(server.clone(), key.clone(), within).await,
    };
    let (client, tools) = opening.map_err(|e| redact(&e, key.as_deref()))?;
    let opened = Rc::new(Open {
        config: server.clone(),
        key,
        client,
        tools: Rc::new(tools),
    });
    // Another request may have opened the same server meanwhile: keep one of the two.
    let earlier = with(pool, |open| {
        let other = open.get(&server.name);
        match connect(other.map(|o| o.identity()), opened.identity()) {
            Connect::Reuse => other.cloned(),
            Connect::Replace | Connect::Open => {
                open.insert(server.name.clone(), opened.clone());
                None
            }
        }
    });
    let Some(other) = earlier else {
        return Ok((opened, true));
    };
    let client = opened.client.clone();
    spawn_local(async move { mcp::close(&client).await });
    Ok((other, false))
}

/// Closes the kept connections to server `name` in every pool (after a sign-in or a
/// sign-out: none goes on with the token it held).
pub fn forget_everywhere(name: &str) {
    for pool in [Kept::Exposures, Kept::ByHand] {
        forget(pool, name);
    }
}

/// Closes a server's kept connection, if there is one.
pub fn forget(pool: Kept, name: &str) {
    if let Some(open) = with(pool, |open| open.remove(name)) {
        spawn_local(async move { mcp::close(&open.client).await });
    }
}

/// The end of a use by hand: the server's connection is closed when the host says, at the
/// timer it asks for, that the server has been unused since (`core::host::uses`).
pub fn close_when_idle(pool: Kept, idle: Idle) {
    super::timer::after(idle.after_ms, move || {
        if super::state::host(|host| host.idle(&idle)) {
            forget(pool, &idle.server);
        }
    });
}

/// A server's kept connection and its tools as listed now: one `tools/list` on the kept
/// session, or a new connection when there is none, the server's settings or key changed, or
/// the kept one no longer answers (a listing is safe to send twice; a call is never sent
/// again).
pub async fn listed_now(
    pool: Kept,
    server: &McpServerConfig,
) -> Result<(Rc<Open>, Vec<McpTool>), String> {
    let (open, new) = connection_or_new(pool, server).await?;
    if new {
        let tools = open.tools.to_vec();
        return Ok((open, tools));
    }
    match mcp::relist(&open.client).await {
        Ok(tools) => Ok((open, tools)),
        Err(_) => {
            forget(pool, &server.name);
            let open = connection(pool, server).await?;
            let tools = open.tools.to_vec();
            Ok((open, tools))
        }
    }
}
