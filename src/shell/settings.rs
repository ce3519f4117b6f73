//! The person's settings checks in the worker, performed (the settings view and `configure`
//! are the door's machines): the reads, the fetch and the MCP connection behind `testModel`
//! and `checkServer`, whose answers the core assembles (`core::ops::checks`); a server's last
//! check is kept per server.
//!
//! Invariant: a key is never returned, only its mask; a check's message is redacted of the
//! key it used (both by the core).

use serde_json::Value;

use super::io::{self, fetch_text, now_ms};
use super::pages::extension_origin;
use super::store::{load_registry, load_servers, put, read, read_key};
use super::{mcp, timer};
use crate::core::limits::MAX_ANSWER_BYTES;
use crate::core::mcp::source::McpServerConfig;
use crate::core::ops::checks::{
    chrome_model_report, listed_server, model_report, replay_report, server_state, subject,
    with_state, Fetched, Subject, CHECK_MS, SERVER_STATES_KEY,
};
use crate::core::ops::settings::connection_check;
use crate::core::ops::OpName;
use crate::core::provider::{ModelConfig, Provider};
use crate::core::setup::store::Area::Session;

/// `testModel({name} | {model})` → `{ok, message, models?}`: asks the model's endpoint for
/// its model list with the model's key (or Chrome for its built-in model).
pub(crate) async fn test_model(request: &Value) -> Result<Value, String> {
    let model: ModelConfig = match subject(request, OpName::TestModel.as_str(), "model")? {
        Subject::Given(model) => model,
        Subject::Named(name) => load_registry()
            .await?
            .resolve(Some(&name))
            .map_err(|e| format!("testModel: {e}"))?
            .clone(),
    };
    let key = match (&model.provider, &model.key_ref) {
        (Provider::Replay, _) => return Ok(replay_report()),
        (Provider::Chrome, _) => {
            let availability = io::chrome_model_availability().await.as_string();
            return Ok(chrome_model_report(&availability.unwrap_or_default()));
        }
        (_, Some(reference)) => match read_key(reference).await {
            Ok(key) => key,
            Err(message) => return Ok(serde_json::json!({"ok": false, "message": message})),
        },
        (_, None) => None,
    };
    let http = connection_check(&model, key.as_deref()).expect("an HTTP provider");
    let fetched = match fetch_text(http, CHECK_MS, MAX_ANSWER_BYTES).await {
        Ok(Some((status, text))) => Fetched::Answer(status, text),
        Ok(None) => Fetched::Timeout,
        Err(error) => Fetched::Failed(error),
    };
    Ok(model_report(
        &model,
        &fetched,
        key.as_deref(),
        &extension_origin(),
    ))
}

/// `checkServer({name} | {server})` → `{ok, tools, names, protocol?, error?, checkedMs}`:
/// connects to the MCP server, lists its tools (as the run will name them), names the MCP
/// revision it speaks and closes. The state is kept
/// per server for the popup.
pub(crate) async fn check_server(request: &Value) -> Result<Value, String> {
    let server: McpServerConfig = match subject(request, OpName::CheckServer.as_str(), "server")? {
        Subject::Given(server) => server,
        Subject::Named(name) => load_servers()
            .await?
            .into_iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("checkServer: no server `{name}`"))?,
    };
    server.validate()?;
    let key = match &server.key_ref {
        Some(reference) => read_key(reference).await,
        None => Ok(None),
    };
    let checked = match key {
        Err(error) => Err(error),
        Ok(key) => {
            let config = server.clone();
            timer::limit(server.timeout_ms.unwrap_or(CHECK_MS), async move {
                let within = config.timeout_ms.unwrap_or(CHECK_MS);
                let (client, listed) = mcp::open(config.clone(), key, within).await?;
                let protocol = mcp::protocol(&client);
                mcp::close(&client).await;
                Ok(listed_server(&config, &listed, &protocol))
            })
            .await
        }
    };
    let state = server_state(checked, now_ms());
    let states = read(Session, SERVER_STATES_KEY).await.ok().flatten();
    let states = with_state(states, &server.name, &state);
    let _ = put(Session, SERVER_STATES_KEY, Some(&states)).await;
    Ok(state)
}
