//! The drive's tool calls: which calls act (their intents are stored once they may run, and
//! removed after their result), the confirmation an MCP call waits for first (a wait for the
//! person: the call is not under way, so no intent is stored and the worker may idle), a
//! call a `delay` middleware layer holds on a timer, what middleware layers of the worker are
//! told of each call, and each call's end.

use serde_json::{json, Value};

use super::{Action, Binding, Confirmation, Drive, Own, ToolCall, PAGE_TOOL_MS};
use crate::core::agui::{CUSTOM_TOOL_CONFIRMATION, CUSTOM_TOOL_OUTPUT_ERRORS};
use crate::core::confirm::DECLINED;
use crate::core::gate::Permit;
use crate::core::page::call::CallRequest;
use crate::core::restart::Intent;
use crate::core::run::local::CURRENT_TIME;
use crate::core::run::{Input, ToolAnswer, ToolInvocation, ToolKind};

/// A call that waits for the person's confirmation before it starts.
pub(super) struct Confirming {
    call_id: String,
    call: Permit<ToolCall>,
    /// Where it acts, when it does: its intent is stored once it is allowed.
    acting: Option<String>,
    name: String,
    /// What middleware layers are told of it.
    info: Value,
}

impl Drive {
    pub(super) fn start_tool(&mut self, mut invocation: ToolInvocation) {
        if invocation.pass.delay_ms() > 0 {
            // Held (and under way) until its timer runs out; then it starts as any call.
            let timer = self.timer(invocation.pass.take_delay());
            self.running.push((invocation.call_id.clone(), false));
            self.delayed.push((timer, invocation));
            return;
        }
        let info = json!({
            "callId": invocation.call_id, "turnId": invocation.turn_id, "name": invocation.name,
            "args": invocation.arguments, "context": invocation.context,
            "callCount": invocation.call_count, "source": source_of(invocation.kind),
        });
        let call_id = invocation.call_id.clone();
        // A page tool and an MCP tool may share a name; the run's kind says which is called.
        let binding = self
            .setup
            .bindings
            .iter()
            .find(|(name, binding)| {
                *name == invocation.name
                    && matches!(
                        (binding, invocation.kind),
                        (Binding::Page(_), ToolKind::Page) | (Binding::Mcp { .. }, ToolKind::Mcp)
                    )
            })
            .map(|(_, binding)| binding.clone());
        let acting = match (&invocation.kind, &binding) {
            (ToolKind::Page, Some(Binding::Page(listed)))
                if listed.tool.annotations.consequential_hint =>
            {
                Some(format!("page {}", listed.tool.origin))
            }
            (ToolKind::Mcp, Some(Binding::Mcp { server, acting, .. })) if *acting => {
                Some(format!("MCP server {server}"))
            }
            _ => None,
        };
        self.running.push((call_id.clone(), acting.is_some()));
        let refuse = |error: String| Own::ToolDone {
            call_id: call_id.clone(),
            answer: ToolAnswer::error(error),
        };
        let pass = invocation.pass;
        let call = match (invocation.kind, binding) {
            (ToolKind::Local, _) if invocation.name == CURRENT_TIME => ToolCall::CurrentTime,
            (ToolKind::Page, binding) => {
                let Some(tab_id) = self.setup.tab_id else {
                    return self.own.push_back(refuse("this run has no tab".into()));
                };
                let tool = match binding {
                    Some(Binding::Page(tool)) => Some(tool),
                    _ => None,
                };
                if let Some(tool) = &tool {
                    self.page_calls.push((call_id.clone(), tool.tool.frame_id));
                }
                ToolCall::Page(CallRequest {
                    tab_id,
                    name: tool
                        .as_ref()
                        .map_or_else(|| invocation.name.clone(), |t| t.tool.name.clone()),
                    args: invocation.arguments,
                    frame_id: tool.as_ref().map(|t| t.tool.frame_id),
                    timeout_ms: PAGE_TOOL_MS,
                    call: Some(call_id.clone()),
                    expect: tool,
                })
            }
            (
                ToolKind::Mcp,
                Some(Binding::Mcp {
                    server,
                    tool,
                    needs_confirmation,
                    ..
                }),
            ) => {
                let called = crate::core::gate::Acting::Mcp {
                    server: &server,
                    tool: &tool.name,
                    acts: needs_confirmation,
                    page: None,
                };
                let asker = crate::core::gate::Asker::Run;
                let question = match crate::core::gate::decide(asker, called, &invocation.arguments)
                {
                    Err(why) => return self.own.push_back(refuse(why)),
                    Ok(decision) => decision.question().map(str::to_owned),
                };
                let call = pass.permit(ToolCall::Mcp {
                    server: server.clone(),
                    tool: tool.clone(),
                    arguments: invocation.arguments.clone(),
                });
                if let Some(question) = question {
                    // Asked first; it runs (and its intent is stored) only once allowed.
                    self.out.push_back(Action::Confirm(Box::new(Confirmation {
                        turn_id: invocation.turn_id.clone(),
                        call_id: call_id.clone(),
                        server,
                        tool: tool.name,
                        arguments: invocation.arguments,
                        question,
                    })));
                    self.confirming.push(Confirming {
                        call_id,
                        call,
                        acting,
                        name: invocation.name,
                        info,
                    });
                    return;
                }
                return self.send_tool(call_id, call, acting, invocation.name, info);
            }
            (ToolKind::Mcp, _) => {
                return self.own.push_back(refuse(format!(
                    "`{}` is not a tool of a connected MCP server",
                    invocation.name
                )))
            }
            _ => {
                return self.own.push_back(refuse(format!(
                    "`{}` cannot run in this host yet",
                    invocation.name
                )))
            }
        };
        self.send_tool(call_id, pass.permit(call), acting, invocation.name, info);
    }

