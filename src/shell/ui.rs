//! The person's side in the worker: the operations the popup and the side panel use
//! (`startRun`, `runs`, `runLog`, `pending`, `answer`, `decline`, `settings`, `testModel`,
//! `checkServer`), the run records they read (kept in memory, persisted in
//! `chrome.storage.session` with a cap, so that a closed popup or a restarted worker still
//! shows a run's log), the push of each event to the open pages, and the waits for the
//! person's answers (visitor inputs, confirmations of runs without a tab).
//!
//! Invariants: runtime messages reach these operations only from the extension's own pages
//! (classified as in `mod.rs`); a key is never returned, only its mask; events are pushed and
//! stored as the run emits them (they carry no key).

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::{Object, Promise, Reflect};
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, spawn_local, JsFuture};

use super::convert::{self, describe};
use super::io::{
    deferred, now_ms, race_stop, random_id, sleep, start_fetch, storage_get, storage_remove,
    storage_set,
};
use crate::core::mcp::source::{run_tools as mcp_run_tools, McpServerConfig};
use crate::core::panel::{
    connection_check, connection_report, context7_server, mark_interrupted, mask_key,
    model_presets, prompt_of, remember_run, Answer, PendingItem, RunSummary, MAX_STORED_EVENTS,
};
use crate::core::provider::{redact, ModelConfig, Provider};
use crate::core::run::{Input, PendingInput};
use crate::core::sender::{classify, Sender};

#[wasm_bindgen(module = "/src/shell/ui.js")]
extern "C" {
    fn broadcast(message: JsValue);
    #[wasm_bindgen(js_name = storageAll, catch)]
    async fn storage_all(area: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = extensionOrigin)]
    fn extension_origin() -> String;
}

const AREA: &str = "session";
const LIST_KEY: &str = "webmcpHost.ui.runs";
const RUN_KEY: &str = "webmcpHost.ui.run.";
const STATES_KEY: &str = "webmcpHost.ui.serverStates";
const KEY_PREFIX: &str = "webmcpHost.key.";
/// How long the stored events of a running run may lag behind.
const SAVE_EVERY_MS: u32 = 250;
/// How long a tab-less confirmation waits for the person.
const CONFIRM_MS: u32 = 5 * 60 * 1000;
/// How long a connection check may take.
const CHECK_MS: u32 = 15_000;

/// What the worker keeps of a run for the person's side.
struct Kept {
    summary: RunSummary,
    events: Vec<Value>,
    /// When each event was emitted (ms since the epoch).
    times: Vec<f64>,
    /// Events past [`MAX_STORED_EVENTS`], counted only.
    dropped: usize,
    dirty: bool,
    saving: bool,
}

