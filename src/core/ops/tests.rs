//! The operation list, its one parser, and the authorization table (every operation × every
//! kind of sender).

use super::*;
use serde_json::json;

const ID: &str = "abcdefghijklmnopabcdefghijklmnop";

fn info(url: &str, tab: Option<i64>) -> SenderInfo {
    SenderInfo {
        id: Some(ID.into()),
        url: Some(url.into()),
        origin: None,
        tab_id: tab,
        frame_id: tab.map(|_| 0),
    }
}

#[test]
fn extension_pages_in_or_out_of_tabs() {
    let popup = format!("chrome-extension://{ID}/popup.html");
    assert_eq!(classify(ID, &info(&popup, None)), Sender::ExtensionPage);
    assert_eq!(
        classify(ID, &info(&format!("{popup}?tabId=4"), Some(9))),
        Sender::ExtensionPage
    );
}

#[test]
fn content_scripts_and_strangers() {
    assert_eq!(
        classify(ID, &info("http://a.test/x", Some(4))),
        Sender::ContentScript {
            tab_id: 4,
            frame_id: 0,
            url: "http://a.test/x".into(),
            origin: None,
        }
    );
    assert!(matches!(
        classify(ID, &info("http://a.test/x", None)),
        Sender::Unknown { .. }
    ));
    let other = SenderInfo {
        id: Some("zzzz".into()),
        ..info("chrome-extension://zzzz/p.html", None)
    };
    assert!(
        matches!(classify(ID, &other), Sender::Unknown { reason } if reason.contains("another extension"))
    );
    let no_id = SenderInfo {
        id: None,
        ..info("http://a.test/", Some(1))
    };
    assert!(matches!(classify(ID, &no_id), Sender::Unknown { .. }));
}

#[test]
fn a_page_url_that_only_looks_like_ours_is_not_ours() {
    let fake = format!("http://evil.test/chrome-extension://{ID}/popup.html");
    assert!(matches!(
        classify(ID, &info(&fake, Some(1))),
        Sender::ContentScript { .. }
    ));
    let fake_host = format!("chrome-extension://{ID}.evil.test/popup.html");
    assert!(matches!(
        classify(ID, &info(&fake_host, Some(1))),
        Sender::ContentScript { .. }
    ));
    let mismatch = SenderInfo {
        origin: Some("http://evil.test".into()),
        ..info(&format!("chrome-extension://{ID}/p.html"), None)
    };
    assert!(matches!(classify(ID, &mismatch), Sender::Unknown { .. }));
}

#[test]
fn ops_parse_with_clear_errors() {
    assert_eq!(parse_op(&json!({"op": "version"})), Ok(Op::Version));
    assert!(matches!(
        parse_op(&json!({"op": "listTools", "tabId": 2})),
        Ok(Op::ListTools(_))
    ));
    assert_eq!(
        parse_op(&json!({})).unwrap_err().0,
        "the message has no `op`"
    );
    assert_eq!(
        parse_op(&json!({"op": "setKey"})).unwrap_err().0,
        "unknown op `setKey`; known: version, listTools, callTool, audit, crawl, validateArguments, inventory, diagnose, \
         run, startRun, events, stop, runs, bugReport, runLog, timeline, conversations, conversation, forget, pending, answer, decline, \
         evaluate, evalReport, toEval, replayDiff, configure, settings, testModel, checkServer, \
         signIn, signOut, authState, expose, exposures, exposedTools, callExposed, toolsChanged, callWanted"
    );
    assert_eq!(
        parse_op(&json!({"op": "exposedTools", "tabId": 3})),
        Ok(Op::ExposedTools)
    );
    assert!(matches!(
        parse_op(&json!({"op": "callExposed", "name": "add", "args": {"a": 1}})),
        Ok(Op::CallExposed(call)) if call.name == "add"
    ));
    assert!(parse_op(&json!({"op": "callExposed", "name": "add", "args": 1})).is_err());
}

