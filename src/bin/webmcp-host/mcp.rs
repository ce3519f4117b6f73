//! `webmcp-host mcp`: the CLI's blocking HTTP driver for the core's MCP session.
//!
//! It performs the requests the core builds (ureq), reads JSON or SSE answers, answers server
//! requests, resumes a broken SSE stream with `Last-Event-ID` after the server's `retry`, starts
//! a new session on 404, cancels a request that timed out, and ends the session with `DELETE`.

use std::io::Read;
use std::time::Duration;

use serde_json::{json, Map, Value};
use webmcp_host::core::mcp::jsonrpc::{parse_messages, Id, RpcError};
use webmcp_host::core::mcp::tools::{check_structured, namespaced, McpTool};
use webmcp_host::core::mcp::{
    Body, CallResult, McpError, McpEvent, Outgoing, Session, DEFAULT_TIMEOUT_MS,
};
use webmcp_host::core::provider::sse::SseDecoder;
use webmcp_host::core::provider::HttpRequest;

/// How many times a broken SSE stream is resumed before giving up.
const MAX_RESUMES: u32 = 5;
/// Pages of `tools/list` read at most (a server that never stops paging).
const MAX_PAGES: usize = 1000;

/// Answers a server request (`method`, `params`) with a result or an error `(code, message)`.
type RequestHandler = fn(&str, Option<&Value>) -> Result<Value, (i64, String)>;

pub struct Driver {
    session: Session,
    agent: ureq::Agent,
    headers: Vec<(String, String)>,
    client: (String, String),
    capabilities: Value,
    /// Answers to server requests (`elicitation/create`, `ping`, …).
    on_request: RequestHandler,
    pub log: Vec<String>,
}

/// An answer read to its end (or to our response).
struct Exchange {
    events: Vec<McpEvent>,
    /// The SSE stream ended before the awaited response: resume from here.
    resume: Option<(Option<String>, u64)>,
}

