//! What the person's side (popup and side panel) needs from the host, as values: key masks,
//! the model and server presets, the connection check of a model (its request and the report
//! of its answer), the pending items a person answers, and the capped list of run records the
//! worker keeps so that a closed popup or a restarted worker can still show a run's log.
//!
//! Invariant: nothing here holds or returns a whole key; [`mask_key`] shows at most its first
//! three and last four characters, and only for keys long enough that this hides most of it.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::provider::{origin_of, HttpRequest, ModelConfig, Provider};

/// How many runs the worker keeps (oldest dropped first).
pub const MAX_STORED_RUNS: usize = 20;
/// How many events of one run the worker keeps; later events are counted, not kept.
pub const MAX_STORED_EVENTS: usize = 5_000;

/// A key as the person sees it: `sk-…4680`, or dots alone for a short key.
pub fn mask_key(key: &str) -> String {
    let chars: Vec<char> = key.chars().collect();
    if chars.len() < 12 {
        return "•".repeat(chars.len().clamp(4, 8));
    }
    let head: String = chars[..3].iter().collect();
    let tail: String = chars[chars.len() - 4..].iter().collect();
    format!("{head}…{tail}")
}

/// A preset of the model form: a provider with its base URL.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreset {
    pub id: &'static str,
    pub label: &'static str,
    pub provider: Provider,
    pub base_url: &'static str,
    /// A model id to start from.
    pub model: &'static str,
    pub native_tools: bool,
    /// Whether the endpoint wants a key.
    pub needs_key: bool,
}

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
    pub ok: bool,
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

/// An item waiting for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum PendingItem {
    /// A visitor tool's call: answered with a value, or declined.
    Input {
        run_id: String,
        call_id: String,
        name: String,
        args: Map<String, Value>,
    },
    /// An MCP tool that needs confirmation in a run without a tab: allowed or declined.
    Confirmation {
        run_id: String,
        call_id: String,
        name: String,
        server: String,
        args: Map<String, Value>,
    },
}

impl PendingItem {
    pub fn run_id(&self) -> &str {
        match self {
            PendingItem::Input { run_id, .. } | PendingItem::Confirmation { run_id, .. } => run_id,
        }
    }
    pub fn call_id(&self) -> &str {
        match self {
            PendingItem::Input { call_id, .. } | PendingItem::Confirmation { call_id, .. } => {
                call_id
            }
        }
    }
}

/// A person's answer to a pending item, parsed from `answer`/`decline` requests.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub run_id: String,
    pub call_id: String,
    /// `Ok(value)` answers (for a confirmation: allows); `Err(reason)` declines.
    pub verdict: Result<String, Option<String>>,
}

impl Answer {
    /// `{runId, callId, value}`: a string value is taken as is, anything else as JSON.
    pub fn parse_answer(request: &Value) -> Result<Answer, String> {
        let (run_id, call_id) = ids(request, "answer")?;
        let value = match request.get("value") {
            None => return Err("answer: `value` is required".into()),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        Ok(Answer {
            run_id,
            call_id,
            verdict: Ok(value),
        })
    }

    /// `{runId, callId, reason?}`.
    pub fn parse_decline(request: &Value) -> Result<Answer, String> {
        let (run_id, call_id) = ids(request, "decline")?;
        let reason = request
            .get("reason")
            .and_then(Value::as_str)
            .map(|s| s.chars().take(2_000).collect::<String>())
            .filter(|s| !s.trim().is_empty());
        Ok(Answer {
            run_id,
            call_id,
            verdict: Err(reason),
        })
    }
}

fn ids(request: &Value, what: &str) -> Result<(String, String), String> {
    let field = |key: &str| {
        request
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("{what}: `{key}` is required"))
    };
    Ok((field("runId")?, field("callId")?))
}

/// The summary of a run in the worker's list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub run_id: String,
    pub thread_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<i64>,
    /// The person's prompt (the last user message), shortened.
    #[serde(default)]
    pub prompt: String,
    pub started_ms: f64,
    /// `running`, `finished`, or (read back after the worker stopped mid-run) `interrupted`.
    pub state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Value>,
    #[serde(default)]
    pub event_count: usize,
}

/// The capped list of runs: newest first, at most [`MAX_STORED_RUNS`]. Returns the ids of
/// the runs dropped from it (whose stored events the shell removes).
pub fn remember_run(list: &mut Vec<RunSummary>, summary: RunSummary) -> Vec<String> {
    list.retain(|r| r.run_id != summary.run_id);
    list.insert(0, summary);
    if list.len() > MAX_STORED_RUNS {
        list.drain(MAX_STORED_RUNS..).map(|r| r.run_id).collect()
    } else {
        Vec::new()
    }
}

/// A stored list read back by a worker that does not hold these runs: those still
/// `running` were cut by a worker restart.
pub fn mark_interrupted(list: &mut [RunSummary], live: impl Fn(&str) -> bool) {
    for run in list.iter_mut() {
        if run.state == "running" && !live(&run.run_id) {
            run.state = "interrupted".into();
        }
    }
}

