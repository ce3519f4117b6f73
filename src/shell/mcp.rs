//! The worker's MCP client: the host's MCP machines ([`crate::core::host::mcp`]: opening,
//! listing, calling, closing, the listening stream) driven to their answers, and the plain
//! HTTP outputs every machine asks for performed with fetch, each fetch's handle held under
//! the id the host gave it. Redirects are refused (fetch's `redirect: "error"`), so a key
//! header never follows one.

use std::rc::Rc;

use js_sys::Promise;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;

use super::convert::describe;
use super::io::{abort_fetch, call_method, fetch, head, random_id};
pub use super::state::{McpClient, Shared};
use super::{drive, state, timer};
use crate::core::host::io::{
    CallResult, Fetched, Http, Input, McpCall, McpServerConfig, McpTool, Permit, Piece,
};
use crate::core::host::mcp::{Calling, Closing, Opening, Relisting};

/// Connects (`server/discover`, else initialize + initialized) and lists every tool, within `within_ms` in all. A
/// server that fails or runs out of time is closed (its session ended, its GET stream
/// aborted), so nothing of it outlives the error.
pub async fn open(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
) -> Result<(Shared, Vec<McpTool>), String> {
    open_with(config, key, within_ms, true).await
}

/// [`open`] without the GET stream for server messages: for a connection kept between a
/// person's calls, which lists the tools again before each use anyway, and which must not hold
/// one of the browser's few connections to the server's host while idle.
pub async fn open_without_stream(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
) -> Result<(Shared, Vec<McpTool>), String> {
    open_with(config, key, within_ms, false).await
}

async fn open_with(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
    listens: bool,
) -> Result<(Shared, Vec<McpTool>), String> {
    let mut opening = Opening::new(config, key, within_ms, listens);
    let (id, tools) = Box::pin(drive(|host, input, now| {
        host.mcp_open(&mut opening, input, now)
    }))
    .await?;
    Ok((Rc::new(McpClient { id }), tools))
}

/// Lists the tools again on an open connection (a call by hand, the Call view's listing),
/// unless the last listing is still fresh (its `ttlMs`, 2026-07-28).
pub async fn relist(client: &Shared) -> Result<Vec<McpTool>, String> {
    let mut relisting = Relisting::new(client.id);
    Box::pin(drive(|host, input, now| {
        host.mcp_relist(&mut relisting, input, now)
    }))
    .await
}

/// `tools/call` of a tool as the run was given it. After `notifications/tools/list_changed`
/// the tools are listed again first, and a tool whose definition changed is not called.
pub async fn call(client: Shared, permit: Permit<McpCall>) -> CallResult {
    let result = call_within(&client, permit, None).await;
    result.unwrap_or_else(|| {
        CallResult::Error("internal error: a call without a limit timed out".into())
    })
}

/// [`call`], at most `within_ms` when given (`None`: no result in time).
pub(crate) async fn call_within(
    client: &Shared,
    permit: Permit<McpCall>,
    within_ms: Option<u32>,
) -> Option<CallResult> {
    let McpCall { tool, arguments } = permit.into_call();
    let mut calling = Calling::new(client.id, tool, arguments, random_id(), within_ms);
    Box::pin(drive(|host, input, now| {
        host.mcp_call(&mut calling, input, now)
    }))
    .await
}

/// The MCP revision the connection speaks (`2026-07-28`, `2025-11-25`, …).
pub fn protocol(client: &Shared) -> String {
    state::host(|host| host.mcp_protocol(client.id))
}

/// Ends the session (`DELETE`), without waiting for long.
pub async fn close(client: &Shared) {
    let mut closing = Closing::new(client.id);
    Box::pin(drive(|host, input, now| {
        host.mcp_close(&mut closing, input, now)
    }))
    .await
}

/// Performs one plain HTTP output: each fetch's handle kept under its id until its body
/// ended or it was aborted.
pub(crate) async fn perform_http(http: Http) -> Input {
    match http {
        Http::Fetch {
            id,
            request,
            within_ms,
        } => {
            // Held unopened meanwhile: an abort before the head aborts the fetch once it comes.
            with_fetches(|f| f.insert(id, (JsValue::UNDEFINED, None)));
            let fetched = timer::within(fetch(request), within_ms).await;
            let held = with_fetches(|f| f.contains_key(&id));
            Input::Fetched(match fetched {
                Ok(Some(handle)) if !held => {
                    abort_fetch(&handle);
                    Fetched::Failed("the fetch was aborted".into())
                }
                Ok(Some(handle)) => {
                    let head = head(&handle);
                    with_fetches(|f| f.insert(id, (handle, None)));
                    Fetched::Head(head)
                }
                Ok(None) => forgotten(id, Fetched::TimedOut),
                Err(error) => forgotten(id, Fetched::Failed(error)),
            })
        }
        Http::Read { id, within_ms } => Input::Piece(read(id, within_ms).await),
        Http::Abort { id } => {
            if let Some((handle, _)) = with_fetches(|f| f.remove(&id)) {
                abort_fetch(&handle);
            }
            Input::Done(Ok(()))
        }
        Http::Post { request } => {
            drop(fetch(request));
            Input::Done(Ok(()))
        }
    }
}

/// `fetched`, its fetch's id forgotten.
fn forgotten(id: u64, fetched: Fetched) -> Fetched {
    with_fetches(|f| f.remove(&id));
    fetched
}

fn with_fetches<T>(
    f: impl FnOnce(&mut std::collections::HashMap<u64, (JsValue, Option<Promise>)>) -> T,
) -> T {
    state::driver(|d| f(&mut d.fetches.borrow_mut()))
}

/// The next piece of a fetch's body: a read left unanswered earlier is read on, never two at
/// once.
async fn read(id: u64, within_ms: Option<u32>) -> Piece {
    let Some((handle, pending)) =
        with_fetches(|f| f.get_mut(&id).map(|(h, p)| (h.clone(), p.take())))
    else {
        return Piece::Failed("the fetch was aborted".into());
    };
    let read = pending.unwrap_or_else(|| match call_method(&handle, "read") {
        Ok(promise) => Promise::from(promise),
        Err(error) => Promise::reject(&error),
    });
    let piece = match within_ms {
        Some(ms) => timer::within(read.clone(), ms).await,
        None => JsFuture::from(read.clone())
            .await
            .map(Some)
            .map_err(|e| describe(&e)),
    };
    match piece {
        Ok(None) => {
            with_fetches(|f| f.get_mut(&id).map(|(_, p)| *p = Some(read)));
            Piece::Late
        }
        Ok(Some(piece)) => match piece.as_string() {
            Some(text) => Piece::Text(text),
            None => {
                with_fetches(|f| f.remove(&id));
                Piece::End
            }
        },
        Err(error) => {
            with_fetches(|f| f.remove(&id));
            Piece::Failed(error)
        }
    }
}
