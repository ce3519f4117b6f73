//! `evaluate({mode: "simulate"})`: outcomes judged on the live tab, in the way of
//! webmcp-evals' `simulate` mode.
//!
//! Per case, agent model and run ([`Simulate`], a sans-IO machine: [`Simulate::poll`] says what
//! to do, [`Simulate::handle`] takes what happened, the time always given as a value), once the
//! suite's first step has listed the tab and kept the origin it shows ([`Began`]: every
//! listing below must show that origin, else the step is not taken and the case is an error
//! naming both; a tab whose origin cannot be read at the start runs no case):
//!
//! 1. the tab reloaded first when asked (`reload`), and listed until its page is ready
//!    (`core::page::ready`: loaded, its tools settled, within a budget);
//! 2. `setup`: each call made as `callTool` makes it, through the gate (consequential calls
//!    confirmed as in every mode), after the tool is listed on the suite's origin; a failed
//!    call ends the case as `error`, unjudged;
//! 3. the conversation: the user's line (the case's `userMessage`, or the user model's, from
//!    its brief and the text of the conversation so far), then the agent's turn (a run on the
//!    tab with the conversation so far; before each, the tab is listed until its page is
//!    loaded, and the turn happens only on the suite's origin), until the user ends it,
//!    `maxTurns`, the `maxDurationMs` deadline or an error (`endedBy`);
//! 4. the DOM assertions on the final page: the tab listed as before a turn, on the suite's
//!    origin, then the reads sent to the document that listing showed (a tab that holds
//!    another by then answers nothing) and read by its content script; a mismatch fails the
//!    case and no judge can overrule it;
//! 5. the judge model's verdict on the success criteria (a run that offers it only
//!    `submit_result`), on a transcript where every value is written as JSON on the line that
//!    introduces it (no value can make a line of its structure) and only the results the
//!    application gave the agent's calls are evidence: a verdict that cites nothing is an
//!    error, and a pass is overruled unless each item of its evidence quotes one of those
//!    results (`evidence.rs`; a declined, refused, blocked or failed call has none).
//!
//! The user model's and the judge's runs offer no tool (`noTools`). Every run's outputs are
//! kept in the result's `recording` (replay transcripts, per role and turn); `replay` plays
//! them again in place of the models: the same verdict with no model call, and a judge asked
//! again only when its transcript changed, or always with `rejudge`.

mod evidence;
mod file;
mod handle;
pub mod prompts;
mod read;
pub mod report;
mod request;
mod result;
mod step;
#[cfg(test)]
mod tests;

pub use file::{parse, parse_value, write, DomAssertion, Expect, SetupCall, Simulation, UserSide};
pub use request::SimulateRequest;

use serde_json::{json, Map, Value};

use super::began::Began;
use super::wait::ToolWait;
use crate::core::agui::Message;
use crate::core::limits::SIM_DURATION_MS;
use crate::core::page::bridge::{DomObserved, DomQuery, Target};
use crate::core::page::call::{CallAnswer, Listed as Decided};
use crate::core::page::ready::Settle;
use crate::core::page::tabs::Listed;
use crate::core::run::RunEnded;

/// Why a conversation stopped (reported beside the verdict, never in place of one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndedBy {
    /// The user model wrote the end marker.
    User,
    /// A `userMessage` case: one turn, answered.
    SingleTurn,
    /// The turn budget ran out.
    MaxTurns,
    /// The time budget ran out.
    Timeout,
    /// A model, the page or the host failed.
    Error,
}

