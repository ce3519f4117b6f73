//! The run log's storage as the [`Host`] performs it (its records in `chrome.storage.session`):
//! the run list read once per worker, the runs a previous worker left running ended as it is
//! read ([`RunList`]); `runs`, `runLog` and the worker's `recover` answered from it; and each
//! run's record stored, by its save loop or at once, with the intents of its acting calls
//! ([`RunStore`]). The core's [`RunLog`] (in [`Host::runs`]) decides what is kept and saved.
//!
//! Invariant: the run list is read from storage at most once per worker (the host keeps it);
//! a run's intents are stored only after its log, so a call's result is stored before its
//! intent goes (`core::restart`).
//!
//! [`RunLog`]: crate::core::ops::runlog::RunLog

use serde_json::Value;

use super::io::{Input, Output, Step};
use super::stored::{found, read, write, Writes};
use super::Host;
use crate::core::evals::record::to_eval;
use crate::core::ops::runlog::{end_cut_run, needs_ending, Effect, Events, Next};
use crate::core::ops::runs::RunSummary;
use crate::core::restart::{intent_slot, stored_intents, Intent};
use crate::core::storage::{Area::Session, RUNS, RUN_PREFIX};

fn run_key(run_id: &str) -> String {
    format!("{RUN_PREFIX}{run_id}")
}

fn list_value(list: &[RunSummary]) -> Value {
    serde_json::to_value(list).unwrap_or(Value::Null)
}

/// The run list as this worker knows it: the stored one, read once (the runs a restart cut
/// ended, each with a `RUN_ERROR` in its stored log).
#[derive(Debug, Default)]
pub struct RunList {
    phase: ListPhase,
}

#[derive(Debug, Default)]
enum ListPhase {
    #[default]
    Start,
    /// The list asked for.
    Asked,
    /// A cut run's events asked for.
    Events(Ending),
    /// A cut run's intents asked for.
    Intents(Ending, Events),
    /// A cut run ended: its events stored, its intents forgotten.
    Storing(Ending, Writes),
    /// The list stored (some run was ended).
    Stored(Vec<RunSummary>),
    Done,
}

/// The list being read, the run at hand, and whether a run was ended.
#[derive(Debug)]
struct Ending {
    list: Vec<RunSummary>,
    at: usize,
    ended: bool,
}

