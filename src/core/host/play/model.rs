//! A scripted OpenAI-compatible model server: each model (by the `model` its requests name)
//! answers a chat completion request with a streamed reply, after a latency in simulated time.
//! It answers the host's [`Http`] outputs for its address as fetch does, each stream's body
//! read in one piece; it can refuse the next requests first (a status and a `Retry-After`).

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

use super::super::io::{Fetched, Http, Input, Piece};
use crate::core::mcp::exchange::Head;

/// The address its models are configured with.
pub(crate) const MODEL_URL: &str = "http://127.0.0.1:8808/v1";

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
    /// The answers that refuse the next requests, in turn: a status and its `Retry-After`.
    pub refusals: VecDeque<(u16, Option<String>)>,
    /// Every fetch aborted, by the host's id.
    pub aborted: Vec<u64>,
    /// Every request fetched of it, in order.
    pub requests: Vec<crate::core::http::HttpRequest>,
    calls: usize,
    /// The streams whose bodies are still to be read (`None`: the end).
    bodies: HashMap<u64, VecDeque<Option<String>>>,
}

impl ModelServer {
    /// Serves `model` with `script`.
    pub(crate) fn serve(&mut self, model: &str, script: Script) {
        self.scripts.insert(model.into(), script);
    }

    /// Whether the output is one of its own: a fetch of its address, a read or an abort of
    /// one of its streams.
    pub(crate) fn serves(&self, http: &Http) -> bool {
        match http {
            Http::Fetch { request, .. } => request.url.starts_with(MODEL_URL),
            Http::Read { id, .. } | Http::Abort { id } => self.bodies.contains_key(id),
            Http::Post { .. } => false,
        }
    }

    /// Performs one HTTP output as fetch would: how long it took (ms), and its input.
    pub(crate) fn perform(&mut self, http: Http) -> (f64, Input) {
        let input = match http {
            Http::Fetch { id, request, .. } => {
                self.requests.push(request.clone());
                let (status, retry_after, body) = match self.refusals.pop_front() {
                    Some((status, retry_after)) => (
                        status,
                        retry_after,
                        r#"{"error":{"message":"busy"}}"#.into(),
                    ),
                    None => {
                        let (status, body) = self.answer(&request.body);
                        (status, None, body)
                    }
                };
                self.bodies.insert(id, VecDeque::from([Some(body), None]));
                let head = Head {
                    status,
                    retry_after,
                    ..Head::default()
                };
                return (self.latency_ms, Input::Fetched(Fetched::Head(head)));
            }
            Http::Read { id, .. } => {
                let body = self.bodies.get_mut(&id);
                Input::Piece(match body.and_then(VecDeque::pop_front).flatten() {
                    Some(text) => Piece::Text(text),
                    None => {
                        self.bodies.remove(&id);
                        Piece::End
                    }
                })
            }
            Http::Abort { id } => {
                self.bodies.remove(&id);
                self.aborted.push(id);
                Input::Done(Ok(()))
            }
            Http::Post { .. } => Input::Done(Ok(())),
        };
        (0.0, input)
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
