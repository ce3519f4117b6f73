//! Anthropic Messages.
//!
//! Request: `POST {base}/v1/messages` (the base URL is the API root, e.g.
//! `https://api.anthropic.com`), `x-api-key`, `anthropic-version`, and
//! `anthropic-dangerous-direct-browser-access: true` (the call comes from a browser). The
//! system text goes in `system`; calls are `tool_use` blocks and results `tool_result` blocks
//! in a user turn; turns of one role are merged. Stream: SSE events `message_start`,
//! `content_block_start` (text or `tool_use` with id and name), `content_block_delta`
//! (`text_delta`, `input_json_delta`), `content_block_stop`, `message_delta` (stop reason),
//! `message_stop`, `ping`, `error`.

use serde_json::{json, Map, Value};

use super::prompt::{text_conversation, Speaker};
use super::ModelRequest;
use super::{
    event_json, HttpRequest, ModelConfig, ModelEvent, ProviderError, SseEvents, SseStream,
};
use crate::core::agui::Message;
use crate::core::native::NativeDelta;
use crate::core::provider::usage::{tokens, Usage};

/// The `anthropic-version` header every request carries.
pub const API_VERSION: &str = "2023-06-01";
const DEFAULT_MAX_TOKENS: u32 = crate::core::limits::ANTHROPIC_DEFAULT_MAX_TOKENS;

/// The Messages request for one model call: system prompt, messages, tools (native or
/// the text formats), streaming on, the key in `x-api-key` and the browser-access header.
pub fn build(model: &ModelConfig, request: &ModelRequest, key: Option<&str>) -> HttpRequest {
    let (system, messages) = if model.native_tools {
        native_messages(&request.messages)
    } else {
        let (system, turns) = text_conversation(&request.messages, &request.tools);
        let mut messages: Vec<Value> = turns
            .into_iter()
            .map(|(speaker, text)| json!({"role": if speaker == Speaker::User { "user" } else { "assistant" }, "content": text}))
            .collect();
        ensure_user_first(&mut messages);
        (system, messages)
    };
    let mut body = json!({
        "model": model.model,
        "max_tokens": model.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        body["system"] = json!(system);
    }
    if model.native_tools && !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
            .collect();
    }
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("anthropic-version".to_owned(), API_VERSION.to_owned()),
        (
            "anthropic-dangerous-direct-browser-access".to_owned(),
            "true".to_owned(),
        ),
    ];
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        headers.push(("x-api-key".to_owned(), key.to_owned()));
    }
    let base = model.base_url.trim_end_matches('/');
    let url = if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    };
    HttpRequest {
        method: "POST".into(),
        url,
        headers,
        body: body.to_string(),
    }
}

/// Anthropic wants the first turn to be the user's.
fn ensure_user_first(messages: &mut Vec<Value>) {
    if messages.first().is_none_or(|m| m["role"] != "user") {
        messages.insert(0, json!({"role": "user", "content": "(start)"}));
    }
}

fn native_messages(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    let mut push = |role: &str, block: Value| match out.last_mut() {
        Some((last, blocks)) if last == role => blocks.push(block),
        _ => out.push((role.to_owned(), vec![block])),
    };
    for message in messages {
        match message {
            Message::System { content, .. } => system.push(content.clone()),
            Message::User { content, .. } => push("user", json!({"type": "text", "text": content})),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(text) = content.as_ref().filter(|t| !t.is_empty()) {
                    push("assistant", json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = match serde_json::from_str::<Value>(&call.function.arguments) {
                        Ok(Value::Object(map)) => Value::Object(map),
                        _ => Value::Object(Map::new()),
                    };
                    push(
                        "assistant",
                        json!({"type": "tool_use", "id": call.id, "name": call.function.name, "input": input}),
                    );
                }
            }
            Message::Tool {
                content,
                tool_call_id,
                ..
            } => push(
                "user",
                json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content}),
            ),
        }
    }
    let mut messages: Vec<Value> = out
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    ensure_user_first(&mut messages);
    (system.join("\n\n"), messages)
}

/// Decodes the Messages SSE stream.
pub type AnthropicDecoder = SseStream<AnthropicEvents>;