impl EndedBy {
    /// Its name in results (`user`, `singleTurn`, `maxTurns`, `timeout`, `error`).
    pub fn name(self) -> &'static str {
        match self {
            EndedBy::User => "user",
            EndedBy::SingleTurn => "singleTurn",
            EndedBy::MaxTurns => "maxTurns",
            EndedBy::Timeout => "timeout",
            EndedBy::Error => "error",
        }
    }

    /// How the judge is told the conversation ended.
    pub fn describe(self, turns: usize) -> String {
        match self {
            EndedBy::User => "The user ended the conversation, taking the matter as settled.".into(),
            EndedBy::SingleTurn => "The single-turn exchange ended once the assistant answered.".into(),
            EndedBy::MaxTurns => format!("The conversation was cut off after {turns} turns, when the turn budget ran out; it did not come to a natural end."),
            EndedBy::Timeout => format!("The conversation was cut off after {turns} turns, when the time budget ran out; it did not come to a natural end."),
            EndedBy::Error => "The conversation was cut short by a failure of the assistant or the page.".into(),
        }
    }
}

/// A setup call and how it went.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupOutcome {
    /// The tool.
    pub function_name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
    /// Its result, when it succeeded.
    pub result: Option<Value>,
    /// Why it failed.
    pub error: Option<String>,
}

/// A call the agent made in a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnCall {
    /// The tool.
    pub function_name: String,
    /// Its arguments.
    pub args: Value,
    /// Its result, when it ran.
    pub result: Option<Value>,
}

/// One turn: the user's line and the agent's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// From 1.
    pub index: usize,
    /// What the user said.
    pub user_message: String,
    /// What the agent answered.
    pub agent_text: String,
    /// The calls it made.
    pub tool_calls: Vec<TurnCall>,
    /// Its run.
    pub run_id: Option<String>,
}

/// Who a run speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The simulated user (no tool).
    User,
    /// The agent under test (the tab's tools).
    Agent,
    /// The judge (`submit_result` only).
    Judge,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Agent => "agent",
            Role::Judge => "judge",
        }
    }
}

/// What the worker does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Load the suite's first page again and wait for it, then [`Reply::Reloaded`].
    Reload {
        /// The tab.
        tab_id: i64,
    },
    /// List the tab's tools after `after_ms`, its page as settled as `settle` says, then
    /// [`Reply::Listed`]: at the suite's start (its origin read), after a reload, before a
    /// setup call, an agent turn and the DOM reads (its origin checked).
    ListTools {
        /// The tab.
        tab_id: i64,
        /// How long to wait first, ms.
        after_ms: u32,
        /// How settled the page must be: [`Settle::AfterLoad`] after a reload,
        /// [`Settle::Loaded`] otherwise (a page a step left loading is listed once parsed).
        settle: Settle,
    },
    /// A setup call, as `callTool` makes it (through the gate), then [`Reply::Called`].
    Call {
        /// The tab.
        tab_id: i64,
        /// The tool.
        name: String,
        /// Its arguments.
        args: Map<String, Value>,
        /// Its timeout, ms.
        timeout_ms: u32,
        /// The tool as the listing before the call found it on the suite's origin, and its
        /// document: the call goes to that document or nowhere (`CallRequest::expect`).
        expect: Option<Box<Decided>>,
    },
    /// Start this run (a `run` request) and stop it (`stop({runId})`) if it has not ended
    /// within `within_ms`, then [`Reply::Ran`].
    Run {
        /// For whom.
        role: Role,
        /// The `run` request (with its `runId`).
        request: Value,
        /// The conversation's time left, ms.
        within_ms: u64,
    },
    /// Read the final page for the DOM assertions, then [`Reply::Queried`].
    QueryDom {
        /// The tab.
        tab_id: i64,
        /// The top frame's document the listing before the reads showed on the suite's origin
        /// (when Chrome named it): the reads go to it or nowhere.
        target: Target,
        /// The reads.
        queries: Vec<DomQuery>,
    },
    /// The answer.
    Done(Value),
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The tab loaded its first page again, or why not.
    Reloaded(Result<(), String>),
    /// The tab's listing, or why it failed.
    Listed(Listed),
    /// How the setup call ended.
    Called(CallAnswer),
    /// How the run ended (typed: [`RunEnded`]) or why it did not run.
    Ran(Result<RunEnded, String>),
    /// The page's answers to the DOM reads, or why there are none.
    Queried(Result<Vec<DomObserved>, String>),
}

