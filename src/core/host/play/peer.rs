//! A scripted MCP server for the played host: Streamable HTTP, JSON answers (revision
//! 2025-06-18), `initialize`, `tools/list`, `tools/call`, `DELETE`; no listening stream (its
//! `GET` is refused with 405), no `server/discover` (400: an older server). It can demand a
//! Bearer token (401 otherwise) and hand a fresh one out at its token endpoint, and end its
//! session so that the next request is answered 404. It answers the host's [`Http`] outputs
//! as fetch does, each fetch's body read in one piece.

use std::collections::{HashMap, VecDeque};

use serde_json::{json, Value};

use super::super::io::{Fetched, Http, Input, Piece};
use crate::core::http::HttpRequest;
use crate::core::mcp::exchange::Head;

/// The server's endpoint.
pub(crate) const MCP_URL: &str = "https://mcp.test/mcp";
/// Its authorization server's token endpoint.
pub(crate) const TOKEN_URL: &str = "https://auth.test/token";

/// The server: see the module's documentation.
#[derive(Debug, Default)]
pub(crate) struct Peer {
    /// The tools it lists (`{name, description, inputSchema}`).
    pub tools: Vec<Value>,
    /// The Bearer token it demands, if any.
    pub token: Option<String>,
    /// The token its token endpoint hands out next (what it demands does not change).
    pub fresh_token: Option<String>,
    /// The session under way.
    pub session: Option<String>,
    sessions: u32,
    /// How long each answer's head takes (ms of simulated time).
    pub latency_ms: u32,
    /// Every request it got, in order.
    pub requests: Vec<HttpRequest>,
    /// The fetches whose bodies are still to be read.
    bodies: HashMap<u64, VecDeque<String>>,
}

impl Peer {
    /// A server listing `names` (each taking any arguments).
    pub(crate) fn listing(names: &[&str]) -> Peer {
        Peer {
            tools: (names.iter())
                .map(|n| json!({"name": n, "description": format!("{n} a thing"), "inputSchema": {"type": "object"}}))
                .collect(),
            ..Peer::default()
        }
    }

    /// The JSON-RPC methods it got, in order (`DELETE`, `GET` and the token endpoint's
    /// `token` by name).
    pub(crate) fn methods(&self) -> Vec<String> {
        (self.requests.iter())
            .map(|r| match (r.method.as_str(), r.url.as_str()) {
                (_, TOKEN_URL) => "token".into(),
                ("POST", _) => serde_json::from_str::<Value>(&r.body).unwrap_or_default()["method"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                (method, _) => method.to_owned(),
            })
            .collect()
    }

    /// Performs one HTTP output as fetch would: how long it took (ms), and its input.
    pub(crate) fn perform(&mut self, http: Http) -> (f64, Input) {
        let input = match http {
            Http::Fetch {
                id,
                request,
                within_ms,
            } => {
                self.requests.push(request.clone());
                if self.latency_ms > within_ms {
                    return (f64::from(within_ms), Input::Fetched(Fetched::TimedOut));
                }
                let (head, body) = self.answer(&request);
                self.bodies.insert(id, VecDeque::from([body]));
                let head = Input::Fetched(Fetched::Head(head));
                return (f64::from(self.latency_ms), head);
            }
            Http::Read { id, .. } => {
                Input::Piece(match self.bodies.get_mut(&id).map(VecDeque::pop_front) {
                    Some(Some(text)) if !text.is_empty() => Piece::Text(text),
                    Some(_) => {
                        self.bodies.remove(&id);
                        Piece::End
                    }
                    None => Piece::Failed("no such fetch".into()),
                })
            }
            Http::Abort { id } => {
                self.bodies.remove(&id);
                Input::Done(Ok(()))
            }
            Http::Post { request } => {
                self.requests.push(request);
                Input::Done(Ok(()))
            }
        };
        (0.0, input)
    }

    fn answer(&mut self, request: &HttpRequest) -> (Head, String) {
        let header = |name: &str| {
            (request.headers.iter())
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        if request.url == TOKEN_URL {
            let token = self.fresh_token.take().unwrap_or_else(|| "none".into());
            let body = json!({"access_token": token, "token_type": "Bearer", "expires_in": 3600});
            return (head(200, None), body.to_string());
        }
        if let Some(token) = &self.token {
            if header("authorization") != Some(format!("Bearer {token}")) {
                let mut refused = head(401, None);
                refused.www_authenticate = Some("Bearer realm=\"mcp\"".into());
                return (refused, String::new());
            }
        }
        let sent_session = header("mcp-session-id");
        match request.method.as_str() {
            "GET" => return (head(405, None), String::new()),
            "DELETE" => {
                self.session = None;
                return (head(200, None), String::new());
            }
            _ => {}
        }
        let body: Value = serde_json::from_str(&request.body).unwrap_or_default();
        let method = body["method"].as_str().unwrap_or_default();
        let id = body["id"].clone();
        if method != "initialize" && method != "server/discover" && sent_session != self.session {
            return (head(404, None), String::new());
        }
        let result = match method {
            "server/discover" => return (head(400, None), String::new()),
            "initialize" => {
                self.sessions += 1;
                self.session = Some(format!("s-{}", self.sessions));
                json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "peer", "version": "1"}
                })
            }
            "tools/list" => json!({"tools": self.tools}),
            "tools/call" => {
                let name = body["params"]["name"].as_str().unwrap_or_default();
                let args = &body["params"]["arguments"];
                json!({"content": [{"type": "text", "text": format!("{name} did {args}")}]})
            }
            _ => return (head(202, None), String::new()),
        };
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
        (head(200, self.session.clone()), answer.to_string())
    }
}

fn head(status: u16, session_id: Option<String>) -> Head {
    Head {
        status,
        content_type: Some("application/json".into()).filter(|_| status != 202),
        session_id,
        ..Head::default()
    }
}