/// The reading of Messages events.
#[derive(Debug, Default)]
pub struct AnthropicEvents {
    stop_reason: Option<String>,
    /// `message_start`'s input (cache reads and writes included), cache reads and cache
    /// writes.
    input: Option<(u64, Option<u64>, Option<u64>)>,
    /// The output tokens so far (`message_delta`'s count is cumulative).
    output: Option<u64>,
    done: bool,
}

/// A `usage` object's input tokens (`input_tokens` counts neither cache reads nor cache
/// writes: uncached + cache writes + cache reads), cache reads and cache writes.
fn input_of(usage: &Value) -> Option<(u64, Option<u64>, Option<u64>)> {
    let uncached = tokens(usage, "/input_tokens")?;
    let read = tokens(usage, "/cache_read_input_tokens");
    let written = tokens(usage, "/cache_creation_input_tokens");
    Some((
        uncached + written.unwrap_or(0) + read.unwrap_or(0),
        read,
        written,
    ))
}

impl AnthropicEvents {
    fn usage(&self) -> Option<Usage> {
        let (input_tokens, cached_input_tokens, cache_write_input_tokens) = self.input?;
        Some(Usage {
            input_tokens,
            output_tokens: self.output?,
            cached_input_tokens,
            cache_write_input_tokens,
            // `output_tokens` counts the thinking tokens, but not apart.
            reasoning_tokens: None,
        })
    }
}

