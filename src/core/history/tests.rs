//! A run's history rebuilt from its events: text, calls and results joined, a snapshot taking
//! over, the calls left without a result marked.

use serde_json::{json, Value};

use super::*;

fn message(value: Value) -> Message {
    serde_json::from_value(value).expect("a message")
}

#[test]
fn a_cut_run_is_rebuilt_from_its_events_and_its_unanswered_calls_marked() {
    let base = vec![message(
        json!({"role": "user", "id": "u1", "content": "Buy two."}),
    )];
    let events = [
        json!({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}),
        json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Buying "}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "now."}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "look", "parentMessageId": "m1"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"}),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": [
            {"type": "text", "text": "2 left [image image/png, 4 bytes of base64 not shown]"},
            {"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}}]}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "buy", "parentMessageId": "m1"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": "{\"n\":"}),
        json!({"not": "an event"}),
    ];
    let (messages, cut) = rebuild(base, &events);
    assert_eq!(cut, vec!["buy"]);
    let text = serde_json::to_value(&messages).expect("json");
    assert_eq!(text[1]["content"], "Buying now.");
    assert_eq!(text[1]["toolCalls"][0]["function"]["arguments"], "{}");
    assert_eq!(
        text[1]["toolCalls"][1]["function"]["arguments"], "{}",
        "arguments cut short are no JSON: an empty object"
    );
    assert_eq!(text[2]["toolCallId"], "c1");
    // A result with media: the model's text, as the run gave it.
    assert_eq!(
        text[2]["content"],
        "2 left [image image/png, 4 bytes of base64 not shown]"
    );
    assert_eq!(
        (text[3]["toolCallId"].as_str(), text[3]["content"].as_str()),
        (Some("c2"), Some(MAY_HAVE_RUN))
    );
    assert_eq!(messages.len(), 4);
}

#[test]
fn a_snapshot_replaces_what_came_before_it() {
    let base = vec![message(
        json!({"role": "user", "id": "u1", "content": "Hi."}),
    )];
    let snapshot = json!({"type": "MESSAGES_SNAPSHOT", "messages": [
        {"role": "user", "id": "u1", "content": "Hi."},
        {"role": "assistant", "id": "m1", "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "buy", "arguments": "{\"n\":2}"}}]},
        {"role": "tool", "id": "t1", "toolCallId": "c1", "content": "done"}]});
    let (messages, cut) = rebuild(base, &[snapshot]);
    assert!(cut.is_empty());
    assert_eq!(messages.len(), 3);
    // A log with nothing of the run leaves the history as it was.
    let (same, cut) = rebuild(messages.clone(), &[]);
    assert_eq!((same, cut.len()), (messages, 0));
}