#[test]
fn a_top_frame_content_script_may_ask_only_for_exposed_tools() {
    let top = Sender::ContentScript {
        tab_id: 1,
        frame_id: 0,
        url: "http://a.test/".into(),
        origin: None,
    };
    let sub = Sender::ContentScript {
        tab_id: 1,
        frame_id: 3,
        url: "http://a.test/".into(),
        origin: None,
    };
    let listing = parse_op(&json!({"op": "exposedTools"})).unwrap();
    let call = parse_op(&json!({"op": "callExposed", "name": "add"})).unwrap();
    for op in [&listing, &call] {
        assert_eq!(authorize(&top, op.name()), Ok(()));
        assert_eq!(authorize(&Sender::ExtensionPage, op.name()), Ok(()));
        assert!(authorize(&Sender::Unknown { reason: "x".into() }, op.name()).is_err());
    }
    assert_eq!(
        authorize(&sub, call.name()).unwrap_err().to_string(),
        "refused: `callExposed` may not be asked by a content script (tab 1, frame 3)"
    );
    let page_call = parse_op(&json!({"op": "callTool", "tabId": 1, "name": "buy"})).unwrap();
    assert!(authorize(&top, page_call.name()).is_err());
}

#[test]
fn only_extension_pages_may_command() {
    let call = parse_op(&json!({"op": "callTool", "tabId": 1, "name": "buy"})).unwrap();
    assert_eq!(authorize(&Sender::ExtensionPage, call.name()), Ok(()));
    let cs = Sender::ContentScript {
        tab_id: 1,
        frame_id: 2,
        url: "http://a.test/".into(),
        origin: None,
    };
    assert_eq!(
        authorize(&cs, call.name()).unwrap_err().to_string(),
        "refused: `callTool` may not be asked by a content script (tab 1, frame 2)"
    );
    assert!(authorize(&cs, OpName::Version).is_err());
    assert!(authorize(&Sender::Unknown { reason: "x".into() }, OpName::Version).is_err());
    // A notice of changed tools is the one thing any frame's content script may send.
    assert_eq!(authorize(&cs, OpName::ToolsChanged), Ok(()));
    assert!(authorize(
        &Sender::Unknown { reason: "x".into() },
        OpName::ToolsChanged
    )
    .is_err());
}

#[test]
fn a_sender_origin_is_its_documents_and_its_urls() {
    let with_origin = |url: &str, origin: Option<&str>| Sender::ContentScript {
        tab_id: 1,
        frame_id: 0,
        url: url.into(),
        origin: origin.map(str::to_owned),
    };
    let script = |url: &str| with_origin(url, crate::core::url::origin_slice(url));
    assert_eq!(
        (script("http://127.0.0.1:4000/expose.html?x=1#y").page_origin()).as_deref(),
        Some("http://127.0.0.1:4000")
    );
    assert_eq!(
        (script("https://Site.Example:443").page_origin()).as_deref(),
        Some("https://site.example")
    );
    // A sandboxed document at an exposed URL: its origin is opaque, it has none.
    let url = "http://127.0.0.1:4000/expose.html";
    assert_eq!(with_origin(url, Some("null")).page_origin(), None);
    assert_eq!(with_origin(url, None).page_origin(), None);
    assert_eq!(
        with_origin(url, Some("http://other.example")).page_origin(),
        None
    );
    assert_eq!(script("about:blank").page_origin(), None);
    assert_eq!(script("data:text/html,hi").page_origin(), None);
    assert_eq!(script("file:///tmp/x.html").page_origin(), None);
    assert_eq!(Sender::ExtensionPage.page_origin(), None);
}

