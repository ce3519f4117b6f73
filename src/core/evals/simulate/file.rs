//! `simulations.json`, read and written in the shape of webmcp-evals' `simulate` mode
//! (GoogleChromeLabs/webmcp-tools, `webmcp-evals/src/types/simulations.ts`).
//!
//! A file is an array of cases, each `{name?, setup?: [{functionName, arguments}],
//! userScenario | userMessage, maxTurns?, maxDurationMs?, assertions?: [{type: "dom", selector,
//! expect: {exists | count | text | attribute: {name, value}}}], successCriteria?}`. A case has
//! exactly one of `userScenario` (a brief a user model plays, up to `maxTurns` turns, 1 when
//! absent) and `userMessage` (one message, one turn: no `maxTurns`), and at least one of
//! `assertions` and `successCriteria` (one prose string). Matchers (`$pattern`, `$contains`,
//! `$gt`, `$gte`, `$lt`, `$lte`, `$type`, `$any`) are those of `evals.json`.
//!
//! Unlike webmcp-evals' loader, a field this host does not know is kept, not refused: each
//! case keeps the object it was read from, and [`write()`] gives it back as it came (a file read
//! and written is the same JSON, keys in their order, laid out with two-space indents).
//!
//! Invariants: pure; an error names the case (1-based, and its name) and the field.

use serde_json::{Map, Value};

use crate::core::limits::{
    MAX_DOM_QUERIES, MAX_SELECTOR_BYTES, MAX_SIM_DURATION_MS, MAX_SIM_SETUP, MAX_SIM_TURNS,
};

/// One case of a `simulations.json`.
#[derive(Debug, Clone, PartialEq)]
pub struct Simulation {
    /// Its name (`Simulation N` when the file gives none).
    pub name: String,
    /// Tool calls made before the agent joins, no model involved.
    pub setup: Vec<SetupCall>,
    /// Who speaks for the person.
    pub user: UserSide,
    /// The conversation's wall-clock budget, ms, when the case states one.
    pub max_duration_ms: Option<u64>,
    /// Checks of the final page.
    pub assertions: Vec<DomAssertion>,
    /// The outcome a judge model weighs the conversation against.
    pub success_criteria: Option<String>,
    /// The case as the file holds it (written back as it came).
    pub raw: Map<String, Value>,
}

/// Who speaks for the person in a case.
#[derive(Debug, Clone, PartialEq)]
pub enum UserSide {
    /// A user model plays this brief, for up to `max_turns` turns.
    Scenario {
        /// The brief (never shown the success criteria).
        scenario: String,
        /// The most turns.
        max_turns: u32,
    },
    /// This one message, one turn, no user model.
    Message(String),
}

impl UserSide {
    /// The most turns of the conversation.
    pub fn max_turns(&self) -> u32 {
        match self {
            UserSide::Scenario { max_turns, .. } => *max_turns,
            UserSide::Message(_) => 1,
        }
    }
}

/// A setup call: `{functionName, arguments}`.
#[derive(Debug, Clone, PartialEq)]
pub struct SetupCall {
    /// The tool.
    pub function_name: String,
    /// Its arguments.
    pub arguments: Map<String, Value>,
}

/// A DOM assertion: `{type: "dom", selector, expect}`.
#[derive(Debug, Clone, PartialEq)]
pub struct DomAssertion {
    /// The CSS selector.
    pub selector: String,
    /// What is expected of what it selects.
    pub expect: Expect,
    /// The assertion as written.
    pub raw: Value,
}

/// What a DOM assertion expects.
#[derive(Debug, Clone, PartialEq)]
pub enum Expect {
    /// Whether anything matches.
    Exists(bool),
    /// How many elements match (a number or a matcher).
    Count(Value),
    /// The first match's trimmed text (a string or a matcher; `null` when nothing matches).
    Text(Value),
    /// An attribute of the first match (a string, `null`: absent, or a matcher).
    Attribute {
        /// The attribute's name.
        name: String,
        /// Its expected value.
        value: Value,
    },
}

impl Expect {
    /// The expected value, as reports show it.
    pub fn expected(&self) -> Value {
        match self {
            Expect::Exists(b) => Value::Bool(*b),
            Expect::Count(v) | Expect::Text(v) | Expect::Attribute { value: v, .. } => v.clone(),
        }
    }

