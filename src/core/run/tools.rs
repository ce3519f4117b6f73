//! The tools of a run: who runs each ([`ToolKind`]), how the run is given them, the calls it
//! hands out and how they end. Plain data: the machine in `run` decides what to do with them.

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::toolset::ToolSpec;

/// Who runs a tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolKind {
    /// The host itself (e.g. `current_time`), through the shell.
    Local,
    /// The page of the run's tab, through the bridge.
    Page,
    /// A remote MCP server.
    Mcp,
    /// The AG-UI client of the run: the run ends and the client runs it.
    Frontend,
    /// The person, in the popup: the call waits for an answer.
    Visitor,
}

pub(super) fn kind_name(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Local => "host",
        ToolKind::Page => "page",
        ToolKind::Mcp => "MCP",
        ToolKind::Frontend => "client (frontend)",
        ToolKind::Visitor => "visitor",
    }
}

/// A tool of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunTool {
    /// Its name, description and input schema.
    pub spec: ToolSpec,
    /// Who runs it.
    pub kind: ToolKind,
    /// When set, results are wrapped as data from this source (untrusted content).
    pub data_source: Option<String>,
}

/// A tool source that failed at the start of the run; it is skipped and reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    /// The source, as the person knows it.
    pub source: String,
    /// What went wrong.
    pub message: String,
}

/// A tool call for the shell to carry out.
#[derive(Debug, PartialEq)]
pub struct ToolInvocation {
    /// The call's id.
    pub call_id: String,
    /// The turn's id.
    pub turn_id: String,
    /// The tool's name in the run.
    pub name: String,
    /// Who runs it.
    pub kind: ToolKind,
    /// The repaired arguments.
    pub arguments: Map<String, Value>,
    /// The turn's context (set by the caller).
    pub context: Value,
    /// Runs of this tool in this turn, this one included.
    pub call_count: usize,
    /// The gate's pass (`core::gate::screen`): the call's permit, and how long a `delay`
    /// middleware layer holds the call before it runs.
    pub pass: crate::core::gate::Pass,
}

/// How a tool call ended, as the shell reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The result as text (the shell writes non-string results as JSON).
    Ok(String),
    /// A result with media (an MCP tool's images, audio, resources): the model gets `text`
    /// (which notes each medium); `TOOL_CALL_RESULT` carries `text` first, then `parts`.
    Media {
        /// The result as the model gets it.
        text: String,
        /// The image, audio, video and document parts, in the tool's order.
        parts: Vec<crate::core::agui::ContentPart>,
    },
    /// The tool threw, timed out, or was refused.
    Error(String),
    /// A terminal tool: the turn resolves at once with `outcome`.
    EndTurn {
        /// The result the model sees.
        result: String,
        /// What the turn resolves with.
        outcome: Value,
    },
}

impl ToolOutcome {
    /// A navigation as the model gets it, whichever form the answer came in (a page call's
    /// typed answer, or what the middleware layers handed back): `{navigated: true, url?,
    /// crossOrigin?, tools?, openedTab?, resultNote?, result?}` as JSON text, in that order, the
    /// destination's JSON-LD (`result`) as a value, not as text in text. `field` gives each of
    /// the named fields, when the answer has it.
    pub(crate) fn navigation(
        field: impl Fn(&str) -> Option<Value>,
        result: Option<&str>,
    ) -> ToolOutcome {
        let mut out = serde_json::json!({"navigated": true});
        for key in ["url", "crossOrigin", "tools", "openedTab", "resultNote"] {
            if let Some(value) = field(key) {
                out[key] = value;
            }
        }
        if let Some(text) = result {
            out["result"] =
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()));
        }
        ToolOutcome::Ok(out.to_string())
    }
}

/// How a tool call of a run ended, typed, whoever carried it out (the page, an MCP server,
/// the host's clock, the person's middleware): its outcome, and what the run's log says beside
/// it. Every source hands it over as a value; only what the person's JavaScript middleware
/// layers give back is read from JSON, at that edge (`run::middleware::layered_answer`).
#[derive(Debug, Clone, PartialEq)]
pub struct ToolAnswer {
    /// What the model gets.
    pub outcome: ToolOutcome,
    /// How a consequential page call made without the question was allowed (`allowed by site
    /// policy <origin>`).
    pub confirmation: Option<String>,
    /// How the result breaks the tool's own output schema (`[{pointer, message}]`).
    pub output_errors: Option<Vec<Value>>,
}

