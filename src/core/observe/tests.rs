//! Usage read from recorded streams of the three wire formats, and the cost arithmetic.

use serde_json::{json, Value};

use super::cost::{self, Price, Prices};
use super::*;
use crate::core::agui::CUSTOM_USAGE;
use crate::core::provider::anthropic::AnthropicDecoder;
use crate::core::provider::gemini::GeminiDecoder;
use crate::core::provider::openai::OpenAiDecoder;
use crate::core::provider::usage::*;
use crate::core::provider::{Decoder, ModelEvent};

/// The report of a stream fed whole and split at every byte: the same each time.
fn report<D: Decoder + Default>(stream: &str) -> (Option<Usage>, Option<String>) {
    let decode = |chunks: &[&str]| {
        let mut decoder = D::default();
        let mut out: Vec<ModelEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
        out.extend(decoder.finish());
        let at = out.len() - 2;
        assert!(matches!(out[at + 1], ModelEvent::Done { .. }), "{out:?}");
        match &out[at] {
            ModelEvent::Report {
                usage,
                finish_reason,
            } => (*usage, finish_reason.clone()),
            other => panic!("no report before Done: {other:?}"),
        }
    };
    let whole = decode(&[stream]);
    for i in (0..stream.len()).filter(|&i| stream.is_char_boundary(i)) {
        assert_eq!(decode(&[&stream[..i], &stream[i..]]), whole, "split at {i}");
    }
    whole
}

/// OpenAI with `stream_options.include_usage`: the usage chunk has no choices.
const OPENAI: &str = "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":null}],\"usage\":null}\n\n\
data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":null}\n\n\
data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":1200,\"completion_tokens\":35,\"total_tokens\":1235,\"prompt_tokens_details\":{\"cached_tokens\":1024},\"completion_tokens_details\":{\"reasoning_tokens\":0}}}\n\n\
data: [DONE]\n\n";

const ANTHROPIC: &str = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":100,\"cache_read_input_tokens\":2000,\"output_tokens\":1}}}\n\n\
event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n\
event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n\
event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n\
event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":42}}\n\n\
event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

const GEMINI: &str = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Hel\"}],\"role\":\"model\"}}],\"usageMetadata\":{\"promptTokenCount\":50,\"totalTokenCount\":50},\"modelVersion\":\"gemini-2.5-flash\"}\r\n\r\n\
data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"lo\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":50,\"candidatesTokenCount\":7,\"thoughtsTokenCount\":20,\"cachedContentTokenCount\":32,\"totalTokenCount\":77}}\r\n\r\n";

#[test]
fn openai_usage_comes_from_the_include_usage_chunk() {
    let (usage, finish) = report::<OpenAiDecoder>(OPENAI);
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: 1200,
            output_tokens: 35,
            cached_input_tokens: Some(1024),
            cache_write_input_tokens: None,
            reasoning_tokens: Some(0),
        })
    );
    assert_eq!(finish.as_deref(), Some("stop"));
}

#[test]
fn a_server_without_usage_reports_it_unknown() {
    let stream = "data: {\"choices\":[{\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\ndata: [DONE]\n\n";
    assert_eq!(
        report::<OpenAiDecoder>(stream),
        (None, Some("length".into()))
    );
    // Ollama's shape: usage on the chunk with the finish reason, no cached count.
    let ollama = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\ndata: [DONE]\n\n";
    let (usage, _) = report::<OpenAiDecoder>(ollama);
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: 9,
            output_tokens: 3,
            ..Usage::default()
        })
    );
}

#[test]
fn anthropic_usage_joins_message_start_and_message_delta() {
    let (usage, finish) = report::<AnthropicDecoder>(ANTHROPIC);
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: 12 + 100 + 2000,
            output_tokens: 42,
            cached_input_tokens: Some(2000),
            cache_write_input_tokens: Some(100),
            reasoning_tokens: None,
        })
    );
    assert_eq!(finish.as_deref(), Some("end_turn"));
}

