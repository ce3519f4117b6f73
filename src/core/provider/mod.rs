//! Model providers: sans-IO request builders and stream decoders.
//!
//! For each provider the core builds the HTTP request of a model call ([`build_request`]) and
//! decodes its streamed answer ([`Decoder`]) into [`ModelEvent`]s, which are the run's inputs.
//! The shell performs the request (fetch with a streaming body and an abort signal), reads the
//! API key from session storage at request time, and feeds the body's text to the decoder.
//! Errors are classified here ([`classify_status`]) with a bounded retry policy; no message
//! the core writes ever contains the key ([`redact`]).

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod prompt;
pub mod replay;
pub mod sse;
pub mod usage;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::agui::Message;
use super::native::NativeDelta;
use super::toolset::ToolSpec;
pub use crate::core::http::HttpRequest;
use crate::core::url::{check_base_url, origin_of};
use usage::Usage;

/// The wire protocols the host speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    /// OpenAI-compatible chat completions: OpenAI, OpenRouter, Ollama, LM Studio, vLLM.
    Openai,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
    /// Google Gemini (`:streamGenerateContent?alt=sse`).
    Gemini,
    /// Chrome's built-in `LanguageModel` (Prompt API), text call formats only.
    Chrome,
    /// Plays back a recorded transcript.
    Replay,
}

/// A model of the registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelConfig {
    /// The name the registry, runs and the popup know the model by.
    pub name: String,
    /// Which provider speaks for it: decides the request builder and the stream decoder.
    pub provider: Provider,
    #[serde(default)]
    /// The endpoint's base URL (https, or plain http on loopback only).
    pub base_url: String,
    /// The provider's model id (`gpt-4.1-mini`, `claude-sonnet-4-5`, …).
    #[serde(default)]
    pub model: String,
    /// Whether to use the provider's function calling; otherwise the text call formats.
    #[serde(default)]
    pub native_tools: bool,
    /// The name of the key in session storage; none for keyless endpoints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The most tokens one answer may have (the provider's default when absent).
    pub max_tokens: Option<u32>,
    /// For replay: the transcript (JSONL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<String>,
    /// How long a started stream may stay silent before the connection counts as dropped
    /// (default 120 000 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u32>,
}

/// Named models with a default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelRegistry {
    /// Every configured model, names unique.
    pub models: Vec<ModelConfig>,
    #[serde(default)]
    /// The name of the model a run uses when it names none.
    pub default: Option<String>,
}

impl ModelRegistry {
    /// Checks a registry as a person configured it: names unique and non-empty, base URLs
    /// http(s) (plain http only on loopback), replay models with a transcript.
    pub fn validate(&self) -> Result<(), String> {
        for (i, model) in self.models.iter().enumerate() {
            if model.name.trim().is_empty() {
                return Err(format!("model {} has no name", i + 1));
            }
            if self.models[..i].iter().any(|m| m.name == model.name) {
                return Err(format!("two models are named `{}`", model.name));
            }
            match model.provider {
                Provider::Replay => {
                    if model
                        .transcript
                        .as_deref()
                        .is_none_or(|t| t.trim().is_empty())
                    {
                        return Err(format!("replay model `{}` has no transcript", model.name));
                    }
                }
                Provider::Chrome => {}
                _ => {
                    check_base_url(&model.base_url)
                        .map_err(|e| format!("model `{}`: {e}", model.name))?;
                    if model.model.trim().is_empty() {
                        return Err(format!("model `{}` has no model id", model.name));
                    }
                }
            }
        }
        if let Some(default) = &self.default {
            if !self.models.iter().any(|m| &m.name == default) {
                return Err(format!(
                    "the default model `{default}` is not in the registry"
                ));
            }
        }
        Ok(())
    }

    /// The model a run asked for, or the default, or the only one.
    pub fn resolve(&self, name: Option<&str>) -> Result<&ModelConfig, String> {
        let wanted = name.or(self.default.as_deref());
        match wanted {
            Some(name) => self.models.iter().find(|m| m.name == name).ok_or_else(|| {
                let names: Vec<&str> = self.models.iter().map(|m| m.name.as_str()).collect();
                format!(
                    "no model named `{name}`; configured: {}",
                    if names.is_empty() {
                        "none".into()
                    } else {
                        names.join(", ")
                    }
                )
            }),
            None => match self.models.as_slice() {
                [only] => Ok(only),
                [] => Err(
                    "no model is configured: add one (configure({models: [...]}) or the popup)"
                        .into(),
                ),
                _ => Err("several models are configured and none is the default: name one".into()),
            },
        }
    }
}

