//! `webmcp-host mcp`: the CLI's HTTP driver for the core's MCP session.
//!
//! Every HTTP exchange runs on a thread of its own that sends what it reads (the answer's
//! status and headers, each JSON-RPC message, the end of the body) to one channel; the main
//! thread feeds the session from that channel. So the server can talk on the POST's SSE stream
//! and on the GET stream at once (a server request such as `elicitation/create` may come on
//! either). A broken SSE stream is resumed with `Last-Event-ID` after the server's `retry`, a
//! 404 starts a new session, a request without an answer in time is cancelled, and `DELETE`
//! ends the session.
//!
//! Authorization: a 401 (or a 403 `insufficient_scope`) runs the core's sign-in [`Flow`]
//! (discovery, client registration, authorization code with PKCE, token), then the request is
//! sent again with the Bearer token, at most [`MAX_AUTHORIZATIONS`] times per request. The
//! authorization URL is fetched without following its redirect: an authorization server that
//! approves at once (as the conformance suite's does) redirects straight to the redirect URI,
//! whose `code` and `state` are read from the `Location`; otherwise the URL is printed for the
//! person to open, and the redirect arrives at a loopback listener.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use webmcp_host::core::mcp::auth::{
    base64url, AuthRecord, BearerChallenge, ClientCredentials, Flow, FlowConfig, FlowSecrets, Step,
    TokenState, MAX_AUTHORIZATIONS, MAX_AUTH_BODY_BYTES,
};
use webmcp_host::core::mcp::jsonrpc::{parse_messages, Message, RpcError};
use webmcp_host::core::mcp::tools::{check_structured, namespaced, McpTool};
use webmcp_host::core::mcp::{CallResult, McpError, McpEvent, Outgoing, Session, ToolListing};
use webmcp_host::core::provider::sse::SseDecoder;
use webmcp_host::core::provider::HttpRequest;

/// How many times a broken SSE stream is resumed before giving up.
const MAX_RESUMES: u32 = 5;

/// Answers a server request (`method`, `params`) with a result or an error `(code, message)`.
type RequestHandler = fn(&str, Option<&Value>) -> Result<Value, (i64, String)>;

/// What a reader thread saw.
enum Frame {
    Answer {
        stream: u64,
        status: u16,
        content_type: Option<String>,
        session_id: Option<String>,
        www_authenticate: Option<String>,
        location: Option<String>,
    },
    Message {
        message: Message,
    },
    Skipped {
        stream: u64,
        error: String,
    },
    /// The body ended (or broke); for SSE, where to resume.
    End {
        stream: u64,
        last_event_id: Option<String>,
        retry_ms: Option<u64>,
        error: Option<String>,
    },
    Failed {
        stream: u64,
        error: String,
    },
}

pub struct Driver {
    session: Session,
    agent: ureq::Agent,
    /// For the sign-in's requests: the same, with a total time per request.
    auth_agent: ureq::Agent,
    headers: Vec<(String, String)>,
    timeout: Duration,
    client: (String, String),
    capabilities: Value,
    on_request: RequestHandler,
    tx: Sender<Frame>,
    rx: Receiver<Frame>,
    next_stream: u64,
    /// The GET stream for server messages, while open.
    listen: Option<u64>,
    trace: bool,
    pub log: Vec<String>,
    /// Sign-in when the server asks (None: a 401 is an error).
    pub auth: Option<AuthSetup>,
    /// The sign-in's result, while it holds.
    record: Option<AuthRecord>,
    /// The loopback listener of the redirect URI (one for the whole run: a registered
    /// client's redirect URI stays the same).
    redirect: Option<(TcpListener, String)>,
}

/// What a sign-in starts from.
#[derive(Debug, Clone, Default)]
pub struct AuthSetup {
    pub preregistered: Option<ClientCredentials>,
    /// This client's metadata document URL, its client id where the server supports that.
    pub metadata_document: Option<String>,
    /// How long the person has to sign in in a browser.
    pub interactive_timeout: Duration,
}

