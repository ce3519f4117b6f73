//! The suites played: evaluations, simulations, replay diffs, crawls and audits, each the
//! host's machine driven through [`Play::drive`] as the shell drives what the door opened
//! (`Machine::Evaluate`, `Simulate`, `Replay`, `Crawl`, `Audit` through `Host::step`, whose
//! arms call the same methods).

use serde_json::Value;

use super::*;
use crate::core::crawl::CrawlRequest;
use crate::core::evals::plan::EvaluateRequest;
use crate::core::evals::simulate::SimulateRequest;
use crate::core::host::crawling::Crawling;
use crate::core::host::probe::Probing;
use crate::core::host::suite::{Evaluating, Replaying, Simulating};
use crate::core::ops::ReplaySource;

impl Play {
    /// `evaluate({mode: "smoke" | "agent"})` as the shell drives it.
    pub(crate) fn evaluate(&mut self, request: EvaluateRequest) -> Value {
        let calls = format!("call_{}", self.fresh());
        let mut e = Evaluating::new(request, "eval_play".into(), calls);
        let answer = self.drive(|host, input, now| host.evaluate(&mut e, input, now));
        answer.unwrap_or_else(|error| panic!("the evaluation failed: {error}"))
    }

    /// `evaluate({mode: "simulate"})` as the shell drives it.
    pub(crate) fn simulate(&mut self, request: SimulateRequest) -> Value {
        let calls = format!("call_{}", self.fresh());
        let mut s = Simulating::new(request, "sim_play".into(), calls);
        let answer = self.drive(|host, input, now| host.simulate(&mut s, input, now));
        answer.unwrap_or_else(|error| panic!("the simulation failed: {error}"))
    }

    /// `crawl({tabId, ...})` as the shell drives it.
    pub(crate) fn crawl(&mut self, request: CrawlRequest) -> Result<Value, String> {
        let mut c = Crawling::new(request);
        self.drive(|host, input, now| host.crawl(&mut c, input, now))
    }

    /// `audit({...})` as the shell drives it.
    pub(crate) fn audit(&mut self, request: AuditRequest) -> Result<Value, String> {
        let mut probing = Probing::new(request, format!("call_{}", self.fresh()));
        self.drive(|host, input, now| host.probe(&mut probing, input, now))
    }

    /// `replayDiff({runId, tabId})` as the shell drives it.
    pub(crate) fn replay_diff(&mut self, tab_id: i64, run_id: &str) -> Result<Value, String> {
        let source = ReplaySource::Run(run_id.to_owned());
        let mut r = Replaying::new(tab_id, source, format!("call_{}", self.fresh()));
        self.drive(|host, input, now| host.replay_diff(&mut r, input, now))
    }
}
