//! `evaluate({mode: "simulate"})`'s request, parsed and bounded: the fields every mode reads
//! alike by [`Common`], the simulations, the user and judge models, `maxSteps`, `replay` and
//! `rejudge`.

use serde_json::Value;

use super::{parse, parse_value, Simulation};
use crate::core::evals::report::Format;
use crate::core::evals::request::{tab_id, Common};
use crate::core::limits::{MAX_EVAL_RESULTS, MAX_MAX_STEPS, SIM_AGENT_STEPS};

/// `evaluate({tabId, simulations, mode: "simulate", models?, userModel?, judgeModel?, runs?,
/// timeoutMs?, maxSteps?, format?, reload?, replay?, rejudge?})`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct SimulateRequest {
    /// The tab.
    pub tab_id: i64,
    /// The cases.
    pub cases: Vec<Simulation>,
    /// The agent models (empty: the configured default).
    pub models: Vec<String>,
    /// The user model (default: the agent's).
    pub user_model: Option<String>,
    /// The judge model.
    pub judge_model: Option<String>,
    /// Runs of each case with each model.
    pub runs: u32,
    /// Each setup call's timeout, ms.
    pub timeout_ms: u32,
    /// The agent's tool calls within one turn.
    pub max_steps: usize,
    /// A report to add.
    pub format: Option<Format>,
    /// Each case's run on the first page, freshly loaded.
    pub reload: bool,
    /// Recorded results to play again (`replay`).
    pub replay: Vec<Value>,
    /// With `replay`, the judge asked again (`judgeModel`) even where its transcript is the
    /// one recorded: a recorded verdict is never taken on trust (`rejudge`).
    pub rejudge: bool,
}

impl SimulateRequest {
    /// Parses the request (its `mode` is `simulate`).
    pub fn parse(value: &Value) -> Result<Self, String> {
        const E: &str = "evaluate";
        let map = value
            .as_object()
            .ok_or("evaluate: the request must be an object")?;
        let tab_id = tab_id(map)?;
        let cases = match map.get("simulations") {
            Some(Value::String(text)) => parse(text),
            Some(array @ Value::Array(_)) => parse_value(array),
            _ => Err(
                "`simulations` is required in simulate mode: a simulations.json array or its text"
                    .into(),
            ),
        }
        .map_err(|e| format!("{E}: {e}"))?;
        let name = |key: &str| -> Result<Option<String>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
                Some(_) => Err(format!("{E}: `{key}` must be a model's name")),
            }
        };
        let Common {
            models,
            runs,
            timeout_ms,
            format,
            reload,
        } = Common::parse(map)?;
        let max_steps = match map.get("maxSteps") {
            None | Some(Value::Null) => SIM_AGENT_STEPS,
            Some(n) => (n.as_u64())
                .filter(|n| (1..=MAX_MAX_STEPS as u64).contains(n))
                .ok_or(format!("{E}: `maxSteps` must be 1 to {MAX_MAX_STEPS}"))?
                as usize,
        };
        let replay = match map.get("replay") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(results)) => results.clone(),
            Some(Value::Object(answer)) => match answer.get("results") {
                Some(Value::Array(results)) => results.clone(),
                _ => {
                    return Err(format!(
                        "{E}: `replay` must be a simulate answer or its `results`"
                    ))
                }
            },
            Some(_) => {
                return Err(format!(
                    "{E}: `replay` must be a simulate answer or its `results`"
                ))
            }
        };
        let rejudge = match map.get("rejudge") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(rejudge)) => *rejudge,
            Some(_) => return Err(format!("{E}: `rejudge` must be true or false")),
        };
        let judge_model = name("judgeModel")?;
        if judge_model.is_none() && (replay.is_empty() || rejudge) {
            if let Some(case) = cases.iter().find(|c| c.success_criteria.is_some()) {
                let with = if rejudge {
                    " to judge again (`rejudge`)"
                } else {
                    ""
                };
                return Err(format!(
                    "{E}: `judgeModel` is required{with}: case \"{}\" has `successCriteria` (the judge is never the agent's model unless you name it)",
                    case.name
                ));
            }
        }
        let total = cases.len() * models.len().max(1) * runs as usize;
        if total > MAX_EVAL_RESULTS {
            return Err(format!(
                "{E}: {} cases × {} runs is over {MAX_EVAL_RESULTS} results",
                cases.len(),
                total / cases.len()
            ));
        }
        Ok(SimulateRequest {
            tab_id,
            cases,
            models,
            user_model: name("userModel")?,
            judge_model,
            runs,
            timeout_ms,
            max_steps,
            format,
            reload,
            replay,
            rejudge,
        })
    }
}
