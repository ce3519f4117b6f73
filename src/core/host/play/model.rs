//! A scripted OpenAI-compatible model server: each model (by the `model` its requests name)
//! answers a chat completion request with a streamed reply, after a latency in simulated time.

use std::collections::HashMap;

use serde_json::{json, Value};

/// What a model says to one request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Said {
    /// Text, the turn's end.
    Text(String),
    /// One tool call: its name and arguments.
    Call(String, Value),
}

/// A model's script: what it says to a request (the request's body as JSON).
pub(crate) type Script = Box<dyn FnMut(&Value) -> Said>;

/// The server: a script per model, and every request body it got.
#[derive(Default)]
pub(crate) struct ModelServer {
    scripts: HashMap<String, Script>,
    /// How long each answer takes to start (ms of simulated time).
    pub latency_ms: f64,
    /// Every request body, by model.
    pub asked: Vec<(String, Value)>,
    calls: usize,
}

impl ModelServer {
    /// Serves `model` with `script`.
    pub(crate) fn serve(&mut self, model: &str, script: Script) {
        self.scripts.insert(model.into(), script);
    }

    /// The streamed answer to a request body: an HTTP status and its body text.
    pub(crate) fn answer(&mut self, body: &str) -> (u16, String) {
        let Ok(request) = serde_json::from_str::<Value>(body) else {
            return (400, r#"{"error":{"message":"not JSON"}}"#.into());
        };
        let model = request["model"].as_str().unwrap_or_default().to_owned();
        self.asked.push((model.clone(), request.clone()));
        let Some(script) = self.scripts.get_mut(&model) else {
            return (
                404,
                format!(r#"{{"error":{{"message":"no model {model}"}}}}"#),
            );
        };
        self.calls += 1;
        let stream = match script(&request) {
            Said::Text(text) => text_stream(&text),
            Said::Call(name, args) => call_stream(&format!("c{}", self.calls), &name, &args),
        };
        (200, stream)
    }
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    let choice = json!({"index": 0, "delta": delta, "finish_reason": finish});
    format!("data: {}\n\n", json!({"choices": [choice]}))
}

fn text_stream(text: &str) -> String {
    let delta = json!({"role": "assistant", "content": text});
    chunk(delta, None) + &chunk(json!({}), Some("stop")) + "data: [DONE]\n\n"
}

fn call_stream(id: &str, name: &str, args: &Value) -> String {
    let call = json!({"index": 0, "id": id, "type": "function",
        "function": {"name": name, "arguments": args.to_string()}});
    let delta = json!({"role": "assistant", "tool_calls": [call]});
    chunk(delta, None) + &chunk(json!({}), Some("tool_calls")) + "data: [DONE]\n\n"
}

/// The last message of a chat request.
pub(crate) fn last(request: &Value) -> &Value {
    let messages = request["messages"].as_array();
    messages.and_then(|m| m.last()).unwrap_or(&Value::Null)
}

/// Whether the request offers a tool named `name`.
pub(crate) fn offers(request: &Value, name: &str) -> bool {
    let tools = request["tools"].as_array().into_iter().flatten();
    tools
        .into_iter()
        .any(|t| t["function"]["name"].as_str() == Some(name))
}
