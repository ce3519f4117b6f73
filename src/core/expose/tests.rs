//! Exposures, origins, registrations and call outcomes.

use super::*;
use crate::core::mcp::tools::parse_tools;

fn server(name: &str, namespace: Option<&str>) -> McpServerConfig {
    McpServerConfig {
        name: name.into(),
        url: "https://mcp.example/mcp".into(),
        namespace: namespace.map(str::to_owned),
        ..McpServerConfig::context7(None)
    }
}

fn listing() -> Vec<McpTool> {
    parse_tools(&[
        json!({"name": "add", "title": "Sum", "description": "Adds two numbers.",
               "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
               "annotations": {"readOnlyHint": true}}),
        json!({"name": "delete_record", "description": "Deletes a record.",
               "annotations": {"destructiveHint": true}}),
        json!({"name": "note", "description": "Adds a note.",
               "annotations": {"destructiveHint": false}}),
    ])
    .0
}

fn request(value: Value) -> Result<ExposeRequest, String> {
    ExposeRequest::parse(&value)
}

#[test]
fn origins_normalize() {
    for (given, expected) in [
        ("https://Site.Example", "https://site.example"),
        ("https://site.example/", "https://site.example"),
        ("https://site.example:443", "https://site.example"),
        ("http://site.example:80", "http://site.example"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("HTTP://localhost:3000/", "http://localhost:3000"),
        ("http://[::1]:81", "http://[::1]:81"),
    ] {
        assert_eq!(normalize_origin(given).as_deref(), Ok(expected), "{given}");
    }
    for bad in [
        "site.example",
        "ftp://site.example",
        "chrome-extension://abc",
        "https://",
        "https://site.example/path",
        "https://*.site.example",
        "https://user@site.example",
        "https://site.example:0",
        "https://site.example:99999",
        "https://site.example:8o",
        "https://site..example",
        "https://[::1",
        "https://site example",
    ] {
        assert!(normalize_origin(bad).is_err(), "{bad} was accepted");
    }
    assert!(normalize_origin("ftp://x")
        .unwrap_err()
        .contains("only http and https"));
}

#[test]
fn requests_parse_with_clear_errors() {
    assert_eq!(
        request(
            json!({"server": "own", "origin": "https://a.example/", "enabled": true, "tools": ["b", "a", "b"]})
        ),
        Ok(ExposeRequest {
            server: "own".into(),
            origin: "https://a.example".into(),
            enabled: true,
            tools: Some(vec!["a".into(), "b".into()]),
        })
    );
    assert_eq!(
        request(json!({"origin": "https://a.example", "enabled": true})).unwrap_err(),
        "expose: `server` is required (an MCP server's name)"
    );
    assert_eq!(
        request(json!({"server": "own", "enabled": true})).unwrap_err(),
        "expose: `origin` is required"
    );
    assert_eq!(
        request(json!({"server": "own", "origin": "https://a.example"})).unwrap_err(),
        "expose: `enabled` is required (true or false)"
    );
    assert!(
        request(json!({"server": "own", "origin": "https://a.example/x", "enabled": true}))
            .unwrap_err()
            .starts_with("expose: `https://a.example/x` is not an origin")
    );
    assert!(request(
        json!({"server": "own", "origin": "https://a.example", "enabled": true, "tools": []})
    )
    .unwrap_err()
    .contains("`tools` is empty"));
    assert!(request(
        json!({"server": "own", "origin": "https://a.example", "enabled": true, "tools": ["a b"]})
    )
    .is_err());
    assert_eq!(
        request(json!([])).unwrap_err(),
        "expose takes an object, not an array"
    );
}

#[test]
fn switching_on_and_off() {
    let on = |origin: &str, tools: Option<Vec<&str>>| ExposeRequest {
        server: "own".into(),
        origin: origin.into(),
        enabled: true,
        tools: tools.map(|t| t.into_iter().map(str::to_owned).collect()),
    };
    let a = "https://a.example";
    let b = "https://b.example";
    let list = apply(&[], &on(a, None)).unwrap();
    assert_eq!(
        list,
        [Exposure {
            server: "own".into(),
            origins: vec![a.into()],
            tools: None
        }]
    );
    // The same again changes nothing; another origin joins the same exposure.
    assert_eq!(apply(&list, &on(a, None)).unwrap(), list);
    let list = apply(&list, &on(b, None)).unwrap();
    assert_eq!(list[0].origins, [a, b]);
    // Other tools for one origin: it moves to an exposure of its own.
    let list = apply(&list, &on(b, Some(vec!["add"]))).unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].origins, [a]);
    assert_eq!(list[1].origins, [b]);
    assert_eq!(list[1].tools, Some(vec!["add".to_owned()]));
    assert_eq!(for_origin(&list, b), [&list[1]]);
    assert!(for_origin(&list, "https://c.example").is_empty());
    // Off: the origin leaves, and an exposure left empty goes.
    let off = ExposeRequest {
        enabled: false,
        ..on(b, None)
    };
    let list = apply(&list, &off).unwrap();
    assert_eq!(list.len(), 1);
    assert!(for_origin(&list, b).is_empty());
    // Another server's exposure is left alone.
    let other = ExposeRequest {
        server: "docs".into(),
        ..on(a, None)
    };
    let list = apply(&list, &other).unwrap();
    let list = apply(
        &list,
        &ExposeRequest {
            enabled: false,
            ..on(a, None)
        },
    )
    .unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].server, "docs");
}

