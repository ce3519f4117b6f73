//! `webmcpHost.evaluate`: the plan and the judgement of an eval suite on a tab, as a machine
//! the worker drives ([`Evaluation`]): it says what to do next ([`Next`]: call a page tool,
//! run a case with a model, or the answer) and is told what happened ([`Reply`]).
//!
//! - `smoke` mode: each case's expected calls are performed on the page in the order they are
//!   listed (ordered and unordered groups in listed order, optional calls too; a tool not
//!   listed yet is waited for, up to 5 s: [`super::wait`]), with concrete
//!   arguments made from the matchers ([`concrete()`]); a call that fails is an `error`, a result
//!   that misses its `result` constraint (or reports a failure) a `fail`.
//! - `agent` mode: each case runs with each model `runs` times (its messages as the run's
//!   messages); the calls the run made are judged by [`trajectory_matches`]; a run that has an
//!   id has its log read back ([`Next::Log`]) and its result carries the run's `timeline`
//!   (`core::timeline::of_log`), which the HTML report shows per case.
//!
//! - The origin: the suite's first step lists the tab (its page once parsed) and keeps the
//!   origin it shows ([`Began`]); every listing before a smoke call or an agent run (without
//!   `reload`, a listing of its own before each run) must show that origin, else the step is
//!   not taken and the case (or run) is an error naming both origins: a case that took the tab
//!   to another site leaves the later ones nothing to call there. A tab whose origin cannot be
//!   read at the start runs no case.
//! - `reload: true`: before each case (in agent mode, each run of it) the tab is brought back
//!   to the page the suite started on, freshly loaded ([`Next::Reload`]), so that no case
//!   sees what an earlier one left (a cart, a navigation); a tab that cannot be reloaded makes
//!   that case an `error` and the suite goes on. In agent mode the run then starts once the
//!   page lists every tool the case expects (not the optional ones), or after 5 s, as smoke
//!   mode waits for each call's tool: a page that registers its tools a moment after it loads
//!   is not judged on a listing taken too early.
//!
//! Invariants: pure (times and token counts come in as values); every case, model and run gets
//! exactly one result, in order; bad input is an error of the request, never a panic.

mod concrete;
mod waits;

use serde_json::{json, Map, Value};

pub use concrete::concrete;

use super::began::Began;
use super::matcher::is_constraint;
use super::messages::reached;
pub use super::messages::{agui_messages, call_value, calls_of, cut_short, parsed, run_tokens};
use super::report::{summary, Format};
use super::said::{page_said, reported_failure};
use super::wait::ToolWait;
use super::{trajectory_matches, ActualCall, EvalCase, EvalMessage, Expected};
use crate::core::page::call::{CallAnswer, Listed as Decided};
use crate::core::page::ready::Settle;
use crate::core::page::tabs::Listed;
use crate::core::run::RunEnded;

pub use super::messages::Mode;
pub use super::request::{EvaluateRequest, MAX_MODELS, MAX_RESULTS, MAX_RUNS};

