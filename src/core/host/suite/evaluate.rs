//! An evaluation (`evaluate({mode: "smoke" | "agent"})`, [`Evaluating`]) and a simulations
//! suite (`evaluate({mode: "simulate"})`, [`Simulating`]) as the host performs them: their
//! start (the registry's default model when the request names none; with `reload`, the page
//! the tab shows, each case's first page), then every ask of the core's machine, its
//! progress pushed (`evalProgress`: `{done, total, result}`).

use serde_json::{json, Map, Value};

use super::{internal, reply_text, Errand, Got, Next, Suite, Suited};
use crate::core::evals::plan::{self, EvaluateRequest, Evaluation};
use crate::core::evals::simulate::{self, Simulate, SimulateRequest};
use crate::core::gate::Asker;
use crate::core::host::call::HostCall;
use crate::core::host::io::{Frames, Input, Output, Runs, Storage, Tabs, Ui};
use crate::core::host::listing::Listing;
use crate::core::host::Host;
use crate::core::limits::{DOM_QUERY_MS, EVAL_RELOAD_MS};
use crate::core::page::bridge::{parse_dom_reply, FrameRequest};
use crate::core::page::call::{CallRequest, FrameState, Listed as Decided};
use crate::core::page::ready::Settle;
use crate::core::setup::store::{self, REGISTRY_KEY};
use crate::core::storage::Area;

/// Why a simulation's run is stopped at its conversation's deadline.
const SIMULATION_STOPPED: &str = "the simulation's time budget ran out";

/// A suite's start: what it reads before its first case.
#[derive(Debug)]
struct Begin {
    tab_id: i64,
    /// The registry is to be read for its default model.
    default_wanted: bool,
    /// The tab's page is to be read, each case's first page.
    reload: bool,
    default_model: Option<String>,
    first_page: Option<String>,
}

impl Begin {
    /// The start of a suite on `tab_id`: the default model read when `models` is empty, the
    /// tab's page read when each case is to `reload`.
    fn new(tab_id: i64, models: &[String], reload: bool) -> Begin {
        Begin {
            tab_id,
            default_wanted: models.is_empty(),
            reload,
            default_model: None,
            first_page: None,
        }
    }

    /// What to read next (`None`: the start is read).
    fn next(&mut self) -> Option<Errand> {
        if self.default_wanted {
            let key = REGISTRY_KEY.to_owned();
            let read = Storage::Read {
                area: Area::Local,
                key,
            };
            return Some(Errand::out(Output::Storage(read)));
        }
        if self.reload && self.first_page.is_none() {
            let tab_id = self.tab_id;
            return Some(Errand::out(Output::Frames(Frames::State {
                tab_id,
                frame_id: 0,
            })));
        }
        None
    }

    fn got(&mut self, got: Got, what: &str) -> Result<(), String> {
        match got {
            Got::In(Some(Input::Read(read))) if self.default_wanted => {
                self.default_wanted = false;
                let registry = store::registry(read?)?;
                self.default_model = registry.resolve(None).ok().map(|m| m.name.clone());
            }
            Got::In(Some(Input::Frame(top))) if self.reload => {
                self.first_page = Some(FrameState::page_url("evaluate", self.tab_id, top)?);
            }
            Got::In(fed) => return Err(internal(what, fed.as_ref())),
            _ => return Err(internal(what, None)),
        }
        Ok(())
    }

    /// The tab brought back to the suite's first page.
    fn reload(&self, tab_id: i64) -> Errand {
        let url = self.first_page.clone().unwrap_or_default();
        let ms = EVAL_RELOAD_MS;
        Errand::out(Output::Tabs(Tabs::Reload { tab_id, url, ms }))
    }
}

/// A page call for `asker` through the gate, to the document `expect` names if any.
fn call(
    asker: Asker,
    id: String,
    (tab_id, name, args, timeout_ms): (i64, String, Map<String, Value>, u32),
    expect: Option<Box<Decided>>,
) -> Errand {
    let request = CallRequest {
        expect: expect.map(|decided| *decided),
        ..CallRequest::asked(tab_id, name, args, timeout_ms)
    };
    Errand::Call(Box::new(HostCall::asked(asker, request, id)))
}

fn list(tab_id: i64, settle: Settle, after_ms: u32) -> Errand {
    Errand::List(Listing::kept(tab_id, settle).after(after_ms))
}

