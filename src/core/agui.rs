//! AG-UI events and messages, as the host emits them.
//!
//! Every event is valid AG-UI 1.0. Every event is also valid for the 0.0.x client that
//! CopilotKit pins (0.0.59), except for four fields it does not know, each emitted only where
//! it says something: `outcome: {type: "cancelled"}` on a stopped run's `RUN_FINISHED`,
//! `outcome.pendingToolCallIds` on a run that ended on frontend tool calls,
//! `cacheWriteInputTokens` in `usage`, and content parts in `TOOL_CALL_RESULT.content` (a
//! result with media). Serialization follows the protocol: `type` in SCREAMING_SNAKE_CASE,
//! fields in camelCase.

#![warn(missing_docs)]

use serde::{Deserialize, Serialize};
use serde_json::Value;

// --- The host's own `CUSTOM` events (`webmcp_host.*`), each name defined here once ----------

/// `CUSTOM` event: one model step's tokens (and cost when priced), with the run's total so
/// far. See `provider::usage::StepUsage::event_value`.
pub const CUSTOM_USAGE: &str = "webmcp_host.usage";
/// `CUSTOM` event: what became of the run's conversation (`forked`: a new one carrying the
/// history, since the tools changed; `resumed`: a cut run's calls that may have run).
pub const CUSTOM_CONVERSATION: &str = "webmcp_host.conversation";
/// `CUSTOM` event: the page's tools changed during the run, listed again after a page call:
/// `{added: [names], removed: [names]}` (the next model step has the new tools).
pub const CUSTOM_TOOLS_CHANGED: &str = "webmcp_host.tools_changed";
/// `CUSTOM` event: an MCP server opened as a tool source: `{source, protocol, tools}` (the
/// protocol revision it speaks, the tools it listed).
pub const CUSTOM_TOOL_SOURCE: &str = "webmcp_host.tool_source";
/// `CUSTOM` event: a tool source failed or a tool was left out.
pub const CUSTOM_TOOL_SOURCE_ERROR: &str = "webmcp_host.tool_source_error";
/// `CUSTOM` event: a visitor call waits for the person.
pub const CUSTOM_TOOL_INPUT: &str = "webmcp_host.tool_input";
/// `CUSTOM` event: a call and its result (observe middleware).
pub const CUSTOM_TOOL_OBSERVE: &str = "webmcp_host.tool_observe";
/// `CUSTOM` event: an invalid call is asked again.
pub const CUSTOM_TOOL_REASK: &str = "webmcp_host.tool_reask";
/// `CUSTOM` event: how a call that acts was allowed without asking the person
/// (`{toolCallId, confirmation: "allowed by site policy <origin>"}`), just before its result.
pub const CUSTOM_TOOL_CONFIRMATION: &str = "webmcp_host.tool_confirmation";
/// A page call whose result breaks the tool's own output schema: `{toolCallId, outputErrors:
/// [{pointer, message}]}`, just before its result.
pub const CUSTOM_TOOL_OUTPUT_ERRORS: &str = "webmcp_host.tool_output_errors";
/// `CUSTOM` event: repair changed a call's name or arguments (the fixes are its value).
pub const CUSTOM_TOOL_REPAIR: &str = "webmcp_host.tool_repair";
/// `CUSTOM` event: a call will not run (the reason and the error are its value).
pub const CUSTOM_TOOL_CALL_REJECTED: &str = "webmcp_host.tool_call_rejected";

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
        /// How the run ended, as the host's own answer says it (`{type: "completed", text}`,
        /// `{type: "stopped", reason}`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
        /// Why the run ended, in AG-UI's terms; absent means success.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<Outcome>,
        /// The tokens of the run's model calls, one entry per provider and model; absent when
        /// no count is known.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
    },
    /// The run ended with an error; nothing follows it.
    RunError {
        /// What went wrong, for the person.
        message: String,
        /// A stable code for programs (`model_error`, `worker_restarted`), when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// The tokens of the model calls that ended before the failure, as on
        /// [`Event::RunFinished`].
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
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
        /// The result: its text, or (for a result with media) parts.
        content: ToolContent,
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

/// Why a run ended, as `RUN_FINISHED.outcome` says it (AG-UI 1.0's `RunFinishedOutcome`; the
/// host never pauses a run on an interrupt, so that outcome is not produced).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum Outcome {
    /// The run completed.
    Success {
        /// The frontend tool calls the run made and left for the client to answer, in the
        /// order they were made.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        pending_tool_call_ids: Vec<String>,
    },
    /// Whoever ran it stopped the run before it completed.
    Cancelled,
}