/// What the worker does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Smoke: call this page tool (as `callTool` does, confirmed as the settings say), then
    /// [`Reply::Called`] with how it ended.
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
    /// List the tab's tools after waiting `after_ms` (0: now), its page as settled as
    /// `settle` says, then [`Reply::Listed`]: at the suite's start (its origin read), before a
    /// smoke call or an agent run (its origin checked, a tool awaited), and after a reload
    /// (until the page is ready).
    ListTools {
        /// The tab.
        tab_id: i64,
        /// The tool the next call (or run) waits for; `None` at the suite's start, before an
        /// agent run, and while the reloaded page is awaited.
        name: Option<String>,
        /// How long to wait before listing, ms.
        after_ms: u32,
        /// How settled the page must be: [`Settle::AfterLoad`] after a reload,
        /// [`Settle::Loaded`] at the start and before a call or a run (a page that a case
        /// left loading is listed once parsed).
        settle: Settle,
    },
    /// Agent: start this run (a `run` request), then [`Reply::Ran`].
    Run {
        /// The model's name (as results name it).
        model: String,
        /// The `run` request.
        request: Value,
    },
    /// Agent: read this run's log (`runLog({runId})`'s answer), then [`Reply::Logged`].
    Log {
        /// The run's id.
        run_id: String,
    },
    /// `reload`: bring the tab back to the page the suite started on, freshly loaded, and
    /// wait for it to load, then [`Reply::Reloaded`].
    Reload {
        /// The tab.
        tab_id: i64,
    },
    /// The evaluation's answer.
    Done(Value),
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// How the call ended (typed) and when it came, ms (the worker's clock).
    Called {
        /// The answer.
        answer: CallAnswer,
        /// When, ms.
        now_ms: f64,
    },
    /// The tab's listing (or why it failed) and when it came, ms (the worker's clock).
    Listed {
        /// The listing.
        tools: Listed,
        /// When, ms.
        now_ms: f64,
    },
    /// How a run ended (typed: [`RunEnded`]) or the error that kept it from running, and how
    /// long it took.
    Ran {
        /// The run's end, or why it did not run.
        answer: Result<RunEnded, String>,
        /// Its wall time, ms.
        latency_ms: f64,
    },
    /// The run's log (as `runLog` answers), or why it could not be read.
    Logged(Result<Value, String>),
    /// The tab loaded its first page again, or why it did not.
    Reloaded(Result<(), String>),
}

/// One smoke call to make.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    name: String,
    args: Map<String, Value>,
    result: Option<Value>,
}

/// An evaluation under way.
#[derive(Debug)]
pub struct Evaluation {
    request: EvaluateRequest,
    models: Vec<String>,
    case: usize,
    model: usize,
    run: usize,
    steps: Option<Result<Vec<Step>, String>>,
    calls: Vec<Value>,
    results: Vec<Value>,
    /// An agent result waiting for its run's log.
    pending: Option<Value>,
    /// Smoke: the wait for the next call's tool; `Ok`: it is listed (as found, on the suite's
    /// origin).
    wait: Result<Option<Decided>, (ToolWait, u32)>,
    /// `reload`: the tab was loaded afresh for the case (or run) under way.
    fresh: bool,
    /// After a reload: the page is awaited (a listing that waits until it is ready,
    /// `core::page::ready`).
    loading: bool,
    /// Agent mode after a reload: the expected tools not listed yet, and the wait for them.
    settling: Vec<String>,
    settle: (ToolWait, u32),
    /// The origin the suite began on, read by its first listing (`None`: not yet), or why it
    /// could not be read (then every case is that error).
    began: Option<Result<Began, String>>,
    /// Agent mode: the tab was found on the suite's origin for the run under way (by its
    /// reload's listing, or a listing of its own).
    checked: bool,
    /// Smoke: when the case under way was first heard of, and last (its wall time, as
    /// `latencyMs`).
    span_ms: Option<(f64, f64)>,
    /// The id the shell gave this evaluation: its agent runs are tagged with it (and their
    /// case and run), so the run list groups them under their suite and traces carry them.
    suite: Option<String>,
}

impl Evaluation {
    /// The evaluation, its runs tagged `eval: {suite: id, case, run, model}`.
    pub fn with_suite(mut self, id: String) -> Self {
        self.suite = Some(id);
        self
    }

    /// An evaluation of `request`; `default_model` names the configured default (agent mode
    /// without `models`).
    pub fn new(request: EvaluateRequest, default_model: Option<String>) -> Self {
        let models = match (&request.models[..], default_model) {
            ([], Some(name)) => vec![name],
            ([], None) => vec!["default".into()],
            (named, _) => named.to_vec(),
        };
        Evaluation {
            request,
            models,
            case: 0,
            model: 0,
            run: 0,
            steps: None,
            calls: Vec::new(),
            results: Vec::new(),
            pending: None,
            wait: Err((ToolWait::default(), 0)),
            fresh: false,
            loading: false,
            settling: Vec::new(),
            settle: (ToolWait::default(), 0),
            began: None,
            checked: false,
            span_ms: None,
            suite: None,
        }
    }

    /// How many results there will be, and how many are in.
    pub fn progress(&self) -> (usize, usize) {
        let per_case = match self.request.mode {
            Mode::Smoke => 1,
            Mode::Agent | Mode::Simulate => self.models.len() * self.request.runs as usize,
        };
        (self.results.len(), self.request.cases.len() * per_case)
    }

