//! The decoders of what a page (through its content script) sends the worker.
//!
//! Input: byte 0 chooses the caps and the text; the rest is one message as JSON text.
//!
//! | bits of byte 0 | meaning |
//! |---|---|
//! | `0x01` | small caps ([`small_limits`]) so that a short input can pass each; else the defaults |
//! | `0x02` | only the valid UTF-8 prefix of the rest is used (else lossy) |
//! | `0xfc` | the frame id of a listing |
//!
//! Decoders: `bridge::parse_listing` and `bridge::parse_call_reply` (a frame's replies, raw
//! text), and on the parsed value `ops::parse_op` with `ops::authorize` (a runtime
//! message), `ops::request::{ListToolsRequest, CallToolRequest, RunRequest}::parse`,
//! `expose::CallExposedRequest::parse`, `run::middleware::layered_answer`.
//!
//! Invariants checked:
//! - no panic;
//! - caps hold: a reply over `max_message_bytes` is `TooLarge` naming that cap (and only then);
//!   a listed tool keeps every cap (count, name, description, schema size and depth); an entry
//!   over the count, name, description or (string) schema cap leaves a problem naming the cap;
//!   a result over `max_result_bytes` is `TooLarge` naming that cap, a returned text never is;
//! - requests: ids ≥ 0, a call's timeout within 1..=`MAX_CALL_TIMEOUT_MS`, a run's `maxSteps`
//!   within 1..=`MAX_MAX_STEPS`, a named tool; a content script in a tab may be allowed only
//!   `exposedTools`, `callExposed` (top frame) and `toolsChanged`.

use serde_json::Value;
use webmcp_host::core::expose::CallExposedRequest;
use webmcp_host::core::limits::{json_depth, Limits};
use webmcp_host::core::ops::request::{
    CallToolRequest, ListToolsRequest, RunRequest, MAX_CALL_TIMEOUT_MS, MAX_MAX_STEPS,
};
use webmcp_host::core::ops::{authorize, parse_op, Op, Sender};
use webmcp_host::core::page::bridge::{parse_call_reply, parse_listing, BridgeError, CallOutcome};
use webmcp_host::core::run::middleware::layered_answer;

use crate::chunk::text;

/// Caps small enough for a fuzzer's inputs to cross each of them.
pub fn small_limits() -> Limits {
    Limits {
        max_message_bytes: 2048,
        max_tools_per_frame: 3,
        max_name_bytes: 12,
        max_description_bytes: 40,
        max_schema_bytes: 120,
        max_schema_depth: 4,
        max_result_bytes: 32,
    }
}

fn too_large(result: &Result<impl std::fmt::Debug, BridgeError>, cap: &str) -> bool {
    matches!(result, Err(BridgeError::TooLarge { cap_name, .. }) if *cap_name == cap)
}

/// Checks `parse_listing` of a raw frame reply.
pub fn check_listing(raw: &str, value: Option<&Value>, frame_id: i64, limits: &Limits) {
    let listing = parse_listing(raw, frame_id, limits);
    let over = raw.len() > limits.max_message_bytes;
    assert_eq!(
        too_large(&listing, "max_message_bytes"),
        over,
        "a reply of {} bytes: {listing:?}",
        raw.len()
    );
    if let Err(BridgeError::TooLarge { what, .. }) = &listing {
        assert_eq!(*what, "reply");
        assert!(over);
    }
    let Ok(listing) = listing else {
        return;
    };
    let tools = &listing.tools.tools;
    assert!(tools.len() <= limits.max_tools_per_frame);
    for tool in tools {
        assert!(tool.name.len() <= limits.max_name_bytes, "{tool:?}");
        assert!(!tool.name.is_empty());
        assert!(tool.description.len() <= limits.max_description_bytes);
        assert!(tool.input_schema.is_object());
        assert!(json_depth(&tool.input_schema) <= limits.max_schema_depth);
        assert_eq!(tool.frame_id, frame_id);
    }
    let problems: Vec<&str> = listing
        .tools
        .problems
        .iter()
        .map(|p| p.message.as_str())
        .collect();
    let named = |cap: &str| problems.iter().any(|p| p.contains(cap));
    let Some(entries) = value.and_then(|v| v.get("tools")).and_then(Value::as_array) else {
        return;
    };
    if entries.len() > limits.max_tools_per_frame {
        assert!(named("max_tools_per_frame"), "{problems:?}");
    }
    for entry in entries.iter().take(limits.max_tools_per_frame) {
        let Some(name) = entry.get("name").and_then(Value::as_str) else {
            continue;
        };
        if name.len() > limits.max_name_bytes {
            assert!(named("max_name_bytes"), "{name:?}: {problems:?}");
            continue;
        }
        let valid = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !valid {
            continue;
        }
        // The entry is refused at its first fault, in this order.
        let string_or_absent =
            |key: &str| entry.get(key).is_none_or(|v| v.is_null() || v.is_string());
        if !string_or_absent("description") {
            continue;
        }
        let description = entry.get("description").and_then(Value::as_str);
        if description.is_some_and(|d| d.len() > limits.max_description_bytes) {
            assert!(named("max_description_bytes"), "{problems:?}");
            continue;
        }
        if !string_or_absent("title") || !string_or_absent("origin") {
            continue;
        }
        if let Some(schema) = entry.get("inputSchema").and_then(Value::as_str) {
            if schema.len() > limits.max_schema_bytes {
                assert!(named("max_schema_bytes"), "{problems:?}");
            }
        }
    }
}

