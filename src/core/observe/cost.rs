//! The person's price table and the cost arithmetic.
//!
//! The table is stored under [`PRICES_KEY`] as `{"<model>": {input, output, cachedInput?}}`:
//! US dollars per million tokens, `<model>` a model's name in the registry or its provider
//! model id (the name wins). A step costs its uncached input tokens at `input`, its cached
//! input tokens at `cachedInput` (at `input` when the table gives no cached price), and its
//! output tokens at `output`. A step whose tokens are unknown, or whose model is not in the
//! table, has no cost: nothing is guessed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::provider::usage::Usage;

/// Where the price table is stored (`chrome.storage.local`).
pub const PRICES_KEY: &str = crate::core::storage::PRICES;

/// One model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million cached input tokens (`input` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input: Option<f64>,
}

/// The price table: model name (or model id) → prices.
pub type Prices = BTreeMap<String, Price>;

impl Price {
    /// What `usage` costs at these prices, in US dollars.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage
            .cached_input_tokens
            .unwrap_or(0)
            .min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let cached_price = self.cached_input.unwrap_or(self.input);
        (uncached as f64 * self.input
            + cached as f64 * cached_price
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

/// Reads a price table as `configure` is given it: every price a finite number ≥ 0.
pub fn parse(value: &Value) -> Result<Prices, String> {
    if value.is_null() {
        return Ok(Prices::new());
    }
    let prices: Prices =
        serde_json::from_value(value.clone()).map_err(|e| format!("`prices`: {e}"))?;
    for (model, price) in &prices {
        let all = [Some(price.input), Some(price.output), price.cached_input];
        if all.into_iter().flatten().any(|p| !p.is_finite() || p < 0.0) {
            return Err(format!(
                "`prices`: the prices of `{model}` must be numbers ≥ 0 (US dollars per million tokens)"
            ));
        }
        if model.trim().is_empty() {
            return Err("`prices`: a price is given for a model without a name".into());
        }
    }
    Ok(prices)
}

/// The stored table (an unreadable one counts as empty: runs are not priced).
pub fn stored(value: Option<Value>) -> Prices {
    value.and_then(|v| parse(&v).ok()).unwrap_or_default()
}

/// The price of a model: by its registry name, else by its provider model id.
pub fn price_of<'a>(prices: &'a Prices, name: &str, model_id: &str) -> Option<&'a Price> {
    prices.get(name).or_else(|| prices.get(model_id))
}

/// What a step cost: `None` when its usage is unknown or its model not priced.
pub fn step_cost(
    prices: &Prices,
    name: &str,
    model_id: &str,
    usage: Option<&Usage>,
) -> Option<f64> {
    Some(price_of(prices, name, model_id)?.cost(usage?))
}

/// The total of several runs' `usage` (each a run answer's or a run summary's `usage`, `null`
/// when unknown): `{inputTokens, outputTokens, cachedInputTokens, cost, runs, unknownRuns,
/// unpricedRuns}`. For a conversation, pass the usage of each of its runs.
pub fn sum_runs<'a>(usages: impl IntoIterator<Item = &'a Value>) -> Value {
    let (mut input, mut output, mut cached, mut cost) = (0u64, 0u64, 0u64, 0f64);
    let (mut runs, mut unknown, mut unpriced) = (0usize, 0usize, 0usize);
    for usage in usages {
        runs += 1;
        let (Some(i), Some(o)) = (
            usage.get("inputTokens").and_then(Value::as_u64),
            usage.get("outputTokens").and_then(Value::as_u64),
        ) else {
            unknown += 1;
            continue;
        };
        input += i;
        output += o;
        cached += usage
            .get("cachedInputTokens")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        match usage.get("cost").and_then(Value::as_f64) {
            Some(c) => cost += c,
            None => unpriced += 1,
        }
    }
    serde_json::json!({
        "inputTokens": input,
        "outputTokens": output,
        "cachedInputTokens": cached,
        "cost": (runs > unknown && unpriced == 0).then_some(cost),
        "runs": runs,
        "unknownRuns": unknown,
        "unpricedRuns": unpriced,
    })
}