/// The prompt a run summary shows: the last user message of the request, at most 200
/// characters.
pub fn prompt_of(request: &Value) -> String {
    let text = match request.get("prompt").and_then(Value::as_str) {
        Some(prompt) => prompt.to_owned(),
        None => request
            .get("messages")
            .and_then(Value::as_array)
            .and_then(|m| {
                m.iter()
                    .rev()
                    .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            })
            .and_then(|m| m.get("content").and_then(Value::as_str))
            .unwrap_or_default()
            .to_owned(),
    };
    text.chars().take(200).collect()
}

/// Visitor tools of a run request (`visitorTools`: AG-UI tools, `{name, description,
/// parameters}`): answered by the person in the popup or side panel.
pub fn visitor_tools(request: &Value) -> Result<Vec<super::toolset::ToolSpec>, String> {
    let Some(items) = request.get("visitorTools") else {
        return Ok(Vec::new());
    };
    let items = match items {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err("run: `visitorTools` must be an array".into()),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .filter(|n| {
                    !n.is_empty()
                        && n.len() <= 128
                        && n.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                })
                .ok_or_else(|| format!("run: visitorTools[{i}] needs a `name` of [a-zA-Z0-9_-]"))?;
            Ok(super::toolset::ToolSpec {
                name: name.to_owned(),
                description: tool
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                input_schema: tool
                    .get("parameters")
                    .or_else(|| tool.get("inputSchema"))
                    .cloned()
                    .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(provider: Provider, base_url: &str) -> ModelConfig {
        serde_json::from_value(json!({
            "name": "m", "provider": provider, "baseUrl": base_url, "model": "gpt-test",
            "nativeTools": true, "keyRef": "main"
        }))
        .unwrap()
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
            let registry: super::super::provider::ModelRegistry = serde_json::from_value(json!({
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
        let server: super::super::mcp::source::McpServerConfig =
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

    #[test]
    fn answers_parse_and_decline_defaults() {
        let a =
            Answer::parse_answer(&json!({"runId": "r", "callId": "c", "value": {"x": 1}})).unwrap();
        assert_eq!(a.verdict, Ok("{\"x\":1}".into()));
        let a =
            Answer::parse_answer(&json!({"runId": "r", "callId": "c", "value": "yes"})).unwrap();
        assert_eq!(a.verdict, Ok("yes".into()));
        assert!(Answer::parse_answer(&json!({"runId": "r", "callId": "c"})).is_err());
        assert!(Answer::parse_answer(&json!({"callId": "c", "value": 1})).is_err());
        let d =
            Answer::parse_decline(&json!({"runId": "r", "callId": "c", "reason": "  "})).unwrap();
        assert_eq!(d.verdict, Err(None));
        let d =
            Answer::parse_decline(&json!({"runId": "r", "callId": "c", "reason": "no"})).unwrap();
        assert_eq!(d.verdict, Err(Some("no".into())));
    }

    fn summary(id: &str, state: &str) -> RunSummary {
        RunSummary {
            run_id: id.into(),
            thread_id: "t".into(),
            tab_id: None,
            prompt: String::new(),
            started_ms: 0.0,
            state: state.into(),
            outcome: None,
            event_count: 0,
        }
    }

    #[test]
    fn the_run_list_is_capped_newest_first() {
        let mut list = Vec::new();
        let mut dropped = Vec::new();
        for i in 0..MAX_STORED_RUNS + 3 {
            dropped.extend(remember_run(
                &mut list,
                summary(&format!("r{i}"), "running"),
            ));
        }
        assert_eq!(list.len(), MAX_STORED_RUNS);
        assert_eq!(list[0].run_id, format!("r{}", MAX_STORED_RUNS + 2));
        assert_eq!(dropped, ["r0", "r1", "r2"]);
        // Updating a run moves it to the front without a duplicate.
        remember_run(&mut list, summary("r5", "finished"));
        assert_eq!(list.len(), MAX_STORED_RUNS);
        assert_eq!(
            (list[0].run_id.as_str(), list[0].state.as_str()),
            ("r5", "finished")
        );
        mark_interrupted(&mut list, |id| id == "r6");
        assert_eq!(
            list.iter().find(|r| r.run_id == "r6").unwrap().state,
            "running"
        );
        assert_eq!(
            list.iter().find(|r| r.run_id == "r7").unwrap().state,
            "interrupted"
        );
        assert_eq!(list[0].state, "finished");
    }

    #[test]
    fn prompts_and_visitor_tools_come_from_the_request() {
        assert_eq!(prompt_of(&json!({"prompt": "Hi"})), "Hi");
        assert_eq!(
            prompt_of(
                &json!({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}]})
            ),
            "c"
        );
        let tools = visitor_tools(&json!({"visitorTools": [{"name": "ask_person", "description": "Ask", "parameters": {"type": "object"}}]})).unwrap();
        assert_eq!(tools[0].name, "ask_person");
        assert!(visitor_tools(&json!({})).unwrap().is_empty());
        assert!(visitor_tools(&json!({"visitorTools": [{"name": "bad name"}]})).is_err());
        assert!(visitor_tools(&json!({"visitorTools": {}})).is_err());
    }
}
