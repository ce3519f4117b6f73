//! The drive's tool calls: each call the run asks for bound to what runs it (the clock, a page
//! tool, an MCP tool, or a refusal), the intents of acting calls recorded before they start
//! (see `core::restart`), a call delayed by a `delay` middleware layer held on a timer, and
//! the answers fed back.

use serde_json::{json, Value};

use super::*;

impl Drive {
    pub(super) fn start_tool(&mut self, mut invocation: ToolInvocation) {
        if invocation.delay_ms > 0 {
            // Held (and under way) until its timer runs out; then it starts as any call.
            let timer = self.timer(std::mem::take(&mut invocation.delay_ms));
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
        // A call that acts is recorded before it starts (see `core::restart`).
        let acting = match (&invocation.kind, &binding) {
            (ToolKind::Page, Some(Binding::Page(tool))) if tool.annotations.consequential_hint => {
                Some(format!("page {}", tool.origin))
            }
            (ToolKind::Mcp, Some(Binding::Mcp { server, acting, .. })) if *acting => {
                Some(format!("MCP server {server}"))
            }
            _ => None,
        };
        if let Some(source) = &acting {
            self.intents.push(Intent {
                call_id: call_id.clone(),
                name: invocation.name.clone(),
                source: source.clone(),
            });
            self.out.push_back(Action::Intents(self.intents.clone()));
        }
        self.running.push((call_id.clone(), acting.is_some()));
        let refuse = |error: String| Own::ToolDone {
            call_id: call_id.clone(),
            response: json!({"ok": false, "error": error}),
        };
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
                    self.page_calls.push((call_id.clone(), tool.frame_id));
                }
                ToolCall::Page(CallRequest {
                    tab_id,
                    name: tool
                        .as_ref()
                        .map_or_else(|| invocation.name.clone(), |t| t.name.clone()),
                    args: invocation.arguments,
                    frame_id: tool.as_ref().map(|t| t.frame_id),
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
                let shown = needs_confirmation
                    .then(|| {
                        crate::core::confirm::mcp_tool(&server, &tool.name, &invocation.arguments)
                    })
                    .transpose();
                let confirm = match (shown, self.setup.tab_id) {
                    (Err(why), _) => return self.own.push_back(refuse(why)),
                    (Ok(None), _) => Confirm::No,
                    (Ok(Some(text)), Some(tab_id)) => Confirm::InPage { tab_id, text },
                    (Ok(Some(_)), None) => Confirm::Person {
                        turn_id: invocation.turn_id.clone(),
                    },
                };
                ToolCall::Mcp {
                    server,
                    tool,
                    arguments: invocation.arguments,
                    confirm,
                }
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
        self.out.push_back(Action::Tool {
            call_id,
            call: Box::new(call),
            info,
        });
    }

    /// An acting call ended or was cancelled: its intent goes.
    pub(super) fn intent_done(&mut self, call_id: &str) {
        let before = self.intents.len();
        self.intents.retain(|intent| intent.call_id != call_id);
        if self.intents.len() != before {
            self.out.push_back(Action::Intents(self.intents.clone()));
        }
    }

    pub(super) fn tool_done(&mut self, call_id: String, response: Value) {
        let Some(at) = self.running.iter().position(|(id, _)| *id == call_id) else {
            return;
        };
        let (call_id, acting) = self.running.remove(at);
        self.page_calls.retain(|(id, _)| *id != call_id);
        self.run.handle(Input::ToolDone {
            call_id: call_id.clone(),
            outcome: tool_outcome(&response),
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
