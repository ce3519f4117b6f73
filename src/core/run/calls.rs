//! The calls of a step: dispatch by tool kind under the turn's budget, their results
//! through the post-call middleware into both views of the conversation, what follows a
//! step's calls, and the page's tools listed again after a page call.

use std::rc::Rc;

use serde_json::{json, Value};

use super::tools;
use super::{
    wrap_as_data, Middleware, Output, PendingInput, Run, RunOutcome, RunTool, ToolInvocation,
    ToolKind, ToolOutcome, CUSTOM_TOOLS_CHANGED, CUSTOM_TOOL_INPUT, CUSTOM_TOOL_OBSERVE,
    CUSTOM_TOOL_SOURCE_ERROR, SUBMIT_RESULT,
};
use crate::core::agui::{ContentPart, Event, Message, Outcome, Role, ToolCall, ToolContent};
use crate::core::stream::ReadyCall;
use crate::core::toolset::ToolSet;

impl Run {
    /// Whether calls of the current step are still running or waiting.
    pub(super) fn busy(&self) -> bool {
        !self.running.is_empty() || !self.pending_inputs.is_empty() || !self.hooks.is_empty()
    }

    /// A rejected call's error, in the model's view only (the client saw it rejected).
    pub(super) fn last_assistant_id(&self) -> Option<String> {
        self.model.iter().rev().find_map(|m| match m {
            Message::Assistant { id, .. } => Some(id.clone()),
            _ => None,
        })
    }

    /// Puts a call that the hook repaired into the last assistant message of both views
    /// (replacing the rejected call's entry in the model's view).
    pub(super) fn attach_call(&mut self, call: ToolCall) {
        let id = self.last_assistant_id();
        for view in [&mut self.visible, &mut self.model] {
            let found = view.iter_mut().rev().find_map(|m| match m {
                Message::Assistant {
                    id: mid,
                    tool_calls,
                    ..
                } if Some(mid.clone()) == id => Some(tool_calls),
                _ => None,
            });
            match found {
                Some(tool_calls) => {
                    tool_calls.retain(|c| c.id != call.id);
                    tool_calls.push(call.clone());
                }
                None => view.push(Message::Assistant {
                    id: id.clone().unwrap_or_default(),
                    content: None,
                    tool_calls: vec![call.clone()],
                }),
            }
        }
    }

    fn kind(&self, name: &str) -> (ToolKind, Option<String>) {
        self.kinds
            .iter()
            .find(|(n, ..)| n == name)
            .map(|(_, k, s)| (*k, s.clone()))
            .unwrap_or((ToolKind::Local, None))
    }

    pub(super) fn dispatch(&mut self, call: ReadyCall) {
        if self.input.output_schema.is_some() && call.name == SUBMIT_RESULT {
            // Valid: repair validated it against the output schema.
            let value = Value::Object(call.arguments.clone());
            self.finish_call_message(&call.id, ToolOutcome::Ok("submitted".into()));
            self.cancel_running("the turn ended");
            self.end_step();
            self.finish(RunOutcome::Submitted { value });
            return;
        }
        let (kind, _) = self.kind(&call.name);
        if kind == ToolKind::Frontend {
            self.frontend.push(call);
            return;
        }
        if self.executed >= self.input.max_steps {
            let error = format!(
                "the tool budget of this turn ({} calls) is spent; the call did not run. Answer with what you have.",
                self.input.max_steps
            );
            self.finish_call_message(&call.id, ToolOutcome::Error(error));
            return;
        }
        self.executed += 1;
        let call_count = {
            match self.counts.iter_mut().find(|(n, _)| *n == call.name) {
                Some((_, n)) => {
                    *n += 1;
                    *n
                }
                None => {
                    self.counts.push((call.name.clone(), 1));
                    1
                }
            }
        };
        // Pre-call middleware, in order.
        let pass = match self.before_call(&call.id, &call.name, &call.arguments, call_count) {
            Ok(pass) => pass,
            Err(error) => return self.finish_call_message(&call.id, ToolOutcome::Error(error)),
        };
        if kind == ToolKind::Page {
            self.page_called = true;
        }
        match kind {
            ToolKind::Visitor => {
                let pending = PendingInput {
                    call_id: call.id.clone(),
                    turn_id: self.input.run_id.clone(),
                    name: call.name.clone(),
                    args: call.arguments.clone(),
                };
                self.emit(Event::Custom {
                    name: CUSTOM_TOOL_INPUT.into(),
                    value: serde_json::to_value(&pending).unwrap_or(Value::Null),
                });
                self.pending_inputs.push(pending);
            }
            _ => {
                self.running.push(call.id.clone());
                self.out.push_back(Output::CallTool(ToolInvocation {
                    call_id: call.id,
                    turn_id: self.input.run_id.clone(),
                    name: call.name,
                    kind,
                    arguments: call.arguments,
                    context: self.input.context.clone(),
                    call_count,
                    pass,
                }));
            }
        }
    }

    pub(super) fn tool_finished(&mut self, call_id: &str, outcome: ToolOutcome) {
        if let ToolOutcome::EndTurn { result, outcome } = outcome {
            let tool = self.call_name(call_id);
            self.finish_call_message(call_id, ToolOutcome::Ok(result));
            self.cancel_running("the turn ended");
            self.end_step();
            self.finish(RunOutcome::EndedByTool { tool, outcome });
            return;
        }
        self.result_message(call_id, outcome, true);
        if !self.busy() {
            self.after_tools(true);
        }
    }

