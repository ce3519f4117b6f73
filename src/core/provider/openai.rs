//! OpenAI-compatible chat completions (OpenAI, OpenRouter, Ollama, LM Studio, vLLM).
//!
//! Request: `POST {base}/chat/completions` with `stream: true`; native `tools` when the model
//! has function calling, else the text call format in the system message. Stream: SSE `data:`
//! chunks with `choices[0].delta.content` and `delta.tool_calls[{index, id, function}]`, a
//! `finish_reason`, and `data: [DONE]`. Servers that reuse index 0 for parallel calls or send
//! a new id per chunk are handled by [`crate::core::native::NativeCalls`].

use serde_json::{json, Value};

use super::prompt::{text_conversation, Speaker};
use super::ModelRequest;
use super::{
    event_json, HttpRequest, ModelConfig, ModelEvent, ProviderError, SseEvents, SseStream,
};
use crate::core::agui::Message;
use crate::core::native::NativeDelta;
use crate::core::provider::usage::{tokens, Usage};

/// The chat completions request for one model call, streamed, tools native or in the
/// text formats, the key as a Bearer token.
pub fn build(model: &ModelConfig, request: &ModelRequest, key: Option<&str>) -> HttpRequest {
    let messages: Vec<Value> = if model.native_tools {
        native_messages(&request.messages)
    } else {
        let (system, turns) = text_conversation(&request.messages, &request.tools);
        let mut out = Vec::new();
        if !system.is_empty() {
            out.push(json!({"role": "system", "content": system}));
        }
        out.extend(turns.into_iter().map(|(speaker, text)| {
            json!({"role": if speaker == Speaker::User { "user" } else { "assistant" }, "content": text})
        }));
        out
    };
    // `include_usage`: the last chunk before `[DONE]` carries the call's tokens.
    let mut body = json!({"model": model.model, "messages": messages, "stream": true,
        "stream_options": {"include_usage": true}});
    if model.native_tools && !request.tools.is_empty() {
        body["tools"] = request
            .tools
            .iter()
            .map(|t| json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}))
            .collect();
    }
    if let Some(max) = model.max_tokens {
        body["max_tokens"] = json!(max);
    }
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("accept".to_owned(), "text/event-stream".to_owned()),
    ];
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        headers.push(("authorization".to_owned(), format!("Bearer {key}")));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!("{}/chat/completions", model.base_url.trim_end_matches('/')),
        headers,
        body: body.to_string(),
    }
}

fn native_messages(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .map(|message| match message {
            Message::System { content, .. } => json!({"role": "system", "content": content}),
            Message::User { content, .. } => json!({"role": "user", "content": content}),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                let mut m = json!({"role": "assistant", "content": content});
                if !tool_calls.is_empty() {
                    m["tool_calls"] = serde_json::to_value(tool_calls).unwrap_or(Value::Null);
                }
                m
            }
            Message::Tool {
                content,
                tool_call_id,
                ..
            } => {
                json!({"role": "tool", "tool_call_id": tool_call_id, "content": content})
            }
        })
        .collect()
}

/// Decodes the SSE stream of chat completions.
pub type OpenAiDecoder = SseStream<OpenAiEvents>;

/// The reading of chat-completion chunks.
#[derive(Debug, Default)]
pub struct OpenAiEvents {
    finish: Option<String>,
    usage: Option<Usage>,
    done: bool,
}

/// The tokens of a chunk's `usage` (`prompt_tokens` counts the cached ones,
/// `completion_tokens` the reasoning ones).
fn usage_of(chunk: &Value) -> Option<Usage> {
    let usage = chunk.get("usage").filter(|u| u.is_object())?;
    Some(Usage {
        input_tokens: tokens(usage, "/prompt_tokens")?,
        output_tokens: tokens(usage, "/completion_tokens")?,
        cached_input_tokens: tokens(usage, "/prompt_tokens_details/cached_tokens"),
        cache_write_input_tokens: None,
        reasoning_tokens: tokens(usage, "/completion_tokens_details/reasoning_tokens"),
    })
}

impl OpenAiEvents {
    /// The report and the end of the output.
    fn done(&mut self, out: &mut Vec<ModelEvent>) {
        self.done = true;
        out.push(ModelEvent::Report {
            usage: self.usage,
            finish_reason: self.finish.clone(),
        });
        out.push(ModelEvent::Done {
            cut_by_limit: self.finish.as_deref() == Some("length"),
        });
    }
}

impl OpenAiEvents {
    fn data(&mut self, data: &str, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        if data.trim() == "[DONE]" {
            return self.done(out);
        }
        let Some(chunk) = event_json(data, "a chunk", &mut self.done, out) else {
            return;
        };
        if let Some(error) = chunk.get("error") {
            self.done = true;
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("an error without a message");
            out.push(ModelEvent::Error(ProviderError {
                message: format!("the model reported an error: {message}"),
                retryable: false,
                retry_after_ms: None,
            }));
            return;
        }
        // The usage chunk has no choices; some servers put usage on the last choice's chunk.
        if let Some(usage) = usage_of(&chunk) {
            self.usage = Some(usage);
        }
        let Some(choice) = chunk.get("choices").and_then(|c| c.get(0)) else {
            return;
        };
        let delta = choice.get("delta").or_else(|| choice.get("message"));
        if let Some(delta) = delta {
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                if !text.is_empty() {
                    out.push(ModelEvent::Text(text.to_owned()));
                }
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    let function = call.get("function");
                    let arguments = function.and_then(|f| f.get("arguments")).map(|a| match a {
                        Value::String(s) => s.clone(),
                        other => other.to_string(), // some servers send an object
                    });
                    out.push(ModelEvent::Native(NativeDelta {
                        index: call
                            .get("index")
                            .and_then(Value::as_u64)
                            .map_or(position, |i| i as usize),
                        id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: function
                            .and_then(|f| f.get("name"))
                            .and_then(Value::as_str)
                            .map(str::to_owned),
                        arguments,
                    }));
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish = Some(reason.to_owned());
        }
    }
}