#[test]
fn stored_exposures_are_read_leniently() {
    let (list, problems) = parse_stored(&json!([
        {"server": "own", "origins": ["https://A.example/", "https://a.example", "nope"]},
        {"server": "docs", "origins": []},
        {"origins": ["https://b.example"]},
    ]));
    assert_eq!(
        list,
        [Exposure {
            server: "own".into(),
            origins: vec!["https://a.example".into()],
            tools: None
        }]
    );
    assert_eq!(problems.len(), 2, "{problems:?}");
    assert_eq!(parse_stored(&Value::Null), (vec![], vec![]));
    assert_eq!(parse_stored(&json!({})).1.len(), 1);
}

#[test]
fn registrations_from_a_listing() {
    let exposure = Exposure {
        server: "own".into(),
        origins: vec!["https://a.example".into()],
        tools: None,
    };
    let mut taken = HashSet::new();
    let (tools, problems) = page_tools(&exposure, &server("own", None), &listing(), &mut taken);
    assert!(problems.is_empty());
    assert_eq!(
        tools
            .iter()
            .map(|t| (t.name.as_str(), t.needs_confirmation))
            .collect::<Vec<_>>(),
        [("add", false), ("delete_record", true), ("note", false)]
    );
    assert_eq!(
        tools[0].registration(),
        json!({
            "name": "add",
            "description": "Sum. Adds two numbers.",
            "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}}},
            "annotations": {"readOnlyHint": true, "consequentialHint": false, "untrustedContentHint": true},
        })
    );
    assert_eq!(
        tools[1].registration()["annotations"],
        json!({"readOnlyHint": false, "consequentialHint": true, "untrustedContentHint": true})
    );
    assert_eq!(
        tools[2].registration()["annotations"]["consequentialHint"],
        json!(false)
    );
    assert_eq!(tools_reply(&tools[..1]), json!([tools[0].registration()]));

    // A second server of the same names clashes unless it has a namespace.
    let (clash, problems) = page_tools(&exposure, &server("docs", None), &listing(), &mut taken);
    assert!(clash.is_empty());
    assert_eq!(problems.len(), 3);
    assert!(problems[0].contains("`add` of the MCP server docs left out"));
    let (spaced, _) = page_tools(
        &exposure,
        &server("docs", Some("docs")),
        &listing(),
        &mut taken,
    );
    assert_eq!(spaced[0].name, "docs__add");
    assert_eq!(spaced[0].tool.name, "add");
}