/// What the run asks the model for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    /// 1 for the first model call of the run.
    pub step: usize,
    /// The model's view of the conversation: rejected calls and their errors included.
    pub messages: Vec<Message>,
    /// The tools offered (none once the budget is spent).
    pub tools: Vec<ToolSpec>,
}

/// What a decoder makes of a provider's stream.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelEvent {
    /// A piece of the model's text.
    Text(String),
    /// A piece of a native function call.
    Native(NativeDelta),
    /// What the provider reported of the output at its end, just before `Done`: its tokens
    /// (`None`: it reported none) and its finish reason.
    Report {
        /// The tokens of the call, when the provider counted them.
        usage: Option<Usage>,
        /// The finish reason as the provider wrote it.
        finish_reason: Option<String>,
    },
    /// The model finished; `cut_by_limit` when it stopped at the token limit.
    Done {
        /// The output reached the provider's token limit.
        cut_by_limit: bool,
    },
    /// The provider reported an error in the stream, or the stream was malformed or cut.
    Error(ProviderError),
}

/// A provider error, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderError {
    /// What went wrong, for the person (keys redacted).
    pub message: String,
    /// Worth retrying (429, 5xx, overloaded, dropped connection before any output).
    pub retryable: bool,
    /// The wait the server asked for, in milliseconds.
    pub retry_after_ms: Option<u64>,
}

impl ProviderError {
    /// An error not worth retrying.
    pub fn fatal(message: impl Into<String>) -> Self {
        ProviderError {
            message: message.into(),
            retryable: false,
            retry_after_ms: None,
        }
    }
}

/// Decodes one provider stream.
pub trait Decoder {
    /// Text of the response body, in any chunking.
    fn push(&mut self, text: &str) -> Vec<ModelEvent>;
    /// The body ended. A stream that ended without the provider's end marker gives an error.
    fn finish(&mut self) -> Vec<ModelEvent>;
}

/// A provider's reading of its SSE events; [`SseStream`] feeds it.
pub trait SseEvents {
    /// One event: its `event:` name (empty for the default) and its data.
    fn event(&mut self, name: &str, data: &str, out: &mut Vec<ModelEvent>);
    /// The body ended: the model's end (done, or cut off), unless the stream already settled.
    fn end(&mut self, out: &mut Vec<ModelEvent>);
}

/// A [`Decoder`] made of the SSE decoder and a provider's reading of the events.
#[derive(Debug, Default)]
pub struct SseStream<P> {
    sse: sse::SseDecoder,
    events: P,
    /// An event passed the SSE cap: the stream was ended with an error.
    failed: bool,
}

impl<P: SseEvents> Decoder for SseStream<P> {
    fn push(&mut self, text: &str) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        for event in self.sse.push(text) {
            self.take(event, &mut out);
        }
        out
    }

    fn finish(&mut self) -> Vec<ModelEvent> {
        let mut out = Vec::new();
        // A last event the server did not end with a blank line still counts.
        if let Some(event) = self.sse.finish() {
            self.take(event, &mut out);
        }
        if !self.failed {
            self.events.end(&mut out);
        }
        out
    }
}

impl<P: SseEvents> SseStream<P> {
    fn take(&mut self, event: sse::SseEvent, out: &mut Vec<ModelEvent>) {
        if self.failed {
            return;
        }
        if event.truncated {
            self.failed = true;
            out.push(ModelEvent::Error(ProviderError::fatal(format!(
                "an event of the model's stream passed {} bytes (max_sse_event_bytes)",
                sse::MAX_SSE_EVENT_BYTES
            ))));
            return;
        }
        self.events.event(&event.event, &event.data, out);
    }
}

/// The JSON of an event's data; otherwise the stream is malformed: an error is pushed and
/// `done` set. `what` names the unit ("a chunk", "an event").
pub(crate) fn event_json(
    data: &str,
    what: &str,
    done: &mut bool,
    out: &mut Vec<ModelEvent>,
) -> Option<Value> {
    match serde_json::from_str(data) {
        Ok(value) => Some(value),
        Err(e) => {
            *done = true;
            out.push(ModelEvent::Error(ProviderError::fatal(format!(
                "the model's stream is malformed ({what} is not JSON: {e})"
            ))));
            None
        }
    }
}

