//! The page bridge's messages: each request as the worker writes it, each reply as it is
//! read (and refused when it breaks a cap or the protocol).

use super::*;

const L: Limits = Limits::DEFAULT;

#[test]
fn watched_requests_are_read_as_untrusted() {
    let reply = |v: Value| Reply::Answered(Ok(v.to_string()));
    let many: Vec<Value> = (0..150)
        .map(|i| json!({"method": "get", "url": format!("/{i}")}))
        .collect();
    let mut listed = vec![
        json!({"method": "post", "url": "x".repeat(900)}),
        json!({"method": 7}),
        json!("GET /"),
    ];
    listed.extend(many);
    let watched = parse_watched(
        &reply(json!({"webmcpHost": 1, "ok": true, "requests": listed})),
        &L,
    )
    .expect("read");
    assert_eq!(watched.len(), MAX_WATCHED);
    assert_eq!((watched[0].0.as_str(), watched[0].1.len()), ("POST", 500));
    assert_eq!(watched[1], ("GET".to_owned(), "/0".to_owned()));
    assert!(parse_watched(&Reply::TimedOut, &L).is_err());
    assert_eq!(
        FrameRequest::Watch { on: true }.to_message(),
        json!({"webmcpHost": 1, "op": "watch", "on": true})
    );
}

#[test]
fn requests_carry_the_protocol_key() {
    let mut args = Map::new();
    args.insert("q".into(), json!("x"));
    assert_eq!(
        FrameRequest::CallTool {
            name: "find".into(),
            args: args.clone(),
            confirm: None,
            call: None,
            within_ms: Some(500),
            version: None,
        }
        .to_message(),
        json!({"webmcpHost": 1, "op": "callTool", "name": "find", "args": {"q": "x"}})
    );
    assert_eq!(
        FrameRequest::Cancel { call: "c1".into() }.to_message(),
        json!({"webmcpHost": 1, "op": "cancel", "call": "c1"})
    );
    let asked = FrameRequest::CallTool {
        name: "find".into(),
        args,
        confirm: Some("Allow?".into()),
        call: Some("c1".into()),
        within_ms: Some(500),
        version: Some(3),
    }
    .to_message();
    // A confirmed call says how long its caller waits: allowed later, it does not run.
    assert_eq!(
        (asked["confirm"].clone(), asked["within"].clone()),
        (json!("Allow?"), json!(500))
    );
    // It names the version of the tool it was decided on.
    assert_eq!(asked["version"], json!(3));
    assert_eq!(
        FrameRequest::ListTools.to_message(),
        json!({"webmcpHost": 1, "op": "listTools"})
    );
}

#[test]
fn a_dom_query_asks_each_selector_and_attribute() {
    let asked = FrameRequest::QueryDom {
        queries: vec![
            DomQuery {
                selector: "#total".into(),
                attribute: None,
            },
            DomQuery {
                selector: "a.next".into(),
                attribute: Some("href".into()),
            },
        ],
    };
    assert_eq!(asked.op(), "queryDom");
    assert_eq!(
        asked.to_message(),
        json!({"webmcpHost": 1, "op": "queryDom", "queries": [
            {"selector": "#total"},
            {"selector": "a.next", "attribute": "href"},
        ]})
    );
}