/// Where a case's run is.
#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Reload,
    /// After the reload: the tab listed once its page is ready, then the setup.
    Loaded,
    Setup {
        index: usize,
        wait: ToolWait,
        listed: bool,
        after_ms: u32,
    },
    /// The user's next line is wanted.
    User,
    /// The agent answers this line.
    Agent(String),
    /// The tab listed before the DOM reads.
    Dom,
    /// The DOM read in the document that listing showed.
    DomRead(Target),
    Judge,
    Over,
}

/// One case × model × run under way.
#[derive(Debug)]
struct Attempt {
    stage: Stage,
    /// What was asked and not yet answered.
    asked: Option<Next>,
    started_ms: Option<f64>,
    ended_ms: Option<f64>,
    setup: Vec<SetupOutcome>,
    turns: Vec<Turn>,
    /// The conversation as the agent's last run left it.
    history: Vec<Message>,
    closing: Option<String>,
    ended: Option<EndedBy>,
    error: Option<String>,
    assertions: Vec<Value>,
    verdict: Option<Value>,
    judge_input: Option<String>,
    recording: Recording,
    tokens: Option<u64>,
    replay: Option<Value>,
    /// The agent's turn whose page was last checked (from 1; 0: none yet).
    checked: usize,
    /// The next setup call's tool as its listing found it on the suite's origin.
    decided: Option<Decided>,
}

/// The outputs of an attempt's runs, per role, as replay transcripts.
#[derive(Debug, Default)]
struct Recording {
    user: Vec<String>,
    agent: Vec<String>,
    judge: Option<(String, String)>,
}

impl Recording {
    fn to_value(&self) -> Value {
        let mut value = json!({"user": self.user, "agent": self.agent});
        if let Some((input, transcript)) = &self.judge {
            value["judge"] = json!({"input": input, "transcript": transcript});
        }
        value
    }
}

impl Attempt {
    fn new(reload: bool, replay: Option<Value>) -> Attempt {
        Attempt {
            stage: match reload {
                true => Stage::Reload,
                false => setup_at(0),
            },
            asked: None,
            started_ms: None,
            ended_ms: None,
            setup: Vec::new(),
            turns: Vec::new(),
            history: Vec::new(),
            closing: None,
            ended: None,
            error: None,
            assertions: Vec::new(),
            verdict: None,
            judge_input: None,
            recording: Recording::default(),
            tokens: None,
            replay,
            checked: 0,
            decided: None,
        }
    }

    /// The recorded transcript of `role`'s `n`th run (from 0), when replaying.
    fn recorded(&self, role: Role, n: usize) -> Option<Result<String, String>> {
        let replay = self.replay.as_ref()?;
        let at = replay.pointer(&format!("/recording/{}/{n}", role.name()));
        Some(match at.and_then(Value::as_str) {
            Some(text) => Ok(text.to_owned()),
            None => Err(format!(
                "the recording has no {} output for turn {}: the conversation went otherwise",
                role.name(),
                n + 1
            )),
        })
    }

    /// The conversation ended so, at `now_ms`: on to the DOM, the judge, or the end.
    fn end(&mut self, how: EndedBy, now_ms: f64, case: &Simulation) {
        self.ended = Some(how);
        self.ended_ms = Some(now_ms);
        self.stage = match how {
            EndedBy::Error => Stage::Over,
            _ if !case.assertions.is_empty() => Stage::Dom,
            _ if case.success_criteria.is_some() => Stage::Judge,
            _ => Stage::Over,
        };
    }

    fn fail(&mut self, why: String) {
        self.error = Some(why);
        self.stage = Stage::Over;
    }
}

fn setup_at(index: usize) -> Stage {
    Stage::Setup {
        index,
        wait: ToolWait::default(),
        listed: false,
        after_ms: 0,
    }
}

