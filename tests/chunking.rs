//! Chunking invariance of every streaming decoder: the events of a stream are the same
//! whether it arrives whole, one character at a time, split in two at every position (inputs
//! up to 1 KiB; longer ones near both ends and at every fifth position), cut at every line
//! break, or in 240 pseudo-random chunkings (random sizes from 0 — empty pieces — up to 100 bytes, random cut
//! positions, cuts at every line break).
//!
//! Decoders: `SseDecoder` (also with a small line cap), the OpenAI, Anthropic and Gemini stream
//! decoders (their `ModelEvent`s), the MCP SSE path (SSE events → `parse_messages` →
//! `Session::receive`) and the text call parser (`parse_run`, one character at a time and with
//! empty pieces; `tests/parse_golden.rs` covers its splits and random chunkings).
//!
//! Streams: `tests/golden/streams/*.sse`, written like the providers' and MCP servers' real
//! answers (multi-byte text, CRLF, keep-alive comments, thinking blocks, parallel calls, errors,
//! cut by the token limit), and small SSE edge cases below. The chunkings come from a seeded
//! splitmix64, so every run checks the same ones.
//!
//! The chunking helpers themselves (`tests/common/chunk.rs`) are checked last: every chunking
//! gives the text back and cuts only between characters.

mod common;
// The fuzz checks below reach the chunking helpers as `crate::chunk`.
use common::chunk;

#[allow(dead_code)]
#[path = "../fuzz/src/golden.rs"]
mod golden;
#[allow(dead_code)]
#[path = "../fuzz/src/mcp.rs"]
mod mcp;
#[allow(dead_code)]
#[path = "../fuzz/src/stream.rs"]
mod stream;

use std::fmt::Debug;

use chunk::{boundaries, chars, cut_at, pieces, Rng};
use stream::{check_settled, model_events, sse_events, Provider};
use webmcp_host::core::provider::ModelEvent;
use webmcp_host::core::stream::parse_run;

const RANDOM_CHUNKINGS: usize = 240;

fn streams() -> Vec<(String, String)> {
    let out: Vec<(String, String)> = common::files(&common::golden("streams"), Some("sse"))
        .into_iter()
        .map(|p| {
            let name = p.file_stem().unwrap().to_str().unwrap().to_owned();
            (name, common::read(&p))
        })
        .collect();
    assert!(
        out.len() >= 7,
        "expected the recorded streams, found {}",
        out.len()
    );
    out
}

fn streams_of(prefix: &str) -> Vec<(String, String)> {
    streams()
        .into_iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .collect()
}

/// Every chunking of the module's doc, for `input`.
fn chunkings(input: &str, seed: u64) -> Vec<Vec<&str>> {
    let mut out = vec![chars(input)];
    // Every position of a short input; of a long one, every position near its ends and every
    // fifth in between.
    let bounds: Vec<usize> = boundaries(input)
        .into_iter()
        .filter(|&i| 0 < i && i < input.len())
        .filter(|&i| input.len() <= 1024 || i < 256 || input.len() - i < 256 || i % 5 == 0)
        .collect();
    for &i in &bounds {
        out.push(vec![&input[..i], &input[i..]]);
    }
    let breaks: Vec<usize> = input
        .match_indices(['\n', '\r'])
        .flat_map(|(i, _)| [i, i + 1])
        .collect();
    out.push(cut_at(input, &breaks));
    let mut rng = Rng(seed);
    for n in 0..RANDOM_CHUNKINGS {
        let chunking = match n % 3 {
            0 => {
                let size = [1, 2, 4, 16, 100][rng.below(5)];
                pieces(input, size, true, rng.next_u64())
            }
            1 => {
                let count = 1 + rng.below(20);
                let at: Vec<usize> = (0..count).map(|_| rng.below(input.len() + 1)).collect();
                cut_at(input, &at)
            }
            _ => pieces(input, 1 + rng.below(12), false, 0),
        };
        out.push(chunking);
    }
    out
}

/// Decodes `input` whole and in every chunking; panics at the first difference.
fn invariant<T: PartialEq + Debug>(
    name: &str,
    input: &str,
    decode: impl Fn(&[&str]) -> Vec<T>,
) -> Vec<T> {
    let whole = decode(&[input]);
    let seed = name
        .bytes()
        .fold(0u64, |h, b| h.wrapping_mul(31).wrapping_add(u64::from(b)));
    let all = chunkings(input, seed);
    assert!(all.len() > RANDOM_CHUNKINGS);
    for chunking in all {
        assert_eq!(chunking.concat(), input);
        let events = decode(&chunking);
        if events != whole {
            let sizes: Vec<usize> = chunking.iter().map(|p| p.len()).collect();
            chunk::assert_same(
                &whole,
                &events,
                &format!("events of {name} (pieces {sizes:?})"),
            );
        }
    }
    whole
}

