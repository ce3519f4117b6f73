use serde_json::json;

use super::*;
use crate::core::audit::Severity::{Note, Warning};
use crate::core::page::call::{Destination, Ended};
use crate::core::page::tool::Annotations;
use crate::core::page::tool::PageTool;

fn tool(name: &str, read_only: bool, schema: Value) -> PageTool {
    PageTool {
        name: name.into(),
        title: None,
        description: "Does.".into(),
        input_schema: schema,
        output_schema: None,
        annotations: Annotations {
            read_only_hint: read_only,
            ..Annotations::default()
        },
        origin: "https://shop.test".into(),
        frame_id: 0,
        form: None,
        polyfill: None,
    }
}

#[test]
fn examples_satisfy_their_schema_and_counterexamples_break_it() {
    let schema = json!({"type": "object", "properties": {
        "date": {"type": "string", "format": "date"},
        "seats": {"type": "integer", "minimum": 2, "maximum": 9},
        "tags": {"type": "array", "minItems": 2, "items": {"enum": ["a", "b"]}},
        "mail": {"type": "string", "format": "email"},
        "note": {"type": "string", "minLength": 12}},
        "required": ["date", "seats", "tags", "mail", "note"], "additionalProperties": false});
    let valid = example(&schema).expect("an example");
    assert_eq!(valid["seats"], 2);
    assert_eq!(valid["tags"], json!(["a", "a"]));
    assert_eq!(valid["note"].as_str().map(str::len), Some(12));
    let (invalid, why) = counterexample(&schema).expect("a counterexample");
    assert!(!jsonschema::validator_for(&schema)
        .unwrap()
        .is_valid(&Value::Object(invalid)));
    assert_eq!(why, "the required property `date` left out");
    // A pattern the host cannot satisfy: no example rather than a wrong one.
    assert_eq!(
        example(
            &json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[0-9]{6}$"}}, "required": ["id"]})
        ),
        None
    );
    // A schema that takes any object has no counterexample.
    assert_eq!(counterexample(&json!({"type": "object"})), None);
    let (open, why) =
        counterexample(&json!({"type": "object", "properties": {"n": {"type": "integer"}}}))
            .expect("wrong type");
    assert_eq!(
        (open["n"].clone(), why.as_str()),
        (json!("not-a-number"), "`n` of the wrong type")
    );
}

#[test]
fn only_read_only_tools_are_probed_unless_more_is_allowed() {
    let tab = TabTools {
        tools: vec![
            tool(
                "find",
                true,
                json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}),
            ),
            tool("buy", false, json!({"type": "object"})),
        ],
        ..TabTools::default()
    };
    let plan_ro = plan(&tab, false);
    let probed: Vec<(&str, ProbeKind)> = plan_ro
        .calls
        .iter()
        .map(|c| (c.tool.as_str(), c.kind))
        .collect();
    assert_eq!(
        probed,
        vec![("find", ProbeKind::Valid), ("find", ProbeKind::Invalid)]
    );
    assert_eq!(
        plan_ro
            .findings
            .iter()
            .map(|f| (f.rule, f.tool.as_str()))
            .collect::<Vec<_>>(),
        vec![("probe-skipped", "buy")]
    );
    let all = plan(&tab, true);
    assert!(all
        .calls
        .iter()
        .any(|c| c.tool == "buy" && c.kind == ProbeKind::Valid));
    assert!(all.findings.is_empty());
}

