//! The streaming call parser and the whole step stream, fed arbitrary model output in chunks.
//!
//! `call_parser` input: the first byte chooses how the rest is fed, the rest is the model output.
//!
//! | bits of byte 0 | meaning |
//! |---|---|
//! | `0x0f` | chunk size − 1 (1..=16 bytes, widened to a char boundary) |
//! | `0x10` | the output was cut by the token limit (`finish(true)`) |
//! | `0x20` | chunk sizes are pseudo-random in 1..=size instead of fixed |
//! | `0x40` | only the valid UTF-8 prefix of the rest is used (else lossy conversion) |
//!
//! Invariants checked:
//! - no panic;
//! - chunking invariance: the merged pieces of `CallParser` and the events of `parse_run` are
//!   the same for the whole output and for the chunked output;
//! - pieces are well formed: slots numbered 0, 1, 2, …; every `CallOpen` is followed by exactly
//!   one `CallClose` of its slot before anything else opens; names and argument deltas only
//!   inside their open call, at most one name per call;
//! - nothing is lost: for output without backticks (tag calls only), the text pieces, the
//!   markers and the bodies give back the output;
//! - events are well formed: every `TOOL_CALL_START` has a later `TOOL_CALL_END` with the same
//!   id (ids unique, nothing for a call after its end); the name started is a known tool; at
//!   `TOOL_CALL_END` the arguments the client holds (the joined deltas, or the call in the last
//!   `MESSAGES_SNAPSHOT` when one was sent) parse to a JSON object; every call `RUN_FINISHED`
//!   lists as ready validates against its tool's schema.

use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;
use webmcp_host::core::agui::{Event, Message};
use webmcp_host::core::parse::{CallParser, Piece};
use webmcp_host::core::stream::parse_run;
use webmcp_host::core::toolset::ToolSet;

use crate::chunk::{assert_same, fixed, random_sized, text, Lcg};

const TAG_OPEN: &str = "<tool_call>";
const TAG_CLOSE: &str = "</tool_call>";

thread_local! {
    /// The golden tools, built once (`parse_run` shares them through an `Rc`).
    static TOOLS: Rc<ToolSet> = Rc::new(crate::golden::golden_tools());
}

fn pieces<'a>(chunks: impl IntoIterator<Item = &'a str>, cut: bool) -> Vec<Piece> {
    let mut parser = CallParser::new();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(parser.push(chunk));
    }
    out.extend(parser.finish(cut));
    out
}

/// Adjacent text pieces and adjacent argument deltas of one slot joined; empty text dropped.
fn merge(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    for piece in pieces {
        match (out.last_mut(), piece) {
            (_, Piece::Text(t)) if t.is_empty() => {}
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (Some(Piece::CallArgs { slot: s, delta: a }), Piece::CallArgs { slot, delta: b })
                if *s == slot =>
            {
                a.push_str(&b)
            }
            (_, piece) => out.push(piece),
        }
    }
    out
}

fn check_pieces(pieces: &[Piece]) {
    let mut next_slot = 0;
    let mut open: Option<(usize, bool)> = None; // (slot, name seen)
    for piece in pieces {
        match piece {
            Piece::Text(_) => assert!(open.is_none(), "text inside an open call: {piece:?}"),
            Piece::CallOpen { slot } => {
                assert!(open.is_none(), "call opened inside an open call");
                assert_eq!(*slot, next_slot, "slots are numbered in order");
                next_slot += 1;
                open = Some((*slot, false));
            }
            Piece::CallName { slot, .. } => {
                let Some((at, named)) = open.as_mut() else {
                    panic!("a name outside a call: {piece:?}")
                };
                assert_eq!(slot, at, "a name for another slot");
                assert!(!*named, "a second name for slot {slot}");
                *named = true;
            }
            Piece::CallArgs { slot, .. } => {
                assert_eq!(
                    open.map(|(s, _)| s),
                    Some(*slot),
                    "arguments outside their call: {piece:?}"
                );
            }
            Piece::CallClose { slot, .. } => {
                assert_eq!(
                    open.map(|(s, _)| s),
                    Some(*slot),
                    "a close without its open: {piece:?}"
                );
                open = None;
            }
            Piece::NativeClose { .. } => panic!("the text parser made a native piece"),
        }
    }
    assert!(open.is_none(), "a call left open after finish");
}

