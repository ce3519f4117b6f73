//! The OpenAI, Anthropic and Gemini stream decoders: see `src/stream.rs`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    |data: &[u8]| webmcp_host_fuzz::run(|| webmcp_host_fuzz::stream::provider_stream(data))
);
