use serde_json::{json, Value};

use super::*;

fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_call_then_an_answer_reads_as_two_steps() {
    let events = lines(include_str!(
        "../../../tests/golden/turns/call-then-answer.events.jsonl"
    ));
    let times: Vec<f64> = (0..events.len())
        .map(|i| 1000.0 + 10.0 * i as f64)
        .collect();
    let t = timeline(&events, &times, Some("add 2 and 40"));
    assert_eq!(t.prompt.as_deref(), Some("add 2 and 40"));
    assert_eq!(t.state, "finished");
    assert_eq!(t.answer.as_deref(), Some("2 + 40 = 42."));
    assert_eq!(t.entries.len(), 2, "{:#?}", t.entries);
    let Entry::Step(first) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(first.name, "step_1");
    assert_eq!(first.text, "Let me add.\n");
    assert_eq!(first.duration_ms, Some(80.0));
    assert_eq!(first.calls.len(), 1);
    let call = &first.calls[0];
    assert_eq!(call.name, "add");
    assert_eq!(call.args, json!({"a": 2, "b": 40}));
    assert_eq!(call.result.as_deref(), Some("42"));
    assert_eq!(call.duration_ms, Some(20.0));
    assert_eq!(call.error, None);
    assert_eq!(t.duration_ms, Some(150.0));
}

#[test]
fn streamed_text_is_merged_into_one_message() {
    let events = vec![
        json!({"type": "RUN_STARTED", "runId": "r", "threadId": "t"}),
        json!({"type": "STEP_STARTED", "stepName": "step_1"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hel"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "lo"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": " there"}),
        json!({"type": "TEXT_MESSAGE_END", "messageId": "m"}),
        json!({"type": "STEP_FINISHED", "stepName": "step_1"}),
    ];
    let t = timeline(&events, &[], None);
    assert_eq!(t.state, "running");
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(step.text, "Hello there");
    assert_eq!(step.duration_ms, None);
    assert_eq!(t.answer, None);
}

#[test]
fn repaired_arguments_and_their_notes_are_shown() {
    let events = vec![
        json!({"type": "STEP_STARTED", "stepName": "step_1"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "sum"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"a\": \"2\", \"b\": 40"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_repair", "value": {"toolCallId": "c1", "toolCallName": "add", "writtenName": "sum", "fixes": [{"step": "json", "detail": "closed the object"}, {"step": "coerce", "detail": "/a: \"2\" → 2"}]}}),
        json!({"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "m", "role": "assistant", "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{\"a\":2,\"b\":40}"}}]}]}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "messageId": "r", "content": "{\"error\":\"declined: the person did not allow this call\"}"}),
        json!({"type": "STEP_FINISHED", "stepName": "step_1", "usage": {"input": 10, "output": 5}}),
        json!({"type": "RUN_ERROR", "message": "the provider answered 500", "code": "model_error"}),
    ];
    let t = timeline(
        &events,
        &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 45.0, 50.0, 51.0],
        None,
    );
    assert_eq!(t.state, "error");
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    let call = &step.calls[0];
    assert_eq!(call.name, "add");
    assert_eq!(call.written_name.as_deref(), Some("sum"));
    assert_eq!(call.args, json!({"a": 2, "b": 40}));
    assert_eq!(call.repairs, ["closed the object", "/a: \"2\" → 2"]);
    assert_eq!(call.confirmation.as_deref(), Some("declined"));
    assert_eq!(
        call.error.as_deref(),
        Some("declined: the person did not allow this call")
    );
    assert_eq!(call.duration_ms, Some(40.0));
    // Tokens come from the step's `webmcp_host.usage` event only, never from STEP_FINISHED.
    assert_eq!(step.tokens, Tokens::default());
    assert_eq!(step.tokens.usage, "unknown");
    assert_eq!(
        t.entries[1],
        Entry::Error {
            message: "the provider answered 500".into(),
            code: Some("model_error".into())
        }
    );
}

#[test]
fn rejected_calls_unknown_events_and_a_cut_log_are_kept() {
    let events = vec![
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "mid-way"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_call_rejected", "value": {"toolCallId": "c9", "writtenName": "launch", "reason": "unknown_tool", "error": "unknown tool `launch`"}}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_source_error", "value": {"source": "mcp"}}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "old", "content": "late"}),
        json!("not an event"),
        json!({"type": "RUN_FINISHED", "result": {"type": "completed"}}),
    ];
    let t = timeline(&events, &[f64::NAN], None);
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(step.text, "mid-way");
    assert_eq!(
        step.calls[0].rejected.as_deref(),
        Some("unknown tool `launch`")
    );
    assert_eq!(step.calls[0].name, "launch");
    assert_eq!(step.calls[1].result.as_deref(), Some("late"));
    assert!(
        matches!(&t.entries[1], Entry::Note { name, .. } if name == "webmcp_host.tool_source_error")
    );
    assert_eq!(t.answer.as_deref(), Some("mid-way"));
    assert_eq!(t.duration_ms, None);
    assert_eq!(t.events, 6);
}

#[test]
fn of_log_reads_a_run_log_answer() {
    let log = json!({
        "run": {"prompt": "hi", "state": "finished"},
        "events": [{"type": "STEP_STARTED", "stepName": "s"}, {"type": "STEP_FINISHED", "stepName": "s"}],
        "times": [5, 9],
    });
    let t = of_log(&log);
    assert_eq!(t.prompt.as_deref(), Some("hi"));
    assert_eq!(t.state, "finished");
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(step.duration_ms, Some(4.0));
    let value = serde_json::to_value(&t).unwrap();
    assert_eq!(value["entries"][0]["kind"], "step");
    assert_eq!(of_log(&json!(null)).entries.len(), 0);
}