impl SseEvents for OpenAiEvents {
    fn event(&mut self, _name: &str, data: &str, out: &mut Vec<ModelEvent>) {
        self.data(data, out);
    }

    fn end(&mut self, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        match &self.finish {
            // Some servers end after the finish reason without `[DONE]`.
            Some(_) => self.done(out),
            None => {
                self.done = true;
                out.push(ModelEvent::Error(ProviderError {
                    message: "the model's stream ended before it finished (connection dropped?)"
                        .into(),
                    retryable: false,
                    retry_after_ms: None,
                }))
            }
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
            name: "gpt".into(),
            provider: Provider::Openai,
            base_url: "https://api.openai.com/v1/".into(),
            model: "gpt-4.1-mini".into(),
            native_tools: native,
            key_ref: Some("openai".into()),
            max_tokens: Some(512),
            transcript: None,
            idle_timeout_ms: None,
        }
    }

    fn request() -> ModelRequest {
        ModelRequest {
            step: 1,
            messages: vec![
                Message::User {
                    id: "u".into(),
                    content: "2+2?".into(),
                },
                Message::Assistant {
                    id: "a".into(),
                    content: None,
                    tool_calls: vec![ToolCall::function("c1", "add", "{\"a\":2,\"b\":2}")],
                },
                Message::Tool {
                    id: "t".into(),
                    content: "4".into(),
                    tool_call_id: "c1".into(),
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
    fn native_requests() {
        let http = build(&model(true), &request(), Some("sk-1"));
        assert_eq!(http.url, "https://api.openai.com/v1/chat/completions");
        assert!(http
            .headers
            .contains(&("authorization".into(), "Bearer sk-1".into())));
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert_eq!(body["stream"], true);
        assert_eq!(body["max_tokens"], 512);
        assert_eq!(body["tools"][0]["function"]["name"], "add");
        assert_eq!(
            body["messages"][1]["tool_calls"][0]["function"]["arguments"],
            "{\"a\":2,\"b\":2}"
        );
        assert_eq!(
            body["messages"][2],
            json!({"role": "tool", "tool_call_id": "c1", "content": "4"})
        );
    }

    #[test]
    fn text_format_requests() {
        let http = build(&model(false), &request(), None);
        assert!(http.headers.iter().all(|(k, _)| k != "authorization"));
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert!(body.get("tools").is_none());
        assert_eq!(body["messages"][0]["role"], "system");
        assert!(body["messages"][0]["content"]
            .as_str()
            .unwrap()
            .contains("{\"name\":\"add\",\"description\":\"Adds"));
        assert_eq!(body["messages"][2]["role"], "assistant");
        assert!(body["messages"][3]["content"]
            .as_str()
            .unwrap()
            .starts_with("<tool_response>\n"));
    }

    fn decode(chunks: &[&str]) -> Vec<ModelEvent> {
        let mut decoder = OpenAiDecoder::default();
        let mut out: Vec<ModelEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
        out.extend(decoder.finish());
        // The usage report is tested in `core::observe`.
        out.retain(|e| !matches!(e, ModelEvent::Report { .. }));
        out
    }

    const STREAM: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"add\",\"arguments\":\"\"}}]}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"a\\\":1}\"}}]}}]}\n\n\
data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n\
data: [DONE]\n\n";

    #[test]
    fn decodes_text_and_tool_call_deltas_in_any_chunking() {
        let whole = decode(&[STREAM]);
        assert_eq!(whole[0], ModelEvent::Text("Hi".into()));
        assert_eq!(
            whole[1],
            ModelEvent::Native(NativeDelta {
                index: 0,
                id: Some("call_1".into()),
                name: Some("add".into()),
                arguments: Some(String::new())
            })
        );
        assert_eq!(
            whole.last(),
            Some(&ModelEvent::Done {
                cut_by_limit: false
            })
        );
        for i in 0..STREAM.len() {
            assert_eq!(decode(&[&STREAM[..i], &STREAM[i..]]), whole, "split at {i}");
        }
    }

    #[test]
    fn length_truncation_and_errors() {
        let cut = decode(&["data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n"]);
        assert_eq!(cut.last(), Some(&ModelEvent::Done { cut_by_limit: true }));
        let dropped = decode(&["data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n"]);
        assert!(
            matches!(dropped.last(), Some(ModelEvent::Error(e)) if e.message.contains("ended before"))
        );
        let malformed = decode(&["data: {not json\n\n"]);
        assert!(matches!(&malformed[0], ModelEvent::Error(e) if e.message.contains("malformed")));
        assert_eq!(malformed.len(), 1, "nothing after the error");
        let reported = decode(&["data: {\"error\":{\"message\":\"overloaded\"}}\n\n"]);
        assert!(matches!(&reported[0], ModelEvent::Error(e) if e.message.contains("overloaded")));
        let no_done =
            decode(&["data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"]);
        assert_eq!(
            no_done,
            [ModelEvent::Done {
                cut_by_limit: false
            }]
        );
    }
}
