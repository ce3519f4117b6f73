use super::*;
use crate::core::agui::coalesce;
use crate::core::parse::CallParser;
use crate::core::toolset::ToolSpec;
use serde_json::json;

fn tools() -> Rc<ToolSet> {
    Rc::new(ToolSet::new([
        ToolSpec {
            name: "add".into(),
            description: "Adds".into(),
            input_schema: json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}),
        },
        ToolSpec { name: "ping".into(), description: String::new(), input_schema: json!({"type": "object"}) },
    ])
    .0)
}

fn types(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| {
            serde_json::to_value(e).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// Feeds native deltas through a step.
fn native(deltas: Vec<crate::core::native::NativeDelta>) -> (Vec<Event>, StepOutcome) {
    let tools = tools();
    let mut calls = crate::core::native::NativeCalls::default();
    let mut step = StepStream::new(tools, Ids::new(""), Vec::new());
    let mut events = Vec::new();
    for delta in deltas {
        for piece in calls.push(delta) {
            events.extend(step.piece(piece));
        }
    }
    for piece in calls.finish(false) {
        events.extend(step.piece(piece));
    }
    let (tail, outcome) = step.finish();
    events.extend(tail);
    (coalesce(events), outcome)
}

#[test]
fn a_clean_call_streams_start_args_end() {
    let events = parse_run(
        &tools(),
        ["Sum: <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>"],
        false,
    );
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(
        events[4],
        Event::ToolCallArgs {
            tool_call_id: "call_2".into(),
            delta: "{\"a\": 1, \"b\": 2}".into()
        }
    );
}

#[test]
fn a_repaired_call_ends_with_repair_and_snapshot() {
    let events = parse_run(
        &tools(),
        ["<tool_call>{\"name\": \"Add\", \"arguments\": {\"a\": \"1\", \"b\": 2}}</tool_call>"],
        false,
    );
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "CUSTOM",
            "MESSAGES_SNAPSHOT",
            "TOOL_CALL_END",
            "RUN_FINISHED"
        ]
    );
    let Event::MessagesSnapshot { messages } = &events[4] else {
        panic!()
    };
    let Message::Assistant { tool_calls, .. } = &messages[0] else {
        panic!()
    };
    assert_eq!(tool_calls[0].function.arguments, "{\"a\":1,\"b\":2}");
}

#[test]
fn an_unknown_tool_streams_nothing_but_is_reported() {
    let events = parse_run(
        &tools(),
        ["<tool_call>{\"name\": \"launch\", \"arguments\": {}}</tool_call>"],
        false,
    );
    assert_eq!(types(&events), ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]);
    let Event::RunFinished {
        result: Some(result),
        ..
    } = &events[2]
    else {
        panic!()
    };
    assert_eq!(result["rejected"][0]["reason"], "unknown_tool");
}

#[test]
fn a_cut_off_call_is_removed() {
    let events = parse_run(
        &tools(),
        ["<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1"],
        true,
    );
    assert_eq!(
        types(&events),
        [
            "RUN_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "CUSTOM",
            "MESSAGES_SNAPSHOT",
            "TOOL_CALL_END",
            "RUN_FINISHED"
        ]
    );
    let Event::MessagesSnapshot { messages } = &events[4] else {
        panic!()
    };
    assert_eq!(
        messages,
        &Vec::<Message>::new(),
        "an assistant message left empty is not sent"
    );
}

#[test]
fn native_calls_stream_and_settle() {
    use crate::core::native::NativeDelta;
    let d = |index, name: Option<&str>, args: &str| NativeDelta {
        index,
        id: None,
        name: name.map(Into::into),
        arguments: Some(args.into()),
    };
    let (events, outcome) = native(vec![
        d(0, Some("add"), "{\"a\":1,"),
        d(0, None, "\"b\":2}"),
        d(1, Some("ping"), ""),
    ]);
    assert_eq!(outcome.calls.len(), 2);
    assert_eq!(
        types(&events),
        [
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_START",
            "TOOL_CALL_END",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END"
        ]
    );
    assert_eq!(
        events[4],
        Event::ToolCallArgs {
            tool_call_id: "call_3".into(),
            delta: "{}".into()
        }
    );
}

#[test]
fn abort_drops_open_calls_and_closes_text() {
    let tools = tools();
    let mut parser = CallParser::new();
    let mut step = StepStream::new(
        tools,
        Ids::new("r1-"),
        vec![Message::User {
            id: "u".into(),
            content: "hi".into(),
        }],
    );
    let mut events = Vec::new();
    for piece in parser.push("ok <tool_call>{\"name\":\"ping\",\"arguments\":{\"x\":") {
        events.extend(step.piece(piece));
    }
    let (tail, outcome) = step.abort();
    events.extend(tail);
    assert_eq!(outcome.rejected[0].reason, Rejection::Aborted);
    let types = types(&coalesce(events.clone()));
    assert_eq!(
        types,
        [
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "CUSTOM",
            "MESSAGES_SNAPSHOT",
            "TOOL_CALL_END",
            "TEXT_MESSAGE_END"
        ]
    );
    let snapshot = events.iter().find_map(|e| match e {
        Event::MessagesSnapshot { messages } => Some(messages.clone()),
        _ => None,
    });
    assert_eq!(
        snapshot.unwrap().len(),
        2,
        "the history and the assistant message"
    );
}

