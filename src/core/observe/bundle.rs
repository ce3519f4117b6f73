//! The bug report (`bugReport({runId})`): one JSON file, `webmcp-host-bug-<runId>.json`, that
//! a person hands to a site's developers. It holds, under [`FORMAT`]: the run's summary, its
//! timeline (`core::timeline::of_log`: the prompt, steps with their tokens, calls, errors, the
//! answer), its events and their times (and usage), the tab's page URL and title, its WebMCP mode (`native`,
//! `polyfill` or `none`, from the top frame), its tool definitions and listing problems, the
//! audit of its tools, a PNG screenshot of the tab (a `data:` URL, or why there is none),
//! Chrome's and the extension's versions, and the settings as the person's side sees them.
//! Every key in session storage is masked wherever it would appear.

use serde_json::{json, Map, Value};

use crate::core::egress::mask_key;
use crate::core::page::tabs::TabTools;
use crate::core::timeline;

/// The bundle's `format`.
pub const FORMAT: &str = "webmcp-host-bug-report/1";

/// Reads `{runId}`.
pub fn run_id(request: &Value) -> Result<String, String> {
    request
        .get("runId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "bugReport: `runId` is required".into())
}

/// The file name of a run's bug report (the run id's unsafe characters replaced).
pub fn file_name(run_id: &str) -> String {
    let safe: String = (run_id.chars().take(80))
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("webmcp-host-bug-{safe}.json")
}

/// The WebMCP mode of a tab's top frame: `native`, `polyfill`, `none` (no
/// `document.modelContext`), or `unknown` (it did not answer).
pub fn webmcp_mode(tools: &TabTools) -> &'static str {
    tools.webmcp.get(&0).copied().unwrap_or("unknown")
}

