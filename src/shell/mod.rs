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
pub mod calls;
pub mod chrome;
pub mod convert;
pub mod crawl;
pub mod evals;
pub mod expose;
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

use crate::core::host::call::{Effect, HostCall, Outcome};
use crate::core::host::listing::{ListEffect, ListInput, Listing, Settle};
use crate::core::host::probe::{ProbeEffect, ProbeInput, Probing};
use crate::core::limits::FRAME_LIST_MS;
use crate::core::page::bridge::{FrameRequest, Reply, Target};
use crate::core::page::call::{CallAnswer, Input, Step, CANCEL_REPLY_MS, PAGE_RESULT_MS};
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

/// A page call for `asker` outside runs (a smoke evaluation, `replayDiff`): the host's
/// [`HostCall`] screens it through the gate first.
pub(crate) async fn asked_call(
    asker: crate::core::gate::Asker,
    request: crate::core::page::call::CallRequest,
) -> CallAnswer {
    let id = format!("call_{}", io::random_id());
    page_call(HostCall::asked(asker, request, id)).await
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

/// `audit({tabId, format?, probe?, allowActing?, watchNetwork?, tools?})`: performs what the
/// host's [`Probing`] asks (the tab listed, each probe's call and the page's requests watched
/// around it, the page loaded again after a probe navigated it) until the audit's answer.
pub(crate) async fn audit(request: crate::core::ops::AuditRequest) -> Result<Value, String> {
    let mut probing = Probing::new(request, format!("call_{}", io::random_id()));
    let mut input = None;
    loop {
        let effect = state::host(|host| host.probe(&mut probing, input.take(), io::now_ms()));
        observe_listed();
        input = Some(match effect {
            ProbeEffect::Done(answer) => return answer,
            ProbeEffect::List(effect) => ProbeInput::Listing(list_step(effect).await),
            ProbeEffect::PageUrl { tab_id } => {
                ProbeInput::PageUrl(evals::page_url("audit", tab_id).await)
            }
            ProbeEffect::Ask {
                tab_id,
                target,
                message,
                ms,
            } => ProbeInput::Watched(ask(tab_id, target, &message, ms).await),
            ProbeEffect::Call(effect) => ProbeInput::Call(call_step(effect).await),
            ProbeEffect::Reload { tab_id, url, ms } => ProbeInput::Reloaded(
                (io::reload_tab(tab_id as f64, &url, ms).await)
                    .map(drop)
                    .map_err(|e| convert::describe(&e)),
            ),
        });
    }
}