/// The request of one model call.
pub fn build_request(
    model: &ModelConfig,
    request: &ModelRequest,
    key: Option<&str>,
) -> Result<HttpRequest, String> {
    match model.provider {
        Provider::Openai => Ok(openai::build(model, request, key)),
        Provider::Anthropic => Ok(anthropic::build(model, request, key)),
        Provider::Gemini => Ok(gemini::build(model, request, key)),
        Provider::Chrome | Provider::Replay => Err(format!(
            "{:?} models are not called over HTTP",
            model.provider
        )),
    }
}

/// The decoder for a model's stream.
pub fn decoder(model: &ModelConfig) -> Box<dyn Decoder> {
    match model.provider {
        Provider::Anthropic => Box::new(anthropic::AnthropicDecoder::default()),
        Provider::Gemini => Box::new(gemini::GeminiDecoder::default()),
        _ => Box::new(openai::OpenAiDecoder::default()),
    }
}

pub use crate::core::limits::{MAX_RETRIES, MAX_RETRY_WAIT_MS};

/// The wait before retry number `attempt` (1-based) of a failed call, or `None` to give up.
pub fn retry_delay(error: &ProviderError, attempt: u32) -> Option<u64> {
    if !error.retryable || attempt > MAX_RETRIES {
        return None;
    }
    let backoff = 500u64 << (attempt - 1).min(6);
    let wait = error.retry_after_ms.unwrap_or(backoff);
    (wait <= MAX_RETRY_WAIT_MS).then_some(wait)
}

/// Classifies an HTTP error answer. `body` is the answer's text (its message is quoted,
/// shortened, with the key removed).
pub fn classify_status(
    status: u16,
    retry_after: Option<&str>,
    body: &str,
    model: &ModelConfig,
    key: Option<&str>,
) -> ProviderError {
    let detail = error_detail(body);
    let host = origin_of(&model.base_url);
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    let retry_after_ms = retry_after.and_then(parse_retry_after);
    let (message, retryable) =
        match status {
            401 | 403 => {
                (
                    format!(
                "{host} refused the API key of model `{}` ({status}){detail}; check the key{}",
                model.name,
                model.key_ref.as_deref().map(|k| format!(" `{k}`")).unwrap_or_default()
            ),
                    false,
                )
            }
            404 => (
                format!(
                    "{host} answered 404 for model `{}` (model id `{}`?){detail}",
                    model.name, model.model
                ),
                false,
            ),
            408 | 429 => (
                format!(
                    "{host} is rate-limiting model `{}` ({status}){detail}",
                    model.name
                ),
                true,
            ),
            500..=599 => (format!("{host} failed ({status}){detail}"), true),
            _ => (format!("{host} answered {status}{detail}"), false),
        };
    ProviderError {
        message: redact(&message, key),
        retryable,
        retry_after_ms,
    }
}

/// `Retry-After` as milliseconds (seconds, possibly fractional; HTTP dates are not used by
/// model APIs and count as absent).
fn parse_retry_after(value: &str) -> Option<u64> {
    let seconds: f64 = value.trim().parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then_some((seconds * 1000.0) as u64)
}

/// The message of a provider's error body (OpenAI, Anthropic and Gemini shapes), shortened.
pub fn error_detail(body: &str) -> String {
    let message = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let error = v.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_owned)
    });
    let text = message.unwrap_or_else(|| body.trim().to_owned());
    let text: String = text.chars().filter(|c| !c.is_control()).take(300).collect();
    text
}

