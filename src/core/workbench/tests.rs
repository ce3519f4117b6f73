use serde_json::{json, Value};

use super::diagnose::{
    chrome_version, diagnose, parse_facts, FrameFact, Level, Listing, PageFacts,
};
use super::inventory::{inventory, parse_query, OpenTab, Seen};
use super::validate::{validate_arguments, Against, ValidateRequest};
use crate::core::limits::Limits;
use crate::core::page::tabs::TabTools;
use crate::core::page::tool::{Annotations, PageTool};

fn every_feature() -> Value {
    json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$"},
            "count": {"type": "integer", "minimum": 1, "maximum": 10},
            "price": {"type": "number", "exclusiveMinimum": 0},
            "gift": {"type": "boolean"},
            "size": {"enum": ["s", "m", "l"]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
            "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        },
        "required": ["email", "count"],
        "additionalProperties": false
    })
}

#[test]
fn valid_arguments_pass() {
    let v = validate_arguments(
        &every_feature(),
        &json!({"email": "a@b.test", "code": "ABC", "count": 3, "price": 1.5, "gift": true, "size": "m", "tags": ["x"], "address": {"city": "Oslo"}}),
    );
    assert!(v.valid, "{v:?}");
    assert!(v.errors.is_empty());
}

#[test]
fn each_error_is_placed_at_its_field() {
    let v = validate_arguments(
        &every_feature(),
        &json!({"email": "not-an-email", "code": "abc", "count": 11, "price": 0, "size": "xl", "tags": ["a", "b", "c"], "address": {}, "extra": 1}),
    );
    assert!(!v.valid);
    let paths: Vec<&str> = v.errors.iter().map(|e| e.path.as_str()).collect();
    for path in [
        "/email",
        "/code",
        "/count",
        "/price",
        "/size",
        "/tags",
        "/address/city",
        "",
    ] {
        assert!(paths.contains(&path), "{path} missing in {paths:?}");
    }
    let city = v.errors.iter().find(|e| e.path == "/address/city").unwrap();
    assert_eq!(city.message, "required");
    let missing = validate_arguments(&every_feature(), &json!({}));
    let paths: Vec<&str> = missing.errors.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/email", "/count"]);
}

#[test]
fn not_an_object_and_a_broken_schema_are_clear() {
    let v = validate_arguments(&every_feature(), &json!([1]));
    assert!(!v.valid);
    assert_eq!(v.errors[0].path, "");
    assert!(v.errors[0].message.contains("an array, not an object"));
    let broken = validate_arguments(&json!({"type": 5}), &json!({"a": 1}));
    assert!(broken.valid);
    assert!(broken.schema_problem.unwrap().contains("does not compile"));
    let slash = validate_arguments(&json!({"required": ["a/b"]}), &json!({}));
    assert_eq!(slash.errors[0].path, "/a~1b");
}

#[test]
fn requests_name_a_schema_or_a_tool() {
    let r =
        ValidateRequest::parse(&json!({"inputSchema": {"type": "object"}, "args": {}})).unwrap();
    assert_eq!(r.against, Against::Schema(json!({"type": "object"})));
    let r =
        ValidateRequest::parse(&json!({"tabId": 3, "name": "add", "frameId": 2, "args": {"a": 1}}))
            .unwrap();
    assert_eq!(
        r.against,
        Against::Tool {
            tab_id: 3,
            name: "add".into(),
            frame_id: Some(2)
        }
    );
    for bad in [
        json!(null),
        json!({"tabId": 1, "name": "x"}),
        json!({"args": {}}),
        json!({"tabId": -1, "name": "x", "args": {}}),
        json!({"inputSchema": [], "args": {}}),
        json!({"tabId": 1, "args": {}}),
    ] {
        let error = ValidateRequest::parse(&bad).unwrap_err();
        assert!(error.0.starts_with("validateArguments: "), "{error}");
    }
    let huge = json!({"inputSchema": {"description": "x".repeat(70_000)}, "args": {}});
    assert!(ValidateRequest::parse(&huge)
        .unwrap_err()
        .0
        .contains("max_schema_bytes"));
}

