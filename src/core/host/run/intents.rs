//! The intents of a run's acting calls stored by the host ([`RunStore`]), one store at a time
//! in the order the drive asked (a later store never lands before an earlier one), and, at
//! the run's end, forgotten after every store before. What the run log asks of the shell
//! meanwhile (a save loop to start) goes out as [`RunEffect::Log`].

use super::{Child, HostRun, Phase, RunEffect};
use crate::core::host::io::{Input, Step};
use crate::core::host::runlog::RunStore;
use crate::core::host::Host;
use crate::core::restart::Intent;
use crate::core::run::drive::Answer;

/// A store of the run's intents, waiting for its turn or under way.
#[derive(Debug)]
pub(super) struct Storing {
    /// The store.
    store: RunStore,
    /// The acting call whose intent it stores, when the drive waits for it.
    call_id: Option<String>,
    /// Whether it is a step of the run's end.
    at_end: bool,
}

impl Host {
    /// Stores the run's `intents` after every store asked before; the drive hears of it when
    /// `call_id` waits for it.
    pub(super) fn keep_intents(
        &self,
        run: &mut HostRun,
        call_id: Option<String>,
        intents: &[Intent],
        now: f64,
    ) {
        let store = RunStore::intents(&run.run_id, intents);
        self.queue_store(run, store, call_id, false, now);
    }

    /// The run's intents forgotten, after every store before: a step of the run's end.
    pub(super) fn drop_intents(&self, run: &mut HostRun, now: f64) {
        let store = RunStore::forget_intents(&run.run_id);
        self.queue_store(run, store, None, true, now);
    }

    fn queue_store(
        &self,
        run: &mut HostRun,
        store: RunStore,
        call_id: Option<String>,
        at_end: bool,
        now: f64,
    ) {
        let storing = Storing {
            store,
            call_id,
            at_end,
        };
        run.stores.push_back(storing);
        if !run.storing {
            self.next_store(run, now);
        }
    }

    fn next_store(&self, run: &mut HostRun, now: f64) {
        run.storing = false;
        if let Some(storing) = run.stores.pop_front() {
            run.storing = true;
            let child = run.child(Child::Store(Box::new(storing)));
            self.advance_store(run, child, None, now);
        }
    }

    /// Steps the store under way; once done, the drive hears of it (when it waits) and the
    /// next store starts.
    pub(super) fn advance_store(
        &self,
        run: &mut HostRun,
        child: u64,
        input: Option<Input>,
        now: f64,
    ) {
        let Some(Child::Store(mut storing)) = run.children.remove(&child) else {
            return;
        };
        match self.store_run(&mut storing.store, input, now) {
            Step::Do(output) => {
                run.children.insert(child, Child::Store(storing));
                run.out.push_back(RunEffect::Child { child, output });
            }
            Step::Done(stored) => {
                if !stored.effects.is_empty() {
                    run.out.push_back(RunEffect::Log(stored.effects));
                }
                if let Some(call_id) = storing.call_id {
                    let error = stored.result.err();
                    self.to_drive(run, Answer::IntentsStored { call_id, error });
                }
                if storing.at_end {
                    end_step_done(run);
                }
                self.next_store(run, now);
            }
        }
    }
}

/// One step of the run's end is done: once none is left, the shell hears the drive finished.
pub(super) fn end_step_done(run: &mut HostRun) {
    if let Phase::Ending(_, left) = &mut run.phase {
        *left -= 1;
        if *left == 0 {
            if let Phase::Ending(finished, _) = std::mem::replace(&mut run.phase, Phase::Over) {
                run.out.push_back(RunEffect::Act(finished));
            }
        }
    }
}
