//! The service-worker shell: the only code that touches `wasm_bindgen`, `js_sys` and
//! `chrome.*`. It converts JS values to JSON at its edge, asks the core what to do, performs
//! the messaging and timers the core cannot, and hands the core's answers back to JS.
//!
//! Exported to the worker's loader (`worker.js`): the router's `handleMessage`, `call` and
//! `operations` ([`router`]), and `recover` ([`ui`]). None of them panics on bad input: every
//! operation resolves to `{ok: true, value}` or `{ok: false, error}`.

pub mod agent;
pub mod auth;
pub mod chrome;
pub mod convert;
pub mod expose;
pub mod io;
pub mod mcp;
pub mod pages;
pub mod restart;
pub mod router;
pub mod runlog;
pub mod settings;
pub mod timer;
pub mod ui;
pub mod waits;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::core::bridge::{parse_listing, FrameRequest};
use crate::core::limits::{Limits, CONFIRM_MS, FRAME_LIST_MS};
use crate::core::ops::request::{CallToolRequest, ListToolsRequest};
use crate::core::page::call::{CallRequest, Input, PageCall, Step};
use crate::core::page::tabs::{orphaned, FrameAnswer, FrameFailure, TabTools};

/// The host's version.
pub fn version() -> String {
    crate::VERSION.to_owned()
}

/// `webmcpHost.listTools({tabId})` → `{tools, problems}`.
pub async fn list_tools(request: JsValue) -> Result<JsValue, JsError> {
    let request =
        ListToolsRequest::parse(&convert::to_json(&request).map_err(|e| JsError::new(&e))?)
            .map_err(|e| JsError::new(&e.0))?;
    let tools = tab_tools(request.tab_id)
        .await
        .map_err(|e| JsError::new(&e))?;
    Ok(convert::from_json(&tools_response(&tools)))
}

/// `webmcpHost.callTool({tabId, name, args, frameId?, timeoutMs?})` →
/// `{ok:true,result}` | `{ok:true,navigated:true,url?}` | `{ok:false,error}`.
pub async fn call_tool(request: JsValue) -> Result<JsValue, JsError> {
    let request =
        CallToolRequest::parse(&convert::to_json(&request).map_err(|e| JsError::new(&e))?)
            .map_err(|e| JsError::new(&e.0))?;
    Ok(convert::from_json(&run_call(&request).await))
}

/// `listTools`' value: `{tools, problems}`.
pub(crate) fn tools_response(tools: &TabTools) -> Value {
    serde_json::to_value(tools).unwrap_or_else(
        |e| json!({"tools": [], "problems": [{"frameId": 0, "message": e.to_string()}]}),
    )
}

/// Asks every frame of a tab for its tools, all at once, and merges the answers.
pub(crate) async fn tab_tools(tab_id: i64) -> Result<TabTools, String> {
    let mut answers = frame_listings(tab_id).await?;
    if orphaned(&answers) && chrome::inject_bridge(tab_id).await.is_ok() {
        answers = frame_listings(tab_id).await?;
    }
    let mut tools = TabTools::from_frames(answers);
    crate::core::site::apply_stored(load_sites().await, &mut tools);
    Ok(tools)
}

/// Every frame's answer to `listTools`, asked all at once.
async fn frame_listings(tab_id: i64) -> Result<Vec<FrameAnswer>, String> {
    let frames = chrome::all_frames(tab_id).await?;
    let request = convert::from_json(&FrameRequest::ListTools.to_message());
    // Start every frame's request before awaiting any of them.
    let pending: Vec<_> = frames
        .into_iter()
        .map(|frame| {
            let reply = chrome::send_to_frame(tab_id, frame.frame_id, &request);
            (frame, reply)
        })
        .collect();
    let limits = Limits::DEFAULT;
    let mut answers = Vec::with_capacity(pending.len());
    for (frame, reply) in pending {
        let answer = match timer::within(reply, FRAME_LIST_MS).await {
            Ok(Some(reply)) => match convert::to_json_text(&reply) {
                Ok(text) => {
                    parse_listing(&text, frame.frame_id, &limits).map_err(FrameFailure::Bridge)
                }
                Err(e) => Err(FrameFailure::Unreachable(e)),
            },
            Ok(None) => Err(FrameFailure::Unreachable(format!(
                "no answer within {FRAME_LIST_MS} ms"
            ))),
            Err(e) => Err(FrameFailure::Unreachable(e)),
        };
        answers.push(FrameAnswer {
            frame_id: frame.frame_id,
            url: frame.url,
            answer,
        });
    }
    Ok(answers)
}