fn tool(name: &str, description: &str, frame_id: i64) -> PageTool {
    PageTool {
        name: name.into(),
        title: None,
        description: description.into(),
        input_schema: json!({"type": "object", "properties": {}}),
        output_schema: None,
        annotations: Annotations {
            read_only_hint: true,
            ..Annotations::default()
        },
        origin: "http://a.test".into(),
        frame_id,
        form: None,
        polyfill: None,
    }
}

fn tab(id: i64, title: &str) -> OpenTab {
    OpenTab {
        tab_id: id,
        title: title.into(),
        url: format!("http://a.test/{id}"),
    }
}

fn tools(list: Vec<PageTool>) -> TabTools {
    TabTools {
        tools: list,
        ..TabTools::default()
    }
}

#[test]
fn inventory_lists_every_tab_and_searches() {
    let mut seen = Seen::default();
    let one = vec![
        tool("search", "Searches the shop.", 0),
        tool("cart", "Shows the cart.", 1),
    ];
    let two = vec![tool("search", "Searches the blog.", 0)];
    seen.observe(1, &one);
    seen.observe(2, &two);
    let listed = || {
        vec![
            (tab(1, "Shop"), Ok(tools(one.clone()))),
            (tab(2, "Blog"), Ok(tools(two.clone()))),
            (tab(3, "chrome://x"), Err("no access".into())),
        ]
    };
    let all = inventory(listed(), &seen, None, false);
    assert_eq!(all.total, 3);
    assert_eq!(all.tabs, 3);
    assert_eq!(all.tools.len(), 3);
    assert_eq!(all.tools[1].frame_id, 1);
    assert_eq!(all.tools[0].hints, ["readOnly"]);
    assert_eq!(all.unlisted[0].tab_id, 3);
    let found = inventory(listed(), &seen, Some("SEARCH blog"), false);
    assert_eq!(found.tools.len(), 1);
    assert_eq!(found.tools[0].tab_title, "Blog");
    assert_eq!(
        inventory(listed(), &seen, Some("read-only nothing"), false)
            .tools
            .len(),
        0
    );
    assert_eq!(parse_query(&json!({"query": "  "})).unwrap(), None);
    assert!(parse_query(&json!({"query": 3})).is_err());
}

#[test]
fn a_redefined_tool_is_flagged_with_the_difference() {
    let mut seen = Seen::default();
    let first = tool("search", "Searches.", 0);
    seen.observe(1, std::slice::from_ref(&first));
    let mut later = first.clone();
    later.description = "Searches everything.".into();
    later.input_schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    later.annotations.consequential_hint = true;
    seen.observe(1, std::slice::from_ref(&later));
    let changes = seen.changes(1, &later);
    let fields: Vec<&str> = changes.iter().map(|c| c.field).collect();
    assert_eq!(fields, ["description", "inputSchema", "annotations"]);
    assert_eq!(changes[0].before, json!("Searches."));
    assert_eq!(changes[0].after, json!("Searches everything."));
    // Another tab, or the same tab once forgotten, has not seen it before.
    assert!(seen.changes(2, &later).is_empty());
    let listed = vec![(tab(1, "A"), Ok(tools(vec![later.clone()])))];
    assert_eq!(
        inventory(listed, &seen, None, false).tools[0].changed.len(),
        3
    );
    seen.keep_tabs(&[]);
    assert!(seen.changes(1, &later).is_empty());
    assert!(seen.changes(1, &first).is_empty());
}

#[test]
fn a_changed_output_schema_is_a_redefinition_unless_it_was_never_known() {
    let mut seen = Seen::default();
    let first = tool("order", "Orders.", 0);
    seen.observe(1, std::slice::from_ref(&first));
    let mut later = first.clone();
    later.output_schema = Some(json!({"type": "object", "required": ["orderId"]}));
    let changes = seen.changes(1, &later);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0].field, "outputSchema");
    assert_eq!(changes[0].before, Value::Null);
    assert_eq!(changes[0].after["required"], json!(["orderId"]));
    // Through storage the schema is kept; a record stored without the key knows nothing of it.
    let restored = Seen::from_stored(&seen.to_stored());
    assert_eq!(restored.changes(1, &later).len(), 1);
    let mut stored = seen.to_stored();
    stored["tabs"][0]["tools"][0]
        .as_object_mut()
        .unwrap()
        .remove("outputSchema");
    assert!(Seen::from_stored(&stored).changes(1, &later).is_empty());
}

