//! Kept MCP connections, as the host keeps them ([`crate::core::host::mcp::pools`]: at most
//! one per server and pool, for its current configuration, key and sign-in; replaced when one
//! changed; closed after a failed call, when nothing needs it any more, and once idle after
//! a use by hand). This module drives the host's machines and closes what they forget, each
//! in a task of its own. A worker that Chrome stops loses them; the next use opens again.

use std::rc::Rc;

use wasm_bindgen_futures::spawn_local;

use super::mcp::{self, McpClient};
use super::{drive, state};
use crate::core::host::io::{Idle, McpServerConfig, McpTool};
/// A kept connection, as the host keeps it.
pub use crate::core::host::mcp::Kept as Open;
use crate::core::host::mcp::{ClientId, Connecting, Idling, ListedNow};

/// Which pool: each user keeps its own, held by the host; the host names them in its
/// outputs ([`crate::core::host::io::Pool`]).
pub use crate::core::host::io::Pool as Kept;

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
    let mut connecting = Connecting::new(pool, server.clone());
    let step =
        |host: &crate::core::host::Host, input, now| host.mcp_connect(&mut connecting, input, now);
    let (kept, new) = Box::pin(drive(step)).await?;
    Ok((Rc::new(kept), new))
}

/// Closes a client in a task of its own.
pub(crate) fn close_later(client: ClientId) {
    spawn_local(async move { mcp::close(&Rc::new(McpClient { id: client })).await });
}

/// Closes the kept connections to server `name` in every pool (after a sign-in or a
/// sign-out: none goes on with the token it held).
pub fn forget_everywhere(name: &str) {
    state::host(|host| host.forget_kept_everywhere(name))
        .into_iter()
        .for_each(close_later);
}

/// Closes a server's kept connection, if there is one.
pub fn forget(pool: Kept, name: &str) {
    if let Some(client) = state::host(|host| host.forget_kept(pool, name)) {
        close_later(client);
    }
}

/// The end of a use by hand: the server's connection is closed when the host says, after the
/// time it asks for, that the server has been unused since (`core::host::uses`).
pub fn close_when_idle(pool: Kept, idle: Idle) {
    let mut idling = Idling::new(pool, idle);
    spawn_local(
        async move { drive(|host, input, now| host.mcp_idling(&mut idling, input, now)).await },
    );
}

/// A server's kept connection and its tools as listed now: one `tools/list` on the kept
/// session, or a new connection when there is none, the server's settings or key changed, or
/// the kept one no longer answers (a listing is safe to send twice; a call is never sent
/// again).
pub async fn listed_now(
    pool: Kept,
    server: &McpServerConfig,
) -> Result<(Rc<Open>, Vec<McpTool>), String> {
    let mut listed = ListedNow::new(pool, server.clone());
    let step =
        |host: &crate::core::host::Host, input, now| host.mcp_listed_now(&mut listed, input, now);
    let (kept, tools) = Box::pin(drive(step)).await?;
    Ok((Rc::new(kept), tools))
}
