//! The declarative layers of the gate: the built-in and declared middleware a person or a
//! script sets (`configure({middleware})`, `run({middleware})`: observe, redact a pattern,
//! block, fail, delay), parsed by [`declared`] (a run's) and [`stored`] (the person's).
//! [`super::screen`] applies `block`, `fail` and `delay`; a run applies the others around its
//! calls (`run::middleware`).

use serde_json::Value;

use crate::core::egress::REDACTED;

/// Built-in middleware. Pre-call layers run in order, post-call layers in reverse order, as
/// nested `next()` calls would.
#[derive(Debug, Clone, PartialEq)]
pub enum Middleware {
    /// Reports every call and its result as `CUSTOM webmcp_host.tool_observe`.
    Observe,
    /// Hides these strings (and every 12-byte run of the longer ones) in arguments shown, in
    /// results and in errors, as [`crate::core::egress::redact`] does.
    Redact {
        /// The strings to hide.
        secrets: Vec<String>,
    },
    /// Refuses calls to these tools with the reason as the error.
    Block {
        /// The tools refused.
        tools: Vec<String>,
        /// The error the model is given.
        reason: String,
    },
    /// Wraps every result and every failure of a tool as data from `source` (besides tools
    /// marked untrusted).
    DataWrap {
        /// Where the data comes from.
        source: String,
    },
    /// Replaces every match of a regular expression in results and errors before the model
    /// sees them.
    Replace {
        /// The regular expression (Rust `regex` syntax), compiled when declared.
        pattern: Pattern,
        /// What each match becomes.
        replacement: String,
    },
    /// Fault injection: the tool answers this error instead of running, for its first
    /// `times` calls of the turn (all of them when `None`).
    Fail {
        /// The tool.
        tool: String,
        /// The error the model is given.
        error: String,
        /// How many calls fail.
        times: Option<usize>,
    },
    /// Holds calls (of `tool`, or of every tool) this long before they run.
    Delay {
        /// The tool, or every tool.
        tool: Option<String>,
        /// How long (ms).
        ms: u32,
    },
}

/// A `redact` layer's regular expression, compiled once; equal when written alike.
#[derive(Debug, Clone)]
pub struct Pattern(pub(in crate::core) regex::Regex);

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

/// The longest `delay` a layer may declare (ms).
pub const MAX_DELAY_MS: u32 = crate::core::limits::MAX_DELAY_MS;

/// Declarative layers (`[{kind, ...}]`) as `what` (`configure` or `run`) received them:
/// `{kind: "observe"}`, `{kind: "redact", pattern, replacement?}`, `{kind: "block", tool,
/// reason?}`, `{kind: "fail", tool, error, times?}`, `{kind: "delay", tool?, ms}`. An error
/// names the layer and the field.
pub fn declared(value: &Value, what: &str) -> Result<Vec<Middleware>, String> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        _ => return Err(format!("{what}: `middleware` must be an array of layers")),
    };
    items
        .iter()
        .enumerate()
        .map(|(i, layer)| layer_of(layer).map_err(|e| format!("{what}: middleware[{i}]: {e}")))
        .collect()
}

fn layer_of(layer: &Value) -> Result<Middleware, String> {
    let text = |key: &str| layer.get(key).and_then(Value::as_str).map(str::to_owned);
    let needed = |key: &str| {
        text(key)
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("`{key}` is required (a non-empty string)"))
    };
    let number = |key: &str| -> Result<Option<u64>, String> {
        match layer.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .map(Some)
                .ok_or_else(|| format!("`{key}` must be a whole number of at least 0")),
        }
    };
    match layer.get("kind").and_then(Value::as_str) {
        Some("observe") => Ok(Middleware::Observe),
        Some("redact") => {
            let pattern = regex::Regex::new(&needed("pattern")?)
                .map(Pattern)
                .map_err(|e| format!("`pattern` is not a regular expression: {e}"))?;
            let replacement = text("replacement").unwrap_or_else(|| REDACTED.to_owned());
            Ok(Middleware::Replace {
                pattern,
                replacement,
            })
        }
        Some("block") => Ok(Middleware::Block {
            tools: vec![needed("tool")?],
            reason: text("reason").unwrap_or_else(|| "a middleware layer blocks this tool".into()),
        }),
        Some("fail") => Ok(Middleware::Fail {
            tool: needed("tool")?,
            error: needed("error")?,
            times: number("times")?.map(|n| n as usize),
        }),
        Some("delay") => {
            let ms = number("ms")?.ok_or("`ms` is required")?;
            if ms > u64::from(MAX_DELAY_MS) {
                return Err(format!("`ms` is at most {MAX_DELAY_MS}"));
            }
            Ok(Middleware::Delay {
                tool: text("tool"),
                ms: ms as u32,
            })
        }
        Some(other) => Err(format!(
            "unknown kind `{}` (observe, redact, block, fail, delay)",
            other.chars().take(40).collect::<String>()
        )),
        None => Err("`kind` is required".into()),
    }
}

/// The person's stored layers (`configure({middleware})`, kept under
/// [`crate::core::storage::MIDDLEWARE`]): none when nothing is stored, an error when what is
/// stored no longer parses (then every call is refused, so that a `block` is never skipped).
pub fn stored(stored: Option<Value>) -> Result<Vec<Middleware>, String> {
    declared(&stored.unwrap_or(Value::Null), "the stored middleware")
        .map_err(|e| format!("run: {e}: set it again with `configure`"))
}