#[test]
fn first_definitions_survive_a_restart_through_storage() {
    let mut seen = Seen::default();
    let first = tool("search", "Searches.", 0);
    assert!(seen.observe(7, std::slice::from_ref(&first)), "new: store");
    assert!(
        !seen.observe(7, std::slice::from_ref(&first)),
        "known: nothing to store"
    );
    let stored = seen.to_stored();
    // Through JSON, as chrome.storage.session keeps it.
    let restored = Seen::from_stored(&serde_json::from_str(&stored.to_string()).unwrap());
    let mut later = first.clone();
    later.description = "Searches and sends.".into();
    let changes = restored.changes(7, &later);
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].before, json!("Searches."));
    assert!(restored.changes(7, &first).is_empty());
    // Anything malformed is left out; nothing panics.
    for bad in [
        json!(null),
        json!({"tabs": 3}),
        json!({"tabs": [{"tabId": "x"}, {"tabId": 1, "tools": [{"name": 2}]}]}),
    ] {
        let seen = Seen::from_stored(&bad);
        assert!(seen.changes(1, &first).is_empty());
    }
    // Closed tabs are forgotten, and say so (then stored again).
    let mut seen = restored;
    assert!(!seen.keep_tabs(&[7]));
    assert!(seen.keep_tabs(&[]));
    assert_eq!(seen.to_stored(), json!({"tabs": []}));
}

#[test]
fn the_stored_memory_is_bounded() {
    use super::inventory::{MAX_SEEN_STORED_BYTES, MAX_SEEN_TABS};
    let mut seen = Seen::default();
    let one = tool("search", "Searches.", 0);
    for tab_id in 0..(MAX_SEEN_TABS as i64 + 5) {
        seen.observe(tab_id, std::slice::from_ref(&one));
    }
    let stored = seen.to_stored();
    let tabs = stored["tabs"].as_array().unwrap();
    assert_eq!(tabs.len(), MAX_SEEN_TABS);
    assert_eq!(
        tabs[0]["tabId"],
        MAX_SEEN_TABS as i64 + 4,
        "the most recent first"
    );
    let mut changed = one.clone();
    changed.description = "Other.".into();
    assert!(
        seen.changes(0, &changed).is_empty(),
        "the oldest tab was dropped"
    );
    assert_eq!(seen.changes(5, &changed).len(), 1);
    // Big definitions: the bytes stored stay under the budget.
    let mut big = Seen::default();
    let huge = "x".repeat(60_000);
    let many: Vec<PageTool> = (0..60).map(|i| tool(&format!("t{i}"), &huge, 0)).collect();
    big.observe(1, &many);
    let text = big.to_stored().to_string();
    assert!(
        text.len() <= MAX_SEEN_STORED_BYTES + 1_000,
        "{}",
        text.len()
    );
    assert!(Seen::from_stored(&big.to_stored())
        .changes(1, &many[0])
        .is_empty());
}

fn facts(value: Value) -> PageFacts {
    parse_facts(&json!({"ok": true, "facts": value}).to_string()).unwrap()
}

const UA: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";

fn ids(d: &super::diagnose::Diagnosis) -> Vec<&str> {
    d.findings.iter().map(|f| f.id).collect()
}

#[test]
fn webmcp_off_says_how_to_turn_it_on() {
    let f = facts(
        json!({"url": "http://a.test/", "native": false, "polyfill": false, "userAgent": UA}),
    );
    let d = diagnose(Ok(&f), &Listing::default());
    assert_eq!(d.chrome_version, Some(156));
    assert_eq!(ids(&d), ["no-webmcp", "chrome-version"]);
    assert!(d.findings[0].fix.contains("enable-webmcp-testing"));
    assert_eq!(d.findings[0].level, Level::Problem);
    let old = facts(json!({"url": "http://a.test/", "userAgent": "Chrome/120.0"}));
    assert!(diagnose(Ok(&old), &Listing::default()).findings[0]
        .message
        .contains("older than"));
}