#[test]
fn gemini_usage_is_the_last_usage_metadata_with_thoughts_as_output() {
    let (usage, finish) = report::<GeminiDecoder>(GEMINI);
    assert_eq!(
        usage,
        Some(Usage {
            input_tokens: 50,
            output_tokens: 27,
            cached_input_tokens: Some(32),
            cache_write_input_tokens: None,
            reasoning_tokens: Some(20),
        })
    );
    assert_eq!(finish.as_deref(), Some("STOP"));
}

fn prices() -> Prices {
    cost::parse(&json!({
        "gpt": {"input": 2.0, "output": 8.0, "cachedInput": 0.5},
        "claude-sonnet-4-5": {"input": 3.0, "output": 15.0}
    }))
    .unwrap()
}

#[test]
fn cost_prices_cached_input_apart() {
    let usage = Usage {
        input_tokens: 1200,
        output_tokens: 35,
        cached_input_tokens: Some(1024),
        ..Usage::default()
    };
    let price = prices()["gpt"];
    // 176 × 2 + 1024 × 0.5 + 35 × 8 = 352 + 512 + 280 = 1144 per million.
    assert!((price.cost(&usage) - 0.001144).abs() < 1e-12);
    // No cached price: cached tokens at the input price.
    let flat = Price {
        cached_input: None,
        ..price
    };
    assert!((flat.cost(&usage) - (1200.0 * 2.0 + 35.0 * 8.0) / 1e6).abs() < 1e-12);
    // By model id when the name is not priced; unknown usage or model: no cost.
    let table = prices();
    assert!(cost::step_cost(&table, "claude", "claude-sonnet-4-5", Some(&usage)).is_some());
    assert_eq!(cost::step_cost(&table, "gpt", "x", None), None);
    assert_eq!(cost::step_cost(&table, "other", "x", Some(&usage)), None);
}

#[test]
fn bad_price_tables_are_refused() {
    assert!(cost::parse(&json!({"m": {"input": -1, "output": 1}}))
        .unwrap_err()
        .contains("≥ 0"));
    assert!(cost::parse(&json!({"m": {"input": 1}})).is_err());
    assert!(cost::parse(&json!({"m": {"input": 1, "output": 1, "typo": 2}})).is_err());
    assert_eq!(cost::parse(&json!(null)), Ok(Prices::new()));
    assert!(cost::stored(Some(json!("garbage"))).is_empty());
}

fn step(n: usize, usage: Option<Usage>, cost: Option<f64>) -> StepUsage {
    StepUsage {
        step: n,
        model: "gpt".into(),
        model_id: "gpt-4.1".into(),
        provider: "openai".into(),
        usage,
        finish_reason: Some("stop".into()),
        cost,
    }
}

#[test]
fn a_run_sums_its_known_steps_and_counts_the_unknown() {
    let mut run = RunUsage::default();
    assert_eq!(run.to_value(), Value::Null, "nothing known: null");
    let u = |i, o| Usage {
        input_tokens: i,
        output_tokens: o,
        cached_input_tokens: Some(0),
        ..Usage::default()
    };
    let first = run.add(step(1, Some(u(10, 2)), Some(0.25)));
    assert_eq!(first["usage"], "reported");
    assert_eq!(first["run"]["inputTokens"], 10);
    let unknown = run.add(step(2, None, None));
    assert_eq!(unknown["usage"], "unknown");
    assert_eq!(unknown["inputTokens"], Value::Null);
    assert_eq!(unknown["run"]["unknownSteps"], 1);
    run.add(step(3, Some(u(5, 1)), Some(0.5)));
    let total = run.to_value();
    assert_eq!(
        (
            &total["inputTokens"],
            &total["outputTokens"],
            &total["cost"]
        ),
        (&json!(15), &json!(3), &json!(0.75))
    );
    assert_eq!(total["perStep"].as_array().map(Vec::len), Some(3));
    // One known step unpriced: the run has no cost.
    run.add(step(4, Some(u(1, 1)), None));
    assert_eq!(run.to_value()["cost"], Value::Null);
}

