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

use js_sys::Promise;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{self, describe};
use super::io::{
    abort_fetch, fetch, fetch_header, fetch_status, fetch_text, now_ms, random_hex, storage_get,
    storage_set, watch_tab,
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

/// `f` on the last step-up challenge per server (for the next sign-in).
fn with_challenges<T>(f: impl FnOnce(&mut HashMap<String, String>) -> T) -> T {
    super::state::host(|host| f(&mut host.challenges.borrow_mut()))
}

/// Both storage areas' records, as they are now.
async fn records() -> Records {
    let read = |area: Area| async move {
        let stored = storage_get(area.name(), area.key()).await.ok()?;
        convert::to_json(&stored).ok()
    };
    Records::read(read(Area::Session).await, read(Area::Local).await)
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
        with_challenges(|c| c.insert(server.to_owned(), header.to_owned()));
    }
}

/// One request of a sign-in: status (0 when there was no answer) and body (capped).
async fn http(request: &HttpRequest) -> (u16, String) {
    match fetch_text(request.clone(), REQUEST_MS, MAX_AUTH_BODY_BYTES).await {
        Ok(Some(answer)) => answer,
        Ok(None) => (0, "no answer in time".into()),
        Err(error) => (0, error),
    }
}

/// Asks the server once without a token (only the head is read).
async fn probe_server(config: &McpServerConfig) -> Probe {
    match timer::within(fetch(probe(config)), REQUEST_MS).await {
        Ok(Some(handle)) => {
            let header = fetch_header(&handle, "www-authenticate");
            abort_fetch(&handle);
            Probe::Answered {
                status: fetch_status(&handle),
                www_authenticate: header,
            }
        }
        Ok(None) => Probe::Timeout,
        Err(error) => Probe::Unreachable(error),
    }
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "identity"], js_name = launchWebAuthFlow)]
    fn launch_web_auth_flow(details: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "identity"], js_name = getRedirectURL)]
    fn redirect_url(path: &str) -> Result<String, JsValue>;
}

/// The authorization step: `launchWebAuthFlow`, else a tab. Resolves to the redirect URL and
/// which way it came.
async fn authorize(url: &str, redirect: &str, via: Via) -> Result<(String, Via), String> {
    if via == Via::Tab {
        return in_tab(url, redirect).await.map(|u| (u, Via::Tab));
    }
    let details = convert::from_json(&json!({"url": url, "interactive": true}));
    let started = now_ms();
    let outcome = match launch_web_auth_flow(&details) {
        Ok(promise) => timer::within(promise, SIGN_IN_MS).await,
        Err(error) => Err(describe(&error)),
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

/// Opens `url` in a tab (`watchTab` of `io.js`) and resolves with the first URL of that tab
/// that the core's [`TabWatch`] takes for the redirect (which then fails to load: it is never
/// loaded); the tab is closed. Closing the tab first ends the sign-in.
async fn in_tab(url: &str, redirect: &str) -> Result<String, String> {
    let mut watch = TabWatch::new(redirect);
    let end: Rc<RefCell<Option<TabEnd>>> = Rc::default();
    let ending = end.clone();
    let heard = Closure::<dyn FnMut(String, JsValue, JsValue) -> bool>::new(
        move |event: String, a: JsValue, b: JsValue| {
            let args = [a, b].map(|v| convert::to_json(&v).unwrap_or_default());
            let ended = TabEvent::read(&event, &args).and_then(|e| watch.event(e));
            let Some(ended) = ended else { return false };
            ending.borrow_mut().get_or_insert(ended);
            true
        },
    );
    watch_tab(url, heard.as_ref().unchecked_ref(), SIGN_IN_MS)
        .await
        .map_err(|e| describe(&e))?;
    let ended = end.borrow_mut().take();
    match ended {
        Some(TabEnd::Redirected(url)) => Ok(url),
        Some(TabEnd::Closed) => Err(Abandoned::TabClosed.to_string()),
        None => Err(Abandoned::Timeout.to_string()),
    }
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
pub async fn sign_in(request: &Value) -> Result<Value, String> {
    let request = SignInRequest::parse(request).map_err(|e| e.to_string())?;
    let config = server_named(&request.server).await?;
    let signed_in = sign_in_to(&config, &request)
        .await
        .unwrap_or_else(SignedIn::Failed);
    if matches!(signed_in, SignedIn::Yes(..)) {
        end_kept(&config.name);
    }
    Ok(signed_in.answer(&config.name, now_ms()))
}

async fn sign_in_to(config: &McpServerConfig, request: &SignInRequest) -> Result<SignedIn, String> {
    let previous = records().await.find(config);
    let noted = with_challenges(|c| c.get(&config.name).cloned());
    let challenge = match noted {
        Some(header) => header,
        None => match probe_server(config).await.challenge()? {
            Some(header) => header,
            None => return Ok(SignedIn::NotNeeded),
        },
    };
    let redirect = redirect_url(REDIRECT_PATH).map_err(|e| describe(&e))?;
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
                with_challenges(|c| c.remove(&config.name));
                return Ok(SignedIn::Yes(Box::new(record), area, via));
            }
            Step::Failed(why) => return Err(why),
        }
    }
}

/// `signOut({server})`: forgets the server's tokens (both storage areas). Resolves to
/// `{ok: true, signedOut}` (`signedOut`: there was a sign-in).
pub async fn sign_out(request: &Value) -> Result<Value, String> {
    let name = crate::core::mcp::auth::sign_out_server(request).map_err(|e| e.to_string())?;
    let writes = records().await.forget(name);
    let found = !writes.is_empty();
    write(writes).await?;
    with_challenges(|c| c.remove(name));
    end_kept(name);
    Ok(signed_out(name, found))
}

/// Ends every kept connection to server `name`, in both pools (exposures, calls by hand):
/// after a sign-out or a new sign-in none goes on with the token it held. (A refresh that
/// failed is caught when the connection is next used: `kept` compares the stored sign-in.)
fn end_kept(name: &str) {
    super::expose::end_kept(name);
    super::workbench::end_kept(name);
}

/// `authState()`: each configured server's sign-in, without any token ([`Records::state`]).
pub async fn auth_state() -> Result<Value, String> {
    let servers = load_servers().await?;
    Ok(records().await.state(&servers, now_ms()))
}
