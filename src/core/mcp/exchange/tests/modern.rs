//! The machine against a scripted 2026-07-28 server: discovery and its fallback, `_meta` and
//! the standard headers, -32022, `input_required`, broken streams, timeouts, server requests,
//! `subscriptions/listen`.

use super::*;

fn with(protocols: Protocols) -> Harness {
    let mut h = Harness::new(Deadline::Fixed);
    h.machine = Exchange::new(Settings {
        protocols,
        ..settings(Deadline::Fixed)
    });
    h
}

fn body_of(request: &HttpRequest) -> Value {
    serde_json::from_str(&request.body).unwrap()
}

fn discovered(id: i64, capabilities: Value) -> Value {
    result(
        id,
        json!({
            "resultType": "complete",
            "supportedVersions": ["2026-07-28"],
            "capabilities": capabilities,
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "modern", "version": "1"}},
        }),
    )
}

fn error(id: Value, code: i64, data: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": "no", "data": data}})
}

/// Connected to a 2026-07-28 server (its discover answered).
fn modern(capabilities: Value) -> Harness {
    let mut h = with(Protocols::Auto);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    h.json(stream, &discovered(1, capabilities));
    let events = h.take_done().expect("done").expect("connected");
    assert_eq!(
        events.last(),
        Some(&McpEvent::Initialized {
            protocol: "2026-07-28".into(),
            server: "modern".into()
        })
    );
    h
}

#[test]
fn discover_speaks_2026_with_meta_and_headers_and_no_session() {
    let mut h = with(Protocols::Auto);
    h.machine.connect(&mut h.session, h.now);
    let discover = h.last_request();
    let body = body_of(&discover);
    assert_eq!(body["method"], "server/discover");
    let meta = &body["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}})
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientInfo"]["name"],
        "webmcp-host"
    );
    assert_eq!(
        header(&discover, "mcp-protocol-version"),
        Some("2026-07-28")
    );
    assert_eq!(header(&discover, "mcp-method"), Some("server/discover"));
    assert_eq!(header(&discover, "mcp-session-id"), None);
    let stream = h.last_stream();
    // The harness's answers carry an Mcp-Session-Id: 2026-07-28 ignores it.
    h.json(stream, &discovered(1, json!({"tools": {}})));
    assert!(matches!(h.take_done(), Some(Ok(_))));
    assert!(h.session.is_modern());
    assert_eq!(h.session.protocol(), Some("2026-07-28"));
    assert_eq!(h.session.session_id(), None);
    assert_eq!(h.session.terminate(), None);

    // tools/list: params with `_meta` only, Mcp-Method, no Mcp-Name; an invalid
    // x-mcp-header leaves its tool out; ttlMs read.
    let list = h.session.list_tools(None);
    let id = list.id.unwrap();
    let body = body_of(&list.request);
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(header(&list.request, "mcp-method"), Some("tools/list"));
    assert_eq!(header(&list.request, "mcp-name"), None);
    assert_eq!(header(&list.request, "mcp-session-id"), None);
    h.machine.request(list, h.now);
    let stream = h.last_stream();
    let tools = json!({"resultType": "complete", "ttlMs": 5000, "tools": [
        {"name": "route", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "bad", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "Bad Name"}}}},
    ]});
    h.json(stream, &result(id, tools));
    let events = h.take_done().unwrap().unwrap();
    let McpEvent::Tools {
        tools,
        problems,
        ttl_ms,
        ..
    } = &events[0]
    else {
        panic!("{events:?}")
    };
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["route"]
    );
    assert!(problems[0].contains("`bad` left out"), "{problems:?}");
    assert_eq!(*ttl_ms, 5000);

    // tools/call: Mcp-Name and the designated parameter's header, progress token kept.
    let mut args = Map::new();
    args.insert("region".into(), json!("Hello, 世界"));
    let call = h.session.call_tool("route", &args, Some(json!("p")));
    assert_eq!(header(&call.request, "mcp-name"), Some("route"));
    assert_eq!(
        header(&call.request, "mcp-param-region"),
        Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
    );
    let body = body_of(&call.request);
    assert_eq!(body["params"]["_meta"]["progressToken"], "p");
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn a_server_without_discover_is_spoken_to_with_initialize() {
    // A 400 that is not JSON, a JSON-RPC error of no 2026-07-28 code (as older SDK servers
    // answer a request without a session), and -32601: each an older server.
    let answers: [(u16, &str, Value); 3] = [
        (400, "text/plain", json!(null)),
        (
            400,
            "application/json",
            error(json!(null), -32000, json!(null)),
        ),
        (
            200,
            "application/json",
            error(json!(1), -32601, json!(null)),
        ),
    ];
    for (status, content_type, answer) in answers {
        let mut h = with(Protocols::Auto);
        h.machine.connect(&mut h.session, h.now);
        let stream = h.last_stream();
        h.head(stream, head(status, content_type));
        if !answer.is_null() {
            h.body(stream, &answer.to_string());
        }
        h.end(stream, None);
        let init = h.last_request();
        assert!(
            init.body.contains("\"initialize\""),
            "{status} {answer}: {}",
            init.body
        );
        assert_eq!(header(&init, "mcp-method"), None);
        assert!(h
            .logs
            .iter()
            .any(|l| l.contains("connecting with initialize")));
        let stream = h.last_stream();
        let id = body_of(&init)["id"].as_i64().unwrap();
        h.json(
            stream,
            &result(
                id,
                json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "old"}}),
            ),
        );
        let stream = h.last_stream();
        h.empty(stream, 202);
        assert!(matches!(h.take_done(), Some(Ok(_))));
        assert!(!h.session.is_modern());
        assert_eq!(h.session.protocol(), Some("2025-11-25"));
        assert_eq!(h.session.session_id(), Some("s-1"));
    }
}

