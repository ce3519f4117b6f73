//! MCP tools exposed to pages' own WebMCP (product.md §7), in the worker.
//!
//! `webmcpHost.expose` / `exposures` keep the exposures in `chrome.storage.local`; after a
//! change the top frames of the open tabs of that origin are told to ask again. A content
//! script asks `exposedTools` at load and `callExposed` for a call; what it gets is decided by
//! its page's origin as Chrome reported it.
//!
//! Every decision is the host's (`expose`, `exposures`, `exposedTools` are the door's
//! machines; one MCP connection per exposed server kept while exposures use it, in the
//! exposures' pool); this module reads the exposures as stored, finds an origin's tools
//! (`tools_for`, the host's [`ExposedTools`]), tells the tabs, and warns in the worker's
//! console.

use serde_json::Value;

use super::convert;
use super::store::read;
use super::{chrome, timer};
use crate::core::expose::parse_stored;
use crate::core::host::io::{Area, Exposure, PageTool};
use crate::core::host::mcp::ExposedTools;

const EXPOSURES_KEY: &str = crate::core::storage::EXPOSURES;

/// The exposures as stored, read leniently (each problem warned of in the worker's console).
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

/// Tells the top frame of each tab at once, and waits at most `ms` for each.
pub(crate) async fn tell(tab_ids: Vec<i64>, message: &Value, ms: u32) {
    let message = convert::from_json(message);
    let sent: Vec<_> = (tab_ids.into_iter())
        .map(|tab_id| chrome::message_frame(tab_id, 0, &message))
        .collect();
    for reply in sent {
        // A tab without our content script (opened before the extension) does not answer.
        let _ = timer::within(reply, ms).await;
    }
}
