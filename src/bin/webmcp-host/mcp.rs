//! `webmcp-host mcp`: the CLI's driver of the core's MCP [`Exchange`], with blocking HTTP.
//!
//! Every HTTP exchange runs on a thread of its own that sends what it reads (the answer's
//! head, the body's bytes, its end) to one channel; the main thread feeds the machine from it
//! and sleeps until the machine's next deadline. So the server can talk on the POST's SSE
//! stream and on the GET stream at once. Every decision (resumption, a new session after 404,
//! cancellation, caps, answers to server requests) is the machine's.
//!
//! Authorization: when the machine asks, a token that can be refreshed is, else the core's
//! sign-in [`Flow`] runs (discovery, client registration, authorization code with PKCE,
//! token). The authorization URL is fetched without following its redirect: an authorization
//! server that approves at once (as the conformance suite's does) redirects straight to the
//! redirect URI, whose `code` and `state` are read from the `Location`; otherwise the URL is
//! printed for the person to open, and the redirect arrives at a loopback listener.
//!
//! Here: the driver and its HTTP exchanges; the sign-in in [`sign_in`]; the command's
//! arguments, its actions and the conformance client in [`command`](mod@command).
//!
//! [`Flow`]: webmcp_host::core::mcp::auth::Flow

use std::io::Read;
use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use webmcp_host::core::http::HttpRequest;
use webmcp_host::core::limits::NOTIFY_WAIT_MS;
use webmcp_host::core::mcp::auth::FlowConfig;
use webmcp_host::core::mcp::exchange::{
    Deadline, Elicitation, Exchange, Failure, Head, Listening, Output, Settings, StreamId,
};
use webmcp_host::core::mcp::modern::Protocols;
use webmcp_host::core::mcp::tools::McpTool;
use webmcp_host::core::mcp::{CallResult, McpError, McpEvent, Outgoing, Session, ToolListing};

mod command;
mod sign_in;

pub use command::command;
pub use sign_in::sign_in_setup;

/// What a reader thread saw.
enum Frame {
    Head(StreamId, Head),
    Body(StreamId, Vec<u8>),
    End(StreamId, Option<String>),
}

pub struct Driver {
    session: Session,
    machine: Exchange,
    agent: ureq::Agent,
    /// For the sign-in's requests: the same, with a total time per request.
    auth_agent: ureq::Agent,
    tx: Sender<Frame>,
    rx: Receiver<Frame>,
    trace: bool,
    log: Vec<String>,
    /// Sign-in when the server asks (None: a 401 is an error): the client's part of the
    /// flow's configuration, and how long the person has to sign in in a browser.
    auth: Option<(FlowConfig, Duration)>,
    /// The loopback listener of the redirect URI (one for the whole run: a registered
    /// client's redirect URI stays the same).
    redirect: Option<(TcpListener, String)>,
    /// Notifications still being posted (a call's `notifications/cancelled`): the session
    /// ends after them, so a timed-out call's cancellation reaches the server before exit.
    posts: Vec<std::thread::JoinHandle<()>>,
}

impl Driver {
    pub fn new(
        url: &str,
        headers: Vec<(String, String)>,
        timeout_ms: u32,
        auth: Option<(FlowConfig, Duration)>,
        protocols: Protocols,
    ) -> Self {
        let agent = |total: Option<Duration>| -> ureq::Agent {
            ureq::Agent::config_builder()
                .timeout_connect(Some(Duration::from_secs(10)))
                .timeout_global(total)
                .http_status_as_error(false)
                .max_redirects(0)
                .build()
                .into()
        };
        let (tx, rx) = channel();
        Driver {
            session: Session::new(url).with_headers(headers),
            machine: Exchange::new(Settings {
                client_name: "webmcp-host".into(),
                client_version: webmcp_host::VERSION.into(),
                capabilities: json!({"elicitation": {}}),
                timeout_ms,
                deadline: Deadline::Fixed,
                elicitation: Elicitation::Defaults,
                protocols,
            }),
            agent: agent(None),
            auth_agent: agent(Some(Duration::from_millis(u64::from(timeout_ms)))),
            tx,
            rx,
            trace: std::env::var_os("WEBMCP_HOST_TRACE").is_some(),
            log: Vec::new(),
            auth,
            redirect: None,
            posts: Vec::new(),
        }
    }

