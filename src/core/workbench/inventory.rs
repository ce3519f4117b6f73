//! `inventory({query?})`: every open tab's tools in one list (tab title, origin, frame,
//! hints), searchable, and the tools whose definition changed since they were first seen in
//! their tab, with the difference.
//!
//! [`Seen`] is the memory of first definitions: the shell shows it every listing of a tab
//! ([`Seen::observe`]); a tool is known by its tab, frame origin and name, so the same name on
//! another site of the tab is another tool. A definition is its description, input schema and
//! hints; a change in any is flagged until the tab is closed ([`Seen::forget_tab`]).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::ops::RequestError;
use crate::core::page::tabs::TabTools;
use crate::core::tool::{kind, PageTool};

/// At most this many tools' first definitions are kept per tab (older pages' are dropped).
pub const MAX_SEEN_PER_TAB: usize = 1_000;

/// What makes a tool's definition: compared between listings.
#[derive(Debug, Clone, PartialEq)]
struct Definition {
    description: String,
    input_schema: Value,
    annotations: Value,
}

impl Definition {
    fn of(tool: &PageTool) -> Definition {
        Definition {
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            annotations: serde_json::to_value(tool.annotations).unwrap_or(Value::Null),
        }
    }
}

/// One part of a definition that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// `description`, `inputSchema` or `annotations`.
    pub field: &'static str,
    /// As first seen.
    pub before: Value,
    /// As now.
    pub after: Value,
}

/// The first definition of every tool seen, by tab.
#[derive(Debug, Default)]
pub struct Seen {
    tabs: BTreeMap<i64, BTreeMap<(String, String), Definition>>,
}

impl Seen {
    /// Remembers the definitions of tools not seen before in this tab (a known tool keeps its
    /// first definition).
    pub fn observe(&mut self, tab_id: i64, tools: &[PageTool]) {
        let known = self.tabs.entry(tab_id).or_default();
        for tool in tools {
            if known.len() >= MAX_SEEN_PER_TAB {
                break;
            }
            known
                .entry((tool.origin.clone(), tool.name.clone()))
                .or_insert_with(|| Definition::of(tool));
        }
    }

    /// How a tool differs from its first definition in this tab (empty: unchanged or new).
    pub fn changes(&self, tab_id: i64, tool: &PageTool) -> Vec<FieldChange> {
        let Some(first) = self
            .tabs
            .get(&tab_id)
            .and_then(|t| t.get(&(tool.origin.clone(), tool.name.clone())))
        else {
            return Vec::new();
        };
        let now = Definition::of(tool);
        let mut out = Vec::new();
        if first.description != now.description {
            out.push(FieldChange {
                field: "description",
                before: json!(first.description),
                after: json!(now.description),
            });
        }
        if first.input_schema != now.input_schema {
            out.push(FieldChange {
                field: "inputSchema",
                before: first.input_schema.clone(),
                after: now.input_schema,
            });
        }
        if first.annotations != now.annotations {
            out.push(FieldChange {
                field: "annotations",
                before: first.annotations.clone(),
                after: now.annotations,
            });
        }
        out
    }

    /// Forgets a closed tab.
    pub fn forget_tab(&mut self, tab_id: i64) {
        self.tabs.remove(&tab_id);
    }

    /// Forgets every tab not in `open`.
    pub fn keep_tabs(&mut self, open: &[i64]) {
        self.tabs.retain(|id, _| open.contains(id));
    }
}

/// An open tab as the shell lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenTab {
    /// Its id.
    pub tab_id: i64,
    /// Its title.
    pub title: String,
    /// Its URL.
    pub url: String,
}

/// One tool of the inventory.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The tab.
    pub tab_id: i64,
    /// The tab's title.
    pub tab_title: String,
    /// The tool's frame origin.
    pub origin: String,
    /// Its frame (0: top).
    pub frame_id: i64,
    /// Its name.
    pub name: String,
    /// Its title, when it gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does.
    pub description: String,
    /// The hints it gives (`readOnly`, `consequential`, `untrustedContent`).
    pub hints: Vec<&'static str>,
    /// Its input schema.
    pub input_schema: Value,
    /// How it changed since first seen in this tab (absent: unchanged).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<FieldChange>,
}

/// A tab that could not be listed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unlisted {
    /// The tab.
    pub tab_id: i64,
    /// Its title.
    pub tab_title: String,
    /// Why.
    pub error: String,
}

