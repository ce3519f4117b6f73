//! The host's front door: an operation as it arrives, from either caller (a runtime message
//! with the sender Chrome describes, or a call of the automation surface,
//! `webmcpHost[op](request)`), read, authorized and parsed in one step, and a page tool call
//! opened as the host's own [`HostCall`] through the gate. The shell hands the arrival over
//! once and performs what comes out; it reads nothing of the message itself.
//!
//! Invariant: a runtime message is authorized from its sender as Chrome describes it
//! ([`classify`], [`authorize`]), never from anything the message says; an operation reaches
//! the shell's router only once authorized and parsed.

use serde_json::Value;

use super::call::HostCall;
use super::checks::{CheckServer, TestModel};
use super::conversations::Conversations;
use super::crawling::Crawling;
use super::listing::{Listing, Settle};
use super::machine::Machine;
use super::mcp::{ExposedReply, Exposing, Exposures, ServerTools, SignIn, SigningOut};
use super::probe::Probing;
use super::report::BugReport;
use super::runlog::{RunLogRead, Runs, ToEval};
use super::server_call::ServerCall;
use super::settings::{Configure, SettingsView};
use super::suite::{Evaluating, Replaying, Simulating};
use super::workbench::{Diagnose, Inventory, Timeline, Validate};
use super::Host;
use crate::core::evals::report::eval_report;
use crate::core::gate::Asker;
use crate::core::ops::{authorize, classify, read_message, Op, OpName, Sender, SenderInfo};
use crate::core::setup::call::page;

/// An operation as it arrives.
#[derive(Debug, Clone, Copy)]
pub enum Arrival<'a> {
    /// A runtime message (untrusted): its JSON text, its sender as Chrome describes it, and
    /// this extension's own id.
    Message {
        /// The message as JSON text.
        text: &'a str,
        /// Chrome's `MessageSender`.
        sender: &'a SenderInfo,
        /// This extension's id.
        own_id: &'a str,
    },
    /// A call of the automation surface: the operation's name and its request.
    Automation {
        /// The operation's name.
        op: &'a str,
        /// Its request.
        request: &'a Value,
    },
}

/// What an arrival opened.
#[derive(Debug)]
pub enum Opened {
    /// An operation the host performs as one of its machines (`callTool` on a tab through
    /// the gate, `audit`, the suites, the crawl, the settings, the conversations, the
    /// workbench, the run logs), to drive with [`Host::step`] to its answer.
    Machine(Box<Machine>),
    /// An MCP tool call outside runs (`callTool` with `server`, by the person; `callExposed`,
    /// by a page's content script, for its origin as Chrome reported it), to perform with the
    /// host's steps ([`Host::server_call`]).
    Server(Box<ServerCall>),
    /// `listTools` of a tab: its listing as calls see it, kept for the calls that follow
    /// ([`Host::list`]); its answer is the listing's `listTools` JSON.
    Listing(Box<Listing>),
    /// Any other operation, authorized and parsed, for the shell's router, with the message's
    /// sender (none for the automation surface).
    Op {
        /// The operation.
        op: Box<Op>,
        /// Who sent it.
        sender: Option<Sender>,
    },
}

/// Why an arrival opened nothing: the error to answer, and for a refused sender a warning
/// for the worker's console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closed {
    /// The operation's error.
    pub error: String,
    /// A refusal, to warn of.
    pub warning: Option<String>,
}

impl From<String> for Closed {
    fn from(error: String) -> Closed {
        Closed {
            error,
            warning: None,
        }
    }
}

/// The refusal of an exposed tool's call from anything but an http(s) page's content script.
const NOT_A_PAGE: &str = "only an http(s) page's content script has exposed tools";

/// What the shell gives the door for the machine an arrival opens: a fresh id (random, never
/// used before) to name it by, and the extension's own origin (`chrome-extension://<id>`,
/// from Chrome), which the settings view and a bug report show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fresh {
    /// The fresh id.
    pub id: String,
    /// The extension's origin.
    pub origin: String,
}

fn machine(machine: Machine) -> Opened {
    Opened::Machine(Box::new(machine))
}

