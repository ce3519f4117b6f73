//! MCP tool calls outside runs (`callTool` with `server`, by the person; `callExposed`, by a
//! page), performed as the host's [`ServerCall`] decides them: this reads storage, lists the
//! server's tools on its kept connection, reads the stored layers and holds a `delay` when the
//! gate asks, asks the person in the extension's own UI, and sends the call with the permit
//! the host gave, within the limit it set. Each caller keeps its own pool of connections
//! ([`kept`]): the person's calls and a page's never share a session.

use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::JsFuture;

use super::io::sleep;
use super::{expose, kept, mcp, store, timer, waits};
use crate::core::host::screen::{ScreenEffect, ScreenInput};
use crate::core::host::server_call::{ServerCall, ServerEffect, ServerInput};
use crate::core::mcp::{secrets_of, CallResult};
use crate::core::setup::store::{Area::Local, MIDDLEWARE_KEY};

/// Performs the call's effects until its answer.
pub(crate) async fn perform(mut call: ServerCall) -> Result<Value, String> {
    let pool = match call.is_by_hand() {
        true => kept::Kept::ByHand,
        false => kept::Kept::Exposures,
    };
    let mut input = None;
    // The connection the server's tools were listed on, for the call that follows.
    let mut listed_on: Option<Rc<kept::Open>> = None;
    loop {
        let now = super::io::now_ms();
        let effect = super::state::host(|host| host.server_call(&mut call, input.take(), now));
        input = Some(match effect {
            ServerEffect::Done(answer) => {
                if let Some(idle) = call.take_idle() {
                    kept::close_when_idle(pool, idle);
                }
                return answer;
            }
            ServerEffect::Servers => ServerInput::Servers(store::load_servers().await),
            ServerEffect::Tools { server } => {
                ServerInput::Tools(kept::listed_now(pool, &server).await.map(|(open, tools)| {
                    listed_on = Some(open);
                    tools
                }))
            }
            ServerEffect::Exposed { origin } => {
                ServerInput::Exposed(expose::tools_for(&origin).await)
            }
            ServerEffect::Exposures => ServerInput::Exposures(expose::load_exposures().await),
            ServerEffect::Pushed => {
                super::pages::push("pending", serde_json::json!({}));
                ServerInput::Pushed
            }
            ServerEffect::Screen(effect) => ServerInput::Screen(screen_step(effect).await),
            ServerEffect::Confirm {
                asked,
                call_id,
                server,
                tool,
                args,
                question,
            } => {
                let names = (server.as_str(), tool.as_str());
                let asked = (asked.as_str(), call_id.as_str());
                ServerInput::Confirmed(
                    waits::confirm_in_extension(asked, names, &args, question).await,
                )
            }
            ServerEffect::Call {
                server,
                permit,
                within_ms,
                forget_on_error,
            } => {
                let open = listed_on.take().or_else(|| kept::get(pool, &server));
                let Some(open) = open else {
                    input = Some(ServerInput::Called {
                        result: None,
                        secrets: Vec::new(),
                    });
                    continue;
                };
                let client = open.client.clone();
                let sent = async move { Ok(mcp::call(client, *permit).await) };
                let result = match within_ms {
                    Some(ms) => timer::limit(ms, sent).await.ok().flatten(),
                    None => sent.await.ok(),
                };
                if forget_on_error
                    && matches!(result, Some(CallResult::Error(_)))
                    && kept::is_kept(pool, &server, &open)
                {
                    kept::forget(pool, &server);
                }
                // What the session sends now: a token refreshed during the call too.
                let secrets = secrets_of(open.key.as_deref(), open.client.borrow().session.auth());
                ServerInput::Called { result, secrets }
            }
        });
    }
}

/// Performs one step of the gate's screening (never [`ScreenEffect::Done`]).
pub(crate) async fn screen_step(effect: ScreenEffect) -> ScreenInput {
    match effect {
        ScreenEffect::Hold { ms } => {
            let _ = JsFuture::from(sleep(ms)).await;
            ScreenInput::Held
        }
        ScreenEffect::ReadLayers => ScreenInput::Layers(store::read(Local, MIDDLEWARE_KEY).await),
        ScreenEffect::Done(_) => ScreenInput::Layers(Err("internal error: the gate's end".into())),
    }
}
