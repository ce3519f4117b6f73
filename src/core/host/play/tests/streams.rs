//! A run's model streams, its timers and its keep-alive as outputs of the host's vocabulary:
//! the model's fetches are the host's `Http` outputs (its ids, its heads, its pieces), a
//! refusal's `Retry-After` is waited out, a stop aborts the stream under way.

use serde_json::json;

use super::super::model::Said;
use super::*;

/// The shop with a model that answers in words.
fn talker() -> Play {
    let mut play = Play::shop(&["agent"]);
    play.models
        .serve("agent-1", Box::new(|_| Said::Text("Hello.".into())));
    play
}

fn ask() -> Value {
    json!({"model": "agent", "messages": [{"id": "u1", "role": "user", "content": "Hi"}]})
}

#[test]
fn a_refused_stream_is_tried_again_after_its_retry_after_and_then_read() {
    let mut play = talker();
    play.models.refusals.push_back((429, Some("3".into())));
    let started = play.now;
    let answer = play.run(&ask()).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    // The refusal's three seconds were waited out before the second request, the only one
    // the model answered.
    assert!(play.now - started >= 3_000.0, "{}", play.now - started);
    assert_eq!(play.models.asked.len(), 1);
    let said = answer["messages"].to_string();
    assert!(said.contains("Hello."), "{said}");
}

#[test]
fn a_stop_aborts_the_stream_under_way() {
    let mut play = talker();
    play.models.latency_ms = 20_000.0;
    let ended = play.run_ended(&ask(), Some(5_000)).expect("the run starts");
    let stopped = RunOutcome::Stopped {
        reason: "the simulation's time budget ran out".into(),
    };
    assert_eq!(play.outcomes, [stopped], "{:?}", ended.to_json());
    // The request went out, its head never came: the host aborted its fetch.
    assert_eq!(play.models.asked.len(), 1);
    assert_eq!(play.models.aborted.len(), 1);
}

#[test]
fn a_run_opens_its_servers_at_its_start_and_closes_them_at_its_end() {
    use super::super::peer::{Peer, MCP_URL};
    use crate::core::ops::threads::thread_key;
    use crate::core::setup::store::SERVERS_KEY;
    let mut play = talker();
    play.peer = Peer::listing(&["lookup"]);
    let servers = json!([{"name": "peer", "url": MCP_URL}]);
    play.local.insert(SERVERS_KEY.into(), servers);
    let mut asked = ask();
    asked["threadId"] = json!("t-1");
    let answer = play.run(&asked).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    // The server's tools were offered to the model, and its session ended with the run.
    let offered = play.models.asked[0].1["tools"].to_string();
    assert!(offered.contains("lookup"), "{offered}");
    let methods = play.peer.methods();
    assert_eq!(methods.first().map(String::as_str), Some("server/discover"));
    assert_eq!(
        methods.last().map(String::as_str),
        Some("DELETE"),
        "{methods:?}"
    );
    // The conversation was saved as it ended: the model's answer in it.
    let saved = play.session[&thread_key("t-1")].to_string();
    assert!(saved.contains("Hello."), "{saved}");
}

#[test]
fn a_runs_timers_are_the_hosts_and_each_one_no_longer_wanted_is_cancelled() {
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut play = talker();
    let seen: Rc<RefCell<Vec<Timers>>> = Rc::default();
    let sink = seen.clone();
    play.instead = Some(Box::new(move |output| {
        if let Output::Timers(timers) = output {
            sink.borrow_mut().push(*timers);
        }
        None
    }));
    let answer = play.run(&ask()).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    // The first byte's deadline and each read's idle deadline were set as the host's timers,
    // and each was cancelled once its wait was over: none fired, none is left.
    let seen = seen.borrow();
    let set: Vec<u64> = (seen.iter())
        .filter_map(|t| match t {
            Timers::Set { id, .. } => Some(*id),
            Timers::Cancel { .. } => None,
        })
        .collect();
    assert!(set.len() >= 2, "{seen:?}");
    for id in set {
        assert!(seen.contains(&Timers::Cancel { id }), "{id}: {seen:?}");
    }
}

#[test]
fn a_runs_intents_are_forgotten_at_its_end_after_its_record_is_stored() {
    use crate::core::restart::intent_slot;
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut play = shop(2);
    let writes: Rc<RefCell<Vec<(String, bool)>>> = Rc::default();
    let sink = writes.clone();
    play.instead = Some(Box::new(move |output| {
        if let Output::Storage(Storage::Write { key, value, .. }) = output {
            sink.borrow_mut().push((key.clone(), value.is_some()));
        }
        None
    }));
    let mut run = mugs_run();
    run["runId"] = json!("r-acts");
    let answer = play.run(&run).expect("the run starts");
    assert_eq!(answer["outcome"]["type"], "completed", "{answer:#}");
    assert_eq!(play.pages[&4].cart, 2);
    // The run's intents were removed once, as a step of its end, after its record was
    // first stored; nothing of them stays.
    let slot = intent_slot("r-acts");
    let writes = writes.borrow();
    let removed = (writes.iter()).position(|(key, stored)| *key == slot && !*stored);
    let first = (writes.iter()).position(|(key, _)| key.contains("r-acts") && *key != slot);
    assert!(first < removed && removed.is_some(), "{writes:?}");
    assert!(!play.session.contains_key(&slot));
}
