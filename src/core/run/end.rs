//! How a run ends: the step closed, the calls still running or waiting ended, stopped by
//! the person, failed, finished with its outcome; then its end handed out whole, typed
//! ([`Drive::ended`]).

use serde_json::Value;

use super::drive::Drive;
use super::{Output, Phase, Run, RunEnded, RunOutcome, ToolOutcome};
use crate::core::agui::{Event, Message, Outcome};

impl Run {
    pub(super) fn end_step(&mut self) {
        self.emit(Event::StepFinished {
            step_name: self.step_name(),
        });
    }

    /// Ends every call still running or waiting: each gets an error result (so the
    /// conversation stays whole) and running ones are cancelled in the shell.
    pub(super) fn cancel_running(&mut self, reason: &str) {
        for pending in std::mem::take(&mut self.pending_inputs) {
            self.finish_call_message(
                &pending.call_id,
                ToolOutcome::Error(format!("dismissed: {reason}")),
            );
        }
        for call_id in std::mem::take(&mut self.running) {
            // Under way when the run ended: whether it acted is not known, and never hidden.
            let message = format!("cancelled while under way ({reason}): this call may have run; check its effect before calling it again");
            self.finish_call_message(&call_id, ToolOutcome::Error(message));
            self.out.push_back(Output::CancelTool { call_id });
        }
        for hooked in std::mem::take(&mut self.hooks) {
            self.push_model_error(&hooked.id, &hooked.error);
        }
        self.frontend.clear();
    }

    pub(super) fn stop(&mut self, reason: String) {
        match std::mem::replace(&mut self.phase, Phase::Tools) {
            Phase::Model { step, .. } => {
                let (events, outcome) = step.abort();
                self.emit_all(events);
                self.ids = Some(outcome.ids);
                if let Message::Assistant {
                    content,
                    tool_calls,
                    ..
                } = &outcome.message
                {
                    if content.is_some() || !tool_calls.is_empty() {
                        self.visible.push(outcome.message.clone());
                    }
                }
            }
            Phase::Tools => {}
            Phase::Done => return,
        }
        self.cancel_running(&reason);
        self.end_step();
        self.finish_as(RunOutcome::Stopped { reason }, Some(Outcome::Cancelled));
    }

    pub(super) fn fail(&mut self, message: String) {
        if let Phase::Model { step, .. } = std::mem::replace(&mut self.phase, Phase::Tools) {
            let (events, outcome) = step.abort();
            self.emit_all(events);
            self.ids = Some(outcome.ids);
        }
        self.cancel_running("the model call failed");
        self.emit(Event::RunError {
            message: message.clone(),
            code: Some("model_error".into()),
            usage: self.usage.token_usage(),
        });
        self.phase = Phase::Done;
        self.out
            .push_back(Output::Finished(RunOutcome::Failed { message }));
    }

    /// Ends the run: `RUN_FINISHED` with the host's outcome as `result`, AG-UI's `outcome`
    /// (absent: success) and the run's usage.
    pub(super) fn finish(&mut self, outcome: RunOutcome) {
        self.finish_as(outcome, None);
    }

    pub(super) fn finish_as(&mut self, outcome: RunOutcome, agui: Option<Outcome>) {
        self.emit(Event::RunFinished {
            thread_id: self.input.thread_id.clone(),
            run_id: self.input.run_id.clone(),
            result: Some(serde_json::to_value(&outcome).unwrap_or(Value::Null)),
            outcome: agui,
            usage: self.usage.token_usage(),
        });
        self.phase = Phase::Done;
        self.out.push_back(Output::Finished(outcome));
    }
}

impl Drive {
    /// The run's end, once the drive said it finished (`outcome`): its conversation,
    /// transcript and use as the drive holds them, with its ids and the events it emitted.
    pub fn ended(
        &self,
        run_id: &str,
        thread_id: &str,
        outcome: RunOutcome,
        events: Vec<Value>,
    ) -> RunEnded {
        RunEnded {
            run_id: run_id.to_owned(),
            thread_id: thread_id.to_owned(),
            outcome,
            events,
            messages: self.messages().to_vec(),
            transcript: self.transcript(),
            usage: self.usage().clone(),
        }
    }
}
