//! What the gate decides after the layers, for a call that passed them: whether it runs
//! without a question, or the person is asked first, where, and in which words. One function,
//! [`decide`], for every source (page tools, MCP tools of runs, called by hand and exposed to
//! a page) and every asker, so that the rules below hold on every path alike:
//!
//! - A page tool that acts (its `consequentialHint`, as the site policies left it: an
//!   `alwaysConfirm` policy sets it) is asked about **in the page**, unless a site policy's
//!   `allowActing` names its origin; then it runs, and the call's record says how it was
//!   allowed ([`Decision::Runs`]'s `allowed`).
//! - An MCP tool that acts is asked about **in the extension** (never by a page's renderer),
//!   whoever asks: a run's agent, a call by hand, or a page calling a tool exposed to it.
//! - A question shows every argument, or the call is refused ([`crate::core::confirm`]).
//!
//! What follows the decision is the caller's to perform: a run stores an acting call's intent
//! before it runs (a call whose intent cannot be stored is refused), and every call is
//! recorded with what was decided.

use serde_json::{Map, Value};

use super::Asker;
use crate::core::confirm;
use crate::core::page::tool::PageTool;

/// What a call that passed the layers is to.
#[derive(Debug, Clone, Copy)]
pub enum Acting<'a> {
    /// A page tool, with its hints as the site policies left them.
    Page(&'a PageTool),
    /// An MCP server's tool.
    Mcp {
        /// The server's name.
        server: &'a str,
        /// The tool's name on the server.
        tool: &'a str,
        /// Whether a call acts (MCP's defaults: a tool not read-only is destructive unless it
        /// says otherwise; a trusted server's tools do not), as
        /// [`crate::core::mcp::tools::McpTool::needs_confirmation`] says.
        acts: bool,
        /// The origin of the page that calls it, for a tool exposed to a page.
        page: Option<&'a str>,
    },
}

/// Where the person is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskedIn {
    /// In the page, with `confirm()` (page tools: the page runs them anyway).
    Page,
    /// In the extension's own Pending view (a popup, the side panel or a window of its own).
    Extension,
}

/// The gate's decision for a call after the layers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It runs without a question; `allowed` says how a call that acts was let through
    /// without one (`allowed by site policy <origin>`).
    Runs {
        /// How an acting call was allowed without the question.
        allowed: Option<String>,
    },
    /// The person is asked first; it runs only on yes.
    Ask {
        /// The question, every argument in it.
        question: String,
        /// Where it is asked.
        asked_in: AskedIn,
    },
}

impl Decision {
    /// The question, when there is one.
    pub fn question(&self) -> Option<&str> {
        match self {
            Decision::Ask { question, .. } => Some(question),
            Decision::Runs { .. } => None,
        }
    }
}

/// The decision for a call of `acting` with `args`, asked for by `asker`. `Err`: the call
/// must be asked about and its arguments cannot be shown honestly; it is not made.
pub fn decide(asker: Asker, acting: Acting, args: &Map<String, Value>) -> Result<Decision, String> {
    match acting {
        Acting::Page(tool) => {
            let hints = &tool.annotations;
            match (hints.consequential_hint, hints.allow_acting) {
                (false, _) => Ok(Decision::Runs { allowed: None }),
                (true, true) => Ok(Decision::Runs {
                    allowed: Some(format!("allowed by site policy {}", tool.origin)),
                }),
                (true, false) => Ok(Decision::Ask {
                    question: confirm::page_tool(
                        &tool.name,
                        &tool.origin,
                        args,
                        hints.hints_unknown,
                    )?,
                    asked_in: AskedIn::Page,
                }),
            }
        }
        Acting::Mcp { acts: false, .. } => Ok(Decision::Runs { allowed: None }),
        Acting::Mcp {
            server, tool, page, ..
        } => {
            let question = match (page, asker) {
                (Some(origin), _) => confirm::exposed_tool(origin, server, tool, args)?,
                (None, Asker::Run) => confirm::mcp_tool(server, tool, args)?,
                (None, _) => confirm::manual_mcp_tool(server, tool, args)?,
            };
            Ok(Decision::Ask {
                question,
                asked_in: AskedIn::Extension,
            })
        }
    }
}