/// An output with many repaired calls: the snapshots carry the history a few times in all,
/// not once per call, and each repaired call ends only after a snapshot that holds it final.
#[test]
fn snapshots_grow_linearly_with_repaired_calls() {
    let call = "Adding. <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": \"1\", \"b\": 2}}</tool_call>\n";
    let output = call.repeat(400);
    let events = parse_run(&tools(), [output.as_str()], false);
    let mut snapshot_bytes = 0;
    let mut snapshots = 0;
    let mut held: std::collections::HashMap<String, String> = Default::default();
    for event in &events {
        match event {
            Event::MessagesSnapshot { messages } => {
                snapshots += 1;
                snapshot_bytes += serde_json::to_string(messages).unwrap().len();
                for message in messages {
                    if let Message::Assistant { tool_calls, .. } = message {
                        for c in tool_calls {
                            held.insert(c.id.clone(), c.function.arguments.clone());
                        }
                    }
                }
            }
            Event::ToolCallEnd { tool_call_id } => {
                assert_eq!(
                    held.get(tool_call_id).map(String::as_str),
                    Some("{\"a\":1,\"b\":2}"),
                    "{tool_call_id} ends before a snapshot holds it"
                );
            }
            _ => {}
        }
    }
    let final_size = output.len() * 2;
    assert!(
        snapshots <= 12,
        "{snapshots} snapshots for 400 repaired calls"
    );
    assert!(
        snapshot_bytes <= 3 * final_size,
        "the snapshots carry {snapshot_bytes} bytes for a {} byte output",
        output.len()
    );
    let ends = types(&events)
        .iter()
        .filter(|t| *t == "TOOL_CALL_END")
        .count();
    assert_eq!(ends, 400);
}

#[test]
fn parse_run_each_hands_each_event_over_before_the_output_ends() {
    let call =
        "Adding. <tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}</tool_call>\n";
    let chunks: Vec<String> = (0..50).map(|_| call.to_owned()).collect();
    let read = std::cell::Cell::new(0);
    let fed = chunks.iter().map(|c| {
        read.set(read.get() + 1);
        c.as_str()
    });
    // For each event, how many chunks had been read when it was handed over.
    let mut seen = Vec::new();
    parse_run_each(&tools(), fed, false, |event| seen.push((event, read.get())));
    let first_end = seen
        .iter()
        .position(|(e, _)| matches!(e, Event::ToolCallEnd { .. }))
        .expect("a call ends");
    assert!(
        seen[first_end].1 < 5,
        "the first call's end was held until chunk {} of 50",
        seen[first_end].1
    );
    // The same events as the collected run, in the same order.
    let streamed: Vec<Event> = seen.into_iter().map(|(e, _)| e).collect();
    let collected = parse_run(&tools(), chunks.iter().map(String::as_str), false);
    assert_eq!(streamed, collected);
    assert_eq!(
        types(&streamed).last().map(String::as_str),
        Some("RUN_FINISHED")
    );
}

/// Splits `text` into chunks of `n` bytes at char boundaries.
fn chunks(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut end = rest.len().min(n);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        out.push(rest[..end].to_owned());
        rest = &rest[end..];
    }
    out
}

#[test]
fn a_bare_json_reply_is_the_call_it_names_in_every_chunking() {
    let tools = tools();
    for reply in [
        "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}",
        "```json\n{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}\n```",
        "<|python_tag|>{\"name\": \"add\", \"parameters\": {\"a\": 1, \"b\": 2}}",
    ] {
        let whole = parse_run(&tools, [reply], false);
        for n in [1, 3, 8] {
            let parts = chunks(reply, n);
            let chunked = parse_run(&tools, parts.iter().map(String::as_str), false);
            assert_eq!(whole, chunked, "{reply:?} in chunks of {n}");
        }
        let kinds = types(&whole);
        assert!(
            !kinds.iter().any(|k| k.starts_with("TEXT_MESSAGE")),
            "{reply:?}: no text: {kinds:?}"
        );
        assert!(kinds.contains(&"TOOL_CALL_START".to_owned()), "{kinds:?}");
        let note = whole
            .iter()
            .map(|e| serde_json::to_value(e).unwrap())
            .find(|e| e["name"] == CUSTOM_TOOL_REPAIR)
            .expect("a tool_repair note");
        assert!(
            note["value"]["fixes"][0]["detail"]
                .as_str()
                .unwrap()
                .starts_with("read a"),
            "{note}"
        );
        let run = serde_json::to_value(whole.last().unwrap()).unwrap();
        assert_eq!(run["result"]["calls"][0]["name"], "add", "{run}");
        assert_eq!(
            run["result"]["calls"][0]["arguments"],
            json!({"a": 1, "b": 2})
        );
    }
}

#[test]
fn json_that_is_not_a_whole_call_stays_text() {
    let tools = tools();
    for reply in [
        "{\"result\": 3}",
        "{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}} is what I would call.",
        "The call would be {\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": 2}}",
        "{\"name\": \"unknown_tool\", \"arguments\": {}}",
    ] {
        let events = parse_run(&tools, [reply], false);
        let text: String = events
            .iter()
            .filter_map(|e| match e {
                Event::TextMessageContent { delta, .. } => Some(delta.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(text, reply, "all of it is text");
        assert!(
            !types(&events).contains(&"TOOL_CALL_START".to_owned()),
            "{reply:?}"
        );
    }
    // Without tools nothing is held: a JSON reply streams as it comes.
    let none = Rc::new(ToolSet::new([]).0);
    let events = parse_run(&none, ["{\"name\": \"add\"}"], false);
    assert!(types(&events).contains(&"TEXT_MESSAGE_CONTENT".to_owned()));
}