#[test]
fn a_conversation_sums_its_runs() {
    let runs = [
        json!({"inputTokens": 10, "outputTokens": 2, "cachedInputTokens": 4, "cost": 0.5}),
        Value::Null,
        json!({"inputTokens": 1, "outputTokens": 1, "cachedInputTokens": null, "cost": 0.25}),
    ];
    let sum = cost::sum_runs(&runs);
    assert_eq!(
        sum,
        json!({"inputTokens": 11, "outputTokens": 3, "cachedInputTokens": 4, "cost": 0.75,
            "runs": 3, "unknownRuns": 1, "unpricedRuns": 0})
    );
    assert_eq!(cost::sum_runs(&[Value::Null])["cost"], Value::Null);
}

mod token_usage;
mod trace;

#[test]
fn configure_stores_prices_and_collectors_and_refuses_bad_ones() {
    use crate::core::setup::configure::plan;
    use crate::core::setup::store::Area;
    let model = json!([{"name": "m", "provider": "replay", "transcript": "{}"}]);
    let done = plan(
        &json!({"models": model, "prices": {"m": {"input": 1, "output": 2}},
            "collectors": [{"name": "p", "endpoint": "http://127.0.0.1:6006/v1/traces"}]}),
        None,
    );
    assert!(done.end.is_ok(), "{:?}", done.end);
    let written: Vec<(&str, Area)> = done
        .writes
        .iter()
        .map(|w| (w.key.as_str(), w.area))
        .collect();
    assert!(written.contains(&(cost::PRICES_KEY, Area::Local)));
    assert!(written.contains(&(collector::COLLECTORS_KEY, Area::Local)));
    let refused = plan(
        &json!({"models": model, "prices": {"m": {"input": "free"}}}),
        None,
    );
    assert!(refused.end.unwrap_err().starts_with("configure: `prices`"));
    let cleared = plan(&json!({"models": model, "collectors": null}), None);
    assert!(cleared
        .writes
        .iter()
        .any(|w| w.key == collector::COLLECTORS_KEY && w.value.is_none()));
}

#[test]
fn the_run_list_carries_each_runs_usage_for_the_conversation_sum() {
    use crate::core::ops::runlog::RunLog;
    let mut log = RunLog::default();
    log.on_start("r1", "t1", None, &json!({"prompt": "hi"}), 1.0);
    let run = json!({"inputTokens": 7, "outputTokens": 2, "cachedInputTokens": null, "cost": 0.5});
    let event = json!({"type": "CUSTOM", "name": CUSTOM_USAGE, "value": {"step": 1, "run": run}});
    log.on_event("r1", &event, 2.0);
    let runs = log.runs(Vec::new(), None);
    assert_eq!(runs[0]["usage"], run);
    let sum = cost::sum_runs(runs.as_array().unwrap().iter().map(|r| &r["usage"]));
    assert_eq!(
        (&sum["inputTokens"], &sum["cost"]),
        (&json!(7), &json!(0.5))
    );
}

