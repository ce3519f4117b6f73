//! Runs in the worker: `webmcpHost.run`, `events`, `stop`, `configure`.
//!
//! The core's [`Run`] decides; this module performs what it asks: model calls over fetch
//! (streaming body, abort) or from a replay transcript or Chrome's built-in model, page tool
//! calls through the bridge, local tools with the worker's clock. Keys are read from
//! `chrome.storage.session` at request time and go only into the request of their model.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

use js_sys::{Array, Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::{self, describe};
use crate::core::agui::Message;
use crate::core::api::{page_run_tools, tool_outcome, CallToolRequest, PageBinding, RunRequest};
use crate::core::local::{current_time_result, local_tools, CURRENT_TIME};
use crate::core::mcp::source::{run_tools as mcp_run_tools, McpServerConfig};
use crate::core::mcp::tools::{check_structured, McpTool};
use crate::core::mcp::CallResult;
use crate::core::provider::prompt::{text_conversation, Speaker};
use crate::core::provider::replay::{parse_transcript, replay_events};
use crate::core::provider::{
    build_request, classify_status, decoder, redact, retry_delay, Decoder, ModelConfig, ModelEvent,
    ModelRegistry, Provider, ProviderError,
};
use crate::core::run::{
    Input, ModelRequest, Output, Run, RunInput, RunOutcome, ToolInvocation, ToolKind,
};

/// Where the registry and the keys live.
const REGISTRY_KEY: &str = "webmcpHost.models";
const SERVERS_KEY: &str = "webmcpHost.servers";
/// The longest an MCP server may take to connect and list its tools at a run's start.
const MCP_SOURCE_MS: u32 = 20_000;
const KEY_PREFIX: &str = "webmcpHost.key.";
/// The longest wait for a model's first byte (status and headers).
const FIRST_BYTE_MS: u32 = 60_000;
/// The longest a model's stream may stay silent once it started.
const STREAM_IDLE_MS: u32 = 120_000;
/// The longest a page tool may run inside a run.
const PAGE_TOOL_MS: u32 = 30_000;

use super::io::{
    abort_fetch, call_method, chrome_model_availability, chrome_model_prompt, deferred, now_ms,
    race_stop, random_id, sleep, start_fetch, storage_get, storage_remove, storage_set,
    utc_offset_minutes,
};

/// What the worker keeps of a run.
struct Record {
    events: Vec<Value>,
    /// The model outputs of the run, as replay transcript lines.
    transcript: Vec<String>,
    recorder: Option<crate::core::provider::replay::Recorder>,
    /// `{promise, resolve}`: resolved by `stop`.
    stop: JsValue,
    stopped: Option<String>,
    /// The fetch in flight, to abort on stop.
    fetch: Option<JsValue>,
    finished: bool,
}

thread_local! {
    static RUNS: RefCell<HashMap<String, Record>> = RefCell::new(HashMap::new());
}

fn with_record<T>(run_id: &str, f: impl FnOnce(&mut Record) -> T) -> Option<T> {
    RUNS.with(|runs| runs.borrow_mut().get_mut(run_id).map(f))
}

fn stop_promise(run_id: &str) -> Promise {
    with_record(run_id, |r| Reflect::get(&r.stop, &"promise".into()).ok())
        .flatten()
        .map(Promise::from)
        .unwrap_or_else(|| Promise::new(&mut |_, _| {}))
}

fn stopped(run_id: &str) -> Option<String> {
    with_record(run_id, |r| r.stopped.clone()).flatten()
}

fn js_err(message: impl AsRef<str>) -> JsError {
    JsError::new(message.as_ref())
}

/// `webmcpHost.configure({models?, default?, keys?})`: stores the registry (local storage)
/// and keys (session storage only). Resolves to the registry without keys.
pub async fn configure(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let mut registry = load_registry().await.map_err(js_err)?;
    if let Some(models) = request.get("models") {
        registry.models = serde_json::from_value(models.clone())
            .map_err(|e| js_err(format!("configure: `models`: {e}")))?;
    }
    if let Some(default) = request.get("default") {
        registry.default = default.as_str().map(str::to_owned);
    }
    if let Some(sites) = request.get("sites") {
        let sites: Vec<crate::core::site::SitePolicy> = serde_json::from_value(sites.clone())
            .map_err(|e| js_err(format!("configure: `sites`: {e}")))?;
        crate::core::site::validate(&sites).map_err(|e| js_err(format!("configure: {e}")))?;
        let value = serde_json::to_value(&sites).expect("site policies serialize");
        storage_set("local", super::SITES_KEY, convert::from_json(&value))
            .await
            .map_err(|e| js_err(describe(&e)))?;
    }
    if let Some(servers) = request.get("servers") {
        let servers: Vec<McpServerConfig> = serde_json::from_value(servers.clone())
            .map_err(|e| js_err(format!("configure: `servers`: {e}")))?;
        for server in &servers {
            server
                .validate()
                .map_err(|e| js_err(format!("configure: {e}")))?;
        }
        let value = serde_json::to_value(&servers).expect("servers serialize");
        storage_set("local", SERVERS_KEY, convert::from_json(&value))
            .await
            .map_err(|e| js_err(describe(&e)))?;
    }
    registry
        .validate()
        .map_err(|e| js_err(format!("configure: {e}")))?;
    let stored = serde_json::to_value(&registry).expect("a registry serializes");
    storage_set("local", REGISTRY_KEY, convert::from_json(&stored))
        .await
        .map_err(|e| js_err(describe(&e)))?;
    if let Some(Value::Object(keys)) = request.get("keys") {
        for (name, key) in keys {
            let storage_key = format!("{KEY_PREFIX}{name}");
            match key.as_str() {
                Some(key) if !key.is_empty() => {
                    storage_set("session", &storage_key, JsValue::from_str(key)).await
                }
                _ => storage_remove("session", &storage_key).await,
            }
            .map_err(|e| js_err(format!("configure: key `{name}`: {}", describe(&e))))?;
        }
    }
    Ok(convert::from_json(&stored))
}

pub(crate) async fn load_servers() -> Result<Vec<McpServerConfig>, String> {
    let stored = storage_get("local", SERVERS_KEY)
        .await
        .map_err(|e| describe(&e))?;
    if stored.is_null() || stored.is_undefined() {
        return Ok(Vec::new());
    }
    serde_json::from_value(convert::to_json(&stored)?)
        .map_err(|e| format!("the stored MCP servers are unreadable: {e}"))
}

/// An MCP tool of a run: its server's client, its name there, and whether to confirm.
#[derive(Clone)]
struct McpBinding {
    client: super::mcp::Shared,
    server: String,
    tool: McpTool,
    needs_confirmation: bool,
}

pub(crate) async fn load_registry() -> Result<ModelRegistry, String> {
    let stored = storage_get("local", REGISTRY_KEY)
        .await
        .map_err(|e| describe(&e))?;
    if stored.is_null() || stored.is_undefined() {
        return Ok(ModelRegistry::default());
    }
    let value = convert::to_json(&stored)?;
    serde_json::from_value(value)
        .map_err(|e| format!("the stored model registry is unreadable: {e}"))
}

/// `webmcpHost.events({runId})`: the events of a run so far.
pub fn events(request: JsValue) -> Result<JsValue, JsError> {
    let run_id = run_id_of(&request)?;
    let events = with_record(&run_id, |r| r.events.clone())
        .ok_or_else(|| js_err(format!("events: no run `{run_id}` in this worker")))?;
    Ok(convert::from_json(&Value::Array(events)))
}

/// `webmcpHost.stop({runId, reason?})`: ends the run: the model stream is aborted, pending
/// tool calls are cancelled. Resolves to whether the run was still going.
pub fn stop(request: JsValue) -> Result<bool, JsError> {
    let run_id = run_id_of(&request)?;
    let reason = convert::to_json(&request)
        .ok()
        .and_then(|v| v.get("reason").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "stopped by the person".into());
    with_record(&run_id, |r| {
        if r.finished || r.stopped.is_some() {
            return false;
        }
        r.stopped = Some(reason);
        if let Some(handle) = r.fetch.take() {
            abort_fetch(&handle);
        }
        if let Ok(resolve) = Reflect::get(&r.stop, &"resolve".into()) {
            let _ = js_sys::Function::from(resolve).call0(&JsValue::UNDEFINED);
        }
        true
    })
    .ok_or_else(|| js_err(format!("stop: no run `{run_id}` in this worker")))
}

fn run_id_of(request: &JsValue) -> Result<String, JsError> {
    let value = convert::to_json(request).map_err(js_err)?;
    value
        .get("runId")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| js_err("`runId` is required"))
}

