//! A model step of the run: its start (the budget note, the calls asked again, the tools
//! offered), the cap on its output, and what its output holds (calls to run, rejected calls
//! for reask or the repair hook).

use std::rc::Rc;

use serde_json::{json, Value};

use super::{
    HookRequest, ModelRequest, Output, Phase, Run, RunOutcome, ToolOutcome, CUSTOM_TOOL_REASK,
    MAX_MODEL_OUTPUT_BYTES,
};
use crate::core::agui::{Event, Message, ToolCall};
use crate::core::native::NativeCalls;
use crate::core::parse::CallParser;
use crate::core::stream::{RejectedCall, Rejection, StepOutcome, StepStream};
use crate::core::toolset::ToolSpec;

impl Run {
    pub(super) fn begin_step(&mut self) {
        self.model_steps += 1;
        let budget_spent = self.executed >= self.input.max_steps;
        let mut messages = self.model.clone();
        let tools: Vec<ToolSpec> = if budget_spent {
            if !self.budget_told {
                self.budget_told = true;
            }
            messages.push(Message::User {
                id: self.next_id("note"),
                content: format!(
                    "The tool budget of this turn ({} calls) is spent. Answer now with what you have; do not call tools.",
                    self.input.max_steps
                ),
            });
            Vec::new()
        } else {
            self.tools.specs().cloned().collect()
        };
        for rejected in std::mem::take(&mut self.reask) {
            let name = rejected.name.clone().unwrap_or_default();
            let schema = self
                .tools
                .get(&name)
                .map(|t| t.input_schema.to_string())
                .unwrap_or_default();
            self.emit(Event::Custom {
                name: CUSTOM_TOOL_REASK.into(),
                value: json!({"toolCallId": rejected.id, "toolCallName": name, "error": rejected.error}),
            });
            messages.push(Message::User {
                id: self.next_id("note"),
                content: format!(
                    "Your call to `{name}` was not valid and did not run: {}. Its input schema is {schema}. Write the call again, corrected.",
                    rejected.error
                ),
            });
        }
        self.emit(Event::StepStarted {
            step_name: self.step_name(),
        });
        let ids = self.ids.take().expect("ids are held between model steps");
        let step = StepStream::new(Rc::clone(&self.tools), ids, self.visible.clone());
        self.out.push_back(Output::CallModel(ModelRequest {
            step: self.model_steps,
            messages,
            tools,
        }));
        self.phase = Phase::Model {
            step: Box::new(step),
            parser: CallParser::new(),
            native: NativeCalls::default(),
        };
        self.step_bytes = 0;
    }

    /// Counts model output; over the cap, the run fails (and the shell drops the stream).
    pub(super) fn over_output_cap(&mut self, bytes: usize) -> bool {
        if !matches!(self.phase, Phase::Model { .. }) {
            return false;
        }
        self.step_bytes += bytes;
        if self.step_bytes <= MAX_MODEL_OUTPUT_BYTES {
            return false;
        }
        self.fail(format!(
            "the model's output in this step passed {MAX_MODEL_OUTPUT_BYTES} bytes (max_model_output_bytes); the run was ended"
        ));
        true
    }

    pub(super) fn after_model(&mut self, outcome: StepOutcome) {
        let StepOutcome {
            message,
            calls,
            rejected,
            ids,
        } = outcome;
        self.ids = Some(ids);
        let Message::Assistant {
            content,
            tool_calls,
            id,
        } = &message
        else {
            unreachable!("a step yields an assistant message")
        };
        self.last_text = content.clone().unwrap_or_default();
        if content.is_some() || !tool_calls.is_empty() {
            self.visible.push(message.clone());
        }
        // The model's view also holds the calls that will not run, with their errors.
        let mut model_calls = tool_calls.clone();
        for r in &rejected {
            let arguments = match serde_json::from_str::<Value>(&r.raw) {
                Ok(Value::Object(_)) => r.raw.clone(),
                _ => "{}".to_owned(),
            };
            let name = r.name.clone().unwrap_or_else(|| r.written_name.clone());
            model_calls.push(ToolCall::function(r.id.clone(), name, arguments));
        }
        self.step_called = !model_calls.is_empty();
        if content.is_some() || !model_calls.is_empty() {
            self.model.push(Message::Assistant {
                id: id.clone(),
                content: content.clone(),
                tool_calls: model_calls,
            });
        }
        let budget_spent = self.budget_told;
        let will_reask = self.input.reask && !self.reasked && !budget_spent;
        for r in &rejected {
            let repairable = matches!(r.reason, Rejection::Invalid | Rejection::UnknownTool);
            let reasked_next = will_reask && r.reason == Rejection::Invalid && r.name.is_some();
            if self.input.hook && repairable && !reasked_next && !budget_spent {
                self.hooks.push(r.clone());
                self.out.push_back(Output::RepairHook(HookRequest {
                    call_id: r.id.clone(),
                    raw: r.raw.clone(),
                    written_name: r.written_name.clone(),
                    error: r.error.clone(),
                    tools: self.tools.specs().cloned().collect(),
                }));
                continue;
            }
            self.push_model_error(&r.id, &r.error);
        }
        if will_reask {
            let invalid: Vec<RejectedCall> = rejected
                .iter()
                .filter(|r| r.reason == Rejection::Invalid && r.name.is_some())
                .cloned()
                .collect();
            if !invalid.is_empty() {
                self.reasked = true;
                self.reask = invalid;
            }
        }

        if budget_spent && !calls.is_empty() {
            // Told to answer without tools, the model called some anyway: they do not run.
            for call in &calls {
                self.finish_call_message(
                    &call.id,
                    ToolOutcome::Error("the tool budget is spent; the call did not run".into()),
                );
            }
            self.end_step();
            let text = self.last_text.clone();
            self.finish(RunOutcome::BudgetSpent { text });
            return;
        }
        for call in calls {
            if self.is_done() {
                break;
            }
            self.dispatch(call);
        }
        if !self.is_done() && !self.busy() {
            self.after_tools(rejected.is_empty());
        }
    }
}
