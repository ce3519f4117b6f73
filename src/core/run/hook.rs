//! The repair hook's answer for a call that repair (and reask) could not make valid: the
//! call it offers instead is checked like the model's own; otherwise the call's error goes to
//! the model as its result.

use serde_json::{json, Value};

use super::*;

impl Run {
    pub(super) fn push_model_error(&mut self, call_id: &str, error: &str) {
        let id = self.next_id("result");
        self.model.push(Message::Tool {
            id,
            content: json!({ "error": error }).to_string(),
            tool_call_id: call_id.to_owned(),
        });
    }

    /// The hook answered: a call it proposes goes through repair again and, when valid,
    /// streams and runs under the rejected call's id.
    pub(super) fn hook_answered(&mut self, call_id: &str, call: Option<Value>) {
        let Some(at) = self.hooks.iter().position(|h| h.id == call_id) else {
            return;
        };
        let rejected = self.hooks.remove(at);
        let proposal = call.and_then(|c| {
            let name = c.get("name")?.as_str()?.to_owned();
            let arguments = c
                .get("arguments")
                .cloned()
                .unwrap_or(Value::Object(Map::new()));
            let text = match arguments {
                Value::String(text) => text,
                other => other.to_string(),
            };
            Some((name, text))
        });
        let repaired = proposal
            .map(|(name, text)| crate::core::repair::repair_native(&name, &text, &self.tools));
        match repaired {
            Some(Ok(repaired)) => {
                let mut fixes = repaired.fixes.clone();
                fixes.push(crate::core::repair::Fix {
                    step: crate::core::repair::Step::Hook,
                    detail: format!("the repair hook answered for: {}", rejected.error),
                });
                let arguments = Value::Object(repaired.arguments.clone()).to_string();
                self.emit(Event::ToolCallStart {
                    tool_call_id: rejected.id.clone(),
                    tool_call_name: repaired.name.clone(),
                    parent_message_id: self.last_assistant_id(),
                });
                self.emit(Event::ToolCallArgs {
                    tool_call_id: rejected.id.clone(),
                    delta: arguments.clone(),
                });
                self.emit(Event::Custom {
                    name: crate::core::agui::CUSTOM_TOOL_REPAIR.into(),
                    value: json!({
                        "toolCallId": rejected.id, "toolCallName": repaired.name,
                        "writtenName": rejected.written_name, "fixes": fixes,
                    }),
                });
                self.emit(Event::ToolCallEnd {
                    tool_call_id: rejected.id.clone(),
                });
                let call =
                    ToolCall::function(rejected.id.clone(), repaired.name.clone(), arguments);
                self.attach_call(call);
                self.dispatch(ReadyCall {
                    id: rejected.id,
                    name: repaired.name,
                    arguments: repaired.arguments,
                    fixes,
                });
            }
            Some(Err(unrepaired)) => {
                let error = format!(
                    "{} (the repair hook's call was not valid either: {})",
                    rejected.error, unrepaired.error
                );
                self.push_model_error(&rejected.id, &error);
            }
            None => self.push_model_error(&rejected.id, &rejected.error),
        }
        if !self.is_done() && !self.busy() {
            self.after_tools(true);
        }
    }
}
