//! The tool audit: a page's WebMCP tools reviewed against rules, each finding explained, and a
//! score per tool and per page (`docs/audit.md` has the rules table and the score formula).
//!
//! Tools in, findings out: [`audit_value`] takes either a JSON array of tool definitions
//! (`{name, description, inputSchema, annotations?}`, each optionally with `frameId`, `source`
//! and `declarative`) or the value `listTools` answers (`{tools, problems}`, whose problems, the
//! entries the host skipped, become findings too); [`audit_text`] reads the same from a file's
//! text. [`Audit::render`] writes the result as the host's JSON shape or as a SARIF 2.1.0 log.
//!
//! Invariants: pure (no I/O, no clock); bad input is a finding or an `Err`, never a panic; the
//! same tools give the same findings in the same order.
//!
//! - [`rules`]: the rules table and the checks of names, descriptions and hints.
//! - [`schema`]: the checks of input schemas.
//! - [`words`]: the word lists the checks read names and descriptions with.
//! - [`score`]: the score of a tool and of a page.
//! - [`sarif`]: the SARIF 2.1.0 log.
//! - [`probe`]: the opt-in calls of the tools, and what their answers say.

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::page::tabs::TabTools;

mod out;
pub mod probe;
pub mod rules;
pub mod sarif;
pub mod schema;
pub mod score;
mod table;
pub mod words;

#[cfg(test)]
mod tests;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The tool is broken, unsafe or skipped: an agent cannot use it as meant (CI fails).
    Error,
    /// The tool works but an agent is likely to choose or call it wrongly.
    Warning,
    /// A better practice the tool does not follow.
    Note,
}

impl Severity {
    /// `error`, `warning` or `note` (also SARIF's `level`).
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// One thing wrong with one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// The rule's stable id (`name-charset`, `description-missing`, …).
    pub rule: &'static str,
    /// The rule's severity.
    pub severity: Severity,
    /// The tool: its name, or `tools[N]` for an entry without a usable one.
    pub tool: String,
    /// Where in the tool's definition (a JSON pointer into the entry), when it applies.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pointer: Option<String>,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// A tool's score and its count of findings by severity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolScore {
    /// The tool, as findings name it.
    pub name: String,
    /// The frame that offers it, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub frame_id: Option<i64>,
    /// 0 to 100 ([`score`]).
    pub score: u8,
    /// Its error-level findings.
    pub errors: usize,
    /// Its warnings.
    pub warnings: usize,
    /// Its notes.
    pub notes: usize,
}

/// The audit of a page (or a tools file): `{score, tools, findings}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Audit {
    /// The page's score, 0 to 100 ([`score::page`]).
    pub score: u8,
    /// Every tool audited, in order, with its score.
    pub tools: Vec<ToolScore>,
    /// Every finding, tool by tool.
    pub findings: Vec<Finding>,
}

/// How an audit is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `{score, tools, findings}`.
    Json,
    /// A SARIF 2.1.0 log.
    Sarif,
}

impl Format {
    /// `json` or `sarif`; anything else is an error that names both.
    pub fn parse(name: &str) -> Result<Format, String> {
        match name {
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            other => Err(format!(
                "unknown format `{other}`; the formats are json and sarif"
            )),
        }
    }
}

/// One tool definition to audit.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// What findings call it: its name, or `tools[N]`.
    pub label: String,
    /// The definition as given (normally an object).
    pub value: Value,
    /// The frame that offers it, when known (`frameId`).
    pub frame_id: Option<i64>,
    /// Where it comes from (`source`, e.g. `native`, `polyfill`), when known.
    pub source: Option<String>,
    /// Why the host skipped it, for an entry of `listTools`' `problems`.
    pub skipped: Option<String>,
}

/// What the tools file and `listTools` answers may look like, for error messages.
pub const INPUT_SHAPES: &str = "a JSON array of tool definitions \
     ({name, description, inputSchema, annotations?}), or listTools' answer {tools, problems}";