fn run(request: Value, within_ms: Option<u64>) -> Errand {
    let stop_reason = SIMULATION_STOPPED.to_owned();
    Errand::out(Output::Runs(Runs::Start {
        request,
        within_ms,
        stop_reason,
    }))
}

fn progress((done, total): (usize, usize), result: Value) -> Option<Ui> {
    let body = json!({"done": done, "total": total, "result": result});
    let kind = "evalProgress".to_owned();
    Some(Ui::Push { kind, body })
}

/// What a suite's last errand was for.
#[derive(Debug, Clone, Copy)]
enum Asked {
    Begin,
    Case,
    /// A run, started then (ms).
    Run(f64),
    /// DOM reads, this many.
    Dom(usize),
}

/// A suite of either kind under way: its start, then its core machine `M` made of its
/// request `R`, its suite's name and the default model once the start is read.
#[derive(Debug)]
pub(crate) struct Staged<R, M> {
    begin: Begin,
    request: Option<(R, String)>,
    machine: Option<M>,
    calls: String,
    made: u64,
    asked: Asked,
}

impl<R, M> Staged<R, M> {
    fn new(begin: Begin, request: R, suite: String, calls: String) -> Staged<R, M> {
        Staged {
            begin,
            request: Some((request, suite)),
            machine: None,
            calls,
            made: 0,
            asked: Asked::Begin,
        }
    }

    /// The start's next read; once it is read, `None`, the machine made with `make` from the
    /// request, the default model and the suite's name (at the first step after the start).
    fn begin(&mut self, make: impl FnOnce(R, Option<String>, String) -> M) -> Option<Errand> {
        if let Some((request, suite)) = self.request.take() {
            if let Some(errand) = self.begin.next() {
                self.request = Some((request, suite));
                self.asked = Asked::Begin;
                return Some(errand);
            }
            let default = self.begin.default_model.take();
            self.machine = Some(make(request, default, suite));
        }
        self.asked = Asked::Case;
        None
    }

    /// The machine, once the start is read.
    fn started(&mut self, what: &str) -> Result<&mut M, String> {
        self.machine.as_mut().ok_or_else(|| internal(what, None))
    }

    /// A fresh id for the suite's next page call.
    fn call_id(&mut self) -> String {
        self.made += 1;
        format!("{}_{}", self.calls, self.made)
    }
}

/// An evaluation under way.
#[derive(Debug)]
pub struct Evaluating(Suited<Eval>);

pub(crate) type Eval = Staged<EvaluateRequest, Evaluation>;

impl Evaluating {
    /// The suite `request` asks for, named `suite` (`eval_…`); `calls` is a fresh name from
    /// which its calls' ids are made.
    pub fn new(request: EvaluateRequest, suite: String, calls: String) -> Evaluating {
        let begin = Begin::new(request.tab_id, &request.models, request.reload);
        Evaluating(Suited::new(Staged::new(begin, request, suite, calls)))
    }
}

impl Suite for Eval {
    const WHAT: &'static str = "the evaluation";

    fn next(&mut self, _: &Host, now_ms: f64) -> Result<Errand, Result<Value, String>> {
        let make = |request, default, suite| Evaluation::new(request, default).with_suite(suite);
        if let Some(errand) = self.begin(make) {
            return Ok(errand);
        }
        Ok(match self.started(Self::WHAT).map_err(Err)?.poll() {
            plan::Next::Done(answer) => return Err(Ok(answer)),
            plan::Next::Call {
                tab_id,
                name,
                args,
                timeout_ms,
                expect,
            } => {
                let id = self.call_id();
                call(Asker::Smoke, id, (tab_id, name, args, timeout_ms), expect)
            }
            plan::Next::Run { request, .. } => {
                self.asked = Asked::Run(now_ms);
                run(request, None)
            }
            plan::Next::Log { run_id } => Errand::out(Output::Runs(Runs::Log { run_id })),
            plan::Next::Reload { tab_id } => self.begin.reload(tab_id),
            plan::Next::ListTools {
                tab_id,
                after_ms,
                settle,
                ..
            } => list(tab_id, settle, after_ms),
        })
    }