    /// The results so far.
    pub fn results(&self) -> &[Value] {
        &self.results
    }

    /// What to do next (the same until [`Evaluation::handle`] is told what happened).
    pub fn poll(&mut self) -> Next {
        if let Some(pending) = &self.pending {
            let run_id = pending["runId"].as_str().unwrap_or_default().to_owned();
            return Next::Log { run_id };
        }
        loop {
            let Some(case) = self.request.cases.get(self.case) else {
                let mut answer = summary(self.request.mode, self.results.clone());
                if let Some(suite) = &self.suite {
                    answer["suite"] = json!(suite);
                }
                return Next::Done(match self.request.format {
                    Some(format) if format != Format::Json => {
                        let mut answer = answer;
                        answer["report"] = json!(format.render(&answer));
                        answer
                    }
                    _ => answer,
                });
            };
            match &self.began {
                None => {
                    return Next::ListTools {
                        tab_id: self.request.tab_id,
                        name: None,
                        after_ms: 0,
                        settle: Settle::Loaded,
                    }
                }
                Some(Err(why)) => {
                    let why = why.clone();
                    self.unloaded(why);
                    continue;
                }
                Some(Ok(_)) => {}
            }
            if self.request.reload && !self.fresh {
                return Next::Reload {
                    tab_id: self.request.tab_id,
                };
            }
            if self.loading {
                return Next::ListTools {
                    tab_id: self.request.tab_id,
                    name: None,
                    after_ms: 0,
                    settle: Settle::AfterLoad,
                };
            }
            match self.request.mode {
                Mode::Agent | Mode::Simulate => {
                    if !self.checked {
                        return Next::ListTools {
                            tab_id: self.request.tab_id,
                            name: None,
                            after_ms: 0,
                            settle: Settle::Loaded,
                        };
                    }
                    if let Some(name) = self.settling.first() {
                        return Next::ListTools {
                            tab_id: self.request.tab_id,
                            name: Some(name.clone()),
                            after_ms: self.settle.1,
                            settle: Settle::Now,
                        };
                    }
                    let model = self.models[self.model].clone();
                    let mut request = json!({
                        "tabId": self.request.tab_id,
                        "messages": agui_messages(&case.messages),
                    });
                    // The run acts only on the suite's origin, whatever the page did since
                    // the listing that checked it.
                    if let Some(Ok(began)) = &self.began {
                        request["expectOrigin"] = json!(began.origin());
                    }
                    if !self.request.models.is_empty() {
                        request["model"] = json!(model);
                    }
                    if let Some(suite) = &self.suite {
                        request["eval"] = json!({
                            "suite": suite,
                            "case": case_name(case, self.case),
                            "run": self.run,
                            "model": model,
                        });
                    }
                    return Next::Run { model, request };
                }
                Mode::Smoke => {
                    let steps = self
                        .steps
                        .get_or_insert_with(|| smoke_steps(case.expected_call.as_deref()));
                    match steps {
                        Err(reason) => {
                            let reason = reason.clone();
                            self.finish_case("error", Some(reason));
                        }
                        Ok(steps) => match steps.get(self.calls.len()) {
                            Some(step) if self.wait.is_err() => {
                                let after_ms = self.wait.as_ref().err().map_or(0, |w| w.1);
                                return Next::ListTools {
                                    tab_id: self.request.tab_id,
                                    name: Some(step.name.clone()),
                                    after_ms,
                                    settle: Settle::Loaded,
                                };
                            }
                            Some(step) => {
                                return Next::Call {
                                    tab_id: self.request.tab_id,
                                    name: step.name.clone(),
                                    args: step.args.clone(),
                                    timeout_ms: self.request.timeout_ms,
                                    expect: self.wait.clone().ok().flatten().map(Box::new),
                                }
                            }
                            None if steps.is_empty() => self.finish_case(
                                "pass",
                                Some("no call expected: nothing to perform".into()),
                            ),
                            None => self.finish_case("pass", None),
                        },
                    }
                }
            }
        }
    }

