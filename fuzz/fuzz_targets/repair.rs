//! Repair of a text call's body against the golden tools.
//!
//! Input: the bytes as a string (lossy UTF-8), given to `repair_body`.
//!
//! Invariants checked:
//! - no panic;
//! - an `Ok` call names a tool of the set and its arguments validate against that tool's schema;
//! - a repaired call is a fixed point: written back as `{"name", "arguments"}` and repaired
//!   again, it comes back the same, with no fix.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use webmcp_host::core::repair::repair_body;
use webmcp_host::core::toolset::ToolSet;

thread_local! {
    static TOOLS: ToolSet = webmcp_host_fuzz::golden_tools();
}

fuzz_target!(|data: &[u8]| webmcp_host_fuzz::run(|| TOOLS.with(|tools| one(data, tools))));

fn one(data: &[u8], tools: &ToolSet) {
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
