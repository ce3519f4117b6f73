//! Runs in the worker: `webmcpHost.run`, `events`, `stop`, `configure`.
//!
//! The host's [`HostRun`] decides everything of a run (its start and its needs, its drive, its
//! tab's listings, page calls and model streams, its timers and intents, its end); this module
//! performs what it asks: the run's record made, its children's outputs, Chrome's built-in
//! model, the tool calls the host leaves to it (MCP, the clock, any call through the person's
//! JavaScript layers), the person's answers, keep-alive. Every result goes back as a
//! [`RunFeed`] through the run's inbox, which `stop` feeds too.

use std::future::Future;
use std::rc::Rc;

use js_sys::Promise;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::convert::{self, describe};
use super::io::{
    chrome_model_availability, chrome_model_prompt, now_ms, random_id, utc_offset_minutes,
};
use super::state::{Going, Inbox, Record};
use super::store;
use crate::core::gate::Permit;
use crate::core::host::call::HostCall;
use crate::core::host::run::{HostRun, RunEffect, RunFeed};
use crate::core::limits::{KEEP_ALIVE_MS, REPAIR_HOOK_MS};
use crate::core::provider::prompt::Speaker;
use crate::core::run::control::Control;
use crate::core::run::drive::{Action, Answer, Gated, ToolCall};
use crate::core::run::middleware::layered_answer;
use crate::core::run::ToolAnswer;
use crate::core::run::{RunEnded, RunOutcome};
use crate::core::setup::call::Called;
use crate::core::setup::start::{Got, Need, Start};
use crate::core::setup::store::Area::Local;

fn with_record<T>(run_id: &str, f: impl FnOnce(&mut Record) -> T) -> Option<T> {
    super::state::driver(|d| d.runs.borrow_mut().get_mut(run_id).map(f))
}

/// Whether page call `call` is still wanted: a run's call (its id starts with the run's)
/// only while the run goes on; any other call (by hand, an evaluation's) is: its caller's
/// deadline is checked by the frame itself.
pub(crate) fn call_wanted(call: &str) -> bool {
    super::state::driver(|d| {
        let runs = d.runs.borrow();
        let of_run = runs.iter().find(|(run_id, _)| {
            call.strip_prefix(run_id.as_str())
                .is_some_and(|rest| rest.starts_with('-'))
        });
        of_run.is_none_or(|(_, record)| record.going == Going::Yes)
    })
}

fn stop_promise(run_id: &str) -> Promise {
    with_record(run_id, |r| r.stop.clone()).unwrap_or_else(|| Promise::new(&mut |_, _| {}))
}

impl Inbox {
    fn push(&self, feed: RunFeed) {
        self.queue.borrow_mut().push_back(feed);
        if let Some(wake) = self.wake.borrow_mut().take() {
            let _ = wake.call0(&JsValue::UNDEFINED);
        }
    }

    async fn next(&self) -> RunFeed {
        loop {
            if let Some(answer) = self.queue.borrow_mut().pop_front() {
                return answer;
            }
            let woken = Promise::new(&mut |resolve, _| *self.wake.borrow_mut() = Some(resolve));
            let _ = JsFuture::from(woken).await;
        }
    }

    /// Performs `effect` in the background; its answer comes back through the inbox.
    fn spawn(self: &Rc<Self>, effect: impl Future<Output = RunFeed> + 'static) {
        let inbox = self.clone();
        spawn_local(async move { inbox.push(effect.await) });
    }
}

/// `webmcpHost.events({runId})`: the events of a run so far.
pub fn events(request: &Value) -> Result<Value, String> {
    let run_id = Control::parse(request)?.run_id;
    let events = with_record(&run_id, |r| r.events.clone())
        .ok_or_else(|| format!("events: no run `{run_id}` in this worker"))?;
    Ok(Value::Array(events))
}

/// `webmcpHost.stop({runId, reason?})`: ends the run: the model stream is aborted, pending
/// tool calls are cancelled. Resolves to whether the run was still going.
pub fn stop(request: &Value) -> Result<Value, String> {
    let Control { run_id, reason } = Control::parse(request)?;
    with_record(&run_id, |r| {
        if r.going != Going::Yes {
            return false;
        }
        r.going = Going::Stopped;
        let _ = (r.resolve_stop.as_ref()).map(|resolve| resolve.call0(&JsValue::UNDEFINED));
        r.inbox.push(RunFeed::Drive(Answer::Stop { reason }));
        true
    })
    .map(Value::Bool)
    .ok_or_else(|| format!("stop: no run `{run_id}` in this worker"))
}

/// `webmcpHost.run({...})` → `{runId, threadId, outcome, events, messages, transcript,
/// usage}`; `recorded` is called once the run is stored (before it acts).
pub async fn run(raw: Value, recorded: Option<js_sys::Function>) -> Result<Value, String> {
    Ok(run_ended(raw, recorded).await?.to_json())
}

