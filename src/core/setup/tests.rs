//! The setup decisions without storage: stored values read, `configure`'s writes planned, a
//! run started from scripted sources.

use serde_json::{json, Value};

use super::configure::{plan, Write};
use super::start::{Got, Need, Start, ThreadRecord};
use super::store::{self, Area, KEY_PREFIX, REGISTRY_KEY, SERVERS_KEY, SITES_KEY};
use crate::core::mcp::auth::AuthRecord;
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::{McpAnnotations, McpTool};
use crate::core::page::tabs::TabTools;
use crate::core::page::tool::Annotations;
use crate::core::page::tool::PageTool;
use crate::core::provider::ModelRegistry;
use crate::core::run::drive::{Action, Drive};

fn registry(key_ref: Option<&str>) -> ModelRegistry {
    let mut model = json!({"name": "m", "provider": "openai", "baseUrl": "https://api.test/v1",
        "model": "m-1", "nativeTools": true});
    if let Some(key_ref) = key_ref {
        model["keyRef"] = json!(key_ref);
    }
    serde_json::from_value(json!({"models": [model], "default": "m"})).expect("a registry")
}

fn server(name: &str, key_ref: Option<&str>, enabled: bool) -> McpServerConfig {
    let mut value = json!({"name": name, "url": format!("https://{name}.test/mcp"),
        "enabled": enabled, "namespace": name});
    if let Some(key_ref) = key_ref {
        value["keyRef"] = json!(key_ref);
    }
    serde_json::from_value(value).expect("a server")
}

fn mcp_tool(name: &str, read_only: bool) -> McpTool {
    McpTool {
        name: name.into(),
        title: None,
        description: "Does".into(),
        input_schema: json!({"type": "object"}).into(),
        output_schema: None,
        annotations: McpAnnotations {
            read_only_hint: Some(read_only),
            ..McpAnnotations::default()
        },
    }
}

fn page_tool(name: &str) -> PageTool {
    PageTool {
        name: name.into(),
        title: None,
        description: "Buys".into(),
        input_schema: json!({"type": "object"}),
        output_schema: None,
        annotations: Annotations::default(),
        origin: "https://shop.test".into(),
        frame_id: 0,
        form: None,
        polyfill: None,
    }
}

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("id{n}")
    }
}

/// A start past its conversation (none stored) and its record.
fn begun(request: Value, registry: &ModelRegistry) -> Start {
    let mut start = Start::new(&request, registry, ids()).expect("a start");
    if let Need::Conversation(_) = start.poll() {
        start.handle(Got::Conversation(Ok(None)));
    }
    assert_eq!(start.poll(), Need::Middleware);
    start.handle(Got::Middleware(Ok(None)));
    assert_eq!(start.poll(), Need::Record);
    start.handle(Got::Recorded(1.0));
    start
}

/// The conversation's record stored: the start is ready.
fn saved(start: &mut Start) {
    assert!(matches!(start.poll(), Need::SaveConversation(_)));
    start.handle(Got::ConversationSaved);
}

/// Everything the drive asked at its start, as JSON text (the model request's body names
/// every tool, the events carry the sources' errors).
fn asked(drive: &mut Drive) -> String {
    let mut text = String::new();
    while let Some(action) = drive.poll() {
        match action {
            Action::Fetch { request, .. } => text.push_str(&request.body),
            Action::Event(event) => text.push_str(&serde_json::to_string(&event).expect("json")),
            _ => {}
        }
    }
    text
}