/// Checks `parse_call_reply` of a raw frame reply.
pub fn check_call_reply(raw: &str, value: Option<&Value>, limits: &Limits) {
    let reply = parse_call_reply(raw, limits);
    let over = raw.len() > limits.max_message_bytes;
    assert_eq!(too_large(&reply, "max_message_bytes"), over, "{reply:?}");
    if over {
        return;
    }
    if let Ok(CallOutcome::Text { text, .. }) = &reply {
        assert!(text.len() <= limits.max_result_bytes);
    }
    let ok_text = value
        .filter(|v| v.get("ok") == Some(&Value::Bool(true)))
        .and_then(|v| v.get("result"))
        .and_then(Value::as_str);
    if let Some(result) = ok_text {
        assert_eq!(
            too_large(&reply, "max_result_bytes"),
            result.len() > limits.max_result_bytes,
            "{reply:?}"
        );
    }
}

/// Checks the request parsers on a message value.
pub fn check_requests(value: &Value) {
    if let Ok(op) = parse_op(value) {
        check_op(&op);
        let content = |frame_id| Sender::ContentScript {
            tab_id: 1,
            frame_id,
            url: "https://site.example/".into(),
            origin: Some("https://site.example".into()),
        };
        for frame_id in [0, 3] {
            if authorize(&content(frame_id), op.name()).is_ok() {
                let allowed = match op {
                    Op::ToolsChanged => true,
                    Op::ExposedTools | Op::CallExposed(_) => frame_id == 0,
                    _ => false,
                };
                assert!(
                    allowed,
                    "a content script in frame {frame_id} allowed {op:?}"
                );
            }
        }
        assert!(authorize(&Sender::ExtensionPage, op.name()).is_ok());
    }
    if let Ok(request) = ListToolsRequest::parse(value) {
        assert!(request.tab_id >= 0);
    }
    if let Ok(request) = CallToolRequest::parse(value) {
        check_op(&Op::CallTool(request));
    }
    if let Ok(request) = CallExposedRequest::parse(value) {
        check_op(&Op::CallExposed(request));
    }
    if let Ok(request) = RunRequest::parse(value) {
        assert!((1..=MAX_MAX_STEPS).contains(&request.max_steps));
        assert!(!request.messages.is_empty());
        assert!(request.tab_id.is_none_or(|id| id >= 0));
    }
    let _ = layered_answer(value);
}

fn check_op(op: &Op) {
    match op {
        Op::ListTools(request) => assert!(request.tab_id >= 0),
        Op::CallTool(request) => {
            assert!(request.tab_id >= 0);
            assert!(!request.name.is_empty());
            assert!(request.frame_id.is_none_or(|id| id >= 0));
            assert!((1..=MAX_CALL_TIMEOUT_MS).contains(&request.timeout_ms));
            assert!(request.call.is_none());
        }
        Op::CallExposed(request) => assert!(!request.name.is_empty()),
        _ => {}
    }
}

/// The page-message fuzz target.
pub fn page_message(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let limits = if mode & 0x01 != 0 {
        small_limits()
    } else {
        Limits::DEFAULT
    };
    let raw = text(rest, mode & 0x02 != 0);
    let frame_id = i64::from(mode >> 2);
    let value: Option<Value> = serde_json::from_str(&raw).ok();
    check_listing(&raw, value.as_ref(), frame_id, &limits);
    check_call_reply(&raw, value.as_ref(), &limits);
    if let Some(value) = &value {
        check_requests(value);
    }
}
