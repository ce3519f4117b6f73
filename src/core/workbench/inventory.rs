//! `inventory({query?})`: every open tab's tools in one list (tab title, origin, frame,
//! hints), searchable, and the tools whose definition changed since they were first seen in
//! their tab, with the difference.
//!
//! [`Seen`] is the memory of first definitions: the shell shows it every listing of a tab
//! ([`Seen::observe`]); a tool is known by its tab, frame origin and name, so the same name on
//! another site of the tab is another tool. A definition is its description, input schema and
//! hints; a change in any is flagged until the tab is closed ([`Seen::forget_tab`]).
//! The shell keeps it in `chrome.storage.session` too ([`Seen::to_stored`],
//! [`Seen::from_stored`]), so that a redefinition after the worker restarted is still flagged:
//! at most [`MAX_SEEN_TABS`] tabs (the least recently listed dropped first) within
//! [`MAX_SEEN_STORED_BYTES`].

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::error::RequestError;
use crate::core::naming::kind;
use crate::core::page::tabs::TabTools;
use crate::core::page::tool::PageTool;

/// At most this many tools' first definitions are kept per tab (older pages' are dropped).
pub const MAX_SEEN_PER_TAB: usize = crate::core::limits::MAX_SEEN_PER_TAB;
/// At most this many tabs' first definitions are kept (the least recently listed dropped).
pub const MAX_SEEN_TABS: usize = crate::core::limits::MAX_SEEN_TABS;
/// At most this many bytes of definitions are stored (the most recently listed tabs first;
/// what does not fit is kept only while the worker lives).
pub const MAX_SEEN_STORED_BYTES: usize = crate::core::limits::MAX_SEEN_STORED_BYTES;

/// What makes a tool's definition: compared between listings.
#[derive(Debug, Clone, PartialEq)]
struct Definition {
    description: String,
    input_schema: Value,
    annotations: Value,
    /// `Null` when the tool has none; `None` when unknown (stored before it was kept).
    output_schema: Option<Value>,
}

impl Definition {
    fn of(tool: &PageTool) -> Definition {
        Definition {
            description: tool.description.clone(),
            input_schema: tool.input_schema.clone(),
            annotations: serde_json::to_value(tool.annotations).unwrap_or(Value::Null),
            output_schema: Some(tool.output_schema.clone().unwrap_or(Value::Null)),
        }
    }
}

/// One part of a definition that changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FieldChange {
    /// `description`, `inputSchema`, `outputSchema` or `annotations`.
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
    /// The tabs, the most recently listed last.
    recent: Vec<i64>,
}

impl Seen {
    /// Remembers the definitions of tools not seen before in this tab (a known tool keeps its
    /// first definition). Whether anything new was remembered (then store it again).
    pub fn observe(&mut self, tab_id: i64, tools: &[PageTool]) -> bool {
        self.recent.retain(|t| *t != tab_id);
        self.recent.push(tab_id);
        while self.recent.len() > MAX_SEEN_TABS {
            let oldest = self.recent.remove(0);
            self.tabs.remove(&oldest);
        }
        let known = self.tabs.entry(tab_id).or_default();
        let mut added = false;
        for tool in tools {
            if known.len() >= MAX_SEEN_PER_TAB {
                break;
            }
            let key = (tool.origin.clone(), tool.name.clone());
            if let std::collections::btree_map::Entry::Vacant(entry) = known.entry(key) {
                entry.insert(Definition::of(tool));
                added = true;
            }
        }
        added
    }