#[test]
fn a_sign_in_while_connecting_resumes_where_it_stood() {
    // 401 on initialize (Legacy): after the sign-in, initialize again, then initialized.
    let mut h = with(Protocols::Legacy);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    h.head(stream, head(401, ""));
    assert_eq!(h.authorize.len(), 1);
    h.machine.authorized(&mut h.session, h.now);
    assert!(h.last_request().body.contains("\"initialize\""));
    let stream = h.last_stream();
    h.json(
        stream,
        &result(
            1,
            json!({"protocolVersion": "2025-11-25", "serverInfo": {"name": "old"}}),
        ),
    );
    assert!(h.last_request().body.contains("notifications/initialized"));
    let stream = h.last_stream();
    h.empty(stream, 202);
    assert!(matches!(h.take_done(), Some(Ok(_))));

    // 401 on server/discover (Auto): after the sign-in, discover again, and its fallback.
    let mut h = with(Protocols::Auto);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    h.head(stream, head(401, ""));
    h.machine.authorized(&mut h.session, h.now);
    assert!(h.last_request().body.contains("server/discover"));
    let stream = h.last_stream();
    h.empty(stream, 400);
    assert!(h.last_request().body.contains("\"initialize\""));
}

#[test]
fn modern_only_fails_on_an_older_server_and_legacy_never_discovers() {
    let mut h = with(Protocols::Modern);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    h.empty(stream, 404);
    let Some(Err(Failure::Rejected(why))) = h.take_done() else {
        panic!("a failure")
    };
    assert!(why.contains("does not speak MCP 2026-07-28"), "{why}");

    let mut h = with(Protocols::Legacy);
    h.machine.connect(&mut h.session, h.now);
    assert!(h.last_request().body.contains("\"initialize\""));
}

#[test]
fn an_unsupported_version_is_retried_once_with_a_new_id() {
    let mut h = with(Protocols::Auto);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    let rejected = error(
        json!(1),
        -32022,
        json!({"supported": ["2026-07-28"], "requested": "2026-07-28"}),
    );
    h.head(stream, head(400, "application/json"));
    h.body(stream, &rejected.to_string());
    h.end(stream, None);
    let again = h.last_request();
    let body = body_of(&again);
    assert_eq!(body["method"], "server/discover");
    assert_eq!(body["id"], 2);
    assert_eq!(header(&again, "mcp-protocol-version"), Some("2026-07-28"));
    let stream = h.last_stream();
    h.json(stream, &discovered(2, json!({})));
    assert!(matches!(h.take_done(), Some(Ok(_))));

    // A request rejected twice fails, naming the versions.
    let list = h.session.list_tools(None);
    let first = list.id.unwrap();
    h.machine.request(list, h.now);
    for id in [first, first + 1] {
        let stream = h.last_stream();
        let rejected = error(json!(id), -32022, json!({"supported": ["2026-07-28"]}));
        h.head(stream, head(400, "application/json"));
        h.body(stream, &rejected.to_string());
        h.end(stream, None);
    }
    let Some(Err(Failure::Rejected(why))) = h.take_done() else {
        panic!("a failure")
    };
    assert!(why.contains("refused the protocol version"), "{why}");

    // A server naming only older versions, while connecting: initialize.
    let mut h = with(Protocols::Auto);
    h.machine.connect(&mut h.session, h.now);
    let stream = h.last_stream();
    let rejected = error(json!(1), -32022, json!({"supported": ["2025-11-25"]}));
    h.head(stream, head(400, "application/json"));
    h.body(stream, &rejected.to_string());
    h.end(stream, None);
    assert!(h.last_request().body.contains("\"initialize\""));
}

