//! AG-UI events and messages, as the host emits them.
//!
//! Only events and fields valid in both AG-UI 1.0 and the 0.0.x client that CopilotKit pins
//! are produced. Serialization follows the protocol: `type` in SCREAMING_SNAKE_CASE, fields in
//! camelCase.

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One AG-UI event: what a run tells its client, in the order it happens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub enum Event {
    /// The run began; always the first event of a run.
    RunStarted {
        /// The conversation the run belongs to.
        thread_id: String,
        /// This run's id, unique within the thread.
        run_id: String,
    },
    /// The run ended well; nothing follows it.
    RunFinished {
        /// The conversation the run belongs to.
        thread_id: String,
        /// This run's id.
        run_id: String,
        /// The structured result, when the run was asked for one (`submit_result`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
    },
    /// The run ended with an error; nothing follows it.
    RunError {
        /// What went wrong, for the person.
        message: String,
        /// A stable code for programs (`model_error`, `worker_restarted`), when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
    },
    /// A step (one model call and the tool calls it asked for) began.
    StepStarted {
        /// The step's name (`step_1`, `step_2`, ...).
        step_name: String,
    },
    /// The step of that name ended.
    StepFinished {
        /// The name its [`Event::StepStarted`] gave.
        step_name: String,
    },
    /// The model began a text message.
    TextMessageStart {
        /// The id the message's content and end events refer to.
        message_id: String,
        /// Who speaks (the assistant, for what the host emits).
        role: Role,
    },
    /// A piece of a text message, to append to what came before.
    TextMessageContent {
        /// The message this piece belongs to.
        message_id: String,
        /// The text to append (never empty).
        delta: String,
    },
    /// The text message is complete.
    TextMessageEnd {
        /// The message that ended.
        message_id: String,
    },
    /// The model began a tool call.
    ToolCallStart {
        /// The id the call's arguments, end and result refer to.
        tool_call_id: String,
        /// The tool called.
        tool_call_name: String,
        /// The assistant message the call belongs to, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        parent_message_id: Option<String>,
    },
    /// A piece of a tool call's arguments (JSON text), to append to what came before.
    ToolCallArgs {
        /// The call these arguments belong to.
        tool_call_id: String,
        /// The JSON text to append.
        delta: String,
    },
    /// The tool call's arguments are complete.
    ToolCallEnd {
        /// The call that ended.
        tool_call_id: String,
    },
    /// The result of a tool call, as the model will see it.
    ToolCallResult {
        /// The id of the tool message that carries the result.
        message_id: String,
        /// The call this is the result of.
        tool_call_id: String,
        /// The result as text.
        content: String,
        /// `tool`, when said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        role: Option<Role>,
    },
    /// The whole conversation as it stands, replacing what the client held.
    MessagesSnapshot {
        /// Every message of the conversation, in order.
        messages: Vec<Message>,
    },
    /// An event of the host's own (`webmcp_host.*`), which clients that do not know it ignore.
    Custom {
        /// The event's name, `webmcp_host.` and what happened.
        name: String,
        /// What the event carries.
        value: Value,
    },
}

/// Who speaks in a text message or a tool result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The model.
    Assistant,
    /// A tool, answering a call.
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
    /// Instructions to the model from whoever set up the conversation.
    System {
        /// The message's id, unique in the conversation.
        id: String,
        /// The instructions.
        content: String,
    },
    /// What the person wrote.
    User {
        /// The message's id, unique in the conversation.
        id: String,
        /// The person's text.
        content: String,
    },
    /// What the model answered: text, tool calls, or both.
    Assistant {
        /// The message's id, unique in the conversation.
        id: String,
        /// The model's text, when it wrote any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
        /// The tool calls the model made in this message, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, given back to the model.
    Tool {
        /// The message's id, unique in the conversation.
        id: String,
        /// The result as text.
        content: String,
        /// The id of the call this answers.
        tool_call_id: String,
    },
}

/// A tool call inside an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The call's id, which its tool message names.
    pub id: String,
    /// Always [`FunctionKind::Function`] (`"type": "function"`).
    #[serde(rename = "type")]
    pub kind: FunctionKind,
    /// The function called and its arguments.
    pub function: FunctionCall,
}

/// The kind of a tool call; AG-UI knows only functions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FunctionKind {
    /// A function call (`"function"`).
    Function,
}

/// The function a tool call names, with its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as JSON text (always an object in what the host emits).
    pub arguments: String,
}

impl ToolCall {
    /// A function call with this id, tool name and arguments (JSON text).
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
        coalesce_into(&mut out, event);
    }
    out
}

/// Appends `event` to `out` as [`coalesce`] would: merged into the last event when both are
/// deltas of one message or one call.
pub fn coalesce_into(out: &mut Vec<Event>, event: Event) {
    {
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
