//! The worker's MCP client: the core's [`Session`] performed with fetch.
//!
//! Each request's answer (JSON, or an SSE stream) is read until the awaited response; server
//! requests met on the way are answered; a stream that ends without the answer is resumed
//! with `Last-Event-ID` after the server's `retry`; a 404 starts a new session once; a request
//! without an answer in time is cancelled (`notifications/cancelled`). Redirects are refused
//! (fetch's `redirect: "error"`), so a key header never follows one.
//!
//! A server signed in to ([`super::auth`]) gets its Bearer token on every request (refreshed
//! before it expires, and once after a 401 when it can be). A 401 without a usable sign-in,
//! or a 403 `insufficient_scope`, is the request's error: the person signs in (again) with
//! `signIn`; a run never opens a sign-in window by itself.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::{Promise, Reflect};
use serde_json::{json, Map, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::convert::describe;
use super::timer;
use crate::core::mcp::auth::{AuthRecord, BearerChallenge};
use crate::core::mcp::jsonrpc::{parse_messages, RpcError};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::{still_same, McpTool};
use crate::core::mcp::{
    CallResult, McpError, McpEvent, Outgoing, Session, ToolListing, DEFAULT_TIMEOUT_MS,
};
use crate::core::provider::sse::SseDecoder;
use crate::core::provider::{redact, HttpRequest};

use super::io::{abort_fetch, call_method, now_ms, random_id, sleep, start_fetch};

const MAX_RESUMES: u32 = 5;
/// Bytes of one JSON answer (an SSE stream is capped per event by its decoder).
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// How long progress notifications can keep one request going.
const MAX_EXTENDED_MS: u32 = 10 * 60 * 1000;

/// One server's client, shared by the run's concurrent calls (borrowed only between awaits).
pub type Shared = Rc<RefCell<McpClient>>;

pub struct McpClient {
    pub config: McpServerConfig,
    session: Session,
    key: Option<String>,
    /// The sign-in whose Bearer token every request carries.
    auth: Option<AuthRecord>,
    /// The server said `notifications/tools/list_changed`: list again before the next call.
    tools_changed: bool,
    /// The listing after the last change (in progress, or done: then `latest` holds it).
    relisting: Option<Promise>,
    latest: Option<Rc<Vec<McpTool>>>,
    /// The GET stream for server messages while it is open (its fetch handle, to abort).
    listening: Option<JsValue>,
    /// Closed: nothing more is sent (an opening that ran out of time may still be under way).
    closed: bool,
}

impl McpClient {
    fn timeout(&self) -> u32 {
        self.config.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS)
    }
}

/// Connects (initialize + initialized) and lists every tool, within `within_ms` in all. A
/// server that fails or runs out of time is closed (its session ended, its GET stream
/// aborted), so nothing of it outlives the error.
pub async fn open(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
) -> Result<(Shared, Vec<McpTool>), String> {
    let auth = super::auth::record_for(&config).await;
    let client = Rc::new(RefCell::new(McpClient {
        session: Session::new(config.url.clone()),
        config,
        key,
        auth,
        tools_changed: false,
        relisting: None,
        latest: None,
        listening: None,
        closed: false,
    }));
    let listed: Rc<RefCell<Option<Vec<McpTool>>>> = Rc::default();
    let (opener, slot) = (client.clone(), listed.clone());
    let opening = future_to_promise(async move {
        connect(&opener).await.map_err(|e| JsValue::from_str(&e))?;
        let tools = list_tools(&opener)
            .await
            .map_err(|e| JsValue::from_str(&e))?;
        *slot.borrow_mut() = Some(tools);
        Ok(JsValue::TRUE)
    });
    let failure = match timer::within(opening, within_ms).await {
        Ok(Some(_)) => match listed.borrow_mut().take() {
            Some(tools) => return Ok((client, tools)),
            None => "the tools were not listed".to_owned(),
        },
        Ok(None) => format!("no answer in time ({within_ms} ms)"),
        Err(message) => message,
    };
    close(&client).await;
    Err(failure)
}

