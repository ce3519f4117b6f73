//! Every operation the [`Host`] performs as one of its machines, under one name: the door
//! opens an operation as a [`Machine`] ([`Opened::Machine`](super::door::Opened::Machine)) and
//! the shell drives any of them with one call, [`Host::step`], to the operation's answer
//! (`Result<Value, String>`, the answer the automation surface and the pages get). The shell
//! names no machine's own type.
//!
//! Invariant: a machine here answers as its operation answers; what its answer means to
//! another machine is never read back from this JSON (the machines hand each other typed
//! values inside the host).

use serde_json::Value;

use super::call::HostCall;
use super::checks::{CheckServer, TestModel};
use super::conversations::Conversations;
use super::crawling::Crawling;
use super::io::{Input, Step};
use super::mcp::{AuthState, ExposedReply, Exposing, Exposures, ServerTools, SignIn, SigningOut};
use super::probe::Probing;
use super::report::BugReport;
use super::runlog::{RunLogRead, Runs, ToEval};
use super::settings::{Configure, SettingsView};
use super::suite::{Evaluating, Replaying, Simulating};
use super::workbench::{Diagnose, Inventory, Timeline, Validate};
use super::Host;

/// An operation under way as one of the host's machines.
#[derive(Debug)]
pub enum Machine {
    /// `callTool` on a tab: a page call through the gate.
    Call(Box<HostCall>),
    /// `audit`: the tab listed, and its tools probed.
    Audit(Box<Probing>),
    /// `evaluate` in smoke or agent mode.
    Evaluate(Box<Evaluating>),
    /// `evaluate` in simulate mode.
    Simulate(Box<Simulating>),
    /// `replayDiff`.
    Replay(Box<Replaying>),
    /// `crawl`.
    Crawl(Box<Crawling>),
    /// `settings`.
    Settings(Box<SettingsView>),
    /// `configure`.
    Configure(Box<Configure>),
    /// `conversations`, `conversation`, `forget`.
    Conversations(Box<Conversations>),
    /// `validateArguments`.
    Validate(Box<Validate>),
    /// `inventory`.
    Inventory(Box<Inventory>),
    /// `diagnose`.
    Diagnose(Box<Diagnose>),
    /// `timeline`.
    Timeline(Box<Timeline>),
    /// `bugReport`.
    BugReport(Box<BugReport>),
    /// `runs`.
    Runs(Box<Runs>),
    /// `runLog`.
    RunLog(Box<RunLogRead>),
    /// An answer known when the operation opened (`version`, `evalReport`), given at the
    /// first step.
    Answered(Option<Result<Value, String>>),
    /// `testModel`.
    TestModel(Box<TestModel>),
    /// `checkServer`.
    CheckServer(Box<CheckServer>),
    /// `listTools` with `server`.
    ServerTools(Box<ServerTools>),
    /// `toEval`.
    ToEval(Box<ToEval>),
    /// `expose`.
    Expose(Box<Exposing>),
    /// `exposures`.
    Exposures(Exposures),
    /// `exposedTools`, for the sender's origin.
    ExposedTools(Box<ExposedReply>),
    /// `signIn`.
    SignIn(Box<SignIn>),
    /// `signOut`.
    SignOut(Box<SigningOut>),
    /// `authState`.
    AuthState(Box<AuthState>),
}

impl Host {
    /// Steps any machine of an operation: an output for the shell, or the operation's answer.
    pub fn step(
        &self,
        machine: &mut Machine,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        match machine {
            Machine::Call(m) => match self.advance(m, input, now_ms) {
                Step::Do(output) => Step::Do(output),
                Step::Done(answer) => Step::Done(Ok(answer.to_json())),
            },
            Machine::Audit(m) => self.probe(m, input, now_ms),
            Machine::Evaluate(m) => self.evaluate(m, input, now_ms),
            Machine::Simulate(m) => self.simulate(m, input, now_ms),
            Machine::Replay(m) => self.replay_diff(m, input, now_ms),
            Machine::Crawl(m) => self.crawl(m, input, now_ms),
            Machine::Settings(m) => self.settings(m, input, now_ms),
            Machine::Configure(m) => self.configure(m, input, now_ms),
            Machine::Conversations(m) => self.conversations(m, input, now_ms),
            Machine::Validate(m) => self.validate(m, input, now_ms),
            Machine::Inventory(m) => self.inventory(m, input, now_ms),
            Machine::Diagnose(m) => self.diagnose(m, input, now_ms),
            Machine::Timeline(m) => self.timeline(m, input, now_ms),
            Machine::BugReport(m) => self.bug_report(m, input, now_ms),
            Machine::Runs(m) => match self.runs_of(m, input, now_ms) {
                Step::Do(output) => Step::Do(output),
                Step::Done(answer) => Step::Done(Ok(answer)),
            },
            Machine::RunLog(m) => self.run_log(m, input, now_ms),
            Machine::Answered(answer) => Step::Done(
                answer
                    .take()
                    .unwrap_or_else(|| Err("internal error: an answer was asked for again".into())),
            ),
            Machine::TestModel(m) => self.test_model(m, input, now_ms),
            Machine::CheckServer(m) => self.check_server(m, input, now_ms),
            Machine::ServerTools(m) => self.server_tools(m, input, now_ms),
            Machine::ToEval(m) => self.to_eval(m, input, now_ms),
            Machine::Expose(m) => self.expose(m, input),
            Machine::Exposures(m) => self.exposures(m, input),
            Machine::ExposedTools(m) => self.exposed_reply(m, input, now_ms),
            Machine::SignIn(m) => self.sign_in_asked(m, input, now_ms),
            Machine::SignOut(m) => self.sign_out(m, input),
            Machine::AuthState(m) => self.auth_state(m, input, now_ms),
        }
    }
}
