//! Timeouts for promises, from the worker's `setTimeout`, and the host's [`Timers`] outputs
//! performed (each timer's handle kept under its id until it fired or was cancelled).

use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::rc::Rc;

use js_sys::{Array, Object, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::describe;
use crate::core::host::io::{Input, Timers};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &js_sys::Function, ms: u32, argument: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// Awaits `promise` for at most `ms` milliseconds: `Ok(Some(value))` when it resolved,
/// `Ok(None)` when time ran out, `Err(message)` when it rejected.
pub async fn within(promise: Promise, ms: u32) -> Result<Option<JsValue>, String> {
    let expired = JsValue::from(Object::new());
    let mut timer_id = JsValue::UNDEFINED;
    let timer = Promise::new(&mut |resolve, _reject| {
        timer_id = set_timeout(&resolve, ms, &expired);
    });
    let winner = JsFuture::from(Promise::race(&Array::of2(&promise, &timer))).await;
    clear_timeout(&timer_id);
    match winner {
        Ok(value) if Object::is(&value, &expired) => Ok(None),
        Ok(value) => Ok(Some(value)),
        Err(error) => Err(describe(&error)),
    }
}

/// Runs `work` for at most `ms` milliseconds: its value, `None` when time ran out (the work
/// may go on in the background; its value is dropped then), or its error.
pub async fn limit<T: 'static>(
    ms: u32,
    work: impl Future<Output = Result<T, String>> + 'static,
) -> Result<Option<T>, String> {
    let done: Rc<RefCell<Option<T>>> = Rc::default();
    let sink = done.clone();
    let promise = future_to_promise(async move {
        *sink.borrow_mut() = Some(work.await.map_err(|e| JsValue::from_str(&e))?);
        Ok(JsValue::TRUE)
    });
    Ok(within(promise, ms)
        .await?
        .and_then(|_| done.borrow_mut().take()))
}

/// Starts `work` now (not when first awaited); its value once done (`None` if it could not
/// finish).
pub fn started<T: 'static>(
    work: impl Future<Output = T> + 'static,
) -> impl Future<Output = Option<T>> {
    let slot: Rc<RefCell<Option<T>>> = Rc::default();
    let sink = slot.clone();
    let promise = future_to_promise(async move {
        *sink.borrow_mut() = Some(work.await);
        Ok(JsValue::UNDEFINED)
    });
    async move {
        let _ = JsFuture::from(promise).await;
        slot.borrow_mut().take()
    }
}

/// Calls `then` once after `ms` milliseconds; the handle cancels it ([`cancel`]).
pub fn after(ms: u32, then: impl FnOnce() + 'static) -> JsValue {
    let handler = Closure::once_into_js(then);
    set_timeout(handler.unchecked_ref(), ms, &JsValue::UNDEFINED)
}

/// Cancels a timer of [`after`] (one that already ran is left alone).
pub fn cancel(handle: &JsValue) {
    clear_timeout(handle);
}

/// `f` on the timers held, by id: each handle and its wait's `resolve`.
fn held<T>(f: impl FnOnce(&mut HashMap<u64, (JsValue, js_sys::Function)>) -> T) -> T {
    super::state::driver(|d| f(&mut d.timers.borrow_mut()))
}

/// Performs one output of the [`Timers`] family: each timer's handle kept under its id until
/// it fired or was cancelled.
pub(crate) async fn perform(timers: Timers) -> Input {
    match timers {
        Timers::Set { id, ms } => {
            let ended = Promise::new(&mut |resolve, _| {
                let fire = resolve.clone();
                let handle = after(ms, move || {
                    let _ = fire.call1(&JsValue::UNDEFINED, &JsValue::TRUE);
                });
                held(|t| t.insert(id, (handle.clone(), resolve.clone())));
            });
            let fired = JsFuture::from(ended).await.ok() == Some(JsValue::TRUE);
            held(|t| t.remove(&id));
            if fired {
                Input::Slept
            } else {
                Input::Done(Ok(()))
            }
        }
        Timers::Cancel { id } => {
            if let Some((handle, resolve)) = held(|t| t.remove(&id)) {
                cancel(&handle);
                let _ = resolve.call1(&JsValue::UNDEFINED, &JsValue::FALSE);
            }
            Input::Done(Ok(()))
        }
    }
}
