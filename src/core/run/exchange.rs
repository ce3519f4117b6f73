//! What a run starts from, what it is fed and what it asks: [`RunInput`], [`Input`],
//! [`Output`] and how it ends ([`RunOutcome`]).

use serde::Serialize;
use serde_json::Value;

use super::{
    Middleware, ModelRequest, RunTool, SourceError, ToolInvocation, ToolOutcome, DEFAULT_MAX_STEPS,
};
use crate::core::agui::{Event, Message};
use crate::core::native::NativeDelta;
use crate::core::provider::usage::StepUsage;
use crate::core::toolset::ToolSpec;

/// Everything a run starts from.
#[derive(Debug, Clone)]
pub struct RunInput {
    /// The conversation's id.
    pub thread_id: String,
    /// This run's id.
    pub run_id: String,
    /// The conversation so far, this turn's user message included.
    pub messages: Vec<Message>,
    /// The tools: the conversation's, then those of the sources read for this run, then the
    /// client's frontend tools, which win name clashes.
    pub tools: Vec<RunTool>,
    /// Tool sources that failed; reported at the start.
    pub source_errors: Vec<SourceError>,
    /// The most tool calls of the turn.
    pub max_steps: usize,
    /// Set by the caller of the turn, never by the model; given to every tool.
    pub context: Value,
    /// With a schema, the model ends its turn by calling `submit_result`.
    pub output_schema: Option<Value>,
    /// Global layers first, then the conversation's.
    pub middleware: Vec<Middleware>,
    /// Run names of tools whose own name differs (`shop__search`, `buy__frame2`) with that
    /// own name: the gate's `block` and `fail` layers name a tool either way.
    pub own_names: Vec<(String, String)>,
    /// Whether an invalid call is asked again once.
    pub reask: bool,
    /// Whether a repair hook is configured: a call that repair (and reask) could not make
    /// valid is handed to it ([`Output::RepairHook`]) before its error goes to the model.
    pub hook: bool,
    /// `CUSTOM` [`webmcp_host.conversation`](super::CUSTOM_CONVERSATION)
    /// values emitted after `RUN_STARTED`: what became of the run's conversation.
    pub notices: Vec<Value>,
    /// `CUSTOM` [`webmcp_host.tool_source`](super::CUSTOM_TOOL_SOURCE) values emitted after
    /// `RUN_STARTED`: each MCP server opened, with the protocol revision it speaks.
    pub sources: Vec<Value>,
}

impl RunInput {
    /// A run of `messages` with no tools and the defaults.
    pub fn new(
        thread_id: impl Into<String>,
        run_id: impl Into<String>,
        messages: Vec<Message>,
    ) -> Self {
        RunInput {
            thread_id: thread_id.into(),
            run_id: run_id.into(),
            messages,
            tools: Vec::new(),
            source_errors: Vec::new(),
            max_steps: DEFAULT_MAX_STEPS,
            context: Value::Null,
            output_schema: None,
            middleware: Vec::new(),
            own_names: Vec::new(),
            reask: true,
            hook: false,
            notices: Vec::new(),
            sources: Vec::new(),
        }
    }
}