impl SseEvents for AnthropicEvents {
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        let Some(value) = event_json(data, "an event", &mut self.done, out) else {
            return;
        };
        let kind = if name.is_empty() {
            value.get("type").and_then(Value::as_str).unwrap_or("")
        } else {
            name
        };
        let index = value.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match kind {
            "content_block_start" => {
                let block = &value["content_block"];
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => out.push(ModelEvent::Native(NativeDelta {
                        index,
                        id: block.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: block.get("name").and_then(Value::as_str).map(str::to_owned),
                        // `input` is `{}` here; the arguments come as input_json_delta.
                        arguments: None,
                    })),
                    Some("text") => {
                        if let Some(text) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ModelEvent::Text(text.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = &value["delta"];
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(text) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(ModelEvent::Text(text.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        if let Some(json) = delta.get("partial_json").and_then(Value::as_str) {
                            out.push(ModelEvent::Native(NativeDelta {
                                index,
                                id: None,
                                name: None,
                                arguments: Some(json.to_owned()),
                            }));
                        }
                    }
                    _ => {} // thinking and signature deltas are not shown
                }
            }
            "message_start" => {
                let usage = &value["message"]["usage"];
                self.input = input_of(usage).or(self.input);
                self.output = tokens(usage, "/output_tokens").or(self.output);
            }
            "message_delta" => {
                if let Some(reason) = value["delta"].get("stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                let usage = &value["usage"];
                self.output = tokens(usage, "/output_tokens").or(self.output);
                self.input = input_of(usage).or(self.input);
            }
            "message_stop" => {
                self.done = true;
                out.push(ModelEvent::Report {
                    usage: self.usage(),
                    finish_reason: self.stop_reason.clone(),
                });
                out.push(ModelEvent::Done {
                    cut_by_limit: self.stop_reason.as_deref() == Some("max_tokens"),
                });
            }
            "error" => {
                self.done = true;
                let error = &value["error"];
                let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
                let message = error.get("message").and_then(Value::as_str).unwrap_or("");
                out.push(ModelEvent::Error(ProviderError {
                    message: format!("the model reported {kind}: {message}"),
                    retryable: matches!(
                        kind,
                        "overloaded_error" | "api_error" | "rate_limit_error"
                    ),
                    retry_after_ms: None,
                }));
            }
            _ => {} // content_block_stop, ping
        }
    }

    fn end(&mut self, out: &mut Vec<ModelEvent>) {
        if !self.done {
            self.done = true;
            out.push(ModelEvent::Error(ProviderError::fatal(
                "the model's stream ended before message_stop (connection dropped?)",
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::agui::ToolCall;
    use crate::core::provider::Decoder;
    use crate::core::provider::Provider;
    use crate::core::toolset::ToolSpec;

    fn model(native: bool) -> ModelConfig {
        ModelConfig {
            name: "claude".into(),
            provider: Provider::Anthropic,
            base_url: "https://api.anthropic.com".into(),
            model: "claude-sonnet-4-5".into(),
            native_tools: native,
            key_ref: Some("anthropic".into()),
            max_tokens: None,
            transcript: None,
            idle_timeout_ms: None,
        }
    }

    fn request() -> ModelRequest {
        ModelRequest {
            step: 2,
            messages: vec![
                Message::System {
                    id: "s".into(),
                    content: "Be brief.".into(),
                },
                Message::User {
                    id: "u".into(),
                    content: "2+2?".into(),
                },
                Message::Assistant {
                    id: "a".into(),
                    content: Some("Adding.".into()),
                    tool_calls: vec![
                        ToolCall::function("c1", "add", "{\"a\":2}"),
                        ToolCall::function("c2", "add", "{\"a\":3}"),
                    ],
                },
                Message::Tool {
                    id: "t1".into(),
                    content: "4".into(),
                    tool_call_id: "c1".into(),
                },
                Message::Tool {
                    id: "t2".into(),
                    content: "5".into(),
                    tool_call_id: "c2".into(),
                },
            ],
            tools: vec![ToolSpec {
                name: "add".into(),
                description: "Adds".into(),
                input_schema: json!({"type": "object"}),
            }],
        }
    }

    #[test]
    fn native_requests_merge_turns_and_carry_the_browser_header() {
        let http = build(&model(true), &request(), Some("sk-ant"));
        assert_eq!(http.url, "https://api.anthropic.com/v1/messages");
        assert!(http.headers.contains(&(
            "anthropic-dangerous-direct-browser-access".into(),
            "true".into()
        )));
        assert!(http
            .headers
            .contains(&("x-api-key".into(), "sk-ant".into())));
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert_eq!(body["system"], "Be brief.");
        assert_eq!(body["max_tokens"], 4096);
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(
            messages.len(),
            3,
            "user, assistant (text + 2 tool_use), user (2 tool_result)"
        );
        assert_eq!(
            messages[1]["content"][1],
            json!({"type": "tool_use", "id": "c1", "name": "add", "input": {"a": 2}})
        );
        assert_eq!(
            messages[2]["content"][1],
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "5"})
        );
        assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    }

    #[test]
    fn text_format_requests() {
        let body: Value =
            serde_json::from_str(&build(&model(false), &request(), None).body).unwrap();
        assert!(body["system"].as_str().unwrap().contains("<tool_call>"));
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"][0]["role"], "user");
    }

    const STREAM: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"content\":[]}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: ping\ndata: {\"type\": \"ping\"}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me add.\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"add\",\"input\":{}}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\": 2\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"}\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

    fn decode(chunks: &[&str]) -> Vec<ModelEvent> {
        let mut decoder = AnthropicDecoder::default();
        let mut out: Vec<ModelEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
        out.extend(decoder.finish());
        // The usage report is tested in `core::observe`.
        out.retain(|e| !matches!(e, ModelEvent::Report { .. }));
        out
    }

    #[test]
    fn decodes_text_and_tool_use_in_any_chunking() {
        let whole = decode(&[STREAM]);
        assert_eq!(
            whole,
            vec![
                ModelEvent::Text("Let me add.".into()),
                ModelEvent::Native(NativeDelta {
                    index: 1,
                    id: Some("toolu_1".into()),
                    name: Some("add".into()),
                    arguments: None
                }),
                ModelEvent::Native(NativeDelta {
                    index: 1,
                    id: None,
                    name: None,
                    arguments: Some("{\"a\": 2".into())
                }),
                ModelEvent::Native(NativeDelta {
                    index: 1,
                    id: None,
                    name: None,
                    arguments: Some("}".into())
                }),
                ModelEvent::Done {
                    cut_by_limit: false
                },
            ]
        );
        for i in (0..STREAM.len()).step_by(3) {
            assert_eq!(decode(&[&STREAM[..i], &STREAM[i..]]), whole, "split at {i}");
        }
    }

    #[test]
    fn errors_and_limits() {
        let overloaded = decode(&["event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"]);
        assert!(
            matches!(&overloaded[0], ModelEvent::Error(e) if e.retryable && e.message.contains("Overloaded"))
        );
        let cut = decode(&["event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"max_tokens\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"]);
        assert_eq!(cut, [ModelEvent::Done { cut_by_limit: true }]);
        let dropped = decode(&["event: message_start\ndata: {\"type\":\"message_start\"}\n\n"]);
        assert!(matches!(&dropped[0], ModelEvent::Error(e) if e.message.contains("message_stop")));
    }
}