#[test]
fn the_flag_named_is_the_one_this_chrome_needs() {
    let off = |version: &str| {
        let ua = UA.replace("Chrome/156", &format!("Chrome/{version}"));
        let f = facts(json!({"url": "http://a.test/", "userAgent": ua}));
        diagnose(Ok(&f), &Listing::default()).findings[0]
            .fix
            .clone()
    };
    assert!(off("156").contains("chrome://flags/#enable-webmcp-testing"));
    let new = off("157");
    assert!(
        new.starts_with("Start Chrome with --enable-features=WebMCP"),
        "{new}"
    );
    assert!(new.contains("no longer"), "{new}");
    let shapes: Vec<&str> = [150, 155, 156, 159, 160, 170]
        .into_iter()
        .map(super::diagnose::shape_of)
        .collect();
    assert!(shapes[0].contains("JSON text") && shapes[1].contains("as an object"));
    assert!(shapes[2].contains("on `document.modelContext`"));
    assert!(shapes[3].contains("outputSchema") && shapes[4].contains("`source`"));
    assert_eq!(shapes[4], shapes[5]);
}

#[test]
fn the_chrome_version_card_is_one_short_sentence() {
    let card = |version: u32, native: bool| {
        let ua = UA.replace("Chrome/156", &format!("Chrome/{version}"));
        let f = facts(json!({"url": "http://a.test/", "native": native, "userAgent": ua}));
        let d = diagnose(Ok(&f), &Listing::default());
        let card = d.findings.iter().find(|f| f.id == "chrome-version");
        card.expect("every diagnosis with a version has its card")
            .clone()
    };
    for version in [120, 150, 154, 155, 156, 157, 158, 159, 160, 170] {
        for native in [true, false] {
            let card = card(version, native);
            let message = &card.message;
            assert_eq!(card.level, Level::Info);
            assert!(
                message.starts_with(&format!("Chrome {version}: ")),
                "{message}"
            );
            let words = message.split_whitespace().count();
            assert!(words <= 20, "{words} words: {message}");
            // One sentence: no flag, no polyfill or hint lecture, no advice.
            assert!(message.ends_with('.') && !message[..message.len() - 1].contains(". "));
            for noise in ["enable-features", "flags", "Polyfill", "consequentialHint"] {
                assert!(!message.contains(noise), "{message}");
            }
            assert!(card.fix.split_whitespace().count() <= 5, "{}", card.fix);
        }
    }
    // The one difference of each range, the same facts as before.
    assert!(card(154, true).message.contains("JSON text"));
    assert!(card(155, true).message.contains("on `window`"));
    for version in [156, 158] {
        let message = card(version, true).message;
        assert!(message.contains("on `document.modelContext`"), "{message}");
        assert!(message.contains("`outputSchema` from 159"), "{message}");
    }
    assert!(card(159, true).message.contains("keeps `outputSchema`"));
    assert!(card(160, true).message.contains("getters"));
}

