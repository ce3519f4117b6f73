//! The start's needs the host meets itself, each as a child of the run: the stored
//! conversation, servers, keys and layers read (`Storage::Read`), a cut run's log read
//! ([`RunLogRead`]), the conversation's record saved ([`Conversations`]), each enabled MCP
//! server opened ([`Opening`]: the client kept for the run's calls); and, once the drive
//! finished, the run's end: its clients closed ([`Closing`]) and its conversation saved as it
//! ended, before the shell hears [`Action::Finished`].

use super::{Child, HostRun, Phase, RunEffect};
use crate::core::host::conversations::Conversations;
use crate::core::host::io::{unasked, Input, Output, Step, Storage};
use crate::core::host::mcp::{Closing, Opening};
use crate::core::host::runlog::RunLogRead;
use crate::core::host::Host;
use crate::core::ops::threads::thread_key;
use crate::core::run::drive::Action;
use crate::core::setup::start::{Got, Need};
use crate::core::setup::store::{self, key_slot, MIDDLEWARE_KEY, SERVERS_KEY};
use crate::core::storage::Area;

/// A need of the start, or a step of the run's end, under way inside the host.
#[derive(Debug)]
pub(super) enum Needing {
    /// A stored value read, for the need it meets.
    Read(Reading),
    /// A cut run's log.
    Log(Box<RunLogRead>),
    /// The conversation's record stored: at the start (its answer goes to the start), or at
    /// the end.
    Save(Conversations, bool),
    /// An MCP server opened, by its name.
    Open(String, Box<Opening>),
    /// A client of the run closed, at its end.
    Close(Closing),
}

/// What a stored value is read for.
#[derive(Debug)]
pub(super) enum Reading {
    /// The conversation's record.
    Conversation(String),
    /// The person's layers, asked for at this epoch of the host's kept layers.
    Middleware(u64),
    /// The MCP servers.
    Servers,
    /// A key, by its reference.
    Key(String),
}

impl Reading {
    fn output(&self) -> Output {
        let (area, key) = match self {
            Reading::Conversation(id) => (Area::Session, thread_key(id)),
            Reading::Middleware(_) => (Area::Local, MIDDLEWARE_KEY.to_owned()),
            Reading::Servers => (Area::Local, SERVERS_KEY.to_owned()),
            Reading::Key(reference) => (Area::Session, key_slot(reference)),
        };
        Output::Storage(Storage::Read { area, key })
    }
}

impl Host {
    /// Meets the start's `need` inside the host when it can: `None` then (its answer goes to
    /// the start when it comes), else the effect for the shell.
    pub(super) fn need(&self, run: &mut HostRun, need: Need, now: f64) -> Option<RunEffect> {
        let needing = match need {
            Need::Conversation(id) => Needing::Read(Reading::Conversation(id)),
            Need::RunLog(cut) => Needing::Log(Box::new(RunLogRead::new(&cut, 0))),
            Need::Middleware => {
                let layers = self.layers.borrow();
                match layers.get() {
                    Some(stored) => {
                        drop(layers);
                        self.got(run, Got::Middleware(Ok(stored)));
                        return None;
                    }
                    None => Needing::Read(Reading::Middleware(layers.epoch())),
                }
            }
            Need::SaveConversation(record) => {
                let save = Conversations::save(&record);
                run.thread = Some(*record);
                Needing::Save(save, true)
            }
            Need::Servers => Needing::Read(Reading::Servers),
            Need::Key(reference) => Needing::Read(Reading::Key(reference)),
            Need::Open {
                server,
                key,
                within_ms,
            } => {
                let name = server.name.clone();
                Needing::Open(name, Box::new(Opening::new(server, key, within_ms, true)))
            }
            need => return Some(RunEffect::Need(need)),
        };
        let child = run.child(Child::Need(Box::new(needing)));
        self.advance_need(run, child, None, now);
        None
    }