#[test]
fn stored_values_read_as_settings_or_name_what_is_unreadable() {
    assert_eq!(store::registry(None), Ok(ModelRegistry::default()));
    assert_eq!(store::servers(Some(Value::Null)), Ok(Vec::new()));
    assert_eq!(store::sites(None), Ok(Vec::new()));
    let stored = serde_json::to_value(registry(None)).expect("json");
    assert_eq!(store::registry(Some(stored)), Ok(registry(None)));
    let bad = store::registry(Some(json!(7))).expect_err("not a registry");
    assert!(
        bad.starts_with("the stored model registry is unreadable: "),
        "{bad}"
    );
    let bad = store::servers(Some(json!({}))).expect_err("not a list");
    assert!(
        bad.starts_with("the stored MCP servers are unreadable: "),
        "{bad}"
    );
    let bad = store::sites(Some(json!("x"))).expect_err("not a list");
    assert!(
        bad.starts_with("the stored site policies are unreadable: "),
        "{bad}"
    );
}

#[test]
fn stored_settings_that_configure_would_refuse_are_refused_when_read() {
    // Written behind `configure`'s back (a compromised renderer could write local storage).
    let forged = json!({"models": [{"name": "own", "provider": "openai", "baseUrl": "http://evil.example/v1", "model": "x", "nativeTools": true, "keyRef": "k"}], "default": "own"});
    let bad = store::registry(Some(forged)).expect_err("plain http off loopback");
    assert!(
        bad.starts_with("the stored model registry is not valid (model `own`: "),
        "{bad}"
    );
    assert!(bad.ends_with("set them again with `configure`"), "{bad}");
    let forged = json!([{"name": "s", "url": "http://evil.example/mcp"}]);
    let bad = store::servers(Some(forged)).expect_err("plain http off loopback");
    assert!(
        bad.starts_with("the stored MCP servers are not valid (MCP server `s`: "),
        "{bad}"
    );
    // `configure` still reads it, to replace it.
    let forged = json!({"models": [{"name": "own", "provider": "openai", "baseUrl": "http://evil.example/v1", "model": "x", "nativeTools": true}], "default": "own"});
    let replaced = json!({"models": [{"name": "own", "provider": "openai", "baseUrl": "https://api.example/v1", "model": "x", "nativeTools": true}]});
    let done = plan(&replaced, Some(forged.clone()));
    assert!(done.end.is_ok(), "{:?}", done.end);
    let kept = plan(&json!({"keys": {"k": "v"}}), Some(forged))
        .end
        .expect_err("still invalid");
    assert!(kept.contains("model `own`"), "{kept}");
    let fine = json!([{"name": "s", "url": "https://mcp.example/mcp"}]);
    assert_eq!(store::servers(Some(fine)).map(|s| s.len()), Ok(1));
}

#[test]
fn a_key_is_a_non_empty_string_of_the_session() {
    assert_eq!(store::key_slot("openai"), format!("{KEY_PREFIX}openai"));
    assert_eq!(
        store::key("k", Some(json!("sk-1"))),
        Ok(Some("sk-1".into()))
    );
    for stored in [None, Some(json!("")), Some(json!(3))] {
        let error = store::key("k", stored).expect_err("no key");
        assert!(
            error.starts_with("no API key `k` in this browser session"),
            "{error}"
        );
    }
    assert_eq!(
        (Area::Local.name(), Area::Session.name()),
        ("local", "session")
    );
}

#[test]
fn configure_writes_sites_servers_registry_then_keys() {
    let request = json!({
        "models": [{"name": "m", "provider": "openai", "baseUrl": "https://api.test/v1", "model": "x"}],
        "default": "m",
        "sites": [{"origin": "https://shop.test", "alwaysConfirm": true}],
        "servers": [{"name": "docs", "url": "https://docs.test/mcp"}],
        "keys": {"openai": "sk-1", "old": ""},
    });
    let done = plan(&request, None);
    let places: Vec<(Area, &str, bool)> = done
        .writes
        .iter()
        .map(|w| (w.area, w.key.as_str(), w.value.is_some()))
        .collect();
    let key = |name: &str| format!("{KEY_PREFIX}{name}");
    let (openai, old) = (key("openai"), key("old"));
    assert_eq!(
        places,
        vec![
            (Area::Local, SITES_KEY, true),
            (Area::Local, SERVERS_KEY, true),
            (Area::Local, REGISTRY_KEY, true),
            (Area::Session, openai.as_str(), true),
            (Area::Session, old.as_str(), false),
        ]
    );
    let stored = done.end.expect("configured");
    assert_eq!(stored["default"], "m");
    assert!(!stored.to_string().contains("sk-1"), "no key in the answer");
    assert_eq!(done.writes[3].value, Some(json!("sk-1")));
    assert_eq!(done.writes[3].failure, "configure: key `openai`: ");
    assert_eq!(done.writes[0].failure, "");
}