/// [`run`], its end typed, as the evaluations and simulations read it.
pub async fn run_ended(raw: Value, recorded: Option<js_sys::Function>) -> Result<RunEnded, String> {
    let registry = store::load_registry().await?;
    let start = Start::new(&raw, &registry, random_id)?;
    let run_id = start.run_id().to_owned();
    if with_record(&run_id, |_| ()).is_some() {
        return Err(format!("run: a run `{run_id}` exists already"));
    }
    let prices = store::read(Local, crate::core::observe::cost::PRICES_KEY).await;
    let prices = crate::core::observe::cost::stored(prices.ok().flatten());
    let calls = format!("call_{}", random_id());
    let mut run = HostRun::new(start, super::io::has_repair_hook(), prices, calls);
    let inbox = Rc::new(Inbox::default());
    let mut side = RunSide {
        raw: &raw,
        recorded,
        inbox: &inbox,
    };
    let outcome = perform(&mut run, &run_id, &mut side).await?;
    let drive = run.drive().ok_or("run: the run ended without a drive")?;
    let events = with_record(&run_id, |r| {
        r.going = Going::Finished;
        // What waits on the run's end (a middleware layer's abort signal) hears it.
        let _ = (r.resolve_stop.take()).map(|resolve| resolve.call0(&JsValue::UNDEFINED));
        r.events.clone()
    })
    .unwrap_or_default();
    let value = serde_json::to_value(&outcome).unwrap_or(Value::Null);
    super::runlog::on_finish(&run_id, &value);
    super::traces::export(run_id.clone());
    Ok(drive.ended(&run_id, run.thread_id(), outcome, events))
}

/// What the shell keeps for a run beside the host's `HostRun`: its request and callback, its
/// inbox.
struct RunSide<'a> {
    raw: &'a Value,
    recorded: Option<js_sys::Function>,
    inbox: &'a Rc<Inbox>,
}

/// What the start needs of the shell: its record made (the host meets its other needs).
async fn need(run: &HostRun, run_id: &str, need: Need, o: &mut RunSide<'_>) -> Result<Got, String> {
    Ok(match need {
        Need::Refused(message) => return Err(message),
        Need::Record => {
            let mut resolve_stop = None;
            let stop = Promise::new(&mut |resolve, _| resolve_stop = Some(resolve));
            let (events, going, inbox) = (Vec::new(), Going::Yes, o.inbox.clone());
            let record = Record {
                events,
                stop,
                resolve_stop,
                going,
                inbox,
            };
            super::state::driver(|d| d.runs.borrow_mut().insert(run_id.to_owned(), record));
            let tab_id = run.start().and_then(Start::tab_id);
            super::runlog::on_start(run_id, run.thread_id(), tab_id, o.raw).await;
            let _ = o.recorded.as_ref().map(|f| f.call0(&JsValue::UNDEFINED));
            Got::Recorded(now_ms())
        }
        // The host reads, saves, opens and lists itself, and finishes the start.
        _ => return Err("internal error: a need the host answers".into()),
    })
}