    fn call_name(&self, call_id: &str) -> String {
        self.visible
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { tool_calls, .. } => tool_calls
                    .iter()
                    .find(|c| c.id == call_id)
                    .map(|c| c.function.name.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }

    /// The result message of a call the host ended itself (blocked, over budget, cancelled,
    /// submitted): see [`Run::result_message`].
    pub(super) fn finish_call_message(&mut self, call_id: &str, outcome: ToolOutcome) {
        self.result_message(call_id, outcome, false);
    }

    /// The result message of a call: secrets redacted first (before any event, view or
    /// request sees it), post-call middleware (in reverse order), the data wrapper for
    /// untrusted tools (around what the tool said, a failure as well as a result),
    /// `TOOL_CALL_RESULT`, and both views of the conversation.
    fn result_message(&mut self, call_id: &str, outcome: ToolOutcome, from_tool: bool) {
        let name = self.call_name(call_id);
        let (_, data_source) = self.kind(&name);
        let mut media = Vec::new();
        let (ok, mut content) = match outcome {
            ToolOutcome::Ok(text) => (true, self.result_text(&text)),
            ToolOutcome::Media { text, parts } => {
                media = self.redact_parts(parts);
                (true, self.result_text(&text))
            }
            ToolOutcome::Error(error) => (
                false,
                json!({"error": self.result_text(&error)}).to_string(),
            ),
            ToolOutcome::EndTurn { result, .. } => (true, self.result_text(&result)),
        };
        let wrap = ok || from_tool;
        if wrap {
            if let Some(source) = data_source {
                content = wrap_as_data(&source, &content);
            }
        }
        for layer in self.input.middleware.clone().iter().rev() {
            match layer {
                Middleware::DataWrap { source } if wrap => content = wrap_as_data(source, &content),
                Middleware::Observe => self.emit(Event::Custom {
                    name: CUSTOM_TOOL_OBSERVE.into(),
                    value: json!({"phase": "result", "toolCallId": call_id, "toolCallName": name, "ok": ok}),
                }),
                _ => {}
            }
        }
        let message_id = self.next_id("result");
        // The model gets the text alone; the event carries the media besides, after it.
        let shown = if media.is_empty() {
            ToolContent::Text(content.clone())
        } else {
            let text = ContentPart::Text {
                text: content.clone(),
            };
            ToolContent::Parts(std::iter::once(text).chain(media).collect())
        };
        self.emit(Event::ToolCallResult {
            message_id: message_id.clone(),
            tool_call_id: call_id.to_owned(),
            content: shown,
            role: Some(Role::Tool),
        });
        let message = Message::Tool {
            id: message_id,
            content,
            tool_call_id: call_id.to_owned(),
        };
        self.visible.push(message.clone());
        self.model.push(message);
    }

    pub(super) fn after_tools(&mut self, had_no_rejections: bool) {
        self.end_step();
        if !self.frontend.is_empty() {
            let frontend = std::mem::take(&mut self.frontend);
            let pending_tool_call_ids = frontend.iter().map(|c| c.id.clone()).collect();
            let calls = (frontend.into_iter())
                .map(|c| json!({"id": c.id, "name": c.name, "arguments": c.arguments}))
                .collect();
            let outcome = Outcome::Success {
                pending_tool_call_ids,
            };
            self.finish_as(RunOutcome::FrontendTools { calls }, Some(outcome));
            return;
        }
        // An output with no call ends the turn, also an empty one: small local models end
        // their turn with nothing after a result (the model's view then still ends with that
        // result, and asking again got nothing again until the step budget was spent).
        if !self.step_called && had_no_rejections && self.reask.is_empty() {
            let text = self.last_text.clone();
            self.finish(RunOutcome::Completed { text });
            return;
        }
        if self.model_steps > self.input.max_steps + 2 {
            let text = self.last_text.clone();
            self.finish(RunOutcome::BudgetSpent { text });
            return;
        }
        // A page may register other tools once one of its tools ran (a view of its own).
        if std::mem::take(&mut self.page_called) {
            self.relisting = true;
            self.out.push_back(Output::ListPageTools);
            return;
        }
        self.begin_step();
    }

    /// The page's tools listed again: they replace the page's tools of the run (the others
    /// stay); what was added or removed is said (`webmcp_host.tools_changed`).
    pub(super) fn replace_page_tools(
        &mut self,
        page: Vec<RunTool>,
        own_names: Vec<(String, String)>,
    ) {
        let mut errors = Vec::new();
        let Some((tools, added, removed)) =
            tools::with_page_tools(&self.run_tools, page, &mut errors)
        else {
            return;
        };
        self.kinds = (tools.iter())
            .map(|t| (t.spec.name.clone(), t.kind, t.data_source.clone()))
            .collect();
        let (set, _) = ToolSet::new(tools.iter().map(|t| t.spec.clone()));
        self.tools = Rc::new(set);
        self.run_tools = tools;
        self.input.own_names = own_names;
        self.emit(Event::Custom {
            name: CUSTOM_TOOLS_CHANGED.into(),
            value: json!({"added": added, "removed": removed}),
        });
        for error in errors {
            let message = self.redact_text(&error.message);
            self.emit(Event::Custom {
                name: CUSTOM_TOOL_SOURCE_ERROR.into(),
                value: json!({"source": error.source, "message": message}),
            });
        }
    }
}