    /// What happened to the last [`Next`]; the result it completed, if any (for progress).
    pub fn handle(&mut self, reply: Reply) -> Option<Value> {
        let before = self.results.len();
        match reply {
            Reply::Called { answer, now_ms } => {
                self.heard_at(now_ms);
                self.called(answer)
            }
            Reply::Ran { answer, latency_ms } => self.ran(answer, latency_ms),
            Reply::Logged(log) => self.logged(log),
            Reply::Listed { tools, .. } if self.began.is_none() => {
                self.began = Some(Began::read(&tools));
            }
            Reply::Listed { tools, .. } if self.loading => {
                self.loading = false;
                match self.holds(&tools) {
                    Ok(_) => self.checked = true,
                    Err(why) => self.unloaded(format!("after the reload, {why}")),
                }
            }
            Reply::Listed { tools, now_ms } => match self.request.mode {
                Mode::Smoke => {
                    self.heard_at(now_ms);
                    self.listed(tools, now_ms)
                }
                Mode::Agent | Mode::Simulate if !self.checked => match self.holds(&tools) {
                    Ok(_) => self.checked = true,
                    Err(why) => self.ran(Err(format!("before this run, {why}")), 0.0),
                },
                Mode::Agent | Mode::Simulate => self.settled(&tools, now_ms),
            },
            Reply::Reloaded(Ok(())) => {
                self.fresh = true;
                self.loading = true;
                if self.request.mode == Mode::Agent {
                    self.settling = self.expected_tools();
                    self.settle = (ToolWait::default(), 0);
                }
            }
            Reply::Reloaded(Err(why)) => {
                self.unloaded(format!("the tab could not be reloaded: {why}"))
            }
        }
        (self.results.len() > before).then(|| self.results.last().cloned())?
    }

    fn called(&mut self, answer: CallAnswer) {
        let Some(Ok(steps)) = &self.steps else { return };
        let Some(step) = steps.get(self.calls.len()).cloned() else {
            return;
        };
        self.wait = Err((ToolWait::default(), 0));
        let index = self.calls.len() + 1;
        let mut call = json!({"name": step.name, "args": step.args});
        // A call that acted without the question says how it was allowed (a site policy).
        if let Some(allowed) = &answer.confirmation {
            call["confirmation"] = json!(allowed);
        }
        if let Some(error) = answer.error() {
            // A tool the tab does not offer was never called: the record says so.
            if error.starts_with(crate::core::page::tabs::NO_SUCH_TOOL) {
                call["made"] = json!(false);
            }
            call["error"] = json!(error);
            self.calls.push(call);
            return self.finish_case(
                "error",
                Some(format!("step {index} ({}): {error}", step.name)),
            );
        }
        let result = match (answer.result(), answer.navigated()) {
            (Some(text), _) => parsed(text),
            (None, Some(to)) => json!({"navigated": true, "url": to.url}),
            (None, None) => Value::Null,
        };
        call["result"] = result.clone();
        self.calls.push(call);
        if let Some(failure) = reported_failure(&result) {
            return self.finish_case(
                "fail",
                Some(format!("step {index} ({}): {failure}", step.name)),
            );
        }
        if let Some(want) = &step.result {
            match super::matcher::matches(want, &result) {
                Ok(true) => {}
                Ok(false) => self.finish_case(
                    "fail",
                    Some(format!(
                        "step {index} ({}): the result {} does not match {}",
                        step.name,
                        short(&result),
                        short(want)
                    )),
                ),
                Err(e) => {
                    self.finish_case("error", Some(format!("step {index} ({}): {e}", step.name)))
                }
            }
        }
    }

