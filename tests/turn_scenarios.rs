//! Turn scenarios with a scripted model: the run's inputs are fed as the shells would, and
//! the AG-UI events of each scenario are kept as a golden log in tests/golden/turns/ (which
//! the official AG-UI validators also check, see tests/agui/goldens.test.mjs).
//! `UPDATE_EXPECT=1 cargo test --test turn_scenarios` rewrites the logs.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use serde_json::json;
use webmcp_host::core::agui::Message;
use webmcp_host::core::provider::usage::{StepUsage, Usage};
use webmcp_host::core::run::*;

use common::turns::*;

#[test]
fn a_call_then_an_answer() {
    let h = drive(
        base("What is 2 + 40?"),
        vec![
            Step::Text("Let me add.\n<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 40}}</tool_call>"),
            Step::Text("2 + 40 = 42."),
        ],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    assert_eq!(
        h.outcome,
        Some(RunOutcome::Completed {
            text: "2 + 40 = 42.".into()
        })
    );
    assert_eq!(results(&h.events), ["42"]);
    assert_eq!(h.invocations[0].call_count, 1);
    assert_eq!(h.invocations[0].turn_id, "run_1");
    // The second model call sees the call and its result.
    let seen = &h.requests[1].messages;
    assert!(matches!(seen.last(), Some(Message::Tool { content, .. }) if content == "42"));
    golden("call-then-answer", &h.events);
}

#[test]
fn max_steps_tells_the_model_the_budget_is_spent() {
    let mut input = base("Add forever.");
    input.max_steps = 2;
    let call = "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 1}}</tool_call>";
    let h = drive(
        input,
        vec![
            Step::Text(call),
            Step::Text(call),
            Step::Text("I could only add twice: 2."),
        ],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    assert_eq!(h.invocations.len(), 2);
    assert_eq!(h.requests.len(), 3);
    assert!(
        h.requests[2].tools.is_empty(),
        "no tools once the budget is spent"
    );
    let Some(Message::User { content, .. }) = h.requests[2].messages.last() else {
        panic!()
    };
    assert!(
        content.contains("budget of this turn (2 calls) is spent"),
        "{content}"
    );
    assert_eq!(
        h.outcome,
        Some(RunOutcome::Completed {
            text: "I could only add twice: 2.".into()
        })
    );
    golden("max-steps", &h.events);
}

#[test]
fn calls_past_the_budget_in_one_step_do_not_run() {
    let mut input = base("Add three times at once.");
    input.max_steps = 2;
    let three = "<tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":1}}</tool_call><tool_call>{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":2}}</tool_call><tool_call>{\"name\":\"add\",\"arguments\":{\"a\":3,\"b\":3}}</tool_call>";
    let h = drive(
        input,
        vec![Step::Text(three), Step::Text("Done.")],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    assert_eq!(h.invocations.len(), 2);
    // The third call is refused at once; the first two answer when the page does.
    let results = results(&h.events);
    assert!(
        results[0].contains("budget of this turn (2 calls) is spent"),
        "{results:?}"
    );
    assert_eq!(results[1..], ["2", "4"]);
    golden("max-steps-one-step", &h.events);
}

#[test]
fn end_turn_resolves_at_once_and_drops_the_rest() {
    let mut input = base("Check out.");
    input
        .tools
        .push(tool("checkout", ToolKind::Page, json!({"type": "object"})));
    input
        .tools
        .push(tool("slow", ToolKind::Page, json!({"type": "object"})));
    let mut tools = |invocation: &ToolInvocation| match invocation.name.as_str() {
        "checkout" => Some(ToolOutcome::EndTurn {
            result: "order placed".into(),
            outcome: json!({"order": 17}),
        }),
        _ => None, // `slow` never answers
    };
    let h = drive(
        input,
        vec![Step::Text("<tool_call>{\"name\":\"slow\",\"arguments\":{}}</tool_call><tool_call>{\"name\":\"checkout\",\"arguments\":{}}</tool_call>")],
        &mut tools,
        &mut no_visitor,
        false,
    );
    assert_eq!(
        h.outcome,
        Some(RunOutcome::EndedByTool {
            tool: "checkout".into(),
            outcome: json!({"order": 17})
        })
    );
    assert_eq!(
        h.cancels,
        [h.invocations[0].call_id.clone()],
        "the slow call is cancelled"
    );
    golden("end-turn", &h.events);
}

#[test]
fn submit_result_ends_the_turn_with_valid_output() {
    let mut input = base("Extract the city.");
    input.output_schema = Some(
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    );
    let h = drive(
        input,
        vec![
            Step::Text("<tool_call>{\"name\": \"submit_result\", \"arguments\": {\"town\": \"Oslo\"}}</tool_call>"),
            Step::Text("<tool_call>{\"name\": \"submit_result\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>"),
        ],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    assert_eq!(
        h.outcome,
        Some(RunOutcome::Submitted {
            value: json!({"city": "Oslo"})
        })
    );
    assert_eq!(
        customs(&h.events, "webmcp_host.tool_reask").len(),
        1,
        "the invalid submit was asked again"
    );
    golden("submit-result", &h.events);
}

#[test]
fn visitor_tools_wait_for_the_person() {
    let mut input = base("Ask for the address, then the phone.");
    input.tools.push(tool(
        "ask_visitor",
        ToolKind::Visitor,
        json!({"type": "object", "properties": {"question": {"type": "string"}}}),
    ));
    let mut answers = 0;
    let mut visitor = |pending: &PendingInput| {
        answers += 1;
        if answers == 1 {
            Input::SubmitToolResult {
                call_id: pending.call_id.clone(),
                value: "Main St 1".into(),
            }
        } else {
            Input::RejectToolCall {
                call_id: pending.call_id.clone(),
                error: None,
            }
        }
    };
    let h = drive(
        input,
        vec![
            Step::Text("<tool_call>{\"name\":\"ask_visitor\",\"arguments\":{\"question\":\"Address?\"}}</tool_call>"),
            Step::Text("<tool_call>{\"name\":\"ask_visitor\",\"arguments\":{\"question\":\"Phone?\"}}</tool_call>"),
            Step::Text("Address noted; no phone."),
        ],
        &mut add_tool,
        &mut visitor,
        false,
    );
    assert_eq!(h.pending_seen.len(), 2);
    assert_eq!(h.pending_seen[0].args["question"], "Address?");
    assert_eq!(
        results(&h.events),
        ["Main St 1", "{\"error\":\"The visitor declined.\"}"]
    );
    assert!(
        h.invocations.is_empty(),
        "visitor tools never reach the shell"
    );
    golden("visitor-tools", &h.events);
}

#[test]
fn a_pending_visitor_input_is_dismissed_on_stop() {
    let mut input = base("Ask.");
    input.tools.push(tool(
        "ask_visitor",
        ToolKind::Visitor,
        json!({"type": "object"}),
    ));
    let mut visitor = |_: &PendingInput| Input::Stop {
        reason: "turn timed out".into(),
    };
    let h = drive(
        input,
        vec![Step::Text(
            "<tool_call>{\"name\":\"ask_visitor\",\"arguments\":{}}</tool_call>",
        )],
        &mut add_tool,
        &mut visitor,
        false,
    );
    assert_eq!(
        h.outcome,
        Some(RunOutcome::Stopped {
            reason: "turn timed out".into()
        })
    );
    assert_eq!(
        results(&h.events),
        ["{\"error\":\"dismissed: turn timed out\"}"]
    );
    golden("visitor-dismissed", &h.events);
}

#[test]
fn frontend_tools_end_the_run_and_win_name_clashes() {
    let mut input = base("Show a chart and add.");
    input.tools.push(tool(
        "show_chart",
        ToolKind::Page,
        json!({"type": "object"}),
    ));
    input.tools.push(tool(
        "show_chart",
        ToolKind::Frontend,
        json!({"type": "object", "properties": {"series": {"type": "array"}}}),
    ));
    let h = drive(
        input,
        vec![Step::Text("<tool_call>{\"name\":\"show_chart\",\"arguments\":{\"series\":[1,2]}}</tool_call><tool_call>{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}</tool_call>")],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    let Some(RunOutcome::FrontendTools { calls }) = &h.outcome else {
        panic!("{:?}", h.outcome)
    };
    assert_eq!(calls[0]["name"], "show_chart");
    assert_eq!(calls[0]["arguments"], json!({"series": [1, 2]}));
    assert_eq!(
        h.invocations.len(),
        1,
        "the page tool of the same step still ran"
    );
    assert_eq!(h.invocations[0].name, "add");
    // AG-UI's outcome names the call left to the client; the host's own result stays.
    let end = serde_json::to_value(h.events.last().unwrap()).unwrap();
    assert_eq!(
        end["outcome"],
        json!({"type": "success", "pendingToolCallIds": [calls[0]["id"]]})
    );
    assert_eq!(end["result"]["type"], "frontendTools");
    golden("frontend-tools", &h.events);
}

/// A step's use as the drive reports it for Anthropic (whose `input_tokens` leaves out the
/// cache reads and writes the host adds in).
fn anthropic_step(step: usize, uncached: u64, read: u64, written: u64, output: u64) -> StepUsage {
    StepUsage {
        step,
        model: "claude".into(),
        model_id: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        usage: Some(Usage {
            input_tokens: uncached + read + written,
            output_tokens: output,
            cached_input_tokens: Some(read),
            cache_write_input_tokens: Some(written),
            reasoning_tokens: None,
        }),
        finish_reason: Some("end_turn".into()),
        cost: None,
    }
}

#[test]
fn usage_is_summed_onto_run_finished() {
    let h = drive(
        base("What is 2 + 40?"),
        vec![
            Step::Used(
                "<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 2, \"b\": 40}}</tool_call>",
                anthropic_step(1, 12, 0, 1800, 30),
            ),
            Step::Used("2 + 40 = 42.", anthropic_step(2, 40, 1800, 0, 9)),
        ],
        &mut add_tool,
        &mut no_visitor,
        false,
    );
    assert_eq!(customs(&h.events, "webmcp_host.usage").len(), 2);
    let end = serde_json::to_value(h.events.last().unwrap()).unwrap();
    assert_eq!(
        end["usage"],
        json!([{"provider": "anthropic", "model": "claude-sonnet-4-5",
            "inputTokens": 3652, "outputTokens": 39, "totalTokens": 3691,
            "cachedInputTokens": 1800, "cacheWriteInputTokens": 1800}])
    );
    assert_eq!(end.get("outcome"), None);
    golden("usage", &h.events);
}

#[test]
fn an_mcp_image_result_is_content_parts_and_a_text_result_a_string() {
    use webmcp_host::core::agui::{Event, ToolContent};
    use webmcp_host::core::mcp::tools::{call_result, parse_tools};
    use webmcp_host::core::setup::call;
    let mut input = base("Chart my sales.");
    input.tools.push(tool(
        "charts__plot",
        ToolKind::Mcp,
        json!({"type": "object"}),
    ));
    let (mcp_tools, _) = parse_tools(&[json!({"name": "plot"})]);
    // As the worker answers an MCP call: the server's result, then the run's outcome.
    let mut tools = |invocation: &ToolInvocation| {
        let result = match invocation.name.as_str() {
            "charts__plot" => json!({"content": [
                {"type": "text", "text": "Sales by month:"},
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
                {"type": "resource_link", "uri": "https://charts.test/s.csv", "name": "s.csv", "mimeType": "text/csv"}
            ]}),
            _ => return add_tool(invocation),
        };
        let called = call::Called::Mcp {
            tool: Box::new(mcp_tools[0].clone()),
            result: call_result(&result),
        };
        Some(called.answer().outcome)
    };
    let h = drive(
        input,
        vec![
            Step::Text("<tool_call>{\"name\": \"charts__plot\", \"arguments\": {}}</tool_call><tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"),
            Step::Text("Here is the chart."),
        ],
        &mut tools,
        &mut no_visitor,
        false,
    );
    let contents: Vec<&ToolContent> = (h.events.iter())
        .filter_map(|e| match e {
            Event::ToolCallResult { content, .. } => Some(content),
            _ => None,
        })
        .collect();
    let text = "Sales by month:\n[image image/png, 12 bytes of base64 not shown]\n[resource link https://charts.test/s.csv s.csv]";
    assert_eq!(
        serde_json::to_value(contents[0]).unwrap(),
        json!([
            {"type": "text", "text": text},
            {"type": "image", "source": {"type": "data", "value": "iVBORw0KGgo=", "mimeType": "image/png"}},
            {"type": "document", "source": {"type": "url", "value": "https://charts.test/s.csv", "mimeType": "text/csv"}}
        ])
    );
    assert_eq!(*contents[1], ToolContent::Text("3".into()));
    // The model got the text, as before.
    let seen = &h.requests[1].messages;
    assert!(seen
        .iter()
        .any(|m| matches!(m, Message::Tool { content, .. } if content == text)));
    golden("mcp-image", &h.events);
}
