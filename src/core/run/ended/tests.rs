//! A run's end written as `run` answers: every key, in its order; every outcome's `type`.

use serde_json::json;

use super::*;
use crate::core::agui::ToolCall;

#[test]
fn the_answer_has_every_key_in_its_order() {
    let ended = RunEnded {
        run_id: "r".into(),
        thread_id: "t".into(),
        outcome: RunOutcome::Completed {
            text: "Done.".into(),
        },
        events: vec![json!({"type": "RUN_STARTED"})],
        messages: vec![
            Message::User {
                id: "u1".into(),
                content: "Go.".into(),
            },
            Message::Assistant {
                id: "a1".into(),
                content: None,
                tool_calls: vec![ToolCall::function("c1", "add", r#"{"n":1}"#)],
            },
            Message::Tool {
                id: "t1".into(),
                content: "2".into(),
                tool_call_id: "c1".into(),
            },
        ],
        transcript: r#"{"text":"Done."}"#.into(),
        usage: RunUsage::default(),
    };
    assert_eq!(
        ended.to_json().to_string(),
        concat!(
            r#"{"runId":"r","threadId":"t","outcome":{"type":"completed","text":"Done."},"#,
            r#""events":[{"type":"RUN_STARTED"}],"messages":[{"role":"user","id":"u1","content":"Go."},"#,
            r#"{"role":"assistant","id":"a1","toolCalls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"n\":1}"}}]},"#,
            r#"{"role":"tool","id":"t1","content":"2","toolCallId":"c1"}],"#,
            r#""transcript":"{\"text\":\"Done.\"}","usage":null}"#
        )
    );
    let used = ended.with_tokens(10, 5);
    assert_eq!(used.to_json()["usage"], used.usage.to_value());
    assert_eq!(used.to_json()["usage"]["inputTokens"], 10);
}

#[test]
fn each_outcome_s_kind_is_its_type() {
    let outcomes = [
        RunOutcome::Completed { text: "a".into() },
        RunOutcome::FrontendTools { calls: Vec::new() },
        RunOutcome::EndedByTool {
            tool: "t".into(),
            outcome: json!(null),
        },
        RunOutcome::Submitted { value: json!({}) },
        RunOutcome::BudgetSpent { text: "b".into() },
        RunOutcome::Stopped { reason: "s".into() },
        RunOutcome::Failed {
            message: "f".into(),
        },
    ];
    for outcome in outcomes {
        let value = serde_json::to_value(&outcome).expect("json");
        assert_eq!(value["type"], outcome.kind(), "{value}");
    }
}
