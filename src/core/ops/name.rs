//! The names of the host's operations, and who may ask for each: the one place an
//! operation's name is written ([`OpName::as_str`]) and the authorization table
//! ([`OpName::audience`]).

use serde_json::Value;

use super::request::RequestError;
use crate::core::tool::kind;

/// Every operation the worker performs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpName {
    /// The host's version.
    Version,
    /// A tab's page tools, every frame merged.
    ListTools,
    /// Calls one page tool.
    CallTool,
    /// Runs a turn and resolves when it ends.
    Run,
    /// Starts a turn and resolves at once with its ids.
    StartRun,
    /// A run's AG-UI events so far.
    Events,
    /// Stops a run.
    Stop,
    /// Changes the model registry, keys, servers or site policies.
    Configure,
    /// The kept runs, newest first.
    Runs,
    /// A run's log, also after a worker restart.
    RunLog,
    /// The items waiting for the person.
    Pending,
    /// Answers a visitor input or allows a confirmation.
    Answer,
    /// Declines a visitor input or a confirmation.
    Decline,
    /// What the person's side shows: models, servers, masked keys, presets.
    Settings,
    /// Checks a model's endpoint and key.
    TestModel,
    /// Connects to an MCP server, lists its tools and closes.
    CheckServer,
    /// Signs in to an MCP server (OAuth).
    SignIn,
    /// Forgets an MCP server's tokens.
    SignOut,
    /// Each configured server's sign-in.
    AuthState,
    /// Offers (or takes back) an MCP server's tools to an origin's own WebMCP.
    Expose,
    /// The exposures.
    Exposures,
    /// The MCP tools exposed to the sender's page origin.
    ExposedTools,
    /// Runs one of them.
    CallExposed,
    /// A frame's tools changed: the person's side lists them again.
    ToolsChanged,
    /// Whether a page call the person just allowed in the page is still wanted (its run
    /// still going): asked by the content script before the tool starts.
    CallWanted,
    /// The kept conversations, most recently updated first.
    Conversations,
    /// One kept conversation with its messages.
    Conversation,
    /// Deletes a kept conversation.
    Forget,
    /// Audits a tab's tools.
    Audit,
    /// A run's bug report: one file with its events, the tab's tools, a screenshot, versions.
    BugReport,
    /// Runs an eval suite on a tab (smoke or agent mode).
    Evaluate,
    /// Writes an evaluation's answer as JSON, JUnit XML or HTML.
    EvalReport,
    /// Makes an eval case of a finished run.
    ToEval,
    /// Plays a recorded run's calls against the site now and reports what changed.
    ReplayDiff,
    /// Checks arguments against a tool's input schema, each error at its field.
    ValidateArguments,
    /// Every open tab's tools, searchable, with the definitions that changed.
    Inventory,
    /// Why a tab shows no tools.
    Diagnose,
    /// A run's log read as a timeline.
    Timeline,
}

/// Who may ask for an operation by runtime message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    /// Only the extension's own pages (popup, side panel).
    ExtensionPages,
    /// Also the content script of a tab's top frame.
    TopFrame,
    /// Also the content script of any frame.
    AnyFrame,
}

impl OpName {
    /// Every operation, in the order the docs list them.
    pub const ALL: [OpName; 38] = [
        OpName::Version,
        OpName::ListTools,
        OpName::CallTool,
        OpName::Audit,
        OpName::Evaluate,
        OpName::EvalReport,
        OpName::ToEval,
        OpName::ReplayDiff,
        OpName::ValidateArguments,
        OpName::Inventory,
        OpName::Diagnose,
        OpName::Run,
        OpName::StartRun,
        OpName::Events,
        OpName::Stop,
        OpName::Configure,
        OpName::Runs,
        OpName::RunLog,
        OpName::BugReport,
        OpName::Timeline,
        OpName::Conversations,
        OpName::Conversation,
        OpName::Forget,
        OpName::Pending,
        OpName::Answer,
        OpName::Decline,
        OpName::Settings,
        OpName::TestModel,
        OpName::CheckServer,
        OpName::SignIn,
        OpName::SignOut,
        OpName::AuthState,
        OpName::Expose,
        OpName::Exposures,
        OpName::ExposedTools,
        OpName::CallExposed,
        OpName::ToolsChanged,
        OpName::CallWanted,
    ];

    /// The operation's name, as messages and `webmcpHost` spell it.
    pub const fn as_str(self) -> &'static str {
        match self {
            OpName::Version => "version",
            OpName::ListTools => "listTools",
            OpName::CallTool => "callTool",
            OpName::Run => "run",
            OpName::StartRun => "startRun",
            OpName::Events => "events",
            OpName::Stop => "stop",
            OpName::Configure => "configure",
            OpName::Runs => "runs",
            OpName::RunLog => "runLog",
            OpName::Pending => "pending",
            OpName::Answer => "answer",
            OpName::Decline => "decline",
            OpName::Settings => "settings",
            OpName::TestModel => "testModel",
            OpName::CheckServer => "checkServer",
            OpName::SignIn => "signIn",
            OpName::SignOut => "signOut",
            OpName::AuthState => "authState",
            OpName::Expose => "expose",
            OpName::Exposures => "exposures",
            OpName::ExposedTools => "exposedTools",
            OpName::CallExposed => "callExposed",
            OpName::ToolsChanged => "toolsChanged",
            OpName::CallWanted => "callWanted",
            OpName::Conversations => "conversations",
            OpName::Conversation => "conversation",
            OpName::Forget => "forget",
            OpName::Audit => "audit",
            OpName::BugReport => "bugReport",
            OpName::Evaluate => "evaluate",
            OpName::EvalReport => "evalReport",
            OpName::ToEval => "toEval",
            OpName::ReplayDiff => "replayDiff",
            OpName::ValidateArguments => "validateArguments",
            OpName::Inventory => "inventory",
            OpName::Diagnose => "diagnose",
            OpName::Timeline => "timeline",
        }
    }

    /// Who may ask for it (the authorization table; see [`super::sender::authorize`]).
    pub fn audience(self) -> Audience {
        match self {
            OpName::ExposedTools | OpName::CallExposed => Audience::TopFrame,
            OpName::ToolsChanged | OpName::CallWanted => Audience::AnyFrame,
            _ => Audience::ExtensionPages,
        }
    }

    /// Whether the automation surface (`globalThis.webmcpHost`) offers it: every operation
    /// but those that answer a page's content script.
    pub fn automated(self) -> bool {
        self.audience() == Audience::ExtensionPages
    }

    /// The operation a name asks for, or an error listing the known names.
    pub fn parse(name: &str) -> Result<OpName, RequestError> {
        OpName::ALL
            .into_iter()
            .find(|op| op.as_str() == name)
            .ok_or_else(|| {
                let known: Vec<&str> = OpName::ALL.iter().map(|op| op.as_str()).collect();
                RequestError(format!(
                    "unknown op `{}`; known: {}",
                    name.chars().take(64).collect::<String>(),
                    known.join(", ")
                ))
            })
    }

    /// The name of a runtime message's operation (its `op`).
    pub fn of_message(message: &Value) -> Result<OpName, RequestError> {
        match message.get("op") {
            Some(Value::String(op)) => OpName::parse(op),
            Some(other) => Err(RequestError(format!(
                "`op` must be a string, not {}",
                kind(other)
            ))),
            None => Err(RequestError("the message has no `op`".into())),
        }
    }
}
