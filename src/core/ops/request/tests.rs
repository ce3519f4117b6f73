//! The operation requests parsed from JSON.

use serde_json::json;

use super::*;

#[test]
fn list_request() {
    assert_eq!(
        ListToolsRequest::parse(&json!({"tabId": 3})),
        Ok(ListToolsRequest { tab_id: 3 })
    );
    assert_eq!(
        ListToolsRequest::parse(&json!({})).unwrap_err().0,
        "listTools: `tabId` is required"
    );
    assert_eq!(
        ListToolsRequest::parse(&json!({"tabId": "3"}))
            .unwrap_err()
            .0,
        "listTools: `tabId` must be a number, not a string"
    );
    assert!(ListToolsRequest::parse(&json!({"tabId": -1})).is_err());
    assert!(ListToolsRequest::parse(&json!({"tabId": 1.5})).is_err());
    assert!(ListToolsRequest::parse(&json!(3)).is_err());
}

#[test]
fn call_request() {
    let r = CallToolRequest::parse(&json!({"tabId": 1, "name": "add", "args": {"a": 2}})).unwrap();
    assert_eq!(r.args["a"], 2);
    assert_eq!(r.timeout_ms, DEFAULT_CALL_TIMEOUT_MS);
    assert_eq!(r.frame_id, None);
    let r =
        CallToolRequest::parse(&json!({"tabId": 1, "name": "add", "frameId": 2, "timeoutMs": 50}))
            .unwrap();
    assert!(r.args.is_empty());
    assert_eq!((r.frame_id, r.timeout_ms), (Some(2), 50));
    assert_eq!(
        CallToolRequest::parse(&json!({"tabId": 1, "name": "add", "args": "{\"a\":2}"}))
            .unwrap_err()
            .0,
        "callTool: `args` must be an object (the tool's input), not a string"
    );
    assert!(CallToolRequest::parse(&json!({"tabId": 1, "name": ""})).is_err());
    assert!(CallToolRequest::parse(&json!({"tabId": 1, "name": "a", "timeoutMs": 0})).is_err());
}

#[test]
fn run_requests() {
    let r = RunRequest::parse(
        &json!({"tabId": 3, "prompt": "Hi", "maxSteps": 4, "context": {"user": "qa"},
        "tools": [{"name": "show", "description": "Shows", "parameters": {"type": "object"}}]}),
    )
    .unwrap();
    assert_eq!((r.tab_id, r.max_steps, r.messages.len()), (Some(3), 4, 1));
    assert_eq!(r.frontend_tools[0].name, "show");
    assert_eq!(r.context, json!({"user": "qa"}));
    let r =
        RunRequest::parse(&json!({"messages": [{"role": "user", "id": "u1", "content": "Hi"}]}))
            .unwrap();
    assert_eq!(r.tab_id, None);
    assert_eq!(
        RunRequest::parse(&json!({})).unwrap_err().0,
        "run: `prompt` or `messages` is required"
    );
    assert!(RunRequest::parse(&json!({"prompt": "a", "messages": []})).is_err());
    assert!(RunRequest::parse(&json!({"prompt": "a", "maxSteps": 0})).is_err());
    assert!(RunRequest::parse(&json!({"messages": [{"role": "robot"}]}))
        .unwrap_err()
        .0
        .contains("messages[0]"));
}

#[test]
fn audit_request_tools_name_the_tools_to_probe() {
    let r =
        AuditRequest::parse(&json!({"tabId": 2, "probe": true, "tools": ["a", "b", "a"]})).unwrap();
    assert_eq!(r.tools, Some(vec!["a".into(), "b".into()]), "each once");
    assert_eq!(
        AuditRequest::parse(&json!({"tabId": 2})).unwrap().tools,
        None
    );
    let refused = |request| AuditRequest::parse(&request).unwrap_err().0;
    assert_eq!(
        refused(json!({"tabId": 2, "tools": ["a"]})),
        "audit: `tools` chooses the tools to probe: give `probe: true` with it"
    );
    assert_eq!(
        refused(json!({"tabId": 2, "probe": true, "tools": "a"})),
        "audit: `tools` must be an array of tool names, not a string"
    );
    assert!(refused(json!({"tabId": 2, "probe": true, "tools": [""]})).contains("each of `tools`"));
    assert!(refused(json!({"tabId": 2, "probe": true, "tools": [3]})).contains("not a number"));
    let many: Vec<String> = (0..600).map(|i| format!("t{i}")).collect();
    assert!(refused(json!({"tabId": 2, "probe": true, "tools": many})).contains("at most 512"));
}