/// An evaluation in simulate mode under way.
#[derive(Debug)]
pub struct Simulate {
    request: SimulateRequest,
    models: Vec<String>,
    suite: String,
    case: usize,
    model: usize,
    run: u32,
    runs_started: u64,
    attempt: Option<Attempt>,
    results: Vec<Value>,
    /// The origin the suite began on, read by its first listing (`None`: not yet), or why it
    /// could not be read (then every case is that error).
    began: Option<Result<Began, String>>,
}

impl Simulate {
    /// An evaluation; `default_model` names the registry's default when the request names
    /// no model; `suite` is the evaluation's id (the runs' `eval.suite`, unique).
    pub fn new(request: SimulateRequest, default_model: Option<String>, suite: String) -> Simulate {
        let models = match request.models.is_empty() {
            true => vec![default_model.unwrap_or_else(|| "default".into())],
            false => request.models.clone(),
        };
        Simulate {
            request,
            models,
            suite,
            case: 0,
            model: 0,
            run: 0,
            runs_started: 0,
            attempt: None,
            results: Vec::new(),
            began: None,
        }
    }

    /// Results done and results in all.
    pub fn progress(&self) -> (usize, usize) {
        let total = self.request.cases.len() * self.models.len() * self.request.runs as usize;
        (self.results.len(), total)
    }

    /// The results so far.
    pub fn results(&self) -> &[Value] {
        &self.results
    }

    /// What to do next, at `now_ms` (the worker's clock); the same until [`Simulate::handle`].
    pub fn poll(&mut self, now_ms: f64) -> Next {
        loop {
            if self.case >= self.request.cases.len() {
                return Next::Done(self.answer());
            }
            let Some(began) = &self.began else {
                return Next::ListTools {
                    tab_id: self.request.tab_id,
                    after_ms: 0,
                    settle: Settle::Loaded,
                };
            };
            if self.attempt.is_none() {
                let unknown = began.as_ref().err().cloned();
                let replay = self.replay_of();
                let mut attempt = Attempt::new(self.request.reload, replay.clone());
                if !self.request.replay.is_empty() && replay.is_none() {
                    attempt.fail(
                        "the replayed results hold no recording of this case, model and run".into(),
                    );
                }
                if let Some(why) = unknown {
                    attempt.fail(why);
                }
                self.attempt = Some(attempt);
            }
            if let Some(asked) = self.attempt.as_ref().and_then(|a| a.asked.clone()) {
                return asked;
            }
            match self.step(now_ms) {
                Some(next) => {
                    self.attempt.as_mut().expect("an attempt").asked = Some(next.clone());
                    return next;
                }
                None => self.finish(now_ms),
            }
        }
    }

    fn agent_model(&self) -> &str {
        &self.models[self.model]
    }

    /// The recorded result of the case, model and run under way, when replaying.
    fn replay_of(&self) -> Option<Value> {
        let name = &self.request.cases[self.case].name;
        let model = self.agent_model();
        let named = !self.request.models.is_empty();
        (self.request.replay.iter())
            .find(|r| {
                r["name"].as_str() == Some(name)
                    && r["runIndex"].as_u64() == Some(u64::from(self.run))
                    && (!named || r["model"].as_str() == Some(model))
            })
            .cloned()
    }

    /// A run request with its id, its eval tag and, when replaying, its transcript.
    fn run_request(
        &mut self,
        role: Role,
        model: &str,
        mut body: Value,
        replay: Option<String>,
    ) -> Value {
        self.runs_started += 1;
        body["runId"] = json!(format!("{}-{}", self.suite, self.runs_started));
        if role != Role::Agent {
            body["model"] = json!(model);
        }
        body["eval"] = json!({
            "suite": self.suite,
            "case": self.request.cases[self.case].name,
            "run": self.run,
            "model": model,
        });
        if let Some(transcript) = replay {
            body["replay"] = json!(transcript);
        }
        body
    }
}
