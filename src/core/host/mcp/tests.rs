//! The host's MCP machines played against a scripted server ([`Peer`]): a connection opened,
//! listed and called through the host's vocabulary; a 401 answered with a refresh of the
//! stored sign-in; a session the server ended (404) started again; a connection closed.

use serde_json::{json, Value};

use super::super::play::peer::{Peer, MCP_URL, TOKEN_URL};
use super::super::play::Play;
use super::*;
use crate::core::mcp::auth::{Area, AuthRecord, ClientCredentials, Records, Tokens};
use crate::core::mcp::tools::McpTool;
use crate::core::mcp::CallResult;

fn server() -> McpServerConfig {
    serde_json::from_value(json!({"name": "peer", "url": MCP_URL})).unwrap()
}

fn world(names: &[&str]) -> Play {
    let mut play = Play::shop(&[]);
    play.peer = Peer::listing(names);
    play
}

fn open(play: &mut Play, within_ms: u32) -> Result<(ClientId, Vec<McpTool>), String> {
    let mut opening = Opening::new(server(), None, within_ms, true);
    play.drive(|host, input, now| host.mcp_open(&mut opening, input, now))
}

fn call(play: &mut Play, client: ClientId, tool: &McpTool, args: Value) -> CallResult {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    let mut calling = Calling::new(client, tool.clone(), args, "p-1".into(), None);
    let result = play.drive(|host, input, now| host.mcp_call(&mut calling, input, now));
    result.expect("no limit")
}

fn text(result: CallResult) -> String {
    match result {
        CallResult::Ok { text, .. } => text,
        CallResult::Error(error) => panic!("an error: {error}"),
    }
}

#[test]
fn a_connection_is_opened_listed_called_and_closed() {
    let mut play = world(&["search", "fetch"]);
    let (client, tools) = open(&mut play, 20_000).unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["search", "fetch"]);
    assert_eq!(play.host.mcp_protocol(client), "2025-06-18");
    let result = call(&mut play, client, &tools[0], json!({"q": "mugs"}));
    assert_eq!(text(result), r#"search did {"q":"mugs"}"#);
    // Listing again on the open session.
    let mut relisting = Relisting::new(client);
    let listed = play.drive(|host, input, now| host.mcp_relist(&mut relisting, input, now));
    assert_eq!(listed.unwrap().len(), 2);
    let mut closing = Closing::new(client);
    play.drive(|host, input, now| host.mcp_close(&mut closing, input, now));
    assert_eq!(
        play.peer.methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "GET",
            "tools/list",
            "tools/call",
            "tools/list",
            "DELETE"
        ]
    );
    // Closed: nothing more is sent.
    let result = call(&mut play, client, &tools[0], json!({}));
    assert_eq!(
        result,
        CallResult::Error("tools/call: the connection was closed".into())
    );
    assert_eq!(play.peer.requests.len(), 8);
}

#[test]
fn an_opening_has_its_time_in_all_then_the_connection_is_closed() {
    let mut play = world(&["search"]);
    play.peer.latency_ms = 4_000;
    let start = play.now;
    let error = open(&mut play, 6_000).unwrap_err();
    assert_eq!(error, "no answer in time (6000 ms)");
    assert_eq!(play.now - start, 6_000.0, "simulated time");
    assert_eq!(play.peer.methods(), ["server/discover", "initialize"]);
    assert!(
        play.host.mcp.borrow().open.is_empty(),
        "forgotten once closed"
    );
}

#[test]
fn a_server_that_refuses_without_a_sign_in_is_an_error_and_closed() {
    let mut play = world(&["search"]);
    play.peer.token = Some("never".into());
    let error = open(&mut play, 20_000).unwrap_err();
    assert_eq!(
        error,
        "server/discover: the server requires authorization (401): sign in to peer first"
    );
    assert!(
        play.host.mcp.borrow().open.is_empty(),
        "forgotten once closed"
    );
}

/// A stored sign-in for the peer, its access token `old`, refreshable.
fn signed_in(play: &mut Play) {
    let record = AuthRecord {
        server_url: MCP_URL.into(),
        resource: MCP_URL.into(),
        issuer: "https://auth.test/".into(),
        token_endpoint: TOKEN_URL.into(),
        client: ClientCredentials {
            client_id: "c".into(),
            client_secret: None,
            auth_method: None,
        },
        tokens: Tokens {
            access_token: "old".into(),
            refresh_token: Some("r".into()),
            expires_at_ms: None,
            scope: None,
        },
        scope: None,
        obtained_ms: 0.0,
    };
    for write in Records::read(None, None).store("peer", &record, Area::Session) {
        let area = match write.area {
            Area::Session => &mut play.session,
            Area::Local => &mut play.local,
        };
        area.insert(write.area.key().into(), write.map);
    }
}