#[derive(Default)]
struct State {
    runs: HashMap<String, Kept>,
    /// The stored run list, once read (`None`: not read yet in this worker).
    list: Option<Vec<RunSummary>>,
    pending: Vec<PendingItem>,
    answers: Vec<Answer>,
    /// `{promise, resolve}` per waiting run (visitor inputs) or `runId/callId` (confirmation).
    wakers: HashMap<String, JsValue>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn with<T>(f: impl FnOnce(&mut State) -> T) -> T {
    STATE.with(|s| f(&mut s.borrow_mut()))
}

fn js_err(message: impl AsRef<str>) -> JsError {
    JsError::new(message.as_ref())
}

fn wake(key: &str) {
    if let Some(waker) = with(|s| s.wakers.remove(key)) {
        if let Ok(resolve) = Reflect::get(&waker, &"resolve".into()) {
            let _ = js_sys::Function::from(resolve).call0(&JsValue::UNDEFINED);
        }
    }
}

fn push(kind: &str, body: Value) {
    let mut message = json!({"webmcpHostUi": kind});
    if let (Value::Object(target), Value::Object(body)) = (&mut message, body) {
        target.extend(body);
    }
    broadcast(convert::from_json(&message));
}

/// A frame's tools changed: the open pages list the tab's tools again.
pub(crate) fn on_tools_changed(tab_id: i64, frame_id: i64) {
    push(
        "toolsChanged",
        json!({"tabId": tab_id, "frameId": frame_id}),
    );
}

// ---------------------------------------------------------------------------------------
// Hooks called by `agent.rs` as a run goes.

/// A run started (any run: from the popup or from `webmcpHost.run`).
pub(crate) fn on_start(run_id: &str, thread_id: &str, tab_id: Option<i64>, request: &Value) {
    let summary = RunSummary {
        run_id: run_id.to_owned(),
        thread_id: thread_id.to_owned(),
        tab_id,
        prompt: prompt_of(request),
        started_ms: now_ms(),
        state: "running".into(),
        outcome: None,
        event_count: 0,
    };
    with(|s| {
        s.runs.insert(
            run_id.to_owned(),
            Kept {
                summary: summary.clone(),
                events: Vec::new(),
                times: Vec::new(),
                dropped: 0,
                dirty: true,
                saving: false,
            },
        )
    });
    push("started", json!({"run": summary}));
    schedule_save(run_id);
}

/// An event of a run: kept, pushed to the open pages, stored soon.
pub(crate) fn on_event(run_id: &str, event: &Value) {
    let time = now_ms();
    let seq = with(|s| {
        let kept = s.runs.get_mut(run_id)?;
        let seq = kept.events.len() + kept.dropped;
        if kept.events.len() < MAX_STORED_EVENTS {
            kept.events.push(event.clone());
            kept.times.push(time);
        } else {
            kept.dropped += 1;
        }
        kept.summary.event_count = seq + 1;
        kept.dirty = true;
        Some(seq)
    });
    let Some(seq) = seq else { return };
    push(
        "event",
        json!({"runId": run_id, "seq": seq, "time": time, "event": event}),
    );
    schedule_save(run_id);
}

/// A run ended: its record is final, and what still waited for the person is dismissed.
pub(crate) fn on_finish(run_id: &str, outcome: &Value) {
    with(|s| {
        if let Some(kept) = s.runs.get_mut(run_id) {
            kept.summary.state = "finished".into();
            kept.summary.outcome = Some(outcome.clone());
            kept.dirty = true;
        }
        s.pending.retain(|p| p.run_id() != run_id);
        s.answers.retain(|a| a.run_id != run_id);
    });
    let keys: Vec<String> = with(|s| {
        s.wakers
            .keys()
            .filter(|k| *k == run_id || k.starts_with(&format!("{run_id}/")))
            .cloned()
            .collect()
    });
    for key in keys {
        wake(&key);
    }
    push("finished", json!({"runId": run_id, "outcome": outcome}));
    push("pending", json!({}));
    schedule_save(run_id);
}

/// The visitor inputs a run waits for: listed for the person; resolves to the answers given
/// (as the run's inputs) once there is at least one, or to none when `stop` settles first.
pub(crate) async fn wait_for_inputs(
    run_id: &str,
    waiting: &[PendingInput],
    stop: Promise,
) -> Vec<Input> {
    let changed = with(|s| {
        let before = s.pending.len();
        s.pending.retain(|p| {
            !matches!(p, PendingItem::Input { run_id: r, call_id, .. }
                if r == run_id && !waiting.iter().any(|w| &w.call_id == call_id))
        });
        let mut changed = before != s.pending.len();
        for input in waiting {
            if !s
                .pending
                .iter()
                .any(|p| p.run_id() == run_id && p.call_id() == input.call_id)
            {
                s.pending.push(PendingItem::Input {
                    run_id: run_id.to_owned(),
                    call_id: input.call_id.clone(),
                    name: input.name.clone(),
                    args: input.args.clone(),
                });
                changed = true;
            }
        }
        changed
    });
    if changed {
        push("pending", json!({}));
    }
    if !with(|s| s.answers.iter().any(|a| a.run_id == run_id)) {
        let waker = deferred();
        let promise = Reflect::get(&waker, &"promise".into())
            .map(Promise::from)
            .unwrap_or_else(|_| Promise::resolve(&JsValue::UNDEFINED));
        with(|s| s.wakers.insert(run_id.to_owned(), waker));
        let _ = race_stop(promise, stop).await;
        with(|s| s.wakers.remove(run_id));
    }
    with(|s| {
        let (mine, rest): (Vec<Answer>, Vec<Answer>) = std::mem::take(&mut s.answers)
            .into_iter()
            .partition(|a| a.run_id == run_id);
        s.answers = rest;
        mine.into_iter()
            .filter(|a| waiting.iter().any(|w| w.call_id == a.call_id))
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
    let key = format!("{run_id}/{call_id}");
    let waker = deferred();
    let promise = Reflect::get(&waker, &"promise".into())
        .map(Promise::from)
        .unwrap_or_else(|_| Promise::resolve(&JsValue::UNDEFINED));
    with(|s| {
        s.pending.push(PendingItem::Confirmation {
            run_id: run_id.to_owned(),
            call_id: call_id.to_owned(),
            name: tool.to_owned(),
            server: server.to_owned(),
            args: args.clone(),
        });
        s.wakers.insert(key.clone(), waker);
    });
    push("pending", json!({}));
    let _ = super::timer::within(promise, CONFIRM_MS).await;
    with(|s| {
        s.wakers.remove(&key);
        s.pending
            .retain(|p| !(p.run_id() == run_id && p.call_id() == call_id));
        let at = s
            .answers
            .iter()
            .position(|a| a.run_id == run_id && a.call_id == call_id);
        at.map(|at| s.answers.remove(at).verdict.is_ok())
            .unwrap_or(false)
    })
}

// ---------------------------------------------------------------------------------------
// Persistence.

fn schedule_save(run_id: &str) {
    let start = with(|s| match s.runs.get_mut(run_id) {
        Some(kept) if !kept.saving => {
            kept.saving = true;
            true
        }
        _ => false,
    });
    if !start {
        return;
    }
    let run_id = run_id.to_owned();
    spawn_local(async move {
        loop {
            let _ = JsFuture::from(sleep(SAVE_EVERY_MS)).await;
            let snapshot = with(|s| {
                let kept = s.runs.get_mut(&run_id)?;
                kept.dirty = false;
                Some((
                    kept.summary.clone(),
                    json!({"events": kept.events, "times": kept.times, "dropped": kept.dropped}),
                ))
            });
            let Some((summary, data)) = snapshot else {
                return;
            };
            save(summary, data).await;
            let again = with(|s| match s.runs.get_mut(&run_id) {
                Some(kept) if kept.dirty => true,
                Some(kept) => {
                    kept.saving = false;
                    false
                }
                None => false,
            });
            if !again {
                return;
            }
        }
    });
}

async fn save(summary: RunSummary, data: Value) {
    let run_id = summary.run_id.clone();
    let mut list = run_list().await;
    let dropped = remember_run(&mut list, summary);
    with(|s| s.list = Some(list.clone()));
    let list = serde_json::to_value(&list).unwrap_or(Value::Null);
    let results = [
        storage_set(
            AREA,
            &format!("{RUN_KEY}{run_id}"),
            convert::from_json(&data),
        )
        .await,
        storage_set(AREA, LIST_KEY, convert::from_json(&list)).await,
    ];
    for result in results {
        if let Err(error) = result {
            super::chrome::warn(&format!(
                "webmcp-host: the record of run {run_id} could not be stored: {}",
                describe(&error)
            ));
        }
    }
    for old in dropped {
        let _ = storage_remove(AREA, &format!("{RUN_KEY}{old}")).await;
        with(|s| s.runs.remove(&old));
    }
}

/// The run list: the stored one (read once per worker), with the runs this worker holds.
async fn run_list() -> Vec<RunSummary> {
    if let Some(list) = with(|s| s.list.clone()) {
        return list;
    }
    let stored = storage_get(AREA, LIST_KEY).await.ok();
    let mut list: Vec<RunSummary> = stored
        .and_then(|v| convert::to_json(&v).ok())
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    with(|s| mark_interrupted(&mut list, |id| s.runs.contains_key(id)));
    let mut ended = false;
    for run in list
        .iter_mut()
        .filter(|r| r.state == "interrupted" && r.outcome.is_none())
    {
        ended |= end_interrupted_run(run).await;
    }
    if ended {
        let value = serde_json::to_value(&list).unwrap_or(Value::Null);
        let _ = storage_set(AREA, LIST_KEY, convert::from_json(&value)).await;
    }
    with(|s| {
        // A concurrent read may have filled it already: keep the first.
        s.list.get_or_insert(list).clone()
    })
}

/// `webmcpHost.recover()`, run by the worker's loader at every start: the runs a previous
/// worker left running end now, each with a `RUN_ERROR` in its stored log.
#[wasm_bindgen]
pub async fn recover() -> usize {
    run_list()
        .await
        .iter()
        .filter(|r| r.state == "interrupted")
        .count()
}

/// Ends the stored log of a run a worker restart cut (see `core::restart`); whether it did.
async fn end_interrupted_run(run: &mut RunSummary) -> bool {
    let key = format!("{RUN_KEY}{}", run.run_id);
    let mut stored = storage_get(AREA, &key)
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    let list = |value: &Value, key: &str| {
        value
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut events = list(&stored, "events");
    let mut times = list(&stored, "times");
    let intents = super::restart::stored(&run.run_id).await;
    let before = events.len();
    let Some(outcome) =
        crate::core::restart::end_interrupted(&run.thread_id, &run.run_id, &mut events, &intents)
    else {
        run.state = "finished".into();
        return false;
    };
    times.resize(events.len(), json!(now_ms()));
    let added = events.len() - before;
    stored["events"] = Value::Array(events);
    stored["times"] = Value::Array(times);
    let _ = storage_set(AREA, &key, convert::from_json(&stored)).await;
    super::restart::forget(&run.run_id).await;
    run.outcome = Some(outcome);
    run.event_count += added;
    true
}

// ---------------------------------------------------------------------------------------
// Operations.

/// `webmcpHost.startRun({tabId?, prompt | messages, …as run})` → `{runId, threadId}` at once;
/// the run goes on in the worker (watch it with `runLog`, the pushed events, or `events`).
#[wasm_bindgen(js_name = startRun)]
pub async fn start_run(request: JsValue) -> Result<JsValue, JsError> {
    let mut value = convert::to_json(&request).map_err(js_err)?;
    let map = value
        .as_object_mut()
        .ok_or_else(|| js_err("startRun: the request must be an object"))?;
    // Checked here so that a bad request is an error of this call, not a run that fails.
    crate::core::api::RunRequest::parse(&Value::Object(map.clone())).map_err(|e| js_err(e.0))?;
    crate::core::panel::visitor_tools(&Value::Object(map.clone())).map_err(js_err)?;
    super::agent::load_registry()
        .await
        .map_err(js_err)?
        .resolve(map.get("model").and_then(Value::as_str))
        .map_err(|e| js_err(format!("startRun: {e}")))?;
    let run_id = map
        .entry("runId")
        .or_insert_with(|| json!(format!("run_{}", random_id())))
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let thread_id = map
        .entry("threadId")
        .or_insert_with(|| json!(format!("thread_{}", random_id())))
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let request = convert::from_json(&value);
    let started = run_id.clone();
    spawn_local(async move {
        if let Err(error) = super::agent::run(request).await {
            let message = describe(&JsValue::from(error));
            super::chrome::warn(&format!(
                "webmcp-host: run {started} did not start: {message}"
            ));
            push(
                "finished",
                json!({"runId": started, "outcome": {"type": "failed", "message": message}}),
            );
        }
    });
    Ok(convert::from_json(
        &json!({"runId": run_id, "threadId": thread_id}),
    ))
}

/// `webmcpHost.runs({tabId?})` → the kept runs, newest first (`RunSummary`s).
#[wasm_bindgen]
pub async fn runs(request: JsValue) -> Result<JsValue, JsError> {
    let tab_id = convert::to_json(&request)
        .ok()
        .and_then(|v| v.get("tabId").and_then(Value::as_i64));
    let mut list = run_list().await;
    // The runs of this worker are fresher than what is stored.
    with(|s| {
        for kept in s.runs.values() {
            list.retain(|r| r.run_id != kept.summary.run_id);
            list.push(kept.summary.clone());
        }
    });
    list.sort_by(|a, b| b.started_ms.total_cmp(&a.started_ms));
    list.retain(|r| tab_id.is_none() || r.tab_id == tab_id);
    Ok(convert::from_json(
        &serde_json::to_value(&list).unwrap_or(Value::Null),
    ))
}

/// `webmcpHost.runLog({runId, since?})` → `{run, events, times, since, total}`: the run's
/// events from index `since` (default 0), from this worker or, after a restart, from storage.
#[wasm_bindgen(js_name = runLog)]
pub async fn run_log(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let run_id = request
        .get("runId")
        .and_then(Value::as_str)
        .ok_or_else(|| js_err("runLog: `runId` is required"))?
        .to_owned();
    let since = request.get("since").and_then(Value::as_u64).unwrap_or(0) as usize;
    let live = with(|s| {
        s.runs.get(&run_id).map(|k| {
            (
                k.summary.clone(),
                k.events.get(since..).unwrap_or_default().to_vec(),
                k.times.get(since..).unwrap_or_default().to_vec(),
                k.events.len() + k.dropped,
            )
        })
    });
    let (summary, events, times, total) = match live {
        Some(found) => found,
        None => {
            let summary = run_list()
                .await
                .into_iter()
                .find(|r| r.run_id == run_id)
                .ok_or_else(|| js_err(format!("runLog: no run `{run_id}` is kept")))?;
            let stored = storage_get(AREA, &format!("{RUN_KEY}{run_id}"))
                .await
                .ok()
                .and_then(|v| convert::to_json(&v).ok())
                .unwrap_or(Value::Null);
            let list = |key: &str| {
                stored
                    .get(key)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let (events, times) = (list("events"), list("times"));
            let total = events.len();
            (
                summary,
                events.get(since..).unwrap_or_default().to_vec(),
                times
                    .get(since..)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(Value::as_f64)
                    .collect(),
                total,
            )
        }
    };
    Ok(convert::from_json(&json!({
        "run": summary, "events": events, "times": times, "since": since, "total": total,
    })))
}

/// `webmcpHost.pending()` → the items waiting for the person: `{kind: "input", runId, callId,
/// name, args}` (a visitor tool) or `{kind: "confirmation", runId, callId, name, server, args}`.
#[wasm_bindgen]
pub fn pending() -> JsValue {
    let items = with(|s| s.pending.clone());
    convert::from_json(&serde_json::to_value(items).unwrap_or(Value::Null))
}

/// `webmcpHost.answer({runId, callId, value})`: answers a visitor input (the value is its
/// result; a non-string as JSON) or allows a confirmation. Resolves to whether it was waiting.
#[wasm_bindgen]
pub fn answer(request: JsValue) -> Result<bool, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    deliver(Answer::parse_answer(&request).map_err(js_err)?)
}

/// `webmcpHost.decline({runId, callId, reason?})`: declines a visitor input (the model gets
/// the reason, default "The visitor declined.") or a confirmation.
#[wasm_bindgen]
pub fn decline(request: JsValue) -> Result<bool, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    deliver(Answer::parse_decline(&request).map_err(js_err)?)
}

fn deliver(answer: Answer) -> Result<bool, JsError> {
    let item = with(|s| {
        let at = s
            .pending
            .iter()
            .position(|p| p.run_id() == answer.run_id && p.call_id() == answer.call_id)?;
        let item = s.pending.remove(at);
        s.answers.push(answer.clone());
        Some(item)
    });
    let Some(item) = item else {
        return Ok(false);
    };
    match item {
        PendingItem::Input { .. } => wake(&answer.run_id),
        PendingItem::Confirmation { .. } => wake(&format!("{}/{}", answer.run_id, answer.call_id)),
    }
    push("pending", json!({}));
    Ok(true)
}

/// `webmcpHost.settings()` → `{models, default, servers, keys: [{ref, masked}], serverStates,
/// presets, context7, context7WithKey, extensionOrigin}`. Keys appear only masked.
#[wasm_bindgen]
pub async fn settings() -> Result<JsValue, JsError> {
    let registry = super::agent::load_registry().await.map_err(js_err)?;
    let servers = super::agent::load_servers().await.map_err(js_err)?;
    let stored = storage_all(AREA)
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .unwrap_or(Value::Null);
    let mut keys: Vec<Value> = stored
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| {
            let reference = name.strip_prefix(KEY_PREFIX)?;
            let key = value.as_str()?;
            Some(json!({"ref": reference, "masked": mask_key(key)}))
        })
        .collect();
    keys.sort_by(|a, b| a["ref"].as_str().cmp(&b["ref"].as_str()));
    let states = stored.get(STATES_KEY).cloned().unwrap_or_else(|| json!({}));
    Ok(convert::from_json(&json!({
        "models": registry.models,
        "default": registry.default,
        "servers": servers,
        "keys": keys,
        "serverStates": states,
        "presets": model_presets(),
        "context7": context7_server(false),
        "context7WithKey": context7_server(true),
        "extensionOrigin": extension_origin(),
    })))
}

/// `webmcpHost.testModel({name} | {model})` → `{ok, message, models?}`: asks the model's
/// endpoint for its model list with the model's key (or Chrome for its built-in model).
#[wasm_bindgen(js_name = testModel)]
pub async fn test_model(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let model: ModelConfig = match (request.get("model"), request.get("name")) {
        (Some(model), _) => serde_json::from_value(model.clone())
            .map_err(|e| js_err(format!("testModel: `model`: {e}")))?,
        (None, Some(Value::String(name))) => super::agent::load_registry()
            .await
            .map_err(js_err)?
            .resolve(Some(name))
            .map_err(|e| js_err(format!("testModel: {e}")))?
            .clone(),
        _ => return Err(js_err("testModel: give `name` or `model`")),
    };
    let report = match model.provider {
        Provider::Replay => json!({"ok": true, "message": "A replay model needs no connection."}),
        Provider::Chrome => {
            let availability = super::io::chrome_model_availability()
                .await
                .as_string()
                .unwrap_or_default();
            json!({
                "ok": availability == "available",
                "message": format!("Chrome's built-in model: LanguageModel.availability() is `{availability}`."),
            })
        }
        _ => {
            let key = match &model.key_ref {
                Some(reference) => match super::agent::read_key(reference).await {
                    Ok(key) => key,
                    Err(message) => {
                        return Ok(convert::from_json(
                            &json!({"ok": false, "message": message}),
                        ))
                    }
                },
                None => None,
            };
            let http = connection_check(&model, key.as_deref()).expect("an HTTP provider");
            let headers = convert::headers(&http.headers);
            let fetching = future_to_promise(async move {
                let handle = start_fetch(&http.url, &http.method, headers.into(), "").await?;
                let status = Reflect::get(&handle, &"status".into())?;
                let text = super::io::call_method(&handle, "text")?;
                let text = JsFuture::from(Promise::from(text)).await?;
                let answer = Object::new();
                Reflect::set(&answer, &"status".into(), &status)?;
                Reflect::set(&answer, &"text".into(), &text)?;
                Ok(answer.into())
            });
            let origin = extension_origin();
            let report = match super::timer::within(fetching, CHECK_MS).await {
                Ok(Some(answer)) => {
                    let status = Reflect::get(&answer, &"status".into())
                        .ok()
                        .and_then(|s| s.as_f64())
                        .unwrap_or(0.0) as u16;
                    let text = Reflect::get(&answer, &"text".into())
                        .ok()
                        .and_then(|t| t.as_string())
                        .unwrap_or_default();
                    connection_report(&model, status, &text, None, &origin)
                }
                Ok(None) => {
                    connection_report(&model, 0, "", Some("no answer within 15 s"), &origin)
                }
                Err(error) => connection_report(&model, 0, "", Some(&error), &origin),
            };
            let mut value = serde_json::to_value(&report).unwrap_or(Value::Null);
            value["message"] = json!(redact(&report.message, key.as_deref()));
            value
        }
    };
    Ok(convert::from_json(&report))
}

/// `webmcpHost.checkServer({name} | {server})` → `{ok, tools, names, error?, checkedMs}`:
/// connects to the MCP server, lists its tools (as the run will name them) and closes. The
/// state is kept per server for the popup.
#[wasm_bindgen(js_name = checkServer)]
pub async fn check_server(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let server: McpServerConfig = match (request.get("server"), request.get("name")) {
        (Some(server), _) => serde_json::from_value(server.clone())
            .map_err(|e| js_err(format!("checkServer: `server`: {e}")))?,
        (None, Some(Value::String(name))) => super::agent::load_servers()
            .await
            .map_err(js_err)?
            .into_iter()
            .find(|s| &s.name == name)
            .ok_or_else(|| js_err(format!("checkServer: no server `{name}`")))?,
        _ => return Err(js_err("checkServer: give `name` or `server`")),
    };
    server.validate().map_err(js_err)?;
    let key = match &server.key_ref {
        Some(reference) => super::agent::read_key(reference).await.map_err(js_err),
        None => Ok(None),
    };
    let state = match key {
        Err(error) => {
            json!({"ok": false, "tools": 0, "names": [], "error": describe(&JsValue::from(error))})
        }
        Ok(key) => {
            let config = server.clone();
            let opened: std::rc::Rc<RefCell<Option<Value>>> = Default::default();
            let sink = opened.clone();
            let opening = future_to_promise(async move {
                match super::mcp::open(config.clone(), key, config.timeout_ms.unwrap_or(15_000))
                    .await
                {
                    Ok((client, listed)) => {
                        super::mcp::close(&client).await;
                        let (tools, map) = mcp_run_tools(&config, &listed);
                        let names: Vec<Value> = tools
                            .iter()
                            .zip(&map)
                            .take(200)
                            .map(|(tool, entry)| {
                                let description: String = tool.spec.description.chars().take(300).collect();
                                json!({"name": tool.spec.name, "description": description, "confirm": entry.needs_confirmation})
                            })
                            .collect();
                        *sink.borrow_mut() =
                            Some(json!({"ok": true, "tools": tools.len(), "names": names}));
                        Ok(JsValue::TRUE)
                    }
                    Err(message) => Err(JsValue::from_str(&message)),
                }
            });
            match super::timer::within(opening, server.timeout_ms.unwrap_or(CHECK_MS)).await {
                Ok(Some(_)) => opened.borrow_mut().take().unwrap_or(Value::Null),
                Ok(None) => {
                    json!({"ok": false, "tools": 0, "names": [], "error": "no answer in time"})
                }
                Err(error) => json!({"ok": false, "tools": 0, "names": [], "error": error}),
            }
        }
    };
    let mut state = state;
    state["checkedMs"] = json!(now_ms());
    let mut states = storage_get(AREA, STATES_KEY)
        .await
        .ok()
        .and_then(|v| convert::to_json(&v).ok())
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}));
    states[&server.name] = state.clone();
    let _ = storage_set(AREA, STATES_KEY, convert::from_json(&states)).await;
    Ok(convert::from_json(&state))
}

