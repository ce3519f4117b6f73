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

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};
use webmcp_host::core::limits::NOTIFY_WAIT_MS;
use webmcp_host::core::mcp::auth::{
    loopback_redirect, loopback_response, BearerChallenge, ClientCredentials, Flow, FlowConfig,
    FlowSecrets, Step, TokenState, MAX_AUTH_BODY_BYTES,
};
use webmcp_host::core::mcp::exchange::{
    Deadline, Elicitation, Exchange, Failure, Head, Listening, Output, Refusal, Settings, StreamId,
};
use webmcp_host::core::mcp::modern::Protocols;
use webmcp_host::core::mcp::tools::{self, McpTool};
use webmcp_host::core::mcp::{CallResult, McpError, McpEvent, Outgoing, Session, ToolListing};
use webmcp_host::core::provider::HttpRequest;

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

/// How the CLI signs in: with a given client (id, secret), else this client's metadata
/// document URL where the server supports it, else registration; `wait_s` is how long the
/// person has to sign in in a browser.
pub fn sign_in_setup(
    client_id: Option<String>,
    secret: Option<String>,
    metadata_document: Option<String>,
    wait_s: u64,
) -> (FlowConfig, Duration) {
    let config = FlowConfig {
        client_name: "webmcp-host".into(),
        preregistered: ClientCredentials::given(client_id, secret),
        metadata_document,
        ..FlowConfig::default()
    };
    (config, Duration::from_secs(wait_s))
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

    /// Answers the machine's sign-in request: a refresh when the token just expired and can
    /// be refreshed, else the whole flow.
    fn authorize(&mut self, refusal: Refusal) {
        let status = refusal.status();
        let Some(setup) = self.auth.clone() else {
            return self.machine.unauthorized(refusal.error().to_string());
        };
        let challenge = BearerChallenge::from_header(refusal.challenge());
        let outcome = if !challenge.insufficient_scope() && self.refresh() {
            Ok(())
        } else {
            self.sign_in(&setup, challenge)
        };
        match outcome {
            Ok(()) => self.machine.authorized(&mut self.session, now_ms()),
            Err(why) => self.machine.unauthorized(format!(
                "the server requires authorization ({status}), and signing in failed: {}",
                self.redact(&why)
            )),
        }
    }

    /// The whole sign-in: the core's flow, its requests performed here.
    fn sign_in(
        &mut self,
        setup: &(FlowConfig, Duration),
        challenge: BearerChallenge,
    ) -> Result<(), String> {
        let redirect_uri = self.redirect_uri()?;
        let config = FlowConfig {
            server_url: self.session.url().to_owned(),
            redirect_uri: redirect_uri.clone(),
            challenge,
            previous: self.session.auth().cloned(),
            ..setup.0.clone()
        };
        let mut flow = Flow::new(config, FlowSecrets::from_random(&random_bytes()?));
        loop {
            match flow.step() {
                Step::Fetch(request) => {
                    if self.trace {
                        let url = request.url.split(['?', '#']).next().unwrap_or("");
                        eprintln!("webmcp-host: → {} {url} (sign-in)", request.method);
                    }
                    let (status, body, _) = self.http_once(&request);
                    flow.response(status, &body, now_ms());
                }
                Step::Authorize { url } => match self.follow(&url, &redirect_uri, setup.1) {
                    Ok(redirect) => flow.redirected(&redirect),
                    Err(why) => flow.abandoned(&why),
                },
                Step::Done(record) => {
                    self.log.push(record.note());
                    self.session.set_auth(Some(record));
                    return Ok(());
                }
                Step::Failed(why) => return Err(why),
            }
        }
    }

    /// Refreshes the token when it can; whether it did.
    fn refresh(&mut self) -> bool {
        let Some(mut record) = self.session.auth().cloned() else {
            return false;
        };
        let Some(request) = record.refresh_request() else {
            return false;
        };
        let (status, body, _) = self.http_once(&request);
        if let Err(why) = record.refreshed(status, &body, now_ms()) {
            let line = format!("the token could not be refreshed: {why}");
            self.log.push(line);
            return false;
        }
        self.session.set_auth(Some(record));
        self.log.push("refreshed the access token".into());
        true
    }

    /// Refreshes a token about to expire before it is used (a failure is left to the 401).
    fn keep_fresh(&mut self) {
        if self
            .session
            .auth()
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

    /// One sign-in request, no redirect followed: status (0 when unreachable), body (capped)
    /// and `Location`.
    fn http_once(&self, request: &HttpRequest) -> (u16, String, Option<String>) {
        match send(&self.auth_agent, request) {
            Ok(response) => {
                let status = response.status().as_u16();
                let location = header(&response, "location");
                let mut text = String::new();
                let mut body = response.into_body();
                let _ = body
                    .as_reader()
                    .take(MAX_AUTH_BODY_BYTES as u64 + 1)
                    .read_to_string(&mut text);
                (status, text, location)
            }
            Err(e) => (0, e, None),
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
        if let Some(location) =
            location.filter(|l| (300..400).contains(&status) && l.starts_with(redirect_uri))
        {
            return Ok(location);
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
                    let _ = socket.write_all(loopback_response().as_bytes());
                    let text = String::from_utf8_lossy(&head[..n]);
                    if let Some(redirect) = loopback_redirect(&text, redirect_uri) {
                        return Ok(redirect);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(100))
                }
                Err(e) => return Err(format!("the redirect listener failed: {e}")),
            }
        }
        Err(format!("no sign-in within {} s", wait.as_secs()))
    }
}

