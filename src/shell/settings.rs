//! The person's settings in the worker: what the popup's settings view shows (`settings`:
//! models, servers, masked keys, presets), and the checks it offers (`testModel`: a model's
//! endpoint and key; `checkServer`: an MCP server's connection and tools, kept per server).
//!
//! Invariant: a key is never returned, only its mask; a check's message is redacted of the
//! key it used.

use std::cell::RefCell;
use std::future::Future;
use std::rc::Rc;

use js_sys::{Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert;
use super::io::{self, now_ms, start_fetch, storage_get, storage_set};
use super::pages::{extension_origin, storage_all};
use super::store::{load_registry, load_servers, read_key};
use super::{mcp, timer};
use crate::core::mcp::source::{run_tools as mcp_run_tools, McpServerConfig};
use crate::core::ops::settings::{
    connection_check, connection_report, context7_server, mask_key, model_presets,
};
use crate::core::provider::{redact, ModelConfig, Provider};

const AREA: &str = "session";
const STATES_KEY: &str = "webmcpHost.ui.serverStates";
const KEY_PREFIX: &str = "webmcpHost.key.";
/// How long a connection check may take.
const CHECK_MS: u32 = 15_000;

/// `settings()` → `{models, default, servers, keys: [{ref, masked}], serverStates, presets,
/// context7, context7WithKey, extensionOrigin}`. Keys appear only masked.
pub(crate) async fn settings() -> Result<Value, String> {
    let registry = load_registry().await?;
    let servers = load_servers().await?;
    let stored = storage_all(AREA)
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .unwrap_or(Value::Null);
    let mut keys: Vec<Value> = stored
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let reference = name.strip_prefix(KEY_PREFIX)?;
            let key = value.as_str()?;
            Some(json!({"ref": reference, "masked": mask_key(key)}))
        })
        .collect();
    keys.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
    let states = stored.get(STATES_KEY).cloned().unwrap_or_else(|| json!({}));
    Ok(json!({
        "models": registry.models,
        "default": registry.default,
        "servers": servers,
        "keys": keys,
        "serverStates": states,
        "presets": model_presets(),
        "context7": context7_server(false),
        "context7WithKey": context7_server(true),
        "extensionOrigin": extension_origin(),
    }))
}

/// `testModel({name} | {model})` → `{ok, message, models?}`: asks the model's endpoint for
/// its model list with the model's key (or Chrome for its built-in model).
pub(crate) async fn test_model(request: &Value) -> Result<Value, String> {
    let model: ModelConfig = match (request.get("model"), request.get("name")) {
        (Some(model), _) => {
            serde_json::from_value(model.clone()).map_err(|e| format!("testModel: `model`: {e}"))?
        }
        (None, Some(Value::String(name))) => load_registry()
            .await?
            .resolve(Some(name))
            .map_err(|e| format!("testModel: {e}"))?
            .clone(),
        _ => return Err("testModel: give `name` or `model`".into()),
    };
    let report = match model.provider {
        Provider::Replay => json!({"ok": true, "message": "A replay model needs no connection."}),
        Provider::Chrome => {
            let availability = io::chrome_model_availability()
                .await
                .as_string()
                .unwrap_or_default();
            json!({
                "ok": availability == "available",
                "message": format!("Chrome's built-in model: LanguageModel.availability() is `{availability}`."),
            })
        }
        _ => {
            let key = match &model.key_ref {
                Some(reference) => match read_key(reference).await {
                    Ok(key) => key,
                    Err(message) => return Ok(json!({"ok": false, "message": message})),
                },
                None => None,
            };
            let http = connection_check(&model, key.as_deref()).expect("an HTTP provider");
            let headers = convert::headers(&http.headers);
            let fetching = within(CHECK_MS, async move {
                let fetched = async {
                    let handle = start_fetch(&http.url, &http.method, headers.into(), "").await?;
                    let status = Reflect::get(&handle, &"status".into())?;
                    let text = JsFuture::from(Promise::from(io::call_method(&handle, "text")?));
                    Ok::<_, JsValue>((status.as_f64().unwrap_or(0.0) as u16, text.await?))
                };
                let (status, text) = fetched.await.map_err(|e| convert::describe(&e))?;
                Ok((status, text.as_string().unwrap_or_default()))
            });
            let origin = extension_origin();
            let report = match fetching.await {
                Ok(Some((status, text))) => connection_report(&model, status, &text, None, &origin),
                Ok(None) => {
                    connection_report(&model, 0, "", Some("no answer within 15 s"), &origin)
                }
                Err(error) => connection_report(&model, 0, "", Some(&error), &origin),
            };
            let mut value = serde_json::to_value(&report).unwrap_or(Value::Null);
            value["message"] = json!(redact(&report.message, key.as_deref()));
            value
        }
    };
    Ok(report)
}

