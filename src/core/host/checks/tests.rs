//! The settings checks played through the host: a model's endpoint asked with its key (the
//! answer redacted of it), Chrome's model and a replay model answered without a fetch, an
//! MCP server connected to, listed, closed and its state kept; the errors of a check that
//! finds nothing.

use serde_json::{json, Value};

use super::*;
use crate::core::host::play::peer::{Peer, MCP_URL};
use crate::core::host::play::Play;

fn test_model(play: &mut Play, request: Value) -> Result<Value, String> {
    let mut m = TestModel::new(request, "chrome-extension://own");
    play.drive(|host, input, now| host.test_model(&mut m, input, now))
}

fn check_server(play: &mut Play, request: Value) -> Result<Value, String> {
    let mut m = CheckServer::new(request);
    play.drive(|host, input, now| host.check_server(&mut m, input, now))
}

#[test]
fn a_model_is_asked_for_its_list_with_its_key_and_the_key_is_never_answered() {
    let mut play = Play::shop(&["m"]);
    let secret = "sk-secret-123456";
    play.registry.models[0].key_ref = Some("m".into());
    play.session.insert(key_slot("m"), json!(secret));
    let report = test_model(&mut play, json!({"name": "m"})).unwrap();
    let request = play.models.requests.last().expect("a fetch").clone();
    assert!(
        request.url.starts_with("http://127.0.0.1:8808/v1"),
        "{request:?}"
    );
    assert!(
        (request.headers.iter()).any(|(_, v)| v.contains(secret)),
        "the key is sent: {request:?}"
    );
    assert_eq!(report["ok"], json!(false), "{report}");
    assert!(!report.to_string().contains(secret), "{report}");
    // A key not stored is the check's message, not an error.
    play.session.clear();
    let report = test_model(&mut play, json!({"name": "m"})).unwrap();
    assert_eq!(report["ok"], json!(false), "{report}");
    assert_eq!(
        play.models.requests.len(),
        1,
        "nothing fetched without the key"
    );
}

#[test]
fn chrome_and_replay_models_are_answered_without_a_fetch_and_an_unknown_one_is_an_error() {
    let mut play = Play::shop(&["m"]);
    let chrome = json!({"model": {"name": "c", "provider": "chrome", "baseUrl": "", "model": "c"}});
    let report = test_model(&mut play, chrome).unwrap();
    assert_eq!(report["ok"], json!(false), "downloadable: {report}");
    assert!(report["message"].as_str().unwrap().contains("downloadable"));
    let replay = json!({"model": {"name": "r", "provider": "replay", "baseUrl": "", "model": "r"}});
    assert_eq!(test_model(&mut play, replay), Ok(replay_report()));
    assert!(play.models.requests.is_empty());
    let unknown = test_model(&mut play, json!({"name": "nope"})).unwrap_err();
    assert!(unknown.starts_with("testModel: "), "{unknown}");
    let neither = test_model(&mut play, json!({})).unwrap_err();
    assert_eq!(neither, "testModel: give `name` or `model`");
}

#[test]
fn a_server_is_connected_to_listed_closed_and_its_state_kept() {
    let mut play = Play::shop(&[]);
    play.peer = Peer::listing(&["search", "fetch"]);
    play.local.insert(
        SERVERS_KEY.into(),
        json!([{"name": "peer", "url": MCP_URL}]),
    );
    let state = check_server(&mut play, json!({"name": "peer"})).unwrap();
    assert_eq!(state["ok"], json!(true), "{state}");
    assert_eq!(state["tools"], json!(2));
    assert_eq!(state["protocol"], json!("2025-06-18"));
    assert_eq!(state["checkedMs"], json!(play.now));
    assert_eq!(
        play.peer.methods().last().map(String::as_str),
        Some("DELETE")
    );
    assert_eq!(play.session[SERVER_STATES_KEY]["peer"], state, "kept");
    // A server not configured is an error; one that fails is a state, kept too.
    let missing = check_server(&mut play, json!({"name": "other"})).unwrap_err();
    assert_eq!(missing, "checkServer: no server `other`");
    let down = json!({"server": {"name": "down", "url": "https://down.test/mcp", "keyRef": "k"}});
    let state = check_server(&mut play, down).unwrap();
    assert_eq!(state["ok"], json!(false), "{state}");
    assert!(state["error"].is_string(), "{state}");
    assert_eq!(play.session[SERVER_STATES_KEY]["down"], state);
    assert_eq!(play.session[SERVER_STATES_KEY]["peer"]["ok"], json!(true));
}

#[test]
fn a_server_that_answers_too_late_has_no_answer_in_time() {
    let mut play = Play::shop(&[]);
    play.peer = Peer::listing(&["search"]);
    play.peer.latency_ms = 400;
    let slow = json!({"server": {"name": "slow", "url": MCP_URL, "timeoutMs": 500}});
    let state = check_server(&mut play, slow).unwrap();
    assert_eq!(state["error"], json!("no answer in time"), "{state}");
}
