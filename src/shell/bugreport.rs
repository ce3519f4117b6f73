//! The tab's snapshot for `bugReport` (the host's `BugReport`, opened by the door, gathers
//! and assembles the rest, every key masked): its page, screenshot and versions.

use serde_json::Value;
use wasm_bindgen::JsValue;

use super::{convert, io};

/// The tab's snapshot (`Tabs::Snapshot`): its page and screenshot, the user agent and the
/// extension's version (`null` when it could not be read).
pub(crate) async fn snapshot(tab_id: Option<i64>) -> Value {
    let tab_id = tab_id.map_or(JsValue::NULL, |t| JsValue::from(t as f64));
    convert::to_json(&io::tab_snapshot(tab_id).await).unwrap_or_default()
}
