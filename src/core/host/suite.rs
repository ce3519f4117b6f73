//! The suites as the [`Host`] performs them: an evaluation ([`Evaluating`]), a simulations
//! suite ([`Simulating`]), a replay diff ([`Replaying`]) and a crawl
//! ([`super::crawling::Crawling`]), each a core machine (`evals::plan::Evaluation`,
//! `evals::simulate::Simulate`, `evals::record::ReplayDiff`, `crawl::Crawl`) whose every ask
//! the host turns into an errand: a listing ([`Listing`]) or a page call through the gate
//! ([`HostCall::asked`]) driven here as a child, or one output of the vocabulary (a run, its
//! log, a reload, a frame asked, storage) answered by one input. The progress each machine
//! reports is pushed to the extension's pages ([`Ui::Push`]) before it goes on.
//!
//! The shell sees one [`Output`] at a time and answers each with one [`Input`]
//! (`Host::evaluate`, `Host::simulate`, `Host::replay_diff`, `Host::crawl`).
//!
//! Invariant: a suite's page call reaches the page only as a [`HostCall::asked`] (the gate
//! screens it); a suite never reads another machine's JSON answer back.

use serde_json::Value;

use super::call::HostCall;
use super::io::{unasked, Input, Output, Step, Ui};
use super::listing::Listing;
use super::Host;
use crate::core::page::bridge::Reply;
use crate::core::page::call::CallAnswer;
use crate::core::page::tabs::Listed;

mod evaluate;
mod replay;

pub use evaluate::{Evaluating, Simulating};
pub use replay::Replaying;

/// A suite's next move: an output, or its answer or why there is none.
pub type Next = Step<Result<Value, String>>;

/// One thing a suite asked for, under way.
#[derive(Debug)]
pub(crate) enum Errand {
    /// A listing of the tab.
    List(Listing),
    /// A page call through the gate.
    Call(Box<HostCall>),
    /// One output (`None` once out): its input is what it got.
    Out(Option<Output>),
}

/// What an errand got.
#[derive(Debug)]
pub(crate) enum Got {
    /// The listing.
    Listed(Listed),
    /// The call's answer.
    Called(CallAnswer),
    /// The output's input (`None`: none came, a bug of the driver).
    In(Option<Input>),
}

impl Errand {
    /// One output to perform.
    pub(crate) fn out(output: Output) -> Errand {
        Errand::Out(Some(output))
    }
}

/// A core machine the host performs as a suite.
pub(crate) trait Suite {
    /// What it is, for an internal error's words (`the evaluation`).
    const WHAT: &'static str;
    /// Its next move at `now_ms`: an errand, or its answer.
    fn next(&mut self, host: &Host, now_ms: f64) -> Result<Errand, Result<Value, String>>;
    /// What the last errand got, at `now_ms`: a push to make before going on (its progress),
    /// or an error that ends it.
    fn got(&mut self, got: Got, now_ms: f64) -> Result<Option<Ui>, String>;
}

/// A suite under way: the machine, its errand, whether a push waits for its input.
#[derive(Debug)]
pub(crate) struct Suited<S> {
    pub(crate) suite: S,
    errand: Option<Errand>,
    pushing: bool,
}

impl<S> Suited<S> {
    pub(crate) fn new(suite: S) -> Suited<S> {
        Suited {
            suite,
            errand: None,
            pushing: false,
        }
    }
}

/// An input that came where the suite `what` did not ask for it, said as the bug it is.
pub(crate) fn internal(what: &str, fed: Option<&Input>) -> String {
    format!(
        "internal error: {} came where {what} did not ask for it",
        unasked(fed)
    )
}

/// A frame's reply as its text, or why there is none (`ms`: how long it had).
pub(crate) fn reply_text(reply: Reply, ms: u32) -> Result<String, String> {
    match reply {
        Reply::Answered(Ok(text)) => Ok(text),
        Reply::Answered(Err(e)) | Reply::Failed(e) => Err(e),
        Reply::TimedOut => Err(format!("no answer within {ms} ms")),
    }
}

impl Host {
    /// Steps a suite: the input of its last output fed to the errand that asked for it, the
    /// suite told what the errand got, its progress pushed, its next errand started.
    pub(crate) fn suite<S: Suite>(
        &self,
        s: &mut Suited<S>,
        input: Option<Input>,
        now: f64,
    ) -> Next {
        let mut input = input;
        loop {
            if std::mem::take(&mut s.pushing) {
                match input.take() {
                    Some(Input::Pushed) => {}
                    fed => return Step::Done(Err(internal(S::WHAT, fed.as_ref()))),
                }
            }
            match s.errand.take() {
                Some(mut errand) => match self.errand(&mut errand, input.take(), now) {
                    Step::Do(output) => {
                        s.errand = Some(errand);
                        return Step::Do(output);
                    }
                    Step::Done(got) => match s.suite.got(got, now) {
                        Err(error) => return Step::Done(Err(error)),
                        Ok(Some(push)) => {
                            s.pushing = true;
                            return Step::Do(Output::Ui(push));
                        }
                        Ok(None) => {}
                    },
                },
                None if input.is_some() => {
                    return Step::Done(Err(internal(S::WHAT, input.as_ref())));
                }
                None => {}
            }
            match s.suite.next(self, now) {
                Ok(errand) => s.errand = Some(errand),
                Err(answer) => return Step::Done(answer),
            }
        }
    }

    /// Steps one errand: its child driven, or its output given and its input taken.
    fn errand(&self, errand: &mut Errand, input: Option<Input>, now: f64) -> Step<Got> {
        match errand {
            Errand::List(listing) => match self.list(listing, input, now) {
                Step::Done(listed) => Step::Done(Got::Listed(listed)),
                Step::Do(output) => Step::Do(output),
            },
            Errand::Call(call) => match self.advance(call, input, now) {
                Step::Done(answer) => Step::Done(Got::Called(answer)),
                Step::Do(output) => Step::Do(output),
            },
            Errand::Out(out) => match (out.take(), input) {
                (Some(output), None) => Step::Do(output),
                (_, fed) => Step::Done(Got::In(fed)),
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