/// `webmcpHost.run({...})` → `{runId, threadId, outcome, events, messages, transcript}`.
pub async fn run(request: JsValue) -> Result<JsValue, JsError> {
    let raw = convert::to_json(&request).map_err(js_err)?;
    let request = RunRequest::parse(&raw).map_err(|e| js_err(e.0))?;
    // Visitor tools (answered by the person in the popup or side panel).
    let visitor_tools = crate::core::ops::request::visitor_tools(&raw).map_err(js_err)?;
    let registry = load_registry().await.map_err(js_err)?;
    let model = registry
        .resolve(request.model.as_deref())
        .map_err(|e| js_err(format!("run: {e}")))?
        .clone();
    let run_id = request
        .run_id
        .clone()
        .unwrap_or_else(|| format!("run_{}", random_id()));
    let thread_id = request
        .thread_id
        .clone()
        .unwrap_or_else(|| format!("thread_{}", random_id()));
    if with_record(&run_id, |_| ()).is_some() {
        return Err(js_err(format!("run: a run `{run_id}` exists already")));
    }
    RUNS.with(|runs| {
        runs.borrow_mut().insert(
            run_id.clone(),
            Record {
                events: Vec::new(),
                transcript: Vec::new(),
                recorder: None,
                stop: deferred(),
                stopped: None,
                fetch: None,
                finished: false,
            },
        )
    });
    super::ui::on_start(&run_id, &thread_id, request.tab_id, &raw);

    // Tool sources, read at the start of the run.
    let mut tools = local_tools();
    let mut source_errors = Vec::new();
    let mut page: Vec<PageBinding> = Vec::new();
    if let Some(tab_id) = request.tab_id {
        match super::tab_tools(tab_id).await {
            Ok(found) => {
                let (run_tools, bindings, errors) = page_run_tools(&found);
                tools.extend(run_tools);
                source_errors.extend(errors);
                page = bindings;
            }
            Err(message) => source_errors.push(crate::core::run::SourceError {
                source: format!("page (tab {tab_id})"),
                message,
            }),
        }
    }
    // MCP servers: connect and list, each within its time; a failing one is reported.
    let mut mcp: Vec<(String, McpBinding)> = Vec::new();
    let mut clients: Vec<super::mcp::Shared> = Vec::new();
    match load_servers().await {
        Ok(servers) => {
            for server in servers.into_iter().filter(|s| s.enabled) {
                let source = format!("MCP server {}", server.name);
                let key = match &server.key_ref {
                    Some(reference) => match read_key(reference).await {
                        Ok(key) => key,
                        Err(message) => {
                            source_errors.push(crate::core::run::SourceError { source, message });
                            continue;
                        }
                    },
                    None => None,
                };
                let name = server.name.clone();
                let within = server.timeout_ms.unwrap_or(MCP_SOURCE_MS);
                match super::mcp::open(server.clone(), key, within).await {
                    Ok((client, listed)) => {
                        let (run_tools, map) = mcp_run_tools(&server, &listed);
                        tools.extend(run_tools);
                        let by_name: HashMap<&str, &McpTool> =
                            listed.iter().map(|t| (t.name.as_str(), t)).collect();
                        for entry in map {
                            let tool = (*by_name
                                .get(entry.name.as_str())
                                .expect("mapped from the list"))
                            .clone();
                            mcp.push((
                                entry.run_name,
                                McpBinding {
                                    client: client.clone(),
                                    server: name.clone(),
                                    tool,
                                    needs_confirmation: entry.needs_confirmation,
                                },
                            ));
                        }
                        clients.push(client);
                    }
                    Err(message) => {
                        source_errors.push(crate::core::run::SourceError { source, message })
                    }
                }
            }
        }
        Err(message) => source_errors.push(crate::core::run::SourceError {
            source: "MCP servers".into(),
            message,
        }),
    }
    tools.extend(
        request
            .frontend_tools
            .iter()
            .cloned()
            .map(|spec| crate::core::run::RunTool {
                spec,
                kind: ToolKind::Frontend,
                data_source: None,
            }),
    );
    tools.extend(
        visitor_tools
            .into_iter()
            .map(|spec| crate::core::run::RunTool {
                spec,
                kind: ToolKind::Visitor,
                data_source: None,
            }),
    );
    let mut messages = request.messages.clone();
    for (i, message) in messages.iter_mut().enumerate() {
        if let Message::User { id, .. } = message {
            if id.is_empty() {
                *id = format!("{run_id}-user_{}", i + 1);
            }
        }
    }
    let mut input = RunInput::new(thread_id.clone(), run_id.clone(), messages);
    input.tools = tools;
    input.source_errors = source_errors;
    input.max_steps = request.max_steps;
    input.context = request.context.clone();

    let mut run = Run::start(input);
    let outcome = drive(&mut run, &run_id, &model, request.tab_id, &page, &mcp).await;
    super::restart::forget(&run_id).await;
    for client in &clients {
        super::mcp::close(client).await;
    }
    let (events, transcript) = with_record(&run_id, |r| {
        r.finished = true;
        r.fetch = None;
        (r.events.clone(), r.transcript.join("\n"))
    })
    .unwrap_or_default();
    super::ui::on_finish(
        &run_id,
        &serde_json::to_value(&outcome).unwrap_or(Value::Null),
    );
    let result = json!({
        "runId": run_id,
        "threadId": thread_id,
        "outcome": outcome,
        "events": events,
        "messages": run.messages(),
        // The model's outputs as a replay transcript: a `replay` model with it repeats this run.
        "transcript": transcript,
    });
    Ok(convert::from_json(&result))
}