async fn connect(client: &Shared) -> Result<(), String> {
    let init = client.borrow_mut().session.initialize(
        "webmcp-host",
        crate::VERSION,
        json!({"elicitation": {}}),
    );
    let events = Box::pin(exchange(client, init, false)).await?;
    match events
        .iter()
        .find(|e| matches!(e, McpEvent::Initialized { .. } | McpEvent::Failed { .. }))
    {
        Some(McpEvent::Initialized { .. }) => {}
        Some(McpEvent::Failed { error, .. }) => return Err(error.clone()),
        _ => return Err("the server did not answer initialize".into()),
    }
    let initialized = client.borrow_mut().session.initialized();
    Box::pin(exchange(client, initialized, false)).await?;
    listen(client).await;
    Ok(())
}

/// Opens the GET stream for server messages (`notifications/tools/list_changed` above all) and
/// reads it in the background until the session ends. A server without one (405, or any other
/// refusal) is fine: messages then come only on the answers to requests.
async fn listen(client: &Shared) {
    if let Some(previous) = client.borrow_mut().listening.take() {
        abort_fetch(&previous);
    }
    let request = client.borrow().session.listen(None);
    let headers = request_headers(client, &request);
    let start = future_to_promise(async move {
        start_fetch(&request.url, &request.method, headers, &request.body).await
    });
    let Ok(Some(handle)) = timer::within(start, 5000).await else {
        return;
    };
    if client.borrow().closed {
        abort_fetch(&handle);
        return;
    }
    let status = Reflect::get(&handle, &"status".into())
        .ok()
        .and_then(|s| s.as_f64())
        .unwrap_or(0.0);
    if !(200.0..300.0).contains(&status) {
        abort_fetch(&handle);
        return;
    }
    client.borrow_mut().listening = Some(handle.clone());
    let client = client.clone();
    wasm_bindgen_futures::spawn_local(async move {
        let mut decoder = SseDecoder::new();
        let mut events = Vec::new();
        loop {
            let Ok(read) = call_method(&handle, "read") else {
                break;
            };
            let Ok(piece) = JsFuture::from(Promise::from(read)).await else {
                break;
            };
            let Some(piece) = piece.as_string() else {
                break;
            };
            for event in decoder.push(&piece) {
                if !event.data.trim().is_empty() {
                    receive(&client, &event.data, &mut events).await;
                }
            }
            events.clear();
        }
        let mut client = client.borrow_mut();
        if client
            .listening
            .as_ref()
            .is_some_and(|h| JsValue::eq(h, &handle))
        {
            client.listening = None;
        }
    });
}

async fn list_tools(client: &Shared) -> Result<Vec<McpTool>, String> {
    let mut listing = ToolListing::default();
    loop {
        let request = listing.request(&mut client.borrow_mut().session)?;
        let events = exchange(client, request, true).await?;
        if listing.absorb(events)? {
            return Ok(listing.tools);
        }
    }
}