/// `webmcp-host mcp …`: lists a server's tools or calls one, or runs a conformance scenario.
pub fn command(args: &[&str]) -> ExitCode {
    if let ["--conformance", .., url] = args {
        return conformance(url);
    }
    let (mut headers, mut namespace, mut trusted, mut sign_in) = (Vec::new(), None, false, true);
    let (mut client_id, mut metadata_document) = (None, None);
    let mut timeout_ms = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    let mut protocols = Protocols::Auto;
    let mut positional: Vec<&str> = Vec::new();
    let mut rest = args.iter().copied();
    while let Some(arg) = rest.next() {
        let mut value = |what: &str| rest.next().ok_or(format!("{arg} needs {what}"));
        let result = match arg {
            "--trusted" => Ok(true).map(|t| trusted = t),
            "--no-sign-in" => Ok(false).map(|s| sign_in = s),
            "--header" => value("K:V").and_then(parse_header).map(|h| headers.push(h)),
            "--namespace" => value("a name").map(|n| namespace = Some(n)),
            "--client-id" => value("an id").map(|c| client_id = Some(c.to_owned())),
            "--client-metadata-url" => (value("an https URL").ok())
                .filter(|u| u.starts_with("https://"))
                .map(|u| metadata_document = Some(u.to_owned()))
                .ok_or("--client-metadata-url needs an https URL".to_owned()),
            "--protocol" => (value("auto, legacy, modern or a revision").ok())
                .and_then(Protocols::named)
                .map(|p| protocols = p)
                .ok_or(
                    "--protocol takes auto, legacy (2025-11-25), modern (2026-07-28) or a revision"
                        .to_owned(),
                ),
            "--timeout" => (value("milliseconds").ok())
                .and_then(|t| t.parse::<u32>().ok().filter(|t| *t > 0))
                .map(|t| timeout_ms = t)
                .ok_or("--timeout takes milliseconds".to_owned()),
            other if other.starts_with("--") => Err(format!("unknown option `{other}`")),
            other => Ok(other).map(|p| positional.push(p)),
        };
        if let Err(message) = result {
            return crate::usage_error(&message);
        }
    }
    let (url, action) = match positional.as_slice() {
        [url, "tools"] => (*url, Action::Tools),
        [url, "call"] => (*url, Action::Script),
        [url, "call", pairs @ ..] if pairs.len() % 2 == 0 => {
            let mut calls = Vec::new();
            for pair in pairs.chunks(2) {
                match arguments_of(pair[1]) {
                    Ok(arguments) => calls.push((pair[0], arguments)),
                    Err(e) => return crate::usage_error(&format!("`{}`: {e}", pair[0])),
                }
            }
            (*url, Action::Calls(calls))
        }
        _ => {
            return crate::usage_error(
                "mcp takes URL tools, URL call NAME JSON [NAME JSON]…, or URL call (JSON lines of {\"name\", \"arguments\"} on stdin)",
            )
        }
    };
    if let Err(message) = webmcp_host::core::provider::check_base_url(url) {
        return crate::usage_error(&message.replace("base URL", "server URL"));
    }
    let secret = std::env::var("WEBMCP_HOST_CLIENT_SECRET").ok();
    let setup = sign_in.then(|| sign_in_setup(client_id, secret, metadata_document, 300));
    let mut driver = Driver::new(url, headers, timeout_ms, setup, protocols);
    let outcome = run_mcp(&mut driver, action, namespace, trusted);
    driver.finish(outcome, url, ExitCode::from(2))
}

