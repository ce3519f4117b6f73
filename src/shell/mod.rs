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

use crate::core::api::{
    call_response, confirmation, interrupted, still_same_page_tool, CallToolRequest, FrameAnswer,
    FrameFailure, FrameState, ListToolsRequest, TabTools,
};
use crate::core::bridge::CallOutcome;
use crate::core::bridge::{parse_call_reply, parse_listing, FrameRequest};
use crate::core::limits::Limits;

/// How long one frame may take to list its tools.
const LIST_TIMEOUT_MS: u32 = 5_000;

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
    // No content script in the top frame: the tab predates this worker's extension (installed,
    // reloaded or updated since), so its scripts are orphaned. Inject the bridge once, ask again.
    let orphaned = answers.iter().any(|a| {
        a.frame_id == 0
            && matches!(&a.answer, Err(FrameFailure::Unreachable(m)) if m.contains("Receiving end does not exist"))
    });
    if orphaned && chrome::inject_bridge(tab_id).await.is_ok() {
        answers = frame_listings(tab_id).await?;
    }
    let mut tools = TabTools::from_frames(answers);
    match load_sites().await {
        Ok(policies) => {
            crate::core::site::apply(&policies, &mut tools);
        }
        // Unreadable policies hide every tool rather than none: a policy only ever tightens.
        Err(message) => {
            tools.tools.clear();
            tools.problems.push(crate::core::tool::ToolProblem {
                frame_id: 0,
                tool: None,
                message,
            });
        }
    }
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
        let answer = match timer::within(reply, LIST_TIMEOUT_MS).await {
            Ok(Some(reply)) => match convert::to_json_text(&reply) {
                Ok(text) => {
                    parse_listing(&text, frame.frame_id, &limits).map_err(FrameFailure::Bridge)
                }
                Err(e) => Err(FrameFailure::Unreachable(e)),
            },
            Ok(None) => Err(FrameFailure::Unreachable(format!(
                "no answer within {LIST_TIMEOUT_MS} ms"
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

/// How long a navigation's destination may take to load before the call's answer goes without
/// what it offers.
const DESTINATION_MS: f64 = 5_000.0;
/// How long a failed call waits for the browser to report a new document in its frame.
const SETTLE_MS: f64 = 1_500.0;

/// Finds the tool a call names and runs it in its frame, within the call's timeout. A call
/// that the page's navigation, a closed tab or a removed frame interrupts ends with
/// `{navigated, url}` or a clear error; a navigation's answer carries the tools the
/// destination offers when it loads in time (a new tab opened by the call: that tab's).
pub(crate) async fn run_call(request: &CallToolRequest) -> Value {
    let outcome = async {
        let tools = tab_tools(request.tab_id).await?;
        let tool = tools
            .resolve(&request.name, request.frame_id)
            .map_err(|e| e.0)?;
        if let Some(expected) = &request.expect {
            still_same_page_tool(expected, tool)?;
        }
        let before = chrome::frame_state(request.tab_id, tool.frame_id).await;
        let call = request
            .call
            .clone()
            .unwrap_or_else(|| format!("call_{}", io::random_id()));
        let newest_tab = chrome::tabs()
            .await
            .iter()
            .map(|t| t.id)
            .max()
            .unwrap_or(-1);
        let message = convert::from_json(
            &FrameRequest::CallTool {
                name: tool.name.clone(),
                args: request.args.clone(),
                confirm: confirmation(tool, &request.args),
                call: Some(call.clone()),
            }
            .to_message(),
        );
        let reply = chrome::send_to_frame(request.tab_id, tool.frame_id, &message);
        // Whether the message channel failed (the frame's document may be going away).
        let mut channel_failed = false;
        let answer = match timer::within(reply, request.timeout_ms).await {
            Ok(None) => {
                cancel_in_frame(request.tab_id, tool.frame_id, &call);
                Err(format!(
                    "`{}` did not finish within {} ms; it was cancelled in the page",
                    tool.name, request.timeout_ms
                ))
            }
            Ok(Some(reply)) => convert::to_json_text(&reply).and_then(|text| {
                parse_call_reply(&text, &Limits::DEFAULT).map_err(|e| e.to_string())
            }),
            Err(error) => {
                channel_failed = true;
                Err(error)
            }
        };
        let answer = match answer {
            Ok(answer) => answer,
            Err(failure) => {
                // The message channel closes when the document unloads, a moment before the
                // browser reports the new document: give it that moment.
                let started = io::now_ms();
                let mut after = chrome::frame_state(request.tab_id, tool.frame_id).await;
                while channel_failed
                    && io::now_ms() - started < SETTLE_MS
                    && after.is_some()
                    && after.as_ref().map(|a| &a.document_id)
                        == before.as_ref().map(|b| &b.document_id)
                {
                    let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(50)).await;
                    after = chrome::frame_state(request.tab_id, tool.frame_id).await;
                }
                let tab_open =
                    after.is_some() || chrome::tabs().await.iter().any(|t| t.id == request.tab_id);
                interrupted(
                    &tool.name,
                    failure,
                    before.as_ref(),
                    tab_open,
                    after.as_ref(),
                )?
            }
        };
        let destination = match &answer {
            CallOutcome::Navigated { .. } if tool.frame_id == 0 => {
                Some(destination(request.tab_id, before.as_ref(), newest_tab).await)
            }
            _ => None,
        };
        Ok::<_, String>((answer, destination))
    }
    .await;
    match outcome {
        Ok((answer, Some(destination))) => {
            let mut response = call_response(&Ok(answer));
            if let Some(url) = destination.url {
                response["url"] = Value::String(url);
            }
            if let Some(tools) = destination.tools {
                response["tools"] = json!(tools);
            }
            if let Some(tab) = destination.opened_tab {
                response["openedTab"] = json!(tab);
            }
            response
        }
        Ok((answer, None)) => call_response(&Ok(answer)),
        Err(error) => call_response(&Err(error)),
    }
}

/// How long the person has to answer a confirmation in the page.
const CONFIRM_MS: u32 = 5 * 60 * 1000;

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
    let message = convert::from_json(
        &FrameRequest::Cancel {
            call: call.to_owned(),
        }
        .to_message(),
    );
    let reply = chrome::send_to_frame(tab_id, frame_id, &message);
    // Nobody needs the answer, but a rejection (frame gone) must not go unhandled.
    wasm_bindgen_futures::spawn_local(async move {
        let _ = wasm_bindgen_futures::JsFuture::from(reply).await;
    });
}

/// Where a navigation led.
struct Destination {
    url: Option<String>,
    tools: Option<Vec<String>>,
    opened_tab: Option<i64>,
}

/// Waits (up to `DESTINATION_MS`) for the tab's new document, or a tab the call opened, to
/// load, and lists the tools it offers.
async fn destination(tab_id: i64, before: Option<&FrameState>, newest_tab: i64) -> Destination {
    let started = io::now_ms();
    let before_document = before.and_then(|b| b.document_id.clone());
    while io::now_ms() - started < DESTINATION_MS {
        let tabs = chrome::tabs().await;
        let opened = tabs
            .iter()
            .find(|t| t.id > newest_tab && t.opener == Some(tab_id));
        let (target, opened_tab) = match opened {
            Some(tab) => (Some(tab), Some(tab.id)),
            None => {
                let now = chrome::frame_state(tab_id, 0).await;
                let moved = now
                    .as_ref()
                    .is_some_and(|n| n.document_id != before_document);
                (tabs.iter().find(|t| t.id == tab_id && moved), None)
            }
        };
        if let Some(tab) = target.filter(|t| t.complete) {
            // (A tab's own URL needs the "tabs" permission; its top frame's does not.)
            let url = chrome::frame_state(tab.id, 0)
                .await
                .map(|f| f.url)
                .filter(|u| !u.is_empty());
            let tools = tab_tools(tab.id)
                .await
                .ok()
                .map(|found| found.tools.into_iter().map(|t| t.name).collect());
            return Destination {
                url,
                tools,
                opened_tab,
            };
        }
        let _ = wasm_bindgen_futures::JsFuture::from(io::sleep(100)).await;
    }
    Destination {
        url: chrome::frame_state(tab_id, 0).await.map(|f| f.url),
        tools: None,
        opened_tab: None,
    }
}
