//! The service-worker shell: the only code that touches `wasm_bindgen`, `js_sys` and
//! `chrome.*`. It converts JS values to JSON at its edge, asks the core what to do, performs
//! the messaging and timers the core cannot, and hands the core's answers back to JS.
//!
//! Exported to the worker's loader (`worker.js`): `version`, `listTools`, `callTool`,
//! `handleMessage`. None of them panics on bad input: bad requests reject with an `Error`
//! (`listTools`, `callTool`) or resolve to `{ok:false,error}` (`handleMessage`).

pub mod agent;
pub mod chrome;
pub mod convert;
pub mod io;
pub mod mcp;
pub mod timer;
pub mod ui;

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use crate::core::api::{
    call_response, confirmation, CallToolRequest, FrameAnswer, FrameFailure, ListToolsRequest,
    TabTools,
};
use crate::core::bridge::{parse_call_reply, parse_listing, FrameRequest};
use crate::core::limits::Limits;
use crate::core::sender::{authorize, classify, parse_op, Op};

/// How long one frame may take to list its tools.
const LIST_TIMEOUT_MS: u32 = 5_000;

/// The host's version.
#[wasm_bindgen]
pub fn version() -> String {
    crate::VERSION.to_owned()
}

/// `webmcpHost.listTools({tabId})` → `{tools, problems}`.
#[wasm_bindgen(js_name = listTools)]
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
#[wasm_bindgen(js_name = callTool)]
pub async fn call_tool(request: JsValue) -> Result<JsValue, JsError> {
    let request =
        CallToolRequest::parse(&convert::to_json(&request).map_err(|e| JsError::new(&e))?)
            .map_err(|e| JsError::new(&e.0))?;
    Ok(convert::from_json(&run_call(&request).await))
}

/// The worker's `chrome.runtime.onMessage` handler: checks the sender, then runs the
/// operation. Always resolves, to `{ok:true,…}` or `{ok:false,error}`.
#[wasm_bindgen(js_name = handleMessage)]
pub async fn handle_message(message: JsValue, sender: JsValue) -> JsValue {
    convert::from_json(&match dispatch(&message, &sender).await {
        Ok(value) => value,
        Err(error) => json!({"ok": false, "error": error}),
    })
}

async fn dispatch(message: &JsValue, sender: &JsValue) -> Result<Value, String> {
    let own_id = chrome::runtime_id().ok_or("chrome.runtime is not available in this context")?;
    let sender = classify(&own_id, &convert::sender_info(sender));
    let text = convert::to_json_text(message)?;
    let limits = Limits::DEFAULT;
    if text.len() > limits.max_message_bytes {
        return Err(format!(
            "the message is {} bytes, over the cap of {} (max_message_bytes)",
            text.len(),
            limits.max_message_bytes
        ));
    }
    let message: Value =
        serde_json::from_str(&text).map_err(|e| format!("the message is not JSON: {e}"))?;
    let op = parse_op(&message).map_err(|e| e.0)?;
    if let Err(refusal) = authorize(&sender, &op) {
        chrome::warn(&format!("webmcp-host: {refusal}"));
        return Err(refusal.to_string());
    }
    match op {
        Op::Version => Ok(json!({"ok": true, "version": crate::VERSION})),
        Op::ListTools(request) => {
            let tools = tab_tools(request.tab_id).await?;
            let mut response = tools_response(&tools);
            response["ok"] = Value::Bool(true);
            Ok(response)
        }
        Op::CallTool(request) => Ok(run_call(&request).await),
    }
}

fn tools_response(tools: &TabTools) -> Value {
    serde_json::to_value(tools).unwrap_or_else(
        |e| json!({"tools": [], "problems": [{"frameId": 0, "message": e.to_string()}]}),
    )
}

/// Asks every frame of a tab for its tools, all at once, and merges the answers.
pub(crate) async fn tab_tools(tab_id: i64) -> Result<TabTools, String> {
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
    Ok(TabTools::from_frames(answers))
}

/// Finds the tool a call names and runs it in its frame, within the call's timeout.
pub(crate) async fn run_call(request: &CallToolRequest) -> Value {
    let outcome = async {
        let tools = tab_tools(request.tab_id).await?;
        let tool = tools
            .resolve(&request.name, request.frame_id)
            .map_err(|e| e.0)?;
        let message = convert::from_json(
            &FrameRequest::CallTool {
                name: tool.name.clone(),
                args: request.args.clone(),
                confirm: confirmation(tool, &request.args),
            }
            .to_message(),
        );
        let reply = chrome::send_to_frame(request.tab_id, tool.frame_id, &message);
        match timer::within(reply, request.timeout_ms).await? {
            None => Err(format!(
                "`{}` did not finish within {} ms; it may still be running in the page",
                tool.name, request.timeout_ms
            )),
            Some(reply) => {
                let text = convert::to_json_text(&reply)?;
                parse_call_reply(&text, &Limits::DEFAULT).map_err(|e| e.to_string())
            }
        }
    }
    .await;
    call_response(&outcome)
}
