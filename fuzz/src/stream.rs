//! The SSE decoder and the provider stream decoders built on it.
//!
//! `sse`: byte 0 chooses how the rest (lossy UTF-8) is fed:
//!
//! | bits of byte 0 | meaning |
//! |---|---|
//! | `0x0f` | chunk size − 1 (1..=16 bytes, widened to a char boundary) |
//! | `0x10` | chunk sizes pseudo-random in 0..=size (empty pieces too) instead of fixed |
//! | `0x20` | a small line cap (`with_max_line`), else the default |
//! | `0xc0` | the small cap: 3, 11, 19 or 27 bytes |
//!
//! `provider_stream`: byte 0 as above for `0x1f`; `0x60` chooses the decoder (OpenAI,
//! Anthropic, Gemini, or all three on the same input); `0x80`: only the valid UTF-8 prefix of
//! the rest is used (else lossy).
//!
//! Invariants checked:
//! - no panic;
//! - chunking invariance: the events of the whole input equal those of the input fed in the
//!   chosen pieces and fed one character at a time;
//! - SSE: the bytes of an event's data other than the line breaks between its `data:` lines,
//!   its name and its id stay within the line cap;
//! - providers: the output ends with exactly one `Done` or `Error`, and nothing follows it.

use webmcp_host::core::provider::anthropic::AnthropicDecoder;
use webmcp_host::core::provider::gemini::GeminiDecoder;
use webmcp_host::core::provider::openai::OpenAiDecoder;
use webmcp_host::core::provider::sse::{SseDecoder, SseEvent};
use webmcp_host::core::provider::{Decoder, ModelEvent};

use crate::chunk::{assert_same, chars, pieces, text};

/// The events of an SSE stream fed in `parts`, the last one handed over by `finish`.
pub fn sse_events<S: AsRef<str>>(max_line: Option<usize>, parts: &[S]) -> Vec<SseEvent> {
    let mut decoder = match max_line {
        Some(cap) => SseDecoder::new().with_max_line(cap),
        None => SseDecoder::new(),
    };
    let mut out = Vec::new();
    for part in parts {
        out.extend(decoder.push(part.as_ref()));
    }
    out.extend(decoder.finish());
    out
}

/// The SSE decoder fuzz target.
pub fn sse(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(mode & 0x0f) + 1;
    let random = mode & 0x10 != 0;
    let max_line = (mode & 0x20 != 0).then(|| 3 + 8 * usize::from(mode >> 6));
    let input = text(rest, false);
    let whole = sse_events(max_line, &[input.as_str()]);
    let parts = pieces(&input, size, random, rest.len() as u64 ^ u64::from(mode));
    assert_same(&whole, &sse_events(max_line, &parts), "SSE events");
    assert_same(&whole, &sse_events(max_line, &chars(&input)), "SSE events");
    let cap = max_line.unwrap_or(16 * 1024 * 1024);
    for event in &whole {
        let data_bytes = event.data.len() - event.data.matches('\n').count();
        assert!(data_bytes <= cap, "data over the line cap: {event:?}");
        assert!(event.event.len() <= cap, "event name over the line cap");
        assert!(
            event.id.as_ref().is_none_or(|id| id.len() <= cap),
            "id over the line cap"
        );
    }
}

/// Which provider decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Gemini,
}

impl Provider {
    pub const ALL: [Provider; 3] = [Provider::OpenAi, Provider::Anthropic, Provider::Gemini];

    pub fn decoder(self) -> Box<dyn Decoder> {
        match self {
            Provider::OpenAi => Box::new(OpenAiDecoder::default()),
            Provider::Anthropic => Box::new(AnthropicDecoder::default()),
            Provider::Gemini => Box::new(GeminiDecoder::default()),
        }
    }
}

/// The model events of a provider stream fed in `parts`, then `finish`.
pub fn model_events<S: AsRef<str>>(provider: Provider, parts: &[S]) -> Vec<ModelEvent> {
    let mut decoder = provider.decoder();
    let mut out = Vec::new();
    for part in parts {
        out.extend(decoder.push(part.as_ref()));
    }
    out.extend(decoder.finish());
    out
}

/// The output ends with one `Done` or `Error` and has no other.
pub fn check_settled(provider: Provider, events: &[ModelEvent]) {
    let terminal = |e: &ModelEvent| matches!(e, ModelEvent::Done { .. } | ModelEvent::Error(_));
    assert!(
        events.last().is_some_and(terminal),
        "{provider:?}: the stream did not end with Done or Error: {:?}",
        events.last()
    );
    assert_eq!(
        events.iter().filter(|e| terminal(e)).count(),
        1,
        "{provider:?}: more than one Done/Error: {events:?}"
    );
}

/// The provider decoders fuzz target.
pub fn provider_stream(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(mode & 0x0f) + 1;
    let random = mode & 0x10 != 0;
    let input = text(rest, mode & 0x80 != 0);
    let chosen: &[Provider] = match (mode >> 5) & 3 {
        0 => &[Provider::OpenAi],
        1 => &[Provider::Anthropic],
        2 => &[Provider::Gemini],
        _ => &Provider::ALL,
    };
    let parts = pieces(&input, size, random, rest.len() as u64 ^ u64::from(mode));
    let one_by_one = chars(&input);
    for &provider in chosen {
        let whole = model_events(provider, &[input.as_str()]);
        check_settled(provider, &whole);
        assert_same(&whole, &model_events(provider, &parts), "model events");
        assert_same(&whole, &model_events(provider, &one_by_one), "model events");
    }
}
