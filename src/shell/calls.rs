//! MCP tool calls outside runs (`callTool` with `server`, by the person; `callExposed`, by a
//! page), performed as the host's [`ServerCall`] decides them, and the MCP outputs of the
//! host's vocabulary: the server's tools listed on its kept connection, a page's exposed
//! tools, the call sent with the permit the host gave, within the limit it set, a session's
//! listening stream and a connection's close each in a task of its own. Each caller keeps its
//! own pool of connections ([`kept`]): the person's calls and a page's never share a session.

use serde_json::Value;

use super::io::random_id;
use super::{drive, expose, kept};
use crate::core::host::io::{Input, Mcp, McpCall, Pool};
use crate::core::host::mcp::{KeptCall, Listener};
use crate::core::host::server_call::ServerCall;

/// Performs the call until its answer; a call by hand's use ends then (its connection closed
/// once the host says it has been idle long enough).
pub(crate) async fn perform(mut call: ServerCall) -> Result<Value, String> {
    let answer = drive(|host, input, now| host.server_call(&mut call, input, now)).await;
    if let Some(idle) = call.take_idle() {
        kept::close_when_idle(Pool::ByHand, idle);
    }
    answer
}

/// Performs one MCP output.
pub(crate) async fn perform_mcp(output: Mcp) -> Input {
    match output {
        Mcp::Tools { pool, server } => Input::McpTools(
            kept::listed_now(pool, &server)
                .await
                .map(|(_, tools)| tools),
        ),
        Mcp::Exposed { origin } => Input::Exposed(expose::tools_for(&origin).await),
        Mcp::Listen { client } => {
            let mut listener = Listener::new(client);
            wasm_bindgen_futures::spawn_local(async move {
                drive(|host, input, now| host.mcp_listen(&mut listener, input, now)).await
            });
            Input::Done(Ok(()))
        }
        Mcp::Close { client } => {
            kept::close_later(client);
            Input::Done(Ok(()))
        }
        Mcp::Idle { pool, idle } => {
            kept::close_when_idle(pool, idle);
            Input::Done(Ok(()))
        }
        Mcp::Call {
            pool,
            server,
            permit,
            within_ms,
            forget_on_error,
        } => {
            let McpCall { tool, arguments } = permit.into_call();
            let call = (tool, arguments);
            let mut call =
                KeptCall::new(pool, server, call, random_id(), within_ms, forget_on_error);
            let step = |host: &crate::core::host::Host, input, now| {
                host.mcp_kept_call(&mut call, input, now)
            };
            let (result, secrets) = Box::pin(drive(step)).await;
            Input::McpCalled { result, secrets }
        }
    }
}