/// What `mcp URL …` does once connected.
enum Action<'a> {
    /// `tools`: lists them.
    Tools,
    /// `call NAME JSON [NAME JSON]…`: those calls, in order, on one session.
    Calls(Vec<(&'a str, serde_json::Map<String, serde_json::Value>)>),
    /// `call` alone: the calls of a JSON-lines script on standard input, on one session.
    Script,
}

fn run_mcp(
    driver: &mut Driver,
    action: Action,
    namespace: Option<&str>,
    trusted: bool,
) -> Result<ExitCode, String> {
    driver.connect()?;
    let (tools, problems) = driver.tools()?;
    for problem in &problems {
        eprintln!("webmcp-host: skipped: {problem}");
    }
    let mut failed = false;
    let mut one = |driver: &mut Driver,
                   name: &str,
                   arguments: Result<serde_json::Map<String, serde_json::Value>, String>|
     -> Result<(), String> {
        let line = arguments.and_then(|arguments| {
            let name = namespace
                .and_then(|ns| name.strip_prefix(&format!("{ns}__")))
                .unwrap_or(name);
            let Some(tool) = tools.iter().find(|t| t.name == name) else {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "no tool `{name}`; the server offers: {}",
                    names.join(", ")
                ));
            };
            // A broken session ends the script (`?` below); a failed call is its line.
            Ok(driver
                .call(name, &arguments)
                .map(|result| tools::result_line(Some(tool), &result)))
        });
        let (ok, line) = match line {
            Ok(called) => called?,
            Err(error) => (false, serde_json::json!({"ok": false, "error": error})),
        };
        failed |= !ok;
        println!("{line}");
        Ok(())
    };
    match action {
        Action::Tools => {
            for tool in &tools {
                println!("{}", tools::listing_line(tool, namespace, trusted));
            }
        }
        Action::Calls(calls) => {
            for (name, arguments) in calls {
                one(driver, name, Ok(arguments))?;
            }
        }
        Action::Script => {
            use std::io::BufRead;
            for (at, line) in std::io::stdin().lock().lines().enumerate() {
                let line = line.map_err(|e| format!("standard input could not be read: {e}"))?;
                if line.trim().is_empty() {
                    continue;
                }
                let (name, arguments) = script_line(&line);
                let arguments = arguments.map_err(|e| format!("line {}: {e}", at + 1));
                one(driver, &name, arguments)?;
            }
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A call's arguments from its JSON text: an object, or why not.
fn arguments_of(json: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err("the call's JSON must be an object of arguments".into()),
        Err(e) => Err(format!("the call's arguments are not JSON: {e}")),
    }
}

/// One line of a call script: `{"name": "…", "arguments": {…}}` (`arguments` may be left out).
fn script_line(
    line: &str,
) -> (
    String,
    Result<serde_json::Map<String, serde_json::Value>, String>,
) {
    let value = match serde_json::from_str::<serde_json::Value>(line) {
        Ok(value) => value,
        Err(e) => return (String::new(), Err(format!("not JSON: {e}"))),
    };
    let name = value
        .get("name")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .to_owned();
    if name.is_empty() {
        return (
            name,
            Err("a call is {\"name\": \"…\", \"arguments\": {…}}: no name".into()),
        );
    }
    match value.get("arguments") {
        None | Some(serde_json::Value::Null) => (name, Ok(serde_json::Map::new())),
        Some(serde_json::Value::Object(map)) => (name, Ok(map.clone())),
        Some(_) => (name, Err("`arguments` must be an object".into())),
    }
}

/// The conformance suite's client: the scenario (`MCP_CONFORMANCE_SCENARIO`) names what to
/// do. Its authorization server approves at once; some scenarios give pre-registered
/// credentials in `MCP_CONFORMANCE_CONTEXT`, and `auth/basic-cimd` expects this client's
/// metadata document URL.
fn conformance(url: &str) -> ExitCode {
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: serde_json::Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or_default();
    let text = |name: &str| {
        context
            .get(name)
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    let metadata = Some("https://conformance-test.local/client-metadata.json".to_owned());
    let setup = sign_in_setup(text("client_id"), text("client_secret"), metadata, 10);
    let timeout = webmcp_host::core::mcp::DEFAULT_TIMEOUT_MS;
    // The suite names the revision to speak: 2026-07-28 statelessly, the others with
    // `initialize` (its mocks speak only that one).
    let protocols = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .ok()
        .and_then(|v| Protocols::named(&v))
        .unwrap_or(Protocols::Legacy);
    let mut driver = Driver::new(url, Vec::new(), timeout, Some(setup), protocols);
    // The calls the scenario asks for (`toolCalls`: each name with its arguments), else
    // every listed tool with example arguments.
    let asked: Option<Vec<(String, Map<String, Value>)>> = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .map(|calls| {
            (calls.iter())
                .filter_map(|c| {
                    let name = c.get("name")?.as_str()?.to_owned();
                    let arguments = c.get("arguments").and_then(Value::as_object).cloned();
                    Some((name, arguments.unwrap_or_default()))
                })
                .collect()
        });
    let outcome = (|| -> Result<ExitCode, String> {
        driver.connect()?;
        if scenario != "initialize" {
            let listed = driver.tools()?.0;
            let mut calls: Vec<(String, Map<String, Value>)> = match &asked {
                Some(asked) => asked.clone(),
                None => (listed.iter())
                    .map(|t| (t.name.clone(), tools::example_arguments(&t.input_schema)))
                    .collect(),
            };
            // This scenario reads what the client kept of a tool's schema: its echo tool is
            // given that schema as listed.
            if scenario == "json-schema-2020-12-preservation" {
                let kept = listed.iter().find(|t| t.name == "json_schema_2020_12_tool");
                for (name, arguments) in &mut calls {
                    if let (true, Some(tool)) = (name == "json_schema_echo", kept) {
                        arguments.insert("schema".into(), tool.input_schema.to_value());
                    }
                }
            }
            for (name, arguments) in calls {
                let tool = listed.iter().find(|t| t.name == name);
                let result = driver.call(&name, &arguments)?;
                println!("{}", tools::result_line(tool, &result).1);
            }
        }
        Ok(ExitCode::SUCCESS)
    })();
    let what = format!("conformance scenario {scenario:?}");
    driver.finish(outcome, &what, ExitCode::from(1))
}

/// Parses `--header K:V` values.
fn parse_header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("--header takes K:V, not `{text}`"))?;
    let name = name.trim().to_ascii_lowercase();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
        return Err(format!("`{name}` is not a header name"));
    }
    Ok((name, value.trim().to_owned()))
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

/// Bytes from the operating system's random source, for the sign-in's secrets.
fn random_bytes() -> Result<[u8; 48], String> {
    let mut bytes = [0u8; 48];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("no random source for the sign-in: {e}"))?;
    Ok(bytes)
}

fn method_of(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|b| b["method"].as_str().map(str::to_owned))
        .unwrap_or_default()
}
