use serde_json::{json, Value};

use super::*;

fn message(value: Value) -> Message {
    serde_json::from_value(value).expect("a message")
}

fn summary(id: &str, tab: Option<i64>, updated: f64) -> ThreadSummary {
    ThreadSummary {
        thread_id: id.into(),
        title: String::new(),
        tab_id: tab,
        turns: 1,
        updated_ms: updated,
        forked_from: None,
        last_run: None,
        dropped_turns: 0,
        origin: None,
        bytes: 0,
    }
}

#[test]
fn the_oldest_whole_turns_go_first_and_the_last_turn_stays() {
    let turn = |n: usize| {
        vec![
            message(json!({"role": "user", "id": format!("u{n}"), "content": "x".repeat(100)})),
            message(
                json!({"role": "assistant", "id": format!("a{n}"), "content": "y".repeat(100)}),
            ),
        ]
    };
    let mut messages: Vec<Message> = (0..5).flat_map(turn).collect();
    assert_eq!(trim(&mut messages, 600), 3);
    assert_eq!(messages.len(), 4);
    assert!(matches!(&messages[0], Message::User { id, .. } if id == "u3"));
    let mut one = turn(9);
    assert_eq!(trim(&mut one, 10), 0, "the last turn stays, however large");
    assert_eq!(one.len(), 2);
}

#[test]
fn tool_changes_name_what_was_added_removed_and_changed() {
    let mark = |name: &str, digest: &str| ToolMark {
        name: name.into(),
        digest: digest.into(),
    };
    let fixed = vec![mark("a", "1"), mark("b", "2")];
    assert_eq!(tool_changes(&fixed, &fixed), None);
    let now = vec![mark("b", "3"), mark("c", "4")];
    assert_eq!(
        tool_changes(&fixed, &now),
        Some(json!({"added": ["c"], "removed": ["a"], "changed": ["b"]}))
    );
    assert_ne!(digest("a"), digest("b"));
}

#[test]
fn the_list_keeps_the_most_recent_conversations_within_the_cap() {
    let mut threads = Threads::default();
    assert_eq!(threads.list(), None);
    let stored = json!([summary("old", Some(1), 1.0), {"garbage": true}]);
    assert_eq!(
        threads.keep(Some(stored)).len(),
        1,
        "what does not parse is left out"
    );
    for i in 0..MAX_CONVERSATIONS - 1 {
        let (_, dropped) = threads.saved(summary(&format!("t{i}"), Some(2), 10.0 + i as f64));
        assert_eq!(dropped, Vec::<String>::new());
    }
    let (list, dropped) = threads.saved(summary("t5", Some(2), 99.0));
    assert!(dropped.is_empty(), "saving one again adds nothing");
    assert_eq!(list[0]["threadId"], "t5");
    let (list, dropped) = threads.saved(summary("new", Some(2), 100.0));
    assert_eq!(dropped, vec!["old"], "the least recently updated goes");
    assert_eq!(list.as_array().map(Vec::len), Some(MAX_CONVERSATIONS));
    assert_eq!(threads.conversations(Some(1)), json!([]));
    assert_eq!(threads.conversations(Some(2))[0]["threadId"], "new");
    assert!(threads.forget("new").is_ok());
    let error = threads.forget("new").expect_err("gone");
    assert_eq!(error, "forget: no conversation `new` is kept");
}

#[test]
fn a_stored_record_is_read_as_untrusted() {
    assert_eq!(ThreadRecord::from_stored("t", None), Ok(None));
    let error = ThreadRecord::from_stored("t", Some(json!([1]))).expect_err("not a record");
    assert!(
        error.starts_with("run: the stored conversation `t` is unreadable"),
        "{error}"
    );
    let record = ThreadRecord {
        summary: summary("other", None, 1.0),
        tools: Vec::new(),
        messages: Vec::new(),
        open_run: None,
    };
    let error = ThreadRecord::from_stored("t", Some(record.to_stored())).expect_err("another");
    assert!(error.contains("names another thread"), "{error}");
    let shown = conversation("other", Some(record.to_stored())).expect("shown");
    assert_eq!(
        (shown["threadId"].as_str(), shown["messages"].clone()),
        (Some("other"), json!([]))
    );
    let error = conversation("t", None).expect_err("none kept");
    assert_eq!(error, "conversation: no conversation `t` is kept");
}

