//! A run's usage as AG-UI's `RUN_FINISHED.usage` carries it: one entry per provider and
//! model, summed over its steps, in AG-UI's accounting (input counts cache reads and writes,
//! output counts reasoning), with only the counts every step reported.

use serde_json::json;

use super::{report, ANTHROPIC, GEMINI, OPENAI};
use crate::core::agui::TokenUsage;
use crate::core::provider::anthropic::AnthropicDecoder;
use crate::core::provider::gemini::GeminiDecoder;
use crate::core::provider::openai::OpenAiDecoder;
use crate::core::provider::usage::{RunUsage, StepUsage, Usage};

fn step(provider: &str, model_id: &str, usage: Option<Usage>) -> StepUsage {
    StepUsage {
        step: 0,
        model: "registry-name".into(),
        model_id: model_id.into(),
        provider: provider.into(),
        usage,
        finish_reason: None,
        cost: None,
    }
}

fn run_of(steps: Vec<StepUsage>) -> RunUsage {
    let mut run = RunUsage::default();
    for step in steps {
        run.add(step);
    }
    run
}

/// OpenAI with a reasoning model: `prompt_tokens` already counts the cached tokens and
/// `completion_tokens` the reasoning ones.
const OPENAI_REASONING: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n\
data: {\"choices\":[],\"usage\":{\"prompt_tokens\":800,\"completion_tokens\":300,\"total_tokens\":1100,\"prompt_tokens_details\":{\"cached_tokens\":512},\"completion_tokens_details\":{\"reasoning_tokens\":256}}}\n\n\
data: [DONE]\n\n";

#[test]
fn each_provider_and_model_is_summed_in_ag_ui_accounting() {
    let openai = |stream| report::<OpenAiDecoder>(stream).0;
    let anthropic = report::<AnthropicDecoder>(ANTHROPIC).0;
    let gemini = report::<GeminiDecoder>(GEMINI).0;
    let run = run_of(vec![
        step("openai", "o4-mini", openai(OPENAI_REASONING)),
        step("anthropic", "claude-sonnet-4-5", anthropic),
        step("openai", "o4-mini", openai(OPENAI)),
        step("gemini", "gemini-2.5-flash", gemini),
        step("anthropic", "claude-sonnet-4-5", anthropic),
    ]);
    let usage = run.token_usage();
    assert_eq!(
        serde_json::to_value(&usage).unwrap(),
        json!([
            // 800 + 1200 in, 300 + 35 out; reasoning 256 + 0; cached 512 + 1024.
            {"provider": "openai", "model": "o4-mini", "inputTokens": 2000, "outputTokens": 335,
             "totalTokens": 2335, "reasoningTokens": 256, "cachedInputTokens": 1536},
            // Anthropic's input_tokens (12) leaves out its cache reads (2000) and writes (100):
            // added in, twice over two steps; output 42 with no reasoning count of its own.
            {"provider": "anthropic", "model": "claude-sonnet-4-5", "inputTokens": 4224,
             "outputTokens": 84, "totalTokens": 4308, "cachedInputTokens": 4000,
             "cacheWriteInputTokens": 200},
            // Gemini's promptTokenCount already counts its cached content; the thoughts (20)
            // are output, and its reasoning.
            {"provider": "google", "model": "gemini-2.5-flash", "inputTokens": 50,
             "outputTokens": 27, "totalTokens": 77, "reasoningTokens": 20,
             "cachedInputTokens": 32}
        ])
    );
    for entry in &usage {
        let (input, output) = (entry.input_tokens.unwrap(), entry.output_tokens.unwrap());
        assert_eq!(entry.total_tokens, Some(input + output));
        assert!(
            entry.cached_input_tokens.unwrap_or(0) + entry.cache_write_input_tokens.unwrap_or(0)
                <= input
        );
        assert!(entry.reasoning_tokens.unwrap_or(0) <= output);
    }
}

#[test]
fn unknown_counts_are_left_out_never_zero() {
    // Ollama: no cached count, no reasoning count; those keys are absent, not 0.
    let ollama = "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\ndata: [DONE]\n\n";
    let (known, _) = report::<OpenAiDecoder>(ollama);
    let usage = run_of(vec![step("openai", "llama3", known)]).token_usage();
    assert_eq!(
        serde_json::to_value(&usage).unwrap(),
        json!([{"provider": "openai", "model": "llama3", "inputTokens": 9, "outputTokens": 3, "totalTokens": 12}])
    );
    // A part one step reported and another did not is left out of the sum.
    let cached = Usage {
        input_tokens: 100,
        output_tokens: 10,
        cached_input_tokens: Some(60),
        ..Usage::default()
    };
    let usage = run_of(vec![
        step("openai", "m", Some(cached)),
        step("openai", "m", known),
    ])
    .token_usage();
    assert_eq!(usage[0].input_tokens, Some(109));
    assert_eq!(usage[0].cached_input_tokens, None);
    // A model with a step whose usage is unknown has no count at all: its entry is left out,
    // the other model's stays.
    let usage = run_of(vec![
        step("openai", "m", Some(cached)),
        step("openai", "m", None),
        step("anthropic", "c", Some(cached)),
    ])
    .token_usage();
    assert_eq!(usage.len(), 1);
    assert_eq!(usage[0].provider.as_deref(), Some("anthropic"));
    // Nothing known (replay, Chrome's model): no usage.
    let replay = run_of(vec![step("replay", "", None), step("chrome", "", None)]);
    assert_eq!(replay.token_usage(), Vec::<TokenUsage>::new());
    assert_eq!(RunUsage::default().token_usage(), Vec::<TokenUsage>::new());
}

#[test]
fn a_logs_usage_events_read_back_give_the_same_counts_they_carry() {
    let mut run = RunUsage::default();
    let anthropic = report::<AnthropicDecoder>(ANTHROPIC).0;
    let events: Vec<_> = [
        step("anthropic", "claude-sonnet-4-5", anthropic),
        step("anthropic", "claude-sonnet-4-5", anthropic),
    ]
    .into_iter()
    .map(
        |s| json!({"type": "CUSTOM", "name": crate::core::agui::CUSTOM_USAGE, "value": run.add(s)}),
    )
    .collect();
    let read = RunUsage::from_log(&events);
    assert_eq!(read.steps().len(), 2);
    // The event carries no cache-write count: unknown once read back.
    assert_eq!(
        serde_json::to_value(read.token_usage()).unwrap(),
        json!([{"provider": "anthropic", "model": "claude-sonnet-4-5", "inputTokens": 4224,
            "outputTokens": 84, "totalTokens": 4308, "cachedInputTokens": 4000}])
    );
    let unknown = json!({"type": "CUSTOM", "name": crate::core::agui::CUSTOM_USAGE,
        "value": run.add(step("replay", "", None))});
    assert!(RunUsage::from_log(&[unknown]).token_usage().is_empty());
}