/// Performs what the run asks (its start's needs, its drive's actions, its listings' and page
/// calls' steps) until it ends: how it ended, or why it could not start.
async fn perform(
    run: &mut HostRun,
    run_id: &str,
    o: &mut RunSide<'_>,
) -> Result<RunOutcome, String> {
    let mut keep_alive: Option<js_sys::Function> = None;
    let inbox = o.inbox.clone();
    loop {
        run.set_layered(super::io::has_layers());
        while let Some(effect) = super::state::host(|h| h.run_poll(run, now_ms())) {
            let action = match effect {
                RunEffect::Need(asked) => {
                    let got = need(run, run_id, asked, o).await?;
                    super::state::host(|h| h.run_handle(run, RunFeed::Got(got), now_ms()));
                    continue;
                }
                RunEffect::Child { child, output } => {
                    inbox.spawn(async move {
                        let input = super::perform(output).await;
                        RunFeed::Child { child, input }
                    });
                    continue;
                }
                RunEffect::Page(page) => {
                    super::runlog::on_page(run_id, page);
                    continue;
                }
                RunEffect::Log(effects) => {
                    super::runlog::perform(run_id, effects);
                    continue;
                }
                RunEffect::Act(action) => action,
            };
            match action {
                Action::Event(event) => {
                    let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                    super::runlog::on_event(run_id, &value);
                    with_record(run_id, |r| r.events.push(value));
                }
                Action::ChromeAvailability { id } => inbox.spawn(async move {
                    let availability = chrome_model_availability().await;
                    RunFeed::Drive(Answer::ChromeAvailability {
                        id,
                        availability: availability.as_string().unwrap_or_default(),
                    })
                }),
                Action::ChromePrompt { id, system, turns } => {
                    let stop = stop_promise(run_id);
                    inbox.spawn(async move {
                        let output = chrome_model(&system, &turns, stop).await;
                        RunFeed::Drive(Answer::ChromeOutput { id, output })
                    })
                }
                // The clock's and the MCP servers' calls, and any call while the person's
                // layers wrap them (the host makes the run's page calls itself otherwise).
                Action::Tool {
                    call_id,
                    call,
                    info,
                } => {
                    let client = match call.call() {
                        ToolCall::Mcp { server, .. } => run.client(server),
                        _ => None,
                    };
                    let client = client.map(|id| Rc::new(super::state::McpClient { id }));
                    let stop = stop_promise(run_id);
                    inbox.spawn(async move {
                        let answer = through_layers(*call, client, &info, stop).await;
                        RunFeed::Drive(Answer::ToolDone { call_id, answer })
                    });
                }
                Action::CancelInFrame {
                    tab_id,
                    frame_id,
                    call_id,
                } => super::cancel_in_frame(tab_id, frame_id, &call_id),
                Action::WaitForPerson(pending) => {
                    // Visitor inputs are answered from the popup or side panel (`answer`,
                    // `decline`); the wait ends with answers, or with a stop.
                    let (run_id, stop) = (run_id.to_owned(), stop_promise(run_id));
                    inbox.spawn(async move {
                        let inputs = super::waits::wait_for_inputs(&run_id, &pending, stop).await;
                        RunFeed::Drive(Answer::Person(inputs))
                    });
                }
                Action::RepairHook { call_id, request } => inbox.spawn(async move {
                    let request = convert::from_json(&request);
                    let answer = super::io::ask_repair_hook(request, REPAIR_HOOK_MS).await;
                    let call = convert::to_json(&answer).ok().filter(|v| !v.is_null());
                    RunFeed::Drive(Answer::Hook { call_id, call })
                }),
                // While the run works, the worker is kept from idling out (Chrome stops an idle
                // worker after 30 s, and a model may think longer than that between two chunks).
                Action::KeepAlive(true) => {
                    keep_alive.get_or_insert_with(|| super::io::keep_alive(KEEP_ALIVE_MS));
                }
                Action::KeepAlive(false) => {
                    if let Some(stop) = keep_alive.take() {
                        let _ = stop.call0(&JsValue::UNDEFINED);
                    }
                }
                Action::Finished(outcome) => return Ok(outcome),
                // The host lists the run's tab, performs the model's fetches and timers, stores
                // the intents and asks the person to confirm (in the extension's own UI)
                // itself.
                Action::ListTabTools { .. }
                | Action::Fetch { .. }
                | Action::Read { .. }
                | Action::Abort { .. }
                | Action::Timer { .. }
                | Action::CancelTimer { .. }
                | Action::Confirm(_)
                | Action::Intents(_)
                | Action::StoreIntents { .. } => {}
            }
        }
        let feed = inbox.next().await;
        super::state::host(|h| h.run_handle(run, feed, now_ms()));
        super::observe_listed();
    }
}

/// Chrome's built-in model: the pieces of its answer, or why it failed.
async fn chrome_model(
    system: &str,
    turns: &[(Speaker, String)],
    stop: Promise,
) -> Result<Vec<String>, String> {
    let turns = serde_json::to_value(turns).expect("turns serialize");
    let pieces = chrome_model_prompt(system, convert::from_json(&turns), stop)
        .await
        .map_err(|e| describe(&e))?;
    serde_json::from_value(convert::to_json(&pieces)?).map_err(|e| e.to_string())
}

/// A tool call through the middleware layers set with `webmcpHost.use` (none: the call, its
/// answer handed to the run as a value). The layers, the person's JavaScript, get the answer
/// in `callTool`'s shape from `next()`, and what they give back is read at that edge.
async fn through_layers(
    call: Permit<ToolCall>,
    client: Option<super::mcp::Shared>,
    info: &Value,
    stop: Promise,
) -> ToolAnswer {
    if !super::io::has_layers() {
        return call_tool(call, client).await.answer();
    }
    let next = Closure::once_into_js(move || {
        wasm_bindgen_futures::future_to_promise(async move {
            Ok(convert::from_json(&call_tool(call, client).await.to_json()))
        })
    });
    let answer = super::io::through_layers(convert::from_json(info), next.into(), stop).await;
    let answer =
        convert::to_json(&answer).unwrap_or_else(|e| serde_json::json!({"ok": false, "error": e}));
    layered_answer(&answer)
}

async fn call_tool(call: Permit<ToolCall>, client: Option<super::mcp::Shared>) -> Called {
    match call.gated() {
        Gated::CurrentTime => Called::Time {
            now_ms: now_ms(),
            utc_offset_minutes: utc_offset_minutes(),
        },
        Gated::Page(permit) => {
            let id = format!("call_{}", random_id());
            Called::Page(super::page_call(HostCall::permitted(permit, id)).await)
        }
        Gated::Mcp { server, call } => match client {
            Some(client) => {
                let tool = Box::new(call.call().tool.clone());
                let result = super::mcp::call(client, call).await;
                Called::Mcp { tool, result }
            }
            None => Called::NotConnected(server),
        },
    }
}
