//! `evaluate`'s request, parsed and bounded: every field checked with an error that names it.

use serde_json::{Map, Value};

use super::messages::Mode;
use super::parse_evals;
use super::report::Format;
use super::EvalCase;
use crate::core::limits::{DEFAULT_CALL_TIMEOUT_MS, MAX_CALL_TIMEOUT_MS};

/// The most runs of each case with each model.
pub const MAX_RUNS: u32 = crate::core::limits::MAX_EVAL_RUNS;
/// The most models of one evaluation.
pub const MAX_MODELS: usize = crate::core::limits::MAX_EVAL_MODELS;
/// The most results (cases × models × runs) of one evaluation.
pub const MAX_RESULTS: usize = crate::core::limits::MAX_EVAL_RESULTS;

/// `evaluate({tabId, evals, mode, models?, runs?, timeoutMs?, format?, reload?})`, parsed.
#[derive(Debug, Clone, PartialEq)]
pub struct EvaluateRequest {
    /// The tab the cases run on.
    pub tab_id: i64,
    /// The cases.
    pub cases: Vec<EvalCase>,
    /// Smoke or agent.
    pub mode: Mode,
    /// The models (agent mode; empty: the configured default).
    pub models: Vec<String>,
    /// Runs of each case with each model (1 to [`MAX_RUNS`]).
    pub runs: u32,
    /// Each smoke call's timeout, ms.
    pub timeout_ms: u32,
    /// A report to add to the answer (`report`), besides the answer itself.
    pub format: Option<Format>,
    /// Each case (each run) on the suite's first page, freshly loaded.
    pub reload: bool,
}

impl EvaluateRequest {
    /// Parses the request; `evals` is an eval file's array or its JSON text.
    pub fn parse(value: &Value) -> Result<Self, String> {
        let map = value
            .as_object()
            .ok_or("evaluate: the request must be an object")?;
        let tab_id = tab_id(map)?;
        let cases = match map.get("evals") {
            Some(Value::String(text)) => parse_evals(text)?,
            Some(array @ Value::Array(_)) => parse_evals(&array.to_string())?,
            _ => {
                return Err(
                    "evaluate: `evals` is required: an eval file's array or its text".into(),
                )
            }
        };
        let mode = match map.get("mode").and_then(Value::as_str) {
            Some("smoke") => Mode::Smoke,
            Some("agent") => Mode::Agent,
            _ => {
                return Err("evaluate: `mode` must be \"smoke\", \"agent\" or \"simulate\"".into())
            }
        };
        let Common {
            models,
            runs,
            timeout_ms,
            format,
            reload,
        } = Common::parse(map)?;
        let per_case = match mode {
            Mode::Smoke => 1,
            Mode::Agent | Mode::Simulate => models.len().max(1) * runs as usize,
        };
        if cases.len().saturating_mul(per_case) > MAX_RESULTS {
            return Err(format!(
                "evaluate: {} cases × {per_case} runs is over {MAX_RESULTS} results",
                cases.len()
            ));
        }
        Ok(EvaluateRequest {
            tab_id,
            cases,
            mode,
            models,
            runs,
            timeout_ms,
            format,
            reload,
        })
    }
}

/// `evaluate`'s `tabId`: a whole number ≥ 0.
pub(super) fn tab_id(map: &Map<String, Value>) -> Result<i64, String> {
    map.get("tabId")
        .and_then(Value::as_i64)
        .filter(|id| *id >= 0)
        .ok_or_else(|| "evaluate: `tabId` is required (a whole number ≥ 0)".into())
}

/// The fields every mode of `evaluate` reads alike.
pub(super) struct Common {
    /// The models (empty: the configured default).
    pub models: Vec<String>,
    /// Runs of each case with each model.
    pub runs: u32,
    /// Each call's timeout, ms.
    pub timeout_ms: u32,
    /// A report to add.
    pub format: Option<Format>,
    /// Each case on the suite's first page, freshly loaded.
    pub reload: bool,
}

impl Common {
    /// `models?`, `runs?`, `timeoutMs?`, `format?`, `reload?`, each checked with an error that
    /// names it.
    pub(super) fn parse(map: &Map<String, Value>) -> Result<Common, String> {
        let models = match map.get("models") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|m| m.as_str().filter(|s| !s.is_empty()).map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .ok_or("evaluate: `models` must be an array of model names")?,
            Some(_) => return Err("evaluate: `models` must be an array of model names".into()),
        };
        if models.len() > MAX_MODELS {
            return Err(format!("evaluate: at most {MAX_MODELS} models"));
        }
        let runs = match map.get("runs") {
            None | Some(Value::Null) => 1,
            Some(n) => n
                .as_u64()
                .filter(|n| (1..=u64::from(MAX_RUNS)).contains(n))
                .ok_or(format!("evaluate: `runs` must be 1 to {MAX_RUNS}"))?
                as u32,
        };
        let timeout_ms = match map.get("timeoutMs") {
            None | Some(Value::Null) => DEFAULT_CALL_TIMEOUT_MS,
            Some(n) => n
                .as_u64()
                .filter(|n| (1..=u64::from(MAX_CALL_TIMEOUT_MS)).contains(n))
                .ok_or(format!(
                    "evaluate: `timeoutMs` must be 1 to {MAX_CALL_TIMEOUT_MS}"
                ))? as u32,
        };
        let format = match map.get("format") {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => {
                Some(Format::parse(name).map_err(|e| format!("evaluate: {e}"))?)
            }
            Some(_) => {
                return Err("evaluate: `format` must be \"json\", \"junit\", \"html\", \"markdown\" or \"sarif\"".into())
            }
        };
        let reload = match map.get("reload") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(reload)) => *reload,
            Some(_) => return Err("evaluate: `reload` must be true or false".into()),
        };
        Ok(Common {
            models,
            runs,
            timeout_ms,
            format,
            reload,
        })
    }
}
