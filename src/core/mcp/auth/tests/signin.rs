//! The extension's kept sign-ins ([`super::super::keep`]) and its sign-in decisions
//! ([`super::super::signin`]), without a browser.

use serde_json::{json, Value};

use super::super::*;
use crate::core::mcp::source::McpServerConfig;

fn server(name: &str, url: &str) -> McpServerConfig {
    let mut config = McpServerConfig::context7(None);
    config.name = name.into();
    config.url = url.into();
    config
}

fn record(url: &str, expires_at_ms: Option<f64>, refresh: bool) -> AuthRecord {
    AuthRecord {
        server_url: url.into(),
        resource: url.into(),
        issuer: "https://as.example".into(),
        token_endpoint: "https://as.example/token".into(),
        client: ClientCredentials {
            client_id: "client".into(),
            client_secret: None,
            auth_method: None,
        },
        tokens: Tokens {
            access_token: "secret-access-token".into(),
            refresh_token: refresh.then(|| "secret-refresh-token".into()),
            expires_at_ms,
            scope: Some("read".into()),
        },
        scope: None,
        obtained_ms: 0.0,
    }
}

const URL: &str = "https://mcp.example/mcp";

#[test]
fn a_record_is_found_only_for_the_url_it_was_made_for() {
    let mut records = Records::read(Some(Value::Null), None);
    assert_eq!(records.find(&server("a", URL)), None);
    records.store("a", &record(URL, None, false), Area::Local);
    let (found, area) = records.find(&server("a", URL)).expect("kept");
    assert_eq!((found.server_url.as_str(), area), (URL, Area::Local));
    assert_eq!(
        records.find(&server("a", "https://other.example/mcp")),
        None
    );
    assert_eq!(records.find(&server("b", URL)), None);
}

#[test]
fn storing_moves_a_record_between_areas_and_says_what_to_write() {
    let mut records = Records::default();
    let writes = records.store("a", &record(URL, None, false), Area::Session);
    assert_eq!(writes.len(), 1, "only the session's map");
    assert_eq!(writes[0].area, Area::Session);
    assert_eq!(writes[0].map["a"]["serverUrl"], json!(URL));
    let writes = records.store("a", &record(URL, None, false), Area::Local);
    let areas: Vec<Area> = writes.iter().map(|w| w.area).collect();
    assert_eq!(
        areas,
        [Area::Session, Area::Local],
        "taken out of the session first"
    );
    assert_eq!(writes[0].map, json!({}));
    // Read back as the shell reads storage.
    let again = Records::read(Some(json!({})), Some(writes[1].map.clone()));
    assert_eq!(
        again.find(&server("a", URL)).map(|f| f.1),
        Some(Area::Local)
    );
}

#[test]
fn forgetting_writes_each_area_that_held_the_server() {
    let mut records = Records::read(
        Some(json!({"a": serde_json::to_value(record(URL, None, false)).unwrap(), "b": 1})),
        Some(json!({"a": serde_json::to_value(record(URL, None, false)).unwrap()})),
    );
    let writes = records.forget("a");
    assert_eq!(writes.len(), 2);
    assert_eq!(writes[0].map, json!({"b": 1}));
    assert_eq!(writes[1].map, json!({}));
    assert!(records.forget("a").is_empty(), "nothing left to forget");
}

#[test]
fn storage_keys_and_the_area_of_a_new_sign_in() {
    assert_eq!(Area::Session.key(), "webmcpHostAuth");
    assert_eq!(Area::Local.key(), "webmcpHostAuthKept");
    assert_eq!(Area::for_sign_in(Some(true), None), Area::Local);
    assert_eq!(
        Area::for_sign_in(Some(false), Some(Area::Local)),
        Area::Session
    );
    assert_eq!(Area::for_sign_in(None, None), Area::Session);
    assert_eq!(Area::for_sign_in(None, Some(Area::Local)), Area::Local);
}

#[test]
fn the_state_shows_each_server_without_a_token() {
    let mut records = Records::default();
    records.store("a", &record(URL, Some(1_000.0), true), Area::Local);
    let state = records.state(&[server("a", URL), server("b", URL)], 0.0);
    assert_eq!(state[0]["server"], "a");
    assert_eq!(state[0]["signedIn"], true);
    assert_eq!(state[0]["kept"], "local");
    assert_eq!(state[0]["state"], "refresh");
    assert_eq!(state[0]["refreshable"], true);
    assert_eq!(
        state[1],
        json!({"signedIn": false, "server": "b", "url": URL})
    );
    assert!(!state.to_string().contains("secret"), "{state}");
}

