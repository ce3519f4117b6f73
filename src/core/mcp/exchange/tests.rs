//! The exchange machine driven against a scripted fake server (no sockets): each test reads
//! what the machine asks, answers as a server would, and checks the outputs.

use serde_json::{json, Map, Value};

use super::*;
use crate::core::http::HttpRequest;
use crate::core::mcp::auth::{AuthRecord, ClientCredentials, Tokens, MAX_AUTHORIZATIONS};
use crate::core::mcp::modern::Protocols;
use crate::core::mcp::{CallResult, McpError};
use crate::core::provider::sse::MAX_SSE_EVENT_BYTES;

const URL: &str = "http://127.0.0.1:9/mcp";

/// A session, its machine, the clock, and everything the machine asked for so far.
struct Harness {
    session: Session,
    machine: Exchange,
    now: f64,
    sent: Vec<(StreamId, HttpRequest)>,
    posted: Vec<HttpRequest>,
    aborted: Vec<StreamId>,
    events: Vec<McpEvent>,
    logs: Vec<String>,
    authorize: Vec<(Refusal, u32)>,
    reconnected: u32,
    done: Option<Result<Vec<McpEvent>, Failure>>,
}

fn settings(deadline: Deadline) -> Settings {
    Settings {
        client_name: "webmcp-host".into(),
        client_version: "0.1.0".into(),
        capabilities: json!({"elicitation": {}}),
        timeout_ms: 1000,
        deadline,
        elicitation: Elicitation::Decline,
        protocols: Protocols::Legacy,
    }
}

fn head(status: u16, content_type: &str) -> Head {
    Head {
        status,
        content_type: Some(content_type.into()).filter(|c: &String| !c.is_empty()),
        session_id: Some("s-1".into()),
        ..Head::default()
    }
}

fn sse(id: Option<&str>, message: &Value) -> String {
    let id = id.map(|id| format!("id: {id}\n")).unwrap_or_default();
    format!("{id}data: {message}\n\n")
}

fn result(id: i64, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn call_answer(id: i64, text: &str) -> Value {
    result(id, json!({"content": [{"type": "text", "text": text}]}))
}

fn header<'a>(request: &'a HttpRequest, name: &str) -> Option<&'a str> {
    request
        .headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

impl Harness {
    fn new(deadline: Deadline) -> Self {
        Harness {
            session: Session::new(URL),
            machine: Exchange::new(settings(deadline)),
            now: 0.0,
            sent: Vec::new(),
            posted: Vec::new(),
            aborted: Vec::new(),
            events: Vec::new(),
            logs: Vec::new(),
            authorize: Vec::new(),
            reconnected: 0,
            done: None,
        }
    }

    /// A session already initialized (as after `connect`).
    fn connected(deadline: Deadline) -> Self {
        let mut h = Harness::new(deadline);
        h.machine.connect(&mut h.session, h.now);
        let stream = h.last_stream();
        h.json(
            stream,
            &result(
                1,
                json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "fake"}}),
            ),
        );
        let stream = h.last_stream();
        h.empty(stream, 202);
        assert!(matches!(h.take_done(), Some(Ok(_))), "connected");
        h
    }

    fn drain(&mut self) {
        while let Some(output) = self.machine.poll() {
            match output {
                Output::Send { stream, request } => self.sent.push((stream, request)),
                Output::Post(request) => self.posted.push(request),
                Output::Abort(stream) => self.aborted.push(stream),
                Output::Event(event) => self.events.push(event),
                Output::Log(line) => self.logs.push(line),
                Output::Authorize { refusal, attempt } => self.authorize.push((refusal, attempt)),
                Output::Reconnected => self.reconnected += 1,
                Output::Done(outcome) => {
                    assert!(self.done.is_none(), "one Done per job");
                    self.done = Some(outcome);
                }
            }
        }
    }

    fn last_stream(&mut self) -> StreamId {
        self.drain();
        self.sent.last().expect("a request was sent").0
    }

    fn last_request(&mut self) -> HttpRequest {
        self.drain();
        self.sent.last().expect("a request was sent").1.clone()
    }

    fn take_done(&mut self) -> Option<Result<Vec<McpEvent>, Failure>> {
        self.drain();
        self.done.take()
    }

    fn head(&mut self, stream: StreamId, head: Head) {
        self.machine
            .handle_head(&mut self.session, stream, head, self.now);
        self.drain();
    }

    fn body(&mut self, stream: StreamId, text: &str) {
        self.machine
            .handle_body(&mut self.session, stream, text.as_bytes(), self.now);
        self.drain();
    }

    fn end(&mut self, stream: StreamId, error: Option<&str>) {
        self.machine.handle_end(
            &mut self.session,
            stream,
            error.map(str::to_owned),
            self.now,
        );
        self.drain();
    }

    fn json(&mut self, stream: StreamId, message: &Value) {
        self.head(stream, head(200, "application/json"));
        self.body(stream, &message.to_string());
        self.end(stream, None);
    }

    fn empty(&mut self, stream: StreamId, status: u16) {
        self.head(stream, head(status, ""));
        self.end(stream, None);
    }

    fn tick(&mut self, now: f64) {
        self.now = now;
        self.machine.handle_timeout(&mut self.session, now);
        self.drain();
    }

    fn call(&mut self, name: &str) -> (i64, StreamId) {
        let call = self
            .session
            .call_tool(name, &Map::new(), Some(json!("tok")));
        let id = call.id.expect("a request");
        self.machine.request(call, self.now);
        (id, self.last_stream())
    }
}