#[test]
fn a_bug_report_masks_every_key_wherever_it_appears() {
    use super::bundle::{assemble, chrome_version, file_name, run_id, session_keys, Parts, FORMAT};
    use crate::core::page::tabs::TabTools;
    let canary = "sk-canary-0123456789abcdef";
    let session = json!({"webmcpHost.key.openai": canary, "webmcpHost.ui.runs": []});
    let keys = session_keys(&session);
    assert_eq!(keys, [canary]);
    let mut tools = TabTools::default();
    tools.webmcp.insert(0, "polyfill");
    let log = json!({"run": {"runId": "r/1", "tabId": 3}, "events": [{"type": "RUN_ERROR", "message": format!("echoed {canary}")}], "times": [1.0]});
    let report = assemble(
        Parts {
            log,
            page: Some(json!({"url": "https://shop.test/", "title": "Shop"})),
            tools: Some(Ok(tools)),
            audit: Some(Err(format!("no audit ({canary})"))),
            screenshot: Ok("data:image/png;base64,iVBOR".into()),
            user_agent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/138.0.7204.49 Safari/537.36".into(),
            extension_version: "0.1.0".into(),
            settings: json!({"keys": [{"ref": "openai", "masked": "sk-…cdef"}], canary: canary}),
            created_ms: 5.0,
        },
        &keys,
    );
    let text = report.to_string();
    assert!(!text.contains(canary), "{text}");
    assert!(!text.contains("0123456789"), "{text}");
    assert_eq!(report["format"], FORMAT);
    assert_eq!(report["webmcp"], "polyfill");
    assert_eq!(report["chrome"]["version"], "138.0.7204.49");
    assert_eq!(report["extension"]["version"], "0.1.0");
    assert_eq!(report["page"]["url"], "https://shop.test/");
    assert_eq!(
        report["page"]["title"], "Shop",
        "Chrome's title, when it gave one"
    );
    assert_eq!(report["tools"], json!({"tools": [], "problems": []}));
    assert_eq!(report["screenshot"], "data:image/png;base64,iVBOR");
    assert_eq!(report["events"][0]["type"], "RUN_ERROR");
    assert_eq!(file_name("r/1"), "webmcp-host-bug-r_1.json");
    assert!(run_id(&json!({})).is_err());
    assert_eq!(chrome_version("Firefox/1"), None);
    // No screenshot: the reason instead.
    let without = assemble(
        Parts {
            log: json!({}),
            page: None,
            tools: None,
            audit: None,
            screenshot: Err("tab 3 is closed".into()),
            user_agent: String::new(),
            extension_version: String::new(),
            settings: Value::Null,
            created_ms: 0.0,
        },
        &[],
    );
    assert_eq!(
        (&without["screenshot"], &without["screenshotError"]),
        (&Value::Null, &json!("tab 3 is closed"))
    );
    assert_eq!(without["webmcp"], "unknown");
}

