//! What the drive and the worker say to each other: the drive's [`Action`]s, the worker's
//! [`Answer`]s, the tool calls it hands out and what a run starts from ([`Setup`]).

use serde_json::{Map, Value};

use crate::core::agui::Event;
use crate::core::gate::{McpCall, Permit};
use crate::core::http::HttpRequest;
use crate::core::mcp::tools::McpTool;
use crate::core::page::call::{CallRequest, Listed};
use crate::core::provider::prompt::Speaker;
use crate::core::provider::ModelConfig;
use crate::core::restart::Intent;
use crate::core::run::{Input, PendingInput, RunOutcome};

/// A timer the drive asked for; the shell reports [`Answer::Timeout`] with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimerId(pub u64);

/// A model call the drive asked for (a fetch, or Chrome's model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FetchId(pub u64);

/// What a tool of the run is bound to, beyond its spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Binding {
    /// A page tool as the run began with it, and the document it was listed from.
    Page(Listed),
    /// An MCP server's tool.
    Mcp {
        /// The server's name.
        server: String,
        /// The tool as the server listed it.
        tool: McpTool,
        /// Whether the person confirms each call.
        needs_confirmation: bool,
        /// Whether a call acts (is not read-only nor declared harmless), whatever the
        /// server's trust: its intent is stored while it runs.
        acting: bool,
    },
}

/// What a drive starts from besides its run.
#[derive(Debug, Clone)]
pub struct Setup {
    /// The model the run calls.
    pub model: ModelConfig,
    /// The model's key, or why it could not be read (the first model call then fails).
    pub key: Result<Option<String>, String>,
    /// The run's tab, if any.
    pub tab_id: Option<i64>,
    /// The origin of the tab's top page when the run began: the tab's tools are listed again
    /// during the run only while it shows that origin.
    pub origin: Option<String>,
    /// Page and MCP tools by the name the run gives them.
    pub bindings: Vec<(String, Binding)>,
    /// Whether a repair hook is set: calls repair could not make valid are handed to it.
    pub hook: bool,
}

/// An MCP call the person is asked to allow ([`Action::Confirm`]), always in the extension's
/// own UI (its Pending view, in the popup, the side panel or a window of its own), never in a
/// tab: the call acts on a server, not on the page, and a page's renderer (which a hostile site
/// may control) must not be the one that answers.
#[derive(Debug, Clone, PartialEq)]
pub struct Confirmation {
    /// The run (turn) that asks.
    pub turn_id: String,
    /// The run's id of the call.
    pub call_id: String,
    /// The server's name.
    pub server: String,
    /// The tool's name on its server.
    pub tool: String,
    /// The call's arguments.
    pub arguments: Map<String, Value>,
    /// The question shown, every argument in it ([`crate::core::confirm::mcp_tool`]).
    pub question: String,
}

/// A tool call for the shell to carry out; it answers with [`Answer::ToolDone`].
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCall {
    /// The host's clock: `current_time`.
    CurrentTime,
    /// A page tool: run the page call machine for this request.
    Page(CallRequest),
    /// An MCP server's tool (confirmed already when it needed it: [`Action::Confirm`]).
    Mcp {
        /// The server's name.
        server: String,
        /// The tool as the server listed it (its name, its output schema).
        tool: McpTool,
        /// The call's arguments.
        arguments: Map<String, Value>,
    },
}

/// A run's call as the shell performs it, each with its permit.
#[derive(Debug)]
pub enum Gated {
    /// The host's clock: `current_time`.
    CurrentTime,
    /// A page tool: run the page call machine with this permit.
    Page(Permit<CallRequest>),
    /// An MCP server's tool.
    Mcp {
        /// The server's name.
        server: String,
        /// The call.
        call: Permit<McpCall>,
    },
}

impl Permit<ToolCall> {
    /// The call as the shell performs it.
    pub fn gated(self) -> Gated {
        let (call, stamp) = self.split();
        match call {
            ToolCall::CurrentTime => Gated::CurrentTime,
            ToolCall::Page(request) => Gated::Page(stamp.map(|()| request)),
            ToolCall::Mcp {
                server,
                tool,
                arguments,
            } => Gated::Mcp {
                server,
                call: stamp.map(|()| McpCall { tool, arguments }),
            },
        }
    }
}