fn call_result(outcome: Option<Result<Vec<McpEvent>, Failure>>) -> CallResult {
    let events = outcome.expect("done").expect("answered");
    events
        .into_iter()
        .find_map(|e| match e {
            McpEvent::CallDone { result, .. } => Some(result),
            _ => None,
        })
        .expect("a CallDone")
}

fn text(result: CallResult) -> String {
    match result {
        CallResult::Ok { text, .. } => text,
        CallResult::Error(error) => panic!("an error: {error}"),
    }
}

#[test]
fn a_json_answer() {
    let mut h = Harness::connected(Deadline::Fixed);
    let request = h.sent[1].1.clone();
    assert!(request.body.contains("notifications/initialized"));
    assert_eq!(header(&request, "mcp-session-id"), Some("s-1"));
    let (id, stream) = h.call("add");
    let request = h.last_request();
    assert_eq!(header(&request, "mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(h.machine.poll_timeout(), Some(1000.0));
    h.json(stream, &call_answer(id, "3"));
    assert_eq!(text(call_result(h.take_done())), "3");
    assert!(!h.machine.busy());
}

#[test]
fn an_sse_answer_with_a_server_request_in_between() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (id, stream) = h.call("add");
    h.head(stream, head(200, "text/event-stream"));
    let ask =
        json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}});
    let elicit =
        json!({"jsonrpc": "2.0", "id": "s2", "method": "elicitation/create", "params": {}});
    // Split inside a character and between events: the decoder carries both.
    let stream_text = format!(
        "{}{}{}",
        sse(Some("1"), &ask),
        sse(Some("2"), &elicit),
        sse(Some("3"), &call_answer(id, "5 é"))
    );
    let bytes = stream_text.as_bytes();
    let cut = stream_text.find('é').expect("an é") + 1;
    h.machine
        .handle_body(&mut h.session, stream, &bytes[..cut], h.now);
    h.machine
        .handle_body(&mut h.session, stream, &bytes[cut..], h.now);
    h.drain();
    assert_eq!(h.posted.len(), 2, "both server requests answered");
    assert!(h.posted[0].body.contains("-32601"), "sampling refused");
    assert!(
        h.posted[1].body.contains("\"decline\""),
        "elicitation declined"
    );
    assert_eq!(text(call_result(h.take_done())), "5 é");
    assert_eq!(
        h.aborted,
        vec![stream],
        "the stream is closed once answered"
    );
}

#[test]
fn a_cut_stream_resumes_with_last_event_id_after_the_retry_wait() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (id, stream) = h.call("add");
    h.head(stream, head(200, "text/event-stream"));
    h.body(stream, "retry: 200\n\nid: ev-7\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n");
    h.end(stream, Some("connection reset"));
    assert!(h.done.is_none());
    assert_eq!(
        h.machine.poll_timeout(),
        Some(200.0),
        "the retry wait is a timer"
    );
    let before = h.sent.len();
    h.tick(100.0);
    assert_eq!(h.sent.len(), before, "not before the wait");
    h.tick(200.0);
    let resume = h.last_request();
    assert_eq!(resume.method, "GET");
    assert_eq!(header(&resume, "last-event-id"), Some("ev-7"));
    let stream = h.last_stream();
    h.head(stream, head(200, "text/event-stream"));
    h.body(stream, &sse(Some("8"), &call_answer(id, "ok")));
    assert_eq!(text(call_result(h.take_done())), "ok");
    assert!(h.logs.iter().any(|l| l.contains("after event ev-7")));
}

