//! The answers of the calls the worker carries out with what a run's start set up, in the
//! shape of `callTool` (`{ok, result | error}`): the host's clock, and an MCP server's tool
//! (declined by the person, its server not connected, or its result checked against the
//! tool's output schema); and the page call a `callTool` request asks for. Invariant: a structured result that breaks the tool's declared
//! schema is an error, never passed on as a result.

use serde_json::{json, Value};

use crate::core::agui::ContentPart;
use crate::core::mcp::tools::{broken_output, structured_errors, McpTool};
use crate::core::mcp::CallResult;
use crate::core::ops::request::CallToolRequest;
use crate::core::page::call::{CallAnswer, CallRequest};
use crate::core::run::local::current_time_result;
use crate::core::run::page::page_answer;
use crate::core::run::{ToolAnswer, ToolOutcome};

/// The page call a `callTool` request asks for.
pub fn page(request: &CallToolRequest) -> CallRequest {
    CallRequest {
        tab_id: request.tab_id,
        name: request.name.clone(),
        args: request.args.clone(),
        frame_id: request.frame_id,
        timeout_ms: request.timeout_ms,
        call: request.call.clone(),
        expect: None,
    }
}

/// `current_time`'s answer at `now_ms` with the person's UTC offset.
pub fn current_time(now_ms: f64, utc_offset_minutes: i32) -> Value {
    json!({"ok": true, "result": current_time_result(now_ms, utc_offset_minutes)})
}

/// The answer of an MCP call whose server is not connected in this run.
pub fn not_connected(server: &str) -> Value {
    json!({"ok": false, "error": format!("the MCP server {server} is not connected")})
}

/// An MCP call's answer from what the server said: `{ok: true, result, parts?}` (`parts`:
/// the result's media as AG-UI content parts, when it has any) or `{ok: false, error}`.
pub fn mcp(tool: &McpTool, result: CallResult) -> Value {
    match result {
        CallResult::Ok {
            text,
            structured,
            parts,
        } => match structured_errors(tool, structured.as_ref()) {
            None if parts.is_empty() => json!({"ok": true, "result": text}),
            None => json!({"ok": true, "result": text, "parts": parts}),
            Some((error, errors)) => broken_output(error, errors),
        },
        CallResult::Error(error) => json!({"ok": false, "error": error}),
    }
}

/// A run's tool call as it came back from where it ran, before the run reads it: a page
/// call's typed answer, an MCP server's result for its tool, the host's clock, or a server
/// that is not connected.
#[derive(Debug, Clone, PartialEq)]
pub enum Called {
    /// A page call's answer.
    Page(CallAnswer),
    /// What an MCP server answered for `tool`.
    Mcp {
        /// The tool as the server listed it (its output schema).
        tool: Box<McpTool>,
        /// The server's answer.
        result: CallResult,
    },
    /// `current_time` at `now_ms`, with the person's UTC offset.
    Time {
        /// The worker's clock.
        now_ms: f64,
        /// The offset, minutes.
        utc_offset_minutes: i32,
    },
    /// The call's MCP server is not connected in this run.
    NotConnected(String),
}

impl Called {
    /// In `callTool`'s shape, as the person's middleware layers get it from `next()`.
    pub fn to_json(&self) -> Value {
        match self {
            Called::Page(answer) => answer.to_json(),
            Called::Mcp { tool, result } => mcp(tool, result.clone()),
            Called::Time {
                now_ms,
                utc_offset_minutes,
            } => current_time(*now_ms, *utc_offset_minutes),
            Called::NotConnected(server) => not_connected(server),
        }
    }

    /// As the run takes it (no JSON read back).
    pub fn answer(self) -> ToolAnswer {
        match self {
            Called::Page(answer) => page_answer(&answer),
            Called::Mcp { tool, result } => match result {
                CallResult::Ok {
                    text,
                    structured,
                    parts,
                } => match structured_errors(&tool, structured.as_ref()) {
                    Some((error, errors)) => ToolAnswer {
                        output_errors: Some(errors),
                        ..ToolAnswer::error(error)
                    },
                    None => {
                        let media: Vec<ContentPart> = (parts.into_iter())
                            .filter(|part| !matches!(part, ContentPart::Text { .. }))
                            .collect();
                        match media.is_empty() {
                            true => ToolOutcome::Ok(text).into(),
                            false => ToolOutcome::Media { text, parts: media }.into(),
                        }
                    }
                },
                CallResult::Error(error) => ToolAnswer::error(error),
            },
            Called::Time {
                now_ms,
                utc_offset_minutes,
            } => ToolOutcome::Ok(current_time_result(now_ms, utc_offset_minutes)).into(),
            Called::NotConnected(server) => {
                ToolAnswer::error(format!("the MCP server {server} is not connected"))
            }
        }
    }
}
