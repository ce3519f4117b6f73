//! Writes, one JSON line per case of the genuine-output corpus (`tests/corpus/cases.jsonl`),
//! the messages the host's OpenAI-compatible provider sends for it in the text call format and
//! their fingerprint: `{"case", "kind", "fingerprint", "messages"}`.
//! `scripts/record-corpus.mjs` sends them to a real model; `tests/model_corpus.rs` checks that
//! a recording was made from the messages the code sends now.
//!
//! `cargo run --quiet --example corpus_requests`
#[path = "../tests/common/corpus.rs"]
mod corpus;

use serde_json::json;

fn main() {
    for case in corpus::cases() {
        let messages = corpus::request_messages(&case);
        println!(
            "{}",
            json!({"case": case.id, "kind": case.kind, "fingerprint": corpus::fingerprint(&messages), "messages": messages})
        );
    }
}