#[test]
fn filters_and_trust() {
    let exposure = Exposure {
        server: "own".into(),
        origins: vec!["https://a.example".into()],
        tools: Some(vec!["add".into(), "delete_record".into(), "gone".into()]),
    };
    let filtered = McpServerConfig {
        filter: Some(vec!["add".into(), "note".into()]),
        ..server("own", None)
    };
    let (tools, problems) = page_tools(&exposure, &filtered, &listing(), &mut HashSet::new());
    assert_eq!(
        tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
        ["add"]
    );
    assert_eq!(
        problems,
        ["the MCP server own has no tool `gone` to expose"]
    );
    let trusted = McpServerConfig {
        trusted: true,
        ..server("own", None)
    };
    let (tools, _) = page_tools(&exposure, &trusted, &listing(), &mut HashSet::new());
    assert!(tools.iter().all(|t| !t.needs_confirmation));
    // Trust skips our confirmation; the hint still tells the page's agents what it does.
    assert_eq!(
        tools[1].registration()["annotations"]["consequentialHint"],
        json!(true)
    );
}

#[test]
fn calls_parse_resolve_and_answer() {
    let call =
        CallExposedRequest::parse(&json!({"op": "callExposed", "name": "add", "args": {"a": 2}}))
            .unwrap();
    assert_eq!(call.name, "add");
    assert_eq!(call.args["a"], json!(2));
    assert!(CallExposedRequest::parse(&json!({"name": "add"}))
        .unwrap()
        .args
        .is_empty());
    assert_eq!(
        CallExposedRequest::parse(&json!({"name": "add", "args": [1]})).unwrap_err(),
        "callExposed: `args` must be an object (the tool's input), not an array"
    );
    assert!(CallExposedRequest::parse(&json!({"name": "a b"})).is_err());
    assert!(CallExposedRequest::parse(&json!({})).is_err());

    let mut taken = HashSet::new();
    let exposure = Exposure {
        server: "own".into(),
        origins: vec![],
        tools: None,
    };
    let (tools, _) = page_tools(&exposure, &server("own", None), &listing(), &mut taken);
    assert_eq!(
        resolve(&tools, "delete_record").unwrap().tool.name,
        "delete_record"
    );
    assert_eq!(
        resolve(&tools, "other").unwrap_err(),
        "no tool named `other` is exposed to this page"
    );
    let text = confirmation_text("https://a.example", &tools[1], &call.args).unwrap();
    let text = text.expect("delete_record acts: it is asked about");
    assert_eq!(
        confirmation_text("https://a.example", &tools[0], &call.args),
        Ok(None)
    );
    assert_eq!(
        text,
        "WebMCP Host\n\nThis page (https://a.example) wants to run “delete_record” of the MCP server\nown with:\n{\n  \"a\": 2\n}\n\nAllow it?"
    );

    let add = &tools[0].tool;
    assert_eq!(
        call_reply(
            add,
            &CallResult::Ok {
                text: "2 + 40 = 42".into(),
                structured: None,
                parts: Vec::new(),
            },
            &[]
        ),
        Ok("2 + 40 = 42".into())
    );
    assert_eq!(
        call_reply(add, &CallResult::Error("it failed".into()), &[]),
        Err("it failed".into())
    );
    // What the server echoes of the connection's secrets never reaches the page.
    let secrets = vec!["sk-exposed-key-0123456789".to_owned()];
    let echoed = |text: &str| CallResult::Ok {
        text: text.into(),
        structured: None,
        parts: Vec::new(),
    };
    assert_eq!(
        call_reply(
            add,
            &echoed("sent: Bearer sk-exposed-key-0123456789"),
            &secrets
        ),
        Ok("sent: Bearer [redacted]".into())
    );
    assert_eq!(
        call_reply(
            add,
            &CallResult::Error("bad key sk-exposed-key-01…".into()),
            &secrets
        ),
        Err("bad key [redacted]…".into())
    );
    let with_schema = McpTool {
        output_schema: Some(json!({"type": "object", "required": ["sum"]}).into()),
        ..add.clone()
    };
    let reply = call_reply(
        &with_schema,
        &CallResult::Ok {
            text: "{}".into(),
            structured: Some(json!({"total": 3})),
            parts: Vec::new(),
        },
        &[],
    );
    assert!(reply
        .unwrap_err()
        .contains("does not match its output schema"));
}

