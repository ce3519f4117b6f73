//! The parts of [`Session`] that only 2026-07-28 has (no session): the client's `_meta`,
//! `server/discover` and its answer, a request's `_meta` and standard headers, tool-change
//! subscriptions (`subscriptions/listen`), a request re-issued with a new id, and
//! `input_required` answers. The wire format itself (keys, header encoding, `x-mcp-header`) is
//! `crate::core::mcp::modern`, named `modern` here.

use serde_json::{json, Map, Value};

use super::{describe, failure, Session};
use crate::core::http::HttpRequest;
use crate::core::mcp::auth::metadata::strings;
use crate::core::mcp::jsonrpc::{Id, Message};
use crate::core::mcp::modern::{self, MODERN_PROTOCOLS};
use crate::core::mcp::{McpEvent, Outgoing, Purpose};

impl Session {
    /// The client as 2026-07-28 requests name it in `_meta`: its name, version and
    /// capabilities.
    pub fn set_client(&mut self, name: &str, version: &str, capabilities: Value) {
        self.client = (capabilities, json!({"name": name, "version": version}));
    }

    /// The `_meta` a 2026-07-28 request carries for `version`.
    fn meta(&self, version: &str) -> Value {
        json!({
            modern::META_PROTOCOL_VERSION: version,
            modern::META_CLIENT_CAPABILITIES: self.client.0,
            modern::META_CLIENT_INFO: self.client.1,
        })
    }

