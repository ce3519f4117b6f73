//! Gemini `streamGenerateContent`.
//!
//! Request: `POST {base}/models/{model}:streamGenerateContent?alt=sse` (base e.g.
//! `https://generativelanguage.googleapis.com/v1beta`), the key in the `x-goog-api-key`
//! header (never in the URL). Turns are `user`/`model` with `text`, `functionCall` and
//! `functionResponse` parts; tools are `functionDeclarations` with `parametersJsonSchema`
//! (full JSON Schema). Stream: each SSE `data:` is a whole response whose parts carry text or
//! whole function calls; the stream ends after the candidate's `finishReason`.

use serde_json::{json, Value};

use super::prompt::{text_conversation, Speaker};
use super::ModelRequest;
use super::{
    event_json, HttpRequest, ModelConfig, ModelEvent, ProviderError, SseEvents, SseStream,
};
use crate::core::agui::Message;
use crate::core::native::NativeDelta;
use crate::core::provider::usage::{tokens, Usage};

/// The `streamGenerateContent` request for one model call (SSE), the key in the
/// `x-goog-api-key` header, never in the URL.
pub fn build(model: &ModelConfig, request: &ModelRequest, key: Option<&str>) -> HttpRequest {
    let (system, contents) = if model.native_tools {
        native_contents(&request.messages)
    } else {
        let (system, turns) = text_conversation(&request.messages, &request.tools);
        let contents = turns
            .into_iter()
            .map(|(speaker, text)| json!({"role": if speaker == Speaker::User { "user" } else { "model" }, "parts": [{"text": text}]}))
            .collect();
        (system, contents)
    };
    let mut body = json!({"contents": contents});
    if !system.is_empty() {
        body["systemInstruction"] = json!({"parts": [{"text": system}]});
    }
    if model.native_tools && !request.tools.is_empty() {
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema}))
            .collect();
        body["tools"] = json!([{"functionDeclarations": declarations}]);
    }
    if let Some(max) = model.max_tokens {
        body["generationConfig"] = json!({"maxOutputTokens": max});
    }
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    if let Some(key) = key.filter(|k| !k.is_empty()) {
        headers.push(("x-goog-api-key".to_owned(), key.to_owned()));
    }
    HttpRequest {
        method: "POST".into(),
        url: format!(
            "{}/models/{}:streamGenerateContent?alt=sse",
            model.base_url.trim_end_matches('/'),
            model.model
        ),
        headers,
        body: body.to_string(),
    }
}

fn native_contents(messages: &[Message]) -> (String, Vec<Value>) {
    let mut system = Vec::new();
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut names: Vec<(String, String)> = Vec::new();
    let mut push = |role: &'static str, part: Value| match out.last_mut() {
        Some((last, parts)) if *last == role => parts.push(part),
        _ => out.push((role, vec![part])),
    };
    for message in messages {
        match message {
            Message::System { content, .. } => system.push(content.clone()),
            Message::User { content, .. } => push("user", json!({"text": content})),
            Message::Assistant {
                content,
                tool_calls,
                ..
            } => {
                if let Some(text) = content.as_ref().filter(|t| !t.is_empty()) {
                    push("model", json!({"text": text}));
                }
                for call in tool_calls {
                    names.push((call.id.clone(), call.function.name.clone()));
                    let args: Value = serde_json::from_str(&call.function.arguments)
                        .unwrap_or_else(|_| json!({}));
                    push(
                        "model",
                        json!({"functionCall": {"name": call.function.name, "args": args}}),
                    );
                }
            }
            Message::Tool {
                content,
                tool_call_id,
                ..
            } => {
                let name = names
                    .iter()
                    .find(|(id, _)| id == tool_call_id)
                    .map(|(_, n)| n.clone())
                    .unwrap_or_default();
                push(
                    "user",
                    json!({"functionResponse": {"name": name, "response": {"result": content}}}),
                );
            }
        }
    }
    (
        system.join("\n\n"),
        out.into_iter()
            .map(|(role, parts)| json!({"role": role, "parts": parts}))
            .collect(),
    )
}

/// Decodes the SSE stream of `streamGenerateContent`.
pub type GeminiDecoder = SseStream<GeminiEvents>;

/// The reading of `streamGenerateContent` responses.
#[derive(Debug, Default)]
pub struct GeminiEvents {
    calls: usize,
    finish: Option<String>,
    /// The last `usageMetadata` (each response carries the counts so far).
    usage: Option<Usage>,
    done: bool,
}

/// `usageMetadata`'s tokens: the prompt's (cached included), and the candidates' with the
/// thoughts' (billed as output; the reasoning tokens, when said).
fn usage_of(value: &Value) -> Option<Usage> {
    let usage = value.get("usageMetadata")?;
    let thoughts = tokens(usage, "/thoughtsTokenCount");
    Some(Usage {
        input_tokens: tokens(usage, "/promptTokenCount")?,
        output_tokens: tokens(usage, "/candidatesTokenCount").unwrap_or(0) + thoughts.unwrap_or(0),
        cached_input_tokens: tokens(usage, "/cachedContentTokenCount"),
        cache_write_input_tokens: None,
        reasoning_tokens: thoughts,
    })
}