/// The tokens of one provider's model in a run (AG-UI 1.0's `TokenUsage`): each count is one
/// the provider reported, summed over the run's calls to that model; a count not known for
/// every call is left out, never guessed. `input_tokens` counts every prompt token (cache
/// reads and writes included) and `output_tokens` every generated one (reasoning included);
/// the cache and reasoning counts are parts of them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// The provider: `openai` (every OpenAI-compatible server), `anthropic`, `google`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The provider's id of the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Every prompt token, cache reads and writes included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Every generated token, reasoning included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// `input_tokens` + `output_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_tokens: Option<u64>,
    /// Of the output tokens, those spent on reasoning.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
    /// Of the input tokens, those read from the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// Of the input tokens, those written to the provider's cache.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
}

impl TokenUsage {
    /// Whether the entry carries a count.
    pub fn has_counts(&self) -> bool {
        [
            self.input_tokens,
            self.output_tokens,
            self.total_tokens,
            self.reasoning_tokens,
            self.cached_input_tokens,
            self.cache_write_input_tokens,
        ]
        .iter()
        .any(Option::is_some)
    }
}

/// What a tool returned, as `TOOL_CALL_RESULT.content` carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ToolContent {
    /// The text the model was given: a result without media.
    Text(String),
    /// A result with media: first a text part, the text the model was given, then the
    /// image, audio, video and document parts the tool returned, in its order (the model
    /// gets only a note of each in the text).
    Parts(Vec<ContentPart>),
}

impl ToolContent {
    /// The text the model was given: the string, or the text parts joined.
    pub fn text(&self) -> String {
        match self {
            ToolContent::Text(text) => text.clone(),
            ToolContent::Parts(parts) => parts
                .iter()
                .filter_map(|part| match part {
                    ContentPart::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The text the model was given, from a `TOOL_CALL_RESULT`'s `content` as JSON (a string,
    /// or parts); empty for anything else.
    pub fn text_of(content: &Value) -> String {
        match content {
            Value::String(text) => text.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter(|part| part.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
            _ => String::new(),
        }
    }
}

impl From<String> for ToolContent {
    fn from(text: String) -> Self {
        ToolContent::Text(text)
    }
}

impl From<&str> for ToolContent {
    fn from(text: &str) -> Self {
        ToolContent::Text(text.to_owned())
    }
}

/// One part of a tool's result (AG-UI 1.0's `ContentPart`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// Where its bytes are.
        source: PartSource,
    },
    /// Audio.
    Audio {
        /// Where its bytes are.
        source: PartSource,
    },
    /// A video.
    Video {
        /// Where its bytes are.
        source: PartSource,
    },
    /// A document (any other file).
    Document {
        /// Where its bytes are.
        source: PartSource,
    },
}

impl ContentPart {
    /// Bytes of the part's text, or of its source's value.
    pub fn len(&self) -> usize {
        match self {
            ContentPart::Text { text } => text.len(),
            ContentPart::Image { source }
            | ContentPart::Audio { source }
            | ContentPart::Video { source }
            | ContentPart::Document { source } => source.len(),
        }
    }

    /// Whether the part's text, or its source's value, is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A media part of the kind `mime_type` names (`image/…`, `audio/…`, `video/…`; anything
    /// else is a document).
    pub fn media(mime_type: Option<&str>, source: PartSource) -> ContentPart {
        match mime_type.and_then(|m| m.split('/').next()) {
            Some("image") => ContentPart::Image { source },
            Some("audio") => ContentPart::Audio { source },
            Some("video") => ContentPart::Video { source },
            _ => ContentPart::Document { source },
        }
    }
}

/// Where a media part's bytes are (AG-UI 1.0's `PartSource`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "lowercase",
    rename_all_fields = "camelCase"
)]
pub enum PartSource {
    /// Carried in the part, base64-encoded.
    Data {
        /// The bytes, base64-encoded.
        value: String,
        /// What the bytes are.
        mime_type: String,
    },
    /// At a URI (an MCP resource link's).
    Url {
        /// The URI.
        value: String,
        /// What it is, when said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

impl PartSource {
    /// Bytes of the source's value.
    pub fn len(&self) -> usize {
        match self {
            PartSource::Data { value, .. } | PartSource::Url { value, .. } => value.len(),
        }
    }

    /// Whether the source's value is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
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
    fn run_finished_says_the_outcome_and_usage_only_when_known() {
        let finished = |outcome, usage| Event::RunFinished {
            thread_id: "t".into(),
            run_id: "r".into(),
            result: None,
            outcome,
            usage,
        };
        assert_eq!(
            serde_json::to_value(finished(None, Vec::new())).unwrap(),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
        );
        assert_eq!(
            serde_json::to_value(finished(Some(Outcome::Cancelled), Vec::new())).unwrap(),
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {"type": "cancelled"}})
        );
        let pending = Outcome::Success {
            pending_tool_call_ids: vec!["c1".into(), "c2".into()],
        };
        let usage = TokenUsage {
            provider: Some("openai".into()),
            model: Some("gpt-4.1".into()),
            input_tokens: Some(10),
            output_tokens: Some(2),
            total_tokens: Some(12),
            ..TokenUsage::default()
        };
        let event = finished(Some(pending), vec![usage]);
        let value = serde_json::to_value(&event).unwrap();
        assert_eq!(
            value,
            json!({"type": "RUN_FINISHED", "threadId": "t", "runId": "r",
                "outcome": {"type": "success", "pendingToolCallIds": ["c1", "c2"]},
                "usage": [{"provider": "openai", "model": "gpt-4.1", "inputTokens": 10, "outputTokens": 2, "totalTokens": 12}]})
        );
        assert_eq!(serde_json::from_value::<Event>(value).unwrap(), event);
        let error = Event::RunError {
            message: "boom".into(),
            code: None,
            usage: Vec::new(),
        };
        assert_eq!(
            serde_json::to_value(error).unwrap(),
            json!({"type": "RUN_ERROR", "message": "boom"})
        );
    }

