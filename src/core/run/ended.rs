//! A run once it ended, typed ([`RunEnded`], made by
//! [`Drive::ended`](super::drive::Drive::ended)): how it ended, its conversation, its
//! transcript, its use. The machines that start runs (an evaluation, a simulation) read it as
//! it is; [`RunEnded::to_json`] writes it as `webmcpHost.run` answers, for the run's caller
//! only.

use serde_json::{json, Value};

use super::RunOutcome;
use crate::core::agui::Message;
use crate::core::provider::usage::RunUsage;

/// A run that ended: what `webmcpHost.run` answers, as values.
#[derive(Debug, Clone, PartialEq)]
pub struct RunEnded {
    /// The run's id.
    pub run_id: String,
    /// Its conversation's id.
    pub thread_id: String,
    /// How it ended.
    pub outcome: RunOutcome,
    /// Its AG-UI events, as they went out.
    pub events: Vec<Value>,
    /// The conversation as the client holds it once the run ended.
    pub messages: Vec<Message>,
    /// The model's outputs as a replay transcript (a `replay` model with it repeats the run).
    pub transcript: String,
    /// What its model steps used.
    pub usage: RunUsage,
}

impl RunEnded {
    /// `run`'s value: `{runId, threadId, outcome, events, messages, transcript, usage}`
    /// (`usage`: the run's tokens and cost, `null` when unknown, see [`RunUsage::to_value`]).
    pub fn to_json(&self) -> Value {
        json!({
            "runId": self.run_id,
            "threadId": self.thread_id,
            "outcome": self.outcome,
            "events": self.events,
            "messages": self.messages,
            "transcript": self.transcript,
            "usage": self.usage.to_value(),
        })
    }
}

#[cfg(test)]
impl RunEnded {
    /// A run's end as a test tells it: its id (empty: none), its outcome, its messages
    /// (AG-UI's JSON), no event, no transcript, its use unknown.
    pub(crate) fn told(run_id: &str, outcome: RunOutcome, messages: Value) -> RunEnded {
        RunEnded {
            run_id: run_id.to_owned(),
            thread_id: String::new(),
            outcome,
            events: Vec::new(),
            messages: serde_json::from_value(messages).expect("AG-UI messages"),
            transcript: String::new(),
            usage: RunUsage::default(),
        }
    }

    /// The same, with this transcript.
    pub(crate) fn with_transcript(mut self, transcript: String) -> RunEnded {
        self.transcript = transcript;
        self
    }

    /// The same, with one model step that reported these tokens.
    pub(crate) fn with_tokens(mut self, input_tokens: u64, output_tokens: u64) -> RunEnded {
        use crate::core::provider::usage::{StepUsage, Usage};
        self.usage.add(StepUsage {
            step: self.usage.steps().len() + 1,
            model: "agent".into(),
            model_id: "agent".into(),
            provider: "openai".into(),
            usage: Some(Usage {
                input_tokens,
                output_tokens,
                ..Usage::default()
            }),
            finish_reason: None,
            cost: None,
        });
        self
    }
}

#[cfg(test)]
mod tests;
