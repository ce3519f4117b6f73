//! The extension's open pages (popup, side panel) as the worker reaches them: the push of a
//! run's news (and of a frame's changed tools) to every open page, and the I/O primitives of `ui.js` the person's side needs
//! (a storage area's whole content, the extension's origin).
//!
//! Invariant: a push is fire-and-forget; nobody listening is fine, and nothing waits for it.

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::convert;

#[wasm_bindgen(module = "/src/shell/ui.js")]
extern "C" {
    fn broadcast(message: JsValue);
    #[wasm_bindgen(js_name = storageAll, catch)]
    pub(crate) async fn storage_all(area: &str) -> Result<JsValue, JsValue>;
    /// `chrome.runtime.id`, when this context has one.
    #[wasm_bindgen(js_name = runtimeId)]
    pub(crate) fn runtime_id() -> Option<String>;
    #[wasm_bindgen(js_name = extensionOrigin)]
    pub(crate) fn extension_origin() -> String;
    #[wasm_bindgen(js_name = showQuestion)]
    async fn show_question_js() -> JsValue;
}

/// Makes sure the person sees the extension's Pending view (`ui.js`'s `showQuestion`): an
/// open page of the extension's own UI is told by the push `pending`; with none open, a small
/// window of the extension opens on it (or the one opened before is focused). What it did:
/// `shown`, `focused`, `opened` or `failed: …`.
pub(crate) async fn show_question() -> String {
    show_question_js()
        .await
        .as_string()
        .unwrap_or_else(|| "failed: no answer".into())
}

/// Pushes `{webmcpHostUi: kind, ...body}` to every open page of the extension.
pub(crate) fn push(kind: &str, body: Value) {
    let mut message = json!({"webmcpHostUi": kind});
    if let (Value::Object(target), Value::Object(body)) = (&mut message, body) {
        target.extend(body);
    }
    broadcast(convert::from_json(&message));
}

/// A frame's tools changed: the tab's kept listing is forgotten, and the open pages list the
/// tab's tools again.
pub(crate) fn on_tools_changed(tab_id: i64, frame_id: i64) {
    super::forget_listing(Some(tab_id));
    push(
        "toolsChanged",
        json!({"tabId": tab_id, "frameId": frame_id}),
    );
}