impl From<ToolOutcome> for ToolAnswer {
    fn from(outcome: ToolOutcome) -> ToolAnswer {
        ToolAnswer {
            outcome,
            confirmation: None,
            output_errors: None,
        }
    }
}

impl ToolAnswer {
    /// A call that failed, was refused or was never made: why.
    pub fn error(message: impl Into<String>) -> ToolAnswer {
        ToolOutcome::Error(message.into()).into()
    }
}

/// A visitor tool call waiting for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInput {
    /// The call's id.
    pub call_id: String,
    /// The turn's id.
    pub turn_id: String,
    /// The tool's name in the run.
    pub name: String,
    /// The arguments.
    pub args: Map<String, Value>,
}

/// The tools of a run with distinct names. Name clashes: the client's frontend tools win,
/// then the host's own and the person's (local, visitor), then MCP servers (which the person
/// added), then the page (which the site controls). No source takes another's name silently:
/// each tool left out is reported in `errors`.
pub(super) fn distinct(given: Vec<RunTool>, errors: &mut Vec<SourceError>) -> Vec<RunTool> {
    let rank = |kind: ToolKind| match kind {
        ToolKind::Frontend => 0,
        ToolKind::Local | ToolKind::Visitor => 1,
        ToolKind::Mcp => 2,
        ToolKind::Page => 3,
    };
    let mut best: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, tool) in given.iter().enumerate() {
        let name = tool.spec.name.as_str();
        match best.get(name) {
            Some(&kept) if rank(given[kept].kind) <= rank(tool.kind) => {}
            _ => {
                best.insert(name, i);
            }
        }
    }
    let keep: Vec<bool> = given
        .iter()
        .enumerate()
        .map(|(i, t)| best[t.spec.name.as_str()] == i)
        .collect();
    for tool in given
        .iter()
        .enumerate()
        .filter(|(i, _)| !keep[*i])
        .map(|(_, t)| t)
    {
        let winner = &given[best[tool.spec.name.as_str()]];
        errors.push(SourceError {
            source: tool
                .data_source
                .clone()
                .unwrap_or_else(|| kind_name(tool.kind).to_owned()),
            message: format!(
                "`{}` is also the name of {} {} tool, which keeps it; this {} tool is left out",
                tool.spec.name,
                if winner.kind == ToolKind::Mcp {
                    "an"
                } else {
                    "a"
                },
                kind_name(winner.kind),
                kind_name(tool.kind)
            ),
        });
    }
    given
        .into_iter()
        .zip(keep)
        .filter_map(|(tool, keep)| keep.then_some(tool))
        .collect()
}

/// The run's tools with the page's replaced by `page` (a new listing): the tools, and the
/// names added and removed; `None` when nothing changed. Names stay distinct as at the start
/// (a page tool never takes a name another source has).
pub(super) fn with_page_tools(
    current: &[RunTool],
    page: Vec<RunTool>,
    errors: &mut Vec<SourceError>,
) -> Option<(Vec<RunTool>, Vec<String>, Vec<String>)> {
    let before: Vec<&RunTool> = current
        .iter()
        .filter(|t| t.kind == ToolKind::Page)
        .collect();
    let mut tools: Vec<RunTool> = current
        .iter()
        .filter(|t| t.kind != ToolKind::Page)
        .cloned()
        .collect();
    // A model request carries at most MAX_TOOLS_PER_REQUEST tools: the page's past it are left
    // out, and said so.
    let max = crate::core::limits::MAX_TOOLS_PER_REQUEST;
    let room = max.saturating_sub(tools.len());
    if page.len() > room {
        errors.push(SourceError {
            source: "tools".into(),
            message: format!(
                "{} of the page's tools left out: a model request carries at most {max} (max_tools_per_request)",
                page.len() - room
            ),
        });
    }
    tools.extend(page.into_iter().take(room));
    let tools = distinct(tools, errors);
    let after: Vec<&RunTool> = tools.iter().filter(|t| t.kind == ToolKind::Page).collect();
    if before == after {
        return None;
    }
    let names = |of: &[&RunTool]| of.iter().map(|t| t.spec.name.clone()).collect::<Vec<_>>();
    let (was, now) = (names(&before), names(&after));
    let added = now.iter().filter(|n| !was.contains(n)).cloned().collect();
    let removed = was.iter().filter(|n| !now.contains(n)).cloned().collect();
    Some((tools, added, removed))
}