    /// What `chrome.storage.session` keeps: `{tabs: [{tabId, tools: [{origin, name,
    /// description, inputSchema, outputSchema, annotations}]}]}`, the most recently listed tab first, within
    /// [`MAX_SEEN_STORED_BYTES`] (a tool that does not fit is left out, and the rest after it).
    pub fn to_stored(&self) -> Value {
        let mut budget = MAX_SEEN_STORED_BYTES;
        let mut tabs = Vec::new();
        'tabs: for tab_id in self.recent.iter().rev() {
            let Some(known) = self.tabs.get(tab_id) else {
                continue;
            };
            let mut tools = Vec::new();
            for ((origin, name), d) in known {
                let mut line = json!({"origin": origin, "name": name, "description": d.description,
                    "inputSchema": d.input_schema, "annotations": d.annotations});
                if let Some(output) = &d.output_schema {
                    line["outputSchema"] = output.clone();
                }
                let bytes = line.to_string().len();
                if bytes > budget {
                    tabs.push(json!({"tabId": tab_id, "tools": tools}));
                    break 'tabs;
                }
                budget -= bytes;
                tools.push(line);
            }
            tabs.push(json!({"tabId": tab_id, "tools": tools}));
        }
        json!({"tabs": tabs})
    }

    /// The memory as stored ([`Seen::to_stored`]); anything malformed is left out, and the
    /// caps hold whatever was stored.
    pub fn from_stored(stored: &Value) -> Seen {
        let mut seen = Seen::default();
        let tabs = stored.get("tabs").and_then(Value::as_array);
        let tabs: Vec<&Value> = tabs.into_iter().flatten().take(MAX_SEEN_TABS).collect();
        // Stored the most recent first: read the oldest first, so that the order holds.
        for tab in tabs.into_iter().rev() {
            let Some(tab_id) = tab.get("tabId").and_then(Value::as_i64) else {
                continue;
            };
            let tools = tab.get("tools").and_then(Value::as_array);
            let mut known = BTreeMap::new();
            for tool in tools.into_iter().flatten().take(MAX_SEEN_PER_TAB) {
                let text = |key: &str| tool.get(key).and_then(Value::as_str).map(str::to_owned);
                let (Some(origin), Some(name), Some(description)) =
                    (text("origin"), text("name"), text("description"))
                else {
                    continue;
                };
                let definition = Definition {
                    description,
                    input_schema: tool.get("inputSchema").cloned().unwrap_or(Value::Null),
                    annotations: tool.get("annotations").cloned().unwrap_or(Value::Null),
                    output_schema: tool.get("outputSchema").cloned(),
                };
                known.insert((origin, name), definition);
            }
            seen.recent.retain(|t| *t != tab_id);
            seen.recent.push(tab_id);
            seen.tabs.insert(tab_id, known);
        }
        seen
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
        if let (Some(before), Some(after)) = (&first.output_schema, now.output_schema) {
            if *before != after {
                out.push(FieldChange {
                    field: "outputSchema",
                    before: before.clone(),
                    after,
                });
            }
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
        self.recent.retain(|t| *t != tab_id);
    }

    /// Forgets every tab not in `open`; whether any was forgotten (then store it again).
    pub fn keep_tabs(&mut self, open: &[i64]) -> bool {
        let before = self.tabs.len();
        self.tabs.retain(|id, _| open.contains(id));
        self.recent.retain(|id| open.contains(id));
        self.tabs.len() != before
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

/// The hints of a tool, as the inventory names them, and what it is (a declarative form that
/// submits by itself or sends its document elsewhere, a polyfill's tool).
pub fn hints(tool: &PageTool) -> Vec<&'static str> {
    let a = tool.annotations;
    [
        (a.read_only_hint, "readOnly"),
        (a.consequential_hint && !a.hints_unknown, "consequential"),
        (a.hints_unknown, "hintsUnknown"),
        (a.untrusted_content_hint, "untrustedContent"),
        (a.debugging, "debugging"),
        (tool.form.is_some(), "declarative"),
        (
            tool.form.as_ref().is_some_and(|f| f.auto_submit),
            "autoSubmit",
        ),
        (tool.form.as_ref().is_some_and(|f| f.navigates), "navigates"),
        (tool.polyfill.is_some(), "polyfilled"),
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
