//! The waits for the person: the visitor inputs a run's drive loop waits for, and the
//! confirmations of runs without a tab, listed for the popup and side panel (`pending`) until
//! the person answers (`answer`, `decline`), the run ends, or (a confirmation) 5 minutes pass.
//!
//! Invariant: an item is listed while, and only while, something waits for it; every answer
//! reaches the one waiter of its run (inputs) or of its call (a confirmation).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Promise, Reflect};
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;

use super::io::{deferred, race_stop};
use super::pages::push;
use crate::core::ops::runs::{Answer, PendingItem};
use crate::core::run::{Input, PendingInput};

/// How long a tab-less confirmation waits for the person.
const CONFIRM_MS: u32 = 5 * 60 * 1000;

/// Who waits for an answer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Waiter {
    /// A run's drive loop, for any of its visitor inputs.
    Inputs { run_id: String },
    /// One call of a run without a tab, for its confirmation.
    Confirmation { run_id: String, call_id: String },
}

impl Waiter {
    fn run_id(&self) -> &str {
        match self {
            Waiter::Inputs { run_id } | Waiter::Confirmation { run_id, .. } => run_id,
        }
    }
}

/// What waits for the person, and what they answered that was not taken yet.
#[derive(Default)]
struct Waits {
    pending: Vec<PendingItem>,
    answers: Vec<Answer>,
    /// `{promise, resolve}` of each waiter.
    wakers: HashMap<Waiter, JsValue>,
}

thread_local! {
    static WAITS: RefCell<Waits> = RefCell::new(Waits::default());
}

fn with<T>(f: impl FnOnce(&mut Waits) -> T) -> T {
    WAITS.with(|w| f(&mut w.borrow_mut()))
}

fn wake(waiter: &Waiter) {
    if let Some(waker) = with(|w| w.wakers.remove(waiter)) {
        if let Ok(resolve) = Reflect::get(&waker, &"resolve".into()) {
            let _ = js_sys::Function::from(resolve).call0(&JsValue::UNDEFINED);
        }
    }
}

/// A new waker for `waiter`, and the promise it resolves.
fn waker_for(waiter: Waiter) -> Promise {
    let waker = deferred();
    let promise = Reflect::get(&waker, &"promise".into())
        .map(Promise::from)
        .unwrap_or_else(|_| Promise::resolve(&JsValue::UNDEFINED));
    with(|w| w.wakers.insert(waiter, waker));
    promise
}

/// A run ended: what still waited for the person is dismissed, and its waiters woken.
pub(crate) fn dismiss(run_id: &str) {
    let waiters: Vec<Waiter> = with(|w| {
        w.pending.retain(|p| p.run_id() != run_id);
        w.answers.retain(|a| a.run_id != run_id);
        w.wakers
            .keys()
            .filter(|k| k.run_id() == run_id)
            .cloned()
            .collect()
    });
    for waiter in &waiters {
        wake(waiter);
    }
}

/// The visitor inputs a run waits for: listed for the person; resolves to the answers given
/// (as the run's inputs) once there is at least one, or to none when `stop` settles first.
pub(crate) async fn wait_for_inputs(
    run_id: &str,
    waiting: &[PendingInput],
    stop: Promise,
) -> Vec<Input> {
    let changed = with(|w| {
        let before = w.pending.clone();
        w.pending.retain(|p| {
            !matches!(p, PendingItem::Input { run_id: r, call_id, .. }
                if r == run_id && !waiting.iter().any(|i| &i.call_id == call_id))
        });
        for input in waiting {
            let listed = |p: &PendingItem| p.run_id() == run_id && p.call_id() == input.call_id;
            if !w.pending.iter().any(listed) {
                w.pending.push(PendingItem::Input {
                    run_id: run_id.to_owned(),
                    call_id: input.call_id.clone(),
                    name: input.name.clone(),
                    args: input.args.clone(),
                });
            }
        }
        w.pending != before
    });
    if changed {
        push("pending", json!({}));
    }
    if !with(|w| w.answers.iter().any(|a| a.run_id == run_id)) {
        let waiter = Waiter::Inputs {
            run_id: run_id.to_owned(),
        };
        let promise = waker_for(waiter.clone());
        let _ = race_stop(promise, stop).await;
        with(|w| w.wakers.remove(&waiter));
    }
    with(|w| {
        let (mine, rest): (Vec<Answer>, Vec<Answer>) = std::mem::take(&mut w.answers)
            .into_iter()
            .partition(|a| a.run_id == run_id);
        w.answers = rest;
        mine.into_iter()
            .filter(|a| waiting.iter().any(|i| i.call_id == a.call_id))
            .map(|a| match a.verdict {
                Ok(value) => Input::SubmitToolResult {
                    call_id: a.call_id,
                    value,
                },
                Err(error) => Input::RejectToolCall {
                    call_id: a.call_id,
                    error,
                },
            })
            .collect()
    })
}

/// Asks the person (in the popup or side panel) to allow a call of a run without a tab.
/// Resolves to whether they allowed it; a run that ends, or 5 minutes without an answer,
/// declines.
pub(crate) async fn confirm_without_tab(
    run_id: &str,
    call_id: &str,
    server: &str,
    tool: &str,
    args: &Map<String, Value>,
) -> bool {
    let waiter = Waiter::Confirmation {
        run_id: run_id.to_owned(),
        call_id: call_id.to_owned(),
    };
    with(|w| {
        w.pending.push(PendingItem::Confirmation {
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            name: tool.to_owned(),
            server: server.to_owned(),
            args: args.clone(),
        })
    });
    let promise = waker_for(waiter.clone());
    push("pending", json!({}));
    let _ = super::timer::within(promise, CONFIRM_MS).await;
    with(|w| {
        w.wakers.remove(&waiter);
        w.pending
            .retain(|p| !(p.run_id() == run_id && p.call_id() == call_id));
        let at = w
            .answers
            .iter()
            .position(|a| a.run_id == run_id && a.call_id == call_id);
        at.map(|at| w.answers.remove(at).verdict.is_ok())
            .unwrap_or(false)
    })
}

/// `pending()` → the items waiting for the person: `{kind: "input", runId, callId, name,
/// args}` (a visitor tool) or `{kind: "confirmation", runId, callId, name, server, args}`.
pub(crate) fn pending() -> Value {
    serde_json::to_value(with(|w| w.pending.clone())).unwrap_or(Value::Null)
}

/// `answer` / `decline`: gives the person's answer to what waits for it. Whether it was
/// waiting.
pub(crate) fn deliver(answer: Answer) -> bool {
    let item = with(|w| {
        let at = w
            .pending
            .iter()
            .position(|p| p.run_id() == answer.run_id && p.call_id() == answer.call_id)?;
        let item = w.pending.remove(at);
        w.answers.push(answer.clone());
        Some(item)
    });
    let Some(item) = item else {
        return false;
    };
    wake(&match item {
        PendingItem::Input { .. } => Waiter::Inputs {
            run_id: answer.run_id,
        },
        PendingItem::Confirmation { .. } => Waiter::Confirmation {
            run_id: answer.run_id,
            call_id: answer.call_id,
        },
    });
    push("pending", json!({}));
    true
}
