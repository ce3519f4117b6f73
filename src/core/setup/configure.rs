//! `configure({models?, default?, sites?, servers?, keys?, middleware?, prices?, collectors?})`
//! decided: what is stored where, in
//! which order, and what the operation answers. Invariant: a write follows only the checks of
//! its own setting and of those before it (a bad registry leaves the sites and servers given
//! with it stored, as it always did); keys go to session storage only, and never into the
//! answer.

use serde_json::{Map, Value};

use super::store::{key_slot, Area, MIDDLEWARE_KEY, REGISTRY_KEY, SERVERS_KEY, SITES_KEY};
use crate::core::mcp::source::McpServerConfig;
use crate::core::page::site::{self, SitePolicy};
use crate::core::provider::ModelRegistry;

/// One write of `configure`.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// The storage area.
    pub area: Area,
    /// The key in it.
    pub key: String,
    /// The value to store; `None`: remove what is stored.
    pub value: Option<Value>,
    /// What a failure to store it is reported as (`{failure}{the storage's words}`).
    pub failure: String,
}

/// What `configure` does: its writes, in order, then its end.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The writes to perform in order; a failed one ends `configure` with its error.
    pub writes: Vec<Write>,
    /// Once every write is done: the stored registry (without keys), or why `configure`
    /// stopped after those writes.
    pub end: Result<Value, String>,
}

impl Plan {
    fn stop(writes: Vec<Write>, message: String) -> Plan {
        Plan {
            writes,
            end: Err(message),
        }
    }
}

fn store(area: Area, key: &str, value: Option<Value>) -> Write {
    Write {
        area,
        key: key.to_owned(),
        value,
        failure: String::new(),
    }
}

/// What `configure` reads before it plans: the stored registry, servers and collectors.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stored {
    /// The registry as stored.
    pub registry: Option<Value>,
    /// The MCP servers as stored.
    pub servers: Option<Value>,
    /// The trace collectors as stored.
    pub collectors: Option<Value>,
}

/// [`plan_over`] with only the registry read (no stored servers or collectors).
pub fn plan(request: &Value, stored: Option<Value>) -> Plan {
    plan_over(
        request,
        Stored {
            registry: stored,
            ..Stored::default()
        },
    )
}

/// Plans `configure` for `request` over the settings as stored (the registry read as it is,
/// valid or not: the registry it leaves is checked whole; an unreadable one is replaced by
/// `models`). The settings it leaves must route every key only to its own settings
/// ([`crate::core::egress::check_routes`]): a collector naming a model's or a server's key is
/// refused before anything is written.
pub fn plan_over(request: &Value, stored: Stored) -> Plan {
    if let Err(e) = keys_routed(request, &stored) {
        return Plan::stop(Vec::new(), format!("configure: {e}"));
    }
    let stored = stored.registry;
    let mut writes = Vec::new();
    let mut registry = match super::store::registry_as_stored(stored) {
        Ok(registry) => registry,
        Err(_) if request.get("models").is_some() => ModelRegistry::default(),
        Err(e) => return Plan::stop(writes, format!("configure: {e}")),
    };
    if let Some(models) = request.get("models") {
        match serde_json::from_value(models.clone()) {
            Ok(models) => registry.models = models,
            Err(e) => return Plan::stop(writes, format!("configure: `models`: {e}")),
        }
    }
    if let Some(default) = request.get("default") {
        registry.default = default.as_str().map(str::to_owned);
    }
    if let Some(sites) = request.get("sites") {
        let sites: Vec<SitePolicy> = match serde_json::from_value(sites.clone()) {
            Ok(sites) => sites,
            Err(e) => return Plan::stop(writes, format!("configure: `sites`: {e}")),
        };
        if let Err(e) = site::validate(&sites) {
            return Plan::stop(writes, format!("configure: {e}"));
        }
        let value = serde_json::to_value(&sites).expect("site policies serialize");
        writes.push(store(Area::Local, SITES_KEY, Some(value)));
    }
    if let Some(servers) = request.get("servers") {
        let servers: Vec<McpServerConfig> = match serde_json::from_value(servers.clone()) {
            Ok(servers) => servers,
            Err(e) => return Plan::stop(writes, format!("configure: `servers`: {e}")),
        };
        if let Some(e) = servers.iter().find_map(|s| s.validate().err()) {
            return Plan::stop(writes, format!("configure: {e}"));
        }
        let value = serde_json::to_value(&servers).expect("servers serialize");
        writes.push(store(Area::Local, SERVERS_KEY, Some(value)));
    }
    if let Some(layers) = request.get("middleware") {
        // Checked as a run reads them; stored as given (`null` or `[]`: none).
        if let Err(e) = crate::core::run::declared(layers, "configure") {
            return Plan::stop(writes, e);
        }
        let value = (!layers.is_null()).then(|| layers.clone());
        writes.push(store(Area::Local, MIDDLEWARE_KEY, value));
    }
    // The price table and the trace collectors (`core::observe`): checked, stored as given.
    if let Some(prices) = request.get("prices") {
        if let Err(e) = crate::core::observe::cost::parse(prices) {
            return Plan::stop(writes, format!("configure: {e}"));
        }
        let value = (!prices.is_null()).then(|| prices.clone());
        writes.push(store(
            Area::Local,
            crate::core::observe::cost::PRICES_KEY,
            value,
        ));
    }
    if let Some(collectors) = request.get("collectors") {
        if let Err(e) = crate::core::observe::collector::parse(collectors) {
            return Plan::stop(writes, format!("configure: {e}"));
        }
        let value = (!collectors.is_null()).then(|| collectors.clone());
        writes.push(store(
            Area::Local,
            crate::core::observe::collector::COLLECTORS_KEY,
            value,
        ));
    }
    if let Err(e) = registry.validate() {
        return Plan::stop(writes, format!("configure: {e}"));
    }
    let stored = serde_json::to_value(&registry).expect("a registry serializes");
    writes.push(store(Area::Local, REGISTRY_KEY, Some(stored.clone())));
    if let Some(Value::Object(keys)) = request.get("keys") {
        writes.extend(key_writes(keys));
    }
    Plan {
        writes,
        end: Ok(stored),
    }
}

/// The key routes of the settings `configure` would leave (each setting as given, else as
/// stored; unreadable ones name no key), checked by the egress.
fn keys_routed(request: &Value, stored: &Stored) -> Result<(), String> {
    use crate::core::egress::check_routes;
    use crate::core::setup::routes;
    let pick = |field: &str, stored: &Option<Value>| {
        request.get(field).cloned().or_else(|| stored.clone())
    };
    let models: Vec<crate::core::provider::ModelConfig> = match request.get("models") {
        Some(models) => serde_json::from_value(models.clone()).unwrap_or_default(),
        None => super::store::registry_as_stored(stored.registry.clone())
            .map(|r| r.models)
            .unwrap_or_default(),
    };
    let servers: Vec<McpServerConfig> = pick("servers", &stored.servers)
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    let collectors =
        crate::core::observe::collector::stored(pick("collectors", &stored.collectors));
    check_routes(&routes(&models, &servers, &collectors))
}

/// The keys given: a non-empty string is stored, anything else removes the key.
fn key_writes(keys: &Map<String, Value>) -> impl Iterator<Item = Write> + '_ {
    keys.iter().map(|(name, key)| Write {
        area: Area::Session,
        key: key_slot(name),
        value: match key.as_str() {
            Some(key) if !key.is_empty() => Some(Value::String(key.to_owned())),
            _ => None,
        },
        failure: format!("configure: key `{name}`: "),
    })
}