fn input_required(id: i64, requests: Value, state: Option<&str>) -> Value {
    let mut r = json!({"resultType": "input_required", "inputRequests": requests});
    if let Some(state) = state {
        r["requestState"] = json!(state);
    }
    result(id, r)
}

fn confirm() -> Value {
    json!({"ok": {"method": "elicitation/create", "params": {"mode": "form", "message": "OK?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}}}})
}

#[test]
fn input_required_is_answered_and_sent_again_with_a_new_id() {
    let mut h = modern(json!({"tools": {}}));
    let (first, stream) = h.call("confirm");
    h.json(
        stream,
        &input_required(first, confirm(), Some("opaque-\u{1F600}")),
    );
    let retry = h.last_request();
    let body = body_of(&retry);
    assert_ne!(body["id"], first);
    assert_eq!(body["params"]["name"], "confirm");
    assert_eq!(body["params"]["requestState"], "opaque-\u{1F600}");
    // The harness's policy declines.
    assert_eq!(
        body["params"]["inputResponses"],
        json!({"ok": {"action": "decline"}})
    );
    assert_eq!(header(&retry, "mcp-name"), Some("confirm"));
    let stream = h.last_stream();
    let second = body["id"].as_i64().unwrap();
    h.json(stream, &call_answer(second, "done"));
    assert_eq!(text(call_result(h.take_done())), "done");

    // Without a state, the retry carries none; a later call carries neither field.
    let (first, stream) = h.call("confirm");
    h.json(stream, &input_required(first, confirm(), None));
    let body = body_of(&h.last_request());
    assert!(body["params"].get("requestState").is_none(), "{body}");
    assert!(body["params"].get("inputResponses").is_some());
    let stream = h.last_stream();
    h.json(stream, &call_answer(body["id"].as_i64().unwrap(), "ok"));
    h.take_done();
    let (_, _) = h.call("other");
    let body = body_of(&h.last_request());
    assert!(body["params"].get("inputResponses").is_none());
    assert!(body["params"].get("requestState").is_none());
}

#[test]
fn input_required_with_defaults_accepts_and_undeclared_inputs_fail() {
    let mut h = modern(json!({}));
    h.machine = Exchange::new(Settings {
        protocols: Protocols::Auto,
        elicitation: Elicitation::Defaults,
        ..settings(Deadline::Fixed)
    });
    let (first, stream) = h.call("confirm");
    let asks = json!({"ok": {"method": "elicitation/create", "params": {"message": "OK?",
        "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}, "required": ["ok"]}}}});
    h.json(stream, &input_required(first, asks, Some("s")));
    let body = body_of(&h.last_request());
    assert_eq!(
        body["params"]["inputResponses"],
        json!({"ok": {"action": "accept", "content": {"ok": true}}})
    );
    let stream = h.last_stream();
    h.json(stream, &call_answer(body["id"].as_i64().unwrap(), "ok"));
    h.take_done();

    // Sampling was never declared: the server broke a MUST, the job fails.
    let (first, stream) = h.call("sample");
    let asks = json!({"s": {"method": "sampling/createMessage", "params": {}}});
    h.json(stream, &input_required(first, asks, None));
    let Some(Err(Failure::Rejected(why))) = h.take_done() else {
        panic!("a failure")
    };
    assert!(why.contains("did not declare"), "{why}");
}

#[test]
fn input_rounds_are_bounded() {
    let mut h = modern(json!({}));
    let (mut id, mut stream) = h.call("confirm");
    for _ in 0..=MAX_MCP_INPUT_ROUNDS {
        h.json(stream, &input_required(id, confirm(), Some("s")));
        if h.done.is_some() {
            break;
        }
        id = body_of(&h.last_request())["id"].as_i64().unwrap();
        stream = h.last_stream();
    }
    let Some(Err(Failure::Rejected(why))) = h.take_done() else {
        panic!("a failure")
    };
    assert!(why.contains("still asked for input"), "{why}");
}

#[test]
fn result_types_complete_absent_and_unknown() {
    let mut h = modern(json!({}));
    // Absent: complete, never retried.
    let (id, stream) = h.call("a");
    let sent = h.sent.len();
    h.json(stream, &call_answer(id, "plain"));
    assert_eq!(text(call_result(h.take_done())), "plain");
    assert_eq!(h.sent.len(), sent);
    // "task" (an extension this client never advertised) is invalid.
    let (id, stream) = h.call("b");
    h.json(
        stream,
        &result(id, json!({"resultType": "task", "task": {}})),
    );
    let CallResult::Error(why) = call_result(h.take_done()) else {
        panic!("an error")
    };
    assert!(why.contains("invalid resultType"), "{why}");
    // input_required on tools/list is invalid too.
    let list = h.session.list_tools(None);
    let id = list.id.unwrap();
    h.machine.request(list, h.now);
    let stream = h.last_stream();
    h.json(stream, &input_required(id, confirm(), None));
    assert!(
        matches!(h.take_done(), Some(Ok(events)) if matches!(&events[0], McpEvent::Failed { error, .. } if error.contains("invalid resultType")))
    );
}

#[test]
fn a_broken_stream_is_reissued_with_a_new_id_and_no_get() {
    let mut h = modern(json!({}));
    let (first, stream) = h.call("slow");
    h.head(stream, head(200, "text/event-stream"));
    h.body(stream, "id: 7\nretry: 10\n: keep-alive\n\n");
    h.end(stream, Some("connection reset"));
    let again = h.last_request();
    assert_eq!(again.method, "POST");
    assert_eq!(header(&again, "last-event-id"), None);
    let body = body_of(&again);
    assert_eq!(body["params"]["name"], "slow");
    let second = body["id"].as_i64().unwrap();
    assert_ne!(second, first);
    let stream = h.last_stream();
    h.json(stream, &call_answer(second, "ok"));
    assert_eq!(text(call_result(h.take_done())), "ok");
    assert!(h.sent.iter().all(|(_, r)| r.method == "POST"));
}

#[test]
fn a_timeout_closes_the_stream_and_posts_nothing() {
    let mut h = modern(json!({}));
    let (_, stream) = h.call("slow");
    h.head(stream, head(200, "text/event-stream"));
    h.tick(2000.0);
    assert!(matches!(h.take_done(), Some(Err(Failure::Timeout { .. }))));
    assert!(h.aborted.contains(&stream));
    assert!(h.posted.is_empty(), "{:?}", h.posted);
    assert_eq!(h.session.pending().count(), 0);
}

#[test]
fn a_server_request_is_noted_never_answered() {
    let mut h = modern(json!({}));
    let (id, stream) = h.call("a");
    h.head(stream, head(200, "text/event-stream"));
    let ask = json!({"jsonrpc": "2.0", "id": "s1", "method": "elicitation/create", "params": {}});
    h.body(stream, &sse(None, &ask));
    h.body(stream, &sse(None, &call_answer(id, "ok")));
    assert_eq!(text(call_result(h.take_done())), "ok");
    assert!(h.posted.is_empty());
    assert!(h
        .logs
        .iter()
        .any(|l| l.contains("ignored a request from the server")));
}

#[test]
fn subscriptions_listen_replaces_the_get_stream() {
    // Without tools.listChanged, nothing is opened.
    let mut h = modern(json!({"tools": {}}));
    let sent = h.sent.len();
    h.machine.listen(&mut h.session);
    h.drain();
    assert_eq!(h.sent.len(), sent);
    assert_eq!(h.machine.listening(), Listening::Off);

    let mut h = modern(json!({"tools": {"listChanged": true}}));
    h.machine.listen(&mut h.session);
    let listen = h.last_request();
    assert_eq!(listen.method, "POST");
    let body = body_of(&listen);
    assert_eq!(body["method"], "subscriptions/listen");
    assert_eq!(
        body["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(header(&listen, "mcp-method"), Some("subscriptions/listen"));
    let id = body["id"].clone();
    let stream = h.last_stream();
    h.head(stream, head(200, "text/event-stream"));
    assert_eq!(h.machine.listening(), Listening::Open);
    let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}, "notifications": {"toolsListChanged": true}}});
    let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": id}}});
    h.body(
        stream,
        &format!(": keep-alive\n\n{}{}", sse(None, &ack), sse(None, &changed)),
    );
    assert_eq!(h.events, [McpEvent::ToolsChanged]);
    // A graceful end closes it and forgets its id.
    h.body(
        stream,
        &sse(
            None,
            &result(id.as_i64().unwrap(), json!({"resultType": "complete"})),
        ),
    );
    h.end(stream, None);
    assert_eq!(h.machine.listening(), Listening::Off);
    assert_eq!(h.session.pending().count(), 0);
}
