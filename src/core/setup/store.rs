//! Where the host keeps its settings in the browser's storage, and how a stored value is read.
//! Invariant: a value nobody stored reads as the empty setting; a value that does not parse, or
//! that `configure` would have refused (storage is read as if it came from outside: a
//! compromised renderer once could write it), is an error that names the setting, never a
//! panic.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::core::mcp::source::McpServerConfig;
use crate::core::page::site::SitePolicy;
use crate::core::provider::ModelRegistry;

/// Where the model registry lives (local storage).
pub const REGISTRY_KEY: &str = crate::core::storage::MODELS;
/// Where the MCP servers live (local storage).
pub const SERVERS_KEY: &str = crate::core::storage::SERVERS;
/// Where the per-site policies live (local storage, `configure({sites})`).
pub const SITES_KEY: &str = crate::core::storage::SITES;
/// Where the global middleware layers live (local storage, `configure({middleware})`).
pub const MIDDLEWARE_KEY: &str = crate::core::storage::MIDDLEWARE;
/// The prefix of a key's name in session storage (keys live only until the browser closes).
pub const KEY_PREFIX: &str = crate::core::storage::KEY_PREFIX;

pub use crate::core::storage::Area;

/// Where the key `reference` lives in session storage.
pub fn key_slot(reference: &str) -> String {
    format!("{KEY_PREFIX}{reference}")
}

fn parse<T: DeserializeOwned + Default>(stored: Option<Value>, what: &str) -> Result<T, String> {
    match stored {
        None | Some(Value::Null) => Ok(T::default()),
        Some(value) => serde_json::from_value(value).map_err(|e| format!("the stored {what}: {e}")),
    }
}

/// The stored model registry (`None`: nothing stored).
pub fn registry(stored: Option<Value>) -> Result<ModelRegistry, String> {
    let registry = registry_as_stored(stored)?;
    registry
        .validate()
        .map_err(|e| refused("model registry is", e))?;
    Ok(registry)
}

/// The stored model registry as it is, valid or not: what `configure` changes (and checks
/// whole before it stores it again).
pub fn registry_as_stored(stored: Option<Value>) -> Result<ModelRegistry, String> {
    parse(stored, "model registry is unreadable")
}

/// The stored MCP servers (`None`: nothing stored).
pub fn servers(stored: Option<Value>) -> Result<Vec<McpServerConfig>, String> {
    let servers: Vec<McpServerConfig> = parse(stored, "MCP servers are unreadable")?;
    if let Some(e) = servers.iter().find_map(|s| s.validate().err()) {
        return Err(refused("MCP servers are", e));
    }
    Ok(servers)
}

/// The stored site policies (`None`: nothing stored).
pub fn sites(stored: Option<Value>) -> Result<Vec<SitePolicy>, String> {
    let sites: Vec<SitePolicy> = parse(stored, "site policies are unreadable")?;
    crate::core::page::site::validate(&sites).map_err(|e| refused("site policies are", e))?;
    Ok(sites)
}

fn refused(what: &str, why: String) -> String {
    format!("the stored {what} not valid ({why}): set them again with `configure`")
}

/// The key `reference` as stored in session storage: a missing or empty one is an error that
/// says where to set it.
pub fn key(reference: &str, stored: Option<Value>) -> Result<Option<String>, String> {
    match stored {
        Some(Value::String(key)) if !key.is_empty() => Ok(Some(key)),
        _ => Err(format!("no API key `{reference}` in this browser session: set it in the popup (keys live only until the browser closes)")),
    }
}
