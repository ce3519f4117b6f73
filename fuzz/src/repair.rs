//! Repair of a call against the golden tools.
//!
//! `repair` input: the bytes as a string (lossy UTF-8), given to `repair_body`.
//!
//! `native_repair` input: byte 0 is the length of the name (taken modulo what is left); the
//! next that many bytes are the name, the rest the arguments text (both lossy UTF-8), given to
//! `repair_native`.
//!
//! Invariants checked:
//! - no panic;
//! - an `Ok` call names a tool of the set and its arguments validate against that tool's schema;
//! - `repair` only: a repaired call is a fixed point: written back as `{"name", "arguments"}`
//!   and repaired again, it comes back the same, with no fix.

use serde_json::{json, Value};
use webmcp_host::core::repair::{repair_body, repair_native};
use webmcp_host::core::toolset::ToolSet;

thread_local! {
    static TOOLS: ToolSet = crate::golden::golden_tools();
}

/// The `repair` fuzz target.
pub fn repair(data: &[u8]) {
    TOOLS.with(|tools| repair_one(data, tools));
}

/// The `native_repair` fuzz target.
pub fn native_repair(data: &[u8]) {
    TOOLS.with(|tools| native_one(data, tools));
}

fn repair_one(data: &[u8], tools: &ToolSet) {
    let body = String::from_utf8_lossy(data);
    let Ok(repaired) = repair_body(&body, tools) else {
        return;
    };
    assert!(
        tools.get(&repaired.name).is_some(),
        "repaired to an unknown tool: {:?}",
        repaired.name
    );
    let arguments = Value::Object(repaired.arguments.clone());
    if let Err(error) = tools.validate(&repaired.name, &arguments) {
        panic!(
            "repaired arguments do not validate: {} {arguments}: {error}",
            repaired.name
        );
    }
    let again_body = json!({"name": repaired.name, "arguments": arguments}).to_string();
    match repair_body(&again_body, tools) {
        Ok(again) => {
            assert_eq!(again.name, repaired.name, "not a fixed point: {again_body}");
            assert_eq!(
                again.arguments, repaired.arguments,
                "not a fixed point: {again_body}"
            );
            assert!(
                again.fixes.is_empty(),
                "a repaired call needs fixes again: {again_body}: {:?}",
                again.fixes
            );
        }
        Err(error) => panic!("a repaired call does not repair again: {again_body}: {error:?}"),
    }
}

fn native_one(data: &[u8], tools: &ToolSet) {
    let Some((&len, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(len) % (rest.len() + 1);
    let (name, arguments) = rest.split_at(at);
    let name = String::from_utf8_lossy(name);
    let arguments = String::from_utf8_lossy(arguments);
    let Ok(repaired) = repair_native(&name, &arguments, tools) else {
        return;
    };
    assert!(
        tools.get(&repaired.name).is_some(),
        "repaired to an unknown tool: {:?}",
        repaired.name
    );
    let arguments = Value::Object(repaired.arguments);
    if let Err(error) = tools.validate(&repaired.name, &arguments) {
        panic!(
            "repaired arguments do not validate: {} {arguments}: {error}",
            repaired.name
        );
    }
}