/// The worker's `chrome.runtime.onMessage` handler: the operations of this module for the
/// extension's own pages; every other message goes to [`super::handle_message`].
#[wasm_bindgen(js_name = handleUiMessage)]
pub async fn handle_ui_message(message: JsValue, sender: JsValue) -> JsValue {
    let op = Reflect::get(&message, &"op".into())
        .ok()
        .and_then(|o| o.as_string())
        .unwrap_or_default();
    const OPS: [&str; 19] = [
        "startRun",
        "runs",
        "runLog",
        "pending",
        "answer",
        "decline",
        "settings",
        "testModel",
        "checkServer",
        "configure",
        "stop",
        "events",
        "listRuns",
        "presets",
        "signIn",
        "signOut",
        "authState",
        "expose",
        "exposures",
    ];
    if !OPS.contains(&op.as_str()) {
        return super::handle_message(message, sender).await;
    }
    let Some(own_id) = super::chrome::runtime_id() else {
        return convert::from_json(&json!({"ok": false, "error": "no runtime"}));
    };
    if let refused @ (Sender::ContentScript { .. } | Sender::Unknown { .. }) =
        classify(&own_id, &convert::sender_info(&sender))
    {
        let reason = match refused {
            Sender::Unknown { reason } => reason,
            _ => format!("`{op}` may not be asked by a content script"),
        };
        super::chrome::warn(&format!("webmcp-host: refused: {reason}"));
        return convert::from_json(&json!({"ok": false, "error": format!("refused: {reason}")}));
    }
    let result: Result<JsValue, JsError> = match op.as_str() {
        "startRun" => start_run(message).await,
        "runs" | "listRuns" => runs(message).await,
        "runLog" => run_log(message).await,
        "pending" => Ok(pending()),
        "answer" => answer(message).map(JsValue::from),
        "decline" => decline(message).map(JsValue::from),
        "settings" | "presets" => settings().await,
        "testModel" => test_model(message).await,
        "checkServer" => check_server(message).await,
        "configure" => super::agent::configure(message).await,
        "stop" => super::agent::stop(message).map(JsValue::from),
        "signIn" => super::auth::sign_in(message).await,
        "signOut" => super::auth::sign_out(message).await,
        "authState" => super::auth::auth_state().await,
        "expose" => super::expose::expose(message).await,
        "exposures" => Ok(super::expose::exposures().await),
        _ => super::agent::events(message),
    };
    let answer = match result {
        Ok(value) => json!({"ok": true, "value": convert::to_json(&value).unwrap_or(Value::Null)}),
        Err(error) => json!({"ok": false, "error": describe(&JsValue::from(error))}),
    };
    convert::from_json(&answer)
}