#[test]
fn configure_stops_at_the_first_bad_setting_after_the_writes_before_it() {
    let bad_models = plan(&json!({"models": 3, "sites": []}), None);
    assert!(bad_models.writes.is_empty());
    let error = bad_models.end.expect_err("bad models");
    assert!(error.starts_with("configure: `models`: "), "{error}");

    let bad_server = json!({"sites": [], "servers": [{"name": "s", "url": "ftp://x"}]});
    let done = plan(&bad_server, None);
    assert_eq!(done.writes.len(), 1, "the sites stay stored");
    assert_eq!(done.writes[0].key, SITES_KEY);
    assert!(done.end.expect_err("bad url").starts_with("configure: "));

    // An unknown default fails the registry after the sites were written.
    let done = plan(&json!({"sites": [], "default": "nope"}), None);
    assert_eq!(
        done.writes
            .iter()
            .map(|w: &Write| w.key.as_str())
            .collect::<Vec<_>>(),
        vec![SITES_KEY]
    );
    assert!(done.end.is_err());
}

#[test]
fn a_bad_run_request_or_model_fails_before_any_source() {
    let error = Start::new(&json!({}), &registry(None), ids()).expect_err("no prompt");
    assert!(error.starts_with("run: "), "{error}");
    let error = Start::new(
        &json!({"prompt": "hi", "model": "other"}),
        &registry(None),
        ids(),
    )
    .expect_err("no such model");
    assert!(error.starts_with("run: "), "{error}");
}