impl GeminiEvents {
    fn data(&mut self, data: &str, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        let Some(value) = event_json(data, "an event", &mut self.done, out) else {
            return;
        };
        if let Some(error) = value.get("error") {
            self.done = true;
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("an error without a message");
            let retryable = matches!(
                error.get("code").and_then(Value::as_u64),
                Some(429 | 500..=599)
            );
            out.push(ModelEvent::Error(ProviderError {
                message: format!("the model reported an error: {message}"),
                retryable,
                retry_after_ms: None,
            }));
            return;
        }
        if let Some(reason) = value
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            self.done = true;
            out.push(ModelEvent::Error(ProviderError::fatal(format!(
                "the prompt was blocked ({reason})"
            ))));
            return;
        }
        if let Some(usage) = usage_of(&value) {
            self.usage = Some(usage);
        }
        let Some(candidate) = value.pointer("/candidates/0") else {
            return;
        };
        if let Some(parts) = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array)
        {
            for part in parts {
                if part.get("thought") == Some(&Value::Bool(true)) {
                    continue;
                }
                if let Some(text) = part
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    out.push(ModelEvent::Text(text.to_owned()));
                }
                if let Some(call) = part.get("functionCall") {
                    let index = self.calls;
                    self.calls += 1;
                    out.push(ModelEvent::Native(NativeDelta {
                        index,
                        id: call.get("id").and_then(Value::as_str).map(str::to_owned),
                        name: call.get("name").and_then(Value::as_str).map(str::to_owned),
                        arguments: Some(
                            call.get("args")
                                .map_or_else(|| "{}".to_owned(), Value::to_string),
                        ),
                    }));
                }
            }
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            match reason {
                "STOP" | "MAX_TOKENS" | "FINISH_REASON_UNSPECIFIED" => {
                    self.finish = Some(reason.to_owned())
                }
                other => {
                    self.done = true;
                    out.push(ModelEvent::Error(ProviderError::fatal(format!(
                        "the model stopped: {other}"
                    ))));
                }
            }
        }
    }
}

impl SseEvents for GeminiEvents {
    fn event(&mut self, _name: &str, data: &str, out: &mut Vec<ModelEvent>) {
        self.data(data, out);
    }

    fn end(&mut self, out: &mut Vec<ModelEvent>) {
        if self.done {
            return;
        }
        self.done = true;
        match &self.finish {
            Some(reason) => {
                out.push(ModelEvent::Report {
                    usage: self.usage,
                    finish_reason: Some(reason.clone()),
                });
                out.push(ModelEvent::Done {
                    cut_by_limit: reason == "MAX_TOKENS",
                })
            }
            None => out.push(ModelEvent::Error(ProviderError::fatal(
                "the model's stream ended without a finish reason (connection dropped?)",
            ))),
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

    fn model() -> ModelConfig {
        ModelConfig {
            name: "gemini".into(),
            provider: Provider::Gemini,
            base_url: "https://generativelanguage.googleapis.com/v1beta".into(),
            model: "gemini-2.5-flash".into(),
            native_tools: true,
            key_ref: Some("gemini".into()),
            max_tokens: None,
            transcript: None,
            idle_timeout_ms: None,
        }
    }

    #[test]
    fn requests_keep_the_key_out_of_the_url() {
        let request = ModelRequest {
            step: 2,
            messages: vec![
                Message::User {
                    id: "u".into(),
                    content: "2+2?".into(),
                },
                Message::Assistant {
                    id: "a".into(),
                    content: None,
                    tool_calls: vec![ToolCall::function("c1", "add", "{\"a\":2}")],
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
        };
        let http = build(&model(), &request, Some("AIza-secret"));
        assert_eq!(http.url, "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
        assert!(!http.url.contains("AIza"));
        assert!(http
            .headers
            .contains(&("x-goog-api-key".into(), "AIza-secret".into())));
        let body: Value = serde_json::from_str(&http.body).unwrap();
        assert_eq!(
            body["contents"][1],
            json!({"role": "model", "parts": [{"functionCall": {"name": "add", "args": {"a": 2}}}]})
        );
        assert_eq!(
            body["contents"][2]["parts"][0]["functionResponse"],
            json!({"name": "add", "response": {"result": "4"}})
        );
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"],
            json!({"type": "object"})
        );
    }

    fn decode(chunks: &[&str]) -> Vec<ModelEvent> {
        let mut decoder = GeminiDecoder::default();
        let mut out: Vec<ModelEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
        out.extend(decoder.finish());
        // The usage report is tested in `core::observe`.
        out.retain(|e| !matches!(e, ModelEvent::Report { .. }));
        out
    }

    #[test]
    fn whole_function_calls_per_event() {
        let stream = "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"Adding\"}]}}]}\r\n\r\n\
data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"name\":\"add\",\"args\":{\"a\":2,\"b\":2}}},{\"functionCall\":{\"name\":\"add\",\"args\":{\"a\":1}}}]},\"finishReason\":\"STOP\"}]}\r\n\r\n";
        let events = decode(&[stream]);
        assert_eq!(events[0], ModelEvent::Text("Adding".into()));
        assert_eq!(
            events[1],
            ModelEvent::Native(NativeDelta {
                index: 0,
                id: None,
                name: Some("add".into()),
                arguments: Some("{\"a\":2,\"b\":2}".into())
            })
        );
        assert!(matches!(
            &events[2],
            ModelEvent::Native(NativeDelta { index: 1, .. })
        ));
        assert_eq!(
            events[3],
            ModelEvent::Done {
                cut_by_limit: false
            }
        );
        for i in 0..stream.len() {
            assert_eq!(decode(&[&stream[..i], &stream[i..]]), events);
        }
    }

    #[test]
    fn limits_blocks_and_drops() {
        let cut = decode(&["data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"MAX_TOKENS\"}]}\n\n"]);
        assert_eq!(cut.last(), Some(&ModelEvent::Done { cut_by_limit: true }));
        let safety = decode(&["data: {\"candidates\":[{\"finishReason\":\"SAFETY\"}]}\n\n"]);
        assert!(
            matches!(&safety[0], ModelEvent::Error(e) if e.message == "the model stopped: SAFETY")
        );
        let dropped =
            decode(&["data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]}}]}\n\n"]);
        assert!(matches!(dropped.last(), Some(ModelEvent::Error(_))));
    }
}
