//! The settings view's answers: masked keys, subjects, reports redacted, server states.

use super::*;
use serde_json::json;

#[test]
fn the_settings_view_masks_keys_and_sorts_them() {
    let registry: ModelRegistry =
        serde_json::from_value(json!({"models": [], "default": null})).unwrap();
    let session = json!({
        "webmcpHost.key.zeta": "sk-abcdefghijklmnop1234",
        "webmcpHost.key.alpha": "short",
        "webmcpHost.key.bad": 7,
        "other": "sk-not-a-key-000000000",
        SERVER_STATES_KEY: {"S": {"ok": true}},
    });
    let gpt = serde_json::from_value(json!({"name": "gpt", "provider": "openai",
        "baseUrl": "https://api.openai.com/v1", "model": "m", "keyRef": "zeta"}))
    .unwrap();
    let routes = crate::core::setup::routes(&[gpt], &[], &[]);
    let view = settings_view(&registry, &[], &session, &routes, "chrome-extension://x");
    assert_eq!(
        view["keys"],
        json!([{"ref": "alpha", "masked": mask_key("short"), "goesTo": []},
               {"ref": "zeta", "masked": "sk-…1234", "goesTo": ["model `gpt` → https://api.openai.com"]}])
    );
    assert!(!view.to_string().contains("abcdefghijklmnop"));
    assert_eq!(view["serverStates"], json!({"S": {"ok": true}}));
    assert_eq!(view["extensionOrigin"], "chrome-extension://x");
    assert_eq!(view["context7WithKey"]["keyRef"], "context7");
    assert!(view["presets"].as_array().is_some_and(|p| !p.is_empty()));
    let empty = settings_view(&registry, &[], &Value::Null, &routes, "o");
    assert_eq!(empty["keys"], json!([]));
    assert_eq!(empty["serverStates"], json!({}));
}

#[test]
fn a_subject_is_given_or_named() {
    let given: Subject<Value> = subject(
        &json!({"model": {"a": 1}, "name": "n"}),
        "testModel",
        "model",
    )
    .unwrap();
    assert_eq!(given, Subject::Given(json!({"a": 1})));
    let named: Subject<Value> = subject(&json!({"name": "n"}), "testModel", "model").unwrap();
    assert_eq!(named, Subject::Named("n".into()));
    let none = subject::<Value>(&json!({"name": 3}), "checkServer", "server");
    assert_eq!(none, Err("checkServer: give `name` or `server`".into()));
    let bad = subject::<McpServerConfig>(&json!({"server": 3}), "checkServer", "server");
    assert!(bad.unwrap_err().starts_with("checkServer: `server`: "));
}

fn model(key_ref: Option<&str>) -> ModelConfig {
    serde_json::from_value(json!({
        "name": "m", "provider": "openai", "baseUrl": "https://api.example.test/v1",
        "model": "gpt", "keyRef": key_ref,
    }))
    .unwrap()
}

#[test]
fn model_reports_are_redacted_of_the_key() {
    let key = "sk-secret-secret-secret-1";
    let m = model(Some("k"));
    let body = format!("bad key {key}");
    let report = model_report(&m, &Fetched::Answer(401, body), Some(key), "o");
    assert_eq!(report["ok"], false);
    assert!(!report["message"].as_str().unwrap().contains(key));
    let ok = model_report(
        &m,
        &Fetched::Answer(200, r#"{"data":[{"id":"gpt"}]}"#.into()),
        None,
        "o",
    );
    assert_eq!(ok["ok"], true);
    assert_eq!(ok["models"], json!(["gpt"]));
    let late = model_report(&m, &Fetched::Timeout, None, "o");
    assert!(late["message"]
        .as_str()
        .unwrap()
        .contains("no answer within 15 s"));
    let failed = model_report(
        &m,
        &Fetched::Failed(format!("refused {key}")),
        Some(key),
        "o",
    );
    assert!(!failed["message"].as_str().unwrap().contains(key));
    assert_eq!(replay_report()["ok"], true);
    assert_eq!(chrome_model_report("available")["ok"], true);
    let later = chrome_model_report("downloadable");
    assert_eq!(later["ok"], false);
    assert!(later["message"]
        .as_str()
        .unwrap()
        .contains("`downloadable`"));
}

#[test]
fn server_states_say_what_the_check_found() {
    let server: McpServerConfig =
        serde_json::from_value(json!({"name": "S", "url": "https://mcp.example.test/mcp"}))
            .unwrap();
    let (tools, _) = crate::core::mcp::tools::parse_tools(&[json!({
        "name": "search", "description": "x".repeat(400), "inputSchema": {"type": "object"}
    })]);
    let listed = listed_server(&server, &tools, "2026-07-28");
    assert_eq!(listed["ok"], true);
    assert_eq!(listed["protocol"], "2026-07-28");
    assert_eq!(listed["tools"], 1);
    assert_eq!(
        listed["names"][0]["description"].as_str().unwrap().len(),
        300
    );
    assert!(listed["names"][0]["confirm"].is_boolean());
    let state = server_state(Ok(Some(listed)), 5.0);
    assert_eq!(state["checkedMs"], 5.0);
    assert_eq!(
        server_state(Ok(None), 1.0),
        json!({"ok": false, "tools": 0, "names": [], "error": "no answer in time", "checkedMs": 1.0})
    );
    assert_eq!(server_state(Err("down".into()), 1.0)["error"], "down");
    let states = with_state(Some(json!({"T": {"ok": true}})), "S", &state);
    assert_eq!(states["T"]["ok"], true);
    assert_eq!(states["S"], state);
    assert_eq!(
        with_state(Some(json!([1])), "S", &state),
        json!({"S": state})
    );
}