#[test]
fn origin_trial_tokens_and_the_agent_cluster_are_read() {
    use super::trial::sample::token;
    let webmcp = |origin: &str, expiry: i64| {
        token(
            3,
            &json!({"origin": origin, "feature": "WebMCP", "expiry": expiry}).to_string(),
        )
    };
    let nov_17_2026 = 1_794_873_600;
    let f = facts(json!({
        "url": "https://shop.test/cart", "native": false, "userAgent": UA,
        "originAgentCluster": false,
        "originTrialTokens": [
            webmcp("https://shop.test:443", nov_17_2026),
            webmcp("https://other.test", nov_17_2026 + 86_400 * 400),
            webmcp("https://shop.test", nov_17_2026 + 86_400 * 400),
            token(3, &json!({"origin": "https://shop.test", "feature": "Other", "expiry": 1}).to_string()),
            "not a token",
        ],
    }));
    let now = Listing {
        now_ms: (nov_17_2026 as f64 + 86_400.0 * 16.0) * 1000.0,
        ..Listing::default()
    };
    let d = diagnose(Ok(&f), &now);
    let found = ids(&d);
    for id in [
        "origin-agent-cluster",
        "origin-trial-expired",
        "origin-trial-origin",
        "origin-trial",
        "origin-trial-unreadable",
    ] {
        assert_eq!(
            found.iter().filter(|f| **f == id).count(),
            1,
            "{id}: {found:?}"
        );
    }
    let of = |id: &str| d.findings.iter().find(|f| f.id == id).unwrap();
    assert!(of("origin-trial-expired")
        .message
        .contains("expired on 2026-11-17"));
    assert_eq!(of("origin-trial-expired").level, Level::Problem);
    assert!(of("origin-trial-origin")
        .message
        .contains("https://other.test"));
    assert!(of("origin-agent-cluster").message.contains("SecurityError"));
    // Native WebMCP on: a token's trouble is only worth knowing.
    let mut native = f.clone();
    native.native = true;
    let d = diagnose(Ok(&native), &now);
    let expired = d
        .findings
        .iter()
        .find(|f| f.id == "origin-trial-expired")
        .unwrap();
    assert_eq!(expired.level, Level::Info);
    // No clock: nothing is called expired.
    let d = diagnose(Ok(&f), &Listing::default());
    assert!(!ids(&d).contains(&"origin-trial-expired"));
}

#[test]
fn a_blocked_policy_and_undelegated_frames_are_found() {
    let f = facts(json!({
        "url": "http://127.0.0.1:8000/p.html", "native": true, "toolsAllowed": false, "userAgent": UA,
        "frames": [
            {"src": "http://localhost:8000/f.html", "allow": ""},
            {"src": "http://localhost:8000/g.html", "allow": "camera; tools"},
            {"src": "http://127.0.0.1:8000/same.html", "allow": ""},
            {"src": "about:blank", "allow": ""}
        ],
        "documentDomain": true
    }));
    let d = diagnose(Ok(&f), &Listing::default());
    let found = ids(&d);
    assert_eq!(found[0], "policy-blocked");
    assert_eq!(
        found
            .iter()
            .filter(|id| **id == "frame-not-delegated")
            .count(),
        1,
        "{found:?}"
    );
    assert!(found.contains(&"document-domain"));
    assert!(!found.contains(&"none-registered"));
    assert!(d
        .findings
        .iter()
        .any(|f| f.message.contains("http://localhost:8000")));
}

#[test]
fn site_policies_polyfills_and_unreachable_pages() {
    let f = facts(json!({"url": "http://a.test/", "polyfill": true}));
    let all_filtered = Listing {
        listed: 2,
        shown: 0,
        problems: vec!["x: bad name".into()],
        ..Listing::default()
    };
    let d = diagnose(Ok(&f), &all_filtered);
    assert_eq!(ids(&d), ["site-policy", "skipped-entry", "webmcp-polyfill"]);
    assert_eq!(d.tools, 0);
    let some = diagnose(
        Ok(&f),
        &Listing {
            listed: 3,
            shown: 2,
            ..Listing::default()
        },
    );
    assert!(ids(&some).contains(&"site-policy-some"));
    let none = diagnose(
        Ok(&facts(json!({"url": "http://a.test/", "native": true}))),
        &Listing::default(),
    );
    assert_eq!(ids(&none), ["none-registered", "webmcp-native"]);
    let gone = diagnose(Err("Receiving end does not exist"), &Listing::default());
    assert_eq!(ids(&gone), ["no-content-script"]);
    assert!(
        parse_facts("{\"ok\": false, \"error\": {\"message\": \"nope\"}}")
            .unwrap_err()
            .contains("nope")
    );
    assert!(parse_facts("[").is_err());
    assert!(
        parse_facts(&" ".repeat(Limits::DEFAULT.max_message_bytes + 1))
            .unwrap_err()
            .contains("max_message_bytes")
    );
    let frames =
        facts(json!({"frames": (0..500).map(|_| json!({"src": "x"})).collect::<Vec<_>>()})).frames;
    assert_eq!(frames.len(), 100);
    assert_eq!(FrameFact::default().allow, "");
    assert_eq!(chrome_version("Firefox/1"), None);
}