impl Driver {
    pub fn new(url: &str, headers: Vec<(String, String)>, timeout_ms: u32) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_millis(u64::from(timeout_ms))))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        Driver {
            session: Session::new(url),
            agent: config.into(),
            headers,
            client: ("webmcp-host".into(), webmcp_host::VERSION.into()),
            capabilities: json!({"elicitation": {}}),
            on_request: default_answer,
            log: Vec::new(),
        }
    }

    /// `initialize` and `notifications/initialized`.
    pub fn connect(&mut self) -> Result<(), String> {
        let init =
            self.session
                .initialize(&self.client.0, &self.client.1, self.capabilities.clone());
        let events = self.exchange(init, false)?;
        match events
            .iter()
            .find(|e| matches!(e, McpEvent::Initialized { .. } | McpEvent::Failed { .. }))
        {
            Some(McpEvent::Initialized { .. }) => {}
            Some(McpEvent::Failed { error, .. }) => return Err(error.clone()),
            _ => return Err("the server did not answer initialize".into()),
        }
        let initialized = self.session.initialized();
        self.exchange(initialized, false)?;
        Ok(())
    }

    /// Every tool, over all pages.
    pub fn tools(&mut self) -> Result<(Vec<McpTool>, Vec<String>), String> {
        let mut tools = Vec::new();
        let mut problems = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let request = self.session.list_tools(cursor.as_deref());
            let events = self.exchange(request, true)?;
            let mut next = None;
            let mut answered = false;
            for event in events {
                match event {
                    McpEvent::Tools {
                        tools: page,
                        problems: p,
                        next_cursor,
                    } => {
                        tools.extend(page);
                        problems.extend(p);
                        next = next_cursor;
                        answered = true;
                    }
                    McpEvent::Failed { error, .. } => return Err(error),
                    _ => {}
                }
            }
            if !answered {
                return Err("the server did not answer tools/list".into());
            }
            match next {
                Some(next) if Some(&next) == cursor.as_ref() => {
                    return Err("tools/list returned the same cursor twice".into())
                }
                Some(next) => cursor = Some(next),
                None => return Ok((tools, problems)),
            }
        }
        Err(format!("tools/list still had pages after {MAX_PAGES}"))
    }

    /// `tools/call`.
    pub fn call(
        &mut self,
        name: &str,
        arguments: &Map<String, Value>,
    ) -> Result<CallResult, String> {
        let request =
            self.session
                .call_tool(name, arguments, Some(json!(format!("progress-{name}"))));
        let id = request.id;
        let events = self.exchange(request, true)?;
        for event in events {
            match event {
                McpEvent::CallDone {
                    id: done, result, ..
                } if Some(done) == id => return Ok(result),
                McpEvent::Failed { error, .. } => return Err(error),
                _ => {}
            }
        }
        Err(format!("the server did not answer tools/call `{name}`"))
    }

    /// `DELETE` the session (errors are only logged: the session ends either way).
    pub fn close(&mut self) {
        if let Some(request) = self.session.terminate() {
            if let Err(error) = self.perform(&request) {
                self.log.push(format!("DELETE failed: {error}"));
            }
        }
    }

    /// Sends one request and reads its answer; a 404 on a live session starts a new one and
    /// sends the request again (once), a broken stream is resumed, a timeout cancels.
    fn exchange(
        &mut self,
        outgoing: Outgoing,
        retry_on_404: bool,
    ) -> Result<Vec<McpEvent>, String> {
        let mut exchange = match self.send(&outgoing) {
            Err(McpError::SessionExpired) if retry_on_404 => {
                self.log
                    .push("the session expired (404); starting a new one".into());
                self.connect()?;
                // Build the same request again in the new session.
                let body: Value =
                    serde_json::from_str(&outgoing.request.body).unwrap_or(Value::Null);
                let method = body["method"].as_str().unwrap_or("");
                let params = body.get("params").cloned();
                let again = match method {
                    "tools/list" => self
                        .session
                        .list_tools(params.as_ref().and_then(|p| p["cursor"].as_str())),
                    "tools/call" => {
                        let name = params
                            .as_ref()
                            .and_then(|p| p["name"].as_str())
                            .unwrap_or("")
                            .to_owned();
                        let arguments = params
                            .as_ref()
                            .and_then(|p| p["arguments"].as_object())
                            .cloned()
                            .unwrap_or_default();
                        self.session.call_tool(&name, &arguments, None)
                    }
                    other => self.session.call(other, params),
                };
                return self.exchange(again, false);
            }
            Err(McpError::Http { status, message }) if message.is_empty() => {
                return Err(format!(
                    "the server answered {status} to {}",
                    method_of(&outgoing)
                ))
            }
            Err(error) => return Err(error.to_string()),
            Ok(exchange) => exchange,
        };
        let mut events = std::mem::take(&mut exchange.events);
        let mut resumes = 0;
        while let Some((last_event_id, wait_ms)) = exchange.resume.take() {
            resumes += 1;
            if resumes > MAX_RESUMES {
                return Err(format!(
                    "the server's stream broke {MAX_RESUMES} times without an answer"
                ));
            }
            std::thread::sleep(Duration::from_millis(wait_ms));
            let listen = self.session.listen(last_event_id.as_deref());
            self.log.push(format!(
                "resuming the stream after {}",
                last_event_id.as_deref().unwrap_or("the start")
            ));
            exchange = self.read(&listen, outgoing.id).map_err(|e| e.to_string())?;
            events.append(&mut exchange.events);
        }
        if let Some(id) = outgoing.id {
            if self.session.pending().any(|(p, _)| p == id) {
                let cancel = self.session.cancel(id, "no answer in the stream");
                let _ = self.send(&cancel);
                return Err(format!(
                    "the server never answered {}",
                    method_of(&outgoing)
                ));
            }
        }
        Ok(events)
    }

    fn send(&mut self, outgoing: &Outgoing) -> Result<Exchange, McpError> {
        self.read(&outgoing.request, outgoing.id)
    }

    fn perform(&self, request: &HttpRequest) -> Result<ureq::http::Response<ureq::Body>, McpError> {
        let mut builder = ureq::http::Request::builder()
            .method(request.method.as_str())
            .uri(request.url.as_str());
        for (name, value) in request.headers.iter().chain(self.headers.iter()) {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let built = builder
            .body(request.body.clone())
            .map_err(|e| McpError::Protocol(format!("bad request: {e}")))?;
        self.agent.run(built).map_err(|e| match e {
            ureq::Error::Timeout(_) => {
                McpError::Protocol(format!("no answer within {} ms", DEFAULT_TIMEOUT_MS))
            }
            other => McpError::Protocol(format!("{} could not be reached: {other}", request.url)),
        })
    }

    /// Performs a request and reads its answer until `awaited` is answered (or to the end).
    fn read(&mut self, request: &HttpRequest, awaited: Option<i64>) -> Result<Exchange, McpError> {
        let had_session = request.headers.iter().any(|(k, _)| k == "mcp-session-id");
        let response = self.perform(request)?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            return Err(McpError::Http {
                status,
                message: format!(
                    "a redirect to {} is not followed",
                    header("location").unwrap_or_default()
                ),
            });
        }
        let kind = self.session.answer(
            status,
            header("content-type").as_deref(),
            header("mcp-session-id").as_deref(),
            had_session,
            header("www-authenticate").as_deref(),
        )?;
        let mut body = response.into_body();
        let mut reader = body.as_reader();
        let mut events = Vec::new();
        match kind {
            Body::Empty => {}
            Body::Json => {
                let mut text = String::new();
                reader
                    .read_to_string(&mut text)
                    .map_err(|e| McpError::Protocol(format!("the answer broke: {e}")))?;
                let messages = parse_messages(&text).map_err(McpError::Protocol)?;
                for message in messages {
                    events.extend(self.session.receive(message));
                }
                self.answer_requests(&events);
            }
            Body::Sse => {
                let mut decoder = SseDecoder::new();
                let mut bytes = vec![0u8; 16 * 1024];
                let mut carry: Vec<u8> = Vec::new();
                let mut retry_ms = 1000;
                let mut last_id = None;
                loop {
                    let n = match reader.read(&mut bytes) {
                        Ok(0) => 0,
                        Ok(n) => n,
                        Err(e) => {
                            self.log.push(format!("the stream broke: {e}"));
                            0
                        }
                    };
                    let mut sse_events = Vec::new();
                    if n == 0 {
                        sse_events.extend(decoder.finish());
                    } else {
                        carry.extend_from_slice(&bytes[..n]);
                        let valid = match std::str::from_utf8(&carry) {
                            Ok(_) => carry.len(),
                            Err(e) => e.valid_up_to(),
                        };
                        let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
                        carry.drain(..valid);
                        sse_events.extend(decoder.push(&text));
                    }
                    for event in sse_events {
                        if let Some(id) = &event.id {
                            last_id = Some(id.clone());
                        }
                        if let Some(retry) = event.retry {
                            retry_ms = retry;
                        }
                        if event.data.trim().is_empty() {
                            continue; // a priming event
                        }
                        match parse_messages(&event.data) {
                            Ok(messages) => {
                                for message in messages {
                                    let new = self.session.receive(message);
                                    self.answer_requests(&new);
                                    events.extend(new);
                                }
                            }
                            Err(error) => self.log.push(format!("skipped an SSE event: {error}")),
                        }
                    }
                    let answered =
                        awaited.is_none_or(|id| !self.session.pending().any(|(p, _)| p == id));
                    if answered && awaited.is_some() {
                        break;
                    }
                    if n == 0 {
                        if !answered {
                            return Ok(Exchange {
                                events,
                                resume: Some((last_id, retry_ms.min(30_000))),
                            });
                        }
                        break;
                    }
                }
            }
        }
        Ok(Exchange {
            events,
            resume: None,
        })
    }

    /// Answers the server's requests among `events` right away.
    fn answer_requests(&mut self, events: &[McpEvent]) {
        let requests: Vec<(Id, String, Option<Value>)> = events
            .iter()
            .filter_map(|e| match e {
                McpEvent::ServerRequest { id, method, params } => {
                    Some((id.clone(), method.clone(), params.clone()))
                }
                _ => None,
            })
            .collect();
        for (id, method, params) in requests {
            let answer = (self.on_request)(&method, params.as_ref());
            self.log.push(format!("answered the server's {method}"));
            let reply = self.session.reply(&id, answer);
            if let Err(error) = self.perform(&reply.request) {
                self.log.push(format!("could not answer {method}: {error}"));
            }
        }
    }
}

