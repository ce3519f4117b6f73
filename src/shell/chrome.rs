//! The `chrome.*` calls the worker makes. Each is caught: where an API is missing (a test
//! worker, an older browser) the caller gets an error message, not a thrown exception.

use js_sys::Promise;
use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::convert::{describe, from_json, to_json};
use crate::core::host::io::{Frame, FrameState, Tab};
use crate::core::page::tabs::frames;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = sendMessage)]
    fn tabs_send_message(
        tab_id: f64,
        message: &JsValue,
        options: &JsValue,
    ) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "webNavigation"], js_name = getAllFrames)]
    fn web_navigation_get_all_frames(details: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "webNavigation"], js_name = getFrame)]
    fn web_navigation_get_frame(details: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "scripting"], js_name = executeScript)]
    fn scripting_execute_script(injection: &JsValue) -> Result<Promise, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = query)]
    fn tabs_query(query: &JsValue) -> Result<Promise, JsValue>;
    /// `console.warn(text)`.
    #[wasm_bindgen(js_namespace = console, js_name = warn)]
    pub fn warn(text: &str);
}

#[wasm_bindgen(module = "/src/shell/frames.js")]
extern "C" {
    #[wasm_bindgen(catch, js_name = frameSend)]
    fn frame_send(
        tab_id: f64,
        options: &JsValue,
        message: &JsValue,
        most: u32,
    ) -> Result<Promise, JsValue>;
}

/// Every frame of a tab, from `chrome.webNavigation.getAllFrames`.
pub async fn all_frames(tab_id: i64) -> Result<Vec<Frame>, String> {
    let details = from_json(&serde_json::json!({ "tabId": tab_id }));
    let failed = |e: JsValue| format!("tab {tab_id}: {}", describe(&e));
    let promise = web_navigation_get_all_frames(&details).map_err(failed)?;
    let listed = JsFuture::from(promise).await.map_err(failed)?;
    frames(tab_id, &to_json(&listed).unwrap_or(Value::Null))
}

/// Sends a request to one frame's page bridge (only to the document the target names, if
/// any), over the port kept for that frame (`frames.js`).
pub fn send_to_frame(tab_id: i64, to: impl Into<super::Target>, message: &JsValue) -> Promise {
    let options = from_json(&to.into().options());
    let most = crate::core::limits::FRAME_PORTS_MAX;
    frame_send(tab_id as f64, &options, message, most).unwrap_or_else(|e| Promise::reject(&e))
}

/// Sends a message to every content script of one frame (`chrome.tabs.sendMessage`): for the
/// listeners that hear messages, not the bridge's port (the exposure script, `expose.js`).
pub fn message_frame(tab_id: i64, to: impl Into<super::Target>, message: &JsValue) -> Promise {
    let options = from_json(&to.into().options());
    tabs_send_message(tab_id as f64, message, &options).unwrap_or_else(|e| Promise::reject(&e))
}

/// Where a frame stands now (`chrome.webNavigation.getFrame`); `None` when the frame or its
/// tab is gone.
pub async fn frame_state(tab_id: i64, frame_id: i64) -> Option<FrameState> {
    let details = from_json(&serde_json::json!({ "tabId": tab_id, "frameId": frame_id }));
    let promise = web_navigation_get_frame(&details).ok()?;
    FrameState::of(&to_json(&JsFuture::from(promise).await.ok()?).ok()?)
}

/// Every tab of the browser (an empty list when the API is missing), asked for at once.
pub fn tabs() -> impl std::future::Future<Output = Vec<Tab>> {
    let asked = tabs_query(&js_sys::Object::new());
    async move {
        let Ok(promise) = asked else {
            return Vec::new();
        };
        match JsFuture::from(promise).await.map(|list| to_json(&list)) {
            Ok(Ok(list)) => Tab::list(&list),
            _ => Vec::new(),
        }
    }
}

/// Every tab of the browser as `chrome.tabs.query` answers (with titles and URLs), or null.
pub async fn tab_list() -> Value {
    let Ok(promise) = tabs_query(&js_sys::Object::new()) else {
        return Value::Null;
    };
    match JsFuture::from(promise).await.map(|list| to_json(&list)) {
        Ok(Ok(list)) => list,
        _ => Value::Null,
    }
}

/// Injects the page bridge (both worlds, every frame) into a tab whose content scripts are
/// gone: a tab opened before the extension was installed, reloaded or updated keeps the old,
/// orphaned scripts, which no longer hear the worker.
pub async fn inject_bridge(tab_id: i64) -> Result<(), String> {
    for (file, world) in [
        ("content-script/isolated.js", "ISOLATED"),
        ("content-script/main.js", "MAIN"),
    ] {
        let injection = from_json(&serde_json::json!({
            "target": {"tabId": tab_id, "allFrames": true},
            "files": [file],
            "world": world,
        }));
        let promise = scripting_execute_script(&injection)
            .map_err(|e| format!("tab {tab_id}: {}", describe(&e)))?;
        JsFuture::from(promise).await.map_err(|e| {
            format!(
                "tab {tab_id}: the page bridge could not be injected: {}",
                describe(&e)
            )
        })?;
    }
    Ok(())
}