/// A model call in progress.
enum Stream {
    Http {
        handle: JsValue,
        decoder: Box<dyn Decoder>,
        fed: bool,
    },
    Events(VecDeque<ModelEvent>),
}

async fn drive(
    run: &mut Run,
    run_id: &str,
    model: &ModelConfig,
    tab_id: Option<i64>,
    page: &[PageBinding],
    mcp: &[(String, McpBinding)],
) -> RunOutcome {
    let mut inputs: VecDeque<Input> = VecDeque::new();
    let mut model_call: Option<(ModelRequest, u32)> = None;
    let mut stream: Option<(Stream, ModelRequest, u32)> = None;
    let mut tools: Vec<(String, Promise)> = Vec::new();
    // Page calls of this run by call id, with their frame, so that they can be cancelled.
    let mut page_calls: HashMap<String, i64> = HashMap::new();
    // While the run works, the worker is kept from idling out (Chrome stops an idle worker
    // after 30 s, and a model may think longer than that between two chunks).
    let mut keep_alive = super::io::keep_alive();
    let key = match &model.key_ref {
        Some(reference) => read_key(reference).await,
        None => Ok(None),
    };
    loop {
        while let Some(output) = run.poll() {
            match output {
                Output::Event(event) => {
                    let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                    super::ui::on_event(run_id, &value);
                    with_record(run_id, |r| r.events.push(value));
                }
                Output::CallModel(request) => model_call = Some((request, 0)),
                Output::CallTool(invocation) => {
                    // A call that acts is recorded before it starts (see `core::restart`).
                    let acting = match &invocation.kind {
                        ToolKind::Page => page
                            .iter()
                            .find(|b| b.run_name == invocation.name)
                            .filter(|b| b.tool.annotations.consequential_hint)
                            .map(|b| format!("page {}", b.tool.origin)),
                        ToolKind::Mcp => mcp
                            .iter()
                            .find(|(name, _)| *name == invocation.name)
                            .filter(|(_, b)| b.tool.needs_confirmation(false))
                            .map(|(_, b)| format!("MCP server {}", b.server)),
                        _ => None,
                    };
                    if let Some(source) = acting {
                        super::restart::record(
                            run_id,
                            crate::core::restart::Intent {
                                call_id: invocation.call_id.clone(),
                                name: invocation.name.clone(),
                                source,
                            },
                        )
                        .await;
                    }
                    if let (ToolKind::Page, Some(binding)) = (
                        &invocation.kind,
                        page.iter().find(|b| b.run_name == invocation.name),
                    ) {
                        page_calls.insert(invocation.call_id.clone(), binding.tool.frame_id);
                    }
                    tools.push((
                        invocation.call_id.clone(),
                        start_tool(invocation, tab_id, page, mcp),
                    ))
                }
                // A page call still running is aborted in its frame (its executeTool signal).
                Output::CancelTool { call_id } => {
                    super::restart::done(run_id, &call_id).await;
                    if let (Some(frame_id), Some(tab_id)) = (page_calls.remove(&call_id), tab_id) {
                        super::cancel_in_frame(tab_id, frame_id, &call_id);
                    }
                }
                Output::RepairHook(request) => inputs.push_back(Input::HookAnswer {
                    call_id: request.call_id,
                    call: None,
                }),
                Output::Finished(outcome) => {
                    stop_keep_alive(&keep_alive);
                    // A run that ended mid-stream (a cap, a failure) drops the model's stream.
                    if let Some((Stream::Http { handle, .. }, ..)) = &stream {
                        abort_fetch(handle);
                    }
                    return outcome;
                }
            }
        }
        if let Some(input) = inputs.pop_front() {
            run.handle(input);
            continue;
        }
        if let Some(reason) = stopped(run_id) {
            if let Some((Stream::Http { handle, .. }, ..)) = &stream {
                abort_fetch(handle);
            }
            stream = None;
            model_call = None;
            tools.clear();
            run.handle(Input::Stop { reason });
            continue;
        }
        if let Some((request, attempt)) = model_call.take() {
            let key = match &key {
                Ok(key) => key.as_deref(),
                Err(message) => {
                    run.handle(Input::ModelFailed {
                        message: message.clone(),
                    });
                    continue;
                }
            };
            match open_model(run_id, model, &request, key).await {
                Ok(opened) => stream = Some((opened, request, attempt)),
                Err(error) => match retry_delay(&error, attempt + 1) {
                    Some(wait) if stopped(run_id).is_none() => {
                        let _ = race_stop(sleep(wait as u32), stop_promise(run_id)).await;
                        model_call = Some((request, attempt + 1));
                    }
                    _ => run.handle(Input::ModelFailed {
                        message: error.message,
                    }),
                },
            }
            continue;
        }
        if let Some((mut current, request, attempt)) = stream.take() {
            let events = match next_events(
                run_id,
                &mut current,
                model.idle_timeout_ms.unwrap_or(STREAM_IDLE_MS),
            )
            .await
            {
                Ok(events) => events,
                Err(message) => vec![ModelEvent::Error(ProviderError::fatal(message))],
            };
            let fed_before = matches!(&current, Stream::Http { fed: true, .. })
                || matches!(&current, Stream::Events(_));
            let mut keep = true;
            for event in events {
                with_record(run_id, |r| {
                    let recorder = r.recorder.get_or_insert_with(Default::default);
                    recorder.observe(&event);
                    if matches!(event, ModelEvent::Done { .. }) {
                        if let Some(done) = r.recorder.take() {
                            r.transcript.push(done.line());
                        }
                    }
                });
                match event {
                    ModelEvent::Text(text) => run.handle(Input::ModelText(text)),
                    ModelEvent::Native(delta) => run.handle(Input::ModelNative(delta)),
                    ModelEvent::Done { cut_by_limit } => {
                        keep = false;
                        run.handle(Input::ModelDone { cut_by_limit });
                    }
                    ModelEvent::Error(error) => {
                        keep = false;
                        let message =
                            redact(&error.message, key.as_ref().ok().and_then(|k| k.as_deref()));
                        match retry_delay(&error, attempt + 1) {
                            Some(wait) if !fed_before && stopped(run_id).is_none() => {
                                let _ = race_stop(sleep(wait as u32), stop_promise(run_id)).await;
                                model_call = Some((request.clone(), attempt + 1));
                            }
                            _ => run.handle(Input::ModelFailed { message }),
                        }
                        break;
                    }
                }
                if let Stream::Http { fed, .. } = &mut current {
                    *fed = true;
                }
            }
            if keep {
                stream = Some((current, request, attempt));
            } else {
                with_record(run_id, |r| r.fetch = None);
            }
            continue;
        }
        if !tools.is_empty() {
            let racers: Array = tools
                .iter()
                .map(|(_, p)| JsValue::from(p.clone()))
                .collect();
            match race_stop(Promise::race(&racers), stop_promise(run_id)).await {
                Ok(answer) => {
                    if let Ok(value) = Reflect::get(&answer, &"value".into()) {
                        if !value.is_undefined() {
                            let pair = Array::from(&value);
                            let call_id = pair.get(0).as_string().unwrap_or_default();
                            let response = convert::to_json(&pair.get(1)).unwrap_or(Value::Null);
                            tools.retain(|(id, _)| *id != call_id);
                            page_calls.remove(&call_id);
                            super::restart::done(run_id, &call_id).await;
                            run.handle(Input::ToolDone {
                                call_id,
                                outcome: tool_outcome(&response),
                            });
                        }
                    }
                }
                Err(error) => {
                    return RunOutcome::Failed {
                        message: format!("a tool call failed in the worker: {}", describe(&error)),
                    }
                }
            }
            continue;
        }
        if !run.pending_inputs().is_empty() {
            // Visitor inputs are answered from the popup or side panel (`answer`, `decline`);
            // the wait ends with answers, or with a stop.
            let pending = run.pending_inputs().to_vec();
            // Waiting for the person is not work: the worker may idle meanwhile.
            stop_keep_alive(&keep_alive);
            let answers = super::ui::wait_for_inputs(run_id, &pending, stop_promise(run_id)).await;
            keep_alive = super::io::keep_alive();
            for answer in answers {
                run.handle(answer);
            }
            continue;
        }
        run.handle(Input::ModelFailed {
            message: "the run waits for nothing it asked for (a bug in the host)".into(),
        });
    }
}

