//! An MCP server's tools by hand: the request, the tool, the arguments, the confirmation.

use serde_json::{json, Value};

use super::{
    call_answer, find_server, plan_call, target, timed_out, tools_response, ServerCallRequest,
    Target,
};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::{parse_tools, McpTool};
use crate::core::mcp::CallResult;
use crate::core::ops::{Op, OpName};

fn server(trusted: bool) -> McpServerConfig {
    serde_json::from_value(json!({
        "name": "records", "url": "https://records.example/mcp", "keyRef": "rec",
        "trusted": trusted, "filter": ["add", "delete_record", "many"]
    }))
    .unwrap()
}

fn tools() -> Vec<McpTool> {
    parse_tools(&[
        json!({"name": "add", "description": "Adds.", "annotations": {"readOnlyHint": true},
            "inputSchema": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}}),
        json!({"name": "delete_record", "description": "Deletes.", "title": "Delete",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "string", "pattern": "^r-"}}, "required": ["id"]}}),
        json!({"name": "many", "description": "Takes anything.", "annotations": {"destructiveHint": true},
            "inputSchema": {"type": "object"}}),
        json!({"name": "hidden", "description": "Filtered out.", "inputSchema": {"type": "object"}}),
    ])
    .0
}

fn request(name: &str, args: Value) -> ServerCallRequest {
    ServerCallRequest::parse(&json!({"server": "records", "name": name, "args": args})).unwrap()
}

#[test]
fn exactly_one_of_tab_and_server() {
    assert_eq!(target(&json!({"tabId": 1}), "listTools"), Ok(Target::Tab));
    assert_eq!(
        target(&json!({"server": "records"}), "listTools"),
        Ok(Target::Server("records".into()))
    );
    let error = |v: Value| target(&v, "callTool").unwrap_err().0;
    assert_eq!(
        error(json!({"tabId": 1, "server": "records"})),
        "callTool: give `tabId` (a tab's tools) or `server` (an MCP server's), not both"
    );
    assert!(error(json!({})).contains("`tabId` (a tab's tools) or `server`"));
    assert!(error(json!({"server": 3})).contains("not a number"));
    assert!(error(json!({"server": " "})).contains("non-empty"));
    assert!(error(json!([])).contains("not an array"));

    // Through the one parser of operations: the same names, new shapes.
    assert_eq!(
        Op::parse(OpName::ListTools, &json!({"server": "records"})),
        Ok(Op::ListServerTools {
            server: "records".into()
        })
    );
    let op = Op::parse(
        OpName::CallTool,
        &json!({"server": "records", "name": "add"}),
    )
    .unwrap();
    assert_eq!(op.name(), OpName::CallTool);
    assert!(
        matches!(op, Op::CallServerTool(ServerCallRequest { ref server, .. }) if server == "records")
    );
    assert!(matches!(
        Op::parse(OpName::CallTool, &json!({"tabId": 2, "name": "add"})),
        Ok(Op::CallTool(_))
    ));
    assert_eq!(
        Op::parse(OpName::ListTools, &json!({"server": "x"})).map(|op| op.name()),
        Ok(OpName::ListTools)
    );
}

#[test]
fn call_requests_are_checked() {
    let r = request("add", json!({"a": 1}));
    assert_eq!(
        (r.server.as_str(), r.name.as_str(), r.timeout_ms),
        ("records", "add", 30_000)
    );
    let error = |v: Value| ServerCallRequest::parse(&v).unwrap_err().0;
    assert_eq!(
        error(json!({"server": "records"})),
        "callTool: `name` is required"
    );
    assert!(
        error(json!({"server": "records", "name": "add", "args": [1]}))
            .contains("must be an object")
    );
    assert!(
        error(json!({"server": "records", "name": "add", "timeoutMs": 0}))
            .contains("between 1 and")
    );
    assert!(
        error(json!({"server": "records", "name": "add", "frameId": 0}))
            .contains("`frameId` is for a tab")
    );
    let timed =
        ServerCallRequest::parse(&json!({"server": "s", "name": "n", "timeoutMs": 500})).unwrap();
    assert_eq!(timed.timeout_ms, 500);
    assert_eq!(
        timed_out(&timed)["error"],
        "`n` of the MCP server `s` gave no answer within 500 ms"
    );
}

