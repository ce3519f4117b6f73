//! The questions the host asks the person before a call that acts: one function per kind of
//! call, all in the same words ("WebMCP Host", what wants to run where, the arguments shown,
//! "Allow it?"). Invariant: the arguments are shown as pretty JSON, at most 600 characters.

use serde_json::{Map, Value};

use crate::core::limits::CONFIRM_SHOWN_CHARS as SHOWN_CHARS;

/// The arguments as the person sees them: pretty JSON, cut at [`SHOWN_CHARS`].
fn shown(args: &Map<String, Value>) -> String {
    let text = serde_json::to_string_pretty(&Value::Object(args.clone())).unwrap_or_default();
    text.chars().take(SHOWN_CHARS).collect()
}

/// Before a consequential page tool of `origin` runs (a cut is marked with "…").
pub fn page_tool(name: &str, origin: &str, args: &Map<String, Value>) -> String {
    let full = serde_json::to_string_pretty(&Value::Object(args.clone())).unwrap_or_default();
    let mut shown = shown(args);
    if full.chars().count() > SHOWN_CHARS {
        shown.push('…');
    }
    format!(
        "WebMCP Host\n\nThe agent wants to run “{name}” on {origin} with:\n{shown}\n\nAllow it?"
    )
}

/// Before a run's agent calls a tool of an MCP server.
pub fn mcp_tool(server: &str, name: &str, args: &Map<String, Value>) -> String {
    let shown = shown(args);
    format!(
        "WebMCP Host\n\nThe agent wants to run “{name}” of the MCP server {server} with:\n{shown}\n\nAllow it?"
    )
}

/// Before a page (`origin`) calls an MCP server's tool exposed to it.
pub fn exposed_tool(origin: &str, server: &str, name: &str, args: &Map<String, Value>) -> String {
    let shown = shown(args);
    format!(
        "WebMCP Host\n\nThis page ({origin}) wants to run “{name}” of the MCP server {server} with:\n{shown}\n\nAllow it?"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: Value) -> Map<String, Value> {
        value.as_object().cloned().expect("an object")
    }

    #[test]
    fn questions_name_what_runs_where() {
        let a = args(json!({"a": 2}));
        assert_eq!(
            mcp_tool("own", "delete", &a),
            "WebMCP Host\n\nThe agent wants to run “delete” of the MCP server own with:\n{\n  \"a\": 2\n}\n\nAllow it?"
        );
        assert_eq!(
            exposed_tool("https://a.example", "own", "delete", &a),
            "WebMCP Host\n\nThis page (https://a.example) wants to run “delete” of the MCP server own with:\n{\n  \"a\": 2\n}\n\nAllow it?"
        );
        assert!(page_tool("buy", "https://shop.test", &a).contains("“buy” on https://shop.test"));
    }

    #[test]
    fn long_arguments_are_cut() {
        let a = args(json!({"text": "x".repeat(2000)}));
        let page = page_tool("buy", "https://shop.test", &a);
        assert!(page.contains("x…\n\nAllow it?"));
        assert!(!mcp_tool("own", "delete", &a).contains('…'));
        assert!(mcp_tool("own", "delete", &a).len() < 800);
    }
}