#[test]
fn which_tabs_are_told_and_with_what() {
    assert_eq!(sync_message(), json!({"webmcpHostExpose": 1, "op": "sync"}));
    assert!(tells("https://a.test", "https://a.test/page?x#y"));
    assert!(tells("https://a.test", "https://A.test:443/"));
    assert!(!tells("https://a.test", "https://b.test/"));
    assert!(!tells("https://a.test", "http://a.test/"));
    assert!(!tells("https://a.test", "chrome://newtab/"));
}

#[test]
fn an_exposure_switched_on_names_a_configured_server() {
    let on =
        request(json!({"server": "own", "origin": "https://a.test", "enabled": true})).unwrap();
    let off =
        request(json!({"server": "gone", "origin": "https://a.test", "enabled": false})).unwrap();
    let servers = [server("own", None)];
    assert_eq!(check_configured(&on, &servers), Ok(()));
    assert_eq!(check_configured(&off, &[]), Ok(()));
    assert_eq!(
        check_configured(&on, &[]).unwrap_err(),
        "expose: no MCP server named `own` is configured (configure it first)"
    );
}

#[test]
fn connections_are_kept_for_one_configuration_and_key() {
    let own = server("own", None);
    let moved = McpServerConfig {
        url: "https://mcp.example/other".into(),
        ..own.clone()
    };
    let id = |config, key, sign_in: Option<&str>| Identity {
        config,
        key,
        sign_in: sign_in.map(str::to_owned),
    };
    assert_eq!(connect(None, id(&own, None, None)), Connect::Open);
    let kept = || Some(id(&own, Some("k"), Some("t1")));
    assert_eq!(
        connect(kept(), id(&own, Some("k"), Some("t1"))),
        Connect::Reuse
    );
    assert_eq!(
        connect(kept(), id(&own, Some("k2"), Some("t1"))),
        Connect::Replace
    );
    assert_eq!(
        connect(Some(id(&own, None, None)), id(&moved, None, None)),
        Connect::Replace
    );
    // Signed out, signed in anew, or a refresh that failed: the kept session is replaced.
    assert_eq!(connect(kept(), id(&own, Some("k"), None)), Connect::Replace);
    assert_eq!(
        connect(kept(), id(&own, Some("k"), Some("t2"))),
        Connect::Replace
    );
    assert_eq!(
        connect(Some(id(&own, None, None)), id(&own, None, Some("t1"))),
        Connect::Replace
    );
    let exposures = vec![Exposure {
        server: "own".into(),
        origins: vec!["https://a.test".into()],
        tools: None,
    }];
    let open = ["own".to_owned(), "old".to_owned()];
    assert_eq!(unused(&open, &exposures), ["old"]);
    assert!(unused(&open[..1], &exposures).is_empty());
}

#[test]
fn a_confirmed_call_runs_only_while_still_exposed() {
    let exposure = Exposure {
        server: "own".into(),
        origins: vec!["https://a.test".into()],
        tools: None,
    };
    let mut taken = HashSet::new();
    let (tools, _) = page_tools(&exposure, &server("own", None), &listing(), &mut taken);
    let tool = resolve(&tools, "delete_record").unwrap();
    let exposures = vec![exposure.clone()];
    assert_eq!(still_exposed(&exposures, "https://a.test", tool), Ok(()));
    assert_eq!(
        still_exposed(&exposures, "https://b.test", tool).unwrap_err(),
        "`delete_record` is no longer exposed to this page"
    );
    assert_eq!(
        not_connected("delete_record"),
        "the MCP server of `delete_record` is not connected any more"
    );
}
