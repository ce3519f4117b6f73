//! The bindings of `io.js`, the I/O primitives the wasm imports (fetch with a streaming body
//! and abort, storage, clock, timers, Chrome's `LanguageModel`).

use js_sys::Promise;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/shell/io.js")]
extern "C" {
    #[wasm_bindgen(js_name = startFetch, catch)]
    pub(crate) async fn start_fetch(
        url: &str,
        method: &str,
        headers: JsValue,
        body: &str,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = abortFetch)]
    pub(crate) fn abort_fetch(handle: &JsValue);
    #[wasm_bindgen(js_name = storageGet, catch)]
    pub(crate) async fn storage_get(area: &str, key: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = storageSet, catch)]
    pub(crate) async fn storage_set(
        area: &str,
        key: &str,
        value: JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = storageRemove, catch)]
    pub(crate) async fn storage_remove(area: &str, key: &str) -> Result<JsValue, JsValue>;
    /// Keeps the service worker from idling out until the returned function is called.
    #[wasm_bindgen(js_name = keepAlive)]
    pub(crate) fn keep_alive() -> js_sys::Function;
    #[wasm_bindgen(js_name = nowMs)]
    pub(crate) fn now_ms() -> f64;
    #[wasm_bindgen(js_name = utcOffsetMinutes)]
    pub(crate) fn utc_offset_minutes() -> i32;
    #[wasm_bindgen(js_name = sleep)]
    pub(crate) fn sleep(ms: u32) -> Promise;
    #[wasm_bindgen(js_name = deferred)]
    pub(crate) fn deferred() -> JsValue;
    #[wasm_bindgen(js_name = randomId)]
    pub(crate) fn random_id() -> String;
    #[wasm_bindgen(js_name = raceStop, catch)]
    pub(crate) async fn race_stop(promise: Promise, stop: Promise) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = callMethod, catch)]
    pub(crate) fn call_method(object: &JsValue, method: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = chromeModelAvailability)]
    pub(crate) async fn chrome_model_availability() -> JsValue;
    #[wasm_bindgen(js_name = chromeModelPrompt, catch)]
    pub(crate) async fn chrome_model_prompt(
        system: &str,
        turns: JsValue,
        stop: Promise,
    ) -> Result<JsValue, JsValue>;
}
