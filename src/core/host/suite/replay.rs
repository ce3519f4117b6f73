//! `replayDiff({runId | transcript, tabId})` as the host performs it ([`Replaying`]): a kept
//! run's log read (`runLog`), then every recorded call played on the tab as it is now
//! ([`ReplayDiff`]), each a page call through the gate by [`Asker::Replay`].

use serde_json::Value;

use super::{internal, Errand, Got, Next, Suite, Suited};
use crate::core::evals::record::{DiffNext, ReplayDiff};
use crate::core::gate::Asker;
use crate::core::host::call::HostCall;
use crate::core::host::io::{Input, Output, Runs, Ui};
use crate::core::host::listing::Listing;
use crate::core::host::Host;
use crate::core::ops::ReplaySource;
use crate::core::page::call::CallRequest;

/// A replay diff under way.
#[derive(Debug)]
pub struct Replaying(Suited<Diff>);

#[derive(Debug)]
pub(crate) struct Diff {
    tab_id: i64,
    /// The run whose log is still to be read.
    run: Option<String>,
    /// The diff, once its calls are known (or why they are not).
    diff: Option<Result<ReplayDiff, String>>,
    calls: String,
    made: u64,
}

impl Replaying {
    /// The diff of `source` on tab `tab_id`; `calls` is a fresh name from which its calls' ids
    /// are made.
    pub fn new(tab_id: i64, source: ReplaySource, calls: String) -> Replaying {
        let (run, diff) = match source {
            ReplaySource::Run(run_id) => (Some(run_id), None),
            ReplaySource::Transcript(text) => {
                (None, Some(ReplayDiff::of_transcript(tab_id, &text)))
            }
        };
        Replaying(Suited::new(Diff {
            tab_id,
            run,
            diff,
            calls,
            made: 0,
        }))
    }
}

impl Suite for Diff {
    const WHAT: &'static str = "the replay diff";

    fn next(&mut self, _: &Host, _: f64) -> Result<Errand, Result<Value, String>> {
        let diff = match &mut self.diff {
            None => {
                let run_id = self.run.clone().unwrap_or_default();
                return Ok(Errand::out(Output::Runs(Runs::Log { run_id })));
            }
            Some(Err(error)) => return Err(Err(error.clone())),
            Some(Ok(diff)) => diff,
        };
        Ok(match diff.poll() {
            DiffNext::Done(answer) => return Err(Ok(answer)),
            DiffNext::ListTools { tab_id, settle } => Errand::List(Listing::kept(tab_id, settle)),
            DiffNext::Call {
                tab_id,
                name,
                args,
                timeout_ms,
            } => {
                self.made += 1;
                let id = format!("{}_{}", self.calls, self.made);
                let request = CallRequest::asked(tab_id, name, args, timeout_ms);
                Errand::Call(Box::new(HostCall::asked(Asker::Replay, request, id)))
            }
        })
    }

    fn got(&mut self, got: Got, _: f64) -> Result<Option<Ui>, String> {
        match (&mut self.diff, got) {
            (None, Got::In(Some(Input::Logged(log)))) => {
                let run_id = self.run.take().unwrap_or_default();
                self.diff = Some(log.map(|log| ReplayDiff::of_run(self.tab_id, &run_id, &log)));
            }
            (Some(Ok(diff)), Got::Listed(listed)) => diff.tools(listed),
            (Some(Ok(diff)), Got::Called(answer)) => diff.called(&answer),
            (_, Got::In(fed)) => return Err(internal(Self::WHAT, fed.as_ref())),
            _ => return Err(internal(Self::WHAT, None)),
        }
        Ok(None)
    }
}

impl Host {
    /// Steps a replay diff (`replayDiff`): the input of its last output fed, its next output
    /// or its answer.
    pub fn replay_diff(&self, r: &mut Replaying, input: Option<Input>, now_ms: f64) -> Next {
        self.suite(&mut r.0, input, now_ms)
    }
}