#[test]
fn a_run_without_a_tab_reads_servers_then_keys_then_is_ready() {
    let mut start = begun(json!({"prompt": "hi"}), &registry(Some("openai")));
    assert_eq!(
        (start.run_id(), start.thread_id()),
        ("run_id1", "thread_id2")
    );
    assert_eq!(start.tab_id(), None);
    assert_eq!(start.poll(), Need::Servers);
    let servers = vec![
        server("off", None, false),
        server("docs", Some("docs-key"), true),
        server("open", None, true),
        server("down", None, true),
    ];
    start.handle(Got::Servers(Ok(servers)));
    assert_eq!(start.poll(), Need::Key("docs-key".into()));
    // A stale answer is ignored.
    start.handle(Got::Opened(Ok((Vec::new(), None, "2025-11-25".into()))));
    assert_eq!(start.poll(), Need::Key("docs-key".into()));
    start.handle(Got::Key(Err("no key docs-key".into())));
    let Need::Open {
        server: open,
        key,
        within_ms,
    } = start.poll()
    else {
        panic!("the next server is opened");
    };
    assert_eq!((open.name.as_str(), key, within_ms), ("open", None, 20_000));
    start.handle(Got::Opened(Ok((
        vec![mcp_tool("search", true), mcp_tool("delete", false)],
        None,
        "2026-07-28".into(),
    ))));
    assert!(matches!(start.poll(), Need::Open { server, .. } if server.name == "down"));
    start.handle(Got::Opened(Err("refused".into())));
    assert_eq!(start.poll(), Need::Key("openai".into()));
    start.handle(Got::Key(Ok(Some("sk-1".into()))));
    saved(&mut start);
    assert_eq!(start.poll(), Need::Ready);
    let mut drive = start.finish();
    let asked = asked(&mut drive);
    for name in ["current_time", "open__search", "open__delete"] {
        assert!(asked.contains(name), "{name} offered: {asked}");
    }
    assert!(asked.contains("MCP server docs") && asked.contains("no key docs-key"));
    assert!(asked.contains("MCP server down") && asked.contains("refused"));
    // The server opened is a tool source event naming its protocol revision.
    assert!(
        asked.contains(r#""name":"webmcp_host.tool_source","value":{"source":"MCP server open","protocol":"2026-07-28","tools":2}"#),
        "{asked}"
    );
}

#[test]
fn every_secret_the_run_sends_is_redacted_from_what_its_sources_say() {
    let mut start = begun(json!({"prompt": "hi"}), &registry(Some("openai")));
    start.handle(Got::Servers(Ok(vec![
        server("keyed", Some("keyed"), true),
        server("signed", None, true),
        server("echo", None, true),
    ])));
    start.handle(Got::Key(Ok(Some("server-key-0123456789".into()))));
    start.handle(Got::Opened(Ok((Vec::new(), None, "2025-11-25".into()))));
    let auth: AuthRecord = serde_json::from_value(json!({
        "serverUrl": "https://signed.test/mcp", "resource": "https://signed.test/mcp",
        "issuer": "https://as.test", "tokenEndpoint": "https://as.test/token",
        "client": {"clientId": "c", "clientSecret": "client-secret-0123456789"},
        "tokens": {"accessToken": "access-token-0123456789", "refreshToken": "refresh-token-0123456789"},
        "obtainedMs": 0.0,
    }))
    .expect("a record");
    start.handle(Got::Opened(Ok((
        Vec::new(),
        Some(Box::new(auth)),
        "2025-11-25".into(),
    ))));
    // A server that says every secret of the run back (here in its error).
    start.handle(Got::Opened(Err(
        "initialize: you sent model-key-0123456789, server-key-0123456789, \
         access-token-0123456789, refresh-token-0123456789 and client-secret-0123456789"
            .into(),
    )));
    assert_eq!(start.poll(), Need::Key("openai".into()));
    start.handle(Got::Key(Ok(Some("model-key-0123456789".into()))));
    saved(&mut start);
    let asked = asked(&mut start.finish());
    assert!(asked.contains("initialize: you sent [redacted]"), "{asked}");
    assert!(!asked.contains("0123456789"), "{asked}");
}

#[test]
fn a_server_time_limit_is_its_own_when_given() {
    let mut start = begun(
        json!({"prompt": "hi", "runId": "r", "threadId": "t"}),
        &registry(None),
    );
    assert_eq!((start.run_id(), start.thread_id()), ("r", "t"));
    let mut slow = server("slow", None, true);
    slow.timeout_ms = Some(5);
    start.handle(Got::Servers(Ok(vec![slow])));
    assert!(matches!(start.poll(), Need::Open { within_ms: 5, .. }));
    start.handle(Got::Opened(Ok((Vec::new(), None, "2025-11-25".into()))));
    saved(&mut start);
    assert_eq!(start.poll(), Need::Ready);
}

#[test]
fn a_run_with_a_tab_lists_its_tools_first_and_adds_client_tools_last() {
    let request = json!({"prompt": "hi", "tabId": 7,
        "tools": [{"name": "pick", "description": "Picks", "parameters": {"type": "object"}}],
        "visitorTools": [{"name": "ask_visitor", "description": "Asks"}]});
    let mut start = begun(request, &registry(None));
    assert_eq!(start.poll(), Need::TabTools(7));
    let tools = TabTools {
        tools: vec![page_tool("buy")],
        problems: Vec::new(),
        ..TabTools::default()
    };
    start.handle(Got::TabTools(Ok(std::rc::Rc::new(tools))));
    assert_eq!(start.poll(), Need::Servers);
    start.handle(Got::Servers(Err("unreadable".into())));
    saved(&mut start);
    assert_eq!(start.poll(), Need::Ready);
    let mut drive = start.finish();
    let asked = asked(&mut drive);
    for name in ["current_time", "buy", "pick", "ask_visitor"] {
        assert!(asked.contains(name), "{name} offered: {asked}");
    }
    let order: Vec<usize> = ["current_time", "\"buy", "pick", "ask_visitor"]
        .iter()
        .map(|name| asked.find(name).expect("offered"))
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] < w[1]),
        "local, page, frontend, visitor: {asked}"
    );
    assert!(
        asked.contains("MCP servers") && asked.contains("unreadable"),
        "{asked}"
    );
}