#[test]
fn every_name_parses_back_to_its_operation() {
    for &op in OpName::ALL {
        assert_eq!(OpName::parse(op.as_str()), Ok(op));
        assert_eq!(OpName::of_message(&json!({"op": op.as_str()})), Ok(op));
    }
    let mut names: Vec<&str> = OpName::ALL.iter().map(|op| op.as_str()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), OpName::ALL.len(), "no name twice");
    // The old aliases are not operations.
    for alias in ["listRuns", "presets", "ListTools", ""] {
        assert!(OpName::parse(alias)
            .unwrap_err()
            .0
            .starts_with(&format!("unknown op `{alias}`; known: version, listTools")));
    }
    assert_eq!(
        OpName::of_message(&json!({"op": 3})).unwrap_err().0,
        "`op` must be a string, not a number"
    );
    let long = "x".repeat(500);
    assert!(OpName::parse(&long).unwrap_err().0.len() < 500);
}

#[test]
fn requests_parse_into_their_operation() {
    let parse = |name: OpName, request: Value| Op::parse(name, &request);
    // Operations without a request take any object, and their parse names them back.
    for &op in OpName::ALL {
        let request = match op {
            OpName::ListTools => json!({"tabId": 1}),
            OpName::CallTool => json!({"tabId": 1, "name": "add"}),
            OpName::StartRun => json!({"prompt": "Hi"}),
            OpName::RunLog | OpName::BugReport => json!({"runId": "r"}),
            OpName::Answer => json!({"runId": "r", "callId": "c", "value": 1}),
            OpName::Decline => json!({"runId": "r", "callId": "c"}),
            OpName::Expose => json!({"server": "s", "origin": "https://a.test", "enabled": true}),
            OpName::CallExposed => json!({"name": "add"}),
            OpName::Conversation | OpName::Forget => json!({"threadId": "t"}),
            OpName::Evaluate => json!({"tabId": 1, "evals": [], "mode": "smoke"}),
            OpName::Crawl => json!({"tabId": 1, "urls": ["/"]}),
            OpName::ToEval => json!({"runId": "r"}),
            OpName::ReplayDiff => json!({"tabId": 1, "runId": "r"}),
            OpName::Audit | OpName::Diagnose => json!({"tabId": 1}),
            OpName::ValidateArguments => json!({"inputSchema": {}, "args": {}}),
            OpName::Timeline => json!({"runId": "r"}),
            OpName::CallWanted => json!({"call": "run_1-call_2"}),
            _ => json!({}),
        };
        let parsed = parse(op, request).unwrap_or_else(|e| panic!("{}: {e}", op.as_str()));
        assert_eq!(parsed.name(), op);
    }
    assert_eq!(
        parse(OpName::Forget, json!({"threadId": ""}))
            .unwrap_err()
            .0,
        "forget: `threadId` is required (a non-empty string)"
    );
    assert_eq!(
        parse(OpName::Conversations, json!({"tabId": 4})),
        Ok(Op::Conversations { tab_id: Some(4) })
    );
    assert_eq!(
        parse(OpName::Runs, json!({"tabId": 4})),
        Ok(Op::Runs { tab_id: Some(4) })
    );
    assert_eq!(
        parse(OpName::RunLog, json!({"runId": "r", "since": 3})),
        Ok(Op::RunLog {
            run_id: "r".into(),
            since: 3
        })
    );
    // Errors name the operation and the field.
    let error = |name: OpName, request: Value| parse(name, request).unwrap_err().0;
    assert_eq!(
        error(OpName::ListTools, json!({})),
        "listTools: `tabId` (a tab's tools) or `server` (an MCP server's name) is required"
    );
    assert_eq!(
        error(OpName::RunLog, json!({})),
        "runLog: `runId` is required"
    );
    assert_eq!(
        error(OpName::StartRun, json!("x")),
        "startRun: the request must be an object"
    );
    assert_eq!(
        error(OpName::StartRun, json!({})),
        "run: `prompt` or `messages` is required"
    );
    assert_eq!(
        error(
            OpName::StartRun,
            json!({"prompt": "Hi", "visitorTools": {}})
        ),
        "run: `visitorTools` must be an array"
    );
    assert_eq!(
        error(OpName::Answer, json!({"runId": "r", "callId": "c"})),
        "answer: `value` is required"
    );
    assert_eq!(
        error(OpName::Decline, json!({"callId": "c"})),
        "decline: `runId` is required"
    );
    assert!(error(OpName::Expose, json!({})).starts_with("expose: "));
    assert!(error(OpName::CallExposed, json!({})).starts_with("callExposed: "));
}

