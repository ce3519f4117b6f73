//! The host's settings in `chrome.storage`: read where `core::setup::store` says, parsed by
//! it; and the host's writes performed. Keys are read at the moment they are needed. A write
//! that finds its area full fails with words that name what fills it and how to clear it
//! (`core::storage::full_error`).

use serde_json::Value;

use super::convert::{describe, from_json, to_json};
use super::io::{storage_all, storage_get, storage_keys, storage_remove, storage_set};
use crate::core::host::io::{McpServerConfig, SitePolicy};
use crate::core::limits::STORAGE_QUOTA_BYTES;
use crate::core::provider::ModelRegistry;
use crate::core::setup::store::{
    self, key_slot, Area, MIDDLEWARE_KEY, REGISTRY_KEY, SERVERS_KEY, SITES_KEY,
};

/// What is stored under `key` in `area` (`None`: nothing).
pub(crate) async fn read(area: Area, key: &str) -> Result<Option<Value>, String> {
    let stored = storage_get(area.name(), key)
        .await
        .map_err(|e| describe(&e))?;
    if stored.is_null() || stored.is_undefined() {
        return Ok(None);
    }
    to_json(&stored).map(Some)
}

/// Stores `value` under `key` in `area` (`None`: removes what is stored).
pub(crate) async fn put(area: Area, key: &str, value: Option<&Value>) -> Result<(), String> {
    let done = match value {
        Some(value) => storage_set(area.name(), key, from_json(value)).await,
        None => storage_remove(area.name(), key).await,
    };
    // Written or not, what the host kept of the key may be stale now.
    changed(area.name(), &[key]);
    match done {
        Ok(_) => Ok(()),
        Err(e) => Err(failed(area, key, &describe(&e)).await),
    }
}

/// A write of `key` to `area` failed with `error`: when the area is full, what fills it and
/// how to clear it, else the error as it is.
pub(crate) async fn failed(area: Area, key: &str, error: &str) -> String {
    if !crate::core::storage::is_full(error) {
        return error.to_owned();
    }
    match storage_all(area.name()).await.map(|all| to_json(&all)) {
        Ok(Ok(items)) => {
            crate::core::storage::full_error(area, key, error, &items, STORAGE_QUOTA_BYTES)
        }
        _ => error.to_owned(),
    }
}

/// Everything `area` holds, as one object.
pub(crate) async fn all(area: Area) -> Result<Value, String> {
    to_json(&storage_all(area.name()).await.map_err(|e| describe(&e))?)
}

/// Every key `area` holds.
pub(crate) async fn keys(area: Area) -> Result<Vec<String>, String> {
    let keys = storage_keys(area.name()).await.map_err(|e| describe(&e))?;
    match to_json(&keys)? {
        Value::Array(keys) => Ok(keys
            .into_iter()
            .filter_map(|k| k.as_str().map(str::to_owned))
            .collect()),
        _ => Err("the area's keys are not a list".into()),
    }
}

/// The worker's `chrome.storage.onChanged` handler: keys of `area` changed, by this worker or
/// another of the extension's contexts; what the host kept of them is forgotten.
#[wasm_bindgen::prelude::wasm_bindgen(js_name = storageChanged)]
pub fn storage_changed(area: String, keys: Vec<String>) {
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    changed(&area, &keys);
}

/// Keys of `area` ("local", "session") changed: what the host kept of them is forgotten.
pub(crate) fn changed(area: &str, keys: &[&str]) {
    if area == Area::Local.name() && keys.contains(&MIDDLEWARE_KEY) {
        super::state::host(|host| host.layers.borrow_mut().forget());
    }
}

/// The model registry.
pub(crate) async fn load_registry() -> Result<ModelRegistry, String> {
    store::registry(read(Area::Local, REGISTRY_KEY).await?)
}

/// The MCP servers.
pub(crate) async fn load_servers() -> Result<Vec<McpServerConfig>, String> {
    store::servers(read(Area::Local, SERVERS_KEY).await?)
}

/// Where every key named by the settings goes ([`crate::core::setup::routes`]): the
/// registry's models, the servers and `collectors` (unreadable settings name no key).
pub(crate) async fn key_routes(
    collectors: &[crate::core::observe::collector::Collector],
) -> crate::core::egress::Routes {
    let models = load_registry().await.map(|r| r.models).unwrap_or_default();
    let servers = load_servers().await.unwrap_or_default();
    crate::core::setup::routes(&models, &servers, collectors)
}

/// The per-site policies.
pub(crate) async fn load_sites() -> Result<Vec<SitePolicy>, String> {
    store::sites(read(Area::Local, SITES_KEY).await?)
}

/// The key `reference` from session storage.
pub(crate) async fn read_key(reference: &str) -> Result<Option<String>, String> {
    store::key(reference, read(Area::Session, &key_slot(reference)).await?)
}