#[test]
fn a_tab_whose_tools_cannot_be_listed_is_a_source_error() {
    let mut start = begun(json!({"prompt": "hi", "tabId": 3}), &registry(None));
    start.handle(Got::TabTools(Err("no such tab".into())));
    start.handle(Got::Servers(Ok(Vec::new())));
    saved(&mut start);
    let mut drive = start.finish();
    let asked = asked(&mut drive);
    assert!(
        asked.contains("page (tab 3)") && asked.contains("no such tab"),
        "{asked}"
    );
    let ids = serde_json::to_string(drive.messages()).expect("json");
    assert!(
        ids.contains("run_id1-user_1"),
        "the prompt's message gets an id: {ids}"
    );
    let value = drive
        .ended(
            "r",
            "t",
            crate::core::run::RunOutcome::Completed {
                text: String::new(),
            },
            vec![json!(1)],
        )
        .to_json();
    assert_eq!(value["runId"], "r");
    assert_eq!(value["threadId"], "t");
    assert_eq!(value["events"], json!([1]));
    assert!(value["transcript"].is_string() && value["messages"].is_array());
}

#[test]
fn the_worker_s_own_calls_answer_like_call_tool() {
    use super::call;
    use crate::core::mcp::CallResult;
    let now = call::current_time(0.0, 60);
    assert_eq!(now["ok"], true);
    assert!(now["result"].as_str().expect("text").contains("1970-01-01"));
    assert_eq!(
        call::not_connected("docs")["error"],
        "the MCP server docs is not connected"
    );
    let plain = mcp_tool("search", true);
    let done = CallResult::Ok {
        text: "found".into(),
        structured: None,
        parts: Vec::new(),
    };
    assert_eq!(
        call::mcp(&plain, done),
        json!({"ok": true, "result": "found"})
    );
    assert_eq!(
        call::mcp(&plain, CallResult::Error("boom".into())),
        json!({"ok": false, "error": "boom"})
    );
    let mut typed = mcp_tool("count", true);
    typed.output_schema = Some(json!({"type": "object", "required": ["n"]}).into());
    let unshaped = CallResult::Ok {
        text: "{}".into(),
        structured: Some(json!({})),
        parts: Vec::new(),
    };
    assert_eq!(call::mcp(&typed, unshaped)["ok"], false);
    // A result with media answers its parts besides its text.
    let image = crate::core::mcp::tools::call_result(&json!({"content": [
        {"type": "text", "text": "a chart"},
        {"type": "image", "mimeType": "image/png", "data": "AAAA"}
    ]}));
    assert_eq!(
        call::mcp(&plain, image),
        json!({"ok": true, "result": "a chart\n[image image/png, 4 bytes of base64 not shown]",
            "parts": [{"type": "image", "source": {"type": "data", "value": "AAAA", "mimeType": "image/png"}}]})
    );
}

#[test]
fn a_call_tool_request_is_its_page_call() {
    use crate::core::ops::request::CallToolRequest;
    let request = CallToolRequest::parse(&json!({"tabId": 4, "name": "buy", "args": {"n": 1},
        "frameId": 2, "timeoutMs": 900}))
    .expect("a request");
    let call = super::call::page(&request);
    assert_eq!(
        (call.tab_id, call.name.as_str(), call.frame_id),
        (4, "buy", Some(2))
    );
    assert_eq!((call.timeout_ms, call.args["n"].clone()), (900, json!(1)));
    assert_eq!((call.call, call.expect), (None, None));
}

