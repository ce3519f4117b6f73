//! The service-worker shell: the only code that touches `wasm_bindgen`, `js_sys` and
//! `chrome.*`. It converts JS values to JSON at its edge, asks the core what to do, performs
//! the messaging and timers the core cannot, and hands the core's answers back to JS.
//!
//! Exported to the worker's loader (`worker.js`): the router's `handleMessage`, `call` and
//! `operations` ([`router`]), and `recover` ([`runlog`]). None of them panics on bad input: every
//! operation resolves to `{ok: true, value}` or `{ok: false, error}`.

pub mod agent;
pub mod auth;
pub mod bugreport;
pub mod chrome;
pub mod convert;
pub mod crawl;
pub mod evals;
pub mod expose;
pub mod gate;
pub mod io;
pub mod kept;
pub mod mcp;
pub mod pages;
pub mod router;
pub mod runlog;
pub mod settings;
pub mod signins;
pub mod state;
pub mod store;
pub mod threads;
pub mod timer;
pub mod traces;
pub mod waits;
pub mod workbench;

use std::future::Future;

use serde_json::Value;

use crate::core::gate::Asker;
use crate::core::host::call::{Effect, HostCall, Outcome};
use crate::core::host::listing::{ListEffect, ListInput, Listing, Settle};
use crate::core::limits::Limits;
use crate::core::limits::FRAME_LIST_MS;
use crate::core::page::bridge::{parse_watched, FrameRequest, Reply, Target};
use crate::core::page::call::{
    CallAnswer, CallRequest, Input, Step, CANCEL_REPLY_MS, PAGE_RESULT_MS,
};
use crate::core::page::kept::Kept;
use crate::core::page::tabs::{listing, FrameAnswer, Listed};
use crate::core::setup::store::{Area::Local, MIDDLEWARE_KEY};

/// `f` on the tabs' listings kept for the page calls that follow ([`Kept`]).
fn with_listings<T>(f: impl FnOnce(&mut Kept) -> T) -> T {
    state::host(|host| f(&mut host.listings.borrow_mut()))
}

/// Forgets the kept listing of a tab (its tools changed), or of every tab (`None`: the
/// settings changed).
pub(crate) fn forget_listing(tab_id: Option<i64>) {
    with_listings(|kept| match tab_id {
        Some(tab_id) => kept.forget(tab_id),
        None => kept.clear(),
    });
}

/// Lists a tab as the host's listing machine says ([`Listing`]: every frame asked at once,
/// the bridge injected into an orphaned tab, the site policies applied, the listing kept, the
/// page awaited as the caller asked).
pub(crate) async fn list(mut listing: Listing) -> Listed {
    let mut input = None;
    loop {
        let effect = state::host(|host| host.list(&mut listing, input.take(), io::now_ms()));
        input = Some(match effect {
            ListEffect::Done(listed) => {
                observe_listed();
                return listed;
            }
            effect => list_step(effect).await,
        });
    }
}

/// Observes every listing the host kept since the last time (the first definitions seen),
/// whichever machine made it: each driver calls this once its machine moved.
pub(crate) fn observe_listed() {
    for (tab_id, tools) in state::host(|host| host.take_listed()) {
        workbench::observe(tab_id, tools);
    }
}

/// Performs one step of a listing (never [`ListEffect::Done`], the listing's end).
pub(crate) async fn list_step(effect: ListEffect) -> ListInput {
    match effect {
        ListEffect::Sleep { ms } => {
            let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(ms)).await;
            ListInput::Slept
        }
        ListEffect::Frames { tab_id, sites } => {
            // The site policies are read while the frames list their tools.
            let read = sites.then(|| timer::started(store::load_sites()));
            let answers = frame_listings(tab_id).await;
            let sites = match read {
                Some(read) => read.await,
                None => None,
            };
            ListInput::Frames { answers, sites }
        }
        ListEffect::Inject { tab_id } => ListInput::Injected(chrome::inject_bridge(tab_id).await),
        ListEffect::Done(_) => ListInput::Injected(Err("internal error: a listing's end".into())),
    }
}

/// The tab's listing as it is now, kept for the calls that follow.
pub(crate) async fn tab_tools(tab_id: i64) -> Listed {
    list(Listing::kept(tab_id, Settle::Now)).await
}

