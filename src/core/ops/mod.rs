//! The host's operations: the one closed list of what the worker can be asked ([`OpName`]),
//! who may ask each ([`Audience`], checked by [`sender::authorize`]), and the one parser from
//! an operation's name and request to a typed [`Op`].
//!
//! Both the runtime messages (`{op, ...request}` from the extension's pages and content
//! scripts) and the automation surface (`globalThis.webmcpHost[op](request)`) go through it;
//! every operation answers `{ok: true, value}` or `{ok: false, error}` in the shell.
//!
//! The state behind the person's side lives here as values the shell drives: [`runlog`]
//! (what is kept, pushed and saved of every run), [`waits`] (what waits for the person and
//! who to wake), [`checks`] (the answers of `settings`, `testModel`, `checkServer`), with
//! [`runs`] and [`settings`] the values they are made of.
//!
//! Invariant: an operation's name is written once, in [`OpName::as_str`]; a message is
//! authorized by its name before its request is parsed, so an unauthorized sender learns
//! nothing about the request's shape.

#![warn(missing_docs)]

pub mod checks;
mod name;
pub mod request;
pub mod runlog;
pub mod runs;
pub mod sender;
pub mod settings;
pub mod threads;
pub mod waits;

#[cfg(test)]
mod tests;

use serde_json::{Map, Value};

use crate::core::expose::{CallExposedRequest, ExposeRequest};
use crate::core::workbench::server;
pub use name::{Audience, OpName};
pub use request::{AuditRequest, CallToolRequest, ListToolsRequest, RequestError, RunRequest};
use runs::Answer;
pub use sender::{authorize, classify, Refusal, Sender, SenderInfo};

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
    /// `listTools({server})`: a configured MCP server's tools.
    ListServerTools {
        /// The server's name.
        server: String,
    },
    /// `callTool({server, name, args, timeoutMs?})`: an MCP server's tool called by hand.
    CallServerTool(crate::core::workbench::server::ServerCallRequest),
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
    /// `conversations({tabId?})`.
    Conversations {
        /// Only the conversations whose last run had this tab.
        tab_id: Option<i64>,
    },
    /// `conversation({threadId})`.
    Conversation {
        /// The conversation.
        thread_id: String,
    },
    /// `audit({tabId, format?})`.
    Audit(AuditRequest),
    /// `bugReport({runId})`.
    BugReport {
        /// The run.
        run_id: String,
    },
    /// `evaluate({tabId, evals, mode, models?, runs?, timeoutMs?, format?, reload?})`.
    Evaluate(Box<crate::core::evals::plan::EvaluateRequest>),
    /// `evaluate({tabId, simulations, mode: "simulate", models?, userModel?, judgeModel?,
    /// runs?, timeoutMs?, maxSteps?, format?, reload?, replay?})`.
    Simulate(Box<crate::core::evals::simulate::SimulateRequest>),
    /// `crawl({tabId, urls | sitemap, sameOrigin?, limit?, format?})`, `crawl({tabId, stop:
    /// true})` or `crawl({clear: true})`.
    Crawl(Box<crate::core::crawl::CrawlRequest>),
    /// `evalReport({report, format})`.
    EvalReport(Value),
    /// `toEval({runId, name?, prompt?, loosen?, results?})`.
    ToEval {
        /// The run.
        run_id: String,
        /// The request, read by `core::evals::record::to_eval`.
        request: Value,
    },
    /// `replayDiff({runId | transcript, tabId})`.
    ReplayDiff {
        /// The tab played on.
        tab_id: i64,
        /// The run, or the transcript, played.
        source: ReplaySource,
    },
    /// `forget({threadId})`.
    Forget {
        /// The conversation.
        thread_id: String,
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
    /// `callWanted({call})` from a frame's content script.
    CallWanted {
        /// The call's id, as the worker gave it to the frame.
        call: String,
    },
    /// `validateArguments({tabId, name, args, frameId?} | {inputSchema, args})`.
    ValidateArguments(crate::core::workbench::validate::ValidateRequest),
    /// `inventory({query?, developer?})`.
    Inventory {
        /// Only the tools that match (every word, case-insensitive).
        query: Option<String>,
        /// Also the tools marked `debugging`.
        developer: bool,
    },
    /// `diagnose({tabId})`.
    Diagnose(ListToolsRequest),
    /// `timeline({runId})`.
    Timeline {
        /// The run.
        run_id: String,
    },
}

