//! The waits for the person, performed: the core's [`Waits`] table lists the visitor inputs
//! and the tab-less confirmations and keeps the answers; this module holds each waiter's
//! waker, races it against the run's stop or the confirmation's timer, and pushes `pending`.
//!
//! Invariant: every waiter has at most one waker, removed once its wait is over; every answer
//! the core keeps wakes its one waiter.

use std::collections::HashMap;

use js_sys::{Function, Promise};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::io::race_stop;
use super::pages::{push, show_question};
use crate::core::limits::CONFIRM_MS;
use crate::core::ops::runs::Answer;
use crate::core::ops::waits::{Listing, Waiter, Waits};
use crate::core::run::{Input, PendingInput};

fn with<T>(f: impl FnOnce(&mut Waits) -> T) -> T {
    super::state::host(|host| f(&mut host.waits.borrow_mut()))
}

fn wakers<T>(f: impl FnOnce(&mut HashMap<Waiter, Function>) -> T) -> T {
    super::state::driver(|driver| f(&mut driver.wakers.borrow_mut()))
}

fn wake(waiter: &Waiter) {
    if let Some(resolve) = wakers(|w| w.remove(waiter)) {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    }
}

/// A new waker for `waiter`, and the promise it resolves.
fn waker_for(waiter: Waiter) -> Promise {
    Promise::new(&mut |resolve, _| {
        wakers(|w| w.insert(waiter.clone(), resolve));
    })
}

/// A run ended: what still waited for the person is dismissed, and its waiters woken.
pub(crate) fn dismiss(run_id: &str) {
    with(|w| w.dismiss(run_id));
    let waiters: Vec<Waiter> =
        wakers(|w| w.keys().filter(|k| k.run_id() == run_id).cloned().collect());
    waiters.iter().for_each(wake);
}

/// The visitor inputs a run waits for: listed for the person; resolves to the answers given
/// (as the run's inputs) once there is at least one, or to none when `stop` settles first.
pub(crate) async fn wait_for_inputs(
    run_id: &str,
    waiting: &[PendingInput],
    stop: Promise,
) -> Vec<Input> {
    let (listing, waiter) = with(|w| w.list_inputs(run_id, waiting));
    if listing == Listing::Changed {
        push("pending", json!({}));
    }
    if let Some(waiter) = waiter {
        let _ = race_stop(waker_for(waiter.clone()), stop).await;
        wakers(|w| w.remove(&waiter));
    }
    with(|w| w.take_inputs(run_id, waiting))
}

/// Asks the person in the extension's Pending view to allow call `call_id` of `run_id` (a run,
/// a call by hand, a page's call of an exposed tool), with the core's `question`; the view is
/// shown where the person sees it ([`show_question`]). Resolves to whether they allowed it; a
/// run that ends, or 5 minutes without an answer, declines.
pub(crate) async fn confirm_in_extension(
    (run_id, call_id): (&str, &str),
    (server, tool): (&str, &str),
    args: &serde_json::Map<String, Value>,
    question: String,
) -> bool {
    let waiter = with(|w| w.ask_with(run_id, call_id, server, tool, args, Some(question)));
    let promise = waker_for(waiter.clone());
    push("pending", json!({"asks": true}));
    let shown = show_question().await;
    if let Some(failure) = shown.strip_prefix("failed: ") {
        super::chrome::warn(&format!(
            "webmcp-host: a call waits for the person, and the extension could not show its question ({failure}); open the popup's Pending view to answer it"
        ));
    }
    let _ = super::timer::within(promise, CONFIRM_MS).await;
    wakers(|w| w.remove(&waiter));
    let allowed = with(|w| w.confirmed(run_id, call_id));
    push("pending", json!({}));
    allowed
}

/// `pending()` → the items waiting for the person.
pub(crate) fn pending() -> Value {
    with(|w| w.pending())
}

/// `answer` / `decline`: gives the person's answer to what waits for it (`true`), or says
/// that nothing waits for it.
pub(crate) fn deliver(answer: Answer) -> Result<Value, String> {
    let waiter = with(|w| w.deliver(answer))?;
    wake(&waiter);
    push("pending", json!({}));
    Ok(Value::Bool(true))
}