/// `text` without the key (whole or in part), as the egress redacts ([`crate::core::egress`]).
pub fn redact(text: &str, key: Option<&str>) -> String {
    crate::core::egress::redact(text, &key.into_iter().collect::<Vec<_>>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_sse_event_over_the_cap_ends_the_stream_naming_the_cap() {
        let mut decoder = openai::OpenAiDecoder::default();
        let big = format!(
            "data: {{\"choices\":[{{\"delta\":{{\"content\":\"{}\"}}}}]}}\n\n",
            "x".repeat(sse::MAX_SSE_EVENT_BYTES)
        );
        let mut events = decoder.push(&big);
        events.extend(decoder.push("data: [DONE]\n\n"));
        events.extend(decoder.finish());
        assert_eq!(events.len(), 1, "one error and nothing after it");
        let ModelEvent::Error(error) = &events[0] else {
            panic!("{events:?}")
        };
        assert!(
            error.message.contains("max_sse_event_bytes"),
            "{}",
            error.message
        );
        assert!(!error.retryable);
    }

    fn model(provider: Provider) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            provider,
            base_url: "https://api.example.com/v1".into(),
            model: "x-1".into(),
            native_tools: true,
            key_ref: Some("openai".into()),
            max_tokens: None,
            transcript: None,
            idle_timeout_ms: None,
        }
    }

    #[test]
    fn registry_resolution_and_validation() {
        let mut registry = ModelRegistry {
            models: vec![model(Provider::Openai)],
            default: None,
        };
        assert_eq!(registry.resolve(None).unwrap().name, "m");
        assert!(registry
            .resolve(Some("n"))
            .unwrap_err()
            .contains("configured: m"));
        registry.models.push(ModelConfig {
            name: "n".into(),
            ..model(Provider::Anthropic)
        });
        assert!(registry.resolve(None).is_err());
        registry.default = Some("n".into());
        assert_eq!(registry.resolve(None).unwrap().name, "n");
        assert_eq!(registry.validate(), Ok(()));
        registry.models.push(ModelConfig {
            base_url: "http://evil.test/v1".into(),
            name: "o".into(),
            ..model(Provider::Openai)
        });
        assert!(registry.validate().unwrap_err().contains("must be https"));
        assert_eq!(check_base_url("http://127.0.0.1:11434/v1"), Ok(()));
        assert_eq!(check_base_url("http://localhost:1234/v1"), Ok(()));
        assert!(check_base_url("ftp://x").is_err());
        assert!(check_base_url("http://127.0.0.1.evil.test/v1").is_err());
        // A loopback name before `@` is user information: the host is the one after it, and
        // plain http to it would carry the key off the machine.
        let err = check_base_url("http://127.0.0.1:80@evil.example/v1").unwrap_err();
        assert!(err.contains("user information"), "{err}");
        assert!(check_base_url("http://localhost@evil.example").is_err());
        assert!(check_base_url("https://user:pw@api.example/v1").is_err());
        assert_eq!(check_base_url("http://[::1]:8080/v1"), Ok(()));
        assert_eq!(check_base_url("HTTPS://api.example/v1"), Ok(()));
        assert!(check_base_url("https:///v1")
            .unwrap_err()
            .contains("no host"));
    }

    #[test]
    fn statuses_are_classified_without_the_key() {
        let key = "sk-canary-0123456789abcdef";
        let body = format!(
            "{{\"error\": {{\"message\": \"Incorrect API key provided: {}\"}}}}",
            &key[..20]
        );
        let error = classify_status(401, None, &body, &model(Provider::Openai), Some(key));
        assert!(!error.retryable);
        assert!(
            error
                .message
                .starts_with("https://api.example.com refused the API key of model `m` (401)"),
            "{}",
            error.message
        );
        assert!(!error.message.contains("0123456789"), "{}", error.message);
        let limited = classify_status(429, Some("2"), "{}", &model(Provider::Openai), None);
        assert_eq!(
            (limited.retryable, limited.retry_after_ms),
            (true, Some(2000))
        );
        assert_eq!(retry_delay(&limited, 1), Some(2000));
        assert_eq!(retry_delay(&limited, 3), None);
        let too_long = ProviderError {
            retry_after_ms: Some(60_000),
            ..limited
        };
        assert_eq!(retry_delay(&too_long, 1), None);
        let server = classify_status(
            503,
            None,
            "<html>busy</html>",
            &model(Provider::Openai),
            None,
        );
        assert_eq!(
            (server.retryable, retry_delay(&server, 2)),
            (true, Some(1000))
        );
        assert!(server.message.contains("<html>busy</html>"));
    }

    #[test]
    fn origins() {
        assert_eq!(
            origin_of("https://api.example.com/v1/chat"),
            "https://api.example.com"
        );
        assert_eq!(origin_of("http://127.0.0.1:8080"), "http://127.0.0.1:8080");
    }
}