impl Op {
    /// Parses an operation's request (a runtime message's other fields are ignored).
    pub fn parse(name: OpName, request: &Value) -> Result<Op, RequestError> {
        let error = RequestError;
        Ok(match name {
            OpName::Version => Op::Version,
            OpName::ListTools => match server::target(request, "listTools")? {
                server::Target::Tab => Op::ListTools(ListToolsRequest::parse(request)?),
                server::Target::Server(server) => Op::ListServerTools { server },
            },
            OpName::CallTool => match server::target(request, "callTool")? {
                server::Target::Tab => Op::CallTool(CallToolRequest::parse(request)?),
                server::Target::Server(_) => {
                    Op::CallServerTool(server::ServerCallRequest::parse(request)?)
                }
            },
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
            OpName::Conversations => Op::Conversations {
                tab_id: request.get("tabId").and_then(Value::as_i64),
            },
            OpName::Conversation => Op::Conversation {
                thread_id: thread_field(request, "conversation")?,
            },
            OpName::Audit => Op::Audit(AuditRequest::parse(request)?),
            OpName::BugReport => Op::BugReport {
                run_id: crate::core::observe::bundle::run_id(request).map_err(RequestError)?,
            },
            OpName::Evaluate if request.get("mode") == Some(&Value::from("simulate")) => {
                Op::Simulate(Box::new(
                    crate::core::evals::simulate::SimulateRequest::parse(request).map_err(error)?,
                ))
            }
            OpName::Evaluate => Op::Evaluate(Box::new(
                crate::core::evals::plan::EvaluateRequest::parse(request).map_err(error)?,
            )),
            OpName::EvalReport => Op::EvalReport(request.clone()),
            OpName::Crawl => Op::Crawl(Box::new(
                crate::core::crawl::CrawlRequest::parse(request).map_err(RequestError)?,
            )),
            OpName::ToEval => Op::ToEval {
                run_id: run_field(request, "toEval")?,
                request: request.clone(),
            },
            OpName::ReplayDiff => Op::ReplayDiff {
                tab_id: request
                    .get("tabId")
                    .and_then(Value::as_i64)
                    .filter(|id| *id >= 0)
                    .ok_or_else(|| error("replayDiff: `tabId` is required".into()))?,
                source: match (request.get("runId"), request.get("transcript")) {
                    (Some(Value::String(id)), None) if !id.is_empty() => {
                        ReplaySource::Run(id.clone())
                    }
                    (None, Some(Value::String(text))) => ReplaySource::Transcript(text.clone()),
                    _ => {
                        return Err(error(
                            "replayDiff: give `runId` or `transcript` (a string), not both".into(),
                        ))
                    }
                },
            },
            OpName::Forget => Op::Forget {
                thread_id: thread_field(request, "forget")?,
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
            OpName::CallWanted => match request.get("call") {
                Some(Value::String(call)) if !call.is_empty() => {
                    Op::CallWanted { call: call.clone() }
                }
                _ => return Err(error("`call` must be a non-empty string".into())),
            },
            OpName::ValidateArguments => Op::ValidateArguments(
                crate::core::workbench::validate::ValidateRequest::parse(request)?,
            ),
            OpName::Inventory => Op::Inventory {
                query: crate::core::workbench::inventory::parse_query(request)?,
                developer: crate::core::workbench::inventory::parse_developer(request)?,
            },
            OpName::Diagnose => Op::Diagnose(
                ListToolsRequest::parse(request)
                    .map_err(|e| error(e.0.replacen("listTools", "diagnose", 1)))?,
            ),
            OpName::Timeline => Op::Timeline {
                run_id: request
                    .get("runId")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .ok_or_else(|| error("timeline: `runId` is required".into()))?
                    .to_owned(),
            },
        })
    }

    /// The operation's name.
    pub fn name(&self) -> OpName {
        match self {
            Op::Version => OpName::Version,
            Op::ListTools(_) => OpName::ListTools,
            Op::CallTool(_) | Op::CallServerTool(_) => OpName::CallTool,
            Op::ListServerTools { .. } => OpName::ListTools,
            Op::Run(_) => OpName::Run,
            Op::StartRun(_) => OpName::StartRun,
            Op::Events(_) => OpName::Events,
            Op::Stop(_) => OpName::Stop,
            Op::Configure(_) => OpName::Configure,
            Op::Runs { .. } => OpName::Runs,
            Op::RunLog { .. } => OpName::RunLog,
            Op::Conversations { .. } => OpName::Conversations,
            Op::Conversation { .. } => OpName::Conversation,
            Op::Forget { .. } => OpName::Forget,
            Op::Audit(_) => OpName::Audit,
            Op::Evaluate(_) | Op::Simulate(_) => OpName::Evaluate,
            Op::EvalReport(_) => OpName::EvalReport,
            Op::Crawl(_) => OpName::Crawl,
            Op::ToEval { .. } => OpName::ToEval,
            Op::ReplayDiff { .. } => OpName::ReplayDiff,
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
            Op::CallWanted { .. } => OpName::CallWanted,
            Op::BugReport { .. } => OpName::BugReport,
            Op::ValidateArguments(_) => OpName::ValidateArguments,
            Op::Inventory { .. } => OpName::Inventory,
            Op::Diagnose(_) => OpName::Diagnose,
            Op::Timeline { .. } => OpName::Timeline,
        }
    }
}

/// What `replayDiff` plays.
#[derive(Debug, Clone, PartialEq)]
pub enum ReplaySource {
    /// A kept run, by id.
    Run(String),
    /// A replay transcript (JSONL).
    Transcript(String),
}

/// A request's `runId`: a non-empty string.
fn run_field(request: &Value, what: &str) -> Result<String, RequestError> {
    match request.get("runId") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        _ => Err(RequestError(format!(
            "{what}: `runId` is required (a non-empty string)"
        ))),
    }
}

/// A request's `threadId`: a non-empty string.
fn thread_field(request: &Value, what: &str) -> Result<String, RequestError> {
    match request.get("threadId") {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        _ => Err(RequestError(format!(
            "{what}: `threadId` is required (a non-empty string)"
        ))),
    }
}

/// A runtime message as its JSON text (untrusted): within the message cap
/// ([`Limits::max_message_bytes`](crate::core::limits::Limits)), JSON, and naming an
/// operation. Its name and value, for [`authorize`] and then [`Op::parse`].
pub fn read_message(text: &str) -> Result<(OpName, Value), String> {
    let cap = crate::core::limits::Limits::DEFAULT.max_message_bytes;
    if text.len() > cap {
        return Err(format!(
            "the message is {} bytes, over the cap of {cap} (max_message_bytes)",
            text.len()
        ));
    }
    let message: Value =
        serde_json::from_str(text).map_err(|e| format!("the message is not JSON: {e}"))?;
    let name = OpName::of_message(&message).map_err(|e| e.0)?;
    Ok((name, message))
}

/// Parses a runtime message `{op, ...request}` into an operation (name, then request).
pub fn parse_op(message: &Value) -> Result<Op, RequestError> {
    Op::parse(OpName::of_message(message)?, message)
}
