//! The host's settings in `chrome.storage`: read where `core::setup::store` says, parsed by
//! it; and `configure`'s writes performed. Keys are read at the moment they are needed.

use serde_json::Value;

use super::convert::{describe, from_json, to_json};
use super::io::{storage_get, storage_remove, storage_set};
use crate::core::mcp::source::McpServerConfig;
use crate::core::page::site::SitePolicy;
use crate::core::provider::ModelRegistry;
use crate::core::setup::configure::Write;
use crate::core::setup::store::{self, key_slot, Area, REGISTRY_KEY, SERVERS_KEY, SITES_KEY};

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
    match value {
        Some(value) => storage_set(area.name(), key, from_json(value)).await,
        None => storage_remove(area.name(), key).await,
    }
    .map(|_| ())
    .map_err(|e| describe(&e))
}

/// Stores (or removes) one value of `configure`.
pub(crate) async fn write(write: &Write) -> Result<(), String> {
    put(write.area, &write.key, write.value.as_ref())
        .await
        .map_err(|e| format!("{}{e}", write.failure))
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
