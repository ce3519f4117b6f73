//! Caps on untrusted input, and the deadlines of what the host waits for. Every cap is checked
//! before the data it guards is parsed or passed on; exceeding one is an error that names the
//! cap. Every deadline is a timer the core asks for; the shells only report that it ran out.

/// Caps for what a page (through its content script) may hand the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of one message from a content script, as JSON text.
    pub max_message_bytes: usize,
    /// Tools one frame may offer.
    pub max_tools_per_frame: usize,
    /// Bytes of a tool name.
    pub max_name_bytes: usize,
    /// Bytes of a tool description.
    pub max_description_bytes: usize,
    /// Bytes of a tool's input schema, as JSON text.
    pub max_schema_bytes: usize,
    /// Nesting depth of a tool's input schema.
    pub max_schema_depth: usize,
    /// Bytes of a tool result.
    pub max_result_bytes: usize,
}

impl Limits {
    pub const DEFAULT: Limits = Limits {
        max_message_bytes: 8 * 1024 * 1024,
        max_tools_per_frame: 256,
        max_name_bytes: 128,
        max_description_bytes: 16 * 1024,
        max_schema_bytes: 64 * 1024,
        max_schema_depth: 32,
        max_result_bytes: 4 * 1024 * 1024,
    };
}

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// The longest wait for a model's first byte (status and headers).
pub const FIRST_BYTE_MS: u32 = 60_000;
/// The longest a model's stream may stay silent once it started (unless the model says).
pub const STREAM_IDLE_MS: u32 = 120_000;
/// The longest a page tool may run inside a run.
pub const PAGE_TOOL_MS: u32 = 30_000;
/// The longest an MCP server may take to connect and list its tools at a run's start.
pub const MCP_SOURCE_MS: u32 = 20_000;
/// The most characters of a model's error answer read to say what went wrong.
pub const ERROR_BODY_CHARS: usize = 4_000;
/// How long a failed page call waits, at most, for the browser to report a new document in
/// its frame (the message channel closes a moment before).
pub const SETTLE_MS: u32 = 1_500;
/// How long a navigation's destination may take to load before the call's answer goes
/// without what it offers.
pub const DESTINATION_MS: u32 = 5_000;

/// How long one frame may take to list its tools.
pub const FRAME_LIST_MS: u32 = 5_000;
/// How long the person has to answer a confirmation.
pub const CONFIRM_MS: u32 = 5 * 60 * 1000;

/// Depth of a JSON value: a scalar is 0, `[]` and `{}` are 1, `[[1]]` is 2.
pub fn json_depth(value: &serde_json::Value) -> usize {
    // Iterative, so a hostile value cannot exhaust the stack here.
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((v, depth)) = stack.pop() {
        match v {
            serde_json::Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|i| (i, depth + 1)));
            }
            serde_json::Value::Object(map) => {
                deepest = deepest.max(depth + 1);
                stack.extend(map.values().map(|i| (i, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_counts_containers() {
        assert_eq!(json_depth(&json!(1)), 0);
        assert_eq!(json_depth(&json!({})), 1);
        assert_eq!(json_depth(&json!({"a": [1, {"b": []}]})), 4);
    }
}
