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