/// What the shell feeds the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Input {
    /// A chunk of the model's text.
    ModelText(String),
    /// A native function-call delta.
    ModelNative(NativeDelta),
    /// The model's output ended; `cut_by_limit` when it stopped at the token limit.
    ModelDone {
        /// Whether it stopped at the token limit.
        cut_by_limit: bool,
    },
    /// The model call failed (after the shell's own retries).
    ModelFailed {
        /// What went wrong.
        message: String,
    },
    /// A tool call ended.
    ToolDone {
        /// The call.
        call_id: String,
        /// How it ended.
        outcome: ToolOutcome,
    },
    /// The page's tools now ([`Output::ListPageTools`]'s answer): `None` keeps the run's (the
    /// tab could not be listed, or it shows another origin now); `own_names` are the run's
    /// names of every tool whose own name differs.
    PageTools {
        /// The page's tools, as run tools.
        tools: Option<Vec<super::RunTool>>,
        /// Run names and own names that differ, of every bound tool.
        own_names: Vec<(String, String)>,
    },
    /// The person answered a visitor tool.
    SubmitToolResult {
        /// The call.
        call_id: String,
        /// The person's answer.
        value: String,
    },
    /// The person declined a visitor tool (`None`: "The visitor declined.").
    RejectToolCall {
        /// The call.
        call_id: String,
        /// Why the person declined (`None`: "The visitor declined.").
        error: Option<String>,
    },
    /// The repair hook's answer for a call: `{name, arguments}` to use instead, or `None`.
    HookAnswer {
        /// The call.
        call_id: String,
        /// The call to make instead, if any.
        call: Option<Value>,
    },
    /// A model step's use (its tokens and cost, as the drive counted them): emitted as the
    /// `CUSTOM` event [`webmcp_host.usage`](crate::core::agui::CUSTOM_USAGE) in the run's
    /// order, and summed into the `usage` of `RUN_FINISHED` or `RUN_ERROR`.
    Usage(StepUsage),
    /// A `CUSTOM` event to emit in the run's order (the drive's news).
    Custom {
        /// The event's name.
        name: String,
        /// Its value.
        value: Value,
    },
    /// The person stopped the run, or its time ran out.
    Stop {
        /// Why.
        reason: String,
    },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum RunOutcome {
    /// The model answered without calling tools.
    Completed {
        /// The model's last text.
        text: String,
    },
    /// The model called frontend tools; the client runs them and starts a follow-up run.
    FrontendTools {
        /// The calls, as AG-UI tool calls.
        calls: Vec<Value>,
    },
    /// A terminal tool ended the turn.
    EndedByTool {
        /// The tool that ended it.
        tool: String,
        /// What the tool said.
        outcome: Value,
    },
    /// `submit_result` was called with valid arguments.
    Submitted {
        /// The arguments of `submit_result`.
        value: Value,
    },
    /// The tool budget was spent and the model still called tools.
    BudgetSpent {
        /// The model's last text.
        text: String,
    },
    /// The person stopped the run.
    Stopped {
        /// Why.
        reason: String,
    },
    /// The run failed (model, cap, bug).
    Failed {
        /// What went wrong.
        message: String,
    },
}

impl RunOutcome {
    /// How it ended, as its `type` says in JSON (`completed`, `frontendTools`, `endedByTool`,
    /// `submitted`, `budgetSpent`, `stopped`, `failed`).
    pub fn kind(&self) -> &'static str {
        match self {
            RunOutcome::Completed { .. } => "completed",
            RunOutcome::FrontendTools { .. } => "frontendTools",
            RunOutcome::EndedByTool { .. } => "endedByTool",
            RunOutcome::Submitted { .. } => "submitted",
            RunOutcome::BudgetSpent { .. } => "budgetSpent",
            RunOutcome::Stopped { .. } => "stopped",
            RunOutcome::Failed { .. } => "failed",
        }
    }
}

/// What the run asks of the shell, or tells it (not `Clone`: a tool call carries the gate's
/// pass, good for one call).
#[derive(Debug, PartialEq)]
pub enum Output {
    /// An AG-UI event of the run.
    Event(Event),
    /// Call the model with this request.
    CallModel(ModelRequest),
    /// Run this tool call.
    CallTool(ToolInvocation),
    /// Abort a tool call still running (the turn ended or was stopped).
    CancelTool {
        /// The call.
        call_id: String,
    },
    /// Ask the configured repair hook about a call: `({raw, error, tools})`.
    RepairHook(HookRequest),
    /// Page tools ran in this step: list the tab's tools again before the next model step
    /// (a page may register tools per view), then [`Input::PageTools`].
    ListPageTools,
    /// The run ended so.
    Finished(RunOutcome),
}

/// What the repair hook is given.
#[derive(Debug, Clone, PartialEq)]
pub struct HookRequest {
    /// The call.
    pub call_id: String,
    /// The call as the model wrote it.
    pub raw: String,
    /// The name as the model wrote it.
    pub written_name: String,
    /// Why the call is invalid.
    pub error: String,
    /// The tools the run offers.
    pub tools: Vec<ToolSpec>,
}