    /// Ends the session and prints the log; the exit code, or `failed` after the error (said
    /// of `what`, without secrets).
    pub fn finish(
        mut self,
        outcome: Result<ExitCode, String>,
        what: &str,
        failed: ExitCode,
    ) -> ExitCode {
        let code = outcome.unwrap_or_else(|message| {
            eprintln!("webmcp-host: {what}: {}", self.redact(&message));
            failed
        });
        self.close();
        for line in &self.log {
            eprintln!("webmcp-host: {line}");
        }
        code
    }

    /// `text` without any secret of the sign-in.
    pub fn redact(&self, text: &str) -> String {
        self.session.redact(text)
    }

    /// `server/discover` (2026-07-28), else `initialize` and `notifications/initialized` (as
    /// `--protocol` says), then the stream for server messages, open before anything else is
    /// asked: `subscriptions/listen` in 2026-07-28 (when the server announces tool changes),
    /// else the GET stream (servers may answer 405: then there is none).
    pub fn connect(&mut self) -> Result<(), String> {
        self.machine.connect(&mut self.session, now_ms());
        self.run(None)?;
        self.machine.listen(&mut self.session);
        let _ = self.drive(Some(Instant::now() + Duration::from_secs(5)));
        Ok(())
    }

    /// Every tool, over all pages.
    pub fn tools(&mut self) -> Result<(Vec<McpTool>, Vec<String>), String> {
        let mut listing = ToolListing::default();
        loop {
            let request = listing.request(&mut self.session)?;
            let events = self.run(Some(request))?;
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
        let progress = Some(json!(format!("progress-{name}")));
        let request = self.session.call_tool(name, arguments, progress);
        McpEvent::call_outcome(self.run(Some(request))?, name)
            .unwrap_or_else(|| Err(format!("the server did not answer tools/call `{name}`")))
    }

    /// `DELETE` the session (errors are only logged: the session ends either way).
    pub fn close(&mut self) {
        let deadline = Instant::now() + Duration::from_millis(NOTIFY_WAIT_MS);
        while self.posts.iter().any(|post| !post.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.posts.iter().any(|post| !post.is_finished()) {
            self.log.push(format!(
                "a notification was still unsent after {NOTIFY_WAIT_MS} ms"
            ));
        }
        let Some(request) = self.session.terminate() else {
            return;
        };
        let (tx, rx) = channel();
        let agent = self.agent.clone();
        std::thread::spawn(move || {
            let _ = tx.send(send(&agent, &request).map(|_| ()));
        });
        if let Ok(Err(error)) = rx.recv_timeout(Duration::from_secs(5)) {
            self.log.push(format!("DELETE failed: {error}"));
        }
    }

    /// Sends `request` (none: the job already started) and drives the machine to its end.
    fn run(&mut self, request: Option<Outgoing>) -> Result<Vec<McpEvent>, String> {
        if let Some(request) = request {
            self.keep_fresh();
            self.machine.request(request, now_ms());
        }
        match self.drive(None) {
            Some(Ok(events)) => Ok(events),
            Some(Err(failure)) => Err(self.describe(failure)),
            None => Err("the exchange ended without an answer".into()),
        }
    }

    /// Performs the machine's outputs and feeds it until its job is done (or, with no job,
    /// until the GET stream's fate is known or `until` passes).
    fn drive(&mut self, until: Option<Instant>) -> Option<Result<Vec<McpEvent>, Failure>> {
        loop {
            while let Some(output) = self.machine.poll() {
                match output {
                    Output::Send { stream, request } => {
                        self.start(stream, request);
                    }
                    // Read like any answer, under an id the machine never gave: it ignores it.
                    Output::Post(request) => {
                        self.posts.retain(|post| !post.is_finished());
                        let post = self.start(StreamId(0), request);
                        self.posts.push(post);
                    }
                    Output::Abort(_) => {} // the thread's frames are ignored from now on
                    Output::Event(event) => {
                        if let Some(line) = event.progress_text() {
                            eprintln!("webmcp-host: {line}");
                        }
                        if event == McpEvent::ToolsChanged {
                            self.log
                                .push("the server's tools changed (tools/list_changed)".into());
                        }
                    }
                    Output::Log(line) => self.log.push(line),
                    Output::Authorize { refusal, .. } => self.authorize(refusal),
                    Output::Reconnected => self.machine.listen(&mut self.session),
                    Output::Done(outcome) => return Some(outcome),
                }
            }
            let now = now_ms();
            let opening = self.machine.listening() == Listening::Opening;
            let wait = match (self.machine.busy(), until) {
                (false, Some(until)) if opening => until.saturating_duration_since(Instant::now()),
                (false, _) => return None,
                (true, _) => match self.machine.poll_timeout() {
                    Some(at) => Duration::from_millis((at - now).max(0.0) as u64),
                    None => Duration::from_secs(1),
                },
            };
            let frame = self.rx.recv_timeout(wait).ok();
            let (session, now) = (&mut self.session, now_ms());
            match frame {
                Some(Frame::Head(stream, head)) => {
                    self.machine.handle_head(session, stream, head, now)
                }
                Some(Frame::Body(stream, bytes)) => {
                    self.machine.handle_body(session, stream, &bytes, now)
                }
                Some(Frame::End(stream, error)) => {
                    self.machine.handle_end(session, stream, error, now)
                }
                None if !self.machine.busy() => return None,
                None => self.machine.handle_timeout(session, now),
            }
        }
    }

    /// The failure as the CLI says it.
    fn describe(&self, failure: Failure) -> String {
        match failure {
            Failure::Timeout { method, ms } => format!("no answer to {method} within {ms} ms"),
            Failure::Refused {
                method,
                error: McpError::Http { status, message },
            } if message.is_empty() => {
                format!("the server answered {status} to {method}")
            }
            other => self.redact(&other.to_string()),
        }
    }

    /// Starts one HTTP exchange on its own thread; its frames come to the channel.
    fn start(&mut self, stream: StreamId, request: HttpRequest) -> std::thread::JoinHandle<()> {
        if self.trace {
            let what = method_of(&request.body);
            eprintln!("webmcp-host: → {} {} {what}", request.method, request.url);
        }
        let agent = self.agent.clone();
        let tx = self.tx.clone();
        std::thread::spawn(move || read_exchange(&agent, &request, stream, &tx))
    }
}

/// Sends one request as the core built it (no redirect followed).
fn send(
    agent: &ureq::Agent,
    request: &HttpRequest,
) -> Result<ureq::http::Response<ureq::Body>, String> {
    let mut builder = ureq::http::Request::builder()
        .method(request.method.as_str())
        .uri(request.url.as_str());
    for (name, value) in &request.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let built = builder
        .body(request.body.clone())
        .map_err(|e| format!("bad request: {e}"))?;
    agent.run(built).map_err(|e| e.to_string())
}

fn header(response: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// Performs one request and sends what it reads to `tx` (runs on its own thread).
fn read_exchange(agent: &ureq::Agent, request: &HttpRequest, stream: StreamId, tx: &Sender<Frame>) {
    let response = match send(agent, request) {
        Ok(response) => response,
        Err(error) => {
            let _ = tx.send(Frame::End(stream, Some(error)));
            return;
        }
    };
    let status = response.status().as_u16();
    let head = Head {
        status,
        content_type: header(&response, "content-type"),
        session_id: header(&response, "mcp-session-id"),
        www_authenticate: header(&response, "www-authenticate"),
        location: header(&response, "location"),
        retry_after: header(&response, "retry-after"),
    };
    // A 4xx with a JSON body is read too: 2026-07-28 servers say why in a JSON-RPC error.
    let json = (head.content_type.as_deref())
        .is_some_and(|c| c.to_ascii_lowercase().starts_with("application/json"));
    let read = (200..300).contains(&status) || (400..500).contains(&status) && json;
    if tx.send(Frame::Head(stream, head)).is_err() || !read {
        let _ = tx.send(Frame::End(stream, None));
        return;
    }
    let mut body = response.into_body();
    let mut reader = body.as_reader();
    let mut bytes = vec![0u8; 16 * 1024];
    loop {
        let frame = match reader.read(&mut bytes) {
            Ok(0) => Frame::End(stream, None),
            Ok(n) => Frame::Body(stream, bytes[..n].to_vec()),
            Err(e) => Frame::End(stream, Some(e.to_string())),
        };
        let last = matches!(frame, Frame::End(..));
        if tx.send(frame).is_err() || last {
            return;
        }
    }
}

fn now_ms() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64() * 1000.0)
        .unwrap_or(0.0)
}

fn method_of(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|b| b["method"].as_str().map(str::to_owned))
        .unwrap_or_default()
}
