//! What a run and the host's settings are set up from, decided here and performed by the
//! worker: where each setting is stored and how a stored value is read ([`store`]),
//! `configure`'s writes ([`configure`]), a run's start from its tool sources ([`start`]), and
//! the answers of the calls the worker carries out with what was set up ([`call`]).
//! Invariant: nothing here performs I/O; the worker reads and writes what these modules name,
//! and hands back what it got. This neighbourhood uses runs, pages, providers, MCP and the
//! operations' requests; none of them uses it.

/// The answers of the worker's own calls.
pub mod call;
/// `configure`'s writes.
pub mod configure;
/// A run's start from its tool sources.
pub mod start;
/// Where each setting is stored, and how a stored value is read.
pub mod store;

/// The routes of the keys that the models, servers and collectors name ([`crate::core::egress`]).
pub fn routes(
    models: &[crate::core::provider::ModelConfig],
    servers: &[crate::core::mcp::source::McpServerConfig],
    collectors: &[crate::core::observe::collector::Collector],
) -> crate::core::egress::Routes {
    use crate::core::egress::{Holder, Route, Routes};
    let origin = |url: &str| crate::core::url::http_origin(url).unwrap_or_default();
    let models = models.iter().filter_map(|m| {
        Some(Route {
            key: m.key_ref.clone()?,
            holder: Holder::Model(m.name.clone()),
            origin: origin(&m.base_url),
        })
    });
    let servers = servers.iter().filter_map(|s| {
        Some(Route {
            key: s.key_ref.clone()?,
            holder: Holder::Server(s.name.clone()),
            origin: origin(&s.url),
        })
    });
    let collectors = collectors.iter().flat_map(|c| {
        c.headers.values().map(|key| Route {
            key: key.clone(),
            holder: Holder::Collector(c.name.clone()),
            origin: origin(&c.endpoint),
        })
    });
    Routes(models.chain(servers).chain(collectors).collect())
}

#[cfg(test)]
mod tests;
