use serde_json::json;

use super::*;

#[test]
fn header_values_follow_the_spec_table() {
    assert_eq!(encode_header_value("us-west1"), "us-west1");
    assert_eq!(encode_header_value("a b"), "a b");
    assert_eq!(encode_header_value(""), "");
    assert_eq!(
        encode_header_value("Hello, 世界"),
        "=?base64?SGVsbG8sIOS4lueVjA==?="
    );
    assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
    assert_eq!(
        encode_header_value("line1\nline2"),
        "=?base64?bGluZTEKbGluZTI=?="
    );
    assert_eq!(
        encode_header_value("=?base64?literal?="),
        "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    );
    assert_eq!(encode_header_value("tab\there"), "=?base64?dGFiCWhlcmU=?=");
}

#[test]
fn mcp_name_is_the_tool_prompt_or_resource() {
    let p = json!({"name": "add", "uri": "file:///x"});
    assert_eq!(mcp_name("tools/call", Some(&p)), Some("add"));
    assert_eq!(mcp_name("prompts/get", Some(&p)), Some("add"));
    assert_eq!(mcp_name("resources/read", Some(&p)), Some("file:///x"));
    assert_eq!(mcp_name("tools/list", Some(&p)), None);
    assert_eq!(mcp_name("tools/call", None), None);
}

fn schema(properties: serde_json::Value) -> serde_json::Value {
    json!({"type": "object", "properties": properties})
}

#[test]
fn param_headers_are_found_through_properties() {
    let s = schema(json!({
        "region": {"type": "string", "x-mcp-header": "Region"},
        "n": {"type": "integer", "x-mcp-header": "Priority"},
        "inner": {"type": "object", "properties": {"flag": {"type": "boolean", "x-mcp-header": "Flag"}}},
        "plain": {"type": "number", "default": {"x-mcp-header": "NotAnAnnotation"}},
    }));
    let found = param_headers(&s).unwrap();
    let names: Vec<&str> = found.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(names, ["Region", "Priority", "Flag"]);
    assert_eq!(found[2].path, ["inner", "flag"]);
    let args = json!({"region": "Hello, 世界", "n": 42, "inner": {"flag": false}});
    let values = param_header_values(&found, args.as_object().unwrap());
    assert_eq!(
        values,
        [
            (
                "mcp-param-region".to_owned(),
                "=?base64?SGVsbG8sIOS4lueVjA==?=".to_owned()
            ),
            ("mcp-param-priority".to_owned(), "42".to_owned()),
            ("mcp-param-flag".to_owned(), "false".to_owned()),
        ]
    );
    // null or absent: no header
    let args = json!({"region": null});
    assert!(param_header_values(&found, args.as_object().unwrap()).is_empty());
}

#[test]
fn invalid_annotations_leave_the_tool_out() {
    let cases = [
        (
            "empty",
            schema(json!({"a": {"type": "string", "x-mcp-header": ""}})),
        ),
        (
            "object",
            schema(json!({"a": {"type": "object", "x-mcp-header": "A"}})),
        ),
        (
            "array",
            schema(json!({"a": {"type": "array", "x-mcp-header": "A"}})),
        ),
        (
            "null",
            schema(json!({"a": {"type": "null", "x-mcp-header": "A"}})),
        ),
        (
            "number",
            schema(json!({"a": {"type": "number", "x-mcp-header": "A"}})),
        ),
        (
            "same case",
            schema(
                json!({"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "A"}}),
            ),
        ),
        (
            "other case",
            schema(
                json!({"a": {"type": "string", "x-mcp-header": "Abc"}, "b": {"type": "string", "x-mcp-header": "aBC"}}),
            ),
        ),
        (
            "space",
            schema(json!({"a": {"type": "string", "x-mcp-header": "My Header"}})),
        ),
        (
            "colon",
            schema(json!({"a": {"type": "string", "x-mcp-header": "My:Header"}})),
        ),
        (
            "non-ascii",
            schema(json!({"a": {"type": "string", "x-mcp-header": "Régión"}})),
        ),
        (
            "control",
            schema(json!({"a": {"type": "string", "x-mcp-header": "A\u{1}B"}})),
        ),
        (
            "not a string",
            schema(json!({"a": {"type": "string", "x-mcp-header": 7}})),
        ),
        (
            "in items",
            schema(
                json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
            ),
        ),
        (
            "in anyOf",
            schema(json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}]}})),
        ),
        (
            "at the root",
            json!({"type": "string", "x-mcp-header": "A"}),
        ),
    ];
    for (what, case) in cases {
        assert!(param_headers(&case).is_err(), "{what} must be refused");
    }
    let mut deep = json!({"type": "string", "x-mcp-header": "A"});
    for _ in 0..100 {
        deep = json!({"type": "object", "properties": {"x": deep}});
    }
    assert!(param_headers(&deep).unwrap_err().contains("deeper"));
}

#[test]
fn ttl_is_read_as_a_client_honours_it() {
    assert_eq!(ttl_ms(&json!({})), 0);
    assert_eq!(ttl_ms(&json!({"ttlMs": -5})), 0);
    assert_eq!(ttl_ms(&json!({"ttlMs": "60"})), 0);
    assert_eq!(ttl_ms(&json!({"ttlMs": 60000})), 60000);
    assert_eq!(
        ttl_ms(&json!({"ttlMs": 1e15})),
        crate::core::limits::MAX_MCP_TTL_MS
    );
}

#[test]
fn protocols_are_named_by_revision() {
    assert_eq!(Protocols::named("2026-07-28"), Some(Protocols::Modern));
    assert_eq!(Protocols::named("2025-11-25"), Some(Protocols::Legacy));
    assert_eq!(Protocols::named("2025-03-26"), Some(Protocols::Legacy));
    assert_eq!(Protocols::named("auto"), Some(Protocols::Auto));
    assert_eq!(Protocols::named("1900-01-01"), None);
}
