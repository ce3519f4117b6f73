//! The host's operations: the one closed list of what the worker can be asked ([`OpName`]),
//! who may ask each ([`Audience`], checked by [`sender::authorize`]), and the one parser from
//! an operation's name and request to a typed [`Op`].
//!
//! Both the runtime messages (`{op, ...request}` from the extension's pages and content
//! scripts) and the automation surface (`globalThis.webmcpHost[op](request)`) go through it;
//! every operation answers `{ok: true, value}` or `{ok: false, error}` in the shell.
//!
//! Invariant: an operation's name is written once, in [`OpName::as_str`]; a message is
//! authorized by its name before its request is parsed, so an unauthorized sender learns
//! nothing about the request's shape.

pub mod request;
pub mod runs;
pub mod sender;
pub mod settings;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::core::expose::{CallExposedRequest, ExposeRequest};
use crate::core::tool::kind;
pub use request::{CallToolRequest, ListToolsRequest, RequestError, RunRequest};
use runs::Answer;
pub use sender::{authorize, classify, Refusal, Sender, SenderInfo};

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
    pub const ALL: [OpName; 24] = [
        OpName::Version,
        OpName::ListTools,
        OpName::CallTool,
        OpName::Run,
        OpName::StartRun,
        OpName::Events,
        OpName::Stop,
        OpName::Configure,
        OpName::Runs,
        OpName::RunLog,
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
    ];

    /// The operation's name, as messages and `webmcpHost` spell it.
    pub fn as_str(self) -> &'static str {
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
        }
    }

    /// Who may ask for it (the authorization table; see [`sender::authorize`]).
    pub fn audience(self) -> Audience {
        match self {
            OpName::ExposedTools | OpName::CallExposed => Audience::TopFrame,
            OpName::ToolsChanged => Audience::AnyFrame,
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

/// An operation with its request, parsed. The requests of the operations another area
/// performs with its own parser (a run's driver, the MCP sign-in, the settings checks) stay
/// JSON values here.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `version()`.
    Version,
    /// `listTools({tabId})`.
    ListTools(ListToolsRequest),
    /// `callTool({tabId, name, args, frameId?, timeoutMs?})`.
    CallTool(CallToolRequest),
    /// `run({...})`, parsed by the run's driver.
    Run(Value),
    /// `startRun({...as run, visitorTools?})`, checked as a run request.
    StartRun(Map<String, Value>),
    /// `events({runId})`.
    Events(Value),
    /// `stop({runId, reason?})`.
    Stop(Value),
    /// `configure({models?, default?, keys?, servers?, sites?})`.
    Configure(Value),
    /// `runs({tabId?})`.
    Runs {
        /// Only the runs of this tab.
        tab_id: Option<i64>,
    },
    /// `runLog({runId, since?})`.
    RunLog {
        /// The run.
        run_id: String,
        /// The index of the first event wanted.
        since: usize,
    },
    /// `pending()`.
    Pending,
    /// `answer({runId, callId, value})` or `decline({runId, callId, reason?})`.
    Answer(Answer),
    /// `settings()`.
    Settings,
    /// `testModel({name} | {model})`.
    TestModel(Value),
    /// `checkServer({name} | {server})`.
    CheckServer(Value),
    /// `signIn({server, ...})`.
    SignIn(Value),
    /// `signOut({server})`.
    SignOut(Value),
    /// `authState()`.
    AuthState,
    /// `expose({server, origin, enabled, tools?})`.
    Expose(ExposeRequest),
    /// `exposures()`.
    Exposures,
    /// `exposedTools()` from a page's content script.
    ExposedTools,
    /// `callExposed({name, args})` from a page's content script.
    CallExposed(CallExposedRequest),
    /// `toolsChanged()` from a frame's content script.
    ToolsChanged,
}

impl Op {
    /// Parses an operation's request (a runtime message's other fields are ignored).
    pub fn parse(name: OpName, request: &Value) -> Result<Op, RequestError> {
        let error = RequestError;
        Ok(match name {
            OpName::Version => Op::Version,
            OpName::ListTools => Op::ListTools(ListToolsRequest::parse(request)?),
            OpName::CallTool => Op::CallTool(CallToolRequest::parse(request)?),
            OpName::Run => Op::Run(request.clone()),
            OpName::StartRun => {
                let map = request
                    .as_object()
                    .ok_or_else(|| error("startRun: the request must be an object".into()))?;
                // Checked here so that a bad request is an error of this call, not a run
                // that fails.
                RunRequest::parse(request)?;
                request::visitor_tools(request).map_err(error)?;
                Op::StartRun(map.clone())
            }
            OpName::Events => Op::Events(request.clone()),
            OpName::Stop => Op::Stop(request.clone()),
            OpName::Configure => Op::Configure(request.clone()),
            OpName::Runs => Op::Runs {
                tab_id: request.get("tabId").and_then(Value::as_i64),
            },
            OpName::RunLog => Op::RunLog {
                run_id: request
                    .get("runId")
                    .and_then(Value::as_str)
                    .ok_or_else(|| error("runLog: `runId` is required".into()))?
                    .to_owned(),
                since: request.get("since").and_then(Value::as_u64).unwrap_or(0) as usize,
            },
            OpName::Pending => Op::Pending,
            OpName::Answer => Op::Answer(Answer::parse_answer(request).map_err(error)?),
            OpName::Decline => Op::Answer(Answer::parse_decline(request).map_err(error)?),
            OpName::Settings => Op::Settings,
            OpName::TestModel => Op::TestModel(request.clone()),
            OpName::CheckServer => Op::CheckServer(request.clone()),
            OpName::SignIn => Op::SignIn(request.clone()),
            OpName::SignOut => Op::SignOut(request.clone()),
            OpName::AuthState => Op::AuthState,
            OpName::Expose => Op::Expose(ExposeRequest::parse(request).map_err(error)?),
            OpName::Exposures => Op::Exposures,
            OpName::ExposedTools => Op::ExposedTools,
            OpName::CallExposed => {
                Op::CallExposed(CallExposedRequest::parse(request).map_err(error)?)
            }
            OpName::ToolsChanged => Op::ToolsChanged,
        })
    }

    /// The operation's name.
    pub fn name(&self) -> OpName {
        match self {
            Op::Version => OpName::Version,
            Op::ListTools(_) => OpName::ListTools,
            Op::CallTool(_) => OpName::CallTool,
            Op::Run(_) => OpName::Run,
            Op::StartRun(_) => OpName::StartRun,
            Op::Events(_) => OpName::Events,
            Op::Stop(_) => OpName::Stop,
            Op::Configure(_) => OpName::Configure,
            Op::Runs { .. } => OpName::Runs,
            Op::RunLog { .. } => OpName::RunLog,
            Op::Pending => OpName::Pending,
            Op::Answer(answer) if answer.verdict.is_ok() => OpName::Answer,
            Op::Answer(_) => OpName::Decline,
            Op::Settings => OpName::Settings,
            Op::TestModel(_) => OpName::TestModel,
            Op::CheckServer(_) => OpName::CheckServer,
            Op::SignIn(_) => OpName::SignIn,
            Op::SignOut(_) => OpName::SignOut,
            Op::AuthState => OpName::AuthState,
            Op::Expose(_) => OpName::Expose,
            Op::Exposures => OpName::Exposures,
            Op::ExposedTools => OpName::ExposedTools,
            Op::CallExposed(_) => OpName::CallExposed,
            Op::ToolsChanged => OpName::ToolsChanged,
        }
    }
}

/// Parses a runtime message `{op, ...request}` into an operation (name, then request).
pub fn parse_op(message: &Value) -> Result<Op, RequestError> {
    Op::parse(OpName::of_message(message)?, message)
}