#[test]
fn tabs_are_named_by_their_page() {
    use super::inventory::{open_tab, tab_ids};
    assert_eq!(
        tab_ids(&json!([{"id": 4}, {"id": "x"}, {"id": 9.0}])),
        [4, 9]
    );
    assert_eq!(tab_ids(&json!(null)), Vec::<i64>::new());
    let f = facts(json!({"url": "http://a.test/", "title": "  Shop  "}));
    assert_eq!(open_tab(1, Some(&f)).title, "Shop");
    assert_eq!(
        open_tab(1, Some(&facts(json!({"url": "http://a.test/"})))).title,
        "http://a.test/"
    );
    assert_eq!(open_tab(7, None).title, "tab 7");
}

#[test]
fn debugging_tools_are_listed_only_for_developers() {
    use super::inventory::parse_developer;
    let mut debug = tool("dump_state", "Dumps the state.", 0);
    debug.annotations.debugging = true;
    let listed = || {
        vec![(
            tab(1, "Shop"),
            Ok(tools(vec![tool("search", "Searches.", 0), debug.clone()])),
        )]
    };
    let seen = Seen::default();
    let person = inventory(listed(), &seen, None, false);
    assert_eq!(person.tools.len(), 1);
    assert_eq!(person.debugging_hidden, 1);
    assert_eq!(person.total, 2);
    let developer = inventory(listed(), &seen, Some("debugging"), true);
    assert_eq!(developer.tools.len(), 1);
    assert_eq!(developer.tools[0].hints, ["readOnly", "debugging"]);
    assert!(parse_developer(&json!({"developer": true})).unwrap());
    assert!(!parse_developer(&json!({})).unwrap());
    assert!(parse_developer(&json!({"developer": "yes"})).is_err());
    let value = serde_json::to_value(debug.annotations).unwrap();
    assert_eq!(value["debugging"], true);
    let plain = serde_json::to_value(tool("a", "", 0).annotations).unwrap();
    assert!(
        plain.get("debugging").is_none(),
        "absent unless set: {plain}"
    );
}

#[test]
fn the_debugging_annotation_is_read_only_when_true() {
    use crate::core::page::tool::parse_tools;
    let entries = [
        json!({"name": "a", "annotations": {"debugging": true}}),
        json!({"name": "b", "annotations": {"debugging": "yes"}}),
    ];
    let parsed = parse_tools(&entries, 0, "http://a.test", &Limits::DEFAULT);
    assert!(parsed.tools[0].annotations.debugging);
    assert!(!parsed.tools[1].annotations.debugging);
}

#[test]
fn an_idle_polyfill_is_noted() {
    let f = facts(json!({"url": "http://a.test/", "native": true, "polyfillScript": true}));
    let d = diagnose(
        Ok(&f),
        &Listing {
            listed: 1,
            shown: 1,
            ..Listing::default()
        },
    );
    assert_eq!(ids(&d), ["webmcp-native", "polyfill-idle"]);
}

#[test]
fn frame_errors_are_told_apart_from_skipped_entries() {
    use super::diagnose::listing;
    use crate::core::page::tool::ToolProblem;
    let failed = TabTools {
        problems: vec![
            ToolProblem { frame_id: 0, tool: None, message: "frame 0: NotAllowedError: Access to the feature \"tools\" is disallowed by permissions policy.".into() },
            ToolProblem { frame_id: 2, tool: Some("bad name".into()), message: "the name must be …".into() },
        ],
        ..TabTools::default()
    };
    let l = listing(&failed, &failed);
    assert_eq!(l.frame_errors.len(), 1);
    assert_eq!(l.problems, ["bad name: the name must be …"]);
    let blocked = facts(json!({"url": "http://a.test/", "native": true, "toolsAllowed": false}));
    assert_eq!(
        ids(&diagnose(Ok(&blocked), &l)),
        ["policy-blocked", "skipped-entry", "webmcp-native"]
    );
    let open = facts(json!({"url": "http://a.test/", "native": true}));
    assert!(ids(&diagnose(Ok(&open), &l)).contains(&"frame-error"));
}
