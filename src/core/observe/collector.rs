//! The trace collectors the person configures, and the OTLP/HTTP requests of a run's export.
//!
//! A collector is stored under [`COLLECTORS_KEY`] as `{name, endpoint, headers?, includeText?,
//! enabled?}`: `endpoint` is the whole OTLP/HTTP traces URL (https, or http on this machine:
//! Phoenix's `http://127.0.0.1:6006/v1/traces`, Langfuse's
//! `https://cloud.langfuse.com/api/public/otel/v1/traces`); `headers` maps a header's name to
//! the name of a key in session storage, whose value is sent as the header's value, to that
//! collector only; `includeText` adds the prompt, the model's text, the arguments and the
//! results to the spans (off by default). A run is exported once it ended, in the background:
//! one request per collector with all its spans, tried at most [`EXPORT_ATTEMPTS`] times,
//! each within [`EXPORT_TIMEOUT_MS`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::otlp::{export_request, AttrValue};
use super::trace::spans;
use crate::core::egress::{Holder, Routes};
use crate::core::url::check_base_url;

/// Where the collectors are stored (`chrome.storage.local`).
pub const COLLECTORS_KEY: &str = crate::core::storage::COLLECTORS;
/// How many times one export request is tried.
pub const EXPORT_ATTEMPTS: u32 = 3;
/// How long one attempt may take (ms) before it is abandoned.
pub const EXPORT_TIMEOUT_MS: u32 = crate::core::limits::EXPORT_TIMEOUT_MS;

/// A configured trace collector.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Collector {
    /// The name the person knows it by.
    pub name: String,
    /// The OTLP/HTTP traces URL.
    pub endpoint: String,
    /// Header name → the key (in session storage) whose value the header carries.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Whether spans carry the prompt, model text, arguments and results.
    #[serde(default)]
    pub include_text: bool,
    /// Whether runs are exported to it.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Reads the collectors as `configure` is given them: names unique, endpoints http(s)
/// (plain http only on loopback), header names valid.
pub fn parse(value: &Value) -> Result<Vec<Collector>, String> {
    if value.is_null() {
        return Ok(Vec::new());
    }
    let collectors: Vec<Collector> =
        serde_json::from_value(value.clone()).map_err(|e| format!("`collectors`: {e}"))?;
    for (i, c) in collectors.iter().enumerate() {
        if c.name.trim().is_empty() {
            return Err(format!("`collectors`: collector {} has no name", i + 1));
        }
        if collectors[..i].iter().any(|o| o.name == c.name) {
            return Err(format!("`collectors`: two are named `{}`", c.name));
        }
        check_base_url(&c.endpoint).map_err(|e| format!("`collectors`: `{}`: {e}", c.name))?;
        let bad = c.headers.keys().find(|h| {
            h.is_empty()
                || !h
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        if let Some(header) = bad {
            return Err(format!(
                "`collectors`: `{}`: `{header}` is not a header name",
                c.name
            ));
        }
    }
    Ok(collectors)
}

/// The stored collectors (unreadable: none, nothing is exported).
pub fn stored(value: Option<Value>) -> Vec<Collector> {
    value.and_then(|v| parse(&v).ok()).unwrap_or_default()
}

/// The key names the enabled collectors' headers need from session storage.
pub fn needed_keys(collectors: &[Collector]) -> Vec<String> {
    let mut keys: Vec<String> = (collectors.iter().filter(|c| c.enabled))
        .flat_map(|c| c.headers.values().cloned())
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// One export for the shell to send.
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    /// The collector's name (for the warning when it fails).
    pub collector: String,
    /// Where to `POST`.
    pub url: String,
    /// The headers: `content-type: application/x-protobuf`, then the collector's own.
    pub headers: Vec<(String, String)>,
    /// The `ExportTraceServiceRequest`.
    pub body: Vec<u8>,
}

/// The exports of a run (`log`: `runLog`'s answer) to each enabled collector; `keys` holds
/// the values of [`needed_keys`] found in session storage, `routes` every key named by the
/// settings ([`crate::core::setup::routes`]). A collector whose header key is missing, or
/// is not its own to send (a model or a server names it too), is left out, with the reason
/// in the errors.
pub fn exports(
    collectors: &[Collector],
    log: &Value,
    keys: &BTreeMap<String, String>,
    routes: &Routes,
    version: &str,
) -> (Vec<Export>, Vec<String>) {
    let (mut out, mut errors) = (Vec::new(), Vec::new());
    let resource = [
        (
            "service.name".to_owned(),
            AttrValue::Str("webmcp-host".into()),
        ),
        ("service.version".to_owned(), AttrValue::Str(version.into())),
    ];
    for collector in collectors.iter().filter(|c| c.enabled) {
        let mut headers = vec![(
            "content-type".to_owned(),
            "application/x-protobuf".to_owned(),
        )];
        let holder = Holder::Collector(collector.name.clone());
        let refused = collector.headers.iter().find_map(|(name, key)| {
            if let Err(why) = routes.allows(&holder, key, &collector.endpoint) {
                return Some(why);
            }
            match keys.get(key) {
                Some(value) => {
                    headers.push((name.to_ascii_lowercase(), value.clone()));
                    None
                }
                None => Some(format!(
                    "collector `{}`: no key `{key}` in this session",
                    collector.name
                )),
            }
        });
        if let Some(why) = refused {
            errors.push(format!("{why}; its traces were not sent"));
            continue;
        }
        let spans = spans(log, collector.include_text);
        if spans.is_empty() {
            continue;
        }
        out.push(Export {
            collector: collector.name.clone(),
            url: collector.endpoint.clone(),
            headers,
            body: export_request(&resource, ("webmcp-host", version), &spans),
        });
    }
    (out, errors)
}

/// After attempt `attempt` (1-based) answered `status` (`None`: no answer in time, or the
/// connection failed): the wait before the next attempt, or `None` to stop (done, refused
/// for good, or out of attempts).
pub fn retry_after(status: Option<u16>, attempt: u32) -> Option<u32> {
    let again = match status {
        Some(200..=299) => false,
        Some(408 | 429 | 500..=599) | None => true,
        Some(_) => false,
    };
    (again && attempt < EXPORT_ATTEMPTS).then(|| 500 << (attempt - 1))
}
