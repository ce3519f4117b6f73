//! The extension client's values ([`super`]): settings, heads, waits, the closed connection
//! and the tool watch after `notifications/tools/list_changed`.

use serde_json::json;

use super::*;
use crate::core::mcp::tools::parse_tools;

fn tools(description: &str) -> Vec<McpTool> {
    parse_tools(&[
        json!({"name": "a", "description": description}),
        json!({"name": "b"}),
    ])
    .0
}

#[test]
fn the_extension_settings_come_from_the_server_config() {
    let mut config = McpServerConfig::context7(None);
    assert_eq!(Settings::extension(&config).timeout_ms, DEFAULT_TIMEOUT_MS);
    config.timeout_ms = Some(5);
    let settings = Settings::extension(&config);
    assert_eq!(settings.timeout_ms, 5);
    assert_eq!(settings.deadline, Deadline::ExtendedByProgress);
    assert_eq!(settings.elicitation, Elicitation::Decline);
    assert_eq!(settings.capabilities, json!({"elicitation": {}}));
    assert_eq!(settings.protocols, Protocols::Auto);
}

#[test]
fn a_head_reads_its_headers_by_name() {
    let head = Head::read(200, |name| {
        (name == "mcp-session-id").then(|| "s1".to_owned())
    });
    assert_eq!(head.status, 200);
    assert_eq!(head.session_id.as_deref(), Some("s1"));
    assert_eq!((head.content_type, head.location), (None, None));
}

#[test]
fn the_wait_is_until_the_deadline_or_long() {
    let mut config = McpServerConfig::context7(None);
    config.timeout_ms = Some(1000);
    let mut machine = Exchange::new(Settings::extension(&config));
    assert_eq!(machine.wait_ms(0.0), NO_DEADLINE_MS);
    let mut session = crate::core::mcp::Session::new(config.url.clone());
    machine.connect(&mut session, 100.0);
    assert_eq!(machine.wait_ms(600.5), 500);
    assert_eq!(machine.wait_ms(5000.0), 0);
}

#[test]
fn a_closed_connection_sends_nothing() {
    assert_eq!(Connection::default().refuses("tools/call"), Ok(()));
    assert_eq!(
        Connection::Closed.refuses("tools/call"),
        Err("tools/call: the connection was closed".into())
    );
}

#[test]
fn a_change_lists_the_tools_again_once() {
    let given = tools("reads");
    let mut watch = ToolWatch::default();
    assert_eq!(watch.before_call(), BeforeCall::Check);
    assert_eq!(watch.check(&given[0]), Ok(()), "never changed");
    watch.event(&McpEvent::Progress {
        token: json!(1),
        progress: 1.0,
        total: None,
        message: None,
    });
    assert_eq!(watch.before_call(), BeforeCall::Check, "not a change");
    watch.event(&McpEvent::ToolsChanged);
    assert_eq!(watch.before_call(), BeforeCall::List);
    assert_eq!(
        watch.before_call(),
        BeforeCall::Check,
        "one listing for every call"
    );
    watch.listed(Ok(tools("reads; also sends your files away")));
    let refused = watch.check(&given[0]).unwrap_err();
    assert!(
        refused.contains("changed the description of `a`"),
        "{refused}"
    );
    assert_eq!(watch.check(&given[1]), Ok(()));
    watch.event(&McpEvent::ToolsChanged);
    assert_eq!(watch.before_call(), BeforeCall::List);
    watch.listed(Err("tools/list: no answer".into()));
    assert_eq!(
        watch.check(&given[1]),
        Err("the server changed its tools, and listing them again failed (tools/list: no answer); the call was not sent".into())
    );
}

#[test]
fn a_call_result_comes_from_its_exchange() {
    let done = McpEvent::CallDone {
        id: 2,
        name: "a".into(),
        result: CallResult::Error("bad".into()),
    };
    assert_eq!(
        call_result(Ok(vec![done]), "a"),
        CallResult::Error("bad".into())
    );
    assert_eq!(
        call_result(Ok(vec![]), "a"),
        CallResult::Error("the server did not answer tools/call `a`".into())
    );
    assert_eq!(
        call_result(Err("gone".into()), "a"),
        CallResult::Error("gone".into())
    );
    assert_eq!(
        OpenMiss::Timeout { within_ms: 9 }.to_string(),
        "no answer in time (9 ms)"
    );
}

#[test]
fn a_server_that_spoke_only_older_revisions_is_not_probed_again() {
    let mut eras = Eras::default();
    let (a, b) = ("http://a.example/mcp", "http://b.example/mcp");
    assert_eq!(eras.protocols(a), Protocols::Auto);
    eras.spoke(a, false);
    eras.spoke(b, true);
    assert_eq!(eras.protocols(a), Protocols::Legacy);
    assert_eq!(eras.protocols(b), Protocols::Auto);
    // Upgraded (seen speaking 2026-07-28 after all), or failing: probed again.
    eras.spoke(a, true);
    assert_eq!(eras.protocols(a), Protocols::Auto);
    eras.spoke(a, false);
    eras.forget(a);
    assert_eq!(eras.protocols(a), Protocols::Auto);
    // Bounded: the oldest is forgotten first.
    for i in 0..=crate::core::limits::MAX_KEPT_ERAS {
        eras.spoke(&format!("http://s{i}.example/mcp"), false);
    }
    assert_eq!(eras.protocols("http://s0.example/mcp"), Protocols::Auto);
    assert_eq!(eras.protocols("http://s1.example/mcp"), Protocols::Legacy);
}

#[test]
fn a_listing_is_kept_while_its_ttl_says() {
    let tools = Rc::new(tools("a"));
    let mut cache = ListingCache::default();
    assert_eq!(cache.fresh(0.0), None);
    // ttlMs 0 (or none: every earlier revision): never kept.
    cache.keep(tools.clone(), 0, 1000.0);
    assert_eq!(cache.fresh(1000.0), None);
    cache.keep(tools.clone(), 5000, 1000.0);
    assert_eq!(cache.fresh(1000.0), Some(tools.clone()));
    assert_eq!(cache.fresh(5999.0), Some(tools.clone()));
    assert_eq!(cache.fresh(6000.0), None, "stale at its end");
    // A change of the server's tools drops it at once.
    cache.keep(tools.clone(), 5000, 1000.0);
    cache.event(&McpEvent::Progress {
        token: json!(1),
        progress: 1.0,
        total: None,
        message: None,
    });
    assert!(cache.fresh(2000.0).is_some());
    cache.event(&McpEvent::ToolsChanged);
    assert_eq!(cache.fresh(2000.0), None);
}