#[test]
fn a_sign_in_request_is_read_with_its_client() {
    let request = SignInRequest::parse(&json!({"server": "a", "remember": true, "inTab": true,
        "clientId": "id", "clientSecret": ""}))
    .unwrap();
    assert_eq!(request.server, "a");
    assert_eq!((request.remember, request.via), (Some(true), Via::Tab));
    let client = request.preregistered.clone().unwrap();
    assert_eq!(
        (client.client_id.as_str(), client.client_secret),
        ("id", None)
    );
    let plain = SignInRequest::parse(&json!({"server": "a", "clientId": ""})).unwrap();
    assert_eq!(
        (plain.remember, plain.via, plain.preregistered),
        (None, Via::Window, None)
    );
    let error = SignInRequest::parse(&json!({})).unwrap_err();
    assert!(error.contains("signIn needs {server}"), "{error}");
    assert_eq!(sign_out_server(&json!({"server": "a"})), Ok("a"));
    assert!(sign_out_server(&json!({})).is_err());
    let flow = request.flow(
        &server("a", URL),
        "https://x.chromiumapp.org/mcp",
        "Bearer scope=\"s\"",
        None,
    );
    assert_eq!(
        (flow.server_url.as_str(), flow.challenge.scope.as_deref()),
        (URL, Some("s"))
    );
}

#[test]
fn the_probe_says_whether_to_sign_in() {
    let request = probe(&server("a", URL));
    assert_eq!(
        (request.method.as_str(), request.url.as_str()),
        ("POST", URL)
    );
    assert!(request.body.contains("\"initialize\""));
    assert!(!request.headers.iter().any(|(n, _)| n == "authorization"));
    let answered = |status, header: Option<&str>| Probe::Answered {
        status,
        www_authenticate: header.map(str::to_owned),
    };
    assert_eq!(
        answered(401, Some("Bearer")).challenge(),
        Ok(Some("Bearer".into()))
    );
    assert_eq!(answered(403, None).challenge(), Ok(Some(String::new())));
    assert_eq!(answered(200, None).challenge(), Ok(None));
    assert_eq!(
        answered(500, None).challenge(),
        Err("the server answered 500 without a challenge".into())
    );
    assert_eq!(
        Probe::Timeout.challenge(),
        Err("the server did not answer in time".into())
    );
    assert_eq!(
        Probe::Unreachable("refused".into()).challenge(),
        Err("the server could not be reached: refused".into())
    );
}

#[test]
fn the_tab_is_taken_only_for_our_redirect() {
    let redirect = "https://id.chromiumapp.org/mcp";
    let mut watch = TabWatch::new(redirect);
    let back = format!("{redirect}?code=c&state=s");
    let updated = |tab, url: &str| TabEvent::Updated {
        tab,
        url: Some(url.into()),
    };
    assert_eq!(watch.event(updated(7.0, &back)), None, "no tab opened yet");
    assert_eq!(
        watch.event(TabEvent::read("opened", &[json!(7), Value::Null]).unwrap()),
        None
    );
    assert_eq!(watch.event(updated(8.0, &back)), None, "another tab");
    assert_eq!(watch.event(updated(7.0, "https://as.example/login")), None);
    assert_eq!(
        watch.event(updated(7.0, &back)),
        Some(TabEnd::Redirected(back.clone()))
    );
    let failed = TabEvent::read(
        "onErrorOccurred",
        &[json!({"tabId": 7, "url": back}), Value::Null],
    );
    assert_eq!(
        watch.event(failed.unwrap()),
        Some(TabEnd::Redirected(back.clone()))
    );
    let removed = TabEvent::read("onRemoved", &[json!(7), json!({})]).unwrap();
    assert_eq!(watch.event(removed), Some(TabEnd::Closed));
    let no_url = TabEvent::read("onUpdated", &[json!(7), json!({"status": "loading"})]).unwrap();
    assert_eq!(watch.event(no_url), None);
    assert_eq!(TabEvent::read("onCreated", &[json!(7), Value::Null]), None);
}

#[test]
fn a_window_that_fails_at_once_gives_way_to_a_tab() {
    assert_eq!(Via::after_window_failed(10.0), Some(Via::Tab));
    assert_eq!(Via::after_window_failed(60_000.0), None);
    assert_eq!(
        (Via::Window.name(), Via::Tab.name()),
        ("launchWebAuthFlow", "tab")
    );
    assert_eq!(
        Abandoned::Timeout.to_string(),
        "no sign-in within 5 minutes"
    );
    assert_eq!(
        Abandoned::TabClosed.to_string(),
        "the sign-in tab was closed"
    );
}

#[test]
fn sign_in_answers_hold_no_token() {
    let yes = SignedIn::Yes(Box::new(record(URL, None, true)), Area::Session, Via::Tab);
    let answer = yes.answer("a", 0.0);
    assert_eq!(answer["ok"], true);
    assert_eq!(answer["signedIn"], true);
    assert_eq!(
        (answer["kept"].clone(), answer["via"].clone()),
        (json!("session"), json!("tab"))
    );
    assert!(!answer.to_string().contains("secret"), "{answer}");
    assert_eq!(
        SignedIn::NotNeeded.answer("a", 0.0),
        json!({"ok": true, "signedIn": false, "server": "a", "message": "a does not ask for a sign-in"})
    );
    assert_eq!(
        SignedIn::Failed("no".into()).answer("a", 0.0),
        json!({"ok": false, "server": "a", "error": "no"})
    );
    assert_eq!(
        signed_out("a", true),
        json!({"ok": true, "server": "a", "signedOut": true})
    );
    assert_eq!(unknown_server("x"), "no MCP server named `x`");
}
