//! MCP tools exposed to pages' own WebMCP (product.md §7), in the worker.
//!
//! `webmcpHost.expose` / `exposures` keep the exposures in `chrome.storage.local`; after a
//! change the top frames of the open tabs of that origin are told to ask again. A content
//! script asks `exposedTools` at load and `callExposed` for a call (the host's `ServerCall`,
//! performed in `calls.rs` with `tools_for`); what it gets is decided by its page's origin as
//! Chrome reported it (the core's `Sender::page_origin`).
//!
//! One MCP connection per exposed server is kept while exposures use it (`kept.rs`: opened on
//! first use, reused while the server's configuration and key are the same, closed when no
//! exposure names the server any more, and after a call that failed, so the next one starts
//! afresh). A worker that Chrome stops loses them; the next request opens again.
//!
//! Invariant: at most one kept connection per server, for its current configuration and key.

use serde_json::Value;

use super::convert;
use super::store::{load_servers, put, read};
use super::{chrome, kept, timer};
use crate::core::expose::{
    apply, check_configured, parse_stored, sync_message, tells, tools_reply, unused, ExposeRequest,
    Exposure, PageTool,
};
use crate::core::host::mcp::ExposedTools;
use crate::core::ops::Sender;
use crate::core::setup::store::Area;

const EXPOSURES_KEY: &str = crate::core::storage::EXPOSURES;

/// The servers exposed to pages: a pool of their own, whose connections hear the server.
const CONNECTIONS: kept::Kept = kept::Kept::Exposures;

/// `expose({server, origin, enabled, tools?})` → the exposures after the change. The open
/// tabs of that origin are told at once.
pub(crate) async fn expose(request: ExposeRequest) -> Result<Value, String> {
    if request.enabled {
        check_configured(&request, &load_servers().await?)?;
    }
    let exposures = apply(&load_exposures().await, &request)?;
    let value = serde_json::to_value(&exposures).expect("exposures serialize");
    put(Area::Local, EXPOSURES_KEY, Some(&value))
        .await
        .map_err(|e| format!("expose: storing failed: {e}"))?;
    close_unused(&exposures);
    notify(&request.origin).await;
    Ok(value)
}

/// `exposures()` → `[{server, origins, tools?}]`.
pub(crate) async fn exposures() -> Value {
    serde_json::to_value(load_exposures().await).expect("exposures serialize")
}

/// The origin whose exposures a sender gets (a page's content script; nothing else).
fn origin_of(sender: Option<&Sender>) -> Result<String, String> {
    sender
        .and_then(Sender::page_origin)
        .ok_or_else(|| "only an http(s) page's content script has exposed tools".into())
}

/// `exposedTools()` from a content script (already authorized) → the registrations.
pub(crate) async fn exposed_tools(sender: Option<&Sender>) -> Result<Value, String> {
    Ok(tools_reply(&tools_for(&origin_of(sender)?).await))
}

pub(crate) async fn load_exposures() -> Vec<Exposure> {
    let stored = read(Area::Local, EXPOSURES_KEY).await.unwrap_or_else(|e| {
        chrome::warn(&format!("webmcp-host: exposures: {e}"));
        None
    });
    let (exposures, problems) = parse_stored(&stored.unwrap_or(Value::Null));
    for problem in problems {
        chrome::warn(&format!("webmcp-host: exposures: {problem}"));
    }
    exposures
}

/// The tools exposed to an origin, from each exposed server's (kept) connection, as the
/// host's [`ExposedTools`] finds them. A server that is not configured or fails is left out
/// and logged; the page is not told why.
pub(crate) async fn tools_for(origin: &str) -> Vec<PageTool> {
    let mut exposed = ExposedTools::new(origin.to_owned());
    let step =
        |host: &crate::core::host::Host, input, now| host.exposed_tools(&mut exposed, input, now);
    let (tools, warnings) = Box::pin(super::drive(step)).await;
    warnings.iter().for_each(|warning| chrome::warn(warning));
    tools
}

/// Closes the kept connections of the servers no exposure names any more.
fn close_unused(exposures: &[Exposure]) {
    let open = super::state::host(|host| host.kept_names(CONNECTIONS));
    unused(open.iter(), exposures)
        .iter()
        .for_each(|name| kept::forget(CONNECTIONS, name));
}

/// Tells the top frame of every open tab of `origin` to ask for its tools again.
async fn notify(origin: &str) {
    let message = convert::from_json(&sync_message());
    let mut sent = Vec::new();
    for tab in chrome::tabs().await {
        let Ok(frames) = chrome::all_frames(tab.id).await else {
            continue;
        };
        if frames
            .iter()
            .any(|f| f.frame_id == 0 && tells(origin, &f.url))
        {
            sent.push(chrome::message_frame(tab.id, 0, &message));
        }
    }
    for reply in sent {
        // A tab without our content script (opened before the extension) does not answer.
        let _ = timer::within(reply, crate::core::limits::EXPOSE_NOTIFY_MS).await;
    }
}