#[test]
fn a_dom_reply_is_read_one_result_per_query() {
    let raw = json!({"ok": true, "results": [
        {"count": 2, "text": "Total: 3", "attribute": "/next"},
        {"count": 0},
        {"error": "invalid selector: 'a[' is not a valid selector"},
    ]})
    .to_string();
    assert_eq!(
        parse_dom_reply(&raw, 3),
        Ok(vec![
            DomObserved {
                count: 2,
                text: Some("Total: 3".into()),
                attribute: Some("/next".into()),
                error: None,
            },
            DomObserved {
                count: 0,
                text: None,
                attribute: None,
                error: None,
            },
            DomObserved {
                count: 0,
                text: None,
                attribute: None,
                error: Some("invalid selector: 'a[' is not a valid selector".into()),
            },
        ])
    );
    assert_eq!(
        parse_dom_reply(r#"{"ok":true,"results":[]}"#, 0),
        Ok(vec![])
    );
}

#[test]
fn a_malformed_dom_reply_is_refused() {
    let refused = |raw: &str, asked: usize| parse_dom_reply(raw, asked).unwrap_err();
    assert_eq!(
        refused("{", 1),
        "the page's answer to the DOM queries is not JSON"
    );
    assert_eq!(
        refused("[]", 1),
        "the page's answer to the DOM queries is an array, not an object"
    );
    // Not ok: the frame's own message, capped.
    let long = "e".repeat(1_000);
    let failed = json!({"ok": false, "error": {"name": "TypeError", "message": long}});
    assert_eq!(refused(&failed.to_string(), 1).chars().count(), 300);
    assert_eq!(
        refused(r#"{"ok":false}"#, 1),
        "the page could not run the DOM queries"
    );
    assert_eq!(
        refused(r#"{"ok":"yes","results":[]}"#, 0),
        "the page could not run the DOM queries"
    );
    assert_eq!(
        refused(r#"{"ok":true}"#, 1),
        "the page's `results` is null, not an array"
    );
    assert_eq!(
        refused(r#"{"ok":true,"results":{}}"#, 1),
        "the page's `results` is an object, not an array"
    );
    assert_eq!(
        refused(r#"{"ok":true,"results":[{"count":1}]}"#, 2),
        "the page answered 1 DOM queries of the 2 asked"
    );
    assert_eq!(
        refused(r#"{"ok":true,"results":[{"count":1},{"count":1}]}"#, 1),
        "the page answered 2 DOM queries of the 1 asked"
    );
    for (entry, why) in [
        ("7", "the page's result 0 is a number, not an object"),
        (
            "{}",
            "the page's result 0 has no `count` (a whole number at least 0)",
        ),
        (
            r#"{"count":-1}"#,
            "the page's result 0 has no `count` (a whole number at least 0)",
        ),
        (
            r#"{"count":1.5}"#,
            "the page's result 0 has no `count` (a whole number at least 0)",
        ),
        (
            r#"{"count":"3"}"#,
            "the page's result 0 has no `count` (a whole number at least 0)",
        ),
        (
            r#"{"count":1,"text":7}"#,
            "the page's result 0: `text` is a number, not a string",
        ),
        (
            r#"{"count":1,"attribute":{}}"#,
            "the page's result 0: `attribute` is an object, not a string",
        ),
        (
            r#"{"error":true}"#,
            "the page's result 0: `error` is a boolean, not a string",
        ),
    ] {
        assert_eq!(
            refused(&format!(r#"{{"ok":true,"results":[{entry}]}}"#), 1),
            why,
            "{entry}"
        );
    }
}

#[test]
fn a_dom_reply_is_capped() {
    let cap = crate::core::limits::DOM_TEXT_CHARS;
    let long = "é".repeat(cap + 50);
    let raw = json!({"ok": true, "results": [
        {"count": 1, "text": long, "attribute": long},
        {"error": long},
    ]})
    .to_string();
    let observed = parse_dom_reply(&raw, 2).unwrap();
    let chars = |s: &Option<String>| s.as_deref().map(|s| s.chars().count());
    assert_eq!(chars(&observed[0].text), Some(cap));
    assert_eq!(chars(&observed[0].attribute), Some(cap));
    assert_eq!(chars(&observed[1].error), Some(300));
}

#[test]
fn a_target_names_its_document_when_known() {
    let bound = Target {
        frame_id: 3,
        document_id: Some("D1".into()),
    };
    assert_eq!(bound.options(), json!({"frameId": 3, "documentId": "D1"}));
    assert_eq!(Target::TOP.options(), json!({"frameId": 0}));
}

#[test]
fn listing_reads_the_version_of_each_kept_tool() {
    let raw = r#"{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test",
                  "tools":[{"name":"t","version":4},{"name":"t","version":9},
                           {"name":"u","version":"5"},{"name":"bad name","version":6},
                           {"name":"v","version":-1},{"name":"w","version":7}]}"#;
    let listing = parse_listing(raw, 0, &L).unwrap();
    let versions: Vec<_> = listing.versions.into_iter().collect();
    assert_eq!(versions, [("t".to_owned(), 4), ("w".to_owned(), 7)]);
}

#[test]
fn a_listing_says_loading_only_while_its_document_is_parsed() {
    for (state, loading) in [
        (r#""loading""#, true),
        (r#""interactive""#, false),
        (r#""complete""#, false),
        ("7", false),
        ("null", false),
    ] {
        let raw = format!(
            r#"{{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test","readyState":{state},"tools":[]}}"#
        );
        assert_eq!(
            parse_listing(&raw, 0, &L).unwrap().loading,
            loading,
            "{state}"
        );
    }
    let older = r#"{"ok":true,"supported":true,"url":"http://a.test/","origin":"http://a.test","tools":[]}"#;
    assert!(
        !parse_listing(older, 0, &L).unwrap().loading,
        "no readyState: loaded"
    );
}

#[test]
fn listing_reads_tools_and_their_frame() {
    let raw = r#"{"ok":true,"supported":true,"url":"http://a.test/x","origin":"http://a.test",
                  "tools":[{"name":"t","description":"d"}]}"#;
    let listing = parse_listing(raw, 4, &L).unwrap();
    assert!(listing.supported);
    assert_eq!(listing.tools.tools[0].origin, "http://a.test");
    assert_eq!(listing.tools.tools[0].frame_id, 4);
    assert!(!listing.polyfilled);
    assert!(!listing.tools.tools[0].annotations.consequential_hint);
}

#[test]
fn a_polyfilled_listing_confirms_what_is_not_read_only() {
    let raw = r#"{"ok":true,"supported":true,"polyfilled":true,"origin":"http://a.test",
                  "tools":[{"name":"close","origin":"https://bank.example"},
                           {"name":"read","annotations":{"readOnlyHint":true}}]}"#;
    let listing = parse_listing(raw, 0, &L).unwrap();
    assert!(listing.polyfilled);
    let tools = &listing.tools.tools;
    assert_eq!(tools[0].origin, "http://a.test");
    assert!(tools[0].annotations.consequential_hint);
    assert!(
        tools[0].annotations.hints_unknown,
        "raised by the host, not said by the page"
    );
    assert!(!tools[1].annotations.consequential_hint);
    assert_eq!(listing.polyfill, Some("unknown"));
}

#[test]
fn a_polyfill_that_keeps_hints_is_read_as_native_and_one_that_drops_them_is_not() {
    let raw = |polyfill: &str| {
        format!(
            r#"{{"ok":true,"supported":true,"polyfilled":true,"polyfill":{polyfill},"origin":"http://a.test",
                "tools":[{{"name":"remove_topping"}},
                         {{"name":"order","annotations":{{"consequentialHint":true}}}},
                         {{"name":"read","annotations":{{"readOnlyHint":true}}}}]}}"#
        )
    };
    let hints = |listing: &FrameListing| -> Vec<(bool, bool)> {
        let tools = &listing.tools.tools;
        tools
            .iter()
            .map(|t| {
                (
                    t.annotations.consequential_hint,
                    t.annotations.hints_unknown,
                )
            })
            .collect()
    };
    // Google's demo polyfill passes every annotation on: its hints are the page's word.
    let google = parse_listing(&raw(r#""google-demo""#), 0, &L).unwrap();
    assert_eq!(google.polyfill, Some("google-demo"));
    // Each tool names the polyfill that served it (the popup's "polyfilled" badge).
    assert!(google
        .tools
        .tools
        .iter()
        .all(|t| t.polyfill == Some("google-demo")));
    assert_eq!(
        hints(&google),
        [(false, false), (true, false), (false, false)]
    );
    // @mcp-b drops consequentialHint; a name the host does not know is "unknown": every tool
    // not read-only is asked, and those the page did not mark say "hints unknown".
    for (given, named) in [
        (r#""mcp-b""#, "mcp-b"),
        (r#""made-up""#, "unknown"),
        ("7", "unknown"),
    ] {
        let listing = parse_listing(&raw(given), 0, &L).unwrap();
        assert_eq!(listing.polyfill, Some(named), "{given}");
        assert_eq!(
            hints(&listing),
            [(true, true), (true, false), (false, false)],
            "{given}"
        );
    }
    // A native listing names no polyfill, whatever it says.
    let native = r#"{"ok":true,"supported":true,"polyfill":"google-demo","origin":"http://a.test","tools":[{"name":"x"}]}"#;
    let native = parse_listing(native, 0, &L).unwrap();
    assert_eq!(native.polyfill, None);
    assert_eq!(native.tools.tools[0].polyfill, None);
    assert_eq!(hints(&native), [(false, false)]);
}

#[test]
fn a_declarative_tools_form_is_listed_as_read_and_capped() {
    let long = "x".repeat(5000);
    let raw = format!(
        r#"{{"ok":true,"supported":true,"origin":"http://a.test","tools":[
            {{"name":"book","form":{{"autoSubmit":true,"navigates":true,"action":"http://a.test/{long}","target":"_blank"}}}},
            {{"name":"search","form":{{"autoSubmit":"yes"}}}},
            {{"name":"plain","form":7}},
            {{"name":"imperative"}}]}}"#
    );
    let listing = parse_listing(&raw, 0, &L).unwrap();
    let forms: Vec<_> = listing.tools.tools.iter().map(|t| t.form.clone()).collect();
    let book = forms[0].as_ref().expect("a form");
    assert!(book.auto_submit && book.navigates);
    assert_eq!(
        book.action.len(),
        crate::core::limits::MAX_FORM_ACTION_BYTES
    );
    assert_eq!(book.target, "_blank");
    // Only `true` is true; a form field that is not an object is no form; the tool stays.
    let search = forms[1].as_ref().expect("a form");
    assert!(!search.auto_submit && !search.navigates && search.action.is_empty());
    assert_eq!(forms[2], None);
    assert_eq!(forms[3], None);
    let json = serde_json::to_value(&listing.tools.tools[1]).unwrap();
    assert_eq!(
        json["form"],
        serde_json::json!({"autoSubmit": false, "navigates": false})
    );
    assert!(serde_json::to_value(&listing.tools.tools[3])
        .unwrap()
        .get("form")
        .is_none());
}

#[test]
fn listing_errors_are_clear() {
    assert!(matches!(
        parse_listing("[]", 0, &L),
        Err(BridgeError::Malformed { .. })
    ));
    assert!(matches!(
        parse_listing("{", 0, &L),
        Err(BridgeError::Malformed { .. })
    ));
    let e = parse_listing(r#"{"ok":true,"tools":{}}"#, 0, &L).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the frame's reply is malformed: `tools` is an object, not an array"
    );
    let small = Limits {
        max_message_bytes: 10,
        ..L
    };
    let e = parse_listing(r#"{"ok":true,"tools":[]}"#, 0, &small).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the frame's reply is 22 bytes, over the cap of 10 (max_message_bytes)"
    );
}

#[test]
fn call_outcomes() {
    assert_eq!(
        parse_call_reply(r#"{"ok":true,"result":"42"}"#, &L),
        Ok(CallOutcome::Text {
            text: "42".into(),
            text_input: false
        })
    );
    assert_eq!(
        parse_call_reply(
            r#"{"ok":true,"result":null,"url":"http://a.test/next"}"#,
            &L
        ),
        Ok(CallOutcome::Navigated {
            url: Some("http://a.test/next".into())
        })
    );
    assert_eq!(
        parse_call_reply(
            r#"{"ok":false,"error":{"name":"UnknownError","message":"boom"}}"#,
            &L
        ),
        Ok(CallOutcome::Failed {
            name: "UnknownError".into(),
            message: "boom".into()
        })
    );
    assert!(parse_call_reply(r#"{"ok":true}"#, &L).is_err());
    assert!(parse_call_reply(r#"{"ok":true,"result":{"a":1}}"#, &L).is_err());
    let small = Limits {
        max_result_bytes: 3,
        ..L
    };
    assert_eq!(
        parse_call_reply(r#"{"ok":true,"result":"1234"}"#, &small)
            .unwrap_err()
            .to_string(),
        "the frame's result is 4 bytes, over the cap of 3 (max_result_bytes)"
    );
}
