//! MCP authorization in the worker: `signIn`, `signOut`, `authState`, and the tokens the
//! worker's MCP client ([`super::mcp`]) sends (kept and refreshed by [`super::signins`]). Every decision is the core's
//! ([`crate::core::mcp::auth`]: the sign-in [`Flow`], [`Records`](crate::core::mcp::auth::Records), [`SignInRequest`],
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
use std::rc::Rc;

use js_sys::Promise;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{self, describe};
use super::io::{abort_fetch, fetch, fetch_header, fetch_status, now_ms, random_hex, watch_tab};
use super::signins::{http, records, with_challenges, write};
use super::store::load_servers;
use super::timer;
use crate::core::mcp::auth::{
    probe, signed_out, unknown_server, Abandoned, Area, Flow, FlowSecrets, Probe, SignInRequest,
    SignedIn, Step, TabEnd, TabEvent, TabWatch, Via, REDIRECT_PATH, REQUEST_MS, SIGN_IN_MS,
};
use crate::core::mcp::source::McpServerConfig;

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
    super::kept::forget_everywhere(name);
}

/// `authState()`: each configured server's sign-in, without any token ([`Records::state`](crate::core::mcp::auth::Records::state)).
pub async fn auth_state() -> Result<Value, String> {
    let servers = load_servers().await?;
    Ok(records().await.state(&servers, now_ms()))
}