/// `checkServer({name} | {server})` → `{ok, tools, names, error?, checkedMs}`: connects to
/// the MCP server, lists its tools (as the run will name them) and closes. The state is kept
/// per server for the popup.
pub(crate) async fn check_server(request: &Value) -> Result<Value, String> {
    let server: McpServerConfig = match (request.get("server"), request.get("name")) {
        (Some(server), _) => serde_json::from_value(server.clone())
            .map_err(|e| format!("checkServer: `server`: {e}"))?,
        (None, Some(Value::String(name))) => load_servers()
            .await?
            .into_iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| format!("checkServer: no server `{name}`"))?,
        _ => return Err("checkServer: give `name` or `server`".into()),
    };
    server.validate()?;
    let key = match &server.key_ref {
        Some(reference) => read_key(reference).await,
        None => Ok(None),
    };
    let mut state = match key {
        Err(error) => {
            json!({"ok": false, "tools": 0, "names": [], "error": error})
        }
        Ok(key) => {
            let config = server.clone();
            let opening = within(server.timeout_ms.unwrap_or(CHECK_MS), async move {
                let within = config.timeout_ms.unwrap_or(15_000);
                let (client, listed) = mcp::open(config.clone(), key, within).await?;
                mcp::close(&client).await;
                let (tools, map) = mcp_run_tools(&config, &listed);
                let names: Vec<Value> = tools
                    .iter()
                    .zip(&map)
                    .take(200)
                    .map(|(tool, entry)| {
                        let description: String =
                            tool.spec.description.chars().take(300).collect();
                        json!({"name": tool.spec.name, "description": description, "confirm": entry.needs_confirmation})
                    })
                    .collect();
                Ok(json!({"ok": true, "tools": tools.len(), "names": names}))
            });
            match opening.await {
                Ok(Some(state)) => state,
                Ok(None) => {
                    json!({"ok": false, "tools": 0, "names": [], "error": "no answer in time"})
                }
                Err(error) => json!({"ok": false, "tools": 0, "names": [], "error": error}),
            }
        }
    };
    state["checkedMs"] = json!(now_ms());
    let mut states = storage_get(AREA, STATES_KEY)
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    states[&server.name] = state.clone();
    let _ = storage_set(AREA, STATES_KEY, convert::from_json(&states)).await;
    Ok(state)
}

/// Runs `work` for at most `ms` milliseconds: its value, `None` when time ran out, or its
/// error.
async fn within<T: 'static>(
    ms: u32,
    work: impl Future<Output = Result<T, String>> + 'static,
) -> Result<Option<T>, String> {
    let done: Rc<RefCell<Option<T>>> = Rc::default();
    let sink = done.clone();
    let promise = future_to_promise(async move {
        *sink.borrow_mut() = Some(work.await.map_err(|e| JsValue::from_str(&e))?);
        Ok(JsValue::TRUE)
    });
    Ok(timer::within(promise, ms)
        .await?
        .and_then(|_| done.borrow_mut().take()))
}