/// SSE edge cases: line endings of every kind, comments, fields without a value or colon,
/// a last event without its blank line, ids and retries, multi-byte text.
const SSE_CASES: &[&str] = &[
    "data: a\r\n\r\ndata: b\r\rdata: c\n\n",
    "\r\n\r\n\n\r: comment\r\ndata\n\ndata:\n\n",
    "event: delta\ndata: {\"a\":1}\nid: 7\n\ndata: x\ndata:  y\nretry: 1500\n\n",
    "data: thé 🍵 – fin\rid: é\r\rdata: [DONE]",
    "id: 1\nretry: x\nevent: e\n\nevent: f\ndata: 2\n: keep-alive\n\ndata: tail\r",
    "data:no space\nunknown: field\n:\n\n\n\ndata: a\n\n",
];

#[test]
fn sse_decoder() {
    let mut inputs: Vec<(String, String)> = streams();
    for (i, case) in SSE_CASES.iter().enumerate() {
        inputs.push((format!("case-{i}"), (*case).to_owned()));
    }
    for (name, input) in &inputs {
        let events = invariant(name, input, |parts| sse_events(None, parts));
        assert!(!events.is_empty(), "{name}: no events");
        // A small line cap cuts long lines (multi-byte characters straddle it); the long
        // streams add nothing here but time.
        if input.len() > 1200 {
            continue;
        }
        for cap in [5, 9, 40] {
            invariant(&format!("{name}-cap{cap}"), input, |parts| {
                sse_events(Some(cap), parts)
            });
        }
    }
}

fn provider(provider: Provider, prefix: &str) {
    let inputs = streams_of(prefix);
    assert!(inputs.len() >= 2, "{prefix}: no streams");
    for (name, input) in &inputs {
        let events = invariant(name, input, |parts| model_events(provider, parts));
        check_settled(provider, &events);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, ModelEvent::Text(_) | ModelEvent::Native(_))),
            "{name}: no text or call: {events:?}"
        );
    }
}

#[test]
fn openai_decoder() {
    provider(Provider::OpenAi, "openai-");
}

#[test]
fn anthropic_decoder() {
    provider(Provider::Anthropic, "anthropic-");
}

#[test]
fn gemini_decoder() {
    provider(Provider::Gemini, "gemini-");
}

#[test]
fn mcp_sse_path() {
    let inputs = streams_of("mcp-");
    assert!(!inputs.is_empty());
    for (name, input) in &inputs {
        let outcomes = invariant(name, input, |parts| mcp::sse_outcomes(parts).0);
        let (_, session) = mcp::sse_outcomes(&[input.as_str()]);
        mcp::check_session(&outcomes, &session);
        assert!(outcomes.iter().all(Result::is_ok), "{name}: {outcomes:?}");
        assert!(outcomes.len() >= 8, "{name}: {} outcomes", outcomes.len());
    }
}

#[test]
fn call_parser_one_character_and_empty_pieces() {
    let tools = std::rc::Rc::new(golden::golden_tools());
    let inputs = common::files(&common::golden("parse"), Some("txt"));
    assert!(inputs.len() >= 20);
    let mut rng = Rng(0x5eed);
    for path in inputs {
        let input = std::fs::read_to_string(&path).unwrap();
        let cut = path
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .ends_with("-cut");
        let whole = parse_run(&tools, [input.as_str()], cut);
        let one = chars(&input);
        assert_eq!(
            parse_run(&tools, one.iter().copied(), cut),
            whole,
            "{}: one character at a time",
            path.display()
        );
        for _ in 0..20 {
            let parts = pieces(&input, 1 + rng.below(8), true, rng.next_u64());
            assert_eq!(
                parse_run(&tools, parts.iter().copied(), cut),
                whole,
                "{}: random pieces with empty ones",
                path.display()
            );
        }
    }
}

#[test]
fn the_chunking_helpers_lose_nothing_and_cut_between_characters() {
    let text = "a€b\r\n😀 ü";
    let mut rng = Rng(7);
    let mut lcg = chunk::Lcg(7);
    let mut all = vec![
        chars(text),
        chunk::fixed(text, 1),
        chunk::fixed(text, 3),
        chunk::random_sized(text, 4, &mut lcg),
        pieces(text, 2, true, 9),
        pieces(text, 2, false, 0),
        cut_at(text, &[0, 2, 2, 9, 100]),
    ];
    all.extend(
        boundaries(text)
            .iter()
            .map(|&i| vec![&text[..i], &text[i..]]),
    );
    for _ in 0..50 {
        all.push(pieces(text, 1 + rng.below(5), true, rng.next_u64()));
    }
    for chunking in &all {
        assert_eq!(chunking.concat(), text, "{chunking:?}");
    }
    assert_eq!(chars(text).len(), text.chars().count());
    assert!(chunk::fixed(text, 1).iter().all(|p| !p.is_empty()));
    assert_eq!(boundaries(text).len(), text.chars().count() + 1);
}
