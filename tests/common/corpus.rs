//! The genuine-output corpus (`tests/corpus/`): its question set (`cases.jsonl`, over the tools
//! of `tools.json`), each case's conversation as the host's messages, and the request the
//! host's OpenAI-compatible provider sends for it in the text call format. Shared by
//! `tests/model_corpus.rs` (which replays what was recorded) and `examples/corpus_requests.rs`
//! (which writes the requests `scripts/record-corpus.mjs` sends to a real model), so a recording
//! and its check always agree on what the model was asked.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;
use sha2::{Digest, Sha256};
use webmcp_host::core::agui::{Message, ToolCall};
use webmcp_host::core::provider::{openai, ModelConfig, ModelRequest, Provider};
use webmcp_host::core::toolset::ToolSpec;

/// `tests/corpus/` (or a path under it).
pub fn dir(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(path)
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The corpus's tools, as a run offers them.
pub fn tools_text() -> String {
    read(&dir("tools.json"))
}

/// The corpus's tools, as specs.
pub fn tool_specs() -> Vec<ToolSpec> {
    serde_json::from_str(&tools_text()).expect("tests/corpus/tools.json")
}

/// One question of the set: its conversation so far and the call the model should write
/// next (`None`: an answer in words, no call).
#[derive(Debug, Clone)]
pub struct Case {
    /// `single-01`, `two-turn-03`, `no-call-02`, …
    pub id: String,
    /// `single`, `two-turn` or `no-call`.
    pub kind: String,
    /// `{"user": text}`, `{"call": {"name", "arguments"}}`, `{"result": text}`, in order.
    pub turns: Vec<Value>,
    /// `{"name", "arguments"}`: the right next call (see [`matches`]).
    pub expect: Option<Value>,
}

/// Every case of `cases.jsonl`, in order.
pub fn cases() -> Vec<Case> {
    read(&dir("cases.jsonl"))
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let v: Value = serde_json::from_str(line).expect("a case line");
            Case {
                id: v["id"].as_str().expect("id").to_owned(),
                kind: v["kind"].as_str().expect("kind").to_owned(),
                turns: v["turns"].as_array().expect("turns").clone(),
                expect: Some(v["expect"].clone()).filter(|e| !e.is_null()),
            }
        })
        .collect()
}

/// The case's conversation as the host keeps it.
pub fn messages(case: &Case) -> Vec<Message> {
    let mut out = Vec::new();
    let mut last_call = String::new();
    for (i, turn) in case.turns.iter().enumerate() {
        if let Some(text) = turn["user"].as_str() {
            out.push(Message::User {
                id: format!("m{i}"),
                content: text.to_owned(),
            });
        } else if let Some(call) = turn.get("call") {
            last_call = format!("call_{i}");
            out.push(Message::Assistant {
                id: format!("m{i}"),
                content: None,
                tool_calls: vec![ToolCall::function(
                    last_call.clone(),
                    call["name"].as_str().expect("a call's name"),
                    call["arguments"].to_string(),
                )],
            });
        } else if let Some(text) = turn["result"].as_str() {
            out.push(Message::Tool {
                id: format!("m{i}"),
                content: text.to_owned(),
                tool_call_id: last_call.clone(),
            });
        } else {
            panic!("{}: turn {i} is not user, call or result", case.id);
        }
    }
    out
}

/// The messages the OpenAI-compatible provider sends for the case in the text call format
/// (the `messages` of its request body).
pub fn request_messages(case: &Case) -> Value {
    let model = ModelConfig {
        name: "corpus".into(),
        provider: Provider::Openai,
        base_url: "http://127.0.0.1/v1".into(),
        model: "local".into(),
        native_tools: false,
        key_ref: None,
        max_tokens: None,
        transcript: None,
        idle_timeout_ms: None,
    };
    let request = ModelRequest {
        step: 1,
        messages: messages(case),
        tools: tool_specs(),
    };
    let body: Value =
        serde_json::from_str(&openai::build(&model, &request, None).body).expect("a JSON body");
    body["messages"].clone()
}

/// The SHA-256 (hex) of [`request_messages`] as compact JSON: what a recording names.
pub fn fingerprint(messages: &Value) -> String {
    Sha256::digest(messages.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether a call (`name`, `arguments` object) is the expected one: the same name, each
/// expected argument present and equal (numbers by value), or for `{"contains": s}` a string
/// that contains `s` (case aside), or for `{"absent_or": v}` absent or equal to `v`; and no
/// other argument, unless it is the schema's default (an invented `max_price` narrows a
/// search the person did not narrow: not the right call).
pub fn matches(expect: &Value, name: &str, arguments: &Value) -> bool {
    if expect["name"] != name {
        return false;
    }
    let empty = serde_json::Map::new();
    let expected = expect["arguments"].as_object().unwrap_or(&empty);
    let Some(given) = arguments.as_object() else {
        return false;
    };
    let specs = tool_specs();
    let schema = specs
        .iter()
        .find(|s| s.name == name)
        .map(|s| &s.input_schema);
    let extra_ok = given.iter().all(|(key, value)| {
        expected.contains_key(key)
            || schema.is_some_and(|s| s["properties"][key]["default"] == *value)
    });
    extra_ok
        && expected.iter().all(|(key, want)| {
            let got = arguments.get(key);
            if let Some(part) = want.get("contains").and_then(Value::as_str) {
                return got
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.to_lowercase().contains(&part.to_lowercase()));
            }
            if let Some(default) = want.get("absent_or") {
                return got.is_none_or(|g| same(g, default));
            }
            got.is_some_and(|g| same(g, want))
        })
}

fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}