/// The answer of `inventory`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Inventory {
    /// The tools that match the query, tab by tab in the order given, frames in order.
    pub tools: Vec<Entry>,
    /// How many tools the tabs offer in all.
    pub total: usize,
    /// How many tabs were asked.
    pub tabs: usize,
    /// Tabs that gave no listing (the browser's own pages, tabs still loading).
    pub unlisted: Vec<Unlisted>,
    /// Tools left out because they are marked `debugging` and developer tools were not asked
    /// for.
    pub debugging_hidden: usize,
}

/// The hints of a tool, as the inventory names them.
pub fn hints(tool: &PageTool) -> Vec<&'static str> {
    let a = tool.annotations;
    [
        (a.read_only_hint, "readOnly"),
        (a.consequential_hint, "consequential"),
        (a.untrusted_content_hint, "untrustedContent"),
        (a.debugging, "debugging"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect()
}

/// Whether an entry matches a query: every word of it (case-insensitive) is in its name,
/// title, description, origin, tab title or hints.
pub fn matches(entry: &Entry, query: &str) -> bool {
    let hay = format!(
        "{} {} {} {} {} {}",
        entry.name,
        entry.title.as_deref().unwrap_or_default(),
        entry.description,
        entry.origin,
        entry.tab_title,
        entry.hints.join(" ")
    )
    .to_lowercase();
    query
        .split_whitespace()
        .all(|word| hay.contains(&word.to_lowercase()))
}

/// The inventory of the tabs' listings (each seen by `seen` already), filtered by `query`;
/// tools marked `debugging` only with `developer`.
pub fn inventory(
    listed: Vec<(OpenTab, Result<TabTools, String>)>,
    seen: &Seen,
    query: Option<&str>,
    developer: bool,
) -> Inventory {
    let mut out = Inventory {
        tools: Vec::new(),
        total: 0,
        tabs: listed.len(),
        unlisted: Vec::new(),
        debugging_hidden: 0,
    };
    for (tab, tools) in listed {
        let tools = match tools {
            Ok(tools) => tools,
            Err(error) => {
                out.unlisted.push(Unlisted {
                    tab_id: tab.tab_id,
                    tab_title: tab.title,
                    error,
                });
                continue;
            }
        };
        for tool in &tools.tools {
            out.total += 1;
            if tool.annotations.debugging && !developer {
                out.debugging_hidden += 1;
                continue;
            }
            let entry = Entry {
                tab_id: tab.tab_id,
                tab_title: tab.title.clone(),
                origin: tool.origin.clone(),
                frame_id: tool.frame_id,
                name: tool.name.clone(),
                title: tool.title.clone(),
                description: tool.description.clone(),
                hints: hints(tool),
                input_schema: tool.input_schema.clone(),
                changed: seen.changes(tab.tab_id, tool),
            };
            if query.is_none_or(|q| matches(&entry, q)) {
                out.tools.push(entry);
            }
        }
    }
    out
}

/// `inventory({query?, developer?})`'s `developer`: whether tools marked `debugging` are
/// listed (default: no).
pub fn parse_developer(request: &Value) -> Result<bool, RequestError> {
    match request.get("developer") {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(on)) => Ok(*on),
        Some(other) => Err(RequestError(format!(
            "inventory: `developer` must be true or false, not {}",
            kind(other)
        ))),
    }
}

/// `inventory({query?})`'s query: a string, or none.
pub fn parse_query(request: &Value) -> Result<Option<String>, RequestError> {
    match request.get("query") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(q)) if q.trim().is_empty() => Ok(None),
        Some(Value::String(q)) => Ok(Some(q.chars().take(200).collect())),
        Some(other) => Err(RequestError(format!(
            "inventory: `query` must be a string, not {}",
            kind(other)
        ))),
    }
}

/// The ids of `chrome.tabs.query`'s answer (entries without a numeric `id` are skipped).
pub fn tab_ids(listed: &Value) -> Vec<i64> {
    listed
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tab| Some(tab.get("id")?.as_f64()? as i64))
        .collect()
}

/// A tab as the inventory names it: its top frame's title and URL when its content script
/// told them (the worker is not given tab titles), else `tab N`.
pub fn open_tab(tab_id: i64, facts: Option<&super::diagnose::PageFacts>) -> OpenTab {
    let title = facts.map(|f| f.title.trim()).filter(|t| !t.is_empty());
    let url = facts.map(|f| f.url.clone()).unwrap_or_default();
    let title = match title {
        Some(title) => title.chars().take(200).collect(),
        None if url.is_empty() => format!("tab {tab_id}"),
        None => url.clone(),
    };
    OpenTab { tab_id, title, url }
}
