//! The person's settings as values: key masks (never a whole key), the model presets and the
//! Context7 server the popup offers, and a model's connection check (its request, and the
//! report of its answer with the advice the person needs, such as Ollama's `OLLAMA_ORIGINS`).
//!
//! Invariant: nothing here holds or returns a whole key;
//! [`mask_key`](crate::core::egress::mask_key) shows at most its first three and last four
//! characters, and only for keys long enough that this hides most of it.

use serde::Serialize;
use serde_json::{json, Value};

use crate::core::http::HttpRequest;
use crate::core::provider::{ModelConfig, Provider};
use crate::core::url::origin_of;

/// A preset of the model form: a provider with its base URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreset {
    /// The preset's id (also the key reference it suggests).
    pub id: &'static str,
    /// What the person reads.
    pub label: &'static str,
    /// The provider it speaks.
    pub provider: Provider,
    /// Its endpoint.
    pub base_url: &'static str,
    /// A model id to start from.
    pub model: &'static str,
    /// Whether it calls tools natively.
    pub native_tools: bool,
    /// Whether the endpoint wants a key.
    pub needs_key: bool,
}

/// The model presets the popup offers.
pub fn model_presets() -> Vec<ModelPreset> {
    let preset = |id, label, provider, base_url, model, native_tools, needs_key| ModelPreset {
        id,
        label,
        provider,
        base_url,
        model,
        native_tools,
        needs_key,
    };
    vec![
        preset(
            "openai",
            "OpenAI",
            Provider::Openai,
            "https://api.openai.com/v1",
            "gpt-4.1-mini",
            true,
            true,
        ),
        preset(
            "anthropic",
            "Anthropic",
            Provider::Anthropic,
            "https://api.anthropic.com",
            "claude-sonnet-4-5",
            true,
            true,
        ),
        preset(
            "gemini",
            "Gemini",
            Provider::Gemini,
            "https://generativelanguage.googleapis.com/v1beta",
            "gemini-2.5-flash",
            true,
            true,
        ),
        preset(
            "openrouter",
            "OpenRouter",
            Provider::Openai,
            "https://openrouter.ai/api/v1",
            "openai/gpt-4.1-mini",
            true,
            true,
        ),
        preset(
            "ollama",
            "Ollama",
            Provider::Openai,
            "http://localhost:11434/v1",
            "qwen3:8b",
            true,
            false,
        ),
        preset(
            "lmstudio",
            "LM Studio",
            Provider::Openai,
            "http://localhost:1234/v1",
            "local-model",
            true,
            false,
        ),
        preset(
            "chrome",
            "Chrome built-in",
            Provider::Chrome,
            "",
            "",
            false,
            false,
        ),
    ]
}

/// The header that carries Context7's key, as Context7 documents it (it also takes
/// `Authorization: Bearer <key>`).
pub const CONTEXT7_KEY_HEADER: &str = "CONTEXT7_API_KEY";

/// The Context7 server as the "Use Context7" switch adds it, with its key (optional) under
/// the reference `context7`.
pub fn context7_server(with_key: bool) -> Value {
    let mut server = json!({
        "name": "Context7",
        "url": "https://mcp.context7.com/mcp",
        "namespace": "context7",
        "enabled": true,
        "trusted": false,
    });
    if with_key {
        server["keyRef"] = json!("context7");
        server["keyHeader"] = json!(CONTEXT7_KEY_HEADER);
    }
    server
}

/// The request that checks a model's endpoint and key: its list of models (GET, no body).
/// `None` for providers without an endpoint (Chrome's built-in model, replay).
pub fn connection_check(model: &ModelConfig, key: Option<&str>) -> Option<HttpRequest> {
    let base = model.base_url.trim_end_matches('/');
    let key = key.filter(|k| !k.is_empty());
    let mut headers = Vec::new();
    let url = match model.provider {
        Provider::Openai => {
            if let Some(key) = key {
                headers.push(("authorization".to_owned(), format!("Bearer {key}")));
            }
            format!("{base}/models")
        }
        Provider::Anthropic => {
            headers.push(("anthropic-version".to_owned(), "2023-06-01".to_owned()));
            headers.push((
                "anthropic-dangerous-direct-browser-access".to_owned(),
                "true".to_owned(),
            ));
            if let Some(key) = key {
                headers.push(("x-api-key".to_owned(), key.to_owned()));
            }
            if base.ends_with("/v1") {
                format!("{base}/models")
            } else {
                format!("{base}/v1/models")
            }
        }
        Provider::Gemini => {
            if let Some(key) = key {
                headers.push(("x-goog-api-key".to_owned(), key.to_owned()));
            }
            format!("{base}/models")
        }
        Provider::Chrome | Provider::Replay => return None,
    };
    Some(HttpRequest {
        method: "GET".into(),
        url,
        headers,
        body: String::new(),
    })
}