/// For output without backticks: text, markers and bodies give back the output.
fn check_lossless(input: &str, pieces: &[Piece]) {
    let mut rebuilt = String::with_capacity(input.len() + 32);
    for piece in pieces {
        match piece {
            Piece::Text(text) => rebuilt.push_str(text),
            Piece::CallOpen { .. } => rebuilt.push_str(TAG_OPEN),
            Piece::CallClose { body, .. } => {
                rebuilt.push_str(body);
                rebuilt.push_str(TAG_CLOSE);
            }
            _ => {}
        }
    }
    // Only the last call may have ended with the output instead of a closing tag.
    let ends_in_call = matches!(pieces.last(), Some(Piece::CallClose { .. }));
    let same = rebuilt == input
        || (ends_in_call
            && rebuilt.len() == input.len() + TAG_CLOSE.len()
            && rebuilt.starts_with(input)
            && rebuilt.ends_with(TAG_CLOSE));
    assert!(
        same,
        "pieces do not give back the output:\n  input:   {input:?}\n  rebuilt: {rebuilt:?}"
    );
}

#[derive(Default)]
struct CallState {
    args: String,
    snapshot: Option<Vec<Message>>,
    ended: bool,
}

fn object_text(text: &str) -> bool {
    matches!(serde_json::from_str::<Value>(text), Ok(Value::Object(_)))
}

fn check_events(events: &[Event], tools: &ToolSet) {
    let mut calls: HashMap<&str, CallState> = HashMap::new();
    for event in events {
        match event {
            Event::ToolCallStart {
                tool_call_id,
                tool_call_name,
                ..
            } => {
                assert!(
                    !calls.contains_key(tool_call_id.as_str()),
                    "TOOL_CALL_START twice for {tool_call_id}"
                );
                assert!(
                    tools.get(tool_call_name).is_some(),
                    "TOOL_CALL_START with unknown tool {tool_call_name:?}"
                );
                calls.insert(tool_call_id, CallState::default());
            }
            Event::ToolCallArgs {
                tool_call_id,
                delta,
            } => {
                let state = calls
                    .get_mut(tool_call_id.as_str())
                    .unwrap_or_else(|| panic!("TOOL_CALL_ARGS before its start: {tool_call_id}"));
                assert!(!state.ended, "TOOL_CALL_ARGS after its end: {tool_call_id}");
                state.args.push_str(delta);
            }
            Event::MessagesSnapshot { messages } => {
                for state in calls.values_mut().filter(|s| !s.ended) {
                    state.snapshot = Some(messages.clone());
                }
            }
            Event::ToolCallEnd { tool_call_id } => {
                let state = calls
                    .get_mut(tool_call_id.as_str())
                    .unwrap_or_else(|| panic!("TOOL_CALL_END without start: {tool_call_id}"));
                assert!(!state.ended, "TOOL_CALL_END twice: {tool_call_id}");
                state.ended = true;
                match &state.snapshot {
                    Some(messages) => {
                        let held = messages.iter().rev().find_map(|m| match m {
                            Message::Assistant { tool_calls, .. } => tool_calls
                                .iter()
                                .find(|c| c.id == *tool_call_id)
                                .map(|c| c.function.arguments.clone()),
                            _ => None,
                        });
                        // Absent from the snapshot: the call was taken back (rejected).
                        if let Some(arguments) = held {
                            assert!(
                                object_text(&arguments),
                                "at TOOL_CALL_END of {tool_call_id} the snapshot holds arguments that are not an object: {arguments:?}"
                            );
                        }
                    }
                    None => assert!(
                        object_text(&state.args),
                        "at TOOL_CALL_END of {tool_call_id} the joined deltas are not an object: {:?}",
                        state.args
                    ),
                }
            }
            Event::RunFinished {
                result: Some(result),
                ..
            } => {
                for call in result["calls"].as_array().expect("result.calls") {
                    let name = call["name"].as_str().expect("a call's name");
                    if let Err(error) = tools.validate(name, &call["arguments"]) {
                        panic!("a ready call does not validate: {call}: {error}");
                    }
                }
            }
            _ => {}
        }
    }
    for (id, state) in &calls {
        assert!(state.ended, "TOOL_CALL_START without TOOL_CALL_END: {id}");
    }
}

/// The call parser fuzz target.
pub fn call_parser(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(mode & 0x0f) + 1;
    let cut = mode & 0x10 != 0;
    let random = mode & 0x20 != 0;
    let input = text(rest, mode & 0x40 != 0);
    let tools = TOOLS.with(Rc::clone);
    let parts = if random {
        random_sized(&input, size, &mut Lcg(rest.len() as u64 ^ u64::from(mode)))
    } else {
        fixed(&input, size)
    };

    // The parser alone.
    let whole = merge(pieces([input.as_str()], cut));
    let chunked_raw = pieces(parts.iter().copied(), cut);
    check_pieces(&chunked_raw);
    let chunked = merge(chunked_raw);
    assert_same(&whole, &chunked, "pieces");
    check_pieces(&whole);
    if !input.contains('`') {
        check_lossless(&input, &whole);
    }

    // Parser, repair and events.
    let events_whole = parse_run(&tools, [input.as_str()], cut);
    let events_chunked = parse_run(&tools, parts.iter().copied(), cut);
    assert_same(&events_whole, &events_chunked, "events");
    check_events(&events_whole, &tools);
}
