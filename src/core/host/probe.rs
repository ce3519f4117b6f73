//! An audit as the [`Host`] performs it (`audit({tabId, format?, probe?, allowActing?,
//! watchNetwork?, tools?})`): the tab listed, and with `probe` its tools called as
//! [`crate::core::audit::probe`] plans (every tool, or those `tools` names), one at a time,
//! each a [`HostCall`] through the gate like any call, the page's requests watched around it
//! when asked. A call that navigated the page gets no more calls; the page is loaded again (as
//! `evaluate({reload})` does) and, once it lists its tools again, the other tools are probed
//! there; when it cannot be, they are said skipped.
//!
//! The shell sees one [`Output`] at a time and answers each with one [`Input`] through
//! [`Host::probe`]; the listings and the page calls are the probing's children, their
//! steps handed out as they come.
//!
//! Invariant: a probe reaches the page only as a [`HostCall::asked`] by [`Asker::Probe`]: the
//! gate screens it, and the page call machine confirms what acts, as for any call.

use std::collections::VecDeque;
use std::rc::Rc;

use serde_json::Value;

use super::call::HostCall;
use super::io::{unasked, Frames, Input, Output, Step, Tabs};
use super::listing::{Listing, Settle};
use super::Host;
use crate::core::audit::probe::{self, ProbeCall};
use crate::core::audit::{audit_tab_probed, Finding};
use crate::core::gate::Asker;
use crate::core::limits::{Limits, EVAL_RELOAD_MS, PROBE_WATCH_MS};
use crate::core::ops::AuditRequest;
use crate::core::page::bridge::{parse_watched, FrameRequest};
use crate::core::page::call::{CallAnswer, CallRequest, FrameState};
use crate::core::page::tabs::{Listed, TabTools};

#[derive(Debug)]
enum Phase {
    /// The audit's listing of the tab.
    Listing(Listing),
    /// Asked for the top frame's URL.
    PageUrl,
    /// The next call to make.
    Next,
    /// Asked the frame to watch the page's requests before `call`.
    WatchOn(ProbeCall),
    /// The call under way.
    Calling(ProbeCall, Box<HostCall>),
    /// Asked the frame for the requests `call` made.
    WatchOff(ProbeCall, CallAnswer),
    /// Loading the page again after `call` navigated it.
    Reloading(ProbeCall),
    /// Listing the page loaded again.
    Relisting(ProbeCall, Listing),
    /// Taken during a step, or ended.
    Gone,
}

/// One audit under way.
#[derive(Debug)]
pub struct Probing {
    request: AuditRequest,
    phase: Phase,
    tools: Option<Rc<TabTools>>,
    /// The page the audit started on (to load again), or why it is unknown.
    page: Result<String, String>,
    findings: Vec<Finding>,
    calls: VecDeque<ProbeCall>,
    /// Names the probes' calls in the page: `<calls>_<n>`.
    calls_id: String,
    made: u64,
}

impl Probing {
    /// The audit `request` asks for; `calls` is a fresh name from which its calls' ids are
    /// made.
    pub fn new(request: AuditRequest, calls: String) -> Probing {
        let listing = Listing::kept(request.tab_id, Settle::Now);
        Probing {
            request,
            phase: Phase::Listing(listing),
            tools: None,
            page: Err("the page is not known yet".into()),
            findings: Vec::new(),
            calls: VecDeque::new(),
            calls_id: calls,
            made: 0,
        }
    }

    fn watch(&self, call: &ProbeCall, on: bool) -> Next {
        Step::Do(Output::Frames(Frames::Ask {
            tab_id: self.request.tab_id,
            target: call.frame_id.into(),
            message: FrameRequest::Watch { on }.to_message(),
            ms: PROBE_WATCH_MS,
        }))
    }

    fn answer(&mut self) -> Next {
        let findings = std::mem::take(&mut self.findings);
        let audit = match &self.tools {
            Some(tools) => audit_tab_probed(tools, findings),
            None => audit_tab_probed(&TabTools::default(), findings),
        };
        Step::Done(Ok(audit.render(self.request.format, None)))
    }

    /// The tools not probed after `by` navigated the page and it could not be loaded again.
    fn leave_out(&mut self, by: &str) {
        let left = std::mem::take(&mut self.calls);
        self.findings.extend(probe::left_out(left.into_iter(), by));
    }
}