impl Driver {
    pub fn new(url: &str, headers: Vec<(String, String)>, timeout_ms: u32) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(10)))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        let (tx, rx) = channel();
        let auth_config = ureq::Agent::config_builder()
            .timeout_connect(Some(Duration::from_secs(10)))
            .timeout_global(Some(Duration::from_millis(u64::from(timeout_ms))))
            .http_status_as_error(false)
            .max_redirects(0)
            .build();
        Driver {
            session: Session::new(url),
            agent: config.into(),
            auth_agent: auth_config.into(),
            headers,
            timeout: Duration::from_millis(u64::from(timeout_ms)),
            client: ("webmcp-host".into(), webmcp_host::VERSION.into()),
            capabilities: json!({"elicitation": {}}),
            on_request: default_answer,
            tx,
            rx,
            next_stream: 0,
            listen: None,
            trace: std::env::var_os("WEBMCP_HOST_TRACE").is_some(),
            log: Vec::new(),
            auth: None,
            record: None,
            redirect: None,
        }
    }

    /// `text` without any secret of the sign-in.
    pub fn redact(&self, text: &str) -> String {
        match &self.record {
            Some(record) => record.redact(text),
            None => text.to_owned(),
        }
    }

    /// Signs in after a challenge (`www_authenticate`): a refresh when the token just
    /// expired and can be refreshed, else the whole flow.
    fn authorize(&mut self, www_authenticate: Option<&str>) -> Result<(), String> {
        let Some(setup) = self.auth.clone() else {
            return Err("sign-in is off".into());
        };
        let challenge = BearerChallenge::from_header(www_authenticate);
        if !challenge.insufficient_scope() && self.refresh() {
            return Ok(());
        }
        let redirect_uri = self.redirect_uri()?;
        let config = FlowConfig {
            server_url: self.session.url().to_owned(),
            redirect_uri: redirect_uri.clone(),
            client_name: "webmcp-host".into(),
            preregistered: setup.preregistered.clone(),
            metadata_document: setup.metadata_document.clone(),
            challenge,
            previous: self.record.clone(),
        };
        let secrets = FlowSecrets {
            verifier: base64url(&random_bytes(32)?),
            state: base64url(&random_bytes(16)?),
        };
        let mut flow = Flow::new(config, secrets);
        loop {
            match flow.step() {
                Step::Fetch(request) => {
                    if self.trace {
                        eprintln!(
                            "webmcp-host: → {} {} (sign-in)",
                            request.method,
                            strip(&request.url)
                        );
                    }
                    let (status, body, _) = self.http_once(&request);
                    flow.response(status, &body, now_ms());
                }
                Step::Authorize { url } => {
                    match self.follow(&url, &redirect_uri, setup.interactive_timeout) {
                        Ok(redirect) => flow.redirected(&redirect),
                        Err(why) => flow.abandoned(&why),
                    }
                }
                Step::Done(record) => {
                    self.log.push(format!(
                        "signed in at {} (scope {})",
                        record.issuer,
                        record
                            .tokens
                            .scope
                            .as_deref()
                            .or(record.scope.as_deref())
                            .unwrap_or("none")
                    ));
                    self.record = Some(record);
                    return Ok(());
                }
                Step::Failed(why) => return Err(why),
            }
        }
    }

    /// Refreshes the token when it can; whether it did.
    fn refresh(&mut self) -> bool {
        let Some(request) = self.record.as_ref().and_then(AuthRecord::refresh_request) else {
            return false;
        };
        let (status, body, _) = self.http_once(&request);
        let record = self.record.as_mut().expect("checked above");
        match record.refreshed(status, &body, now_ms()) {
            Ok(()) => {
                self.log.push("refreshed the access token".into());
                true
            }
            Err(why) => {
                self.log
                    .push(format!("the token could not be refreshed: {why}"));
                false
            }
        }
    }

    /// Refreshes a token about to expire before it is used (a failure is left to the 401).
    fn keep_fresh(&mut self) {
        if self
            .record
            .as_ref()
            .is_some_and(|r| r.token_state(now_ms()) == TokenState::Refresh)
        {
            self.refresh();
        }
    }

    fn redirect_uri(&mut self) -> Result<String, String> {
        if let Some((_, uri)) = &self.redirect {
            return Ok(uri.clone());
        }
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("no loopback port for the sign-in's redirect: {e}"))?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let uri = format!("http://127.0.0.1:{port}/callback");
        self.redirect = Some((listener, uri.clone()));
        Ok(uri)
    }

    /// One request, no redirect followed: status (0 when unreachable), body (capped) and
    /// `Location`.
    fn http_once(&self, request: &HttpRequest) -> (u16, String, Option<String>) {
        let mut builder = ureq::http::Request::builder()
            .method(request.method.as_str())
            .uri(request.url.as_str());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let built = match builder.body(request.body.clone()) {
            Ok(built) => built,
            Err(e) => return (0, format!("bad request: {e}"), None),
        };
        match self.auth_agent.run(built) {
            Ok(response) => {
                let status = response.status().as_u16();
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let mut text = String::new();
                let _ = response
                    .into_body()
                    .as_reader()
                    .take(MAX_AUTH_BODY_BYTES as u64 + 1)
                    .read_to_string(&mut text);
                (status, text, location)
            }
            Err(e) => (0, format!("{e}"), None),
        }
    }

    /// The authorization step: the URL fetched without following its redirect; a redirect to
    /// `redirect_uri` is the answer. Otherwise the person signs in in a browser and the
    /// redirect comes to the loopback listener.
    fn follow(&self, url: &str, redirect_uri: &str, wait: Duration) -> Result<String, String> {
        let request = HttpRequest {
            method: "GET".into(),
            url: url.to_owned(),
            headers: vec![("accept".into(), "text/html".into())],
            body: String::new(),
        };
        let (status, _, location) = self.http_once(&request);
        if (300..400).contains(&status) {
            if let Some(location) = location.filter(|l| l.starts_with(redirect_uri)) {
                return Ok(location);
            }
        }
        let Some((listener, _)) = &self.redirect else {
            return Err("no redirect listener".into());
        };
        eprintln!("webmcp-host: sign in to continue: open {url}");
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            match listener.accept() {
                Ok((mut socket, _)) => {
                    let _ = socket.set_nonblocking(false);
                    let _ = socket.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut head = [0u8; 8192];
                    let n = socket.read(&mut head).unwrap_or(0);
                    let text = String::from_utf8_lossy(&head[..n]);
                    let target = text
                        .lines()
                        .next()
                        .and_then(|line| line.split(' ').nth(1))
                        .unwrap_or("")
                        .to_owned();
                    let page = "<!doctype html><title>webmcp-host</title><p>Signed in: you can close this page.</p>";
                    let _ = write!(
                        socket,
                        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                        page.len()
                    );
                    if target.starts_with("/callback") {
                        let origin = redirect_uri.trim_end_matches("/callback");
                        return Ok(format!("{origin}{target}"));
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(100));
                }
                Err(e) => return Err(format!("the redirect listener failed: {e}")),
            }
        }
        Err(format!("no sign-in within {} s", wait.as_secs()))
    }

    /// `initialize` and `notifications/initialized`, then the GET stream for server messages.
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
        // The GET stream for server messages, open before anything else is asked (servers may
        // answer 405: then there is none).
        let listen = self.session.listen(None);
        let stream = self.start(listen);
        self.listen = Some(stream);
        let deadline = Instant::now() + Duration::from_secs(5);
        while let Ok(frame) = self
            .rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            match frame {
                Frame::Answer {
                    stream: s, status, ..
                } if s == stream => {
                    if !(200..300).contains(&status) {
                        self.listen = None;
                    }
                    break;
                }
                Frame::Failed { stream: s, .. } | Frame::End { stream: s, .. } if s == stream => {
                    self.listen = None;
                    break;
                }
                Frame::Message { message } => {
                    let events = self.session.receive(message);
                    self.answer_requests(&events);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Every tool, over all pages.
    pub fn tools(&mut self) -> Result<(Vec<McpTool>, Vec<String>), String> {
        let mut listing = ToolListing::default();
        loop {
            let request = listing.request(&mut self.session)?;
            let events = self.exchange(request, true)?;
            if listing.absorb(events)? {
                return Ok((listing.tools, listing.problems));
            }
        }
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
        let events = self.exchange(request, true)?;
        for event in events {
            match event {
                // By name: after a 404 the call was sent again with a new id.
                McpEvent::CallDone {
                    name: done, result, ..
                } if done == name => return Ok(result),
                McpEvent::Failed { error, .. } => return Err(error),
                _ => {}
            }
        }
        Err(format!("the server did not answer tools/call `{name}`"))
    }

    /// `DELETE` the session (errors are only logged: the session ends either way).
    pub fn close(&mut self) {
        if let Some(request) = self.session.terminate() {
            let stream = self.start(request);
            let deadline = Instant::now() + Duration::from_secs(5);
            while let Ok(frame) = self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                match frame {
                    Frame::End { stream: s, .. } if s == stream => break,
                    Frame::Failed { stream: s, error } if s == stream => {
                        self.log.push(format!("DELETE failed: {error}"));
                        break;
                    }
                    _ => {}
                }
            }
        }
    }

    /// Starts one HTTP exchange on its own thread; its frames come to the channel.
    fn start(&mut self, request: HttpRequest) -> u64 {
        self.next_stream += 1;
        let stream = self.next_stream;
        if self.trace {
            let what = serde_json::from_str::<Value>(&request.body)
                .ok()
                .and_then(|b| b["method"].as_str().map(str::to_owned))
                .unwrap_or_default();
            eprintln!("webmcp-host: → {} {} {what}", request.method, request.url);
        }
        let agent = self.agent.clone();
        let mut headers = self.headers.clone();
        if let Some(record) = &self.record {
            headers.push(record.bearer());
        }
        let tx = self.tx.clone();
        std::thread::spawn(move || read_exchange(agent, request, headers, stream, tx));
        stream
    }

    /// Sends one request and reads what comes until its answer (or, for a notification, the
    /// end of its answer). Messages from any stream meanwhile are handled; server requests are
    /// answered. A 404 on a live session starts a new one and sends the request again (once).
    fn exchange(
        &mut self,
        outgoing: Outgoing,
        retry_on_404: bool,
    ) -> Result<Vec<McpEvent>, String> {
        let had_session = self.session.session_id().is_some();
        let method = method_of(&outgoing);
        self.keep_fresh();
        let mut stream = self.start(outgoing.request.clone());
        let mut deadline = Instant::now() + self.timeout;
        let mut events = Vec::new();
        let mut resumes = 0;
        let mut authorizations = 0;
        loop {
            let frame = match self
                .rx
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            {
                Ok(frame) => frame,
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    if let Some(id) = outgoing.id {
                        let cancel = self.session.cancel(id, "timed out");
                        self.start(cancel.request);
                    }
                    return Err(format!(
                        "no answer to {method} within {} ms",
                        self.timeout.as_millis()
                    ));
                }
            };
            match frame {
                Frame::Answer {
                    stream: s,
                    status,
                    content_type,
                    session_id,
                    www_authenticate,
                    location,
                } => {
                    let ours = s == stream;
                    if (300..400).contains(&status) && ours {
                        return Err(format!("the server answered {method} with a redirect to {}; redirects are not followed", location.unwrap_or_default()));
                    }
                    let answer = self.session.answer(
                        status,
                        content_type.as_deref(),
                        session_id.as_deref(),
                        if ours { had_session } else { true },
                        www_authenticate.as_deref(),
                    );
                    match answer {
                        Ok(_) => {}
                        Err(error) if !ours => {
                            if Some(s) == self.listen {
                                self.listen = None; // no GET stream on this server (405 …)
                            }
                            if s != stream && !matches!(error, McpError::Http { status: 405, .. }) {
                                self.log.push(format!("a side stream failed: {error}"));
                            }
                        }
                        Err(
                            McpError::Unauthorized { www_authenticate }
                            | McpError::InsufficientScope { www_authenticate },
                        ) if self.auth.is_some() => {
                            authorizations += 1;
                            if authorizations > MAX_AUTHORIZATIONS {
                                let challenge =
                                    BearerChallenge::from_header(www_authenticate.as_deref());
                                return Err(format!(
                                    "{method}: the server still refuses after {MAX_AUTHORIZATIONS} sign-ins ({status}{}); giving up",
                                    challenge
                                        .error_description
                                        .or(challenge.error)
                                        .map(|e| format!(": {e}"))
                                        .unwrap_or_default()
                                ));
                            }
                            if let Err(why) = self.authorize(www_authenticate.as_deref()) {
                                return Err(format!(
                                    "{method}: the server requires authorization ({status}), and signing in failed: {}",
                                    self.redact(&why)
                                ));
                            }
                            stream = self.start(outgoing.request.clone());
                            deadline = Instant::now() + self.timeout;
                        }
                        Err(McpError::SessionExpired) if retry_on_404 => {
                            self.log
                                .push("the session expired (404); starting a new one".into());
                            self.connect()?;
                            let again = self.session.again(&outgoing.request);
                            return self.exchange(again, false);
                        }
                        Err(McpError::Http { status, message }) if message.is_empty() => {
                            return Err(format!("the server answered {status} to {method}"))
                        }
                        Err(error) => return Err(self.redact(&format!("{method}: {error}"))),
                    }
                }
                Frame::Message { message, .. } => {
                    let new = self.session.receive(message);
                    self.answer_requests(&new);
                    for event in &new {
                        if let McpEvent::Progress {
                            progress,
                            total,
                            message,
                            ..
                        } = event
                        {
                            let total = total.map(|t| format!("/{t}")).unwrap_or_default();
                            let message = message
                                .as_deref()
                                .map(|m| format!(" {m}"))
                                .unwrap_or_default();
                            eprintln!("webmcp-host: progress {progress}{total}{message}");
                        }
                    }
                    events.extend(new);
                    if let Some(id) = outgoing.id {
                        if !self.session.pending().any(|(p, _)| p == id) {
                            return Ok(events);
                        }
                    }
                }
                // Our own answer is not JSON-RPC: it will not become one by waiting.
                Frame::Skipped { stream: s, error } if s == stream => {
                    return Err(format!("{method}: {error}"))
                }
                Frame::Skipped { error, .. } => {
                    self.log.push(format!("skipped a message: {error}"))
                }
                Frame::Failed { stream: s, error } => {
                    if s == stream {
                        return Err(format!("{method}: {error}"));
                    }
                    if Some(s) == self.listen {
                        self.listen = None;
                    }
                }
                Frame::End {
                    stream: s,
                    last_event_id,
                    retry_ms,
                    error,
                } => {
                    if let Some(error) = error {
                        self.log.push(format!("a stream broke: {error}"));
                    }
                    if Some(s) == self.listen {
                        self.listen = None;
                    }
                    if s != stream {
                        continue;
                    }
                    let awaited = outgoing
                        .id
                        .filter(|id| self.session.pending().any(|(p, _)| p == *id));
                    if awaited.is_none() {
                        return Ok(events);
                    }
                    // The answer's stream ended without the answer: resume it.
                    resumes += 1;
                    if resumes > MAX_RESUMES || last_event_id.is_none() && self.listen.is_some() {
                        if resumes > MAX_RESUMES {
                            return Err(format!("the server's stream for {method} broke {MAX_RESUMES} times without an answer"));
                        }
                        continue; // the answer may still come on the GET stream
                    }
                    std::thread::sleep(Duration::from_millis(retry_ms.unwrap_or(1000).min(30_000)));
                    self.log.push(format!(
                        "resuming the stream after event {}",
                        last_event_id.as_deref().unwrap_or("(none)")
                    ));
                    let listen = self.session.listen(last_event_id.as_deref());
                    stream = self.start(listen);
                }
            }
        }
    }

    /// Answers the server's requests among `events`, each on its own exchange.
    fn answer_requests(&mut self, events: &[McpEvent]) {
        for event in events {
            if let McpEvent::ServerRequest { id, method, params } = event {
                let answer = (self.on_request)(method, params.as_ref());
                self.log.push(format!("answered the server's {method}"));
                let reply = self.session.reply(id, answer);
                self.start(reply.request);
            }
        }
    }
}

