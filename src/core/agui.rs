//! AG-UI events and messages, as the host emits them.
//!
//! Only events and fields valid in both AG-UI 1.0 and the 0.0.x client that CopilotKit pins
//! are produced. Serialization follows the protocol: `type` in SCREAMING_SNAKE_CASE, fields in
//! camelCase.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One AG-UI event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    RunStarted {
        thread_id: String,
        run_id: String,
    },
    RunFinished {
        thread_id: String,
        run_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
    },
    RunError {
        message: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    StepStarted {
        step_name: String,
    },
    StepFinished {
        step_name: String,
    },
    TextMessageStart {
        message_id: String,
        role: Role,
    },
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    TextMessageEnd {
        message_id: String,
    },
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    ToolCallEnd {
        tool_call_id: String,
    },
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        content: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
    },
    MessagesSnapshot {
        messages: Vec<Message>,
    },
    Custom {
        name: String,
        value: Value,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Assistant,
    Tool,
}

/// A message of a conversation, as AG-UI carries it in `MESSAGES_SNAPSHOT` and run input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "role",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum Message {
    System {
        id: String,
        content: String,
    },
    User {
        id: String,
        content: String,
    },
    Assistant {
        id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    Tool {
        id: String,
        content: String,
        tool_call_id: String,
    },
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    pub function: FunctionCall,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    Function,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// The arguments as JSON text (always an object in what the host emits).
    pub arguments: String,
}

impl ToolCall {
    pub fn function(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            kind: FunctionKind::Function,
            function: FunctionCall {
                name: name.into(),
                arguments: arguments.into(),
            },
        }
    }
}

impl Event {
    /// The event as one line of JSONL.
    pub fn to_json_line(&self) -> String {
        serde_json::to_string(self)
            .expect("events serialize: their fields are strings and JSON values")
    }
}

/// Merges adjacent `TEXT_MESSAGE_CONTENT` deltas of one message and adjacent `TOOL_CALL_ARGS`
/// deltas of one call. A stream and its coalesced form mean the same to every client; the
/// coalesced form does not depend on how the model's output was split into chunks.
pub fn coalesce(events: impl IntoIterator<Item = Event>) -> Vec<Event> {
    let mut out: Vec<Event> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (
                Some(Event::TextMessageContent {
                    message_id: last,
                    delta: text,
                }),
                Event::TextMessageContent { message_id, delta },
            ) if *last == message_id => text.push_str(&delta),
            (
                Some(Event::ToolCallArgs {
                    tool_call_id: last,
                    delta: text,
                }),
                Event::ToolCallArgs {
                    tool_call_id,
                    delta,
                },
            ) if *last == tool_call_id => text.push_str(&delta),
            (_, event) => out.push(event),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_serialize_as_ag_ui() {
        let event = Event::ToolCallStart {
            tool_call_id: "c1".into(),
            tool_call_name: "add".into(),
            parent_message_id: Some("m1".into()),
        };
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "add", "parentMessageId": "m1"})
        );
        let snapshot = Event::MessagesSnapshot {
            messages: vec![
                Message::User {
                    id: "u".into(),
                    content: "hi".into(),
                },
                Message::Assistant {
                    id: "m".into(),
                    content: None,
                    tool_calls: vec![ToolCall::function("c1", "add", "{}")],
                },
                Message::Tool {
                    id: "t".into(),
                    content: "2".into(),
                    tool_call_id: "c1".into(),
                },
            ],
        };
        assert_eq!(
            serde_json::to_value(&snapshot).unwrap(),
            json!({"type": "MESSAGES_SNAPSHOT", "messages": [
                {"role": "user", "id": "u", "content": "hi"},
                {"role": "assistant", "id": "m", "toolCalls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}]},
                {"role": "tool", "id": "t", "content": "2", "toolCallId": "c1"}
            ]})
        );
        let back: Event = serde_json::from_value(serde_json::to_value(&snapshot).unwrap()).unwrap();
        assert_eq!(back, snapshot);
    }

    #[test]
    fn coalescing_merges_only_same_id_neighbours() {
        let text = |id: &str, d: &str| Event::TextMessageContent {
            message_id: id.into(),
            delta: d.into(),
        };
        let merged = coalesce([
            text("a", "x"),
            text("a", "y"),
            text("b", "z"),
            text("a", "w"),
        ]);
        assert_eq!(
            merged,
            vec![text("a", "xy"), text("b", "z"), text("a", "w")]
        );
    }
}