    /// The kind (`exists`, `count`, `text`, `attribute`).
    pub fn kind(&self) -> &'static str {
        match self {
            Expect::Exists(_) => "exists",
            Expect::Count(_) => "count",
            Expect::Text(_) => "text",
            Expect::Attribute { .. } => "attribute",
        }
    }
}

/// Reads a `simulations.json` text: every case, or an error naming the case and the field.
pub fn parse(text: &str) -> Result<Vec<Simulation>, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("simulations: not JSON: {e}"))?;
    parse_value(&value)
}

/// [`parse`] of an already parsed file.
pub fn parse_value(value: &Value) -> Result<Vec<Simulation>, String> {
    let Value::Array(items) = value else {
        return Err("simulations: the file must be an array of cases".into());
    };
    if items.is_empty() {
        return Err("simulations: the file has no case".into());
    }
    let mut cases: Vec<Simulation> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let case = one(item, i).map_err(|e| {
            let name = item.get("name").and_then(Value::as_str).map(str::trim);
            match name.filter(|n| !n.is_empty()) {
                Some(name) => format!("simulations: case {} ({name}): {e}", i + 1),
                None => format!("simulations: case {}: {e}", i + 1),
            }
        })?;
        if let Some(first) = cases.iter().position(|c| c.name == case.name) {
            return Err(format!(
                "simulations: cases {} and {} are both named \"{}\"",
                first + 1,
                i + 1,
                case.name
            ));
        }
        cases.push(case);
    }
    Ok(cases)
}

/// The file of these cases, as they were read (two-space indents, a final newline).
pub fn write(cases: &[Simulation]) -> String {
    let items: Vec<Value> = cases.iter().map(|c| Value::Object(c.raw.clone())).collect();
    let mut text = serde_json::to_string_pretty(&items).unwrap_or_else(|_| "[]".into());
    text.push('\n');
    text
}

fn one(item: &Value, index: usize) -> Result<Simulation, String> {
    let Value::Object(map) = item else {
        return Err("a case must be an object".into());
    };
    let name = match map.get("name") {
        None => format!("Simulation {}", index + 1),
        Some(value) => text(value, "name")?,
    };
    let setup = match map.get("setup") {
        None => Vec::new(),
        Some(Value::Array(calls)) => {
            if calls.len() > MAX_SIM_SETUP {
                return Err(format!("`setup` has more than {MAX_SIM_SETUP} calls"));
            }
            (calls.iter().enumerate())
                .map(|(i, call)| setup_call(call).map_err(|e| format!("setup[{i}]: {e}")))
                .collect::<Result<_, _>>()?
        }
        Some(_) => return Err("`setup` must be an array of {functionName, arguments}".into()),
    };
    let max_turns = match map.get("maxTurns") {
        None => None,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|n| (1..=u64::from(MAX_SIM_TURNS)).contains(n))
                .ok_or(format!(
                    "`maxTurns` must be a whole number, 1 to {MAX_SIM_TURNS}"
                ))? as u32,
        ),
    };
    let user = match (map.get("userScenario"), map.get("userMessage")) {
        (Some(scenario), None) => UserSide::Scenario {
            scenario: text(scenario, "userScenario")?,
            max_turns: max_turns.unwrap_or(1),
        },
        (None, Some(message)) => {
            if max_turns.is_some() {
                return Err(
                    "`maxTurns` goes with `userScenario`: a `userMessage` case is one turn".into(),
                );
            }
            UserSide::Message(text(message, "userMessage")?)
        }
        _ => return Err("define exactly one of `userScenario` and `userMessage`".into()),
    };
    let max_duration_ms = match map.get("maxDurationMs") {
        None => None,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|n| (1..=MAX_SIM_DURATION_MS).contains(n))
                .ok_or(format!(
                    "`maxDurationMs` must be a whole number, 1 to {MAX_SIM_DURATION_MS}"
                ))?,
        ),
    };
    let assertions = match map.get("assertions") {
        None => Vec::new(),
        Some(Value::Array(items)) if !items.is_empty() => {
            if items.len() > MAX_DOM_QUERIES {
                return Err(format!("`assertions` has more than {MAX_DOM_QUERIES}"));
            }
            (items.iter().enumerate())
                .map(|(i, a)| assertion(a).map_err(|e| format!("assertions[{i}]: {e}")))
                .collect::<Result<_, _>>()?
        }
        Some(_) => return Err("`assertions` must be a non-empty array".into()),
    };
    let success_criteria = match map.get("successCriteria") {
        None => None,
        Some(Value::Array(_)) => {
            return Err("`successCriteria` must be one prose string, not a list".into())
        }
        Some(value) => Some(text(value, "successCriteria")?),
    };
    if assertions.is_empty() && success_criteria.is_none() {
        return Err("a case needs `assertions`, `successCriteria`, or both".into());
    }
    Ok(Simulation {
        name,
        setup,
        user,
        max_duration_ms,
        assertions,
        success_criteria,
        raw: map.clone(),
    })
}

