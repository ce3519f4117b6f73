//! MCP authorization in the worker: `signIn`, `signOut`, `authState`, and the tokens the
//! worker's MCP client ([`super::mcp`]) sends. Every decision is the core's
//! ([`crate::core::mcp::auth`]: the sign-in [`Flow`], [`Records`], [`SignInRequest`],
//! [`Probe`], [`TabWatch`]); this file performs them.
//!
//! A sign-in runs the flow: its requests with fetch, its authorization step with
//! `chrome.identity.launchWebAuthFlow` (redirect URI `chrome.identity.getRedirectURL("mcp")`).
//! Where that cannot show its window (it fails at once, as in a headless browser), the
//! authorization URL opens in a tab instead and the redirect to the same URI is caught from
//! `chrome.tabs.onUpdated` / `chrome.webNavigation.onErrorOccurred` (the tab is closed then).
//! The records live in `chrome.storage.session` (trusted contexts only: never content
//! scripts), or with `remember: true` in `chrome.storage.local`. No token is ever returned by
//! an operation, put in an event, a log or an error text.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use js_sys::{Function, Promise, Reflect};
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::convert::{self, describe};
use super::io::{
    abort_fetch, call_method, fetch, fetch_header, fetch_status, now_ms, random_hex, storage_get,
    storage_set,
};
use super::store::load_servers;
use super::timer;
use crate::core::mcp::auth::{
    probe, signed_out, unknown_server, Abandoned, Area, AuthRecord, Flow, FlowSecrets, Probe,
    Records, SignInRequest, SignedIn, Step, TabEnd, TabEvent, TabWatch, TokenState, Via, Write,
    MAX_AUTH_BODY_BYTES, REDIRECT_PATH, REQUEST_MS, SIGN_IN_MS,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::provider::HttpRequest;

thread_local! {
    /// The last step-up challenge (403 insufficient_scope) per server, for the next sign-in.
    static CHALLENGES: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// Both storage areas' records, as they are now.
async fn records() -> Records {
    let mut maps = Vec::new();
    for area in Area::ALL {
        let read = storage_get(area.name(), area.key()).await.ok();
        maps.push(read.and_then(|v| convert::to_json(&v).ok()));
    }
    let local = maps.pop().flatten();
    Records::read(maps.pop().flatten(), local)
}

async fn write(writes: Vec<Write>) -> Result<(), String> {
    for Write { area, map } in writes {
        let value = convert::from_json(&map);
        storage_set(area.name(), area.key(), value)
            .await
            .map_err(|e| describe(&e))?;
    }
    Ok(())
}

/// The record to use for a connection to `config`: refreshed first when due; `None` when
/// there is none (or it expired and cannot be refreshed).
pub(crate) async fn record_for(config: &McpServerConfig) -> Option<AuthRecord> {
    let (record, area) = records().await.find(config)?;
    match record.token_state(now_ms()) {
        TokenState::Fresh => Some(record),
        TokenState::Refresh => refresh(config, record, area).await,
        TokenState::Expired => None,
    }
}

/// After a 401 with a record: a refresh, when the record can be refreshed.
pub(crate) async fn refresh_after_refusal(
    config: &McpServerConfig,
    record: &AuthRecord,
) -> Option<AuthRecord> {
    record.tokens.refresh_token.as_ref()?;
    let area = records().await.find(config).map_or(Area::Session, |f| f.1);
    refresh(config, record.clone(), area).await
}

async fn refresh(
    config: &McpServerConfig,
    mut record: AuthRecord,
    area: Area,
) -> Option<AuthRecord> {
    let (status, body) = http(&record.refresh_request()?).await;
    record.refreshed(status, &body, now_ms()).ok()?;
    let _ = write(records().await.store(&config.name, &record, area)).await;
    Some(record)
}

/// A 403 `insufficient_scope` seen on a server: the next sign-in asks for that scope.
pub(crate) fn note_challenge(server: &str, www_authenticate: Option<&str>) {
    if let Some(header) = www_authenticate {
        CHALLENGES.with(|c| c.borrow_mut().insert(server.to_owned(), header.to_owned()));
    }
}

/// Sends `request` within [`REQUEST_MS`]: its fetch handle and status.
async fn send(request: &HttpRequest) -> Result<Option<(JsValue, u16)>, String> {
    let sent = timer::within(fetch(request.clone()), REQUEST_MS).await?;
    Ok(sent.map(|handle| (handle.clone(), fetch_status(&handle))))
}

/// One request of a sign-in: status (0 when there was no answer) and body (capped).
async fn http(request: &HttpRequest) -> (u16, String) {
    let (handle, status) = match send(request).await {
        Ok(Some(sent)) => sent,
        Ok(None) => return (0, "no answer in time".into()),
        Err(error) => return (0, error),
    };
    let text = call_method(&handle, "text").map(Promise::from);
    let mut text = match text.map(|p| timer::within(p, REQUEST_MS)) {
        Ok(reading) => match reading.await {
            Ok(Some(text)) => text.as_string().unwrap_or_default(),
            _ => (abort_fetch(&handle), String::new()).1,
        },
        Err(_) => String::new(),
    };
    text.truncate(MAX_AUTH_BODY_BYTES + 1);
    (status, text)
}

/// Asks the server once without a token (only the head is read).
async fn probe_server(config: &McpServerConfig) -> Probe {
    match send(&probe(config)).await {
        Ok(Some((handle, status))) => {
            let header = fetch_header(&handle, "www-authenticate");
            abort_fetch(&handle);
            Probe::Answered {
                status,
                www_authenticate: header,
            }
        }
        Ok(None) => Probe::Timeout,
        Err(error) => Probe::Unreachable(error),
    }
}

fn chrome_api(name: &str) -> Result<JsValue, String> {
    let chrome = Reflect::get(&js_sys::global(), &"chrome".into()).map_err(|e| describe(&e))?;
    Reflect::get(&chrome, &name.into())
        .ok()
        .filter(|v| v.is_object())
        .ok_or_else(|| format!("chrome.{name} is not available"))
}

/// `chrome.<api>.<name>` (`api` for the error), to call with `target` as `this`.
fn method(target: &JsValue, api: &str, name: &str) -> Result<Function, String> {
    let function = Reflect::get(target, &name.into()).ok();
    function
        .and_then(|f| f.dyn_into::<Function>().ok())
        .ok_or_else(|| format!("chrome.{api}.{name} is missing"))
}

/// Calls `chrome.<api>.<name>(args…)`.
fn chrome_call(
    target: &JsValue,
    api: &str,
    name: &str,
    args: &[JsValue],
) -> Result<JsValue, String> {
    let args: js_sys::Array = args.iter().collect();
    method(target, api, name)?
        .apply(target, &args)
        .map_err(|e| describe(&e))
}

/// The authorization step: `launchWebAuthFlow`, else a tab. Resolves to the redirect URL and
/// which way it came.
async fn authorize(url: &str, redirect: &str, via: Via) -> Result<(String, Via), String> {
    if via == Via::Tab {
        return in_tab(url, redirect).await.map(|u| (u, Via::Tab));
    }
    let details = convert::from_json(&json!({"url": url, "interactive": true}));
    let started = now_ms();
    let identity = chrome_api("identity")?;
    let launch = method(&identity, "identity", "launchWebAuthFlow")?;
    let outcome = match launch.call1(&identity, &details).map_err(|e| describe(&e)) {
        Ok(promise) => timer::within(Promise::from(promise), SIGN_IN_MS).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(Some(value)) => Ok((
            value.as_string().ok_or(Abandoned::NoAnswer.to_string())?,
            via,
        )),
        Ok(None) => Err(Abandoned::Timeout.to_string()),
        Err(error) => match Via::after_window_failed(now_ms() - started) {
            Some(Via::Tab) => in_tab(url, redirect).await.map(|u| (u, Via::Tab)),
            _ => Err(error),
        },
    }
}

/// Opens `url` in a tab and resolves with the first URL of that tab that the core's
/// [`TabWatch`] takes for the redirect (which then fails to load: it is never loaded); the
/// tab is closed. Closing the tab first ends the sign-in.
async fn in_tab(url: &str, redirect: &str) -> Result<String, String> {
    let (tabs, navigation) = (chrome_api("tabs")?, chrome_api("webNavigation")?);
    let done = super::io::deferred();
    let resolve: Function = Reflect::get(&done, &"resolve".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or("no resolver")?;
    let watch = Rc::new(RefCell::new(TabWatch::new(redirect)));
    let end: Rc<RefCell<Option<TabEnd>>> = Rc::default();
    let field = |v: &JsValue, k: &str| Reflect::get(v, &k.into()).ok();
    let listener = |event: &'static str| {
        let (watch, end, resolve) = (watch.clone(), end.clone(), resolve.clone());
        Closure::<dyn Fn(JsValue, JsValue)>::new(move |a: JsValue, b: JsValue| {
            let args = [a, b].map(|v| convert::to_json(&v).unwrap_or_default());
            let heard = TabEvent::read(event, &args).and_then(|e| watch.borrow().event(e));
            if let Some(ended) = heard {
                end.borrow_mut().get_or_insert(ended);
                let _ = resolve.call0(&JsValue::NULL);
            }
        })
    };
    let events = [
        (&tabs, "onUpdated"),
        (&navigation, "onErrorOccurred"),
        (&tabs, "onRemoved"),
    ];
    let listeners = events.map(|(api, event)| (api, event, listener(event)));
    let listen = |method: &str| {
        for (api, event, f) in &listeners {
            if let Some(target) = field(api, event) {
                let _ = chrome_call(&target, event, method, &[f.as_ref().clone()]);
            }
        }
    };
    listen("addListener");
    let properties = convert::from_json(&json!({"url": "about:blank", "active": true}));
    let mut opened = None;
    let outcome: Result<String, String> = async {
        let created = chrome_call(&tabs, "tabs", "create", &[properties])?;
        let tab = JsFuture::from(Promise::from(created))
            .await
            .map_err(|e| describe(&e))?;
        let id = field(&tab, "id")
            .and_then(|v| v.as_f64())
            .ok_or("the sign-in tab has no id")?;
        opened = Some(id);
        watch.borrow_mut().opened(id);
        // Only now the authorization page: every navigation of the tab is watched.
        let change = convert::from_json(&json!({ "url": url }));
        let updated = chrome_call(&tabs, "tabs", "update", &[id.into(), change])?;
        let _ = JsFuture::from(Promise::from(updated)).await;
        let promise = Promise::from(field(&done, "promise").unwrap_or_default());
        match timer::within(promise, SIGN_IN_MS).await? {
            None => Err(Abandoned::Timeout.to_string()),
            Some(_) => match end.borrow_mut().take() {
                Some(TabEnd::Redirected(url)) => Ok(url),
                _ => Err(Abandoned::TabClosed.to_string()),
            },
        }
    }
    .await;
    listen("removeListener");
    if let Some(Ok(removed)) = opened.map(|id| chrome_call(&tabs, "tabs", "remove", &[id.into()])) {
        let _ = JsFuture::from(Promise::from(removed)).await;
    }
    outcome
}

async fn server_named(name: &str) -> Result<McpServerConfig, String> {
    let servers = load_servers().await?;
    servers
        .into_iter()
        .find(|s| s.name == name)
        .ok_or_else(|| unknown_server(name))
}

/// `signIn({server, remember?, clientId?, clientSecret?, inTab?})`: signs in to a configured
/// MCP server; resolves to [`SignedIn::answer`], never a token.
pub async fn sign_in(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let request = SignInRequest::parse(&request).map_err(js_err)?;
    let config = server_named(&request.server).await.map_err(js_err)?;
    let signed_in = sign_in_to(&config, &request)
        .await
        .unwrap_or_else(SignedIn::Failed);
    Ok(convert::from_json(
        &signed_in.answer(&config.name, now_ms()),
    ))
}

async fn sign_in_to(config: &McpServerConfig, request: &SignInRequest) -> Result<SignedIn, String> {
    let previous = records().await.find(config);
    let noted = CHALLENGES.with(|c| c.borrow().get(&config.name).cloned());
    let challenge = match noted {
        Some(header) => header,
        None => match probe_server(config).await.challenge()? {
            Some(header) => header,
            None => return Ok(SignedIn::NotNeeded),
        },
    };
    let identity = chrome_api("identity")?;
    let redirect = chrome_call(
        &identity,
        "identity",
        "getRedirectURL",
        &[REDIRECT_PATH.into()],
    )?
    .as_string()
    .ok_or("no redirect URL")?;
    let flow_config = request.flow(config, &redirect, &challenge, previous.clone().map(|p| p.0));
    let secrets = FlowSecrets {
        verifier: random_hex(2),
        state: random_hex(1),
    };
    let mut flow = Flow::new(flow_config, secrets);
    let mut via = request.via;
    loop {
        match flow.step() {
            Step::Fetch(request) => {
                let (status, body) = http(&request).await;
                flow.response(status, &body, now_ms());
            }
            Step::Authorize { url } => match authorize(&url, &redirect, request.via).await {
                Ok((back, how)) => {
                    via = how;
                    flow.redirected(&back);
                }
                Err(why) => flow.abandoned(&why),
            },
            Step::Done(record) => {
                let area = Area::for_sign_in(request.remember, previous.map(|p| p.1));
                write(records().await.store(&config.name, &record, area)).await?;
                CHALLENGES.with(|c| c.borrow_mut().remove(&config.name));
                return Ok(SignedIn::Yes(Box::new(record), area, via));
            }
            Step::Failed(why) => return Err(why),
        }
    }
}

/// `signOut({server})`: forgets the server's tokens (both storage areas). Resolves to
/// `{ok: true, signedOut}` (`signedOut`: there was a sign-in).
pub async fn sign_out(request: JsValue) -> Result<JsValue, JsError> {
    let request = convert::to_json(&request).map_err(js_err)?;
    let name = crate::core::mcp::auth::sign_out_server(&request).map_err(js_err)?;
    let writes = records().await.forget(name);
    let found = !writes.is_empty();
    write(writes).await.map_err(js_err)?;
    CHALLENGES.with(|c| c.borrow_mut().remove(name));
    Ok(convert::from_json(&signed_out(name, found)))
}

/// `authState()`: each configured server's sign-in, without any token ([`Records::state`]).
pub async fn auth_state() -> Result<JsValue, JsError> {
    let servers = load_servers().await.map_err(js_err)?;
    Ok(convert::from_json(
        &records().await.state(&servers, now_ms()),
    ))
}

fn js_err(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}
