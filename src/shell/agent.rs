//! Runs in the worker: `webmcpHost.run`, `events`, `stop`, `configure`.
//!
//! The core's [`Drive`] decides everything of a run; this module reads the run's tool sources,
//! then performs what the drive asks: fetches (status, headers, body text), Chrome's built-in
//! model, timers, intents in storage, tool calls (page, MCP, the clock), the person's answers,
//! keep-alive. Every result goes back as an [`Answer`] through the run's inbox, which `stop`
//! feeds too. Keys are read from `chrome.storage.session` at request time and go only into the
//! request of their model.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::rc::Rc;

use js_sys::{Array, Promise, Reflect};
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{spawn_local, JsFuture};

use super::convert::{self, describe};
use super::io::{
    abort_fetch, call_method, chrome_model_availability, chrome_model_prompt, deferred, now_ms,
    random_id, start_fetch, storage_get, storage_remove, storage_set, utc_offset_minutes,
};
use crate::core::agui::Message;
use crate::core::mcp::source::{run_tools as mcp_run_tools, McpServerConfig};
use crate::core::mcp::tools::{check_structured, McpTool};
use crate::core::mcp::CallResult;
use crate::core::ops::request::RunRequest;
use crate::core::provider::prompt::Speaker;
use crate::core::provider::ModelRegistry;
use crate::core::run::drive::{
    Action, Answer, Binding, Confirm, Drive, FetchId, Setup, ToolCall, MCP_SOURCE_MS,
};
use crate::core::run::local::{current_time_result, local_tools};
use crate::core::run::page::page_run_tools;
use crate::core::run::{Run, RunInput, RunOutcome, RunTool, SourceError, ToolKind};

/// Where the registry and the keys live.
const REGISTRY_KEY: &str = "webmcpHost.models";
const SERVERS_KEY: &str = "webmcpHost.servers";
const KEY_PREFIX: &str = "webmcpHost.key.";

/// Where a run stands, for `stop`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Going {
    Yes,
    Stopped,
    Finished,
}

/// What the worker keeps of a run.
struct Record {
    events: Vec<Value>,
    /// `{promise, resolve}`: resolved by `stop`, for the waits that end with it (the person's
    /// answers, Chrome's model).
    stop: JsValue,
    going: Going,
    inbox: Rc<Inbox>,
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

fn js_err(message: impl AsRef<str>) -> JsError {
    JsError::new(message.as_ref())
}

/// The answers of a run's effects, in the order they came, and the wake-up of its loop.
#[derive(Default)]
struct Inbox {
    queue: RefCell<VecDeque<Answer>>,
    wake: RefCell<Option<js_sys::Function>>,
}

impl Inbox {
    fn push(&self, answer: Answer) {
        self.queue.borrow_mut().push_back(answer);
        if let Some(wake) = self.wake.borrow_mut().take() {
            let _ = wake.call0(&JsValue::UNDEFINED);
        }
    }

    async fn next(&self) -> Answer {
        loop {
            if let Some(answer) = self.queue.borrow_mut().pop_front() {
                return answer;
            }
            let woken = Promise::new(&mut |resolve, _| *self.wake.borrow_mut() = Some(resolve));
            let _ = JsFuture::from(woken).await;
        }
    }

    /// Performs `effect` in the background; its answer comes back through the inbox.
    fn spawn(self: &Rc<Self>, effect: impl Future<Output = Answer> + 'static) {
        let inbox = self.clone();
        spawn_local(async move { inbox.push(effect.await) });
    }
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
        if r.going != Going::Yes {
            return false;
        }
        r.going = Going::Stopped;
        if let Ok(resolve) = Reflect::get(&r.stop, &"resolve".into()) {
            let _ = js_sys::Function::from(resolve).call0(&JsValue::UNDEFINED);
        }
        r.inbox.push(Answer::Stop { reason });
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
    let inbox = Rc::new(Inbox::default());
    RUNS.with(|runs| {
        runs.borrow_mut().insert(
            run_id.clone(),
            Record {
                events: Vec::new(),
                stop: deferred(),
                going: Going::Yes,
                inbox: inbox.clone(),
            },
        )
    });
    super::ui::on_start(&run_id, &thread_id, request.tab_id, &raw);

