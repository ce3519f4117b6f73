//! Conversions at the shell's edge: JS values to JSON text and back, and Chrome's
//! `MessageSender` to the core's [`SenderInfo`]. Failures are messages, never panics.

use js_sys::{Reflect, JSON};
use serde_json::Value;
use wasm_bindgen::prelude::*;

use crate::core::ops::SenderInfo;

/// A JS value as JSON text. `undefined`, functions, cycles and BigInts are errors.
pub fn to_json_text(value: &JsValue) -> Result<String, String> {
    let text = JSON::stringify(value)
        .map_err(|e| format!("the value cannot be written as JSON: {}", describe(&e)))?;
    text.as_string()
        .ok_or_else(|| "the value is not JSON (undefined or a function)".to_owned())
}

/// A JS value as a JSON value.
pub fn to_json(value: &JsValue) -> Result<Value, String> {
    serde_json::from_str(&to_json_text(value)?).map_err(|e| format!("the value is not JSON: {e}"))
}

/// Request headers as the plain object `fetch` takes.
pub fn headers(pairs: &[(String, String)]) -> js_sys::Object {
    let headers = js_sys::Object::new();
    for (name, value) in pairs {
        let _ = Reflect::set(
            &headers,
            &JsValue::from_str(name),
            &JsValue::from_str(value),
        );
    }
    headers
}

/// A JSON value as a JS value.
pub fn from_json(value: &Value) -> JsValue {
    // Our own serde_json output is always valid JSON for JSON.parse.
    JSON::parse(&value.to_string()).unwrap_or(JsValue::NULL)
}

/// The text of a thrown JS value: an Error's message, or the value as a string.
pub fn describe(error: &JsValue) -> String {
    if let Some(message) = Reflect::get(error, &"message".into())
        .ok()
        .and_then(|m| m.as_string())
    {
        return message;
    }
    error.as_string().unwrap_or_else(|| format!("{error:?}"))
}

fn string_at(object: &JsValue, key: &str) -> Option<String> {
    Reflect::get(object, &key.into()).ok()?.as_string()
}

fn id_at(object: &JsValue, key: &str) -> Option<i64> {
    let n = Reflect::get(object, &key.into()).ok()?.as_f64()?;
    (n.fract() == 0.0 && n.is_finite()).then_some(n as i64)
}

/// The fields of a `chrome.runtime.MessageSender` the checks use.
pub fn sender_info(sender: &JsValue) -> SenderInfo {
    if !sender.is_object() {
        return SenderInfo::default();
    }
    let tab = Reflect::get(sender, &"tab".into()).unwrap_or(JsValue::UNDEFINED);
    SenderInfo {
        id: string_at(sender, "id"),
        url: string_at(sender, "url"),
        origin: string_at(sender, "origin"),
        tab_id: if tab.is_object() {
            id_at(&tab, "id")
        } else {
            None
        },
        frame_id: id_at(sender, "frameId"),
    }
}