#[test]
fn a_tab_s_tools_answer_list_tools() {
    let tools = TabTools {
        tools: vec![page_tool("buy")],
        problems: Vec::new(),
        ..TabTools::default()
    };
    let value = tools.response();
    assert_eq!(value["tools"][0]["name"], "buy");
    assert_eq!(value["problems"], json!([]));
}

/// A run of `request` through its start, the conversation stored as `stored` and the open
/// run's log (if asked) as `log`: the record it stores, its thread id, and what it asked.
fn continued(
    request: Value,
    stored: Option<Value>,
    log: Option<Value>,
) -> Result<(ThreadRecord, String, String), String> {
    let mut start = Start::new(&request, &registry(None), ids()).expect("a start");
    assert!(matches!(start.poll(), Need::Conversation(ref t) if t == "t"));
    start.handle(Got::Conversation(Ok(stored)));
    if let Need::RunLog(run) = start.poll() {
        assert_eq!(run, "cut");
        start.handle(Got::RunLog(log.ok_or_else(|| "no log".to_owned())));
    }
    if let Need::Refused(message) = start.poll() {
        return Err(message);
    }
    assert_eq!(start.poll(), Need::Middleware);
    start.handle(Got::Middleware(Ok(None)));
    assert_eq!(start.poll(), Need::Record);
    start.handle(Got::Recorded(5.0));
    start.handle(Got::Servers(Ok(Vec::new())));
    let Need::SaveConversation(record) = start.poll() else {
        panic!("the conversation is stored before the run acts");
    };
    start.handle(Got::ConversationSaved);
    assert_eq!(start.poll(), Need::Ready);
    let thread = start.thread_id().to_owned();
    let asked = asked(&mut start.finish());
    Ok((*record, thread, asked))
}

fn first_turn() -> ThreadRecord {
    // The record a first run stores, then ends with its answer.
    let (record, thread, _) = continued(
        json!({"prompt": "Find mugs.", "threadId": "t", "runId": "r1"}),
        None,
        None,
    )
    .expect("a run");
    assert_eq!(thread, "t");
    assert_eq!(
        (record.open_run.as_deref(), record.summary.title.as_str()),
        (Some("r1"), "Find mugs.")
    );
    let mut messages = record.messages.clone();
    messages.push(
        serde_json::from_value(
            json!({"role": "assistant", "id": "r1-a", "content": "Three mugs."}),
        )
        .expect("a message"),
    );
    record.ended(&messages, 9.0)
}

#[test]
fn a_second_turn_carries_the_first_and_is_stored_before_it_acts() {
    let stored = first_turn();
    assert_eq!((stored.summary.turns, stored.open_run.clone()), (1, None));
    let request = json!({"prompt": "The cheapest?", "threadId": "t", "runId": "r2"});
    let (record, thread, asked) =
        continued(request, Some(stored.to_stored()), None).expect("a run");
    assert_eq!(thread, "t");
    assert!(
        asked.contains("Find mugs.")
            && asked.contains("Three mugs.")
            && asked.contains("The cheapest?"),
        "{asked}"
    );
    assert!(
        asked.find("Three mugs.") < asked.find("The cheapest?"),
        "in order: {asked}"
    );
    assert!(
        !asked.contains("webmcp_host.conversation"),
        "nothing to say: {asked}"
    );
    assert_eq!(
        (record.open_run.as_deref(), record.messages.len()),
        (Some("r2"), 3)
    );
}

