//! A run's log as spans, their OTLP protobuf read back by a small decoder, and the exports.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::core::observe::collector::{self, exports, retry_after, Collector};
use crate::core::observe::otlp::{AttrValue, Span, SpanKind};
use crate::core::observe::trace::{span_id, spans, trace_id};

/// A run: one step calling `buy` (repaired), one step answering.
fn log() -> Value {
    let usage = |step: u64, i: u64, o: u64, reason: &str, run_in: u64| {
        json!({"type": "CUSTOM", "name": "webmcp_host.usage", "value": {"step": step, "model": "gpt",
            "modelId": "gpt-4.1", "provider": "openai", "usage": "reported", "inputTokens": i,
            "outputTokens": o, "cachedInputTokens": 0, "finishReason": reason, "cost": 0.001,
            "run": {"inputTokens": run_in, "outputTokens": 9, "cachedInputTokens": 0, "cost": 0.002}}})
    };
    let events = vec![
        json!({"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}),
        json!({"type": "STEP_STARTED", "stepName": "step_1"}),
        json!({"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "buy"}),
        json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{\"item\":\"secret-args\"}"}),
        json!({"type": "CUSTOM", "name": "webmcp_host.tool_repair", "value": {"toolCallId": "c1", "fixes": [{"kind": "json"}]}}),
        json!({"type": "TOOL_CALL_END", "toolCallId": "c1"}),
        usage(1, 100, 5, "tool_calls", 100),
        json!({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c1", "content": "{\"error\":\"declined: the person did not allow this call\"}"}),
        json!({"type": "STEP_FINISHED", "stepName": "step_1"}),
        json!({"type": "STEP_STARTED", "stepName": "step_2"}),
        json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "secret-answer"}),
        usage(2, 120, 4, "stop", 220),
        json!({"type": "STEP_FINISHED", "stepName": "step_2"}),
        json!({"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1", "result": {"type": "completed", "text": "secret-answer"}}),
    ];
    let times: Vec<f64> = (0..events.len())
        .map(|i| 1_700_000_000_000.0 + 10.0 * i as f64)
        .collect();
    json!({"run": {"runId": "r1", "threadId": "t1", "prompt": "secret-prompt"}, "events": events, "times": times})
}

fn int(span: &Span, key: &str) -> Option<i64> {
    match span.get(key) {
        Some(AttrValue::Int(n)) => Some(*n),
        _ => None,
    }
}

fn text(span: &Span, key: &str) -> Option<String> {
    match span.get(key) {
        Some(AttrValue::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

#[test]
fn a_run_is_a_tree_of_run_steps_and_tool_calls() {
    let spans = spans(&log(), false);
    let names: Vec<&str> = spans.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "invoke_agent webmcp-host",
            "chat gpt-4.1",
            "execute_tool buy",
            "chat gpt-4.1"
        ]
    );
    let (run, step1, tool, step2) = (&spans[0], &spans[1], &spans[2], &spans[3]);
    assert!(spans.iter().all(|s| s.trace_id == trace_id("r1")));
    assert_eq!(run.parent_span_id, None);
    assert_eq!(step1.parent_span_id, Some(run.span_id));
    assert_eq!(step2.parent_span_id, Some(run.span_id));
    assert_eq!(tool.parent_span_id, Some(step1.span_id));
    assert_eq!(step1.span_id, span_id("r1", "step_1"));
    // Times from the log, in nanoseconds.
    assert_eq!(run.start_ns, 1_700_000_000_000_000_000);
    assert_eq!(run.end_ns - run.start_ns, 130_000_000);
    assert_eq!(
        (tool.start_ns - run.start_ns, tool.end_ns - run.start_ns),
        (20_000_000, 70_000_000)
    );
    assert_eq!(int(step1, "gen_ai.usage.input_tokens"), Some(100));
    assert_eq!(int(step2, "gen_ai.usage.output_tokens"), Some(4));
    assert_eq!(int(run, "gen_ai.usage.input_tokens"), Some(220));
    assert_eq!(
        text(step1, "gen_ai.request.model").as_deref(),
        Some("gpt-4.1")
    );
    assert_eq!(
        text(step1, "gen_ai.provider.name").as_deref(),
        Some("openai")
    );
    assert_eq!(
        step1.get("gen_ai.response.finish_reasons"),
        Some(&AttrValue::Strs(vec!["tool_calls".into()]))
    );
    assert_eq!(step1.kind, SpanKind::Client);
    assert_eq!(text(tool, "gen_ai.tool.name").as_deref(), Some("buy"));
    assert_eq!(text(tool, "gen_ai.tool.call.id").as_deref(), Some("c1"));
    assert_eq!(
        text(tool, "webmcp_host.tool.outcome").as_deref(),
        Some("error")
    );
    assert_eq!(
        text(tool, "webmcp_host.tool.confirmation").as_deref(),
        Some("declined")
    );
    assert_eq!(
        tool.get("webmcp_host.tool.repaired"),
        Some(&AttrValue::Bool(true))
    );
    assert_eq!(
        text(run, "webmcp_host.outcome").as_deref(),
        Some("completed")
    );
    // Same run, same trace.
    assert_eq!(super::super::trace::spans(&log(), false), spans);
}

#[test]
fn text_only_when_asked() {
    let without = format!("{:?}", spans(&log(), false));
    assert!(!without.contains("secret"), "{without}");
    let with = spans(&log(), true);
    assert_eq!(
        text(&with[0], "input.value").as_deref(),
        Some("secret-prompt")
    );
    assert_eq!(
        text(&with[3], "output.value").as_deref(),
        Some("secret-answer")
    );
    assert!(text(&with[2], "gen_ai.tool.call.arguments")
        .unwrap()
        .contains("secret-args"));
}

#[test]
fn a_cut_log_ends_its_spans_at_its_last_event_and_no_log_has_none() {
    let mut cut = log();
    let events = cut["events"].as_array_mut().unwrap();
    events.truncate(5);
    let spans = spans(&cut, false);
    assert_eq!(spans.len(), 3);
    assert!(spans.iter().all(|s| s.end_ns == 1_700_000_000_040_000_000));
    assert!(super::super::trace::spans(&json!({}), false).is_empty());
    assert!(super::super::trace::spans(
        &json!({"events": [{"type": "STEP_STARTED"}], "times": [1.0]}),
        false
    )
    .is_empty());
}

fn double(span: &Span, key: &str) -> Option<f64> {
    match span.get(key) {
        Some(AttrValue::Double(n)) => Some(*n),
        _ => None,
    }
}

#[test]
fn a_priced_step_carries_its_cost_as_openinference_llm_cost_total() {
    let spans = spans(&log(), false);
    let (run, step1, tool, step2) = (&spans[0], &spans[1], &spans[2], &spans[3]);
    for step in [step1, step2] {
        assert_eq!(double(step, "llm.cost.total"), Some(0.001));
        assert_eq!(double(step, "webmcp_host.cost_usd"), Some(0.001));
        // No split is known: neither part is made up.
        assert_eq!(step.get("llm.cost.prompt"), None);
        assert_eq!(step.get("llm.cost.completion"), None);
    }
    // The run's total stays the host's own: the steps' `llm.cost.total` already sum to it.
    assert_eq!(double(run, "webmcp_host.cost_usd"), Some(0.002));
    assert_eq!(run.get("llm.cost.total"), None);
    assert_eq!(tool.get("llm.cost.total"), None);
}

#[test]
fn an_unpriced_run_has_no_cost_attribute_not_even_zero() {
    let mut unpriced = log();
    for event in unpriced["events"].as_array_mut().unwrap() {
        if event["name"] == "webmcp_host.usage" {
            event["value"]["cost"] = Value::Null;
            event["value"]["run"]["cost"] = Value::Null;
        }
    }
    let spans = spans(&unpriced, false);
    assert_eq!(spans.len(), 4);
    for span in &spans {
        for key in [
            "llm.cost.total",
            "llm.cost.prompt",
            "llm.cost.completion",
            "webmcp_host.cost_usd",
        ] {
            assert_eq!(span.get(key), None, "{} has {key}", span.name);
        }
    }
    // The tokens are still there.
    assert_eq!(int(&spans[1], "gen_ai.usage.input_tokens"), Some(100));
}

/// A protobuf field: its number and its value.
#[derive(Debug, Clone)]
enum F {
    Varint(u64),
    Fixed64(u64),
    Bytes(Vec<u8>),
}

fn read_varint(buf: &[u8], at: &mut usize) -> u64 {
    let (mut value, mut shift) = (0u64, 0);
    loop {
        let byte = buf[*at];
        *at += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

fn decode(buf: &[u8]) -> Vec<(u64, F)> {
    let (mut at, mut out) = (0, Vec::new());
    while at < buf.len() {
        let key = read_varint(buf, &mut at);
        let field = match key & 7 {
            0 => F::Varint(read_varint(buf, &mut at)),
            1 => {
                let v = u64::from_le_bytes(buf[at..at + 8].try_into().unwrap());
                at += 8;
                F::Fixed64(v)
            }
            2 => {
                let len = read_varint(buf, &mut at) as usize;
                at += len;
                F::Bytes(buf[at - len..at].to_vec())
            }
            wire => panic!("wire type {wire}"),
        };
        out.push((key >> 3, field));
    }
    assert_eq!(at, buf.len(), "the message ends where its fields end");
    out
}

fn all(fields: &[(u64, F)], n: u64) -> Vec<F> {
    fields
        .iter()
        .filter(|(k, _)| *k == n)
        .map(|(_, f)| f.clone())
        .collect()
}

fn one(fields: &[(u64, F)], n: u64) -> F {
    let found = all(fields, n);
    assert_eq!(found.len(), 1, "field {n}");
    found[0].clone()
}

fn bytes(f: F) -> Vec<u8> {
    match f {
        F::Bytes(b) => b,
        other => panic!("{other:?}"),
    }
}

fn string(f: F) -> String {
    String::from_utf8(bytes(f)).unwrap()
}

/// A span's attributes: key → the AnyValue's (field, value).
fn attributes(span: &[(u64, F)]) -> BTreeMap<String, (u64, F)> {
    all(span, 9)
        .into_iter()
        .map(|kv| {
            let kv = decode(&bytes(kv));
            let value = decode(&bytes(one(&kv, 2)));
            (string(one(&kv, 1)), value[0].clone())
        })
        .collect()
}

#[test]
fn the_protobuf_reads_back_as_the_spans() {
    let spans = spans(&log(), false);
    let body = crate::core::observe::otlp::export_request(
        &[("service.name".into(), AttrValue::Str("webmcp-host".into()))],
        ("webmcp-host", "9.9.9"),
        &spans,
    );
    let request = decode(&body);
    let resource_spans = decode(&bytes(one(&request, 1)));
    let resource = decode(&bytes(one(&resource_spans, 1)));
    let service = attributes(
        &resource
            .iter()
            .map(|(_, f)| (9, f.clone()))
            .collect::<Vec<_>>(),
    );
    assert_eq!(string(service["service.name"].1.clone()), "webmcp-host");
    let scope_spans = decode(&bytes(one(&resource_spans, 2)));
    let scope = decode(&bytes(one(&scope_spans, 1)));
    assert_eq!(
        (string(one(&scope, 1)), string(one(&scope, 2))),
        ("webmcp-host".into(), "9.9.9".into())
    );
    let decoded: Vec<Vec<(u64, F)>> = all(&scope_spans, 2)
        .into_iter()
        .map(|s| decode(&bytes(s)))
        .collect();
    assert_eq!(decoded.len(), spans.len());
    for (wire, span) in decoded.iter().zip(&spans) {
        assert_eq!(bytes(one(wire, 1)), span.trace_id);
        assert_eq!(bytes(one(wire, 2)), span.span_id);
        assert_eq!(
            all(wire, 4).into_iter().next().map(bytes),
            span.parent_span_id.map(|p| p.to_vec())
        );
        assert_eq!(string(one(wire, 5)), span.name);
        assert!(matches!(one(wire, 6), F::Varint(k) if k == span.kind as u64));
        assert!(matches!(one(wire, 7), F::Fixed64(t) if t == span.start_ns));
        assert!(matches!(one(wire, 8), F::Fixed64(t) if t == span.end_ns));
        assert_eq!(attributes(wire).len(), span.attributes.len());
    }
    let step = attributes(&decoded[1]);
    assert!(matches!(
        step["gen_ai.usage.input_tokens"],
        (3, F::Varint(100))
    ));
    assert!(matches!(&step["gen_ai.request.model"], (1, F::Bytes(b)) if b == b"gpt-4.1"));
    assert!(
        matches!(step["webmcp_host.cost_usd"], (4, F::Fixed64(bits)) if f64::from_bits(bits) == 0.001)
    );
    assert!(
        matches!(step["llm.cost.total"], (4, F::Fixed64(bits)) if f64::from_bits(bits) == 0.001)
    );
    let reasons = decode(&bytes(step["gen_ai.response.finish_reasons"].1.clone()));
    assert_eq!(
        string(one(&decode(&bytes(one(&reasons, 1))), 1)),
        "tool_calls"
    );
    // The declined tool's status: code 2 (error) and its message.
    let status = decode(&bytes(one(&decoded[2], 15)));
    assert!(matches!(one(&status, 3), F::Varint(2)));
    assert!(string(one(&status, 2)).starts_with("declined"));
}

#[test]
fn exports_carry_the_collectors_own_header_and_never_another_key() {
    let canary = "sk-canary-0123456789abcdef";
    let collectors = collector::parse(&json!([
        {"name": "phoenix", "endpoint": "http://127.0.0.1:6006/v1/traces"},
        {"name": "langfuse", "endpoint": "https://cloud.langfuse.com/api/public/otel/v1/traces",
         "headers": {"Authorization": "langfuse"}},
        {"name": "off", "endpoint": "https://x.test/v1/traces", "enabled": false},
        {"name": "nokey", "endpoint": "https://y.test/v1/traces", "headers": {"x-api-key": "absent"}},
    ]))
    .unwrap();
    assert_eq!(collector::needed_keys(&collectors), ["absent", "langfuse"]);
    let keys = BTreeMap::from([
        ("langfuse".to_owned(), "Basic cGs6c2s=".to_owned()),
        ("openai".to_owned(), canary.to_owned()),
    ]);
    let gpt: crate::core::provider::ModelConfig = serde_json::from_value(json!({
        "name": "gpt", "provider": "openai", "baseUrl": "https://api.openai.com/v1",
        "model": "m", "keyRef": "openai"
    }))
    .unwrap();
    let routes = crate::core::setup::routes(std::slice::from_ref(&gpt), &[], &collectors);
    let (sent, errors) = exports(&collectors, &log(), &keys, &routes, "1.0.0");
    assert_eq!(
        sent.iter()
            .map(|e| e.collector.as_str())
            .collect::<Vec<_>>(),
        ["phoenix", "langfuse"]
    );
    assert_eq!(
        sent[0].headers,
        [(
            "content-type".to_owned(),
            "application/x-protobuf".to_owned()
        )]
    );
    assert!(sent[1]
        .headers
        .contains(&("authorization".into(), "Basic cGs6c2s=".into())));
    assert!(errors[0].contains("no key `absent`"), "{errors:?}");
    for export in &sent {
        let body = String::from_utf8_lossy(&export.body);
        assert!(
            !body.contains("canary") && !body.contains("secret"),
            "{body}"
        );
        assert!(export.headers.iter().all(|(_, v)| !v.contains("canary")));
    }
    // A collector that names the model's key (a pasted configuration) is never sent it.
    let stolen = collector::parse(&json!([
        {"name": "evil", "endpoint": "https://evil.test/v1/traces",
         "headers": {"Authorization": "openai"}},
    ]))
    .unwrap();
    let routes = crate::core::setup::routes(&[gpt], &[], &stolen);
    let (sent, errors) = exports(&stolen, &log(), &keys, &routes, "1.0.0");
    assert!(sent.is_empty(), "{sent:?}");
    assert!(errors[0].contains("model `gpt`"), "{errors:?}");
}

#[test]
fn collectors_are_checked_and_retries_are_bounded() {
    let bad = |v: Value| collector::parse(&v).unwrap_err();
    assert!(
        bad(json!([{"name": "a", "endpoint": "http://evil.test/v1/traces"}])).contains("https")
    );
    assert!(bad(json!([{"name": "a", "endpoint": "https://a.test"}, {"name": "a", "endpoint": "https://b.test"}])).contains("two"));
    assert!(bad(
        json!([{"name": "a", "endpoint": "https://a.test", "headers": {"bad header": "k"}}])
    )
    .contains("header"));
    assert!(collector::stored(Some(json!(7))).is_empty());
    let _: Collector =
        serde_json::from_value(json!({"name": "a", "endpoint": "https://a.test"})).unwrap();
    assert_eq!(retry_after(Some(200), 1), None);
    assert_eq!(retry_after(Some(415), 1), None, "refused for good");
    assert_eq!(retry_after(None, 1), Some(500));
    assert_eq!(retry_after(Some(503), 2), Some(1000));
    assert_eq!(retry_after(Some(503), 3), None, "out of attempts");
}

#[test]
fn without_include_text_a_failure_that_starts_with_declined_ships_no_page_text() {
    let mut log = log();
    let leak = "{\"error\":\"declined-ish: page secret 4111-1111\"}";
    log["events"][7]["content"] = json!(leak);
    let all = spans(&log, false);
    let shown = format!("{all:?}");
    assert!(
        !shown.contains("4111-1111"),
        "the page's text left the worker"
    );
    let tool = all
        .iter()
        .find(|s| s.error.is_some())
        .expect("the failed call's span");
    assert_eq!(tool.error.as_deref(), Some("the tool call failed"));
    assert_eq!(text(tool, "webmcp_host.tool.confirmation"), None);
    // The host's own decline is still said, in its fixed words.
    let declined = spans(&self::log(), false);
    let tool = declined.iter().find(|s| s.error.is_some()).unwrap();
    assert_eq!(
        tool.error.as_deref(),
        Some("declined: the person did not allow this call")
    );
}

#[test]
fn an_evaluations_run_is_tagged_with_its_suite_and_case() {
    let mut tagged = log();
    tagged["run"]["eval"] =
        json!({"suite": "eval_s1", "case": "finds mugs", "run": 1, "model": "gpt"});
    let run = &spans(&tagged, false)[0];
    assert_eq!(
        text(run, "webmcp_host.eval.suite").as_deref(),
        Some("eval_s1")
    );
    assert_eq!(
        text(run, "webmcp_host.eval.case").as_deref(),
        Some("finds mugs")
    );
    assert_eq!(int(run, "webmcp_host.eval.run"), Some(1));
    let metadata: Value = serde_json::from_str(&text(run, "metadata").unwrap()).unwrap();
    assert_eq!(
        metadata,
        json!({"eval.suite": "eval_s1", "eval.case": "finds mugs", "eval.run": 1, "eval.model": "gpt"})
    );
    assert!(matches!(run.get("tag.tags"), Some(AttrValue::Strs(t)) if t == &["eval"]));
    // A person's run has none of them.
    let plain = spans(&log(), false);
    for key in ["webmcp_host.eval.suite", "metadata", "tag.tags"] {
        assert!(plain[0].get(key).is_none(), "{key}");
    }
}
