//! What a run used: the tokens a provider reported for one model call ([`Usage`], read from
//! its stream by the decoders of this module's parent), a step's ([`StepUsage`]) and a run's
//! ([`RunUsage`]). A step whose provider reported none is *unknown*, never guessed. Each
//! step's usage goes out as the `CUSTOM` event [`CUSTOM_USAGE`] (with the run's total so
//! far), the run's answer carries the total ([`RunUsage::to_value`]), and `RUN_FINISHED` and
//! `RUN_ERROR` carry it per provider and model in AG-UI's terms ([`RunUsage::token_usage`]).
//! The cost of what was used is `core::observe::cost`'s.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::core::agui::CUSTOM_USAGE;

use crate::core::agui::TokenUsage;

/// The tokens of one model call, as its provider reported them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: u64,
    /// Output tokens (reasoning or thinking tokens included).
    pub output_tokens: u64,
    /// Of the input tokens, those read from the provider's cache; `None`: not reported.
    pub cached_input_tokens: Option<u64>,
    /// Of the input tokens, those written to the provider's cache; `None`: not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_input_tokens: Option<u64>,
    /// Of the output tokens, those spent on reasoning; `None`: not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_tokens: Option<u64>,
}

/// The sum of two parts, known only when both are (saturating: a provider's counts cannot
/// wrap it).
fn both(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    Some(a?.saturating_add(b?))
}

impl Usage {
    /// The sum of two calls' usage (each part known only when known in both).
    pub fn plus(self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
            cached_input_tokens: both(self.cached_input_tokens, other.cached_input_tokens),
            cache_write_input_tokens: both(
                self.cache_write_input_tokens,
                other.cache_write_input_tokens,
            ),
            reasoning_tokens: both(self.reasoning_tokens, other.reasoning_tokens),
        }
    }
}

/// A number of tokens from a JSON field, when it is a non-negative integer.
pub(crate) fn tokens(value: &Value, pointer: &str) -> Option<u64> {
    value.pointer(pointer).and_then(Value::as_u64)
}

/// What a run knows of one model step's use.
#[derive(Debug, Clone, PartialEq)]
pub struct StepUsage {
    /// The step (1 for the run's first model call).
    pub step: usize,
    /// The registry's name of the model.
    pub model: String,
    /// The provider's model id.
    pub model_id: String,
    /// The provider (`openai`, `anthropic`, `gemini`, `chrome`, `replay`).
    pub provider: String,
    /// The tokens; `None`: unknown (the provider reported none).
    pub usage: Option<Usage>,
    /// The provider's finish reason, as it wrote it, when it gave one.
    pub finish_reason: Option<String>,
    /// The cost in US dollars, when the model is priced and the usage known.
    pub cost: Option<f64>,
}

/// A run's use so far: its steps and their total.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunUsage {
    steps: Vec<StepUsage>,
}

impl RunUsage {
    /// Adds a step; returns the `CUSTOM` [`CUSTOM_USAGE`] event's value for it.
    pub fn add(&mut self, step: StepUsage) -> Value {
        self.steps.push(step);
        let step = self.steps.last().expect("just pushed");
        let mut value = step.event_value();
        value["run"] = self.total_value();
        value
    }

    /// The steps so far.
    pub fn steps(&self) -> &[StepUsage] {
        &self.steps
    }

    /// The total of the steps whose usage is known (`None`: none is).
    pub fn total(&self) -> Option<Usage> {
        self.steps
            .iter()
            .filter_map(|s| s.usage)
            .reduce(Usage::plus)
    }

    /// The cost of the known steps when every known step is priced (`None` otherwise).
    pub fn cost(&self) -> Option<f64> {
        let known = self.steps.iter().filter(|s| s.usage.is_some());
        known.map(|s| s.cost).sum::<Option<f64>>()
    }

    fn total_value(&self) -> Value {
        let unknown = self.steps.iter().filter(|s| s.usage.is_none()).count();
        let mut value = usage_json(self.total());
        value["steps"] = json!(self.steps.len());
        value["unknownSteps"] = json!(unknown);
        value["cost"] = json!(self.total().and(self.cost()));
        value
    }