#[test]
fn resumption_is_bounded() {
    let mut h = Harness::connected(Deadline::Fixed);
    h.machine = Exchange::new(Settings {
        timeout_ms: 1_000_000,
        ..settings(Deadline::Fixed)
    });
    let (_, mut stream) = h.call("add");
    for round in 0..=MAX_RESUMES {
        h.head(stream, head(200, "text/event-stream"));
        h.end(stream, None);
        if round == MAX_RESUMES {
            break;
        }
        h.tick(h.now + 1000.0);
        stream = h.last_stream();
    }
    let failure = h.take_done().expect("done").unwrap_err();
    assert!(matches!(failure, Failure::NoResponse { .. }), "{failure}");
}

#[test]
fn a_404_starts_a_new_session_once() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, stream) = h.call("add");
    h.empty(stream, 404);
    assert!(h
        .logs
        .iter()
        .any(|l| l.contains("the session expired (404)")));
    let init = h.last_request();
    assert!(init.body.contains("\"initialize\""));
    assert_eq!(header(&init, "mcp-session-id"), None);
    let stream = h.last_stream();
    h.json(stream, &result(3, json!({"protocolVersion": "2025-06-18"})));
    let stream = h.last_stream();
    h.empty(stream, 202);
    assert_eq!(h.reconnected, 1);
    let again = h.last_request();
    let body: Value = serde_json::from_str(&again.body).unwrap();
    assert_eq!(body["params"]["name"], "add");
    let id = body["id"].as_i64().unwrap();
    let stream = h.last_stream();
    // A second 404: no third session.
    h.empty(stream, 404);
    let failure = h.take_done().expect("done").unwrap_err();
    assert_eq!(
        failure,
        Failure::Refused {
            method: "tools/call".into(),
            error: McpError::SessionExpired
        }
    );
    assert!(id > 0);
}

#[test]
fn a_401_asks_for_a_refresh_and_sends_again_with_the_new_token() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (id, stream) = h.call("add");
    let mut refused = head(401, "");
    refused.www_authenticate = Some(r#"Bearer resource_metadata="http://x/.well-known""#.into());
    h.head(stream, refused);
    assert_eq!(
        h.machine.poll_timeout(),
        None,
        "no deadline while signing in"
    );
    assert!(matches!(
        &h.authorize[..],
        [(Refusal::Unauthorized { challenge: Some(c) }, 1)] if c.contains("resource_metadata")
    ));
    let record = AuthRecord {
        server_url: URL.into(),
        resource: URL.into(),
        issuer: "http://x/".into(),
        token_endpoint: "http://x/token".into(),
        client: ClientCredentials {
            client_id: "c".into(),
            client_secret: None,
            auth_method: None,
        },
        tokens: Tokens {
            access_token: "fresh-token".into(),
            refresh_token: None,
            expires_at_ms: None,
            scope: None,
        },
        scope: None,
        obtained_ms: 0.0,
    };
    h.session.set_auth(Some(record));
    h.now = 5000.0;
    h.machine.authorized(&mut h.session, h.now);
    let again = h.last_request();
    assert_eq!(header(&again, "authorization"), Some("Bearer fresh-token"));
    assert_eq!(h.machine.poll_timeout(), Some(6000.0));
    let stream = h.last_stream();
    h.json(stream, &call_answer(id, "ok"));
    assert_eq!(text(call_result(h.take_done())), "ok");
}