    /// The rest of a 2026-07-28 request (its id taken, `version` chosen): `_meta` in its
    /// params, and the standard headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`) in place of a session's.
    pub(super) fn modern_request(
        &mut self,
        method: &str,
        params: Option<Value>,
        purpose: Purpose,
        version: String,
    ) -> Outgoing {
        // 2026-07-28: `_meta` in every request's params, beside the caller's own keys.
        let mut params = match params {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let mut meta = self.meta(&version);
        if let (Some(Value::Object(given)), Some(all)) =
            (params.remove("_meta"), meta.as_object_mut())
        {
            all.extend(given);
        }
        params.insert("_meta".into(), meta);
        let params = Value::Object(params);
        let mut headers = vec![("mcp-method".to_owned(), modern::encode_header_value(method))];
        if let Some(name) = modern::mcp_name(method, Some(&params)) {
            headers.push(("mcp-name".to_owned(), modern::encode_header_value(name)));
        }
        if let (Purpose::CallTool { name }, Some(arguments)) =
            (&purpose, params.get("arguments").and_then(Value::as_object))
        {
            if let Some(designated) = self.param_headers.get(name) {
                headers.extend(modern::param_header_values(designated, arguments));
            }
        }
        let body = Message::request(Id::Number(self.next_id), method, Some(params));
        let mut outgoing = self.post(body, Some(purpose));
        let request = &mut outgoing.request;
        request
            .headers
            .retain(|(k, _)| k != "mcp-protocol-version" && k != "mcp-session-id");
        request
            .headers
            .insert(1, ("mcp-protocol-version".to_owned(), version));
        request.headers.extend(headers);
        outgoing
    }

    /// `subscriptions/listen` for changes of the server's tools (2026-07-28, in place of the
    /// GET stream), when the server said it announces them.
    pub fn subscribe(&mut self) -> Option<Outgoing> {
        if !(self.modern && self.tools_change) {
            return None;
        }
        let params = json!({"notifications": {"toolsListChanged": true}});
        Some(self.request(
            "subscriptions/listen",
            Some(params),
            Purpose::Other("subscriptions/listen".into()),
        ))
    }

    /// `server/discover` (2026-07-28): which versions and capabilities the server has. A
    /// server that offers 2026-07-28 makes the session speak it ([`McpEvent::Initialized`]);
    /// one that does not answer it is an older server, for `initialize`.
    pub fn discover(&mut self) -> Outgoing {
        self.reset();
        self.request("server/discover", None, Purpose::Discover)
    }

    /// The same request again under a new id (2026-07-28: after a broken stream, or with
    /// another protocol version): its params and headers kept, `_meta`'s version and the
    /// header set to the session's.
    pub fn reissue(&mut self, previous: &HttpRequest, purpose: Purpose) -> Outgoing {
        self.rebuild(previous, purpose, |_| {})
    }

    /// A request answered `input_required`, sent again with a new id, `inputResponses` and
    /// the server's `requestState` echoed exactly (left out when it gave none).
    pub fn retry_with_inputs(
        &mut self,
        previous: &HttpRequest,
        purpose: Purpose,
        responses: Map<String, Value>,
        state: Option<Value>,
    ) -> Outgoing {
        self.rebuild(previous, purpose, |params| {
            params.insert("inputResponses".into(), Value::Object(responses));
            match state {
                Some(state) => params.insert("requestState".into(), state),
                None => params.remove("requestState"),
            };
        })
    }

    fn rebuild(
        &mut self,
        previous: &HttpRequest,
        purpose: Purpose,
        change: impl FnOnce(&mut Map<String, Value>),
    ) -> Outgoing {
        let mut body: Value = serde_json::from_str(&previous.body).unwrap_or(Value::Null);
        let mut params = match body.get_mut("params").map(Value::take) {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        change(&mut params);
        let version = self.protocol.clone().filter(|_| self.modern);
        if let (Some(version), Some(meta)) = (&version, params.get_mut("_meta")) {
            meta[modern::META_PROTOCOL_VERSION] = json!(version);
        }
        self.next_id += 1;
        body["id"] = json!(self.next_id);
        body["params"] = Value::Object(params);
        self.pending.push((self.next_id, purpose));
        let mut request = self.restamp(previous.clone());
        request.body = body.to_string();
        if let Some(version) = version {
            for (name, value) in request.headers.iter_mut() {
                if name == "mcp-protocol-version" {
                    value.clone_from(&version);
                }
            }
        }
        Outgoing {
            id: Some(self.next_id),
            request,
        }
    }

    /// `server/discover` answered: 2026-07-28 from now on (no session) when it offers a
    /// revision this client speaks statelessly, else the request's failure.
    pub(super) fn discover_answered(&mut self, id: i64, result: &Value) -> Vec<McpEvent> {
        let versions = strings(result.get("supportedVersions")).unwrap_or_default();
        let Some(version) = MODERN_PROTOCOLS
            .iter()
            .find(|v| versions.iter().any(|s| s == *v))
        else {
            return vec![McpEvent::Failed {
                id,
                error: format!(
                    "server/discover offers {versions:?}; this client speaks {} statelessly",
                    MODERN_PROTOCOLS.join(", ")
                ),
            }];
        };
        self.modern = true;
        self.tools_change = result.pointer("/capabilities/tools/listChanged") == Some(&json!(true));
        self.protocol = Some((*version).to_owned());
        self.session_id = None;
        self.server = (result.pointer("/_meta/io.modelcontextprotocol~1serverInfo/name"))
            .or_else(|| result.pointer("/serverInfo/name"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        vec![McpEvent::Initialized {
            protocol: (*version).to_owned(),
            server: self.server.clone(),
        }]
    }

    /// An `input_required` result: its requests and state, within their caps
    /// (`MAX_MCP_INPUT_REQUESTS`, `MAX_MCP_REQUEST_STATE_BYTES`).
    pub(super) fn input_required(
        &mut self,
        id: i64,
        purpose: Purpose,
        mut result: Value,
    ) -> Vec<McpEvent> {
        use crate::core::limits::{MAX_MCP_INPUT_REQUESTS, MAX_MCP_REQUEST_STATE_BYTES};
        let requests = match result.get_mut("inputRequests").map(Value::take) {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map,
            Some(_) => {
                let error = format!(
                    "{} answered input_required with inputRequests that are not an object",
                    describe(&purpose)
                );
                return vec![failure(id, purpose, error)];
            }
        };
        let state = result.get_mut("requestState").map(Value::take);
        let state_bytes = state.as_ref().map_or(0, |s| s.to_string().len());
        if requests.len() > MAX_MCP_INPUT_REQUESTS || state_bytes > MAX_MCP_REQUEST_STATE_BYTES {
            let error = format!(
                "{} asked for {} inputs with a state of {state_bytes} bytes, over the caps of {MAX_MCP_INPUT_REQUESTS} and {MAX_MCP_REQUEST_STATE_BYTES}",
                describe(&purpose),
                requests.len()
            );
            return vec![failure(id, purpose, error)];
        }
        vec![McpEvent::InputRequired {
            id,
            purpose,
            requests,
            state,
        }]
    }
}

/// Whether a request may be answered `input_required` (2026-07-28).
pub(super) fn may_need_input(purpose: &Purpose) -> bool {
    match purpose {
        Purpose::CallTool { .. } => true,
        Purpose::Other(method) => method == "prompts/get" || method == "resources/read",
        _ => false,
    }
}
