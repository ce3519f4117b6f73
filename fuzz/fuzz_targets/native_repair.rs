//! Repair of a native (provider function-calling) call against the golden tools.
//!
//! Input: byte 0 is the length of the name (taken modulo what is left); the next that many
//! bytes are the name, the rest the arguments text (both lossy UTF-8), given to
//! `repair_native`.
//!
//! Invariants checked:
//! - no panic;
//! - an `Ok` call names a tool of the set and its arguments validate against that tool's schema.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use webmcp_host::core::repair::repair_native;
use webmcp_host::core::toolset::ToolSet;

thread_local! {
    static TOOLS: ToolSet = webmcp_host_fuzz::golden_tools();
}

fuzz_target!(|data: &[u8]| webmcp_host_fuzz::run(|| TOOLS.with(|tools| one(data, tools))));

fn one(data: &[u8], tools: &ToolSet) {
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
