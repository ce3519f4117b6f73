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
    pub spec: ToolSpec,
    pub kind: ToolKind,
    /// When set, results are wrapped as data from this source (untrusted content).
    pub data_source: Option<String>,
}

/// A tool source that failed at the start of the run; it is skipped and reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    pub source: String,
    pub message: String,
}

/// A tool call for the shell to carry out.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolInvocation {
    pub call_id: String,
    pub turn_id: String,
    pub name: String,
    pub kind: ToolKind,
    /// The repaired arguments.
    pub arguments: Map<String, Value>,
    pub context: Value,
    /// Runs of this tool in this turn, this one included.
    pub call_count: usize,
}

/// How a tool call ended, as the shell reports it.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutcome {
    /// The result as text (the shell writes non-string results as JSON).
    Ok(String),
    /// The tool threw, timed out, or was refused.
    Error(String),
    /// A terminal tool: the turn resolves at once with `outcome`.
    EndTurn { result: String, outcome: Value },
}

/// A visitor tool call waiting for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingInput {
    pub call_id: String,
    pub turn_id: String,
    pub name: String,
    pub args: Map<String, Value>,
}
