//! The answers of the settings view's operations, assembled: `settings` (models, servers,
//! masked keys, the servers' last checks, presets), `testModel` (which model, and the report
//! of its check, redacted) and `checkServer` (which server, its state as kept per server).
//! The shell reads storage, fetches, opens the server and keeps the state.
//!
//! Invariant: no answer holds a whole key: keys appear masked ([`mask_key`]) and a report's
//! message is redacted of the key its check used.

use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::settings::{connection_report, context7_server, model_presets};
use crate::core::egress::mask_key;
use crate::core::mcp::source::{run_tools, McpServerConfig};
use crate::core::mcp::tools::McpTool;
use crate::core::provider::{redact, ModelConfig, ModelRegistry};

/// Where the person's keys are stored (`chrome.storage.session`), before their reference.
pub const KEY_PREFIX: &str = crate::core::storage::KEY_PREFIX;
/// Where the servers' last checks are kept (`chrome.storage.session`).
pub const SERVER_STATES_KEY: &str = crate::core::storage::SERVER_STATES;
/// How long a connection check may take (ms), unless the server sets its own timeout.
pub const CHECK_MS: u32 = crate::core::limits::SERVER_CHECK_MS;
/// How many of a checked server's tools its state names.
const MAX_NAMED_TOOLS: usize = crate::core::limits::MAX_CHECK_NAMED_TOOLS;
/// How many characters of a named tool's description its state keeps.
const MAX_DESCRIPTION_CHARS: usize = crate::core::limits::MAX_CHECK_DESCRIPTION_CHARS;

/// `settings()` → `{models, default, servers, keys: [{ref, masked, goesTo}], serverStates, presets,
/// context7, context7WithKey, extensionOrigin}`, from the registry, the servers and the whole
/// session storage (`session`; its keys appear only masked, each with where it is sent:
/// `routes`, as the egress routes it).
pub fn settings_view(
    registry: &ModelRegistry,
    servers: &[McpServerConfig],
    session: &Value,
    routes: &crate::core::egress::Routes,
    extension_origin: &str,
) -> Value {
    let mut keys: Vec<Value> = session
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let reference = name.strip_prefix(KEY_PREFIX)?;
            Some(json!({
                "ref": reference,
                "masked": mask_key(value.as_str()?),
                "goesTo": routes.goes_to(reference),
            }))
        })
        .collect();
    keys.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
    let states = session.get(SERVER_STATES_KEY).cloned();
    json!({
        "models": registry.models,
        "default": registry.default,
        "servers": servers,
        "keys": keys,
        "serverStates": states.unwrap_or_else(|| json!({})),
        "presets": model_presets(),
        "context7": context7_server(false),
        "context7WithKey": context7_server(true),
        "extensionOrigin": extension_origin,
    })
}

/// What a check is asked about: given whole, or named (looked up by the shell).
#[derive(Debug, Clone, PartialEq)]
pub enum Subject<T> {
    /// The request's `model` / `server`.
    Given(T),
    /// The request's `name`.
    Named(String),
}

/// Reads `{name} | {<field>}` for the operation `op` (`field` wins when both are given).
pub fn subject<T: DeserializeOwned>(
    request: &Value,
    op: &str,
    field: &str,
) -> Result<Subject<T>, String> {
    match (request.get(field), request.get("name")) {
        (Some(given), _) => serde_json::from_value(given.clone())
            .map(Subject::Given)
            .map_err(|e| format!("{op}: `{field}`: {e}")),
        (None, Some(Value::String(name))) => Ok(Subject::Named(name.clone())),
        _ => Err(format!("{op}: give `name` or `{field}`")),
    }
}

/// The report of a replay model: nothing to check.
pub fn replay_report() -> Value {
    json!({"ok": true, "message": "A replay model needs no connection."})
}

/// The report of Chrome's built-in model, from `LanguageModel.availability()`.
pub fn chrome_model_report(availability: &str) -> Value {
    json!({
        "ok": availability == "available",
        "message": format!("Chrome's built-in model: LanguageModel.availability() is `{availability}`."),
    })
}

/// How a model's connection check ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Fetched {
    /// The endpoint answered with this status and body.
    Answer(u16, String),
    /// No answer within [`CHECK_MS`].
    Timeout,
    /// The request failed before an answer (network, CORS), for this reason.
    Failed(String),
}

/// `testModel`'s answer `{ok, message, models?}` for an endpoint's check, its message
/// redacted of `key`.
pub fn model_report(
    model: &ModelConfig,
    fetched: &Fetched,
    key: Option<&str>,
    extension_origin: &str,
) -> Value {
    let report = match fetched {
        Fetched::Answer(status, body) => {
            connection_report(model, *status, body, None, extension_origin)
        }
        Fetched::Timeout => connection_report(
            model,
            0,
            "",
            Some("no answer within 15 s"),
            extension_origin,
        ),
        Fetched::Failed(why) => connection_report(model, 0, "", Some(why), extension_origin),
    };
    let mut value = serde_json::to_value(&report).expect("a report serializes");
    value["message"] = json!(redact(&report.message, key));
    value
}

/// A server that answered: `{ok: true, tools, names, protocol}`, its tools as a run names
/// them and the MCP revision it speaks.
pub fn listed_server(server: &McpServerConfig, listed: &[McpTool], protocol: &str) -> Value {
    let (tools, map) = run_tools(server, listed);
    let names: Vec<Value> = tools
        .iter()
        .zip(&map)
        .take(MAX_NAMED_TOOLS)
        .map(|(tool, entry)| {
            let description: String = tool
                .spec
                .description
                .chars()
                .take(MAX_DESCRIPTION_CHARS)
                .collect();
            json!({"name": tool.spec.name, "description": description, "confirm": entry.needs_confirmation})
        })
        .collect();
    json!({"ok": true, "tools": tools.len(), "names": names, "protocol": protocol})
}

/// `checkServer`'s answer `{ok, tools, names, protocol?, error?, checkedMs}`: what the check found
/// ([`listed_server`]), `None` when it ran out of time, or why it failed.
pub fn server_state(checked: Result<Option<Value>, String>, now_ms: f64) -> Value {
    let failed = |error: &str| json!({"ok": false, "tools": 0, "names": [], "error": error});
    let mut state = match checked {
        Ok(Some(state)) => state,
        Ok(None) => failed("no answer in time"),
        Err(error) => failed(&error),
    };
    state["checkedMs"] = json!(now_ms);
    state
}

/// The kept server states (`stored`: as read) with `server`'s new state.
pub fn with_state(stored: Option<Value>, server: &str, state: &Value) -> Value {
    let mut states = stored.filter(Value::is_object).unwrap_or_else(|| json!({}));
    states[server] = state.clone();
    states
}

#[cfg(test)]
mod tests;