/// The token the server hands out on a refresh.
const NEW: &str = "fresh-access-token-2026";

#[test]
fn a_401_is_answered_with_a_refresh_of_the_sign_in_once() {
    let mut play = world(&["search"]);
    signed_in(&mut play);
    play.peer.token = Some(NEW.into());
    play.peer.fresh_token = Some(NEW.into());
    let (client, tools) = open(&mut play, 20_000).unwrap();
    assert_eq!(tools.len(), 1);
    let methods = play.peer.methods();
    assert_eq!(
        methods[..3],
        ["server/discover", "token", "server/discover"]
    );
    // The refreshed record is what the session sends, and what is stored.
    let session = play.host.mcp_session(client);
    assert_eq!(session.auth().unwrap().tokens.access_token, NEW);
    let stored = &play.session[Area::Session.key()]["peer"]["tokens"]["accessToken"];
    assert_eq!(stored, NEW);
    // Its secrets are redacted from what the server says.
    let result = call(&mut play, client, &tools[0], json!({"q": NEW}));
    assert_eq!(text(result), r#"search did {"q":"[redacted]"}"#);
}

#[test]
fn a_refresh_that_does_not_help_asks_the_person_to_sign_in_again() {
    let mut play = world(&["search"]);
    signed_in(&mut play);
    play.peer.token = Some("other".into());
    play.peer.fresh_token = Some("new".into());
    let error = open(&mut play, 20_000).unwrap_err();
    assert!(error.contains("sign in to peer"), "{error}");
}

#[test]
fn a_session_the_server_ended_is_started_again() {
    let mut play = world(&["search"]);
    let (client, tools) = open(&mut play, 20_000).unwrap();
    play.peer.session = None;
    let result = call(&mut play, client, &tools[0], json!({"q": 1}));
    assert_eq!(text(result), r#"search did {"q":1}"#);
    let methods = play.peer.methods();
    assert_eq!(
        methods[methods.len() - 4..],
        [
            "tools/call",
            "initialize",
            "notifications/initialized",
            "tools/call"
        ]
    );
}

/// The peer configured as the person's one server.
fn configured(play: &mut Play) {
    let servers = json!([{"name": "peer", "url": MCP_URL}]);
    (play.local).insert(crate::core::setup::store::SERVERS_KEY.into(), servers);
}

#[test]
fn sign_out_forgets_the_tokens_and_ends_the_kept_connections() {
    use super::super::io::Pool;
    let mut play = world(&["search"]);
    configured(&mut play);
    signed_in(&mut play);
    let mut state = signin::AuthState::default();
    let before = play.drive(|host, input, now| host.auth_state(&mut state, input, now));
    assert!(before.unwrap().to_string().contains("peer"));
    let mut listed = ListedNow::new(Pool::Exposures, server());
    let listed = play.drive(|host, input, now| host.mcp_listed_now(&mut listed, input, now));
    assert!(listed.is_ok());
    let mut out = signin::SigningOut::new(json!({"server": "peer"}));
    let answer = play
        .drive(|host, input, _| host.sign_out(&mut out, input))
        .unwrap();
    assert_eq!(answer["signedOut"], true);
    assert_eq!(play.session[Area::Session.key()], json!({}));
    assert!(play.host.kept(Pool::Exposures, "peer").is_none());
    assert_eq!(play.peer.methods().last().unwrap(), "DELETE");
    let mut again = signin::SigningOut::new(json!({"server": "peer"}));
    let answer = play
        .drive(|host, input, _| host.sign_out(&mut again, input))
        .unwrap();
    assert_eq!(answer["signedOut"], false);
    let mut bad = signin::SigningOut::new(json!({}));
    let error = play.drive(|host, input, _| host.sign_out(&mut bad, input));
    assert_eq!(error, Err("signOut needs {server}".into()));
}

#[test]
fn sign_in_to_a_server_that_wants_none_or_is_not_configured() {
    let mut play = world(&["search"]);
    configured(&mut play);
    let secrets = || crate::core::mcp::auth::FlowSecrets {
        verifier: "v".repeat(43),
        state: "s".into(),
    };
    let mut signing = signin::SigningIn::new(json!({"server": "peer"}), Ok("r".into()), secrets());
    let answer = play.drive(|host, input, now| host.sign_in(&mut signing, input, now));
    let answer = answer.unwrap();
    assert_eq!(answer["signedIn"], false, "{answer}");
    assert_eq!(play.peer.methods(), ["initialize"], "probed once");
    let mut unknown = signin::SigningIn::new(json!({"server": "x"}), Ok("r".into()), secrets());
    let error = play.drive(|host, input, now| host.sign_in(&mut unknown, input, now));
    assert_eq!(error, Err(crate::core::mcp::auth::unknown_server("x")));
}

#[test]
fn an_exposure_switched_off_closes_the_kept_connection_no_exposure_names() {
    use super::super::io::Pool;
    use crate::core::expose::ExposeRequest;
    let mut play = world(&["search"]);
    configured(&mut play);
    let request = |server: &str, enabled| ExposeRequest {
        server: server.into(),
        origin: "https://shop.test".into(),
        enabled,
        tools: None,
    };
    let mut exposing = Exposing::new(request("x", true));
    let error = play.drive(|host, input, _| host.expose(&mut exposing, input));
    assert!(error.unwrap_err().contains('x'));
    let mut exposing = Exposing::new(request("peer", true));
    let value = play.drive(|host, input, _| host.expose(&mut exposing, input));
    let value = value.unwrap();
    let stored = &play.local[crate::core::storage::EXPOSURES];
    assert_eq!(&value, stored);
    assert_eq!(stored[0]["server"], "peer");
    let mut listed = ListedNow::new(Pool::Exposures, server());
    let listed = play.drive(|host, input, now| host.mcp_listed_now(&mut listed, input, now));
    assert!(listed.is_ok());
    // Play's stored exposures are none: switching off leaves none naming the server.
    let mut exposing = Exposing::new(request("peer", false));
    let value = play.drive(|host, input, _| host.expose(&mut exposing, input));
    assert_eq!(value.unwrap(), json!([]));
    assert!(play.host.kept(Pool::Exposures, "peer").is_none());
    assert_eq!(play.peer.methods().last().unwrap(), "DELETE");
}

#[test]
fn a_listing_by_hand_is_one_use_of_the_kept_connection_and_arms_its_idle_close() {
    use super::super::io::{Mcp, Output, Pool};
    let mut play = world(&["search", "fetch"]);
    configured(&mut play);
    let idles = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let seen = idles.clone();
    play.instead = Some(Box::new(move |output| match output {
        Output::Mcp(Mcp::Idle { pool, idle }) => {
            seen.borrow_mut().push((*pool, idle.clone()));
            None
        }
        _ => None,
    }));
    let mut listing = ServerTools::new("peer");
    let answer = play.drive(|host, input, now| host.server_tools(&mut listing, input, now));
    let names: Vec<_> = (answer.unwrap()["tools"].as_array().unwrap().iter())
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["search", "fetch"]);
    assert!(play.host.kept(Pool::ByHand, "peer").is_some(), "kept");
    // The use ended: its idle close is armed, and the host says it is idle then.
    let (pool, idle) = idles.borrow_mut().pop().expect("an idle timer");
    assert_eq!(pool, Pool::ByHand);
    assert!(play.host.idle(&idle));
    // A server not configured is the answer, and its use ends too.
    let mut missing = ServerTools::new("nope");
    let error = play.drive(|host, input, now| host.server_tools(&mut missing, input, now));
    assert!(error.unwrap_err().contains("nope"));
    assert_eq!(idles.borrow().len(), 1);
}

#[test]
fn a_sign_in_asks_the_shell_for_its_redirect_and_secrets_first() {
    let mut play = world(&["search"]);
    configured(&mut play);
    let mut signing = SignIn::new(json!({"server": "peer"}));
    let answer = play.drive(|host, input, now| host.sign_in_asked(&mut signing, input, now));
    assert_eq!(answer.unwrap()["signedIn"], false, "the server wants none");
    let mut unknown = SignIn::new(json!({"server": "x"}));
    let error = play.drive(|host, input, now| host.sign_in_asked(&mut unknown, input, now));
    assert_eq!(error, Err(crate::core::mcp::auth::unknown_server("x")));
}

#[test]
fn a_pages_exposed_tools_are_its_origins_and_what_was_left_out_is_warned_of() {
    let mut play = world(&["search"]);
    configured(&mut play);
    let mut reply = ExposedReply::new("https://shop.test".into());
    let tools = play.drive(|host, input, now| host.exposed_reply(&mut reply, input, now));
    assert_eq!(tools, Ok(json!([])), "nothing exposed in this world");
    let mut exposures = Exposures;
    let stored = play.drive(|host, input, _| host.exposures(&mut exposures, input));
    assert_eq!(stored, Ok(json!([])));
}