impl Host {
    /// Reads, authorizes and parses an arrival; what it opens is named from `fresh` (a page
    /// tool call's id `call_<id>`, a suite's `eval_<id>` or `sim_<id>`).
    /// the page (unless its request names one).
    pub fn open(&self, arrival: Arrival, fresh: &Fresh) -> Result<Opened, Closed> {
        let call_id = format!("call_{}", fresh.id);
        let (op, sender) = match arrival {
            Arrival::Message {
                text,
                sender,
                own_id,
            } => {
                let sender = classify(own_id, sender);
                let (name, message) = read_message(text)?;
                if let Err(refusal) = authorize(&sender, name) {
                    return Err(Closed {
                        error: refusal.to_string(),
                        warning: Some(format!("webmcp-host: {refusal}")),
                    });
                }
                (Op::parse(name, &message).map_err(|e| e.0)?, Some(sender))
            }
            Arrival::Automation { op, request } => {
                let name = OpName::parse(op).map_err(|e| e.0)?;
                (Op::parse(name, request).map_err(|e| e.0)?, None)
            }
        };
        Ok(match op {
            Op::CallTool(request) => machine(Machine::Call(Box::new(HostCall::asked(
                Asker::CallTool,
                page(&request),
                call_id,
            )))),
            Op::ListTools(request) => {
                Opened::Listing(Box::new(Listing::kept(request.tab_id, Settle::Now)))
            }
            Op::Audit(request) => machine(Machine::Audit(Box::new(Probing::new(request, call_id)))),
            Op::CallServerTool(request) => {
                Opened::Server(Box::new(ServerCall::by_hand(request, &call_id)))
            }
            Op::CallExposed(request) => {
                // A page's content script only, for the origin Chrome reported.
                let page = match &sender {
                    Some(sender @ Sender::ContentScript { tab_id, .. }) => {
                        sender.page_origin().map(|origin| (origin, *tab_id))
                    }
                    _ => None,
                };
                let (origin, tab_id) = page.ok_or_else(|| NOT_A_PAGE.to_owned())?;
                let call = ServerCall::exposed(origin, tab_id, request, &call_id);
                Opened::Server(Box::new(call))
            }
            Op::Evaluate(request) => machine(Machine::Evaluate(Box::new(Evaluating::new(
                *request,
                format!("eval_{}", fresh.id),
                call_id,
            )))),
            Op::Simulate(request) => machine(Machine::Simulate(Box::new(Simulating::new(
                *request,
                format!("sim_{}", fresh.id),
                call_id,
            )))),
            Op::ReplayDiff { tab_id, source } => machine(Machine::Replay(Box::new(
                Replaying::new(tab_id, source, call_id),
            ))),
            Op::Crawl(request) => machine(Machine::Crawl(Box::new(Crawling::new(*request)))),
            Op::Settings => machine(Machine::Settings(Box::new(SettingsView::new(
                &fresh.origin,
            )))),
            Op::Configure(request) => {
                machine(Machine::Configure(Box::new(Configure::new(&request))))
            }
            Op::Conversations { tab_id } => machine(Machine::Conversations(Box::new(
                Conversations::list(tab_id),
            ))),
            Op::Conversation { thread_id } => machine(Machine::Conversations(Box::new(
                Conversations::show(&thread_id),
            ))),
            Op::Forget { thread_id } => machine(Machine::Conversations(Box::new(
                Conversations::forget(&thread_id),
            ))),
            Op::ValidateArguments(request) => {
                machine(Machine::Validate(Box::new(Validate::new(request))))
            }
            Op::Inventory { query, developer } => machine(Machine::Inventory(Box::new(
                Inventory::new(query, developer),
            ))),
            Op::Diagnose(request) => {
                machine(Machine::Diagnose(Box::new(Diagnose::new(request.tab_id))))
            }
            Op::Timeline { run_id } => machine(Machine::Timeline(Box::new(Timeline::new(&run_id)))),
            Op::BugReport { run_id } => machine(Machine::BugReport(Box::new(BugReport::new(
                &run_id,
                &fresh.origin,
                call_id,
            )))),
            Op::Runs { tab_id } => machine(Machine::Runs(Box::new(Runs::new(tab_id)))),
            Op::RunLog { run_id, since } => {
                machine(Machine::RunLog(Box::new(RunLogRead::new(&run_id, since))))
            }
            Op::Version => machine(Machine::Answered(Some(Ok(crate::VERSION.into())))),
            Op::EvalReport(request) => machine(Machine::Answered(Some(eval_report(&request)))),
            Op::TestModel(request) => machine(Machine::TestModel(Box::new(TestModel::new(
                request,
                &fresh.origin,
            )))),
            Op::CheckServer(request) => {
                machine(Machine::CheckServer(Box::new(CheckServer::new(request))))
            }
            Op::ListServerTools { server } => {
                machine(Machine::ServerTools(Box::new(ServerTools::new(&server))))
            }
            Op::ToEval { run_id, request } => {
                machine(Machine::ToEval(Box::new(ToEval::new(&run_id, request))))
            }
            Op::Expose(request) => machine(Machine::Expose(Box::new(Exposing::new(request)))),
            Op::Exposures => machine(Machine::Exposures(Exposures)),
            Op::ExposedTools => {
                // A page's content script only, for the origin Chrome reported.
                let origin = sender.as_ref().and_then(Sender::page_origin);
                let origin = origin.ok_or_else(|| NOT_A_PAGE.to_owned())?;
                machine(Machine::ExposedTools(Box::new(ExposedReply::new(origin))))
            }
            Op::SignIn(request) => machine(Machine::SignIn(Box::new(SignIn::new(request)))),
            Op::SignOut(request) => machine(Machine::SignOut(Box::new(SigningOut::new(request)))),
            Op::AuthState => machine(Machine::AuthState(Box::default())),
            op => Opened::Op {
                op: Box::new(op),
                sender,
            },
        })
    }
}

#[cfg(test)]
mod tests;
