//! The conversations played through the host: saved, listed, read, forgotten, and read back
//! by a new worker.

use serde_json::json;

use super::*;
use crate::core::host::play::Play;
use crate::core::ops::threads::ThreadSummary;

fn record(thread_id: &str, tab_id: i64) -> ThreadRecord {
    let summary: ThreadSummary = serde_json::from_value(json!({
        "threadId": thread_id, "tabId": tab_id, "title": "Buy a mug",
        "turns": 1, "updatedMs": 2.0,
    }))
    .expect("a summary");
    ThreadRecord {
        summary,
        tools: Vec::new(),
        messages: Vec::new(),
        open_run: None,
    }
}

fn play(play: &mut Play, mut machine: Conversations) -> Result<Value, String> {
    play.drive(|host, input, now| host.conversations(&mut machine, input, now))
}

#[test]
fn a_conversation_is_saved_listed_read_and_forgotten() {
    let mut world = Play::shop(&[]);
    assert_eq!(
        play(&mut world, Conversations::save(&record("t1", 4))),
        Ok(Value::Null)
    );
    assert!(world.session.contains_key(&thread_key("t1")));

    // A new worker reads the list back from storage.
    world.host = Host::default();
    let listed = play(&mut world, Conversations::list(Some(4))).unwrap();
    assert_eq!(listed[0]["threadId"], "t1");
    assert_eq!(
        play(&mut world, Conversations::list(Some(5))),
        Ok(json!([]))
    );
    let shown = play(&mut world, Conversations::show("t1")).unwrap();
    assert_eq!(shown["threadId"], "t1");
    assert_eq!(shown["messages"], json!([]));

    assert_eq!(
        play(&mut world, Conversations::forget("t1")),
        Ok(json!(true))
    );
    assert!(!world.session.contains_key(&thread_key("t1")));
    assert_eq!(world.session[INDEX_KEY], json!([]));
    assert_eq!(
        play(&mut world, Conversations::forget("t1")),
        Err("forget: no conversation `t1` is kept".into())
    );
    assert_eq!(
        play(&mut world, Conversations::show("t1")),
        Err("conversation: no conversation `t1` is kept".into())
    );
}

#[test]
fn a_storage_read_error_is_the_answer_word_for_word() {
    let mut world = Play::shop(&[]);
    world.storage_error = Some("Error: storage is gone".into());
    assert_eq!(
        play(&mut world, Conversations::show("t1")),
        Err("Error: storage is gone".into())
    );
    // A save's failures are warned of.
    assert_eq!(
        play(&mut world, Conversations::save(&record("t1", 4))),
        Ok(Value::Null)
    );
    assert_eq!(
        world.warnings,
        [
            "webmcp-host: conversation t1 was not stored: Error: storage is gone",
            "webmcp-host: conversation t1 was not stored: Error: storage is gone",
        ]
    );
    assert_eq!(
        play(&mut world, Conversations::forget("t1")),
        Err("Error: storage is gone".into())
    );
}
