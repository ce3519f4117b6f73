//! The egress: what leaves the worker passes here. Two rules live in this module and nowhere
//! else:
//!
//! - **Redaction.** [`redact`] hides every secret in play (model and server keys, OAuth
//!   tokens and client secrets, collector header keys), whole and in part, from a text;
//!   [`redact_value`] from every string and property name of a JSON value (a tool listing, a
//!   result, a record). Every other redaction of the project calls these two.
//! - **Routing.** A key is sent only to the endpoint whose settings name it: [`Routes`] says
//!   (built from the settings by [`crate::core::setup::routes`]), for every key name, which
//!   model, server or collector names it and at which origin;
//!   [`check_routes`] refuses a key shared between a collector and anything else (a pasted
//!   collector must not be handed the model's key), and [`Routes::allows`] is asked before a
//!   key is put in a request.
//!
//! Invariant: a secret given to [`redact`] (or any 12-byte run of a longer one) never passes
//! it; a key leaves only towards an origin its own settings name.

use std::collections::HashSet;

use serde_json::{Map, Value};

/// What a secret becomes once redacted.
pub const REDACTED: &str = "[redacted]";

/// The length of the runs of a long secret that are redacted on their own (servers echo keys
/// partly: `sk-abc…xyz`).
const FRAGMENT: usize = 12;

/// A key as the person sees it: `sk-…4680`, or dots alone for a short key (what the Keys
/// view and a bug report show instead of a key).
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 12 {
        return "•".repeat(chars.len().clamp(4, 8));
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// `value` with every secret redacted ([`redact`]) from each of its strings and property
/// names: its shape stays (a listing redacted is still a listing).
pub fn redact_value<S: AsRef<str>>(value: &Value, secrets: &[S]) -> Value {
    if !secrets.iter().any(|s| s.as_ref().len() >= 4) {
        return value.clone();
    }
    walk(value, &|text| redact(text, secrets))
}

fn walk(value: &Value, redact: &dyn Fn(&str) -> String) -> Value {
    match value {
        Value::String(text) => Value::String(redact(text)),
        Value::Array(items) => Value::Array(items.iter().map(|v| walk(v, redact)).collect()),
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (redact(k), walk(v, redact)))
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// The secrets a request header's value carries: the value, and the credential after an
/// `Authorization` scheme word (`Bearer abcd`: `abcd` too, so a short key echoed alone is
/// hidden).
pub fn header_secrets(value: &str) -> Vec<String> {
    let mut out = vec![value.to_owned()];
    if let Some((scheme, credential)) = value.split_once(' ') {
        if matches!(
            scheme.to_ascii_lowercase().as_str(),
            "bearer" | "basic" | "token"
        ) {
            out.push(credential.trim().to_owned());
        }
    }
    out
}

/// `text` with every secret replaced by [`REDACTED`]: a secret of 4 to 12 bytes where it
/// occurs whole, a longer one wherever any 12-byte run of it occurs (so a secret cut, or
/// echoed in part, is hidden too). Shorter secrets are ignored. One pass over `text` per
/// distinct run length, however many secrets there are.
pub fn redact<S: AsRef<str>>(text: &str, secrets: &[S]) -> String {
    let mut runs: Vec<(usize, HashSet<&[u8]>)> = Vec::new();
    for secret in secrets.iter().map(AsRef::as_ref).filter(|s| s.len() >= 4) {
        for run in fragments(secret) {
            match runs.iter_mut().find(|(width, _)| *width == run.len()) {
                Some((_, set)) => {
                    set.insert(run.as_bytes());
                }
                None => runs.push((run.len(), HashSet::from([run.as_bytes()]))),
            }
        }
    }
    if runs.is_empty() {
        return text.to_owned();
    }
    let bytes = text.as_bytes();
    let mut hidden: Vec<(usize, usize)> = Vec::new();
    for (width, set) in &runs {
        for start in 0..bytes.len().saturating_sub(width - 1) {
            let end = start + width;
            if text.is_char_boundary(start)
                && text.is_char_boundary(end)
                && set.contains(&bytes[start..end])
            {
                hidden.push((start, end));
            }
        }
    }
    if hidden.is_empty() {
        return text.to_owned();
    }
    hidden.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut open: Option<(usize, usize)> = None;
    for (start, end) in hidden {
        match &mut open {
            Some((_, until)) if start <= *until => *until = (*until).max(end),
            _ => {
                if let Some((from, until)) = open.take() {
                    out.push_str(&text[copied..from]);
                    out.push_str(REDACTED);
                    copied = until;
                }
                open = Some((start, end));
            }
        }
    }
    if let Some((from, until)) = open {
        out.push_str(&text[copied..from]);
        out.push_str(REDACTED);
        copied = until;
    }
    out.push_str(&text[copied..]);
    out
}

/// The parts of a secret that are redacted wherever they occur: the secret itself when it is
/// short, else its runs of 12 bytes (stretched to the next character's end), the last one
/// ending with the secret.
fn fragments(secret: &str) -> Vec<&str> {
    if secret.len() <= FRAGMENT {
        return vec![secret];
    }
    let end_from = |at: usize| (at..=secret.len()).find(|&e| secret.is_char_boundary(e));
    let mut out: Vec<&str> = secret
        .char_indices()
        .map(|(start, _)| start)
        .filter(|start| start + FRAGMENT <= secret.len())
        .filter_map(|start| Some(&secret[start..end_from(start + FRAGMENT)?]))
        .collect();
    let last = (0..=secret.len() - FRAGMENT)
        .rev()
        .find(|&s| secret.is_char_boundary(s))
        .unwrap_or(0);
    out.push(&secret[last..]);
    out
}

/// Who names a key in their settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Holder {
    /// A model of the registry.
    Model(String),
    /// An MCP server.
    Server(String),
    /// A trace collector (one of its headers).
    Collector(String),
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Holder::Model(name) => write!(f, "model `{name}`"),
            Holder::Server(name) => write!(f, "server `{name}`"),
            Holder::Collector(name) => write!(f, "collector `{name}`"),
        }
    }
}