fn method_of(outgoing: &Outgoing) -> String {
    serde_json::from_str::<Value>(&outgoing.request.body)
        .ok()
        .and_then(|b| b["method"].as_str().map(str::to_owned))
        .unwrap_or_else(|| outgoing.request.method.clone())
}

/// Answers to server requests when no person is there: `ping`; an elicitation is accepted
/// with the schema's defaults when they cover every required field, else declined; sampling
/// and roots are not supported.
pub fn default_answer(method: &str, params: Option<&Value>) -> Result<Value, (i64, String)> {
    match method {
        "ping" => Ok(json!({})),
        "elicitation/create" => {
            let schema = params
                .and_then(|p| p.get("requestedSchema"))
                .cloned()
                .unwrap_or(Value::Null);
            let mut content = Map::new();
            if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
                for (key, property) in properties {
                    if let Some(default) = property.get("default") {
                        content.insert(key.clone(), default.clone());
                    }
                }
            }
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if required.iter().all(|r| content.contains_key(*r)) {
                Ok(json!({"action": "accept", "content": content}))
            } else {
                Ok(json!({"action": "decline"}))
            }
        }
        other => Err((
            RpcError::METHOD_NOT_FOUND,
            format!("{other} is not supported by this client"),
        )),
    }
}

/// Parses `--header K:V` values.
pub fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("--header takes K:V, not `{text}`"))?;
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok((name, value.trim().to_owned()))
}

/// The tool as the CLI prints it.
pub fn tool_line(tool: &McpTool, namespace: Option<&str>, trusted: bool) -> Value {
    json!({
        "name": namespaced(namespace, &tool.name),
        "title": tool.title,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "annotations": tool.annotations,
        "needsConfirmation": tool.needs_confirmation(trusted),
    })
}

/// A call result as the CLI prints it, with structured content checked.
pub fn result_line(tool: Option<&McpTool>, result: &CallResult) -> (bool, Value) {
    match result {
        CallResult::Ok { text, structured } => {
            if let Some(tool) = tool {
                if let Err(error) = check_structured(tool, structured.as_ref()) {
                    return (false, json!({"ok": false, "error": error}));
                }
            }
            let mut line = json!({"ok": true, "result": text});
            if let Some(structured) = structured {
                line["structuredContent"] = structured.clone();
            }
            (true, line)
        }
        CallResult::Error(error) => (false, json!({"ok": false, "error": error})),
    }
}