    let mut sources = Sources {
        tools: local_tools(),
        ..Sources::default()
    };
    if let Some(tab_id) = request.tab_id {
        sources.page(tab_id).await;
    }
    sources.mcp().await;
    let Sources {
        mut tools,
        errors,
        bindings,
        clients,
    } = sources;
    let tool = |kind: ToolKind| {
        move |spec| RunTool {
            spec,
            kind,
            data_source: None,
        }
    };
    tools.extend(
        request
            .frontend_tools
            .iter()
            .cloned()
            .map(tool(ToolKind::Frontend)),
    );
    tools.extend(visitor_tools.into_iter().map(tool(ToolKind::Visitor)));
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
    input.source_errors = errors;
    input.max_steps = request.max_steps;
    input.context = request.context.clone();

    let key = match &model.key_ref {
        Some(reference) => read_key(reference).await,
        None => Ok(None),
    };
    let mut drive = Drive::new(
        Run::start(input),
        Setup {
            model,
            key,
            tab_id: request.tab_id,
            bindings,
        },
    );
    let outcome = perform(&mut drive, &run_id, &inbox, &clients).await;
    super::restart::forget(&run_id).await;
    for (_, client, _) in &clients {
        super::mcp::close(client).await;
    }
    let events = with_record(&run_id, |r| {
        r.going = Going::Finished;
        r.events.clone()
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
        "messages": drive.messages(),
        // The model's outputs as a replay transcript: a `replay` model with it repeats this run.
        "transcript": drive.transcript(),
    });
    Ok(convert::from_json(&result))
}

/// The tool sources of a run, read at its start: what they offer, what failed, and the MCP
/// clients opened for it.
#[derive(Default)]
struct Sources {
    tools: Vec<RunTool>,
    errors: Vec<SourceError>,
    bindings: Vec<(String, Binding)>,
    clients: Vec<(String, super::mcp::Shared, Vec<McpTool>)>,
}

impl Sources {
    /// The tab's page tools.
    async fn page(&mut self, tab_id: i64) {
        match super::tab_tools(tab_id).await {
            Ok(found) => {
                let (run_tools, bindings, errors) = page_run_tools(&found);
                self.tools.extend(run_tools);
                self.errors.extend(errors);
                let bound = bindings
                    .into_iter()
                    .map(|b| (b.run_name, Binding::Page(b.tool)));
                self.bindings.extend(bound);
            }
            Err(message) => self.errors.push(SourceError {
                source: format!("page (tab {tab_id})"),
                message,
            }),
        }
    }