pub(crate) async fn read_key(reference: &str) -> Result<Option<String>, String> {
    let value = storage_get("session", &format!("{KEY_PREFIX}{reference}"))
        .await
        .map_err(|e| describe(&e))?;
    match value.as_string() {
        Some(key) if !key.is_empty() => Ok(Some(key)),
        _ => Err(format!("no API key `{reference}` in this browser session: set it in the popup (keys live only until the browser closes)")),
    }
}

/// Opens a model call: the HTTP request (status checked), or the replayed or built-in
/// model's output.
async fn open_model(
    run_id: &str,
    model: &ModelConfig,
    request: &ModelRequest,
    key: Option<&str>,
) -> Result<Stream, ProviderError> {
    match model.provider {
        Provider::Replay => {
            let steps = parse_transcript(model.transcript.as_deref().unwrap_or_default())
                .map_err(ProviderError::fatal)?;
            Ok(Stream::Events(
                replay_events(&steps, request.step, 8).into(),
            ))
        }
        Provider::Chrome => chrome_model(run_id, request)
            .await
            .map(|events| Stream::Events(events.into())),
        _ => {
            let http = build_request(model, request, key).map_err(ProviderError::fatal)?;
            let headers = convert::headers(&http.headers);
            let stop = stop_promise(run_id);
            let start = future_to_promise(async move {
                race_stop(
                    future_to_promise(async move {
                        start_fetch(&http.url, &http.method, headers.into(), &http.body).await
                    }),
                    stop,
                )
                .await
            });
            let origin = crate::core::provider::origin_of(&model.base_url).to_owned();
            let answer = match super::timer::within(start, FIRST_BYTE_MS).await {
                Ok(Some(answer)) => answer,
                Ok(None) => {
                    return Err(ProviderError {
                        message: format!("{origin} sent nothing within {} s", FIRST_BYTE_MS / 1000),
                        retryable: true,
                        retry_after_ms: None,
                    })
                }
                Err(error) => {
                    return Err(ProviderError {
                        message: redact(&format!("{origin} could not be reached: {error}"), key),
                        retryable: true,
                        retry_after_ms: None,
                    })
                }
            };
            if Reflect::get(&answer, &"stopped".into())
                .ok()
                .is_some_and(|v| v.is_truthy())
            {
                return Err(ProviderError::fatal("stopped"));
            }
            let handle = Reflect::get(&answer, &"value".into()).unwrap_or(JsValue::UNDEFINED);
            let status = Reflect::get(&handle, &"status".into())
                .ok()
                .and_then(|s| s.as_f64())
                .unwrap_or(0.0) as u16;
            if status >= 400 || status == 0 {
                let header = Reflect::get(&handle, &"header".into())
                    .ok()
                    .and_then(|f| {
                        js_sys::Function::from(f)
                            .call1(&JsValue::UNDEFINED, &"retry-after".into())
                            .ok()
                    })
                    .and_then(|v| v.as_string());
                let body = match call_method(&handle, "text") {
                    Ok(promise) => JsFuture::from(Promise::from(promise))
                        .await
                        .ok()
                        .and_then(|t| t.as_string())
                        .unwrap_or_default(),
                    Err(_) => String::new(),
                };
                let body: String = body.chars().take(4000).collect();
                return Err(classify_status(
                    status,
                    header.as_deref(),
                    &body,
                    model,
                    key,
                ));
            }
            with_record(run_id, |r| r.fetch = Some(handle.clone()));
            Ok(Stream::Http {
                handle,
                decoder: decoder(model),
                fed: false,
            })
        }
    }
}

