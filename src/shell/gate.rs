//! The gate for the operations outside runs (`callTool` on a page or an MCP server, smoke
//! evaluations, `replayDiff`, audit probes, exposed tools): the person's stored layers read,
//! the call screened by the core's gate ([`crate::core::gate`]), held for its `delay`, and
//! only then given the permit its call needs. A page call is the host's
//! ([`HostCall::asked`]: it asks for the layers itself); an MCP call is screened here
//! (`pass`). A run screens its calls in the core (the stored layers and its own), and its
//! drive hands out the permits.

use wasm_bindgen_futures::JsFuture;

use super::io::sleep;
use super::store;
use crate::core::gate::{self, Asker, Pass};
use crate::core::host::call::HostCall;
use crate::core::page::call::{CallAnswer, CallRequest};

/// The gate's pass for a call of the tool named any of `names`, once its delay is held; or
/// why the call may not be made.
pub(crate) async fn pass(asker: Asker, names: &[&str]) -> Result<Pass, String> {
    let stored = store::layers().await;
    let mut pass = gate::screen_stored(stored, asker, names)?;
    let delay = pass.take_delay();
    if delay > 0 {
        let _ = JsFuture::from(sleep(delay)).await;
    }
    Ok(pass)
}

/// A page call for `asker` through the gate: how it ended, or the gate's refusal (the host's
/// [`HostCall`] reads the stored layers and screens the call first).
pub(crate) async fn page_call(asker: Asker, request: CallRequest) -> CallAnswer {
    let id = format!("call_{}", super::io::random_id());
    super::page_call(HostCall::asked(asker, request, id)).await
}
