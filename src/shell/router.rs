//! The one router of the worker's operations, for both of their callers: runtime messages
//! (`handleMessage`: the extension's pages and the content scripts, each message's sender
//! classified and authorized by the core first) and the automation surface (`call`: the
//! worker's own `globalThis.webmcpHost`, built by `worker.js` from [`operations`]).
//!
//! Invariants: every operation answers one shape, `{ok: true, value}` or `{ok: false,
//! error}`, and never panics on bad input. The host's door opens nearly every operation as
//! one of its machines, driven here with one call; what the router still performs itself
//! holds state only the browser has (the runs under way, the person's pending answers).

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Array;
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::convert;
use super::io::random_id;
use super::pages::{extension_origin, on_tools_changed, push};
use super::{agent, chrome, waits};
use crate::core::host::door::{Arrival, Fresh, Opened};
use crate::core::ops::runs::{fill_run_ids, not_started};
use crate::core::ops::{Op, OpName, Sender};

/// The names of the operations of the automation surface (`globalThis.webmcpHost`).
#[wasm_bindgen]
pub fn operations() -> Array {
    OpName::ALL
        .iter()
        .filter(|op| op.automated())
        .map(|op| JsValue::from_str(op.as_str()))
        .collect()
}

/// `webmcpHost[op](request)`: runs an operation for the worker itself (no sender to check).
/// Resolves to `{ok: true, value}` or `{ok: false, error}`.
#[wasm_bindgen]
pub async fn call(op: String, request: JsValue) -> JsValue {
    let outcome = async {
        let request = convert::to_json(&request)?;
        open(Arrival::Automation {
            op: &op,
            request: &request,
        })?
        .await
    };
    answer(outcome.await)
}

/// What an arrival opens in the host ([`Host::open`](crate::core::host::Host::open): read,
/// authorized, parsed), then performed: a page call with the host's call steps, any other
/// operation here. A refusal is warned of in the worker's console.
fn open(
    arrival: Arrival,
) -> Result<impl std::future::Future<Output = Result<Done, String>>, String> {
    let fresh = Fresh {
        id: random_id(),
        origin: extension_origin(),
    };
    let opened = super::state::host(|host| host.open(arrival, &fresh)).map_err(|closed| {
        if let Some(warning) = &closed.warning {
            chrome::warn(warning);
        }
        closed.error
    })?;
    Ok(async move {
        match opened {
            Opened::Machine(mut machine) => {
                super::drive(|host, input, now| host.step(&mut machine, input, now))
                    .await
                    .map(Done::Value)
            }
            Opened::Server(call) => super::calls::perform(*call).await.map(Done::Value),
            // A tab's listing is written straight to JSON text (hundreds of tools are not
            // copied into a JSON value first).
            Opened::Listing(listing) => {
                Ok(Done::Json(super::list(*listing).await?.response_text()))
            }
            Opened::Op { op, sender } => perform(*op, sender.as_ref()).await.map(Done::Value),
        }
    })
}

/// The worker's `chrome.runtime.onMessage` handler: classifies the sender, authorizes the
/// operation it names, then parses and runs it. Resolves to `{ok: true, value}` or `{ok:
/// false, error}`.
#[wasm_bindgen(js_name = handleMessage)]
pub async fn handle_message(message: JsValue, sender: JsValue) -> JsValue {
    answer(receive(&message, &sender).await)
}

/// An operation's value, or its JSON text (a tab's listing, written once from the tools).
enum Done {
    Value(Value),
    Json(String),
}

fn answer(outcome: Result<Done, String>) -> JsValue {
    match outcome {
        Ok(Done::Json(text)) => js_sys::JSON::parse(&format!(r#"{{"ok":true,"value":{text}}}"#))
            .unwrap_or_else(|_| answer(Err("the answer could not be read as JSON".into()))),
        Ok(Done::Value(value)) => convert::from_json(&json!({"ok": true, "value": value})),
        Err(error) => convert::from_json(&json!({"ok": false, "error": error})),
    }
}

async fn receive(message: &JsValue, sender: &JsValue) -> Result<Done, String> {
    let own_id =
        super::pages::runtime_id().ok_or("chrome.runtime is not available in this context")?;
    let (sender, text) = (
        convert::sender_info(sender),
        convert::to_json_text(message)?,
    );
    open(Arrival::Message {
        text: &text,
        sender: &sender,
        own_id: &own_id,
    })?
    .await
}

/// Runs an authorized operation; `sender` is the message's (none for the automation surface).
async fn perform(op: Op, sender: Option<&Sender>) -> Result<Value, String> {
    match op {
        Op::Run(request) => agent::run(request, None).await,
        Op::StartRun(request) => start_run(request).await,
        Op::Events(request) => agent::events(&request),
        Op::Stop(request) => agent::stop(&request),
        Op::Pending => Ok(waits::pending()),
        Op::Answer(answer) => waits::deliver(answer),
        Op::CallWanted { call } => Ok(serde_json::json!({"wanted": agent::call_wanted(&call)})),
        Op::ToolsChanged => {
            if let Some(Sender::ContentScript {
                tab_id, frame_id, ..
            }) = sender
            {
                on_tools_changed(*tab_id, *frame_id);
            }
            Ok(Value::Null)
        }
        // The host opens every other operation as its own machine (`Opened::Machine`,
        // `Server`, `Listing`), never as an operation.
        _ => Err("internal error: the host's own opened as an operation".into()),
    }
}

/// `startRun(request)` (already checked as a run request) → `{runId, threadId}` once the run
/// is stored (so that `runLog` and `runs` know it), or the error that kept it from starting;
/// the run goes on in the worker (watch it with `runLog`, the pushed events, or `events`).
async fn start_run(mut request: Map<String, Value>) -> Result<Value, String> {
    super::store::load_registry()
        .await?
        .resolve(request.get("model").and_then(Value::as_str))
        .map_err(|e| format!("startRun: {e}"))?;
    let (run_id, thread_id) = fill_run_ids(&mut request, random_id);
    let started = run_id.clone();
    let mut resolve = None;
    let recorded = js_sys::Promise::new(&mut |done, _| resolve = Some(done));
    let resolve = resolve.expect("a promise calls its executor at once");
    let refused: Rc<RefCell<Option<String>>> = Rc::default();
    let (done, failed) = (resolve.clone(), refused.clone());
    spawn_local(async move {
        if let Err(message) = agent::run(Value::Object(request), Some(done.clone())).await {
            chrome::warn(&format!(
                "webmcp-host: run {started} did not start: {message}"
            ));
            push("finished", not_started(&started, &message));
            *failed.borrow_mut() = Some(message);
            let _ = done.call0(&JsValue::UNDEFINED);
        }
    });
    let _ = wasm_bindgen_futures::JsFuture::from(recorded).await;
    if let Some(message) = refused.borrow_mut().take() {
        return Err(message);
    }
    Ok(json!({"runId": run_id, "threadId": thread_id}))
}