#[test]
fn changed_tools_start_a_new_conversation_carrying_the_history() {
    let mut stored = first_turn();
    stored.tools.retain(|t| t.name != "current_time");
    stored.tools.push(crate::core::ops::threads::ToolMark {
        name: "gone".into(),
        digest: "0".into(),
    });
    let request = json!({"prompt": "Again.", "threadId": "t", "runId": "r2"});
    let (record, thread, asked) =
        continued(request, Some(stored.to_stored()), None).expect("a run");
    assert_eq!(thread, "thread_id1", "a new conversation");
    assert_eq!(record.summary.forked_from.as_deref(), Some("t"));
    assert!(
        asked.contains("\"threadId\":\"thread_id1\""),
        "RUN_STARTED names it: {asked}"
    );
    assert!(
        asked.contains("webmcp_host.conversation") && asked.contains("forked"),
        "{asked}"
    );
    assert!(
        asked.contains("\"added\":[\"current_time\"]") && asked.contains("\"removed\":[\"gone\"]"),
        "{asked}"
    );
    assert!(
        asked.contains("Three mugs."),
        "the history is carried: {asked}"
    );
}

#[test]
fn a_cut_run_is_continued_with_its_calls_marked_as_may_have_run() {
    let mut stored = first_turn();
    stored.open_run = Some("cut".into());
    stored.messages.push(
        serde_json::from_value(
            json!({"role": "user", "id": "cut-user_1", "content": "Buy the cheapest."}),
        )
        .expect("a message"),
    );
    let log = json!({"run": {"state": "interrupted"}, "events": [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "cut"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "buy", "parentMessageId": "cut-m1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"sku\":\"m-2\"}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "RUN_ERROR", "message": "cut", "code": "worker_restarted"}]});
    let request = json!({"prompt": "Did it go through?", "threadId": "t", "runId": "r3"});
    let (record, _, asked) =
        continued(request.clone(), Some(stored.to_stored()), Some(log)).expect("a run");
    assert!(
        asked.contains("Buy the cheapest.") && asked.contains("m-2"),
        "{asked}"
    );
    assert!(asked.contains("may have run"), "the model is told: {asked}");
    assert!(
        asked.contains("resumed") && asked.contains("\"mayHaveRun\":[\"buy\"]"),
        "{asked}"
    );
    assert_eq!(record.open_run.as_deref(), Some("r3"));
    // A run of the conversation still going is not continued over.
    let live = json!({"run": {"state": "running"}, "events": []});
    let error = continued(request, Some(stored.to_stored()), Some(live)).expect_err("refused");
    assert!(error.contains("has a run going (`cut`)"), "{error}");
}

#[test]
fn an_unreadable_conversation_is_refused_naming_it() {
    let error = continued(
        json!({"prompt": "x", "threadId": "t"}),
        Some(json!({"threadId": 7})),
        None,
    )
    .expect_err("refused");
    assert!(
        error.starts_with("run: the stored conversation `t` is unreadable"),
        "{error}"
    );
}

#[test]
fn stored_middleware_wraps_the_run_s_own_and_a_bad_one_refuses_the_run() {
    let mut start = Start::new(
        &json!({"prompt": "hi", "middleware": [{"kind": "block", "tool": "current_time", "reason": "run"}]}),
        &registry(None),
        ids(),
    )
    .expect("a start");
    assert_eq!(start.poll(), Need::Middleware);
    let stored = json!([{"kind": "fail", "tool": "current_time", "error": "global says no"}]);
    start.handle(Got::Middleware(Ok(Some(stored))));
    start.handle(Got::Recorded(1.0));
    start.handle(Got::Servers(Ok(Vec::new())));
    saved(&mut start);
    let drive = start.finish();
    drop(drive);
    // A stored layer that does not parse (written behind `configure`'s back) refuses the run:
    // a `block` must never be skipped.
    let mut start = Start::new(&json!({"prompt": "hi"}), &registry(None), ids()).expect("a start");
    start.handle(Got::Middleware(Ok(Some(json!([{"kind": "block"}])))));
    let Need::Refused(message) = start.poll() else {
        panic!("refused");
    };
    assert!(
        message.starts_with("run: the stored middleware: middleware[0]: `tool` is required"),
        "{message}"
    );
    let error = Start::new(
        &json!({"prompt": "hi", "middleware": [{"kind": "nap"}]}),
        &registry(None),
        ids(),
    )
    .expect_err("a bad layer");
    assert!(
        error.contains("run: middleware[0]: unknown kind `nap`"),
        "{error}"
    );
}

#[test]
fn a_model_request_carries_at_most_the_tool_cap_and_says_what_was_left_out() {
    use crate::core::limits::MAX_TOOLS_PER_REQUEST;
    use crate::core::run::{RunTool, ToolKind};
    let tool = |i: usize, kind| RunTool {
        spec: crate::core::toolset::ToolSpec {
            name: format!("t{i}"),
            description: String::new(),
            input_schema: json!({"type": "object"}),
        },
        kind,
        data_source: None,
    };
    let mut tools: Vec<RunTool> = (0..MAX_TOOLS_PER_REQUEST)
        .map(|i| tool(i, ToolKind::Page))
        .chain((0..10).map(|i| tool(1000 + i, ToolKind::Mcp)))
        .chain((0..2).map(|i| tool(2000 + i, ToolKind::Frontend)))
        .collect();
    let error = super::start::cap_tools(&mut tools).expect("over the cap");
    assert_eq!(tools.len(), MAX_TOOLS_PER_REQUEST);
    assert_eq!(
        error.message,
        format!("12 tools left out (10 of the servers', 2 of the client's): a model request carries at most {MAX_TOOLS_PER_REQUEST} (max_tools_per_request)")
    );
    let mut few = vec![tool(0, ToolKind::Page)];
    assert_eq!(super::start::cap_tools(&mut few), None);
}

/// Every source's answer reaches a run as a value, and says to it what the same answer
/// written for the middleware layers says once read back.
#[test]
fn a_runs_tool_answers_are_values_and_their_written_form_says_the_same() {
    use super::call::Called;
    use crate::core::mcp::tools::{call_result, parse_tools};
    use crate::core::run::middleware::layered_answer;
    let (tools, _) = parse_tools(&[
        json!({"name": "plot"}),
        json!({"name": "order", "outputSchema": {"type": "object",
            "properties": {"id": {"type": "string"}}, "required": ["id"]}}),
    ]);
    let called = [
        Called::Mcp {
            tool: Box::new(tools[0].clone()),
            result: call_result(&json!({"content": [
                {"type": "text", "text": "Sales:"},
                {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="}]})),
        },
        Called::Mcp {
            tool: Box::new(tools[0].clone()),
            result: call_result(&json!({"content": [{"type": "text", "text": "plain"}]})),
        },
        Called::Mcp {
            tool: Box::new(tools[1].clone()),
            result: call_result(&json!({"content": [], "structuredContent": {"id": 7}})),
        },
        Called::Mcp {
            tool: Box::new(tools[0].clone()),
            result: call_result(
                &json!({"isError": true, "content": [{"type": "text", "text": "no"}]}),
            ),
        },
        Called::Time {
            now_ms: 0.0,
            utc_offset_minutes: 60,
        },
        Called::NotConnected("docs".into()),
    ];
    for one in called {
        let written = layered_answer(&one.to_json());
        assert_eq!(one.clone().answer(), written, "{one:?}");
    }
    let broken = Called::Mcp {
        tool: Box::new(tools[1].clone()),
        result: call_result(&json!({"content": [], "structuredContent": {"id": 7}})),
    };
    let answer = broken.answer();
    assert!(answer.output_errors.is_some(), "the log says how it broke");
    assert!(matches!(
        answer.outcome,
        crate::core::run::ToolOutcome::Error(_)
    ));
}