    /// The drive finished: the run's clients are closed, its conversation saved as it ended
    /// and its intents forgotten; the shell hears [`Action::Finished`] once they are.
    pub(super) fn end(&self, run: &mut HostRun, finished: Action, now: f64) {
        let ended = (run.thread.take()).zip(run.ended.as_ref());
        let save =
            ended.map(|(record, drive)| Conversations::save(&record.ended(drive.messages(), now)));
        let closes = std::mem::take(&mut run.clients)
            .into_values()
            .map(Closing::new);
        let steps: Vec<Needing> = (closes.map(Needing::Close))
            .chain(save.map(|save| Needing::Save(save, false)))
            .collect();
        // The intents are forgotten too, after every store of them before.
        run.phase = Phase::Ending(finished, steps.len() + 1);
        for needing in steps {
            let child = run.child(Child::Need(Box::new(needing)));
            self.advance_need(run, child, None, now);
        }
        self.drop_intents(run, now);
    }

    /// Steps one of the run's needs; its answer goes to the start (or counts to the end).
    pub(super) fn advance_need(
        &self,
        run: &mut HostRun,
        child: u64,
        input: Option<Input>,
        now: f64,
    ) {
        let Some(Child::Need(mut needing)) = run.children.remove(&child) else {
            return;
        };
        match self.step_need(run, &mut needing, input, now) {
            Step::Do(output) => {
                run.children.insert(child, Child::Need(needing));
                run.out.push_back(RunEffect::Child { child, output });
            }
            Step::Done(Some(got)) => self.got(run, got),
            Step::Done(None) => super::intents::end_step_done(run),
        }
    }

    fn step_need(
        &self,
        run: &mut HostRun,
        needing: &mut Needing,
        input: Option<Input>,
        now: f64,
    ) -> Step<Option<Got>> {
        match needing {
            Needing::Read(reading) => {
                let stored = match input {
                    None => return Step::Do(reading.output()),
                    Some(Input::Read(stored)) => stored,
                    Some(other) => Err(format!(
                        "internal error: {} came where a stored value was asked for",
                        unasked(Some(&other))
                    )),
                };
                Step::Done(Some(match reading {
                    Reading::Conversation(_) => Got::Conversation(stored),
                    Reading::Middleware(epoch) => {
                        if let Ok(stored) = &stored {
                            self.layers.borrow_mut().keep(*epoch, stored.clone());
                        }
                        Got::Middleware(stored)
                    }
                    Reading::Servers => Got::Servers(stored.and_then(store::servers)),
                    Reading::Key(reference) => {
                        Got::Key(stored.and_then(|stored| store::key(reference, stored)))
                    }
                }))
            }
            Needing::Log(read) => match self.run_log(read, input, now) {
                Step::Do(output) => Step::Do(output),
                Step::Done(log) => Step::Done(Some(Got::RunLog(log))),
            },
            Needing::Save(save, at_start) => match self.conversations(save, input, now) {
                Step::Do(output) => Step::Do(output),
                Step::Done(_) => Step::Done(at_start.then_some(Got::ConversationSaved)),
            },
            Needing::Open(server, opening) => match self.mcp_open(opening, input, now) {
                Step::Do(output) => Step::Do(output),
                Step::Done(opened) => Step::Done(Some(Got::Opened(opened.map(|(id, listed)| {
                    run.clients.insert(server.clone(), id);
                    let auth = self.mcp_session(id).auth().cloned().map(Box::new);
                    (listed, auth, self.mcp_protocol(id))
                })))),
            },
            Needing::Close(closing) => match self.mcp_close(closing, input, now) {
                Step::Do(output) => Step::Do(output),
                Step::Done(()) => Step::Done(None),
            },
        }
    }

    /// What a need got, to the start.
    fn got(&self, run: &mut HostRun, got: Got) {
        if let Phase::Start { start, asked } = &mut run.phase {
            *asked = false;
            start.handle(got);
        }
    }
}