#[test]
fn a_run_on_another_origin_starts_a_new_conversation_unless_carried_over() {
    let said = vec![
        message(json!({"role": "user", "id": "u1", "content": "My code?"})),
        message(json!({"role": "assistant", "id": "a1", "content": "It is 493817."})),
    ];
    let stored = ThreadRecord {
        summary: ThreadSummary {
            origin: Some("https://a.test".into()),
            ..summary("t", Some(3), 1.0)
        },
        tools: Vec::new(),
        messages: said.clone(),
        open_run: None,
    };
    let new = [message(
        json!({"role": "user", "id": "u2", "content": "Tell me again."}),
    )];
    let place = |origin, carry_over| RunPlace {
        run_id: "r2",
        tab_id: Some(3),
        messages: &new,
        origin,
        carry_over,
    };
    let settle = |origin, carry_over| {
        Opening::read(Some(stored.clone())).0.settle(
            "t",
            "t_new",
            Vec::new(),
            place(origin, carry_over),
            2.0,
        )
    };
    // Another origin: a new conversation of that origin, no history, a notice saying why.
    let moved = settle(Some("https://b.test"), false);
    assert!(moved.history.is_empty());
    assert_eq!(moved.record.summary.thread_id, "t_new");
    assert_eq!(
        moved.record.summary.origin.as_deref(),
        Some("https://b.test")
    );
    assert_eq!(moved.record.messages, new.to_vec());
    assert_eq!(moved.notices[0]["type"], "fresh");
    assert_eq!(moved.notices[0]["from"], "t");
    assert!(!serde_json::to_string(&moved.record)
        .unwrap()
        .contains("493817"));
    // The same origin, or carried over on purpose: the history goes on.
    for (origin, carry_over) in [
        (Some("https://a.test"), false),
        (Some("https://b.test"), true),
        (None, false),
    ] {
        let kept = settle(origin, carry_over);
        assert_eq!(kept.history, said, "{origin:?} {carry_over}");
        assert_eq!(kept.record.summary.thread_id, "t");
    }
}

#[test]
fn the_conversations_stay_within_their_byte_budget_least_recent_forgotten_first() {
    use crate::core::limits::MAX_CONVERSATIONS_BYTES;
    let mut threads = Threads::default();
    let sized = |id: &str, updated: f64| ThreadSummary {
        bytes: MAX_CONVERSATIONS_BYTES / 3,
        ..summary(id, None, updated)
    };
    for i in 0..3 {
        assert!(threads
            .saved(sized(&format!("t{i}"), i as f64))
            .1
            .is_empty());
    }
    let (_, dropped) = threads.saved(sized("t3", 3.0));
    assert_eq!(dropped, ["t0"]);
    // The size a record is stored with is its own.
    let record = ThreadRecord {
        summary: summary("t", None, 1.0),
        tools: Vec::new(),
        messages: vec![message(
            json!({"role": "user", "id": "u", "content": "hello"}),
        )],
        open_run: None,
    };
    let stored = record.to_stored();
    let size = stored["bytes"].as_u64().unwrap() as usize;
    assert!(
        size > 0 && size.abs_diff(stored.to_string().len()) < 8,
        "{size} {}",
        stored.to_string().len()
    );
    // One turn of huge results: stored with its long strings cut, within the cap.
    let huge = ThreadRecord {
        messages: vec![message(
            json!({"role": "tool", "id": "t1", "toolCallId": "c1", "content": "R".repeat(3_000_000)}),
        )],
        ..record
    };
    let stored = huge.to_stored();
    let size = stored["bytes"].as_u64().unwrap() as usize;
    assert!(size < 100_000, "{size}");
    assert!(stored
        .to_string()
        .contains("bytes not stored: max_conversation_bytes"));
}