#[test]
fn a_403_insufficient_scope_asks_for_a_step_up_until_the_cap() {
    let challenge = r#"Bearer error="insufficient_scope", scope="files:write""#;
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, mut stream) = h.call("add");
    for attempt in 1..=MAX_AUTHORIZATIONS + 1 {
        let mut refused = head(403, "");
        refused.www_authenticate = Some(challenge.into());
        h.head(stream, refused);
        if attempt > MAX_AUTHORIZATIONS {
            break;
        }
        assert_eq!(
            h.authorize.last(),
            Some(&(
                Refusal::InsufficientScope {
                    challenge: Some(challenge.into())
                },
                attempt
            ))
        );
        h.machine.authorized(&mut h.session, h.now);
        stream = h.last_stream();
    }
    let failure = h.take_done().expect("done").unwrap_err();
    assert!(
        failure
            .to_string()
            .contains("still refuses after 3 sign-ins (403"),
        "{failure}"
    );
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, stream) = h.call("add");
    h.head(stream, head(401, ""));
    h.machine.unauthorized("sign in to it first".into());
    assert_eq!(
        h.take_done().expect("done").unwrap_err().to_string(),
        "tools/call: sign in to it first"
    );
}

#[test]
fn the_deadline_cancels_the_request_with_a_clear_error() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (id, stream) = h.call("slow");
    h.head(stream, head(200, "text/event-stream"));
    h.body(stream, ": ping\n\n");
    h.tick(999.0);
    assert!(h.done.is_none());
    h.tick(1000.0);
    let failure = h.take_done().expect("done").unwrap_err();
    assert_eq!(
        failure.to_string(),
        "tools/call: no answer within 1000 ms (cancelled)"
    );
    assert!(h.aborted.contains(&stream));
    let cancel = h.posted.last().expect("a cancellation");
    assert!(cancel.body.contains("notifications/cancelled"));
    assert!(cancel.body.contains(&format!("\"requestId\":{id}")));
}

#[test]
fn progress_extends_the_deadline_up_to_ten_minutes() {
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "tok", "progress": 1}});
    let mut h = Harness::connected(Deadline::ExtendedByProgress);
    let (_, stream) = h.call("slow");
    h.head(stream, head(200, "text/event-stream"));
    h.now = 900.0;
    h.body(stream, &sse(None, &progress));
    assert_eq!(h.machine.poll_timeout(), Some(1900.0));
    assert!(matches!(h.events.last(), Some(McpEvent::Progress { .. })));
    h.now = MAX_EXTENDED_MS - 10.0;
    h.body(stream, &sse(None, &progress));
    assert_eq!(h.machine.poll_timeout(), Some(MAX_EXTENDED_MS), "bounded");
    h.tick(MAX_EXTENDED_MS);
    assert!(matches!(h.take_done(), Some(Err(Failure::Timeout { .. }))));

    let mut fixed = Harness::connected(Deadline::Fixed);
    let (_, stream) = fixed.call("slow");
    fixed.head(stream, head(200, "text/event-stream"));
    fixed.now = 900.0;
    fixed.body(stream, &sse(None, &progress));
    assert_eq!(fixed.machine.poll_timeout(), Some(1000.0), "not extended");
}

#[test]
fn a_json_answer_past_the_cap_is_cut_off() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, stream) = h.call("huge");
    h.head(stream, head(200, "application/json"));
    let chunk = "x".repeat(1024 * 1024);
    for _ in 0..16 {
        h.body(stream, &chunk);
    }
    assert!(h.done.is_none(), "exactly at the cap");
    h.body(stream, "x");
    let failure = h.take_done().expect("done").unwrap_err();
    assert_eq!(
        failure.to_string(),
        "tools/call: the server's answer passed 16777216 bytes (max_answer_bytes)"
    );
    assert_eq!(h.aborted, vec![stream]);
}

#[test]
fn an_sse_event_past_the_cap_is_cut_off() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, stream) = h.call("huge");
    h.head(stream, head(200, "text/event-stream"));
    let line = format!("data: {}\n", "x".repeat(MAX_SSE_EVENT_BYTES + 1));
    h.body(stream, &line);
    h.body(stream, "\n");
    let failure = h.take_done().expect("done").unwrap_err();
    assert!(
        failure.to_string().contains("(max_sse_event_bytes)"),
        "{failure}"
    );
}

