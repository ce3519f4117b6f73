//! The gate for the operations outside runs (`callTool` on a page or an MCP server, smoke
//! evaluations, `replayDiff`, audit probes, exposed tools), performed as the host decides it:
//! a page call is the host's ([`HostCall::asked`] screens it), an MCP call is screened by the
//! host's [`Screening`] here (`pass`): the shell reads the stored layers when the host asks
//! and holds the call for its `delay`, nothing more. A run screens its calls in the core (the
//! stored layers and its own), and its drive hands out the permits.

use wasm_bindgen_futures::JsFuture;

use super::io::sleep;
use super::store;
use crate::core::gate::{Asker, Pass};
use crate::core::host::call::HostCall;
use crate::core::host::screen::{ScreenEffect, ScreenInput, Screening};
use crate::core::page::call::{CallAnswer, CallRequest};
use crate::core::setup::store::{Area::Local, MIDDLEWARE_KEY};

/// The gate's pass for a call of the tool named any of `names`, once its delay is held; or
/// why the call may not be made.
pub(crate) async fn pass(asker: Asker, names: &[&str]) -> Result<Pass, String> {
    let mut screening = Screening::new(asker, names);
    let mut input = None;
    loop {
        let effect = super::state::host(|host| host.screen(&mut screening, input.take()));
        input = Some(match effect {
            ScreenEffect::Done(pass) => return pass,
            ScreenEffect::ReadLayers => {
                ScreenInput::Layers(store::read(Local, MIDDLEWARE_KEY).await)
            }
            ScreenEffect::Hold { ms } => {
                let _ = JsFuture::from(sleep(ms)).await;
                ScreenInput::Held
            }
        });
    }
}

/// A page call for `asker` through the gate: how it ended, or the gate's refusal (the host's
/// [`HostCall`] reads the stored layers and screens the call first).
pub(crate) async fn page_call(asker: Asker, request: CallRequest) -> CallAnswer {
    let id = format!("call_{}", super::io::random_id());
    super::page_call(HostCall::asked(asker, request, id)).await
}