/// Every frame's answer to `listTools`, asked all at once, within one deadline.
pub(crate) async fn frame_listings(tab_id: i64) -> Result<Vec<FrameAnswer>, String> {
    let request = FrameRequest::ListTools.to_message();
    // Every frame's request starts before any is awaited.
    let pending: Vec<_> = (chrome::all_frames(tab_id).await?.into_iter())
        .map(|frame| (ask(tab_id, frame.target(), &request, FRAME_LIST_MS), frame))
        .collect();
    let mut answers = Vec::with_capacity(pending.len());
    for (reply, frame) in pending {
        answers.push(listing(frame, reply.await));
    }
    Ok(answers)
}

/// Sends `message` to a frame's document now; its reply as JSON text, within `ms` from now
/// (so that replies asked at once share one deadline, however they are awaited). A reply that
/// is a string is that text already (a listing is sent so); anything else is written as JSON.
pub(crate) fn ask(
    tab_id: i64,
    to: Target,
    message: &Value,
    ms: u32,
) -> impl Future<Output = Reply> {
    let reply = chrome::send_to_frame(tab_id, to, &convert::from_json(message));
    let deadline = io::now_ms() + f64::from(ms);
    async move {
        let left = (deadline - io::now_ms()).max(0.0) as u32;
        match timer::within(reply, left).await {
            Ok(Some(reply)) => Reply::Answered(match reply.as_string() {
                Some(text) => Ok(text),
                None => convert::to_json_text(&reply),
            }),
            Ok(None) => Reply::TimedOut,
            Err(error) => Reply::Failed(error),
        }
    }
}

/// Performs one page tool call as the core's [`Host`](crate::core::host::Host) runs it
/// ([`HostCall`]: the gate, the tab's kept listing, the page call machine): each [`Effect`]
/// performed (the stored layers read, a hold, a listing, `webNavigation`, the message to the
/// frame within the call's timeout, waits) and answered with one [`Outcome`].
pub(crate) async fn page_call(mut call: HostCall) -> CallAnswer {
    let mut outcome = None;
    loop {
        let effect = state::host(|host| host.advance(&mut call, outcome.take(), io::now_ms()));
        outcome = Some(match effect {
            Effect::Done(answer) => {
                observe_listed();
                return answer;
            }
            effect => call_step(effect).await,
        });
    }
}

/// Performs one step of a page call (never [`Effect::Done`], the call's end).
pub(crate) async fn call_step(effect: Effect) -> Outcome {
    match effect {
        Effect::ReadLayers => Outcome::Layers(store::read(Local, MIDDLEWARE_KEY).await),
        Effect::Hold { ms } => {
            let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(ms)).await;
            Outcome::Held
        }
        Effect::List(effect) => Outcome::Listing(list_step(effect).await),
        Effect::Page(Step::Send {
            tab_id,
            target,
            message,
            timeout_ms,
            list_tabs,
        }) => {
            // The tabs are asked for before the message leaves: any tab the call opens comes
            // after them.
            let tabs = list_tabs.then(chrome::tabs);
            let reply = ask(tab_id, target, &message, timeout_ms);
            let tabs = match tabs {
                Some(tabs) => Some(tabs.await),
                None => None,
            };
            Outcome::Sent {
                tabs,
                reply: reply.await.into(),
            }
        }
        Effect::Page(step) => Outcome::Page(match step {
            Step::Frame { tab_id, frame_id } => {
                Input::Frame(chrome::frame_state(tab_id, frame_id).await)
            }
            Step::Tabs => Input::Tabs(chrome::tabs().await),
            Step::Cancel {
                tab_id,
                target,
                message,
            } => match ask(tab_id, target, &message, CANCEL_REPLY_MS).await {
                Reply::Answered(reply) => Input::Reply(reply),
                Reply::TimedOut | Reply::Failed(_) => Input::Performed,
            },
            Step::Wait { ms } => {
                let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(ms)).await;
                Input::Performed
            }
            Step::Frames { tab_id } => {
                Input::Frames(chrome::all_frames(tab_id).await.unwrap_or_default())
            }
            Step::ReadResult {
                tab_id,
                target,
                message,
            } => ask(tab_id, target, &message, PAGE_RESULT_MS).await.into(),
            // Sent above; the host answers the others itself (`Effect::ListTools`, `Done`).
            Step::Send { .. } | Step::KeptTools { .. } | Step::ListTools { .. } | Step::Done(_) => {
                Input::ChannelFailed("internal error: a step the host answers".into())
            }
        }),
        Effect::Done(_) => {
            Outcome::Page(Input::ChannelFailed("internal error: a call's end".into()))
        }
    }
}