/// `tools/call` of a tool as the run was given it. After `notifications/tools/list_changed`
/// the tools are listed again first, and a tool whose definition changed is not called.
pub async fn call(client: Shared, tool: &McpTool, arguments: Map<String, Value>) -> CallResult {
    let name = tool.name.clone();
    if std::mem::take(&mut client.borrow_mut().tools_changed) {
        // One listing for every call waiting on it (calls of a step run concurrently).
        let lister = client.clone();
        let relisting = future_to_promise(async move {
            let listed = list_tools(&lister).await;
            let mut lister = lister.borrow_mut();
            lister.latest = None;
            let listed = listed.map_err(|e| JsValue::from_str(&e))?;
            lister.latest = Some(Rc::new(listed));
            Ok(JsValue::TRUE)
        });
        client.borrow_mut().relisting = Some(relisting);
    }
    let relisting = client.borrow().relisting.clone();
    if let Some(relisting) = relisting {
        if let Err(error) = JsFuture::from(relisting).await {
            return CallResult::Error(format!(
                "the server changed its tools, and listing them again failed ({}); the call was not sent",
                describe(&error)
            ));
        }
        let latest = client.borrow().latest.clone();
        if let Some(Err(refused)) = latest.map(|latest| still_same(tool, &latest)) {
            return CallResult::Error(refused);
        }
    }
    let request =
        client
            .borrow_mut()
            .session
            .call_tool(&name, &arguments, Some(json!(random_id())));
    match exchange(&client, request, true).await {
        Ok(events) => events
            .into_iter()
            .find_map(|e| match e {
                // By name: after a 404 the call was sent again with a new id.
                McpEvent::CallDone {
                    name: done, result, ..
                } if done == name => Some(result),
                McpEvent::Failed { error, .. } => Some(CallResult::Error(error)),
                _ => None,
            })
            .unwrap_or_else(|| {
                CallResult::Error(format!("the server did not answer tools/call `{name}`"))
            }),
        Err(error) => CallResult::Error(error),
    }
}

/// Ends the session (`DELETE`), without waiting for long.
pub async fn close(client: &Shared) {
    client.borrow_mut().closed = true;
    if let Some(handle) = client.borrow_mut().listening.take() {
        abort_fetch(&handle);
    }
    let request = client.borrow().session.terminate();
    if let Some(request) = request {
        let headers = request_headers(client, &request);
        let _ = timer::within(
            future_to_promise(async move {
                start_fetch(&request.url, &request.method, headers, &request.body).await
            }),
            3000,
        )
        .await;
    }
}

fn request_headers(client: &Shared, request: &HttpRequest) -> JsValue {
    let headers = super::convert::headers(&request.headers);
    let client = client.borrow();
    if let Some(key) = &client.key {
        let (name, value) = client.config.key_header(key);
        let _ = Reflect::set(
            &headers,
            &JsValue::from_str(&name),
            &JsValue::from_str(&value),
        );
    }
    if let Some(record) = &client.auth {
        let (name, value) = record.bearer();
        let _ = Reflect::set(
            &headers,
            &JsValue::from_str(&name),
            &JsValue::from_str(&value),
        );
    }
    headers.into()
}