#[test]
fn answers_are_judged() {
    let call = |kind, read_only| ProbeCall {
        tool: "find".into(),
        frame_id: 0,
        read_only,
        kind,
        args: Map::new(),
        why: Some("the required property `q` left out".into()),
    };
    let rules = |call: &ProbeCall, response: CallAnswer| {
        judge(call, &response, &[])
            .iter()
            .map(|f| (f.rule, f.severity))
            .collect::<Vec<_>>()
    };
    let valid = call(ProbeKind::Valid, true);
    assert_eq!(rules(&valid, CallAnswer::text("3 mugs")), vec![]);
    assert_eq!(
        rules(&valid, CallAnswer::failed("TypeError: x is undefined")),
        vec![("probe-throws", Error)]
    );
    assert_eq!(
        rules(
            &valid,
            CallAnswer::failed("NotAllowedError: declined: the person did not allow this call")
        ),
        vec![],
        "a declined call says nothing of the tool"
    );
    assert_eq!(
        rules(
            &valid,
            CallAnswer::failed(
                "`find` did not finish within 5000 ms; it was cancelled in the page"
            )
        ),
        vec![("probe-hangs", Error)]
    );
    assert_eq!(
        rules(
            &valid,
            CallAnswer::from(Ended::Navigated(Destination {
                url: Some("https://shop.test/2".into()),
                ..Destination::default()
            }))
        ),
        vec![("probe-navigates", Error)]
    );
    assert_eq!(
        rules(
            &call(ProbeKind::Valid, false),
            CallAnswer::from(Ended::Navigated(Destination::default()))
        ),
        vec![("probe-navigates", Warning)]
    );
    assert_eq!(
        rules(&valid, CallAnswer::text("x".repeat(OVERSIZED_BYTES + 1))),
        vec![("probe-oversized", Warning)]
    );
    assert_eq!(
        rules(&valid, CallAnswer::text("null")),
        vec![("probe-empty", Note)]
    );
    assert_eq!(
        rules(
            &valid,
            CallAnswer::from(Ended::Result {
                text: "3 mugs".into(),
                text_input: true,
                output_errors: None
            })
        ),
        vec![("probe-text-input", Note)],
        "the page took the arguments only as JSON text"
    );
    let invalid = call(ProbeKind::Invalid, true);
    assert_eq!(
        rules(&invalid, CallAnswer::text("3 mugs")),
        vec![("probe-accepts-invalid", Warning)]
    );
    assert_eq!(
        rules(&invalid, CallAnswer::failed("TypeError: q is required")),
        vec![]
    );
}

#[test]
fn a_read_only_tool_that_writes_is_caught_by_its_requests() {
    let call = |read_only| ProbeCall {
        tool: "get_price".into(),
        frame_id: 0,
        read_only,
        kind: ProbeKind::Valid,
        args: Map::new(),
        why: None,
    };
    let ok = CallAnswer::text("4 EUR");
    let sent = |m: &str| {
        vec![
            ("GET".to_owned(), "https://shop.test/p".to_owned()),
            (m.to_owned(), "https://shop.test/order".to_owned()),
        ]
    };
    let found = judge(&call(true), &ok, &sent("POST"));
    assert_eq!(
        found
            .iter()
            .map(|f| (f.rule, f.severity))
            .collect::<Vec<_>>(),
        vec![("probe-lying-hint", Error)]
    );
    assert!(
        found[0].message.contains("POST https://shop.test/order"),
        "{}",
        found[0].message
    );
    assert!(judge(&call(true), &ok, &sent("HEAD")).is_empty());
    assert!(
        judge(&call(false), &ok, &sent("POST")).is_empty(),
        "a tool that does not claim to read may write"
    );
}

#[test]
fn a_plan_for_named_tools_calls_and_reports_those_alone() {
    let schema =
        json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
    let tab = TabTools {
        tools: vec![
            tool("find", true, schema.clone()),
            tool("rename", false, schema.clone()),
            tool("list", true, schema),
        ],
        ..TabTools::default()
    };
    // Leave for one tool without hints: it is called (valid, invalid), the others are not.
    let plan = plan_only(&tab, true, &["rename".into()]).unwrap();
    assert_eq!(
        plan.calls
            .iter()
            .map(|c| c.tool.as_str())
            .collect::<Vec<_>>(),
        ["rename", "rename"]
    );
    assert!(plan.findings.is_empty());
    // Without leave to act, a tool that is not read-only is still only said skipped.
    let plan = plan_only(&tab, false, &["rename".into()]).unwrap();
    assert!(plan.calls.is_empty());
    assert_eq!(plan.findings.len(), 1);
    assert_eq!(plan.findings[0].rule, "probe-skipped");
    assert_eq!(
        plan_only(&tab, true, &["nope".into()]).unwrap_err(),
        "audit: this tab offers no tool named `nope`; it offers find, rename, list"
    );
}
