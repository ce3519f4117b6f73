//! The waits for the person as a table: the visitor inputs a run waits for and the
//! confirmations of runs without a tab, listed for the popup and side panel (`pending`), the
//! answers given (`answer`, `decline`) until their waiter takes them, and who to wake. The
//! shell holds the wakers and the timers.
//!
//! Invariant: an item is listed while, and only while, something waits for it; an answer is
//! kept only for a listed item, until its waiter takes it or its run ends.

use serde_json::{Map, Value};

use super::runs::{Answer, PendingItem};
use crate::core::run::{Input, PendingInput};

/// Who waits for an answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Waiter {
    /// A run's drive loop, for any of its visitor inputs.
    Inputs {
        /// The run.
        run_id: String,
    },
    /// One call of a run without a tab, for its confirmation.
    Confirmation {
        /// The run.
        run_id: String,
        /// The call.
        call_id: String,
    },
}

impl Waiter {
    /// The run that waits.
    pub fn run_id(&self) -> &str {
        match self {
            Waiter::Inputs { run_id } | Waiter::Confirmation { run_id, .. } => run_id,
        }
    }
}

/// Whether the listing changed (the open pages are told to ask `pending` again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listing {
    /// The list changed: push `pending`.
    Changed,
    /// Nothing to tell.
    Same,
}

/// What waits for the person, and what they answered that was not taken yet.
#[derive(Debug, Default)]
pub struct Waits {
    pending: Vec<PendingItem>,
    answers: Vec<Answer>,
}

impl Waits {
    /// A run ended: its items and answers are dropped (the shell wakes its waiters).
    pub fn dismiss(&mut self, run_id: &str) {
        self.pending.retain(|p| p.run_id() != run_id);
        self.answers.retain(|a| a.run_id != run_id);
    }

    /// The visitor inputs a run waits for now: listed (those it no longer waits for are not).
    /// Returns whether the list changed, and the waiter to wait for when no answer of the run
    /// is there yet (`None`: take the answers at once).
    pub fn list_inputs(
        &mut self,
        run_id: &str,
        waiting: &[PendingInput],
    ) -> (Listing, Option<Waiter>) {
        let before = self.pending.clone();
        self.pending.retain(|p| {
            !matches!(p, PendingItem::Input { run_id: r, call_id, .. }
                if r == run_id && !waiting.iter().any(|i| &i.call_id == call_id))
        });
        for input in waiting {
            let listed = |p: &PendingItem| p.run_id() == run_id && p.call_id() == input.call_id;
            if !self.pending.iter().any(listed) {
                self.pending.push(PendingItem::Input {
                    run_id: run_id.to_owned(),
                    call_id: input.call_id.clone(),
                    name: input.name.clone(),
                    args: input.args.clone(),
                });
            }
        }
        let listing = match self.pending == before {
            true => Listing::Same,
            false => Listing::Changed,
        };
        let answered = self.answers.iter().any(|a| a.run_id == run_id);
        let waiter = (!answered).then(|| Waiter::Inputs {
            run_id: run_id.to_owned(),
        });
        (listing, waiter)
    }

    /// Takes a run's answers: those to the inputs it waits for, as the run's inputs (the
    /// others are dropped).
    pub fn take_inputs(&mut self, run_id: &str, waiting: &[PendingInput]) -> Vec<Input> {
        let (mine, rest): (Vec<Answer>, Vec<Answer>) = std::mem::take(&mut self.answers)
            .into_iter()
            .partition(|a| a.run_id == run_id);
        self.answers = rest;
        mine.into_iter()
            .filter(|a| waiting.iter().any(|i| i.call_id == a.call_id))
            .map(|a| match a.verdict {
                Ok(value) => Input::SubmitToolResult {
                    call_id: a.call_id,
                    value,
                },
                Err(error) => Input::RejectToolCall {
                    call_id: a.call_id,
                    error,
                },
            })
            .collect()
    }

    /// A call asks for confirmation, with its question (`None`: it cannot be shown, and the
    /// call can only be declined): listed (push `pending`); the waiter to wait for, at most
    /// [`CONFIRM_MS`](crate::core::limits::CONFIRM_MS).
    pub fn ask_with(
        &mut self,
        run_id: &str,
        call_id: &str,
        server: &str,
        tool: &str,
        args: &Map<String, Value>,
        question: Option<String>,
    ) -> Waiter {
        self.pending.push(PendingItem::Confirmation {
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            name: tool.to_owned(),
            server: server.to_owned(),
            args: args.clone(),
            question,
            repeats: 0,
        });
        Waiter::Confirmation {
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
        }
    }

    /// Another call like the confirmation's was refused while it waits: counted on its item
    /// (push `pending`).
    pub fn repeated(&mut self, run_id: &str, call_id: &str) {
        for item in &mut self.pending {
            if let PendingItem::Confirmation {
                run_id: r,
                call_id: c,
                repeats,
                ..
            } = item
            {
                if r == run_id && c == call_id {
                    *repeats = repeats.saturating_add(1);
                }
            }
        }
    }

    /// The confirmation's wait is over (answered, run ended, or time ran out): unlisted;
    /// whether the person allowed it (no answer declines).
    pub fn confirmed(&mut self, run_id: &str, call_id: &str) -> bool {
        self.pending
            .retain(|p| !(p.run_id() == run_id && p.call_id() == call_id));
        let at = self
            .answers
            .iter()
            .position(|a| a.run_id == run_id && a.call_id == call_id);
        at.map(|at| self.answers.remove(at).verdict.is_ok())
            .unwrap_or(false)
    }

    /// `pending()` → the items waiting for the person: `{kind: "input", runId, callId, name,
    /// args}` (a visitor tool) or `{kind: "confirmation", runId, callId, name, server, args,
    /// question}`.
    pub fn pending(&self) -> Value {
        serde_json::to_value(&self.pending).expect("pending items serialize")
    }

    /// `answer` / `decline`: the person's answer to a listed item, kept for its waiter. The
    /// waiter to wake (then push `pending`), or the error to give when nothing waits for it
    /// (answered already, or its run ended: a run a worker restart cut waits for nothing).
    /// A confirmation whose question cannot be shown is declined, whatever the answer.
    pub fn deliver(&mut self, mut answer: Answer) -> Result<Waiter, String> {
        let at = self
            .pending
            .iter()
            .position(|p| p.run_id() == answer.run_id && p.call_id() == answer.call_id)
            .ok_or_else(|| {
                let op = match answer.verdict {
                    Ok(_) => "answer",
                    Err(_) => "decline",
                };
                format!(
                    "{op}: nothing waits for call `{}` of run `{}`: it was answered already, or its run ended (a run the worker's restart cut ends with all it waited for)",
                    answer.call_id, answer.run_id
                )
            })?;
        let waiter = match self.pending.remove(at) {
            PendingItem::Input { .. } => Waiter::Inputs {
                run_id: answer.run_id.clone(),
            },
            PendingItem::Confirmation { question, .. } => {
                if question.is_none() {
                    answer.verdict = Err(None);
                }
                Waiter::Confirmation {
                    run_id: answer.run_id.clone(),
                    call_id: answer.call_id.clone(),
                }
            }
        };
        self.answers.push(answer);
        Ok(waiter)
    }
}

#[cfg(test)]
mod tests;