/// Aborts a call still running in a frame (its `executeTool` signal); the frame may be gone.
pub(crate) fn cancel_in_frame(tab_id: i64, frame_id: i64, call: &str) {
    let message = FrameRequest::Cancel {
        call: call.to_owned(),
    }
    .to_message();
    send_unanswered(tab_id, frame_id, &message);
}

/// Sends a message whose answer nobody needs; a rejection (frame gone) is not left unhandled.
fn send_unanswered(tab_id: i64, to: impl Into<Target>, message: &Value) {
    let reply = chrome::send_to_frame(tab_id, to, &convert::from_json(message));
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(reply).await;
    });
}

/// `audit({tabId, format?, probe?, allowActing?, tools?})`: the tab's tools audited and, with
/// `probe`, called (every tool, or those `tools` names) as `core::audit::probe` plans (one at a time, each through the gate and confirmed
/// like any call). A call that navigated the page gets no more calls; the page is loaded again
/// (as `evaluate({reload})` does) and the other tools are probed there, or, when it cannot be,
/// are said skipped.
pub(crate) async fn audit(request: crate::core::ops::AuditRequest) -> Result<Value, String> {
    use crate::core::audit::{audit_tab_probed, probe};
    let tools = tab_tools(request.tab_id).await?;
    let mut findings = Vec::new();
    if request.probe {
        let page = match &tools.page {
            Some(page) => Ok(page.url.clone()),
            None => evals::page_url("audit", request.tab_id).await,
        };
        let plan = match &request.tools {
            Some(only) => probe::plan_only(&tools, request.allow_acting, only)?,
            None => probe::plan(&tools, request.allow_acting),
        };
        findings = plan.findings;
        let mut calls: std::collections::VecDeque<_> = plan.calls.into();
        while let Some(call) = calls.pop_front() {
            let watch = |on| {
                let message = FrameRequest::Watch { on }.to_message();
                ask(
                    request.tab_id,
                    call.frame_id.into(),
                    &message,
                    crate::core::limits::PROBE_WATCH_MS,
                )
            };
            if request.watch_network {
                watch(true).await;
            }
            let response = gate::page_call(
                Asker::Probe,
                CallRequest {
                    tab_id: request.tab_id,
                    name: call.tool.clone(),
                    args: call.args.clone(),
                    frame_id: Some(call.frame_id),
                    timeout_ms: probe::PROBE_MS,
                    call: None,
                    expect: None,
                },
            )
            .await;
            let requests = match request.watch_network {
                true => parse_watched(&watch(false).await, &Limits::DEFAULT).unwrap_or_default(),
                false => Vec::new(),
            };
            let found = probe::judge(&call, &response, &requests);
            let navigated = found.iter().any(|f| f.rule == "probe-navigates");
            findings.extend(found);
            if navigated {
                calls.retain(|next| next.tool != call.tool);
                let reloaded = match &page {
                    Ok(url) => {
                        match io::reload_tab(
                            request.tab_id as f64,
                            url,
                            crate::core::limits::EVAL_RELOAD_MS,
                        )
                        .await
                        {
                            // The next probes only once the page is there again.
                            Ok(_) => list(Listing::kept(request.tab_id, Settle::AfterLoad))
                                .await
                                .map(drop),
                            Err(e) => Err(convert::describe(&e)),
                        }
                    }
                    Err(error) => Err(error.clone()),
                };
                if reloaded.is_err() {
                    findings.extend(probe::left_out(calls.into_iter(), &call.tool));
                    break;
                }
            }
        }
    }
    Ok(audit_tab_probed(&tools, findings).render(request.format, None))
}
