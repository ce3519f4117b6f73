//! Key masks, presets and connection checks.

use super::*;

fn model(provider: Provider, base_url: &str) -> ModelConfig {
    serde_json::from_value(json!({
        "name": "m", "provider": provider, "baseUrl": base_url, "model": "gpt-test",
        "nativeTools": true, "keyRef": "main"
    }))
    .unwrap()
}

#[test]
fn presets_cover_the_providers_and_validate() {
    let ids: Vec<_> = model_presets().iter().map(|p| p.id).collect();
    assert_eq!(
        ids,
        [
            "openai",
            "anthropic",
            "gemini",
            "openrouter",
            "ollama",
            "lmstudio",
            "chrome"
        ]
    );
    for preset in model_presets() {
        let registry: crate::core::provider::ModelRegistry = serde_json::from_value(json!({
            "models": [{"name": preset.id, "provider": preset.provider, "baseUrl": preset.base_url,
                        "model": preset.model, "nativeTools": preset.native_tools}]
        }))
        .unwrap();
        registry
            .validate()
            .unwrap_or_else(|e| panic!("{}: {e}", preset.id));
    }
}

#[test]
fn context7_preset_sends_its_key_in_its_header() {
    let server: crate::core::mcp::source::McpServerConfig =
        serde_json::from_value(context7_server(true)).unwrap();
    server.validate().unwrap();
    assert_eq!(server.key_header, CONTEXT7_KEY_HEADER);
    assert_eq!(server.key_ref.as_deref(), Some("context7"));
    assert!(context7_server(false).get("keyRef").is_none());
}

#[test]
fn checks_list_models_with_the_key_in_a_header() {
    let openai = connection_check(
        &model(Provider::Openai, "http://127.0.0.1:9/v1/"),
        Some("sk-x"),
    )
    .unwrap();
    assert_eq!(openai.url, "http://127.0.0.1:9/v1/models");
    assert_eq!(openai.method, "GET");
    assert!(openai
        .headers
        .contains(&("authorization".into(), "Bearer sk-x".into())));
    let anthropic = connection_check(
        &model(Provider::Anthropic, "https://api.anthropic.com"),
        Some("k"),
    )
    .unwrap();
    assert_eq!(anthropic.url, "https://api.anthropic.com/v1/models");
    assert!(anthropic
        .headers
        .contains(&("x-api-key".into(), "k".into())));
    let gemini = connection_check(
        &model(Provider::Gemini, "https://g.example/v1beta"),
        Some("AIza"),
    )
    .unwrap();
    assert_eq!(gemini.url, "https://g.example/v1beta/models");
    assert!(!gemini.url.contains("AIza"));
    assert!(connection_check(&model(Provider::Chrome, ""), None).is_none());
    let keyless =
        connection_check(&model(Provider::Openai, "http://localhost:11434/v1"), None).unwrap();
    assert!(keyless.headers.is_empty());
}

#[test]
fn reports_say_what_to_do() {
    let origin = "chrome-extension://abc";
    let ok = connection_report(
        &model(Provider::Openai, "http://127.0.0.1:9/v1"),
        200,
        r#"{"data":[{"id":"gpt-test"},{"id":"other"}]}"#,
        None,
        origin,
    );
    assert!(ok.ok);
    assert_eq!(ok.models, ["gpt-test", "other"]);
    assert!(
        ok.message
            .contains("2 models listed, `gpt-test` among them"),
        "{}",
        ok.message
    );

    let ollama = connection_report(
        &model(Provider::Openai, "http://localhost:11434/v1"),
        403,
        "",
        None,
        origin,
    );
    assert!(!ollama.ok);
    assert!(
        ollama
            .message
            .contains("OLLAMA_ORIGINS=chrome-extension://abc"),
        "{}",
        ollama.message
    );

    let refused = connection_report(
        &model(Provider::Openai, "https://api.openai.com/v1"),
        401,
        "{\"error\":\"bad key\"}",
        None,
        origin,
    );
    assert!(
        refused.message.contains("refused the key (401)") && refused.message.contains("`main`"),
        "{}",
        refused.message
    );

    let down = connection_report(
        &model(Provider::Openai, "http://127.0.0.1:1/v1"),
        0,
        "",
        Some("Failed to fetch"),
        origin,
    );
    assert!(
        down.message
            .contains("could not be reached: Failed to fetch")
            && down.message.contains("OLLAMA_ORIGINS")
    );

    let gemini = connection_report(
        &model(Provider::Gemini, "https://g.example/v1beta"),
        200,
        r#"{"models":[{"name":"models/gemini-2.5-flash"}]}"#,
        None,
        origin,
    );
    assert_eq!(gemini.models, ["gemini-2.5-flash"]);
}