impl Host {
    /// Feeds the input of the last effect (`None` for the first) at `now_ms` and says what to
    /// do next. An input the effect did not ask for ends the audit with an error (a bug in the
    /// shell, said as such).
    pub fn probe(&self, p: &mut Probing, input: Option<Input>, now_ms: f64) -> Next {
        let mut input = input;
        loop {
            let phase = std::mem::replace(&mut p.phase, Phase::Gone);
            match (phase, input.take()) {
                (Phase::Listing(mut listing), fed) => match self.list(&mut listing, fed, now_ms) {
                    Step::Done(listed) => {
                        if let Some(done) = self.audited(p, listed) {
                            return done;
                        }
                    }
                    Step::Do(output) => {
                        p.phase = Phase::Listing(listing);
                        return Step::Do(output);
                    }
                },
                (Phase::PageUrl, Some(Input::Frame(top))) => {
                    p.page = FrameState::page_url("audit", p.request.tab_id, top);
                    if let Some(done) = plan(p) {
                        return done;
                    }
                }
                (Phase::Next, None) => match p.calls.pop_front() {
                    None => return p.answer(),
                    Some(call) if p.request.watch_network => {
                        let effect = p.watch(&call, true);
                        p.phase = Phase::WatchOn(call);
                        return effect;
                    }
                    Some(call) => {
                        if let Some(effect) = self.call(p, call, now_ms) {
                            return effect;
                        }
                    }
                },
                (Phase::WatchOn(call), Some(Input::Reply(_))) => {
                    if let Some(effect) = self.call(p, call, now_ms) {
                        return effect;
                    }
                }
                (Phase::Calling(call, mut host_call), Some(fed)) => {
                    match self.advance(&mut host_call, Some(fed), now_ms) {
                        Step::Done(answer) => {
                            if let Some(effect) = called(p, call, answer) {
                                return effect;
                            }
                        }
                        Step::Do(output) => {
                            p.phase = Phase::Calling(call, host_call);
                            return Step::Do(output);
                        }
                    }
                }
                (Phase::WatchOff(call, answer), Some(Input::Reply(reply))) => {
                    let requests = parse_watched(&reply, &Limits::DEFAULT).unwrap_or_default();
                    if let Some(effect) = judged(p, &call, &answer, &requests) {
                        return effect;
                    }
                }
                (Phase::Reloading(call), Some(Input::Done(loaded))) => match loaded {
                    // The next probes only once the page is there again.
                    Ok(()) => {
                        let listing = Listing::kept(p.request.tab_id, Settle::AfterLoad);
                        p.phase = Phase::Relisting(call, listing);
                        input = None;
                        continue;
                    }
                    Err(_) => {
                        p.leave_out(&call.tool);
                        return p.answer();
                    }
                },
                (Phase::Relisting(call, mut listing), fed) => {
                    match self.list(&mut listing, fed, now_ms) {
                        Step::Done(Ok(_)) => p.phase = Phase::Next,
                        Step::Done(Err(_)) => {
                            p.leave_out(&call.tool);
                            return p.answer();
                        }
                        Step::Do(output) => {
                            p.phase = Phase::Relisting(call, listing);
                            return Step::Do(output);
                        }
                    }
                }
                (_, fed) => {
                    return Step::Done(Err(format!(
                        "internal error: {} came where the audit did not ask for it",
                        unasked(fed.as_ref())
                    )));
                }
            }
        }
    }

    /// The audit's listing arrived: the audit without probes, or the probes planned. `None`:
    /// go on with the phase set.
    fn audited(&self, p: &mut Probing, listed: Listed) -> Option<Next> {
        let tools = match listed {
            Ok(tools) => tools,
            Err(error) => return Some(Step::Done(Err(error))),
        };
        p.tools = Some(tools.clone());
        if !p.request.probe {
            return Some(p.answer());
        }
        match &tools.page {
            Some(page) => {
                p.page = Ok(page.url.clone());
                plan(p)
            }
            None => {
                p.phase = Phase::PageUrl;
                let tab_id = p.request.tab_id;
                Some(Step::Do(Output::Frames(Frames::State {
                    tab_id,
                    frame_id: 0,
                })))
            }
        }
    }

    /// Starts a probe's call through the gate; its first step (`None`: the phase moved on).
    fn call(&self, p: &mut Probing, call: ProbeCall, now_ms: f64) -> Option<Next> {
        p.made += 1;
        let request = CallRequest {
            frame_id: Some(call.frame_id),
            ..CallRequest::asked(
                p.request.tab_id,
                call.tool.clone(),
                call.args.clone(),
                probe::PROBE_MS,
            )
        };
        let id = format!("{}_{}", p.calls_id, p.made);
        let mut host_call = Box::new(HostCall::asked(Asker::Probe, request, id));
        match self.advance(&mut host_call, None, now_ms) {
            Step::Done(answer) => called(p, call, answer),
            Step::Do(output) => {
                p.phase = Phase::Calling(call, host_call);
                Some(Step::Do(output))
            }
        }
    }
}

/// An audit's next move: an output, or its answer (as `format` renders it) or why there is none.
pub type Next = Step<Result<Value, String>>;

/// The tools' probes planned from the audit's listing (`None`: the first is next).
fn plan(p: &mut Probing) -> Option<Next> {
    let tools = p.tools.clone().unwrap_or_default();
    let plan = match &p.request.tools {
        Some(only) => probe::plan_only(&tools, p.request.allow_acting, only),
        None => Ok(probe::plan(&tools, p.request.allow_acting)),
    };
    match plan {
        Ok(plan) => {
            p.findings = plan.findings;
            p.calls = plan.calls.into();
            p.phase = Phase::Next;
            None
        }
        Err(error) => Some(Step::Done(Err(error))),
    }
}

/// A probe's call ended: the requests it made asked for, or it is judged.
fn called(p: &mut Probing, call: ProbeCall, answer: CallAnswer) -> Option<Next> {
    if p.request.watch_network {
        let effect = p.watch(&call, false);
        p.phase = Phase::WatchOff(call, answer);
        return Some(effect);
    }
    judged(p, &call, &answer, &[])
}

/// A probe judged; after one that navigated, the page loaded again, or the tools left said
/// skipped when it cannot be.
fn judged(
    p: &mut Probing,
    call: &ProbeCall,
    answer: &CallAnswer,
    requests: &[(String, String)],
) -> Option<Next> {
    let found = probe::judge(call, answer, requests);
    let navigated = found.iter().any(|f| f.rule == "probe-navigates");
    p.findings.extend(found);
    p.phase = Phase::Next;
    if !navigated {
        return None;
    }
    p.calls.retain(|next| next.tool != call.tool);
    match p.page.clone() {
        Ok(url) => {
            p.phase = Phase::Reloading(call.clone());
            Some(Step::Do(Output::Tabs(Tabs::Reload {
                tab_id: p.request.tab_id,
                url,
                ms: EVAL_RELOAD_MS,
            })))
        }
        Err(_) => {
            p.leave_out(&call.tool);
            Some(p.answer())
        }
    }
}
