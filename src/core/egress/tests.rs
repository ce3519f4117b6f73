//! The egress's unit tests: values redacted in every string, keys routed only to their own
//! settings' origins.

use serde_json::json;

use super::*;
use crate::core::mcp::source::McpServerConfig;
use crate::core::observe::collector::Collector;
use crate::core::provider::ModelConfig;
use crate::core::setup::routes;

fn model(name: &str, base_url: &str, key: &str) -> ModelConfig {
    serde_json::from_value(json!({
        "name": name, "provider": "openai", "baseUrl": base_url, "model": "m", "keyRef": key
    }))
    .unwrap()
}

fn collector(name: &str, endpoint: &str, key: &str) -> Collector {
    serde_json::from_value(json!({
        "name": name, "endpoint": endpoint, "headers": {"authorization": key}
    }))
    .unwrap()
}

fn server(name: &str, url: &str, key: &str) -> McpServerConfig {
    serde_json::from_value(json!({"name": name, "url": url, "keyRef": key})).unwrap()
}

#[test]
fn a_value_is_redacted_in_every_string_and_property_name_and_keeps_its_shape() {
    let key = "sk-egress-0123456789abcdef";
    let value = json!({key: [key, {"deep": format!("tail {}", &key[9..])}, 3, true, null]});
    let redacted = redact_value(&value, &[key]);
    let text = redacted.to_string();
    assert!(
        !text.contains(&key[..12]) && !text.contains(&key[9..]),
        "{text}"
    );
    assert_eq!(redacted[REDACTED][2], json!(3));
    assert_eq!(redacted[REDACTED][0], json!(REDACTED));
    // A quote or a backslash in a secret cannot break the value (it is never re-parsed).
    let odd = "ab\"cd\\ef\"gh";
    let redacted = redact_value(&json!({"a": format!("x{odd}y")}), &[odd]);
    assert_eq!(redacted, json!({"a": format!("x{REDACTED}y")}));
    // No secret long enough: the value as it is.
    assert_eq!(redact_value(&value, &["abc"]), value);
}

#[test]
fn header_secrets_include_the_credential_after_its_scheme() {
    assert_eq!(header_secrets("Bearer abcd"), vec!["Bearer abcd", "abcd"]);
    assert_eq!(header_secrets("abcd efgh"), vec!["abcd efgh"]);
}

#[test]
fn a_collector_may_not_name_a_key_a_model_or_server_names() {
    let models = [model("gpt", "https://api.openai.com/v1", "openai")];
    let stolen = [collector(
        "evil",
        "https://collector.example/v1/traces",
        "openai",
    )];
    let error = check_routes(&routes(&models, &[], &stolen)).unwrap_err();
    assert!(
        error.contains("collector `evil`") && error.contains("model `gpt`"),
        "{error}"
    );
    assert!(error.contains("https://api.openai.com"), "{error}");
    let servers = [server("docs", "https://docs.example/mcp", "docs")];
    let stolen = [collector(
        "evil",
        "https://collector.example/v1/traces",
        "docs",
    )];
    assert!(check_routes(&routes(&[], &servers, &stolen)).is_err());
    // Its own key is fine; two models sharing one key are the person's choice.
    let own = [collector(
        "phoenix",
        "http://127.0.0.1:6006/v1/traces",
        "phoenix",
    )];
    let both = [
        models[0].clone(),
        model("gpt2", "https://api.openai.com/v1", "openai"),
    ];
    assert_eq!(check_routes(&routes(&both, &servers, &own)), Ok(()));
}

#[test]
fn a_key_is_allowed_only_to_its_holders_origin() {
    let models = [model("gpt", "https://api.openai.com/v1", "openai")];
    let own = [collector(
        "phoenix",
        "http://127.0.0.1:6006/v1/traces",
        "phoenix",
    )];
    let routes = routes(&models, &[], &own);
    let gpt = Holder::Model("gpt".into());
    let phoenix = Holder::Collector("phoenix".into());
    assert_eq!(
        routes.allows(&gpt, "openai", "https://api.openai.com/v1/chat"),
        Ok(())
    );
    assert!(routes
        .allows(&gpt, "openai", "https://evil.example/v1")
        .is_err());
    assert!(routes
        .allows(&phoenix, "openai", "http://127.0.0.1:6006/v1/traces")
        .is_err());
    assert_eq!(
        routes.allows(&phoenix, "phoenix", "http://127.0.0.1:6006/v1/traces"),
        Ok(())
    );
    assert_eq!(
        routes.goes_to("openai"),
        vec!["model `gpt` → https://api.openai.com".to_owned()]
    );
    assert!(routes.goes_to("nobody").is_empty());
    let stolen = [collector(
        "evil",
        "https://evil.example/v1/traces",
        "openai",
    )];
    assert_eq!(
        crate::core::setup::routes(&models, &[], &stolen).goes_to("openai"),
        vec![
            "model `gpt` → https://api.openai.com".to_owned(),
            "collector `evil` → https://evil.example (not sent: a collector gets a key of its own)"
                .to_owned()
        ]
    );
}

#[test]
fn masks_show_little_of_a_key() {
    assert_eq!(mask_key("sk-canary-7f3a9c1e5b2d4680"), "sk-…4680");
    assert_eq!(mask_key("short"), "•••••");
    assert_eq!(mask_key("ab"), "••••");
    assert!(!mask_key("sk-0123456789abcdef").contains("0123456789"));
    // Multi-byte keys are cut at characters, not bytes.
    assert_eq!(mask_key("ключключключключ"), "клю…ключ");
}