/// The next events of a model call.
async fn next_events(
    run_id: &str,
    stream: &mut Stream,
    idle_ms: u32,
) -> Result<Vec<ModelEvent>, String> {
    match stream {
        Stream::Events(queue) => Ok(queue.pop_front().into_iter().collect()),
        Stream::Http {
            handle, decoder, ..
        } => {
            let read = call_method(handle, "read").map_err(|e| describe(&e))?;
            let stop = stop_promise(run_id);
            let raced =
                future_to_promise(async move { race_stop(Promise::from(read), stop).await });
            // A stream that goes silent for too long is a dead connection, not a slow model.
            let answer = match super::timer::within(raced, idle_ms).await {
                Ok(Some(answer)) => Ok(answer),
                Ok(None) => {
                    abort_fetch(handle);
                    return Ok(vec![ModelEvent::Error(ProviderError::fatal(format!(
                        "the model's stream sent nothing for {} ms; the connection was dropped",
                        idle_ms
                    )))]);
                }
                Err(error) => Err(JsValue::from_str(&error)),
            };
            match answer {
                Err(error) => Ok(vec![ModelEvent::Error(ProviderError {
                    message: format!("the model's stream broke: {}", describe(&error)),
                    retryable: true,
                    retry_after_ms: None,
                })]),
                Ok(answer) => {
                    if Reflect::get(&answer, &"stopped".into())
                        .ok()
                        .is_some_and(|v| v.is_truthy())
                    {
                        return Ok(Vec::new());
                    }
                    let value = Reflect::get(&answer, &"value".into()).unwrap_or(JsValue::NULL);
                    match value.as_string() {
                        Some(text) => Ok(decoder.push(&text)),
                        None => Ok(decoder.finish()),
                    }
                }
            }
        }
    }
}

