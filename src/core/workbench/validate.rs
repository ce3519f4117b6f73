//! `validateArguments`: a call's arguments checked against its tool's input schema, every
//! error placed at its field, so that a form shows each one where it belongs and nothing
//! invalid is sent.
//!
//! Formats (`email`, `uri`, `date`, …) are checked too: a person typing into a form means them.
//! A schema that does not compile is reported as such (`schemaProblem`); then the arguments
//! only have to be an object, as in a run ([`crate::core::toolset`]).

use serde::Serialize;
use serde_json::{Map, Value};

use crate::core::error::RequestError;
use crate::core::limits::Limits;
use crate::core::naming::kind;

/// At most this many errors are reported (a form shows them all at once).
pub const MAX_ERRORS: usize = crate::core::limits::MAX_VALIDATION_ERRORS;

/// One error, at its place in the arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    /// A JSON pointer into the arguments (`""`: the arguments themselves; `/a/0/b`). A
    /// missing required property is placed at that property.
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

/// The answer of `validateArguments`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Validation {
    /// Whether the arguments may be sent.
    pub valid: bool,
    /// Every error found (at most [`MAX_ERRORS`]), in schema order.
    pub errors: Vec<FieldError>,
    /// Why the schema could not be used, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schema_problem: Option<String>,
}

/// Checks `args` against `schema` (formats included).
pub fn validate_arguments(schema: &Value, args: &Value) -> Validation {
    let mut errors = Vec::new();
    if !args.is_object() {
        errors.push(FieldError {
            path: String::new(),
            message: format!("the arguments are {}, not an object", kind(args)),
        });
    }
    let compiled = crate::core::schema::validator(schema, true);
    let schema_problem = match compiled {
        Err(error) => Some(format!(
            "the input schema does not compile ({error}); the arguments are only checked to be an object"
        )),
        Ok(validator) => {
            if args.is_object() {
                for error in validator.iter_errors(args).take(MAX_ERRORS) {
                    let mut path = error.instance_path().to_string();
                    let message = match error.kind() {
                        jsonschema::error::ValidationErrorKind::Required { property } => {
                            let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
                            path.push('/');
                            path.push_str(&name.replace('~', "~0").replace('/', "~1"));
                            "required".to_owned()
                        }
                        _ => crate::core::schema::error_text(&error),
                    };
                    errors.push(FieldError { path, message });
                }
            }
            None
        }
    };
    Validation {
        valid: errors.is_empty(),
        errors,
        schema_problem,
    }
}

/// `validateArguments({tabId, name, args, frameId?} | {inputSchema, args})`.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidateRequest {
    /// The arguments to check.
    pub args: Value,
    /// Whose schema: given, or a tab's tool.
    pub against: Against,
}

/// The schema a [`ValidateRequest`] checks against.
#[derive(Debug, Clone, PartialEq)]
pub enum Against {
    /// This schema.
    Schema(Value),
    /// The input schema of a tab's tool.
    Tool {
        /// The tab.
        tab_id: i64,
        /// The tool's name.
        name: String,
        /// Its frame, when several frames offer the name.
        frame_id: Option<i64>,
    },
}

impl ValidateRequest {
    /// Parses the request: `inputSchema` (an object, within `max_schema_bytes`), or `tabId`
    /// and `name`; `args` is required.
    pub fn parse(value: &Value) -> Result<Self, RequestError> {
        let what = "validateArguments";
        let bad = |m: String| RequestError(format!("{what}: {m}"));
        let map: &Map<String, Value> = value
            .as_object()
            .ok_or_else(|| bad(format!("the request is {}, not an object", kind(value))))?;
        let args = map
            .get("args")
            .cloned()
            .ok_or_else(|| bad("`args` is required".into()))?;
        let id = |key: &str| -> Result<Option<i64>, RequestError> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(v) => match v.as_i64() {
                    Some(n) if n >= 0 => Ok(Some(n)),
                    _ => Err(bad(format!("`{key}` must be a whole number ≥ 0"))),
                },
            }
        };
        let against = match map.get("inputSchema") {
            Some(Value::Object(_)) => {
                let schema = map["inputSchema"].clone();
                let size = serde_json::to_string(&schema)
                    .map(|s| s.len())
                    .unwrap_or(usize::MAX);
                let cap = Limits::DEFAULT.max_schema_bytes;
                if size > cap {
                    return Err(bad(format!(
                        "the input schema is {size} bytes, over the cap of {cap} (max_schema_bytes)"
                    )));
                }
                Against::Schema(schema)
            }
            Some(other) if !other.is_null() => {
                return Err(bad(format!(
                    "`inputSchema` must be an object, not {}",
                    kind(other)
                )))
            }
            _ => Against::Tool {
                tab_id: id("tabId")?.ok_or_else(|| {
                    bad("`tabId` and `name` (or `inputSchema`) are required".into())
                })?,
                name: map
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .ok_or_else(|| bad("`name` is required (a non-empty string)".into()))?
                    .to_owned(),
                frame_id: id("frameId")?,
            },
        };
        Ok(ValidateRequest { args, against })
    }
}