/// One key named by one setting, and the origin it is sent to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The key's name in session storage.
    pub key: String,
    /// Who names it.
    pub holder: Holder,
    /// Where it goes: the origin of the holder's endpoint (empty when it has none).
    pub origin: String,
}

/// Every key named by a setting, with where it goes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Routes(pub Vec<Route>);

/// Refuses settings that would send a key where it does not belong: a key that a collector
/// names may be named by that collector only (a collector gets its own key names), and no
/// collector may name a key a model or a server names.
pub fn check_routes(routes: &Routes) -> Result<(), String> {
    for route in &routes.0 {
        let Holder::Collector(_) = route.holder else {
            continue;
        };
        if let Some(other) = routes
            .0
            .iter()
            .find(|o| o.key == route.key && o.holder != route.holder)
        {
            return Err(format!(
                "{} names the key `{}`, which {} sends to {}: a collector gets its own key (save one under another name, such as `{}`)",
                route.holder,
                route.key,
                other.holder,
                if other.origin.is_empty() { "its endpoint" } else { &other.origin },
                collector_key_name(&route.holder, &route.key),
            ));
        }
    }
    Ok(())
}

fn collector_key_name(holder: &Holder, key: &str) -> String {
    match holder {
        Holder::Collector(name) => format!("collector.{name}"),
        _ => key.to_owned(),
    }
}

impl Routes {
    /// Whether `holder` may send the key `key` to `url`: its settings name that key, no
    /// collector shares it with another holder, and `url` is at the origin they name.
    pub fn allows(&self, holder: &Holder, key: &str, url: &str) -> Result<(), String> {
        let origin = crate::core::url::http_origin(url).unwrap_or_default();
        let own = self
            .0
            .iter()
            .any(|r| &r.holder == holder && r.key == key && r.origin == origin);
        if !own {
            return Err(format!(
                "{holder} does not name the key `{key}` for {origin}: it is not sent there"
            ));
        }
        check_routes(&Routes(
            self.0.iter().filter(|r| r.key == key).cloned().collect(),
        ))
    }

    /// Where the key `key` goes: `["model `gpt` → https://api.openai.com", …]`, for the Keys
    /// view (empty: no setting names it, it is sent nowhere). A collector that names a key
    /// another setting names is listed as not sent to.
    pub fn goes_to(&self, key: &str) -> Vec<String> {
        let named: Vec<&Route> = self.0.iter().filter(|r| r.key == key).collect();
        let mut out: Vec<String> = (named.iter())
            .map(|r| {
                let to = match r.origin.as_str() {
                    "" => r.holder.to_string(),
                    origin => format!("{} → {origin}", r.holder),
                };
                let shared = named.iter().any(|o| o.holder != r.holder);
                match (&r.holder, shared) {
                    (Holder::Collector(_), true) => {
                        format!("{to} (not sent: a collector gets a key of its own)")
                    }
                    _ => to,
                }
            })
            .collect();
        out.dedup();
        out
    }
}

#[cfg(test)]
mod tests;