impl Host {
    /// Steps the run list ([`RunList`]) to the list.
    pub fn run_list(
        &self,
        machine: &mut RunList,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Vec<RunSummary>> {
        let mut ending = match (std::mem::take(&mut machine.phase), input) {
            (ListPhase::Start, _) => match self.runs.borrow().list() {
                Some(list) => return Step::Done(list),
                None => {
                    machine.phase = ListPhase::Asked;
                    return Step::Do(read(Session, RUNS));
                }
            },
            (ListPhase::Asked, input) => Ending {
                list: self.runs.borrow().read_list(found(input)),
                at: 0,
                ended: false,
            },
            (ListPhase::Events(ending), input) => {
                let slot = intent_slot(&ending.list[ending.at].run_id);
                machine.phase = ListPhase::Intents(ending, Events::from_stored(found(input)));
                return Step::Do(read(Session, &slot));
            }
            (ListPhase::Intents(mut ending, mut events), input) => {
                let intents = stored_intents(found(input));
                let run = &mut ending.list[ending.at];
                if end_cut_run(run, &mut events, &intents, now_ms) {
                    ending.ended = true;
                    let stored = write(Session, &run_key(&run.run_id), Some(events.to_stored()));
                    let forgotten = write(Session, &intent_slot(&run.run_id), None);
                    let writes = Writes::default().then(stored, None).then(forgotten, None);
                    machine.phase = ListPhase::Storing(ending, writes);
                    return self.run_list(machine, None, now_ms);
                }
                ending.at += 1;
                ending
            }
            (ListPhase::Storing(mut ending, mut writes), input) => match writes.next(input) {
                Some(output) => {
                    machine.phase = ListPhase::Storing(ending, writes);
                    return Step::Do(output);
                }
                None => {
                    ending.at += 1;
                    ending
                }
            },
            (ListPhase::Stored(list), _) => {
                return Step::Done(self.runs.borrow_mut().keep_list(list))
            }
            (ListPhase::Done, _) => {
                return Step::Done(self.runs.borrow().list().unwrap_or_default())
            }
        };
        // The next run a restart cut, if any.
        while let Some(run) = ending.list.get(ending.at) {
            if needs_ending(run) {
                let key = run_key(&run.run_id);
                machine.phase = ListPhase::Events(ending);
                return Step::Do(read(Session, &key));
            }
            ending.at += 1;
        }
        if ending.ended {
            let value = list_value(&ending.list);
            machine.phase = ListPhase::Stored(ending.list);
            return Step::Do(write(Session, RUNS, Some(value)));
        }
        machine.phase = ListPhase::Done;
        Step::Done(self.runs.borrow_mut().keep_list(ending.list))
    }

    /// `recover()`, at every start of the worker: the runs a previous worker left running
    /// end now; how many.
    pub fn recover(&self, machine: &mut RunList, input: Option<Input>, now_ms: f64) -> Step<usize> {
        match self.run_list(machine, input, now_ms) {
            Step::Do(output) => Step::Do(output),
            Step::Done(list) => {
                Step::Done(list.iter().filter(|r| r.state == "interrupted").count())
            }
        }
    }

    /// `runs({tabId?})` → the kept runs, newest first (`RunSummary`s).
    pub fn runs_of(&self, machine: &mut Runs, input: Option<Input>, now_ms: f64) -> Step<Value> {
        match self.run_list(&mut machine.list, input, now_ms) {
            Step::Do(output) => Step::Do(output),
            Step::Done(list) => Step::Done(self.runs.borrow().runs(list, machine.tab_id)),
        }
    }

    /// `runLog({runId, since?})` → `{run, events, times, since, total}`: the run's events from
    /// index `since`, from this worker or, after a restart, from storage.
    pub fn run_log(
        &self,
        machine: &mut RunLogRead,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        let (run_id, since) = (machine.run_id.as_str(), machine.since);
        if let Some(summary) = machine.summary.take() {
            return Step::Done(Ok(
                Events::from_stored(found(input)).stored_log(&summary, since)
            ));
        }
        if input.is_none() && machine.list.is_none() {
            if let Some(live) = self.runs.borrow().live_log(run_id, since) {
                return Step::Done(Ok(live));
            }
        }
        let list = machine.list.get_or_insert_with(RunList::default);
        match self.run_list(list, input, now_ms) {
            Step::Do(output) => Step::Do(output),
            Step::Done(list) => match list.into_iter().find(|r| r.run_id == run_id) {
                Some(summary) => {
                    machine.summary = Some(summary);
                    Step::Do(read(Session, &run_key(run_id)))
                }
                None => Step::Done(Err(format!("runLog: no run `{run_id}` is kept"))),
            },
        }
    }

    /// Stores a run's record as [`RunStore`] says: its answer, the run log's effects to
    /// perform (a save loop to start) and how its last write went.
    pub fn store_run(
        &self,
        machine: &mut RunStore,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Stored> {
        let run_id = machine.run_id.clone();
        let phase = std::mem::replace(&mut machine.phase, StorePhase::Done);
        match (phase, input) {
            (StorePhase::Start, _) => match machine.every_ms {
                Some(ms) => {
                    machine.phase = StorePhase::Sleeping;
                    Step::Do(Output::Sleep { ms })
                }
                None if machine.flush => self.snapshot(machine, now_ms),
                None => self.store_intents(machine),
            },
            (StorePhase::Sleeping, _) => self.snapshot(machine, now_ms),
            (StorePhase::Listing(summary, events, mut list), input) => {
                match self.run_list(&mut list, input, now_ms) {
                    Step::Do(output) => {
                        machine.phase = StorePhase::Listing(summary, events, list);
                        Step::Do(output)
                    }
                    Step::Done(read) => {
                        let (list, dropped) = self.runs.borrow_mut().remember(read, *summary);
                        let warning = format!(
                            "webmcp-host: the record of run {run_id} could not be stored: "
                        );
                        let mut writes = Writes::default()
                            .then(
                                write(Session, &run_key(&run_id), Some(events.to_stored())),
                                Some(warning.clone()),
                            )
                            .then(write(Session, RUNS, Some(list_value(&list))), Some(warning));
                        for old in dropped {
                            writes = writes.then(write(Session, &run_key(&old), None), None);
                        }
                        machine.phase = StorePhase::Saving(writes);
                        self.store_run(machine, None, now_ms)
                    }
                }
            }
            (StorePhase::Saving(mut writes), input) => match writes.next(input) {
                Some(output) => {
                    machine.phase = StorePhase::Saving(writes);
                    Step::Do(output)
                }
                None => match (self.runs.borrow_mut().saved(&run_id), machine.every_ms) {
                    (Next::Again, Some(ms)) => {
                        machine.phase = StorePhase::Sleeping;
                        Step::Do(Output::Sleep { ms })
                    }
                    (Next::Stop, Some(_)) => Step::Done(machine.answer(Ok(()))),
                    (next, None) => {
                        if next == Next::Again {
                            machine.effects.push(Effect::SaveAfter { ms: 0 });
                        }
                        self.store_intents(machine)
                    }
                },
            },
            (StorePhase::Intents(mut writes), input) => match writes.next(input) {
                Some(output) => {
                    machine.phase = StorePhase::Intents(writes);
                    Step::Do(output)
                }
                None => Step::Done(machine.answer(writes.last())),
            },
            (StorePhase::Done, _) => Step::Done(machine.answer(Ok(()))),
        }
    }

    /// The run's record to store now, if it is kept.
    fn snapshot(&self, machine: &mut RunStore, now_ms: f64) -> Step<Stored> {
        let Some((summary, events)) = self.runs.borrow_mut().snapshot(&machine.run_id) else {
            return match machine.every_ms {
                Some(_) => Step::Done(machine.answer(Ok(()))),
                None => self.store_intents(machine),
            };
        };
        machine.phase = StorePhase::Listing(Box::new(summary), events, RunList::default());
        self.store_run(machine, None, now_ms)
    }

    /// The run's intents stored (or removed), if that was asked.
    fn store_intents(&self, machine: &mut RunStore) -> Step<Stored> {
        let Some(intents) = machine.intents.take() else {
            return Step::Done(machine.answer(Ok(())));
        };
        let run_id = &machine.run_id;
        let warning = (!machine.forget)
            .then(|| format!("webmcp-host: run {run_id}'s intents were not stored: "));
        let mut writes =
            Writes::default().then(write(Session, &intent_slot(run_id), intents), warning);
        let output = writes.next(None).expect("one write");
        machine.phase = StorePhase::Intents(writes);
        Step::Do(output)
    }
}

/// `runs({tabId?})` under way.
#[derive(Debug)]
pub struct Runs {
    tab_id: Option<i64>,
    list: RunList,
}

impl Runs {
    /// The runs of the tab `tab_id` (none: of every tab).
    pub fn new(tab_id: Option<i64>) -> Runs {
        Runs {
            tab_id,
            list: RunList::default(),
        }
    }
}

/// `runLog({runId, since?})` under way.
#[derive(Debug)]
pub struct RunLogRead {
    run_id: String,
    since: usize,
    list: Option<RunList>,
    /// The run as listed, once its events are asked for.
    summary: Option<RunSummary>,
}

impl RunLogRead {
    /// The log of run `run_id` from its event `since`.
    pub fn new(run_id: &str, since: usize) -> RunLogRead {
        RunLogRead {
            run_id: run_id.to_owned(),
            since,
            list: None,
            summary: None,
        }
    }
}

/// A run's record stored: by its save loop (every so often while it changes), at once (before
/// anything of the run acts), with its intents after it, or its intents forgotten.
#[derive(Debug)]
pub struct RunStore {
    run_id: String,
    /// A save loop: how long it waits before each save.
    every_ms: Option<u32>,
    /// Whether the record is stored now.
    flush: bool,
    /// The intents to store after the record (`Some(None)`: remove them).
    intents: Option<Option<Value>>,
    /// Whether the intents are only forgotten (a failure is not warned of).
    forget: bool,
    effects: Vec<Effect>,
    phase: StorePhase,
}

#[derive(Debug)]
enum StorePhase {
    Start,
    Sleeping,
    Listing(Box<RunSummary>, Events, RunList),
    Saving(Writes),
    Intents(Writes),
    Done,
}

/// A [`RunStore`]'s answer.
#[derive(Debug, PartialEq)]
pub struct Stored {
    /// The run log's effects to perform (a save loop to start when the record changed while
    /// it was stored).
    pub effects: Vec<Effect>,
    /// How storing the intents went (`Ok` when none were to be stored).
    pub result: Result<(), String>,
}

impl RunStore {
    fn new(run_id: &str) -> RunStore {
        RunStore {
            run_id: run_id.to_owned(),
            every_ms: None,
            flush: false,
            intents: None,
            forget: false,
            effects: Vec::new(),
            phase: StorePhase::Start,
        }
    }

    /// The run's save loop ([`Effect::SaveAfter`]): waits `ms`, stores the record's snapshot,
    /// and again while it changed.
    pub fn every(run_id: &str, ms: u32) -> RunStore {
        RunStore {
            every_ms: Some(ms),
            ..RunStore::new(run_id)
        }
    }

    /// The run's record stored now, not at its save loop's next tick (a change meanwhile goes
    /// on in a save loop).
    pub fn flush(run_id: &str) -> RunStore {
        RunStore {
            flush: true,
            ..RunStore::new(run_id)
        }
    }

    /// The intents of the run's acting calls stored after its record (none: removed), the
    /// failure warned of.
    pub fn intents(run_id: &str, intents: &[Intent]) -> RunStore {
        let value =
            (!intents.is_empty()).then(|| serde_json::to_value(intents).unwrap_or_default());
        RunStore {
            intents: Some(value),
            ..RunStore::flush(run_id)
        }
    }

    /// The run ended (or was ended after a restart): its intents are no longer kept.
    pub fn forget_intents(run_id: &str) -> RunStore {
        RunStore {
            intents: Some(None),
            forget: true,
            ..RunStore::new(run_id)
        }
    }

    fn answer(&mut self, result: Result<(), String>) -> Stored {
        Stored {
            effects: std::mem::take(&mut self.effects),
            result,
        }
    }
}

/// `toEval({runId, ...})`: an eval case made of a kept run's log (read as `runLog` reads it,
/// [`RunLogRead`], then `core::evals::record::to_eval`).
#[derive(Debug)]
pub struct ToEval {
    request: Value,
    log: RunLogRead,
}

impl ToEval {
    /// The case `request` asks for, of run `run_id`.
    pub fn new(run_id: &str, request: Value) -> ToEval {
        ToEval {
            request,
            log: RunLogRead::new(run_id, 0),
        }
    }
}

impl Host {
    /// One step of a [`ToEval`].
    pub fn to_eval(
        &self,
        m: &mut ToEval,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        match self.run_log(&mut m.log, input, now_ms) {
            Step::Do(output) => Step::Do(output),
            Step::Done(log) => Step::Done(log.and_then(|log| to_eval(&m.request, &log))),
        }
    }
}

#[cfg(test)]
mod tests;
