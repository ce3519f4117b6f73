//! The kept connections played against the scripted server: reused while nothing changed,
//! replaced when the sign-in changed, closed after a failed call and once idle (in simulated
//! time).

use serde_json::{json, Map};

use super::*;
use crate::core::host::play::peer::{Peer, MCP_URL};
use crate::core::host::play::Play;
use crate::core::host::uses::BY_HAND_IDLE_MS;

fn server() -> McpServerConfig {
    serde_json::from_value(json!({"name": "peer", "url": MCP_URL})).unwrap()
}

fn world() -> Play {
    let mut play = Play::shop(&[]);
    play.peer = Peer::listing(&["search"]);
    play
}

fn listed(play: &mut Play, pool: Pool) -> ListedAnswer {
    let mut listed = ListedNow::new(pool, server());
    play.drive(|host, input, now| host.mcp_listed_now(&mut listed, input, now))
}

fn count(play: &Play, method: &str) -> usize {
    play.peer.methods().iter().filter(|m| *m == method).count()
}

#[test]
fn a_kept_connection_is_reused_then_closed_once_idle() {
    let mut play = world();
    play.host.use_begins("peer");
    let (first, tools) = listed(&mut play, Pool::ByHand).unwrap();
    assert_eq!(tools.len(), 1);
    let (again, _) = listed(&mut play, Pool::ByHand).unwrap();
    assert_eq!(first.client, again.client, "the same session");
    assert_eq!(count(&play, "initialize"), 1);
    assert_eq!(
        count(&play, "tools/list"),
        2,
        "listed again on the kept session"
    );
    // Each pool keeps its own.
    let (exposed, _) = listed(&mut play, Pool::Exposures).unwrap();
    assert_ne!(exposed.client, first.client);
    // The use ends: closed after the idle time, unless a use began meanwhile.
    let idle = play.host.use_ends("peer");
    let start = play.now;
    let mut idling = Idling::new(Pool::ByHand, idle.clone());
    play.host.use_begins("peer");
    play.drive(|host, input, now| host.mcp_idling(&mut idling, input, now));
    assert!(
        play.host.kept(Pool::ByHand, "peer").is_some(),
        "used meanwhile"
    );
    let idle = play.host.use_ends("peer");
    let mut idling = Idling::new(Pool::ByHand, idle);
    play.drive(|host, input, now| host.mcp_idling(&mut idling, input, now));
    assert_eq!(play.now - start, 2.0 * f64::from(BY_HAND_IDLE_MS));
    assert!(play.host.kept(Pool::ByHand, "peer").is_none());
    assert_eq!(count(&play, "DELETE"), 1);
    assert!(play.host.kept(Pool::Exposures, "peer").is_some());
}

#[test]
fn a_connection_is_replaced_when_its_sign_in_changed() {
    let mut play = world();
    let (first, _) = listed(&mut play, Pool::Exposures).unwrap();
    // A sign-in is stored meanwhile: the kept session sends no token, so it is replaced.
    let record = json!({"peer": {
        "serverUrl": MCP_URL, "resource": MCP_URL, "issuer": "https://auth.test/",
        "tokenEndpoint": "https://auth.test/token", "client": {"clientId": "c"},
        "tokens": {"accessToken": "signed-in-token-1234"}, "obtainedMs": 0.0
    }});
    play.session
        .insert(crate::core::mcp::auth::Area::Session.key().into(), record);
    let (second, _) = listed(&mut play, Pool::Exposures).unwrap();
    assert_ne!(first.client, second.client);
    assert_eq!(count(&play, "DELETE"), 1, "the old session ended");
    assert_eq!(count(&play, "initialize"), 2);
    let session = play.host.mcp_session(second.client);
    assert_eq!(
        session.auth().unwrap().tokens.access_token,
        "signed-in-token-1234"
    );
}

#[test]
fn a_call_on_the_kept_connection_and_none_without_one() {
    let mut play = world();
    let (kept, tools) = listed(&mut play, Pool::Exposures).unwrap();
    let call = |tool: &McpTool| (tool.clone(), Map::new());
    let mut sent = KeptCall::new(
        Pool::Exposures,
        "peer".into(),
        call(&tools[0]),
        "p".into(),
        None,
        true,
    );
    let (result, secrets) =
        play.drive(|host, input, now| host.mcp_kept_call(&mut sent, input, now));
    assert_eq!(
        result,
        Some(CallResult::Ok {
            text: "search did {}".into(),
            structured: None,
            parts: Vec::new()
        })
    );
    assert!(secrets.is_empty());
    assert_eq!(
        play.host.kept(Pool::Exposures, "peer").unwrap().client,
        kept.client
    );
    let mut none = KeptCall::new(
        Pool::ByHand,
        "peer".into(),
        call(&tools[0]),
        "p".into(),
        None,
        false,
    );
    let answer = play.drive(|host, input, now| host.mcp_kept_call(&mut none, input, now));
    assert_eq!(answer, (None, Vec::new()));
}
