//! The bindings of `io.js`, the I/O primitives the wasm imports (fetch with a streaming body
//! and abort, storage, clock, timers, Chrome's `LanguageModel`), and the one fetch and
//! response-head reading that the MCP client and the sign-in share.

use js_sys::Promise;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::core::http::HttpRequest;
use crate::core::mcp::exchange::Head;

#[wasm_bindgen(module = "/src/shell/io.js")]
extern "C" {
    #[wasm_bindgen(js_name = startFetch, catch)]
    pub(crate) async fn start_fetch(
        url: &str,
        method: &str,
        headers: JsValue,
        body: &str,
    ) -> Result<JsValue, JsValue>;
    /// A fetch handle's status (0 without one).
    #[wasm_bindgen(js_name = fetchStatus)]
    pub(crate) fn fetch_status(handle: &JsValue) -> u16;
    /// A header of a fetch handle's answer.
    #[wasm_bindgen(js_name = fetchHeader)]
    pub(crate) fn fetch_header(handle: &JsValue, name: &str) -> Option<String>;
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
    /// Every key the area holds (`chrome.storage.<area>.getKeys()`).
    #[wasm_bindgen(js_name = storageKeys, catch)]
    pub(crate) async fn storage_keys(area: &str) -> Result<JsValue, JsValue>;
    /// Everything the area holds, as one object (read when a write found the area full).
    #[wasm_bindgen(js_name = storageAll, catch)]
    pub(crate) async fn storage_all(area: &str) -> Result<JsValue, JsValue>;
    /// Keeps the service worker from idling out until the returned function is called.
    #[wasm_bindgen(js_name = keepAlive)]
    pub(crate) fn keep_alive(ms: u32) -> js_sys::Function;
    #[wasm_bindgen(js_name = nowMs)]
    pub(crate) fn now_ms() -> f64;
    /// Whether `webmcpHost.use` set middleware layers.
    #[wasm_bindgen(js_name = hasLayers)]
    pub(crate) fn has_layers() -> bool;
    /// A tool call's answer through the layers: `info` as they see it, `next()` the call,
    /// `stop` settled when the run stops or ends (their abort signal).
    #[wasm_bindgen(js_name = throughLayers)]
    pub(crate) async fn through_layers(
        info: JsValue,
        next: js_sys::Function,
        stop: Promise,
    ) -> JsValue;
    /// Whether `webmcpHost.repairHook` set a hook.
    #[wasm_bindgen(js_name = hasRepairHook)]
    pub(crate) fn has_repair_hook() -> bool;
    /// The repair hook's answer (bounded in time; `null` when it has none or threw).
    #[wasm_bindgen(js_name = askRepairHook)]
    pub(crate) async fn ask_repair_hook(request: JsValue, ms: u32) -> JsValue;
    #[wasm_bindgen(js_name = utcOffsetMinutes)]
    pub(crate) fn utc_offset_minutes() -> i32;
    #[wasm_bindgen(js_name = postBytes)]
    pub(crate) async fn post_bytes(url: &str, headers: JsValue, body: &[u8], ms: u32) -> JsValue;
    #[wasm_bindgen(js_name = tabSnapshot)]
    pub(crate) async fn tab_snapshot(tab_id: JsValue) -> JsValue;
    /// The tab back on `url`, freshly loaded (`evaluate({reload: true})`).
    #[wasm_bindgen(js_name = reloadTab, catch)]
    pub(crate) async fn reload_tab(tab_id: f64, url: &str, ms: u32) -> Result<JsValue, JsValue>;
    /// Loads `url` in the tab once; resolves to the URL its top frame landed on.
    #[wasm_bindgen(js_name = loadTab, catch)]
    pub(crate) async fn load_tab(tab_id: f64, url: &str, ms: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = sleep)]
    pub(crate) fn sleep(ms: u32) -> Promise;
    /// The sign-in tab: `heard(event, a, b)` hears its events until it returns true.
    #[wasm_bindgen(js_name = watchTab, catch)]
    pub(crate) async fn watch_tab(
        url: &str,
        heard: &js_sys::Function,
        ms: u32,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = randomId)]
    pub(crate) fn random_id() -> String;
    /// Random text from `crypto.randomUUID` (hex digits only), `uuids` of them.
    #[wasm_bindgen(js_name = randomHex)]
    pub(crate) fn random_hex(uuids: u32) -> String;
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

/// Starts a fetch of `request` (every header the core's); resolves to its handle.
pub(crate) fn fetch(request: HttpRequest) -> Promise {
    let headers = super::convert::headers(&request.headers);
    future_to_promise(async move {
        start_fetch(&request.url, &request.method, headers.into(), &request.body).await
    })
}

/// The answer's status and the headers the core reads.
pub(crate) fn head(handle: &JsValue) -> Head {
    Head::read(fetch_status(handle), |name| fetch_header(handle, name))
}