/// The whole authorization table: every operation × every kind of sender.
#[test]
fn the_authorization_table() {
    let top = Sender::ContentScript {
        tab_id: 7,
        frame_id: 0,
        url: "http://a.test/".into(),
        origin: None,
    };
    let sub = Sender::ContentScript {
        tab_id: 7,
        frame_id: 2,
        url: "http://b.test/".into(),
        origin: None,
    };
    let stranger = Sender::Unknown {
        reason: "the message comes from another extension (zz)".into(),
    };
    for &op in OpName::ALL {
        let name = op.as_str();
        assert_eq!(authorize(&Sender::ExtensionPage, op), Ok(()), "{name}");
        assert_eq!(
            authorize(&stranger, op).unwrap_err().to_string(),
            "refused: the message comes from another extension (zz)"
        );
        let (from_top, from_sub) = match op {
            OpName::ExposedTools | OpName::CallExposed => (true, false),
            OpName::ToolsChanged | OpName::CallWanted => (true, true),
            _ => (false, false),
        };
        for (sender, allowed, frame) in [(&top, from_top, 0), (&sub, from_sub, 2)] {
            match authorize(sender, op) {
                Ok(()) => assert!(allowed, "{name} from frame {frame}"),
                Err(refusal) => {
                    assert!(!allowed, "{name} from frame {frame}");
                    assert_eq!(
                        refusal.to_string(),
                        format!(
                            "refused: `{name}` may not be asked by a content script (tab 7, frame {frame})"
                        )
                    );
                }
            }
        }
        // The automation surface offers exactly what only extension pages may ask.
        assert_eq!(op.automated(), !from_top, "{name}");
    }
}

#[test]
fn visitor_tools_come_from_the_request() {
    let tools = request::visitor_tools(&json!({"visitorTools": [{"name": "ask_person", "description": "Ask", "parameters": {"type": "object"}}]})).unwrap();
    assert_eq!(tools[0].name, "ask_person");
    assert!(request::visitor_tools(&json!({})).unwrap().is_empty());
    assert!(request::visitor_tools(&json!({"visitorTools": [{"name": "bad name"}]})).is_err());
    assert!(request::visitor_tools(&json!({"visitorTools": {}})).is_err());
}

#[test]
fn a_message_is_capped_json_naming_an_operation() {
    let (name, message) = read_message(r#"{"op": "runs", "tabId": 4}"#).unwrap();
    assert_eq!(name, OpName::Runs);
    assert_eq!(message["tabId"], 4);
    let cap = crate::core::limits::Limits::DEFAULT.max_message_bytes;
    let big = format!(r#"{{"op": "runs", "x": "{}"}}"#, "a".repeat(cap));
    let error = read_message(&big).unwrap_err();
    assert!(
        error.ends_with(&format!("over the cap of {cap} (max_message_bytes)")),
        "{error}"
    );
    assert!(read_message("{")
        .unwrap_err()
        .starts_with("the message is not JSON: "));
    assert_eq!(read_message("{}").unwrap_err(), "the message has no `op`");
    assert!(read_message(r#"{"op": "nope"}"#).is_err());
}

#[test]
fn a_run_may_be_asked_to_act_only_on_one_origin() {
    let run = |origin: Value| {
        RunRequest::parse(&json!({"tabId": 1, "prompt": "hi", "expectOrigin": origin}))
    };
    let asked = run(json!("https://Shop.test:443/cart")).expect("an origin");
    assert_eq!(asked.expect_origin.as_deref(), Some("https://shop.test"));
    for bad in [json!("chrome://settings"), json!("shop.test"), json!(7)] {
        assert!(run(bad.clone()).is_err(), "{bad}");
    }
    let none = RunRequest::parse(&json!({"prompt": "hi"})).expect("no origin");
    assert_eq!(none.expect_origin, None);
}