/// Chrome's built-in model, when this browser has it.
async fn chrome_model(
    run_id: &str,
    request: &ModelRequest,
) -> Result<Vec<ModelEvent>, ProviderError> {
    let availability = chrome_model_availability()
        .await
        .as_string()
        .unwrap_or_default();
    if availability != "available" {
        return Err(ProviderError::fatal(format!(
            "Chrome's built-in model is not available in this browser (LanguageModel.availability(): {availability})"
        )));
    }
    let (system, turns) = text_conversation(&request.messages, &request.tools);
    let js_turns: Array = turns
        .iter()
        .map(|(speaker, text)| {
            JsValue::from(Array::of2(
                &JsValue::from_str(if *speaker == Speaker::User {
                    "user"
                } else {
                    "assistant"
                }),
                &JsValue::from_str(text),
            ))
        })
        .collect();
    let chunks: std::rc::Rc<RefCell<Vec<String>>> = Default::default();
    let sink = chunks.clone();
    let on_chunk = Closure::<dyn FnMut(JsValue)>::new(move |chunk: JsValue| {
        if let Some(text) = chunk.as_string() {
            sink.borrow_mut().push(text);
        }
    });
    chrome_model_prompt(
        &system,
        js_turns.into(),
        on_chunk.as_ref().unchecked_ref(),
        stop_promise(run_id),
    )
    .await
    .map_err(|e| {
        ProviderError::fatal(format!("Chrome's built-in model failed: {}", describe(&e)))
    })?;
    let mut events: Vec<ModelEvent> = chunks
        .borrow_mut()
        .drain(..)
        .map(ModelEvent::Text)
        .collect();
    events.push(ModelEvent::Done {
        cut_by_limit: false,
    });
    Ok(events)
}