/// Chrome's version from a user agent (`Chrome/138.0.7204.49`, `HeadlessChrome/…`).
pub fn chrome_version(user_agent: &str) -> Option<String> {
    let at = user_agent.find("Chrome/")? + "Chrome/".len();
    let version: String = user_agent[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    (!version.is_empty()).then_some(version)
}

/// What the worker gathered for a bug report.
#[derive(Debug, Clone)]
pub struct Parts {
    /// `runLog`'s answer for the run (`{run, events, times, …}`).
    pub log: Value,
    /// The tab: `{url, title}` as Chrome reports it, when the run had a tab still open (an
    /// empty title is filled from `tools`' top page).
    pub page: Option<Value>,
    /// The tab's tools, when listed.
    pub tools: Option<Result<TabTools, String>>,
    /// The audit of the tab's tools (`audit`'s answer), or why there is none.
    pub audit: Option<Result<Value, String>>,
    /// The screenshot as a `data:image/png` URL, or why there is none.
    pub screenshot: Result<String, String>,
    /// Chrome's user agent.
    pub user_agent: String,
    /// The extension's version (its manifest's).
    pub extension_version: String,
    /// The settings as `settings()` answers them.
    pub settings: Value,
    /// When the report was made (ms since the epoch).
    pub created_ms: f64,
}

/// Whether the tab still shows the page run `recorded` was made on (`RunSummary::page`): the
/// same top-frame document when one was recorded, else the same URL; `now_url` and
/// `now_document` are the tab's top frame now. `Err` says where the tab has gone, for the
/// report: its address, tools, audit and screenshot are then left out.
pub fn still_shown(
    recorded: Option<&Value>,
    now_url: Option<&str>,
    now_document: Option<&str>,
) -> Result<(), String> {
    let Some(recorded) = recorded else {
        return Err("the run recorded no page (its tab's top frame was not listed): the tab's address, tools, audit and screenshot are left out".into());
    };
    let url = recorded.get("url").and_then(Value::as_str).unwrap_or("");
    let same = match recorded.get("documentId").and_then(Value::as_str) {
        Some(document) => now_document == Some(document),
        None => now_url == Some(url),
    };
    if same {
        return Ok(());
    }
    Err(format!(
        "the tab has moved on from {url} (the page this run was made on): its address, tools, audit and screenshot now are another page's, and are left out"
    ))
}

/// The bug report of `parts`, with every one of `keys` (the values in session storage) masked
/// wherever it appears.
pub fn assemble(parts: Parts, keys: &[String]) -> Value {
    let run_id = parts
        .log
        .pointer("/run/runId")
        .cloned()
        .unwrap_or(Value::Null);
    let (tools, mode) = match &parts.tools {
        Some(Ok(tools)) => (tools.response(), webmcp_mode(tools)),
        Some(Err(error)) => (json!({"error": error}), "unknown"),
        None => (Value::Null, "unknown"),
    };
    let outcome = |part: Option<Result<Value, String>>| match part {
        Some(Ok(value)) => value,
        Some(Err(error)) => json!({"error": error}),
        None => Value::Null,
    };
    let (screenshot, screenshot_error) = match parts.screenshot {
        Ok(url) if url.starts_with("data:image/png;base64,") => (json!(url), Value::Null),
        Ok(_) => (Value::Null, json!("Chrome gave no PNG")),
        Err(why) => (Value::Null, json!(why)),
    };
    // Chrome hides a tab's title from an extension without the `tabs` permission: the page's
    // own, as the top frame's content script read it with the listing, fills it in.
    let mut page = parts.page.unwrap_or(Value::Null);
    if let (Some(Ok(listed)), Some(page)) = (&parts.tools, page.as_object_mut()) {
        let untitled = page
            .get("title")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty();
        if let Some(top) = listed.page.as_ref().filter(|_| untitled) {
            page.insert("title".into(), json!(top.title));
        }
    }
    let mut report = json!({
        "format": FORMAT,
        "createdMs": parts.created_ms,
        "runId": run_id,
        "page": page,
        "webmcp": mode,
        "chrome": {"version": chrome_version(&parts.user_agent), "userAgent": parts.user_agent},
        "extension": {"version": parts.extension_version},
        "run": parts.log.get("run").cloned().unwrap_or(Value::Null),
        "timeline": serde_json::to_value(timeline::of_log(&parts.log)).unwrap_or(Value::Null),
        "events": parts.log.get("events").cloned().unwrap_or(json!([])),
        "times": parts.log.get("times").cloned().unwrap_or(json!([])),
        "tools": tools,
        "audit": outcome(parts.audit),
        "screenshot": screenshot,
        "screenshotError": screenshot_error,
        "settings": parts.settings,
    });
    mask(&mut report, keys);
    report
}

/// Every occurrence of a key in the strings (and object keys) of `value`, masked.
fn mask(value: &mut Value, keys: &[String]) {
    let keys: Vec<&str> = (keys.iter().map(String::as_str))
        .filter(|k| k.len() >= 4)
        .collect();
    if !keys.is_empty() {
        mask_with(value, &keys);
    }
}

fn mask_with(value: &mut Value, keys: &[&str]) {
    let clean = |text: &str| {
        (keys.iter()).fold(text.to_owned(), |text, key| match text.contains(key) {
            true => text.replace(key, &mask_key(key)),
            false => text,
        })
    };
    match value {
        Value::String(text) => *text = clean(text),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_with(v, keys)),
        Value::Object(map) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    mask_with(&mut v, keys);
                    (clean(&k), v)
                })
                .collect::<Map<String, Value>>();
        }
        _ => {}
    }
}

/// The keys held in session storage (`session`: all of it), to mask.
pub fn session_keys(session: &Value) -> Vec<String> {
    use crate::core::storage::KEY_PREFIX;
    (session.as_object().into_iter().flatten())
        .filter(|(name, _)| name.starts_with(KEY_PREFIX))
        .filter_map(|(_, value)| value.as_str().map(str::to_owned))
        .collect()
}