#[test]
fn a_tabs_webmcp_mode_is_its_top_frames() {
    use super::bundle::webmcp_mode;
    use crate::core::limits::Limits;
    use crate::core::page::bridge::parse_listing;
    use crate::core::page::tabs::{FrameAnswer, TabTools};
    let frame = |frame_id: i64, fields: &str| {
        let raw = format!(r#"{{"ok":true,{fields},"origin":"http://f.test","tools":[]}}"#);
        FrameAnswer {
            frame_id,
            url: "http://f.test/".into(),
            answer: Ok(parse_listing(&raw, frame_id, &Limits::DEFAULT).unwrap()),
        }
    };
    let mode = |frames| webmcp_mode(&TabTools::from_frames(frames));
    assert_eq!(mode(vec![frame(0, r#""supported":true"#)]), "native");
    assert_eq!(
        mode(vec![frame(0, r#""supported":true,"polyfilled":true"#)]),
        "polyfill"
    );
    assert_eq!(
        mode(vec![
            frame(0, r#""supported":false"#),
            frame(3, r#""supported":true"#)
        ]),
        "none"
    );
    assert_eq!(mode(vec![]), "unknown");
}

#[test]
fn a_bug_report_carries_the_runs_timeline_masked_like_the_rest() {
    use super::bundle::{assemble, Parts};
    let canary = "sk-canary-0123456789abcdef";
    let events: Vec<Value> =
        include_str!("../../../tests/golden/turns/call-then-answer.events.jsonl")
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let times: Vec<f64> = (0..events.len()).map(|i| 10.0 * i as f64).collect();
    let log = json!({
        "run": {"runId": "r1", "prompt": format!("add 2 and 40 ({canary})"), "state": "finished"},
        "events": events,
        "times": times,
    });
    let report = assemble(
        Parts {
            log,
            page: None,
            tools: None,
            audit: None,
            screenshot: Err("tab closed".into()),
            user_agent: String::new(),
            extension_version: String::new(),
            settings: Value::Null,
            created_ms: 0.0,
        },
        &[canary.to_owned()],
    );
    let timeline = &report["timeline"];
    assert_eq!(timeline["state"], "finished");
    assert_eq!(timeline["answer"], "2 + 40 = 42.");
    assert_eq!(timeline["entries"][0]["kind"], "step");
    assert_eq!(timeline["entries"][0]["calls"][0]["name"], "add");
    assert_eq!(
        timeline["entries"][0]["calls"][0]["args"],
        json!({"a": 2, "b": 40})
    );
    assert_eq!(timeline["entries"][0]["tokens"]["usage"], "unknown");
    assert_eq!(timeline["events"], events_len(&report));
    let prompt = timeline["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("add 2 and 40 (") && !prompt.contains(canary),
        "{prompt}"
    );
    // A log with nothing in it still gives a timeline, empty.
    let empty = assemble(
        Parts {
            log: json!({}),
            page: None,
            tools: None,
            audit: None,
            screenshot: Err(String::new()),
            user_agent: String::new(),
            extension_version: String::new(),
            settings: Value::Null,
            created_ms: 0.0,
        },
        &[],
    );
    assert_eq!(empty["timeline"]["entries"], json!([]));
}

fn events_len(report: &Value) -> Value {
    json!(report["events"].as_array().map_or(0, Vec::len))
}

#[test]
fn a_bug_report_describes_the_tab_only_while_it_shows_the_runs_document() {
    use crate::core::observe::bundle::still_shown;
    let recorded =
        json!({"url": "https://a.test/shop", "origin": "https://a.test", "documentId": "D1"});
    assert_eq!(
        still_shown(Some(&recorded), Some("https://a.test/shop#x"), Some("D1")),
        Ok(())
    );
    let moved = still_shown(Some(&recorded), Some("https://b.test/"), Some("D2")).unwrap_err();
    assert!(
        moved.contains("moved on from https://a.test/shop"),
        "{moved}"
    );
    assert!(!moved.contains("b.test"), "{moved}");
    // The same URL loaded again is another document.
    assert!(still_shown(Some(&recorded), Some("https://a.test/shop"), Some("D9")).is_err());
    // No document recorded: the URL decides; nothing recorded: nothing is described.
    let by_url = json!({"url": "https://a.test/shop", "origin": "https://a.test"});
    assert_eq!(
        still_shown(Some(&by_url), Some("https://a.test/shop"), None),
        Ok(())
    );
    assert!(still_shown(Some(&by_url), Some("https://b.test/"), None).is_err());
    assert!(still_shown(None, Some("https://a.test/shop"), Some("D1")).is_err());
}

#[test]
fn a_bug_report_takes_the_pages_own_title_where_chrome_hides_the_tabs() {
    use super::bundle::{assemble, Parts};
    use crate::core::page::tabs::{TabTools, TopPage};
    let listed = |title: &str| TabTools {
        page: Some(TopPage {
            url: "https://shop.test/".into(),
            origin: "https://shop.test".into(),
            title: title.into(),
            loading: false,
        }),
        ..TabTools::default()
    };
    let report = |page: Value, tools: Option<Result<TabTools, String>>| {
        assemble(
            Parts {
                log: json!({"run": {"runId": "r"}, "events": []}),
                page: Some(page),
                tools,
                audit: None,
                screenshot: Err("none".into()),
                user_agent: String::new(),
                extension_version: String::new(),
                settings: json!({}),
                created_ms: 0.0,
            },
            &[],
        )
    };
    let hidden = json!({"url": "https://shop.test/", "title": ""});
    assert_eq!(
        report(hidden.clone(), Some(Ok(listed("Tea shop"))))["page"]["title"],
        "Tea shop"
    );
    // Nothing listed (the tab moved on, or the listing failed): nothing to fill it with.
    assert_eq!(report(hidden.clone(), None)["page"]["title"], "");
    assert_eq!(report(hidden, Some(Err("no".into())))["page"]["title"], "");
    // A title Chrome gave stays.
    let titled = json!({"url": "https://shop.test/", "title": "Shop"});
    assert_eq!(
        report(titled, Some(Ok(listed("Tea shop"))))["page"]["title"],
        "Shop"
    );
}