#[test]
fn servers_are_found_by_name() {
    let servers = vec![server(false)];
    assert_eq!(find_server(&servers, "records").unwrap().name, "records");
    assert_eq!(
        find_server(&servers, "other").unwrap_err(),
        "no MCP server `other` (configured: records)"
    );
    assert!(find_server(&[], "x")
        .unwrap_err()
        .contains("none is configured"));
    let mut broken = server(false);
    broken.url = "ftp://records.example".into();
    assert!(
        find_server(&[broken], "records").is_err(),
        "a bad config is not opened"
    );
}

#[test]
fn tools_are_listed_as_a_tab_lists_them() {
    let listed = tools_response(&server(false), &tools());
    let names: Vec<&str> = listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["add", "delete_record", "many"], "the filter holds");
    let delete = &listed["tools"][1];
    assert_eq!(delete["inputSchema"]["required"], json!(["id"]));
    assert_eq!(delete["title"], "Delete");
    assert_eq!(delete["server"], "records");
    assert_eq!(delete["needsConfirmation"], true);
    assert_eq!(listed["tools"][0]["annotations"]["readOnlyHint"], true);
    assert_eq!(listed["tools"][0]["needsConfirmation"], false);
    assert_eq!(listed["problems"], json!([]));
    let trusted = tools_response(&server(true), &tools());
    assert_eq!(trusted["tools"][1]["needsConfirmation"], false);
}

#[test]
fn bad_arguments_are_never_planned() {
    let refused =
        plan_call(&server(false), &tools(), &request("add", json!({"a": "1"}))).unwrap_err();
    assert_eq!(refused["ok"], false);
    let error = refused["error"].as_str().unwrap();
    assert!(
        error.starts_with("not sent: the arguments do not match the input schema of `add`"),
        "{error}"
    );
    let paths: Vec<&str> = refused["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["/b", "/a"],
        "schema order: required, then properties"
    );
    let pattern = plan_call(
        &server(false),
        &tools(),
        &request("delete_record", json!({"id": "x"})),
    )
    .unwrap_err();
    assert_eq!(pattern["errors"][0]["path"], "/id");
}

#[test]
fn unknown_and_filtered_tools_are_refused() {
    for name in ["nope", "hidden"] {
        let refused = plan_call(&server(false), &tools(), &request(name, json!({}))).unwrap_err();
        let error = refused["error"].as_str().unwrap();
        assert!(
            error.contains(&format!("offers no tool named `{name}`")),
            "{error}"
        );
        assert!(error.contains("add, delete_record, many"), "{error}");
    }
}

#[test]
fn a_tool_that_acts_is_confirmed_unless_the_server_is_trusted() {
    let read = plan_call(
        &server(false),
        &tools(),
        &request("add", json!({"a": 1, "b": 2})),
    )
    .unwrap();
    assert_eq!(read.question, None);
    let acts = plan_call(
        &server(false),
        &tools(),
        &request("delete_record", json!({"id": "r-1"})),
    )
    .unwrap();
    let question = acts.question.unwrap();
    assert!(
        question.contains("A call by hand wants to run “delete_record” of the MCP server records"),
        "{question}"
    );
    assert!(
        question.contains("\"r-1\"") && question.ends_with("Allow it?"),
        "{question}"
    );
    assert!(!question.contains("agent"), "no agent asks: {question}");
    let trusted = plan_call(
        &server(true),
        &tools(),
        &request("delete_record", json!({"id": "r-1"})),
    )
    .unwrap();
    assert_eq!(trusted.question, None);
    // Arguments that cannot be shown whole are not asked about: the call is refused.
    let keys: serde_json::Map<String, Value> =
        (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
    let refused = plan_call(
        &server(false),
        &tools(),
        &request("many", Value::Object(keys)),
    )
    .unwrap_err();
    assert!(refused["error"]
        .as_str()
        .unwrap()
        .contains("cannot all be shown"));
    assert_eq!(
        crate::core::confirm::declined(),
        json!({"ok": false, "error": "declined: the person did not allow this call"})
    );
}

#[test]
fn answers_carry_no_secret() {
    let tool = &tools()[0];
    let result = CallResult::Ok {
        text: "your key is sk-live-123456789 ok".into(),
        structured: None,
        parts: Vec::new(),
    };
    let answer = call_answer(tool, result, &["sk-live-123456789"]);
    assert_eq!(answer["ok"], true);
    assert!(
        !answer.to_string().contains("sk-live-123456789"),
        "{answer}"
    );
    let failed = call_answer(
        tool,
        CallResult::Error("bad token tok-987654321".into()),
        &["tok-987654321"],
    );
    assert_eq!(failed["ok"], false);
    assert!(!failed.to_string().contains("tok-987654321"));
}