    fn ran(&mut self, answer: Result<RunEnded, String>, latency_ms: f64) {
        let Some(case) = self.request.cases.get(self.case) else {
            return;
        };
        let (outcome, reason, calls, run_id, tokens, usage) = match answer {
            Err(message) => ("error", Some(message), Vec::new(), None, None, None),
            Ok(ended) => {
                let calls = calls_of(&ended.messages);
                let tokens = run_tokens(&ended.usage);
                // The run's tokens and cost, for the models' table (none when unknown).
                let usage = ended.usage.total().map(|total| {
                    let counts = json!({
                        "inputTokens": total.input_tokens,
                        "outputTokens": total.output_tokens,
                        "cachedInputTokens": total.cached_input_tokens,
                    });
                    (counts, json!(ended.usage.cost()))
                });
                let (outcome, reason) = match cut_short(&ended.outcome) {
                    Some(why) => ("error", Some(why)),
                    // A call refused before it reached the application has no result
                    // for a `result` constraint; the calls are reported as made.
                    None => judge(case.expected_call.as_deref(), &reached(&calls)),
                };
                (outcome, reason, calls, Some(ended.run_id), tokens, usage)
            }
        };
        let mut result = self.result(outcome, reason, calls.iter().map(call_value).collect());
        result["model"] = json!(self.models[self.model]);
        result["runIndex"] = json!(self.run);
        result["latencyMs"] = json!(latency_ms.max(0.0).round());
        result["tokens"] = tokens.map_or(Value::Null, |t| json!(t));
        if let Some((usage, cost)) = usage {
            result["usage"] = usage;
            result["cost"] = cost;
        }
        match run_id {
            Some(id) if !id.is_empty() => {
                result["runId"] = json!(id);
                self.pending = Some(result);
            }
            _ => self.results.push(result),
        }
        self.fresh = false;
        self.checked = false;
        self.run += 1;
        if self.run as u32 >= self.request.runs {
            self.run = 0;
            self.model += 1;
            if self.model >= self.models.len() {
                self.model = 0;
                self.case += 1;
            }
        }
    }

    /// The pending result with its run's timeline (or why there is none), kept.
    fn logged(&mut self, log: Result<Value, String>) {
        let Some(mut result) = self.pending.take() else {
            return;
        };
        match log {
            Ok(log) => {
                let timeline = crate::core::timeline::of_log(&log);
                result["timeline"] = serde_json::to_value(timeline).unwrap_or(Value::Null);
            }
            Err(error) => result["timelineError"] = json!(error),
        }
        self.results.push(result);
    }

    /// Smoke: a reply of the case under way came at `now_ms`.
    fn heard_at(&mut self, now_ms: f64) {
        if !now_ms.is_finite() {
            return;
        }
        let (first, _) = self.span_ms.unwrap_or((now_ms, now_ms));
        self.span_ms = Some((first, now_ms));
    }

    fn finish_case(&mut self, outcome: &str, reason: Option<String>) {
        let calls = std::mem::take(&mut self.calls);
        let warning = (outcome == "pass").then(|| page_said(&calls)).flatten();
        let mut result = self.result(outcome, reason, calls);
        if let Some(warning) = warning {
            result["warning"] = json!(warning);
        }
        // From the case's first listing to its last answer: what a JUnit `time` reports.
        if let Some((first, last)) = self.span_ms.take() {
            result["latencyMs"] = json!((last - first).max(0.0).round());
        }
        self.results.push(result);
        self.steps = None;
        self.wait = Err((ToolWait::default(), 0));
        self.fresh = false;
        self.checked = false;
        self.case += 1;
    }

    fn result(&self, outcome: &str, reason: Option<String>, calls: Vec<Value>) -> Value {
        let case = &self.request.cases[self.case];
        let mut result = json!({
            "name": case_name(case, self.case),
            "caseIndex": self.case,
            "runIndex": 0,
            "outcome": outcome,
            "calls": calls,
            "prompt": prompt(case),
            "expected": case.expected_call,
        });
        if let Some(reason) = reason {
            result["reason"] = json!(reason);
        }
        result
    }
}

/// A case's name: its `name`, else its first message's text, else `Test N`.
pub fn case_name(case: &EvalCase, index: usize) -> String {
    if let Some(name) = case
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        return name.to_owned();
    }
    case.messages
        .iter()
        .find_map(|m| match m {
            EvalMessage::Message { content, .. } if !content.trim().is_empty() => {
                Some(content.trim().to_owned())
            }
            _ => None,
        })
        .unwrap_or_else(|| format!("Test {}", index + 1))
}