/// Performs one request and streams what it reads to `tx` (runs on its own thread).
fn read_exchange(
    agent: ureq::Agent,
    request: HttpRequest,
    headers: Vec<(String, String)>,
    stream: u64,
    tx: Sender<Frame>,
) {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(request.url.as_str());
    for (name, value) in request.headers.iter().chain(headers.iter()) {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let response = match builder.body(request.body.clone()) {
        Ok(built) => agent.run(built),
        Err(e) => {
            let _ = tx.send(Frame::Failed {
                stream,
                error: format!("bad request: {e}"),
            });
            return;
        }
    };
    let response = match response {
        Ok(response) => response,
        Err(e) => {
            let _ = tx.send(Frame::Failed {
                stream,
                error: format!("{} could not be reached: {e}", request.url),
            });
            return;
        }
    };
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let content_type = header("content-type");
    let is_sse = content_type
        .as_deref()
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
    let status = response.status().as_u16();
    let answer = Frame::Answer {
        stream,
        status,
        content_type: content_type.clone(),
        session_id: header("mcp-session-id"),
        www_authenticate: header("www-authenticate"),
        location: header("location"),
    };
    if tx.send(answer).is_err() {
        return;
    }
    let mut body = response.into_body();
    let mut reader = body.as_reader();
    if !(200..300).contains(&status) {
        let _ = tx.send(Frame::End {
            stream,
            last_event_id: None,
            retry_ms: None,
            error: None,
        });
        return;
    }
    if !is_sse {
        let mut text = String::new();
        let error = reader
            .read_to_string(&mut text)
            .err()
            .map(|e| format!("the answer broke: {e}"));
        if !text.trim().is_empty() {
            send_messages(&tx, stream, &text);
        }
        let _ = tx.send(Frame::End {
            stream,
            last_event_id: None,
            retry_ms: None,
            error,
        });
        return;
    }
    let mut decoder = SseDecoder::new();
    let mut bytes = vec![0u8; 16 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    let mut retry_ms = None;
    let mut last_event_id = None;
    loop {
        let (n, error) = match reader.read(&mut bytes) {
            Ok(n) => (n, None),
            Err(e) => (0, Some(format!("{e}"))),
        };
        let events = if n == 0 {
            decoder.finish().into_iter().collect::<Vec<_>>()
        } else {
            carry.extend_from_slice(&bytes[..n]);
            let valid = match std::str::from_utf8(&carry) {
                Ok(_) => carry.len(),
                Err(e) => e.valid_up_to(),
            };
            let text = String::from_utf8_lossy(&carry[..valid]).into_owned();
            carry.drain(..valid);
            decoder.push(&text)
        };
        for event in events {
            if event.truncated {
                let _ = tx.send(Frame::End {
                    stream,
                    last_event_id: None,
                    retry_ms: None,
                    error: Some(format!(
                        "an SSE event of the server passed {} bytes (max_sse_event_bytes)",
                        webmcp_host::core::provider::sse::MAX_SSE_EVENT_BYTES
                    )),
                });
                return;
            }
            if event.id.is_some() {
                last_event_id = event.id.clone();
            }
            if event.retry.is_some() {
                retry_ms = event.retry;
            }
            if !event.data.trim().is_empty() {
                send_messages(&tx, stream, &event.data);
            }
        }
        if n == 0 {
            let _ = tx.send(Frame::End {
                stream,
                last_event_id,
                retry_ms,
                error,
            });
            return;
        }
    }
}

fn send_messages(tx: &Sender<Frame>, stream: u64, text: &str) {
    match parse_messages(text) {
        Ok(messages) => {
            for message in messages {
                let _ = tx.send(Frame::Message { message });
            }
        }
        Err(error) => {
            let _ = tx.send(Frame::Skipped { stream, error });
        }
    }
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

/// Bytes from the operating system's random source.
fn random_bytes(n: usize) -> Result<Vec<u8>, String> {
    let mut bytes = vec![0u8; n];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no random source for the sign-in: {e}"))?;
    Ok(bytes)
}

fn strip(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
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