/// Starts a tool call; the promise resolves to `[callId, {ok, result | error}]`.
fn start_tool(
    invocation: ToolInvocation,
    tab_id: Option<i64>,
    page: &[PageBinding],
    mcp: &[(String, McpBinding)],
) -> Promise {
    let binding = mcp
        .iter()
        .find(|(name, _)| *name == invocation.name)
        .map(|(_, b)| b.clone());
    let call_id = invocation.call_id.clone();
    let page_tool = page
        .iter()
        .find(|b| b.run_name == invocation.name)
        .map(|b| b.tool.clone());
    future_to_promise(async move {
        let response = match invocation.kind {
            ToolKind::Local if invocation.name == CURRENT_TIME => {
                json!({"ok": true, "result": current_time_result(now_ms(), utc_offset_minutes())})
            }
            ToolKind::Page => match tab_id {
                Some(tab_id) => {
                    let request = CallToolRequest {
                        tab_id,
                        name: page_tool
                            .as_ref()
                            .map_or_else(|| invocation.name.clone(), |t| t.name.clone()),
                        args: invocation.arguments.clone(),
                        frame_id: page_tool.as_ref().map(|t| t.frame_id),
                        timeout_ms: PAGE_TOOL_MS,
                        call: Some(call_id.clone()),
                        expect: page_tool.clone().map(Box::new),
                    };
                    super::run_call(&request).await
                }
                None => json!({"ok": false, "error": "this run has no tab"}),
            },
            ToolKind::Mcp => match binding {
                Some(binding) => {
                    let asked = (invocation.turn_id.as_str(), invocation.call_id.as_str());
                    call_mcp(binding, invocation.arguments.clone(), tab_id, asked).await
                }
                None => {
                    json!({"ok": false, "error": format!("`{}` is not a tool of a connected MCP server", invocation.name)})
                }
            },
            _ => {
                json!({"ok": false, "error": format!("`{}` cannot run in this host yet", invocation.name)})
            }
        };
        Ok(JsValue::from(Array::of2(
            &JsValue::from_str(&call_id),
            &convert::from_json(&response),
        )))
    })
}