#[test]
fn a_response_for_an_id_we_never_sent() {
    // Without a GET stream the JSON answer is all there is.
    let mut h = Harness::connected(Deadline::Fixed);
    let (id, stream) = h.call("add");
    h.json(stream, &call_answer(id + 1000, "stray"));
    let failure = h.take_done().expect("done").unwrap_err();
    assert!(
        failure
            .to_string()
            .starts_with("tools/call: the server ended its answer without a response (a response for an id we never sent"),
        "{failure}"
    );
    // With one, the answer may still come there: the deadline decides.
    let mut h = Harness::connected(Deadline::Fixed);
    h.machine.listen(&mut h.session);
    let listen = h.last_stream();
    h.head(listen, head(200, "text/event-stream"));
    assert_eq!(h.machine.listening(), Listening::Open);
    let (id, stream) = h.call("add");
    h.json(stream, &call_answer(id + 1000, "stray"));
    assert!(h.done.is_none());
    h.body(listen, &sse(None, &call_answer(id, "late")));
    assert_eq!(text(call_result(h.take_done())), "late");
}

#[test]
fn redirects_and_odd_answers_are_clear_errors() {
    let mut h = Harness::connected(Deadline::Fixed);
    let (_, stream) = h.call("add");
    let mut moved = head(307, "");
    moved.location = Some("http://elsewhere/".into());
    h.head(stream, moved);
    assert!(h
        .take_done()
        .expect("done")
        .unwrap_err()
        .to_string()
        .contains("redirects are not followed"));
    let (_, stream) = h.call("add");
    h.head(stream, head(200, "application/json"));
    h.body(stream, "{not json");
    h.end(stream, None);
    assert!(matches!(
        h.take_done(),
        Some(Err(Failure::Malformed { .. }))
    ));
    let (_, stream) = h.call("add");
    h.end(stream, Some("connection refused"));
    assert_eq!(
        h.take_done().expect("done").unwrap_err().to_string(),
        "tools/call: the server could not be reached: connection refused"
    );
}

#[test]
fn the_get_stream_passes_list_changed_on() {
    let mut h = Harness::connected(Deadline::Fixed);
    h.machine.listen(&mut h.session);
    let listen = h.last_stream();
    assert_eq!(h.machine.listening(), Listening::Opening);
    h.head(listen, head(200, "text/event-stream"));
    h.body(
        listen,
        &sse(
            None,
            &json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ),
    );
    assert_eq!(h.events, vec![McpEvent::ToolsChanged]);
    h.end(listen, None);
    assert_eq!(h.machine.listening(), Listening::Off);
    let mut refused = Harness::connected(Deadline::Fixed);
    refused.machine.listen(&mut refused.session);
    let listen = refused.last_stream();
    refused.empty(listen, 405);
    assert_eq!(refused.machine.listening(), Listening::Off);
    assert!(refused.logs.is_empty(), "405 is no failure");
}

#[test]
fn elicitation_with_defaults() {
    let params = json!({"requestedSchema": {"properties": {"ok": {"type": "boolean", "default": true}}, "required": ["ok"]}});
    assert_eq!(
        answer(Elicitation::Defaults, "elicitation/create", Some(&params)),
        Ok(json!({"action": "accept", "content": {"ok": true}}))
    );
    assert_eq!(
        answer(
            Elicitation::Defaults,
            "elicitation/create",
            Some(&json!({"requestedSchema": {"required": ["x"]}}))
        ),
        Ok(json!({"action": "decline"}))
    );
    assert_eq!(answer(Elicitation::Decline, "ping", None), Ok(json!({})));
}

#[test]
fn the_recourse_of_a_client_that_never_opens_a_sign_in() {
    let unauthorized = Refusal::Unauthorized { challenge: None };
    assert_eq!(
        Recourse::after(&unauthorized, 1, true, "sdk"),
        Recourse::Refresh
    );
    assert_eq!(
        Recourse::after(&unauthorized, 2, true, "sdk"),
        Recourse::GiveUp("the server requires authorization (401): sign in to sdk first".into())
    );
    assert_eq!(
        Recourse::after(&unauthorized, 1, false, "sdk"),
        Recourse::after(&unauthorized, 2, true, "sdk")
    );
    let scope = Refusal::InsufficientScope {
        challenge: Some(r#"Bearer error="insufficient_scope", scope="a b""#.into()),
    };
    assert_eq!(
        Recourse::after(&scope, 1, true, "sdk"),
        Recourse::GiveUp("the server needs more scope (scope \"a b\") (403 insufficient_scope): sign in to sdk again to grant it".into())
    );
}

mod modern;