/// What a file that is not a tools file looks like, when it is a kind people mistake for one.
fn not_a_tools_file(input: &Value) -> Option<&'static str> {
    let has = |v: &Value, keys: &[&str]| keys.iter().any(|k| v.get(*k).is_some());
    match input {
        Value::Array(items) if !items.is_empty() => {
            let evals = items.iter().all(|i| {
                has(
                    i,
                    &[
                        "expectedCall",
                        "messages",
                        "userMessage",
                        "userScenario",
                        "assertions",
                    ],
                ) && !has(i, &["inputSchema", "annotations"])
            });
            evals.then_some("an eval file (webmcp-evals cases with messages and expectedCall or a scenario), not a list of tools: give it to evaluate, or audit the page's tools (listTools' answer)")
        }
        Value::Object(map) if !map.contains_key("tools") => {
            if map.contains_key("$schema") || map.contains_key("properties") {
                Some("a JSON Schema, not a list of tools")
            } else if map.contains_key("evals") || map.contains_key("results") {
                Some("an eval file or an evaluation's answer, not a list of tools")
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The entries of a tools file or of `listTools`' answer (see [`INPUT_SHAPES`]).
pub fn entries(input: &Value) -> Result<Vec<Entry>, String> {
    if let Some(what) = not_a_tools_file(input) {
        return Err(format!("this is {what}; expected {INPUT_SHAPES}"));
    }
    let (tools, problems) = match input {
        Value::Array(tools) => (tools.as_slice(), &[][..]),
        Value::Object(map) => match (map.get("tools"), map.get("problems")) {
            (Some(Value::Array(tools)), None | Some(Value::Null)) => (tools.as_slice(), &[][..]),
            (Some(Value::Array(tools)), Some(Value::Array(problems))) => {
                (tools.as_slice(), problems.as_slice())
            }
            _ => return Err(format!("expected {INPUT_SHAPES}")),
        },
        _ => return Err(format!("expected {INPUT_SHAPES}")),
    };
    let mut out: Vec<Entry> = tools
        .iter()
        .enumerate()
        .map(|(i, value)| Entry {
            label: match value.get("name") {
                Some(Value::String(name)) if !name.trim().is_empty() => name.clone(),
                _ => format!("tools[{i}]"),
            },
            frame_id: value.get("frameId").and_then(Value::as_i64),
            source: value
                .get("source")
                .and_then(Value::as_str)
                .map(str::to_owned),
            skipped: None,
            value: value.clone(),
        })
        .collect();
    for (i, problem) in problems.iter().enumerate() {
        let message = problem
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        let frame_id = problem.get("frameId").and_then(Value::as_i64);
        let label = match problem.get("tool").and_then(Value::as_str) {
            Some(name) => name.to_owned(),
            None => format!("problems[{i}]"),
        };
        out.push(Entry {
            label,
            value: json!({}),
            frame_id,
            source: None,
            skipped: Some(message.to_owned()),
        });
    }
    Ok(out)
}

/// Audits a tools file or `listTools`' answer (see [`INPUT_SHAPES`]).
pub fn audit_value(input: &Value) -> Result<Audit, String> {
    Ok(audit_entries(&entries(input)?))
}

/// Audits the text of a tools file (JSON; see [`INPUT_SHAPES`]).
pub fn audit_text(text: &str) -> Result<Audit, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    audit_value(&value)
}

/// Audits a tab's tools as the host lists them (what `listTools` answers).
pub fn audit_tab(tab: &TabTools) -> Audit {
    audit_tab_probed(tab, Vec::new())
}

/// Audits a tab's tools with the findings of its probes ([`probe`]), each counted against
/// the tool it names.
pub fn audit_tab_probed(tab: &TabTools, probed: Vec<Finding>) -> Audit {
    let entries = entries(&tab.response()).unwrap_or_default();
    audit_with(&entries, probed)
}

/// Audits entries: every rule on every entry, then the rules across entries, then the scores.
pub fn audit_entries(entries: &[Entry]) -> Audit {
    audit_with(entries, Vec::new())
}

fn audit_with(entries: &[Entry], extra: Vec<Finding>) -> Audit {
    let mut per_entry: Vec<Vec<Finding>> = entries.iter().map(rules::check_entry).collect();
    rules::check_across(entries, &mut per_entry);
    for finding in extra {
        if let Some(at) = entries.iter().position(|e| e.label == finding.tool) {
            per_entry[at].push(finding);
        }
    }
    let tools = entries
        .iter()
        .zip(&per_entry)
        .map(|(entry, findings)| score::tool(entry, findings))
        .collect::<Vec<_>>();
    Audit {
        score: score::page(&tools),
        tools,
        findings: per_entry.into_iter().flatten().collect(),
    }
}

impl Audit {
    /// Whether any finding is an error (the CLI then exits 1).
    pub fn has_errors(&self) -> bool {
        self.findings.iter().any(|f| f.severity == Severity::Error)
    }

    /// `{score, tools, findings}` as a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or_else(|e| json!({"error": e.to_string()}))
    }

    /// The audit in `format`; `artifact` names the file audited (a SARIF result's location),
    /// when there is one.
    pub fn render(&self, format: Format, artifact: Option<&str>) -> Value {
        match format {
            Format::Json => self.to_json(),
            Format::Sarif => sarif::log(self, artifact),
        }
    }
}