/// Runs an MCP tool: confirmed in the tab's page first when it needs it.
async fn call_mcp(
    binding: McpBinding,
    arguments: serde_json::Map<String, Value>,
    tab_id: Option<i64>,
    (run_id, call_id): (&str, &str),
) -> Value {
    if binding.needs_confirmation {
        let Some(tab_id) = tab_id else {
            // No tab to ask in: the person answers in the popup or side panel.
            let allowed = super::ui::confirm_without_tab(
                run_id,
                call_id,
                &binding.server,
                &binding.tool.name,
                &arguments,
            )
            .await;
            return match allowed {
                true => call_confirmed(&binding, arguments).await,
                false => {
                    json!({"ok": false, "error": "declined: the person did not allow this call"})
                }
            };
        };
        let shown =
            serde_json::to_string_pretty(&Value::Object(arguments.clone())).unwrap_or_default();
        let shown: String = shown.chars().take(600).collect();
        let text = format!(
            "WebMCP Host\n\nThe agent wants to run “{}” of the MCP server {} with:\n{shown}\n\nAllow it?",
            binding.tool.name, binding.server
        );
        if !super::confirm_in_page(tab_id, text).await {
            return json!({"ok": false, "error": "declined: the person did not allow this call"});
        }
    }
    call_confirmed(&binding, arguments).await
}

/// Runs an MCP tool the person allowed (or that needs no confirmation).
async fn call_confirmed(binding: &McpBinding, arguments: serde_json::Map<String, Value>) -> Value {
    match super::mcp::call(binding.client.clone(), &binding.tool, arguments).await {
        CallResult::Ok { text, structured } => {
            match check_structured(&binding.tool, structured.as_ref()) {
                Ok(()) => json!({"ok": true, "result": text}),
                Err(error) => json!({"ok": false, "error": error}),
            }
        }
        CallResult::Error(error) => json!({"ok": false, "error": error}),
    }
}

fn stop_keep_alive(stop: &js_sys::Function) {
    let _ = stop.call0(&JsValue::UNDEFINED);
}