#[test]
fn a_reask_is_a_note_of_its_call_and_an_observed_call_is_not_repeated() {
    let events = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "add"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_reask", "value": {"toolCallId": "c1", "toolCallName": "add", "error": "bad"}}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_observe", "value": {"phase": "call", "toolCallId": "c1"}}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_observe", "value": {"phase": "call", "toolCallId": "elsewhere"}}),
    ];
    let t = timeline(&events, &[], None);
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(step.calls[0].repairs, ["asked the model again"]);
    assert_eq!(t.entries.len(), 2, "{:?}", t.entries);
    assert!(
        matches!(&t.entries[1], Entry::Note { name, .. } if name == "webmcp_host.tool_observe")
    );
}

#[test]
fn a_steps_tokens_come_from_its_usage_event() {
    let usage = |step: u64, value: Value| {
        let mut value = value;
        value["step"] = json!(step);
        json!({"type": "CUSTOM", "name": "webmcp_host.usage", "value": value})
    };
    let events = vec![
        json!({"type": "STEP_STARTED", "stepName": "step_1"}),
        usage(
            1,
            json!({"usage": "reported", "inputTokens": 1000, "outputTokens": 100, "cachedInputTokens": 200, "cost": 0.0028}),
        ),
        json!({"type": "STEP_FINISHED", "stepName": "step_1"}),
        json!({"type": "STEP_STARTED", "stepName": "step_2"}),
        usage(
            2,
            json!({"usage": "unknown", "inputTokens": null, "outputTokens": null, "cost": null}),
        ),
        json!({"type": "STEP_FINISHED", "stepName": "step_2"}),
        json!({"type": "STEP_STARTED", "stepName": "step_3"}),
        json!({"type": "STEP_FINISHED", "stepName": "step_3"}),
        // Late (after its step ended): placed by its step number.
        usage(
            3,
            json!({"usage": "reported", "inputTokens": 7, "outputTokens": 3, "cachedInputTokens": null, "cost": null}),
        ),
        // A step the log does not hold: kept as a note.
        usage(
            9,
            json!({"usage": "reported", "inputTokens": 1, "outputTokens": 1}),
        ),
    ];
    let t = timeline(&events, &[], None);
    let steps: Vec<&Step> = (t.entries.iter())
        .filter_map(|e| match e {
            Entry::Step(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(steps.len(), 3);
    let first = &steps[0].tokens;
    assert_eq!(first.usage, "reported");
    assert_eq!(
        (
            first.input_tokens,
            first.output_tokens,
            first.cached_input_tokens
        ),
        (Some(1000), Some(100), Some(200))
    );
    assert_eq!(first.cost, Some(0.0028));
    assert_eq!(steps[1].tokens, Tokens::default());
    assert_eq!(steps[2].tokens.input_tokens, Some(7));
    assert_eq!(steps[2].tokens.cost, None);
    assert!(
        matches!(t.entries.last(), Some(Entry::Note { name, .. }) if name == "webmcp_host.usage")
    );
    let value = serde_json::to_value(&t).unwrap();
    assert_eq!(value["entries"][0]["tokens"]["inputTokens"], 1000);
    assert_eq!(value["entries"][1]["tokens"]["usage"], "unknown");
    assert_eq!(value["entries"][1]["tokens"]["inputTokens"], Value::Null);
}

#[test]
fn the_usage_event_name_is_the_one_the_drive_sends() {
    assert_eq!(super::USAGE, crate::core::agui::CUSTOM_USAGE);
}

#[test]
fn a_result_that_breaks_its_output_schema_says_so_at_its_call() {
    let errors = json!([{"pointer": "/orderId", "message": "7 is not of type \"string\""}]);
    let events = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "track_order"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_output_errors", "value": {"toolCallId": "c1", "outputErrors": errors}}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": "{\"orderId\": 7}"}),
    ];
    let t = timeline(&events, &[], None);
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(step.calls[0].output_errors.as_ref(), Some(&errors));
    assert_eq!(
        t.entries.len(),
        1,
        "no note besides the call: {:?}",
        t.entries
    );
    assert_eq!(
        super::OUTPUT_ERRORS,
        crate::core::agui::CUSTOM_TOOL_OUTPUT_ERRORS
    );
}

#[test]
fn a_call_allowed_by_a_site_policy_says_so() {
    let events = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "buy"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_confirmation", "value": {"toolCallId": "c1", "confirmation": "allowed by site policy https://shop.test"}}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": "bought"}),
    ];
    let t = timeline(&events, &[], None);
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(
        step.calls[0].confirmation.as_deref(),
        Some("allowed by site policy https://shop.test")
    );
    assert_eq!(t.entries.len(), 1, "{:?}", t.entries);
    assert_eq!(
        super::CONFIRMATION,
        crate::core::agui::CUSTOM_TOOL_CONFIRMATION
    );
}

#[test]
fn a_result_with_media_shows_the_models_text() {
    let events = vec![
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "charts__plot"}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        json!({"type": "TOOL_CALL_RESULT", "toolCallId": "c1", "content": [
            {"type": "text", "text": "{\"error\":\"no data\"}"},
            {"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}}]}),
    ];
    let t = timeline(&events, &[], None);
    let Entry::Step(step) = &t.entries[0] else {
        panic!()
    };
    assert_eq!(
        step.calls[0].result.as_deref(),
        Some("{\"error\":\"no data\"}")
    );
    assert_eq!(step.calls[0].error.as_deref(), Some("no data"));
}
