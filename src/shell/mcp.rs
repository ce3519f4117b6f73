//! The worker's MCP client: the core's [`Exchange`] machine performed with fetch and timers.
//!
//! Every decision (resumption, a new session after 404, cancellation, caps, answers to server
//! requests, deadlines extended by progress) is the machine's; this file sends what it asks,
//! feeds back what fetch reads and wakes it at its deadline. Redirects are refused (fetch's
//! `redirect: "error"`), so a key header never follows one.
//!
//! A server signed in to ([`super::signins`], `signIn` in `auth.rs`) gets its Bearer token on every request (the session
//! carries it; refreshed before it expires, and once after a 401 when it can be). A 401 without
//! a usable sign-in, or a 403 `insufficient_scope`, is the request's error: the person signs in
//! (again) with `signIn`; a run never opens a sign-in window by itself.

use std::cell::RefCell;
use std::rc::Rc;

use js_sys::Promise;
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{future_to_promise, JsFuture};

use super::io::{abort_fetch, call_method, fetch, head, now_ms, random_id, sleep};
pub use super::state::{McpClient, Shared};
use super::timer;
use crate::core::gate::{McpCall, Permit};
use crate::core::mcp::client::{
    call_result, BeforeCall, Connection, ListingCache, OpenMiss, ToolWatch,
};
use crate::core::mcp::exchange::{
    Exchange, Listening, Output, Recourse, Refusal, Settings, StreamId,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::McpTool;
use crate::core::mcp::{redact_result, secrets_of};
use crate::core::mcp::{CallResult, McpEvent, Outgoing, Session, ToolListing};
use crate::core::provider::redact;

/// Connects (`server/discover`, else initialize + initialized) and lists every tool, within `within_ms` in all. A
/// server that fails or runs out of time is closed (its session ended, its GET stream
/// aborted), so nothing of it outlives the error.
pub async fn open(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
) -> Result<(Shared, Vec<McpTool>), String> {
    open_with(config, key, within_ms, true).await
}

/// [`open`] without the GET stream for server messages: for a connection kept between a
/// person's calls, which lists the tools again before each use anyway, and which must not hold
/// one of the browser's few connections to the server's host while idle.
pub async fn open_without_stream(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
) -> Result<(Shared, Vec<McpTool>), String> {
    open_with(config, key, within_ms, false).await
}

async fn open_with(
    config: McpServerConfig,
    key: Option<String>,
    within_ms: u32,
    listens: bool,
) -> Result<(Shared, Vec<McpTool>), String> {
    let mut session = Session::new(config.url.clone())
        .with_headers(key.iter().map(|k| config.key_header(k)).collect());
    session.set_auth(super::signins::record_for(&config).await);
    let client = Rc::new(RefCell::new(McpClient {
        session,
        config,
        key,
        tools: ToolWatch::default(),
        listing: ListingCache::default(),
        relisting: None,
        listening: None,
        listens,
        connection: Connection::Open,
    }));
    let opener = client.clone();
    let opening = async move {
        connect(&opener).await?;
        list_tools(&opener).await
    };
    let failure = match timer::limit(within_ms, opening).await {
        Ok(Some(tools)) => return Ok((client, tools)),
        Ok(None) => OpenMiss::Timeout { within_ms }.to_string(),
        Err(message) => message,
    };
    close(&client).await;
    Err(failure)
}

/// Connects: `server/discover` first, unless the server was found to speak only the
/// revisions up to 2025-11-25 earlier in the worker's life (then `initialize` at once).
async fn connect(client: &Shared) -> Result<(), String> {
    let url = client.borrow().session.url().to_owned();
    let mut settings = Settings::extension(&client.borrow().config);
    settings.protocols = super::state::driver(|d| d.eras.borrow().protocols(&url));
    let mut machine = Exchange::new(settings);
    machine.connect(&mut client.borrow_mut().session, now_ms());
    if let Err(error) = drive(client, machine).await {
        super::state::driver(|d| d.eras.borrow_mut().forget(&url));
        return Err(error);
    }
    let modern = client.borrow().session.is_modern();
    super::state::driver(|d| d.eras.borrow_mut().spoke(&url, modern));
    listen(client).await;
    Ok(())
}

async fn list_tools(client: &Shared) -> Result<Vec<McpTool>, String> {
    let mut listing = ToolListing::default();
    loop {
        let request = listing.request(&mut client.borrow_mut().session)?;
        if listing.absorb(exchange(client, request).await?)? {
            let tools = Rc::new(listing.tools.clone());
            let ttl = listing.ttl_ms.unwrap_or(0);
            client.borrow_mut().listing.keep(tools, ttl, now_ms());
            return Ok(listing.tools);
        }
    }
}

/// Lists the tools again on an open connection (a call by hand, the Call view's listing),
/// unless the last listing is still fresh (its `ttlMs`, 2026-07-28); a listing that came is
/// the latest the calls are checked against.
pub async fn relist(client: &Shared) -> Result<Vec<McpTool>, String> {
    let fresh = client.borrow().listing.fresh(now_ms());
    if let Some(fresh) = fresh {
        return Ok(Rc::unwrap_or_clone(fresh));
    }
    let listed = list_tools(client).await?;
    client.borrow_mut().tools.listed(Ok(listed.clone()));
    Ok(listed)
}

/// `tools/call` of a tool as the run was given it. After `notifications/tools/list_changed`
/// the tools are listed again first, and a tool whose definition changed is not called.
pub async fn call(client: Shared, permit: Permit<McpCall>) -> CallResult {
    let McpCall { tool, arguments } = permit.into_call();
    let tool = &tool;
    let name = tool.name.clone();
    if client.borrow_mut().tools.before_call() == BeforeCall::List {
        // One listing for every call waiting on it (calls of a step run concurrently).
        let lister = client.clone();
        let relisting = future_to_promise(async move {
            let listed = list_tools(&lister).await;
            lister.borrow_mut().tools.listed(listed);
            Ok(JsValue::TRUE)
        });
        client.borrow_mut().relisting = Some(relisting);
    }
    let relisting = client.borrow().relisting.clone();
    if let Some(relisting) = relisting {
        let _ = JsFuture::from(relisting).await;
    }
    if let Err(refused) = client.borrow().tools.check(tool) {
        return CallResult::Error(refused);
    }
    let progress = Some(json!(random_id()));
    let request = (client.borrow_mut().session).call_tool(&name, &arguments, progress);
    let result = call_result(exchange(&client, request).await, &name);
    let c = client.borrow(); // what the session sends now: a token refreshed meanwhile too
    redact_result(result, &secrets_of(c.key.as_deref(), c.session.auth()))
}

/// The MCP revision the connection speaks (`2026-07-28`, `2025-11-25`, …).
pub fn protocol(client: &Shared) -> String {
    client
        .borrow()
        .session
        .protocol()
        .unwrap_or_default()
        .to_owned()
}

/// Ends the session (`DELETE`), without waiting for long.
pub async fn close(client: &Shared) {
    client.borrow_mut().connection = Connection::Closed;
    if let Some(handle) = client.borrow_mut().listening.take() {
        abort_fetch(&handle);
    }
    let request = client.borrow().session.terminate();
    if let Some(request) = request {
        let _ = timer::within(fetch(request), crate::core::limits::MCP_CLOSE_MS).await;
    }
}

/// Sends one request and drives its machine to the answer.
async fn exchange(client: &Shared, outgoing: Outgoing) -> Result<Vec<McpEvent>, String> {
    let mut machine = Exchange::new(Settings::extension(&client.borrow().config));
    machine.request(outgoing, now_ms());
    drive(client, machine).await
}

/// Performs the machine's outputs, reads the stream it waits on and wakes it at its deadline,
/// until its job is done.
async fn drive(client: &Shared, mut machine: Exchange) -> Result<Vec<McpEvent>, String> {
    let key = client.borrow().key.clone();
    let mut reading: Option<(StreamId, JsValue)> = None;
    // A read not yet answered when the machine woke for time: read on, never twice at once.
    let mut pending: Option<Promise> = None;
    loop {
        while let Some(output) = machine.poll() {
            match output {
                Output::Send { stream, request } => {
                    let method = machine.job_method().unwrap_or_default();
                    client.borrow().connection.refuses(method)?;
                    match timer::within(fetch(request), left(&machine)).await {
                        Ok(Some(handle)) => {
                            let head = head(&handle);
                            let session = &mut client.borrow_mut().session;
                            machine.handle_head(session, stream, head, now_ms());
                            reading = Some((stream, handle));
                        }
                        Ok(None) => {
                            machine.handle_timeout(&mut client.borrow_mut().session, now_ms())
                        }
                        Err(error) => {
                            let session = &mut client.borrow_mut().session;
                            machine.handle_end(session, stream, Some(error), now_ms());
                        }
                    }
                }
                Output::Abort(stream) => {
                    if let Some((_, handle)) = reading.take_if(|(s, _)| *s == stream) {
                        let _ = call_method(&handle, "abort");
                        pending = None;
                    }
                }
                Output::Authorize { refusal, attempt } => {
                    authorize(client, &mut machine, refusal, attempt).await
                }
                Output::Reconnected => {
                    let client = client.clone();
                    wasm_bindgen_futures::spawn_local(async move { listen(&client).await });
                }
                Output::Done(outcome) => {
                    return outcome.map_err(|f| redact(&f.to_string(), key.as_deref()))
                }
                other => perform(client, other),
            }
        }
        let Some((stream, handle)) = reading.clone() else {
            let _ = JsFuture::from(sleep(left(&machine))).await;
            machine.handle_timeout(&mut client.borrow_mut().session, now_ms());
            continue;
        };
        let read = pending
            .take()
            .unwrap_or_else(|| match call_method(&handle, "read") {
                Ok(promise) => Promise::from(promise),
                Err(error) => Promise::reject(&error),
            });
        let piece = timer::within(read.clone(), left(&machine)).await;
        let (session, now) = (&mut client.borrow_mut().session, now_ms());
        match piece {
            Ok(None) => {
                pending = Some(read);
                machine.handle_timeout(session, now);
            }
            Ok(Some(piece)) => match piece.as_string() {
                Some(text) => machine.handle_body(session, stream, text.as_bytes(), now),
                None => {
                    reading = None;
                    machine.handle_end(session, stream, None, now);
                }
            },
            Err(error) => {
                reading = None;
                machine.handle_end(session, stream, Some(error), now);
            }
        }
    }
}

/// Answers the machine's sign-in request as the core says: a refresh, or the error.
async fn authorize(client: &Shared, machine: &mut Exchange, refusal: Refusal, attempt: u32) {
    let (config, record) = {
        let c = client.borrow();
        (c.config.clone(), c.session.auth().cloned())
    };
    if let Refusal::InsufficientScope { challenge } = &refusal {
        super::signins::note_challenge(&config.name, challenge.as_deref());
    }
    let why = match Recourse::after(&refusal, attempt, record.is_some(), &config.name) {
        Recourse::GiveUp(why) => why,
        Recourse::Refresh => {
            let fresh = match &record {
                Some(record) => super::signins::refresh_after_refusal(&config, record).await,
                None => None,
            };
            if let Some(fresh) = fresh {
                let mut c = client.borrow_mut();
                c.session.set_auth(Some(fresh));
                return machine.authorized(&mut c.session, now_ms());
            }
            Recourse::refresh_failed(&config.name)
        }
    };
    machine.unauthorized(why);
}

/// The outputs that need no waiting: a request whose answer is not read, a note of a change.
fn perform(client: &Shared, output: Output) {
    match output {
        Output::Post(request) => drop(fetch(request)),
        Output::Event(event) => {
            let mut client = client.borrow_mut();
            client.tools.event(&event);
            client.listing.event(&event);
        }
        _ => {}
    }
}

/// Opens the stream for server messages (`notifications/tools/list_changed` above all): the GET
/// stream, or `subscriptions/listen` in 2026-07-28, and reads it in the background until the
/// session ends. A server without one (405, or any other
/// refusal) is fine: messages then come only on the answers to requests.
async fn listen(client: &Shared) {
    if !client.borrow().listens {
        return;
    }
    if let Some(previous) = client.borrow_mut().listening.take() {
        abort_fetch(&previous);
    }
    let mut machine = Exchange::new(Settings::extension(&client.borrow().config));
    machine.listen(&mut client.borrow_mut().session);
    let Some(Output::Send { stream, request }) = machine.poll() else {
        return;
    };
    let Ok(Some(handle)) = timer::within(fetch(request), crate::core::limits::MCP_LISTEN_MS).await
    else {
        return;
    };
    let head = head(&handle);
    machine.handle_head(&mut client.borrow_mut().session, stream, head, now_ms());
    if client.borrow().connection == Connection::Closed || machine.listening() != Listening::Open {
        abort_fetch(&handle);
        return;
    }
    client.borrow_mut().listening = Some(handle.clone());
    let client = client.clone();
    wasm_bindgen_futures::spawn_local(async move {
        while machine.listening() == Listening::Open {
            let Ok(Some(piece)) = super::io::read(&handle).await else {
                break;
            };
            machine.handle_body(
                &mut client.borrow_mut().session,
                stream,
                piece.as_bytes(),
                now_ms(),
            );
            while let Some(output) = machine.poll() {
                perform(&client, output);
            }
        }
        // Its end: a `subscriptions/listen` is no longer waited for.
        machine.handle_end(&mut client.borrow_mut().session, stream, None, now_ms());
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

/// Ms until the machine's next deadline.
fn left(machine: &Exchange) -> u32 {
    machine.wait_ms(now_ms())
}