/// What the drive asks of the shell, or tells it.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// A run event: keep it and show it.
    Event(Event),
    /// Start this request; answer with [`Answer::Head`] or [`Answer::FetchFailed`].
    Fetch {
        /// The model call.
        id: FetchId,
        /// What to send.
        request: HttpRequest,
    },
    /// Read the next piece of the body: [`Answer::Body`] or [`Answer::FetchFailed`].
    Read {
        /// The model call.
        id: FetchId,
    },
    /// Abort the request (its answers, if any, are ignored).
    Abort {
        /// The model call.
        id: FetchId,
    },
    /// Ask whether Chrome's built-in model is available: [`Answer::ChromeAvailability`].
    ChromeAvailability {
        /// The model call.
        id: FetchId,
    },
    /// Prompt Chrome's built-in model: [`Answer::ChromeOutput`].
    ChromePrompt {
        /// The call's id.
        id: FetchId,
        /// The system prompt.
        system: String,
        /// The conversation, by speaker.
        turns: Vec<(Speaker, String)>,
    },
    /// Report [`Answer::Timeout`] after `ms`.
    Timer {
        /// The timer.
        id: TimerId,
        /// How long, in milliseconds.
        ms: u32,
    },
    /// The timer is no longer needed.
    CancelTimer {
        /// The timer.
        id: TimerId,
    },
    /// Store the intents of the run's acting calls under way, replacing those stored (none:
    /// remove them), after one of them ended.
    Intents(Vec<Intent>),
    /// Store the intents with the new acting call `call_id`'s first, and say how it went:
    /// [`Answer::IntentsStored`]. The call starts only once its intent is stored; an intent
    /// that cannot be stored (session storage full) refuses the call (restart safety is never
    /// given up silently).
    StoreIntents {
        /// The call the new intent is of.
        call_id: String,
        /// Every intent of the run, the new one included.
        intents: Vec<Intent>,
    },
    /// Ask the person to allow an MCP call: [`Answer::Confirmed`]. A wait for the person:
    /// the call has not started (no intent is stored for it).
    Confirm(Box<Confirmation>),
    /// Run a tool call (through the worker's middleware layers, `webmcpHost.use`).
    Tool {
        /// The run's id of the call.
        call_id: String,
        /// What to run, with the gate's permit ([`crate::core::gate`]).
        call: Box<Permit<ToolCall>>,
        /// What middleware layers are told of it: `{callId, turnId, name, args, context,
        /// callCount, source}` (`source`: `page`, `mcp` or `local`).
        info: Value,
    },
    /// Abort a page call still running in its frame.
    CancelInFrame {
        /// The run's tab.
        tab_id: i64,
        /// The frame where the call runs.
        frame_id: i64,
        /// The call's id in the page.
        call_id: String,
    },
    /// Wait for the person to answer these visitor calls: [`Answer::Person`].
    WaitForPerson(Vec<PendingInput>),
    /// Ask the repair hook (`webmcpHost.repairHook`) about a call repair could not make
    /// valid: `{raw, name, error, tools}`; its answer is [`Answer::Hook`].
    RepairHook {
        /// The call.
        call_id: String,
        /// What the hook is given.
        request: Value,
    },
    /// List the tab's tools again (a page tool ran: the page may offer others now), then
    /// [`Answer::TabTools`].
    ListTabTools {
        /// The run's tab.
        tab_id: i64,
    },
    /// Keep the worker from idling out (`true`) or let it idle (`false`).
    KeepAlive(bool),
    /// The run ended.
    Finished(RunOutcome),
}

/// What the shell feeds back.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A request's status and `Retry-After` header arrived.
    Head {
        /// The fetch.
        id: FetchId,
        /// The HTTP status (0: none).
        status: u16,
        /// The `Retry-After` header, if any.
        retry_after: Option<String>,
    },
    /// The next piece of a body as text; `None` at its end.
    Body {
        /// The fetch.
        id: FetchId,
        /// The piece of text; `None` at the end of the body.
        text: Option<String>,
    },
    /// The request could not be made, or its body broke.
    FetchFailed {
        /// The model call.
        id: FetchId,
        /// What went wrong.
        message: String,
    },
    /// `LanguageModel.availability()`, or why it could not be asked.
    ChromeAvailability {
        /// The model call.
        id: FetchId,
        /// What `LanguageModel.availability()` said.
        availability: String,
    },
    /// Chrome's model's output pieces, or why it failed.
    ChromeOutput {
        /// The model call.
        id: FetchId,
        /// The pieces of the answer, or why it failed.
        output: Result<Vec<String>, String>,
    },
    /// A timer ran out.
    Timeout(TimerId),
    /// The intents of [`Action::StoreIntents`] were stored, or why not.
    IntentsStored {
        /// The call the new intent is of.
        call_id: String,
        /// Why they could not be stored, if they could not.
        error: Option<String>,
    },
    /// A tool call ended with this answer.
    ToolDone {
        /// The call.
        call_id: String,
        /// How it ended.
        answer: crate::core::run::ToolAnswer,
    },
    /// The person's answers to visitor calls (none when the wait ended otherwise).
    Person(Vec<Input>),
    /// The repair hook's answer: `{name, arguments}` to call instead, or `None` (no answer,
    /// `null`, it threw, or it took too long).
    Hook {
        /// The call.
        call_id: String,
        /// The call it proposes.
        call: Option<Value>,
    },
    /// Whether the person allowed a call of [`Action::Confirm`] (no answer: not allowed).
    Confirmed {
        /// The call.
        call_id: String,
        /// Whether it may run.
        allowed: bool,
    },
    /// The person stopped the run.
    Stop {
        /// Why.
        reason: String,
    },
    /// The tab's tools ([`Action::ListTabTools`]), or why they could not be listed.
    TabTools(crate::core::page::tabs::Listed),
}

/// The run names of bound tools whose own name differs, with that own name.
pub fn own_names(bindings: &[(String, Binding)]) -> Vec<(String, String)> {
    (bindings.iter())
        .filter_map(|(run_name, binding)| {
            let own = match binding {
                Binding::Page(listed) => &listed.tool.name,
                Binding::Mcp { tool, .. } => &tool.name,
            };
            (own != run_name).then(|| (run_name.clone(), own.clone()))
        })
        .collect()
}