/// What a connection check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CheckReport {
    /// Whether the model answered as expected.
    pub ok: bool,
    /// What to tell the person (what to do, when it failed).
    pub message: String,
    /// The model ids the endpoint lists (at most 50), when it answered with a list.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub models: Vec<String>,
}

/// Whether a base URL looks like a local Ollama (its usual port).
fn looks_like_ollama(base_url: &str) -> bool {
    let origin = origin_of(base_url);
    origin.ends_with(":11434")
}

/// Reads the answer of a [`connection_check`]. `status` 0 means the request failed before an
/// answer (`failure` says why: network, CORS). `extension_origin` is
/// `chrome-extension://<id>`, named in the advice for servers that refuse it.
pub fn connection_report(
    model: &ModelConfig,
    status: u16,
    body: &str,
    failure: Option<&str>,
    extension_origin: &str,
) -> CheckReport {
    let host = origin_of(&model.base_url);
    let local = host.contains("://localhost") || host.contains("://127.0.0.1");
    let report = |ok, message: String| CheckReport {
        ok,
        message,
        models: Vec::new(),
    };
    if status == 0 {
        let why = failure.unwrap_or("no answer");
        let mut message = format!("{host} could not be reached: {why}.");
        if local {
            message.push_str(&format!(
                " Is the server running? A local server must also allow this extension's origin ({extension_origin}) through CORS (Ollama: OLLAMA_ORIGINS; LM Studio: its CORS switch)."
            ));
        }
        return report(false, message);
    }
    let detail: String = body.trim().chars().take(200).collect();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {detail}")
    };
    match status {
        200..=299 => {
            let models = listed_models(body);
            let message = if models.is_empty() {
                format!("{host} answered: connected.")
            } else {
                format!(
                    "{host} answered: connected, {} models listed{}.",
                    models.len(),
                    if models.iter().any(|m| m == &model.model || m.ends_with(&format!("/{}", model.model))) {
                        format!(", `{}` among them", model.model)
                    } else {
                        String::new()
                    }
                )
            };
            CheckReport {
                ok: true,
                message,
                models,
            }
        }
        403 if looks_like_ollama(&model.base_url) || (local && body.trim().is_empty()) => report(
            false,
            format!(
                "{host} refused this extension (403). Ollama only answers origins it allows: start it with OLLAMA_ORIGINS={extension_origin} (or OLLAMA_ORIGINS=chrome-extension://*), then test again."
            ),
        ),
        401 | 403 => report(
            false,
            format!(
                "{host} refused the key ({status}){detail}. Check the key{}.",
                model
                    .key_ref
                    .as_deref()
                    .map(|k| format!(" `{k}`"))
                    .unwrap_or_default()
            ),
        ),
        404 => report(
            false,
            format!("{host} answered 404 for the model list: is the base URL right ({})?", model.base_url),
        ),
        _ => report(false, format!("{host} answered {status}{detail}.")),
    }
}

/// Model ids from an OpenAI (`data[].id`), Anthropic (`data[].id`) or Gemini
/// (`models[].name`) list.
fn listed_models(body: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let items = value
        .get("data")
        .or_else(|| value.get("models"))
        .and_then(Value::as_array);
    items
        .into_iter()
        .flatten()
        .filter_map(|m| {
            m.get("id")
                .or_else(|| m.get("name"))
                .and_then(Value::as_str)
                .map(|s| s.trim_start_matches("models/").to_owned())
        })
        .take(50)
        .collect()
}

#[cfg(test)]
mod tests;
