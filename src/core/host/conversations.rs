//! The conversations as the [`Host`] stores them (`chrome.storage.session`): each one's record,
//! and the list of them, read once per worker and kept in [`Host::threads`], changed there and
//! stored whole (so runs ending together lose nothing); `conversations`, `conversation` and
//! `forget` answered from them ([`Conversations`]). The core's [`Threads`] decides the list.
//!
//! Invariant: a conversation dropped from the list has its record removed after the list is
//! stored.
//!
//! [`Threads`]: crate::core::ops::threads::Threads

use serde_json::{json, Value};

use super::io::{Input, Step};
use super::stored::{found, read, read_back, write, Writes};
use super::Host;
use crate::core::ops::threads::{conversation as shown, thread_key, ThreadRecord, INDEX_KEY};
use crate::core::storage::Area::Session;

/// One operation on the conversations under way.
#[derive(Debug)]
pub struct Conversations {
    ask: Ask,
    phase: Phase,
}

#[derive(Debug)]
enum Ask {
    /// A run's conversation stored, and its place in the list.
    Save(Box<ThreadRecord>),
    /// `conversations({tabId?})`.
    List(Option<i64>),
    /// `conversation({threadId})`.
    Show(String),
    /// `forget({threadId})`.
    Forget(String),
}

#[derive(Debug)]
enum Phase {
    Start,
    /// The list asked for.
    Listed,
    /// A record asked for.
    Shown,
    /// Writes whose failures are warned of.
    Saving(Writes),
    /// Writes whose failure is the answer.
    Forgetting(Writes),
    Done,
}

impl Conversations {
    fn new(ask: Ask) -> Conversations {
        Conversations {
            ask,
            phase: Phase::Start,
        }
    }

    /// Stores a conversation's record and its place in the list (removing those dropped
    /// from it); a failure is warned of. Answers `null`.
    pub fn save(record: &ThreadRecord) -> Conversations {
        Conversations::new(Ask::Save(Box::new(record.clone())))
    }

    /// `conversations({tabId?})` → the kept conversations, most recently updated first.
    pub fn list(tab_id: Option<i64>) -> Conversations {
        Conversations::new(Ask::List(tab_id))
    }

    /// `conversation({threadId})` → the conversation with its messages.
    pub fn show(thread_id: &str) -> Conversations {
        Conversations::new(Ask::Show(thread_id.to_owned()))
    }

    /// `forget({threadId})` → `true`, or an error when no such conversation is kept.
    pub fn forget(thread_id: &str) -> Conversations {
        Conversations::new(Ask::Forget(thread_id.to_owned()))
    }
}

impl Host {
    /// Steps an operation on the conversations ([`Conversations`]) to its answer.
    pub fn conversations(
        &self,
        machine: &mut Conversations,
        input: Option<Input>,
        _now_ms: f64,
    ) -> Step<Result<Value, String>> {
        match (std::mem::replace(&mut machine.phase, Phase::Done), input) {
            (Phase::Start, _) => {
                if let Ask::Show(thread_id) = &machine.ask {
                    machine.phase = Phase::Shown;
                    return Step::Do(read(Session, &thread_key(thread_id)));
                }
                if self.threads.borrow().list().is_none() {
                    machine.phase = Phase::Listed;
                    return Step::Do(read(Session, INDEX_KEY));
                }
                self.with_list(machine)
            }
            (Phase::Listed, input) => {
                self.threads.borrow_mut().keep(found(input));
                self.with_list(machine)
            }
            (Phase::Shown, input) => {
                let Ask::Show(thread_id) = &machine.ask else {
                    unreachable!("only a conversation shown reads its record")
                };
                Step::Done(read_back(input, "conversation").and_then(|s| shown(thread_id, s)))
            }
            (Phase::Saving(mut writes), input) => match writes.next(input) {
                Some(output) => {
                    machine.phase = Phase::Saving(writes);
                    Step::Do(output)
                }
                None => Step::Done(Ok(Value::Null)),
            },
            (Phase::Forgetting(mut writes), input) => match (input, writes.next(None)) {
                (Some(Input::Done(Err(error))), _) => Step::Done(Err(error)),
                (_, Some(output)) => {
                    machine.phase = Phase::Forgetting(writes);
                    Step::Do(output)
                }
                (_, None) => Step::Done(Ok(json!(true))),
            },
            (Phase::Done, _) => Step::Done(Err(
                "internal error: a conversation's step asked again".into(),
            )),
        }
    }

    /// The operation, once the list is read.
    fn with_list(&self, machine: &mut Conversations) -> Step<Result<Value, String>> {
        let mut threads = self.threads.borrow_mut();
        let (mut writes, phase): (Writes, fn(Writes) -> Phase) = match &machine.ask {
            Ask::List(tab_id) => return Step::Done(Ok(threads.conversations(*tab_id))),
            Ask::Show(_) => unreachable!("a conversation shown reads no list"),
            Ask::Save(record) => {
                let (value, summary) = record.for_storage();
                let (list, dropped) = threads.saved(summary);
                let id = &record.summary.thread_id;
                let warning = format!("webmcp-host: conversation {id} was not stored: ");
                let mut writes = Writes::default()
                    .then(
                        write(Session, &thread_key(id), Some(value)),
                        Some(warning.clone()),
                    )
                    .then(write(Session, INDEX_KEY, Some(list)), Some(warning));
                for old in dropped {
                    writes = writes.then(write(Session, &thread_key(&old), None), None);
                }
                (writes, Phase::Saving)
            }
            Ask::Forget(thread_id) => match threads.forget(thread_id) {
                Err(error) => return Step::Done(Err(error)),
                Ok(list) => (
                    Writes::default()
                        .then(write(Session, INDEX_KEY, Some(list)), None)
                        .then(write(Session, &thread_key(thread_id), None), None),
                    Phase::Forgetting,
                ),
            },
        };
        let output = writes.next(None).expect("a write");
        machine.phase = phase(writes);
        Step::Do(output)
    }
}

#[cfg(test)]
mod tests;
