//! MCP authorization in the worker: what the host's sign-in machines (`signIn`, `signOut`,
//! `authState`, opened by the door) ask of the browser: the redirect URI (`redirect`) and
//! the authorization step only the browser can show (`authorize`; its tab watched as the
//! core's [`TabWatch`] says).
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
use serde_json::json;
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::convert::{self, describe};
use super::io::{now_ms, watch_tab};
use super::timer;
use crate::core::host::io::Via;
use crate::core::mcp::auth::{Abandoned, TabEnd, TabEvent, TabWatch, SIGN_IN_MS};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "identity"], js_name = launchWebAuthFlow)]
    fn launch_web_auth_flow(details: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "identity"], js_name = getRedirectURL)]
    fn redirect_url(path: &str) -> Result<String, JsValue>;
}

/// The authorization step: `launchWebAuthFlow`, else a tab. Resolves to the redirect URL and
/// which way it came.
pub(crate) async fn authorize(
    url: &str,
    redirect: &str,
    via: Via,
) -> Result<(String, Via), String> {
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

/// The sign-in's redirect URI for `path` (`chrome.identity.getRedirectURL`), or why there is
/// none.
pub(crate) fn redirect(path: &str) -> Result<String, String> {
    redirect_url(path).map_err(|e| describe(&e))
}