    /// A call that acts is recorded before it starts (see `core::restart`); then it starts.
    fn send_tool(
        &mut self,
        call_id: String,
        call: Permit<ToolCall>,
        acting: Option<String>,
        name: String,
        info: Value,
    ) {
        if let Some(source) = acting {
            self.intents.push(Intent {
                call_id: call_id.clone(),
                name,
                source,
            });
            self.out.push_back(Action::StoreIntents {
                call_id: call_id.clone(),
                intents: self.intents.clone(),
            });
            self.storing.push((call_id, Box::new(call), info));
            return;
        }
        self.out.push_back(Action::Tool {
            call_id,
            call: Box::new(call),
            info,
        });
    }

    /// A new acting call's intent was stored: it starts; or it could not be: the call is
    /// refused without running.
    pub(super) fn intents_stored(&mut self, call_id: String, error: Option<String>) {
        let Some(at) = self.storing.iter().position(|(id, _, _)| *id == call_id) else {
            return;
        };
        let (call_id, call, info) = self.storing.remove(at);
        match error {
            None => self.out.push_back(Action::Tool {
                call_id,
                call,
                info,
            }),
            Some(why) => {
                self.intent_done(&call_id);
                let message = format!(
                    "not run: its intent could not be stored ({why}), and a call that acts runs only once its intent is stored (a restart must know it may have run)"
                );
                self.tool_done(call_id, ToolAnswer::error(message));
            }
        }
    }

    /// The person allowed a call or not: it starts, or it ends declined.
    pub(super) fn confirmed(&mut self, call_id: String, allowed: bool) {
        let Some(at) = self.confirming.iter().position(|c| c.call_id == call_id) else {
            return;
        };
        let Confirming {
            call_id,
            call,
            acting,
            name,
            info,
        } = self.confirming.remove(at);
        if allowed {
            self.send_tool(call_id, call, acting, name, info);
        } else {
            self.tool_done(call_id, ToolAnswer::error(DECLINED));
        }
    }

    /// Whether the run waits for confirmations alone (no model call, no call under way).
    pub(super) fn only_confirming(&self) -> bool {
        !self.confirming.is_empty() && self.running.len() == self.confirming.len()
    }

    /// An acting call ended or was cancelled: its intent goes (and a cancelled call still
    /// asked for is no longer confirmed).
    pub(super) fn intent_done(&mut self, call_id: &str) {
        self.confirming.retain(|c| c.call_id != call_id);
        self.storing.retain(|(id, _, _)| id != call_id);
        let before = self.intents.len();
        self.intents.retain(|intent| intent.call_id != call_id);
        if self.intents.len() != before {
            self.out.push_back(Action::Intents(self.intents.clone()));
        }
    }

    pub(super) fn tool_done(&mut self, call_id: String, answer: ToolAnswer) {
        let Some(at) = self.running.iter().position(|(id, _)| *id == call_id) else {
            return;
        };
        let (call_id, acting) = self.running.remove(at);
        self.page_calls.retain(|(id, _)| *id != call_id);
        // A consequential page call made without the question says how it was allowed.
        if let Some(allowed) = &answer.confirmation {
            self.run.handle(Input::Custom {
                name: CUSTOM_TOOL_CONFIRMATION.into(),
                value: json!({"toolCallId": call_id, "confirmation": allowed}),
            });
        }
        // A result that breaks the tool's own output schema says so, in the log.
        if let Some(errors) = &answer.output_errors {
            self.run.handle(Input::Custom {
                name: CUSTOM_TOOL_OUTPUT_ERRORS.into(),
                value: json!({"toolCallId": call_id, "outputErrors": errors}),
            });
        }
        self.run.handle(Input::ToolDone {
            call_id: call_id.clone(),
            outcome: answer.outcome,
        });
        if acting {
            // The result's events go out (to the stored log) before the intent is dropped: a
            // cut in between leaves the intent, never neither.
            while let Some(output) = self.run.poll() {
                self.output(output);
            }
            self.intent_done(&call_id);
        }
    }
}

/// Where a call runs, as middleware layers are told (`source`).
fn source_of(kind: ToolKind) -> &'static str {
    match kind {
        ToolKind::Page => "page",
        ToolKind::Mcp => "mcp",
        ToolKind::Local => "local",
        ToolKind::Frontend => "frontend",
        ToolKind::Visitor => "visitor",
    }
}