    /// The enabled MCP servers: connected and listed, each within its time; a failing one
    /// is reported.
    async fn mcp(&mut self) {
        let servers = match load_servers().await {
            Ok(servers) => servers,
            Err(message) => {
                return self.errors.push(SourceError {
                    source: "MCP servers".into(),
                    message,
                })
            }
        };
        for server in servers.into_iter().filter(|s| s.enabled) {
            let source = format!("MCP server {}", server.name);
            let key = match &server.key_ref {
                Some(reference) => match read_key(reference).await {
                    Ok(key) => key,
                    Err(message) => {
                        self.errors.push(SourceError { source, message });
                        continue;
                    }
                },
                None => None,
            };
            let within = server.timeout_ms.unwrap_or(MCP_SOURCE_MS);
            match super::mcp::open(server.clone(), key, within).await {
                Ok((client, listed)) => {
                    let (run_tools, map) = mcp_run_tools(&server, &listed);
                    self.tools.extend(run_tools);
                    for entry in map {
                        let tool = listed
                            .iter()
                            .find(|t| t.name == entry.name)
                            .expect("mapped from the list");
                        let binding = Binding::Mcp {
                            server: server.name.clone(),
                            acting: tool.needs_confirmation(false),
                            tool: tool.name.clone(),
                            needs_confirmation: entry.needs_confirmation,
                        };
                        self.bindings.push((entry.run_name, binding));
                    }
                    self.clients.push((server.name.clone(), client, listed));
                }
                Err(message) => self.errors.push(SourceError { source, message }),
            }
        }
    }
}

/// Performs what the drive asks until the run ends.
async fn perform(
    drive: &mut Drive,
    run_id: &str,
    inbox: &Rc<Inbox>,
    clients: &[(String, super::mcp::Shared, Vec<McpTool>)],
) -> RunOutcome {
    // Fetches by id: `None` until the head arrived; gone once aborted.
    let fetches: Rc<RefCell<HashMap<FetchId, Option<JsValue>>>> = Default::default();
    let mut timers: HashMap<u64, JsValue> = HashMap::new();
    let mut keep_alive: Option<js_sys::Function> = None;
    loop {
        while let Some(action) = drive.poll() {
            match action {
                Action::Event(event) => {
                    let value = serde_json::to_value(&event).unwrap_or(Value::Null);
                    super::ui::on_event(run_id, &value);
                    with_record(run_id, |r| r.events.push(value));
                }
                Action::Fetch { id, request } => {
                    fetches.borrow_mut().insert(id, None);
                    let fetches = fetches.clone();
                    let headers = convert::headers(&request.headers);
                    inbox.spawn(async move {
                        let started = start_fetch(
                            &request.url,
                            &request.method,
                            headers.into(),
                            &request.body,
                        );
                        match started.await {
                            Ok(handle) => opened(id, handle, &fetches),
                            Err(error) => Answer::FetchFailed {
                                id,
                                message: describe(&error),
                            },
                        }
                    });
                }
                Action::Read { id } => {
                    let handle = fetches.borrow().get(&id).cloned().flatten();
                    if let Some(read) = handle.and_then(|h| call_method(&h, "read").ok()) {
                        inbox.spawn(async move {
                            match JsFuture::from(Promise::from(read)).await {
                                Ok(piece) => Answer::Body {
                                    id,
                                    text: piece.as_string(),
                                },
                                Err(error) => Answer::FetchFailed {
                                    id,
                                    message: describe(&error),
                                },
                            }
                        });
                    }
                }
                Action::Abort { id } => {
                    if let Some(Some(handle)) = fetches.borrow_mut().remove(&id) {
                        abort_fetch(&handle);
                    }
                }
                Action::ChromeAvailability { id } => inbox.spawn(async move {
                    let availability = chrome_model_availability().await;
                    Answer::ChromeAvailability {
                        id,
                        availability: availability.as_string().unwrap_or_default(),
                    }
                }),
                Action::ChromePrompt { id, system, turns } => {
                    let stop = stop_promise(run_id);
                    inbox.spawn(async move {
                        let output = chrome_model(&system, &turns, stop).await;
                        Answer::ChromeOutput { id, output }
                    })
                }
                Action::Timer { id, ms } => {
                    let inbox = inbox.clone();
                    let handle = super::timer::after(ms, move || inbox.push(Answer::Timeout(id)));
                    timers.insert(id.0, handle);
                }
                Action::CancelTimer { id } => {
                    if let Some(handle) = timers.remove(&id.0) {
                        super::timer::cancel(&handle);
                    }
                }
                Action::Intents(intents) => super::restart::save(run_id, &intents).await,
                Action::Tool { call_id, call } => {
                    let client = match call.as_ref() {
                        ToolCall::Mcp { server, tool, .. } => clients
                            .iter()
                            .filter(|(name, ..)| name == server)
                            .find_map(|(_, c, listed)| {
                                let tool = listed.iter().find(|t| t.name == *tool)?;
                                Some((c.clone(), tool.clone()))
                            }),
                        _ => None,
                    };
                    inbox.spawn(async move {
                        let response = call_tool(&call_id, *call, client).await;
                        Answer::ToolDone { call_id, response }
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
                        Answer::Person(super::ui::wait_for_inputs(&run_id, &pending, stop).await)
                    });
                }
                // While the run works, the worker is kept from idling out (Chrome stops an idle
                // worker after 30 s, and a model may think longer than that between two chunks).
                Action::KeepAlive(true) => {
                    keep_alive.get_or_insert_with(super::io::keep_alive);
                }
                Action::KeepAlive(false) => {
                    if let Some(stop) = keep_alive.take() {
                        let _ = stop.call0(&JsValue::UNDEFINED);
                    }
                }
                Action::Finished(outcome) => {
                    for handle in timers.values() {
                        super::timer::cancel(handle);
                    }
                    return outcome;
                }
            }
        }
        let answer = inbox.next().await;
        if let Answer::Timeout(id) = &answer {
            timers.remove(&id.0);
        }
        drive.handle(answer);
    }
}

/// A fetch's head arrived: kept for its body, or aborted when the drive dropped it meanwhile.
fn opened(
    id: FetchId,
    handle: JsValue,
    fetches: &RefCell<HashMap<FetchId, Option<JsValue>>>,
) -> Answer {
    let status = Reflect::get(&handle, &"status".into())
        .ok()
        .and_then(|s| s.as_f64())
        .unwrap_or(0.0) as u16;
    let retry_after = Reflect::get(&handle, &"header".into())
        .ok()
        .and_then(|f| {
            js_sys::Function::from(f)
                .call1(&JsValue::UNDEFINED, &"retry-after".into())
                .ok()
        })
        .and_then(|v| v.as_string());
    match fetches.borrow_mut().get_mut(&id) {
        Some(slot) => *slot = Some(handle),
        None => abort_fetch(&handle),
    }
    Answer::Head {
        id,
        status,
        retry_after,
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

/// Chrome's built-in model: the pieces of its answer, or why it failed.
async fn chrome_model(
    system: &str,
    turns: &[(Speaker, String)],
    stop: Promise,
) -> Result<Vec<String>, String> {
    let js_turns: Array = turns
        .iter()
        .map(|(speaker, text)| {
            let role = match speaker {
                Speaker::User => "user",
                Speaker::Assistant => "assistant",
            };
            JsValue::from(Array::of2(&role.into(), &JsValue::from_str(text)))
        })
        .collect();
    let chunks: Rc<RefCell<Vec<String>>> = Default::default();
    let sink = chunks.clone();
    let on_chunk = Closure::<dyn FnMut(JsValue)>::new(move |chunk: JsValue| {
        if let Some(text) = chunk.as_string() {
            sink.borrow_mut().push(text);
        }
    });
    chrome_model_prompt(
        system,
        js_turns.into(),
        on_chunk.as_ref().unchecked_ref(),
        stop,
    )
    .await
    .map_err(|e| describe(&e))?;
    let pieces = chunks.borrow_mut().drain(..).collect();
    Ok(pieces)
}

/// Carries out a tool call; the answer is `callTool`-shaped (`{ok, result | error}`).
async fn call_tool(
    call_id: &str,
    call: ToolCall,
    client: Option<(super::mcp::Shared, McpTool)>,
) -> Value {
    match call {
        ToolCall::CurrentTime => {
            json!({"ok": true, "result": current_time_result(now_ms(), utc_offset_minutes())})
        }
        ToolCall::Page(request) => super::page_call(request).await,
        ToolCall::Mcp {
            server,
            tool,
            arguments,
            confirm,
        } => {
            let allowed = match confirm {
                Confirm::No => true,
                Confirm::InPage { tab_id, text } => super::confirm_in_page(tab_id, text).await,
                // No tab to ask in: the person answers in the popup or side panel.
                Confirm::Person { turn_id } => {
                    super::ui::confirm_without_tab(&turn_id, call_id, &server, &tool, &arguments)
                        .await
                }
            };
            if !allowed {
                return json!({"ok": false, "error": "declined: the person did not allow this call"});
            }
            let Some((client, tool)) = client else {
                return json!({"ok": false, "error": format!("the MCP server {server} is not connected")});
            };
            match super::mcp::call(client, &tool, arguments).await {
                CallResult::Ok { text, structured } => {
                    match check_structured(&tool, structured.as_ref()) {
                        Ok(()) => json!({"ok": true, "result": text}),
                        Err(error) => json!({"ok": false, "error": error}),
                    }
                }
                CallResult::Error(error) => json!({"ok": false, "error": error}),
            }
        }
    }
}
