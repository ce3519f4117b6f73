//! The drive's actions the host performs as outputs of its vocabulary, each a child of the
//! run: a model's stream (`Http`: the drive's fetch ids mapped to the host's; a fetch aborted,
//! ended or failed is forgotten, and what comes of it after is dropped), a timer (`Timers`: a
//! cancelled one is forgotten, its end dropped), the person asked to confirm an MCP call
//! (`Ui::Confirm`, in the extension's own UI, never in the tab).

use super::{Child, HostRun, RunEffect};
use crate::core::host::io::{Fetched, Http, Input, Output, Piece, Timers, Ui};
use crate::core::host::Host;
use crate::core::limits::NO_DEADLINE_MS;
use crate::core::run::drive::{Action, Answer, FetchId, TimerId};

impl Host {
    /// A fresh id for a timer ([`Timers`]), unique in the host.
    pub fn timer_id(&self) -> u64 {
        let id = self.timer_ids.get() + 1;
        self.timer_ids.set(id);
        id
    }

    /// Performs the drive's `action` as a child when it is one the host performs; else gives
    /// it back for the shell.
    pub(super) fn act(&self, run: &mut HostRun, action: Action, now: f64) -> Option<Action> {
        let (child, output) = match action {
            Action::Fetch { id, request } => {
                let http = self.fetch_id();
                let fetch = Http::Fetch {
                    id: http,
                    request,
                    within_ms: NO_DEADLINE_MS,
                };
                (run.child(Child::Fetch { id, http }), Output::Http(fetch))
            }
            Action::Read { id } => return run.fetch_step(id, false),
            Action::Abort { id } => return run.fetch_step(id, true),
            Action::Timer { id, ms } => {
                let timer = self.timer_id();
                let set = Timers::Set { id: timer, ms };
                (run.child(Child::Timer { id, timer }), Output::Timers(set))
            }
            Action::CancelTimer { id } => return run.cancel_timer(id),
            Action::Confirm(ask) => {
                let confirm = Ui::Confirm {
                    asked: ask.turn_id,
                    call_id: ask.call_id.clone(),
                    server: ask.server,
                    tool: ask.tool,
                    args: ask.arguments,
                    question: ask.question,
                };
                (run.child(Child::Confirm(ask.call_id)), Output::Ui(confirm))
            }
            Action::Intents(intents) => {
                self.keep_intents(run, None, &intents, now);
                return None;
            }
            Action::StoreIntents { call_id, intents } => {
                self.keep_intents(run, Some(call_id), &intents, now);
                return None;
            }
            action => return Some(action),
        };
        run.out.push_back(RunEffect::Child { child, output });
        None
    }

    /// The input of the drive's fetch `id` (the host's `http`), the run's child `child`: to
    /// the drive, the fetch kept while its body goes on.
    pub(super) fn fetch_input(
        &self,
        run: &mut HostRun,
        child: u64,
        (id, http): (FetchId, u64),
        input: Input,
    ) {
        let failed = |message| Some(Answer::FetchFailed { id, message });
        let answer = match input {
            Input::Fetched(Fetched::Head(head)) => Some(Answer::Head {
                id,
                status: head.status,
                retry_after: head.retry_after,
            }),
            Input::Fetched(Fetched::Failed(message)) => failed(message),
            Input::Fetched(Fetched::TimedOut) => failed("no answer in time".into()),
            Input::Piece(Piece::Text(text)) => Some(Answer::Body {
                id,
                text: Some(text),
            }),
            Input::Piece(Piece::End) => Some(Answer::Body { id, text: None }),
            Input::Piece(Piece::Failed(message)) => failed(message),
            _ => None,
        };
        let goes_on = matches!(
            answer,
            None | Some(Answer::Head { .. } | Answer::Body { text: Some(_), .. })
        );
        if goes_on {
            run.children.insert(child, Child::Fetch { id, http });
        }
        if let Some(answer) = answer {
            self.to_drive(run, answer);
        }
    }
}

impl HostRun {
    /// The drive reads its fetch `id` on, or aborts it (`abort`); a fetch gone (its body
    /// ended, it failed, it was aborted) is not read again, and what comes of it meanwhile is
    /// dropped.
    fn fetch_step(&mut self, id: FetchId, abort: bool) -> Option<Action> {
        let found = (self.children.iter())
            .find(|(_, c)| matches!(c, Child::Fetch { id: of, .. } if *of == id));
        let (&child, &Child::Fetch { http, .. }) = found? else {
            return None;
        };
        let output = Output::Http(if abort {
            self.children.remove(&child);
            Http::Abort { id: http }
        } else {
            Http::Read {
                id: http,
                within_ms: None,
            }
        });
        self.out.push_back(RunEffect::Child { child, output });
        None
    }

    /// The drive cancels its timer `id`: forgotten, and cancelled unless it fired already.
    fn cancel_timer(&mut self, id: TimerId) -> Option<Action> {
        let found = (self.children.iter())
            .find(|(_, c)| matches!(c, Child::Timer { id: of, .. } if *of == id));
        let (&child, &Child::Timer { timer, .. }) = found? else {
            return None;
        };
        self.children.remove(&child);
        let output = Output::Timers(Timers::Cancel { id: timer });
        self.out.push_back(RunEffect::Child { child, output });
        None
    }
}