/// Where the per-site policies live (`configure({sites})`).
pub(crate) const SITES_KEY: &str = "webmcpHost.sites";

pub(crate) async fn load_sites() -> Result<Vec<crate::core::site::SitePolicy>, String> {
    let stored = io::storage_get("local", SITES_KEY)
        .await
        .map_err(|e| convert::describe(&e))?;
    if stored.is_null() || stored.is_undefined() {
        return Ok(Vec::new());
    }
    serde_json::from_value(convert::to_json(&stored)?)
        .map_err(|e| format!("the stored site policies are unreadable: {e}"))
}

/// Runs one page tool call: the core's [`PageCall`] decides each step, this performs it
/// (listing, `webNavigation`, the message to the frame within the call's timeout, waits).
pub(crate) async fn run_call(request: &CallToolRequest) -> Value {
    page_call(CallRequest {
        tab_id: request.tab_id,
        name: request.name.clone(),
        args: request.args.clone(),
        frame_id: request.frame_id,
        timeout_ms: request.timeout_ms,
        call: request.call.clone(),
        expect: request.expect.as_deref().cloned(),
    })
    .await
}

/// Performs a page call, step by step, as the core's [`PageCall`] asks.
pub(crate) async fn page_call(request: CallRequest) -> Value {
    let mut call = PageCall::new(request, format!("call_{}", io::random_id()));
    loop {
        let input = match call.step() {
            Step::Done(answer) => return answer,
            Step::ListTools { tab_id } => Input::Tools(tab_tools(tab_id).await),
            Step::Frame { tab_id, frame_id } => {
                Input::Frame(chrome::frame_state(tab_id, frame_id).await)
            }
            Step::Tabs => Input::Tabs(chrome::tabs().await),
            Step::Send {
                tab_id,
                frame_id,
                message,
                timeout_ms,
            } => {
                let reply = chrome::send_to_frame(tab_id, frame_id, &convert::from_json(&message));
                match timer::within(reply, timeout_ms).await {
                    Ok(Some(reply)) => Input::Reply(convert::to_json_text(&reply)),
                    Ok(None) => Input::Timeout,
                    Err(error) => Input::ChannelFailed(error),
                }
            }
            Step::Cancel {
                tab_id,
                frame_id,
                message,
            } => {
                send_unanswered(tab_id, frame_id, &message);
                Input::Performed
            }
            Step::Wait { ms } => {
                let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(ms)).await;
                Input::Performed
            }
        };
        call.handle(input);
    }
}

/// Asks the person in the tab's top frame, with the browser's own `confirm()` shown by the
/// content script (the page can neither see nor answer it). False when declined, unanswered
/// within 5 minutes, or the tab is gone.
pub(crate) async fn confirm_in_page(tab_id: i64, text: String) -> bool {
    let message = convert::from_json(&FrameRequest::Confirm { text }.to_message());
    let reply = chrome::send_to_frame(tab_id, 0, &message);
    match timer::within(reply, CONFIRM_MS).await {
        Ok(Some(reply)) => convert::to_json(&reply)
            .ok()
            .and_then(|r| r.get("confirmed").and_then(Value::as_bool))
            .unwrap_or(false),
        _ => false,
    }
}

/// Aborts a call still running in a frame (its `executeTool` signal); the frame may be gone.
pub(crate) fn cancel_in_frame(tab_id: i64, frame_id: i64, call: &str) {
    let message = FrameRequest::Cancel {
        call: call.to_owned(),
    }
    .to_message();
    send_unanswered(tab_id, frame_id, &message);
}

/// Sends a message whose answer nobody needs; a rejection (frame gone) is not left unhandled.
fn send_unanswered(tab_id: i64, frame_id: i64, message: &Value) {
    let reply = chrome::send_to_frame(tab_id, frame_id, &convert::from_json(message));
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(reply).await;
    });
}