    /// The run's usage as AG-UI's `RUN_FINISHED.usage` and `RUN_ERROR.usage` carry it: one
    /// entry per provider and model, in the order the run first used each, summed over its
    /// steps. A count is given only when every step of that model reported it (a step whose
    /// usage is unknown leaves out every count of its model); an entry with no count is left
    /// out. The provider is the vendor AG-UI names (`google` for Gemini).
    pub fn token_usage(&self) -> Vec<TokenUsage> {
        let mut groups: Vec<(&str, &str, Vec<Option<Usage>>)> = Vec::new();
        for step in &self.steps {
            let vendor = match step.provider.as_str() {
                "gemini" => "google",
                other => other,
            };
            match (groups.iter_mut()).find(|(p, m, _)| *p == vendor && *m == step.model_id) {
                Some((_, _, usages)) => usages.push(step.usage),
                None => groups.push((vendor, &step.model_id, vec![step.usage])),
            }
        }
        groups
            .into_iter()
            .filter_map(|(provider, model, usages)| {
                let sum = usages
                    .into_iter()
                    .reduce(|a, b| Some(a?.plus(b?)))
                    .flatten()?;
                Some(TokenUsage {
                    provider: Some(provider.to_owned()),
                    model: Some(model.to_owned()).filter(|m| !m.is_empty()),
                    input_tokens: Some(sum.input_tokens),
                    output_tokens: Some(sum.output_tokens),
                    total_tokens: Some(sum.input_tokens.saturating_add(sum.output_tokens)),
                    reasoning_tokens: sum.reasoning_tokens,
                    cached_input_tokens: sum.cached_input_tokens,
                    cache_write_input_tokens: sum.cache_write_input_tokens,
                })
            })
            .filter(TokenUsage::has_counts)
            .collect()
    }

    /// The steps as a run's log holds them: its `CUSTOM` [`CUSTOM_USAGE`] events read back
    /// (what they do not carry, the reasoning and cache-write counts, is unknown).
    pub fn from_log(events: &[Value]) -> RunUsage {
        let steps = events
            .iter()
            .filter(|e| e.get("type").and_then(Value::as_str) == Some("CUSTOM"))
            .filter(|e| e.get("name").and_then(Value::as_str) == Some(CUSTOM_USAGE))
            .filter_map(|e| e.get("value"))
            .map(|value| {
                let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
                let count = |key: &str| value.get(key).and_then(Value::as_u64);
                let usage = match (text("usage"), count("inputTokens"), count("outputTokens")) {
                    ("reported", Some(input_tokens), Some(output_tokens)) => Some(Usage {
                        input_tokens,
                        output_tokens,
                        cached_input_tokens: count("cachedInputTokens"),
                        cache_write_input_tokens: None,
                        reasoning_tokens: None,
                    }),
                    _ => None,
                };
                StepUsage {
                    step: value.get("step").and_then(Value::as_u64).unwrap_or(0) as usize,
                    model: text("model").to_owned(),
                    model_id: text("modelId").to_owned(),
                    provider: text("provider").to_owned(),
                    usage,
                    finish_reason: None,
                    cost: value.get("cost").and_then(Value::as_f64),
                }
            })
            .collect();
        RunUsage { steps }
    }

    /// The run answer's `usage`: `null` when no step's usage is known, else
    /// `{inputTokens, outputTokens, cachedInputTokens, cost, steps, unknownSteps, perStep}`.
    pub fn to_value(&self) -> Value {
        if self.total().is_none() {
            return Value::Null;
        }
        let mut value = self.total_value();
        value["perStep"] = self.steps.iter().map(StepUsage::event_value).collect();
        value
    }
}

/// `{inputTokens, outputTokens, cachedInputTokens}`, each `null` when unknown.
fn usage_json(usage: Option<Usage>) -> Value {
    json!({
        "inputTokens": usage.map(|u| u.input_tokens),
        "outputTokens": usage.map(|u| u.output_tokens),
        "cachedInputTokens": usage.and_then(|u| u.cached_input_tokens),
    })
}

impl StepUsage {
    /// `{step, model, modelId, provider, usage: "reported" | "unknown", inputTokens,
    /// outputTokens, cachedInputTokens, finishReason, cost}` (`null`s where unknown).
    pub fn event_value(&self) -> Value {
        let mut value = usage_json(self.usage);
        value["step"] = json!(self.step);
        value["model"] = json!(self.model);
        value["modelId"] = json!(self.model_id);
        value["provider"] = json!(self.provider);
        value["usage"] = json!(if self.usage.is_some() {
            "reported"
        } else {
            "unknown"
        });
        value["finishReason"] = json!(self.finish_reason);
        value["cost"] = json!(self.cost);
        value
    }
}