/// The last text the person wrote in a case.
fn prompt(case: &EvalCase) -> String {
    case.messages
        .iter()
        .rev()
        .find_map(|m| match m {
            EvalMessage::Message { role, content } if role == "user" => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The outcome of an agent run's calls against a case's expected calls, and why it failed.
pub fn judge(
    expected: Option<&[Expected]>,
    calls: &[ActualCall],
) -> (&'static str, Option<String>) {
    match trajectory_matches(expected, calls) {
        Err(e) => ("error", Some(e)),
        Ok(true) => ("pass", None),
        Ok(false) => ("fail", Some(explain(expected, calls))),
    }
}

/// Why calls do not match: the calls missing, the calls not expected, or those whose
/// arguments or results differ.
pub fn explain(expected: Option<&[Expected]>, calls: &[ActualCall]) -> String {
    let made: Vec<String> = calls
        .iter()
        .map(|c| format!("{}({})", c.name, short(&c.args)))
        .collect();
    let Some(nodes) = expected else {
        return format!("expected no tool call; made {}", made.join(", "));
    };
    let mut wanted = Vec::new();
    flatten(nodes, &mut wanted);
    let mut parts = Vec::new();
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|w| !w.optional && !calls.iter().any(|c| c.name == w.function_name))
        .map(|w| w.function_name.as_str())
        .collect();
    if !missing.is_empty() {
        parts.push(format!("missing call: {}", missing.join(", ")));
    }
    let extra: Vec<&str> = calls
        .iter()
        .filter(|c| !wanted.iter().any(|w| w.function_name == c.name))
        .map(|c| c.name.as_str())
        .collect();
    if !extra.is_empty() {
        parts.push(format!("unexpected call: {}", extra.join(", ")));
    }
    for w in &wanted {
        let same: Vec<&ActualCall> = calls.iter().filter(|c| c.name == w.function_name).collect();
        if same.is_empty()
            || same
                .iter()
                .any(|c| super::call_matches(w, c).unwrap_or(false))
        {
            continue;
        }
        // A call with the arguments expected misses only its `result` constraint.
        let args_match = |c: &&&ActualCall| match w.arguments.as_ref().filter(|a| !a.is_null()) {
            Some(want) => super::matcher::matches(want, &c.args).unwrap_or(false),
            None => true,
        };
        let name = &w.function_name;
        parts.push(match (same.iter().find(args_match), &w.result) {
            (Some(c), Some(want)) => match &c.result {
                None => format!("{name} got no result from the application (a call the person declined or the host refused has none), expected one matching {}", short(want)),
                Some(got) => format!("{name} answered {}, expected a result matching {}", short(got), short(want)),
            },
            _ => format!(
                "{name} called with {}, expected {}",
                short(&same[0].args),
                short(w.arguments.as_ref().unwrap_or(&Value::Null))
            ),
        });
    }
    if parts.is_empty() {
        parts.push("the calls are not in the expected order or count".into());
    }
    if made.is_empty() {
        parts.push("no call was made".into());
    } else {
        parts.push(format!("made {}", made.join(", ")));
    }
    parts.join("; ")
}

fn flatten<'a>(nodes: &'a [Expected], out: &mut Vec<&'a super::ExpectedCall>) {
    for node in nodes {
        match node {
            Expected::Ordered { ordered } => flatten(ordered, out),
            Expected::Unordered { unordered } => flatten(unordered, out),
            Expected::Call(call) => out.push(call),
        }
    }
}

/// A smoke case's calls, in listed order, optional ones too; an error for a call whose
/// arguments are not an object.
fn smoke_steps(expected: Option<&[Expected]>) -> Result<Vec<Step>, String> {
    let mut calls = Vec::new();
    flatten(expected.unwrap_or_default(), &mut calls);
    calls
        .into_iter()
        .enumerate()
        .map(|(i, call)| {
            let args = match call.arguments.as_ref() {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(map)) if !is_constraint(map) => {
                    match concrete(&Value::Object(map.clone())) {
                        Value::Object(map) => map,
                        _ => Map::new(),
                    }
                }
                Some(_) => {
                    return Err(format!(
                        "step {} ({}): smoke mode needs the arguments as an object",
                        i + 1,
                        call.function_name
                    ))
                }
            };
            Ok(Step {
                name: call.function_name.clone(),
                args,
                result: call.result.clone(),
            })
        })
        .collect()
}

pub use super::messages::short;

#[cfg(test)]
mod tests;
