//! MCP tool calls outside runs (`callTool` with `server`, by the person; `callExposed`, by a
//! page), performed as the host's [`ServerCall`] decides them, and the MCP outputs of the
//! host's vocabulary: the server's tools listed on its kept connection, a page's exposed tools,
//! the call sent with the permit the host gave, within the limit it set. Each caller keeps its
//! own pool of connections ([`kept`]): the person's calls and a page's never share a session.

use serde_json::Value;

use super::{expose, kept, mcp};
use crate::core::host::io::{Input, Mcp, Pool};
use crate::core::host::mcp::Listener;
use crate::core::host::server_call::ServerCall;
use crate::core::mcp::CallResult;

/// Performs the call until its answer; a call by hand's use ends then (its connection closed
/// once the host says it has been idle long enough).
pub(crate) async fn perform(mut call: ServerCall) -> Result<Value, String> {
    let answer = super::drive(|host, input, now| host.server_call(&mut call, input, now)).await;
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
                super::drive(|host, input, now| host.mcp_listen(&mut listener, input, now)).await
            });
            Input::Done(Ok(()))
        }
        Mcp::Call {
            pool,
            server,
            permit,
            within_ms,
            forget_on_error,
        } => {
            let Some(open) = kept::get(pool, &server) else {
                return Input::McpCalled {
                    result: None,
                    secrets: Vec::new(),
                };
            };
            let secrets_now = || super::state::host(|host| host.mcp_secrets(open.client.id));
            let before = secrets_now();
            let result = mcp::call_within(&open.client, *permit, within_ms).await;
            // What the session sends now: a token refreshed during the call too (what it sent
            // at the start, when it was closed meanwhile).
            let secrets = Some(secrets_now())
                .filter(|s| !s.is_empty())
                .unwrap_or(before);
            if forget_on_error
                && matches!(result, Some(CallResult::Error(_)))
                && kept::is_kept(pool, &server, &open)
            {
                kept::forget(pool, &server);
            }
            Input::McpCalled { result, secrets }
        }
    }
}