    fn got(&mut self, got: Got, now_ms: f64) -> Result<Option<Ui>, String> {
        let reply = match (self.asked, got) {
            (Asked::Begin, got) => return self.begin.got(got, Self::WHAT).map(|()| None),
            (_, Got::Called(answer)) => plan::Reply::Called { answer, now_ms },
            (_, Got::Listed(tools)) => plan::Reply::Listed { tools, now_ms },
            (Asked::Run(started), Got::In(Some(Input::Ran(answer)))) => plan::Reply::Ran {
                answer,
                latency_ms: now_ms - started,
            },
            (_, Got::In(Some(Input::Logged(log)))) => plan::Reply::Logged(log),
            (_, Got::In(Some(Input::Done(reloaded)))) => plan::Reply::Reloaded(reloaded),
            (_, Got::In(fed)) => return Err(internal(Self::WHAT, fed.as_ref())),
        };
        let machine = self.started(Self::WHAT)?;
        Ok(match machine.handle(reply) {
            Some(result) => progress(machine.progress(), result),
            None => None,
        })
    }
}

/// A simulations suite under way.
#[derive(Debug)]
pub struct Simulating(Suited<Sim>);

pub(crate) type Sim = Staged<SimulateRequest, Simulate>;

impl Simulating {
    /// The suite `request` asks for, named `suite` (`sim_…`); `calls` is a fresh name from
    /// which its setup calls' ids are made.
    pub fn new(request: SimulateRequest, suite: String, calls: String) -> Simulating {
        let begin = Begin::new(request.tab_id, &request.models, request.reload);
        Simulating(Suited::new(Staged::new(begin, request, suite, calls)))
    }
}

impl Suite for Sim {
    const WHAT: &'static str = "the simulation";

    fn next(&mut self, _: &Host, now_ms: f64) -> Result<Errand, Result<Value, String>> {
        if let Some(errand) = self.begin(Simulate::new) {
            return Ok(errand);
        }
        Ok(match self.started(Self::WHAT).map_err(Err)?.poll(now_ms) {
            simulate::Next::Done(answer) => return Err(Ok(answer)),
            simulate::Next::Reload { tab_id } => self.begin.reload(tab_id),
            simulate::Next::ListTools {
                tab_id,
                after_ms,
                settle,
            } => list(tab_id, settle, after_ms),
            simulate::Next::Call {
                tab_id,
                name,
                args,
                timeout_ms,
                expect,
            } => {
                let id = self.call_id();
                call(
                    Asker::Simulate,
                    id,
                    (tab_id, name, args, timeout_ms),
                    expect,
                )
            }
            simulate::Next::Run {
                request, within_ms, ..
            } => {
                self.asked = Asked::Run(now_ms);
                run(request, Some(within_ms))
            }
            simulate::Next::QueryDom {
                tab_id,
                target,
                queries,
            } => {
                self.asked = Asked::Dom(queries.len());
                let message = FrameRequest::QueryDom { queries }.to_message();
                Errand::out(Output::Frames(Frames::Ask {
                    tab_id,
                    target,
                    message,
                    ms: DOM_QUERY_MS,
                }))
            }
        })
    }

    fn got(&mut self, got: Got, now_ms: f64) -> Result<Option<Ui>, String> {
        let reply = match (self.asked, got) {
            (Asked::Begin, got) => return self.begin.got(got, Self::WHAT).map(|()| None),
            (_, Got::Called(answer)) => simulate::Reply::Called(answer),
            (_, Got::Listed(tools)) => simulate::Reply::Listed(tools),
            (Asked::Run(_), Got::In(Some(Input::Ran(answer)))) => simulate::Reply::Ran(answer),
            (Asked::Dom(asked), Got::In(Some(Input::Reply(reply)))) => simulate::Reply::Queried(
                reply_text(reply, DOM_QUERY_MS).and_then(|text| parse_dom_reply(&text, asked)),
            ),
            (_, Got::In(Some(Input::Done(reloaded)))) => simulate::Reply::Reloaded(reloaded),
            (_, Got::In(fed)) => return Err(internal(Self::WHAT, fed.as_ref())),
        };
        let machine = self.started(Self::WHAT)?;
        Ok(match machine.handle(reply, now_ms) {
            Some(result) => progress(machine.progress(), result),
            None => None,
        })
    }
}

impl Host {
    /// Steps an evaluation (`evaluate({mode: "smoke" | "agent"})`): the input of its last
    /// output fed, its next output or its answer.
    pub fn evaluate(&self, e: &mut Evaluating, input: Option<Input>, now_ms: f64) -> Next {
        self.suite(&mut e.0, input, now_ms)
    }

    /// Steps a simulations suite (`evaluate({mode: "simulate"})`).
    pub fn simulate(&self, s: &mut Simulating, input: Option<Input>, now_ms: f64) -> Next {
        self.suite(&mut s.0, input, now_ms)
    }
}
