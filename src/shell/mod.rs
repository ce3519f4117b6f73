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
pub mod evals;
pub mod expose;
pub mod io;
pub mod kept;
pub mod mcp;
pub mod pages;
pub mod router;
pub mod runlog;
pub mod state;
pub mod store;
pub mod timer;
pub mod traces;
pub mod waits;
pub mod workbench;

use std::future::Future;

use serde_json::Value;

use crate::core::host::call::HostCall;
use crate::core::host::io::{
    FrameAnswer, Frames, Input, Listed, Model, Output, Reply, Step, Storage, Tabs, Target, Ui,
};
use crate::core::host::listing::{Listing, Settle};
use crate::core::host::Host;
use crate::core::limits::FRAME_LIST_MS;
use crate::core::page::bridge::FrameRequest;
use crate::core::page::call::CallAnswer;
use crate::core::page::kept::Kept;
use crate::core::page::tabs::listing;

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

/// Drives one machine of the host to its answer: each [`Output`] it asks for performed
/// ([`perform`]), its [`Input`] fed back; the listings the host kept meanwhile observed.
pub(crate) async fn drive<A>(mut step: impl FnMut(&Host, Option<Input>, f64) -> Step<A>) -> A {
    let mut input = None;
    loop {
        let next = state::host(|host| step(host, input.take(), io::now_ms()));
        observe_listed();
        match next {
            Step::Done(answer) => return answer,
            Step::Do(output) => input = Some(perform(output).await),
        }
    }
}

/// Lists a tab as the host's listing machine says ([`Listing`]: every frame asked at once,
/// the bridge injected into an orphaned tab, the site policies applied, the listing kept, the
/// page awaited as the caller asked).
pub(crate) async fn list(mut listing: Listing) -> Listed {
    drive(|host, input, now| host.list(&mut listing, input, now)).await
}

/// Observes every listing the host kept since the last time (the first definitions seen),
/// whichever machine made it.
pub(crate) fn observe_listed() {
    for (tab_id, tools) in state::host(|host| host.take_listed()) {
        workbench::observe(tab_id, tools);
    }
}

/// Performs one output of the host's vocabulary: the shell's one place for each kind of
/// browser work a machine asks for.
pub(crate) async fn perform(output: Output) -> Input {
    match output {
        Output::Sleep { ms } => {
            let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(ms)).await;
            Input::Slept
        }
        Output::Storage(Storage::Read { area, key }) => Input::Read(store::read(area, &key).await),
        Output::Storage(Storage::Write { area, key, value }) => {
            Input::Done(store::put(area, &key, value.as_ref()).await)
        }
        Output::Storage(Storage::Exposures) => Input::Exposures(expose::load_exposures().await),
        Output::Storage(Storage::Keys { area }) => Input::Keys(store::keys(area).await),
        Output::Storage(Storage::All { area }) => Input::Read(store::all(area).await.map(Some)),
        Output::Frames(Frames::List { tab_id, sites }) => {
            // The site policies are read while the frames list their tools.
            let read = sites.then(|| timer::started(store::load_sites()));
            let answers = frame_listings(tab_id).await;
            let sites = match read {
                Some(read) => read.await,
                None => None,
            };
            Input::Listed { answers, sites }
        }
        Output::Frames(Frames::Inject { tab_id }) => {
            Input::Done(chrome::inject_bridge(tab_id).await)
        }
        Output::Frames(Frames::Ask {
            tab_id,
            target,
            message,
            ms,
        }) => Input::Reply(ask(tab_id, target, &message, ms).await),
        Output::Frames(Frames::Send {
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
            let reply = reply.await;
            Input::Sent { tabs, reply }
        }
        Output::Frames(Frames::Tell {
            tab_ids,
            message,
            ms,
        }) => {
            expose::tell(tab_ids, &message, ms).await;
            Input::Done(Ok(()))
        }
        Output::Frames(Frames::All { tab_id }) => Input::Frames(chrome::all_frames(tab_id).await),
        Output::Frames(Frames::Survey {
            tab_ids,
            message,
            ms,
        }) => Input::Surveyed(workbench::survey(tab_ids, &message, ms).await),
        Output::Frames(Frames::State { tab_id, frame_id }) => {
            Input::Frame(chrome::frame_state(tab_id, frame_id).await)
        }
        Output::Tabs(Tabs::List) => Input::Tabs(chrome::tabs().await),
        Output::Tabs(Tabs::Snapshot { tab_id }) => {
            Input::Snapshot(bugreport::snapshot(tab_id).await)
        }
        Output::Tabs(Tabs::Reload { tab_id, url, ms }) => Input::Done(
            (io::reload_tab(tab_id as f64, &url, ms).await)
                .map(drop)
                .map_err(|e| convert::describe(&e)),
        ),
        Output::Tabs(Tabs::Load { tab_id, url, ms }) => {
            Input::Landed(match io::load_tab(tab_id as f64, &url, ms).await {
                Ok(landed) => Ok(landed.as_string().unwrap_or(url)),
                Err(e) => Err(convert::describe(&e)),
            })
        }
        Output::Ui(Ui::Confirm {
            asked,
            call_id,
            server,
            tool,
            args,
            question,
        }) => {
            let asked = (asked.as_str(), call_id.as_str());
            let names = (server.as_str(), tool.as_str());
            Input::Confirmed(waits::confirm_in_extension(asked, names, &args, question).await)
        }
        Output::Ui(Ui::Authorize { url, redirect, via }) => {
            Input::Authorized(auth::authorize(&url, &redirect, via).await)
        }
        Output::Ui(Ui::Push { kind, body }) => {
            pages::push(&kind, body);
            Input::Pushed
        }
        Output::Ui(Ui::Warn { message }) => {
            chrome::warn(&message);
            Input::Pushed
        }
        Output::Ui(Ui::Redirect { path, uuids }) => Input::Redirect {
            url: auth::redirect(&path),
            random: io::random_hex(uuids),
        },
        Output::Model(Model::Availability) => Input::Availability(
            (io::chrome_model_availability().await.as_string()).unwrap_or_default(),
        ),
        Output::Mcp(mcp) => calls::perform_mcp(mcp).await,
        // A run, or its log read, performs outputs of its own: boxed, as this future holds it.
        Output::Runs(runs) => Box::pin(evals::perform_run(runs)).await,
        Output::Http(http) => mcp::perform_http(http).await,
        Output::Timers(timers) => timer::perform(timers).await,
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

/// Performs one page tool call as the core's [`Host`] runs it ([`HostCall`]: the gate, the
/// tab's kept listing, the page call machine).
pub(crate) async fn page_call(mut call: HostCall) -> CallAnswer {
    drive(|host, input, now| host.advance(&mut call, input, now)).await
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