    #[test]
    fn a_tool_result_is_a_string_or_parts_after_the_models_text() {
        let result = |content| Event::ToolCallResult {
            message_id: "m".into(),
            tool_call_id: "c".into(),
            content,
            role: Some(Role::Tool),
        };
        let text = result(ToolContent::from("42"));
        assert_eq!(
            serde_json::to_value(&text).unwrap(),
            json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "42", "role": "tool"})
        );
        let parts = ToolContent::Parts(vec![
            ContentPart::Text {
                text: "a chart [image image/png, 4 bytes of base64 not shown]".into(),
            },
            ContentPart::media(
                Some("image/png"),
                PartSource::Data {
                    value: "AAAA".into(),
                    mime_type: "image/png".into(),
                },
            ),
            ContentPart::media(
                None,
                PartSource::Url {
                    value: "file:///a.md".into(),
                    mime_type: None,
                },
            ),
        ]);
        let value = serde_json::to_value(result(parts.clone())).unwrap();
        assert_eq!(
            value["content"],
            json!([
                {"type": "text", "text": "a chart [image image/png, 4 bytes of base64 not shown]"},
                {"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}},
                {"type": "document", "source": {"type": "url", "value": "file:///a.md"}}
            ])
        );
        assert_eq!(
            serde_json::from_value::<Event>(value.clone()).unwrap(),
            result(parts.clone())
        );
        // The text the model was given, from either form.
        assert_eq!(
            parts.text(),
            "a chart [image image/png, 4 bytes of base64 not shown]"
        );
        assert_eq!(ToolContent::text_of(&value["content"]), parts.text());
        assert_eq!(ToolContent::text_of(&json!("42")), "42");
        assert_eq!(ToolContent::text_of(&json!(null)), "");
        assert!(matches!(
            ContentPart::media(
                Some("video/mp4"),
                PartSource::Url {
                    value: "v".into(),
                    mime_type: None
                }
            ),
            ContentPart::Video { .. }
        ));
        assert!(matches!(
            ContentPart::media(
                Some("audio/wav"),
                PartSource::Url {
                    value: "a".into(),
                    mime_type: None
                }
            ),
            ContentPart::Audio { .. }
        ));
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