/// Sends one request and reads until its answer (or the end of a notification's answer).
async fn exchange(
    client: &Shared,
    outgoing: Outgoing,
    retry_on_404: bool,
) -> Result<Vec<McpEvent>, String> {
    let timeout = client.borrow().timeout();
    let key = client.borrow().key.clone();
    let method = serde_json::from_str::<Value>(&outgoing.request.body)
        .ok()
        .and_then(|b| b["method"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut request = outgoing.request.clone();
    let mut events = Vec::new();
    let mut resumes = 0;
    let mut refreshed = false;
    // A request has `timeout` ms in all (keep-alive pings do not extend it); progress
    // notifications extend it, up to MAX_EXTENDED_MS since the start.
    let started = now_ms();
    let mut deadline = started + f64::from(timeout);
    let left = |deadline: f64| (deadline - now_ms()).max(0.0) as u32;
    loop {
        if client.borrow().closed {
            return Err(format!("{method}: the connection was closed"));
        }
        let had_session = request.headers.iter().any(|(k, _)| k == "mcp-session-id");
        let headers = request_headers(client, &request);
        let sent = request.clone();
        let start = future_to_promise(async move {
            start_fetch(&sent.url, &sent.method, headers, &sent.body).await
        });
        let handle = match timer::within(start, left(deadline)).await {
            Ok(Some(handle)) => handle,
            Ok(None) => return Err(give_up(client, &outgoing, &method, timeout)),
            Err(error) => {
                return Err(redact(
                    &format!("{method}: the server could not be reached: {error}"),
                    key.as_deref(),
                ))
            }
        };
        let status = Reflect::get(&handle, &"status".into())
            .ok()
            .and_then(|s| s.as_f64())
            .unwrap_or(0.0) as u16;
        let header = |name: &str| {
            Reflect::get(&handle, &"header".into())
                .ok()
                .and_then(|f| {
                    js_sys::Function::from(f)
                        .call1(&JsValue::UNDEFINED, &name.into())
                        .ok()
                })
                .and_then(|v| v.as_string())
        };
        let answer = client.borrow_mut().session.answer(
            status,
            header("content-type").as_deref(),
            header("mcp-session-id").as_deref(),
            had_session,
            header("www-authenticate").as_deref(),
        );
        let is_sse = match answer {
            Ok(body) => body == crate::core::mcp::Body::Sse,
            Err(McpError::SessionExpired) if retry_on_404 => {
                Box::pin(connect(client)).await?;
                let again = client.borrow_mut().session.again(&outgoing.request);
                return Box::pin(exchange(client, again, false)).await;
            }
            Err(McpError::Unauthorized { .. }) => {
                // A token refused: refresh it once, when it can be, and send again.
                let (config, record) = {
                    let c = client.borrow();
                    (c.config.clone(), c.auth.clone())
                };
                if let Some(record) = record.filter(|_| !refreshed) {
                    refreshed = true;
                    if let Some(fresh) = super::auth::refresh_after_refusal(&config, &record).await
                    {
                        client.borrow_mut().auth = Some(fresh);
                        continue;
                    }
                    return Err(format!(
                        "{method}: the server refused the sign-in (401): sign in to {} again",
                        config.name
                    ));
                }
                return Err(format!(
                    "{method}: the server requires authorization (401): sign in to {} first",
                    config.name
                ));
            }
            Err(McpError::InsufficientScope { www_authenticate }) => {
                let name = client.borrow().config.name.clone();
                super::auth::note_challenge(&name, www_authenticate.as_deref());
                let scope = BearerChallenge::from_header(www_authenticate.as_deref())
                    .scope
                    .map(|s| format!(" (scope \"{s}\")"))
                    .unwrap_or_default();
                return Err(format!(
                    "{method}: the server needs more scope{scope} (403 insufficient_scope): sign in to {name} again to grant it"
                ));
            }
            Err(error) => return Err(format!("{method}: {error}")),
        };
        let mut decoder = SseDecoder::new();
        let mut last_event_id = None;
        let mut retry_ms = None;
        let mut text = String::new();
        loop {
            let read = match call_method(&handle, "read") {
                Ok(promise) => Promise::from(promise),
                Err(error) => return Err(format!("{method}: {}", describe(&error))),
            };
            let piece = match timer::within(read, left(deadline)).await {
                Ok(Some(piece)) => piece.as_string(),
                Ok(None) => {
                    let _ = call_method(&handle, "abort");
                    return Err(give_up(client, &outgoing, &method, timeout));
                }
                Err(error) => {
                    if is_sse {
                        None // a broken stream: resume below
                    } else {
                        return Err(format!("{method}: the answer broke: {error}"));
                    }
                }
            };
            let Some(piece) = piece else { break };
            if is_sse {
                for event in decoder.push(&piece) {
                    if event.truncated {
                        let _ = call_method(&handle, "abort");
                        return Err(format!(
                            "{method}: an SSE event of the server passed {} bytes (max_sse_event_bytes)",
                            crate::core::provider::sse::MAX_SSE_EVENT_BYTES
                        ));
                    }
                    if event.id.is_some() {
                        last_event_id = event.id.clone();
                    }
                    if event.retry.is_some() {
                        retry_ms = event.retry;
                    }
                    if !event.data.trim().is_empty() {
                        let before = events.len();
                        receive(client, &event.data, &mut events).await;
                        if events[before..]
                            .iter()
                            .any(|e| matches!(e, McpEvent::Progress { .. }))
                        {
                            deadline = (now_ms() + f64::from(timeout))
                                .min(started + f64::from(MAX_EXTENDED_MS));
                        }
                    }
                }
                if answered(client, &outgoing) {
                    let _ = call_method(&handle, "abort");
                    return Ok(events);
                }
            } else {
                text.push_str(&piece);
                if text.len() > MAX_ANSWER_BYTES {
                    let _ = call_method(&handle, "abort");
                    return Err(format!(
                        "{method}: the server's answer passed {MAX_ANSWER_BYTES} bytes (max_answer_bytes)"
                    ));
                }
            }
        }
        if is_sse {
            if let Some(event) = decoder.finish() {
                if !event.data.trim().is_empty() {
                    receive(client, &event.data, &mut events).await;
                }
            }
        } else if !text.trim().is_empty() {
            // A JSON answer is all there is: one that does not parse is the error.
            if let Err(error) = parse_messages(&text) {
                return Err(format!("{method}: {error}"));
            }
            receive(client, &text, &mut events).await;
        }
        if answered(client, &outgoing) {
            return Ok(events);
        }
        // The stream ended without the answer: resume it.
        resumes += 1;
        if !is_sse || resumes > MAX_RESUMES {
            let notes: Vec<&str> = events
                .iter()
                .filter_map(|e| match e {
                    McpEvent::Note(note) if !note.starts_with("notification ") => {
                        Some(note.as_str())
                    }
                    _ => None,
                })
                .take(2)
                .collect();
            return Err(if notes.is_empty() {
                format!("{method}: the server ended its answer without a response")
            } else {
                format!(
                    "{method}: the server ended its answer without a response ({})",
                    notes.join("; ")
                )
            });
        }
        let _ = JsFuture::from(sleep(retry_ms.unwrap_or(1000).min(30_000) as u32)).await;
        request = client.borrow().session.listen(last_event_id.as_deref());
    }
}

fn answered(client: &Shared, outgoing: &Outgoing) -> bool {
    outgoing
        .id
        .is_none_or(|id| !client.borrow().session.pending().any(|(p, _)| p == id))
}

/// Cancels a request that timed out and says so.
fn give_up(client: &Shared, outgoing: &Outgoing, method: &str, timeout: u32) -> String {
    if let Some(id) = outgoing.id {
        let cancel = client.borrow_mut().session.cancel(id, "timed out");
        let headers = request_headers(client, &cancel.request);
        let request = cancel.request;
        let _ = future_to_promise(async move {
            start_fetch(&request.url, &request.method, headers, &request.body).await
        });
    }
    format!("{method}: no answer within {timeout} ms (cancelled)")
}

/// Feeds a body's messages to the session and answers server requests among them.
async fn receive(client: &Shared, text: &str, events: &mut Vec<McpEvent>) {
    let messages = match parse_messages(text) {
        Ok(messages) => messages,
        Err(error) => {
            events.push(McpEvent::Note(format!("skipped: {error}")));
            return;
        }
    };
    for message in messages {
        let new = client.borrow_mut().session.receive(message);
        for event in &new {
            if matches!(event, McpEvent::ToolsChanged) {
                client.borrow_mut().tools_changed = true;
            }
            if let McpEvent::ServerRequest { id, method, params } = event {
                let answer = answer_request(method, params.as_ref());
                let reply = client.borrow_mut().session.reply(id, answer);
                let headers = request_headers(client, &reply.request);
                let request = reply.request;
                let _ = future_to_promise(async move {
                    start_fetch(&request.url, &request.method, headers, &request.body).await
                });
            }
        }
        events.extend(new);
    }
}

/// Answers to server requests during a run: `ping`; an elicitation is declined (the popup
/// will ask the person in a later version); sampling and roots are not supported.
fn answer_request(method: &str, _params: Option<&Value>) -> Result<Value, (i64, String)> {
    match method {
        "ping" => Ok(json!({})),
        "elicitation/create" => Ok(json!({"action": "decline"})),
        other => Err((
            RpcError::METHOD_NOT_FOUND,
            format!("{other} is not supported by this client"),
        )),
    }
}