/// A non-empty string, trimmed.
fn text(value: &Value, field: &str) -> Result<String, String> {
    value
        .as_str()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| format!("`{field}` must be a non-empty string"))
}

fn setup_call(value: &Value) -> Result<SetupCall, String> {
    let map = value.as_object().ok_or("a setup call must be an object")?;
    let function_name = text(
        map.get("functionName").unwrap_or(&Value::Null),
        "functionName",
    )?;
    let arguments = match map.get("arguments") {
        Some(Value::Object(args)) => args.clone(),
        _ => {
            return Err(format!(
                "`arguments` of {function_name} must be an object (setup runs without a model: nothing fills a value in)"
            ))
        }
    };
    Ok(SetupCall {
        function_name,
        arguments,
    })
}

fn assertion(value: &Value) -> Result<DomAssertion, String> {
    let map = value.as_object().ok_or("an assertion must be an object")?;
    if map.get("type").and_then(Value::as_str) != Some("dom") {
        return Err("`type` must be \"dom\"".into());
    }
    let selector = text(map.get("selector").unwrap_or(&Value::Null), "selector")?;
    if selector.len() > MAX_SELECTOR_BYTES {
        return Err(format!("`selector` is over {MAX_SELECTOR_BYTES} bytes"));
    }
    let expect = map
        .get("expect")
        .and_then(Value::as_object)
        .filter(|e| e.len() == 1)
        .ok_or("`expect` must have exactly one of exists, count, text, attribute")?;
    let (key, want) = expect.iter().next().expect("one entry");
    let expect = match key.as_str() {
        "exists" => Expect::Exists(want.as_bool().ok_or("`exists` must be true or false")?),
        "count" => match want {
            Value::Number(n) if n.as_u64().is_some() => Expect::Count(want.clone()),
            Value::Object(m) => {
                matcher(m)?;
                Expect::Count(want.clone())
            }
            _ => return Err("`count` must be a whole number ≥ 0 or a matcher".into()),
        },
        "text" => match want {
            Value::String(_) => Expect::Text(want.clone()),
            Value::Object(m) => {
                matcher(m)?;
                Expect::Text(want.clone())
            }
            _ => return Err("`text` must be a string or a matcher".into()),
        },
        "attribute" => {
            let attr = want
                .as_object()
                .filter(|a| a.len() == 2 && a.contains_key("value"))
                .ok_or("`attribute` must be {name, value}")?;
            let name = text(attr.get("name").unwrap_or(&Value::Null), "attribute.name")?;
            let value = attr["value"].clone();
            match &value {
                Value::String(_) | Value::Null => {}
                Value::Object(m) => matcher(m)?,
                _ => return Err("`attribute.value` must be a string, null or a matcher".into()),
            }
            Expect::Attribute { name, value }
        }
        other => {
            return Err(format!(
                "`expect` has `{other}`: one of exists, count, text, attribute"
            ))
        }
    };
    Ok(DomAssertion {
        selector,
        expect,
        raw: value.clone(),
    })
}

/// A matcher object: `$` keys only, each with a value of its kind.
fn matcher(map: &Map<String, Value>) -> Result<(), String> {
    if map.is_empty() {
        return Err("a matcher needs at least one `$` key".into());
    }
    for (key, value) in map {
        let ok = match key.as_str() {
            "$any" => value == &Value::Bool(true),
            "$contains" | "$pattern" => value.is_string(),
            "$gt" | "$gte" | "$lt" | "$lte" => value.as_f64().is_some_and(f64::is_finite),
            "$type" => matches!(
                value.as_str(),
                Some("string" | "number" | "boolean" | "array" | "object" | "null")
            ),
            _ => return Err(format!("`{key}` is not a matcher key")),
        };
        if !ok {
            return Err(format!("`{key}` has a value of the wrong kind"));
        }
    }
    if let Some(Value::String(pattern)) = map.get("$pattern") {
        crate::core::evals::matcher::matches(
            &Value::Object(map.clone()),
            &Value::String(String::new()),
        )
        .map_err(|e| format!("`$pattern` \"{pattern}\": {e}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
