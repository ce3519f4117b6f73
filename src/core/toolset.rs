//! The tools a model may call in one run, with each input schema compiled once.
//!
//! A [`ToolSet`] is what the parser's stream layer and repair resolve names against and
//! validate arguments with (full JSON Schema, through the `jsonschema` crate). A schema that
//! does not compile (a remote `$ref`, an invalid keyword value) keeps its tool usable: the
//! arguments must then only be an object. Schemas compile when a tool is first validated, so a
//! run with thousands of tools pays only for those it calls.

#![warn(missing_docs)]

use std::cell::OnceCell;
use std::collections::HashMap;

use serde::Deserialize;
use serde_json::Value;

use super::limits::MAX_TOOL_NAME_BYTES;
use crate::core::naming::{is_valid_name, kind};

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    /// The name the model calls the tool by, unique in its set.
    pub name: String,
    /// What the tool does, for the model (empty when not given).
    #[serde(default)]
    pub description: String,
    /// The JSON schema of the tool's arguments (an empty object schema when not given).
    #[serde(default = "empty_object_schema")]
    pub input_schema: Value,
}

fn empty_object_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

struct Entry {
    spec: ToolSpec,
    /// `name` lowercased without `_`, `-`, `.` and spaces, for name repair.
    canonical: String,
    /// Compiled the first time a call to the tool is validated, then kept: a run with
    /// thousands of tools pays only for those it calls.
    validator: OnceCell<Result<jsonschema::Validator, String>>,
}

/// The tools of a run.
#[derive(Default)]
pub struct ToolSet {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.spec.name))
            .finish()
    }
}

/// Lowercase, without `_`, `-`, `.` and whitespace: `getWeather`, `get_weather` and
/// `Get-Weather` are all `getweather`.
pub fn canonical_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '_' | '-' | '.') && !c.is_whitespace())
        .flat_map(char::to_lowercase)
        .collect()
}

impl ToolSet {
    /// Builds the set; returns it with one message per tool that was left out (bad or
    /// duplicate name, schema not an object). A schema that does not compile is found when
    /// the tool is first validated ([`ToolSet::schema_problem`]).
    pub fn new(specs: impl IntoIterator<Item = ToolSpec>) -> (ToolSet, Vec<String>) {
        let mut set = ToolSet::default();
        let mut problems = Vec::new();
        for spec in specs {
            if !is_valid_name(&spec.name, MAX_TOOL_NAME_BYTES) {
                problems.push(format!(
                    "tool `{}` left out: a name is 1 to {MAX_TOOL_NAME_BYTES} of A-Z, a-z, 0-9, '_', '-'",
                    spec.name
                ));
                continue;
            }
            if set.get(&spec.name).is_some() {
                problems.push(format!("tool `{}` left out: the name is taken", spec.name));
                continue;
            }
            if !spec.input_schema.is_object() {
                problems.push(format!(
                    "tool `{}` left out: its input schema is {}, not an object",
                    spec.name,
                    kind(&spec.input_schema)
                ));
                continue;
            }
            let canonical = canonical_name(&spec.name);
            set.by_name.insert(spec.name.clone(), set.entries.len());
            set.entries.push(Entry {
                spec,
                canonical,
                validator: OnceCell::new(),
            });
        }
        (set, problems)
    }

    /// Reads a tools file: a JSON array of `{name, description, inputSchema}`.
    pub fn from_json_text(text: &str) -> Result<(ToolSet, Vec<String>), String> {
        let specs: Vec<ToolSpec> = serde_json::from_str(text).map_err(|e| {
            format!("a tools file is a JSON array of {{name, description, inputSchema}}: {e}")
        })?;
        Ok(ToolSet::new(specs))
    }

    /// The tool of exactly this name, if the set has it.
    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.entry(name).map(|e| &e.spec)
    }

    fn entry(&self, name: &str) -> Option<&Entry> {
        self.by_name.get(name).map(|&i| &self.entries[i])
    }

    fn validator(entry: &Entry) -> &Result<jsonschema::Validator, String> {
        entry.validator.get_or_init(|| {
            crate::core::schema::validator_for(&entry.spec.input_schema).map_err(|error| {
                format!(
                    "tool `{}`: its input schema does not compile ({error}); its arguments are only checked to be an object",
                    entry.spec.name
                )
            })
        })
    }

    /// Why a tool's schema does not compile, if it does not.
    pub fn schema_problem(&self, name: &str) -> Option<String> {
        Self::validator(self.entry(name)?).as_ref().err().cloned()
    }

    /// Whether the set has no tool at all.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Every tool of the set, in the order they were given.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.entries.iter().map(|e| &e.spec)
    }

    /// Every tool's name, in the order they were given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.spec.name.as_str())
    }

    /// Names with their canonical forms, for name repair.
    pub(crate) fn canonical_names(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries
            .iter()
            .map(|e| (e.spec.name.as_str(), e.canonical.as_str()))
    }

    /// Where the arguments break the tool's schema: the instance path (a JSON pointer, `""`
    /// for the arguments themselves) of every finding. Empty when they are valid, when the tool
    /// is unknown, or when its schema does not compile.
    pub fn invalid_places(&self, name: &str, arguments: &Value) -> Vec<String> {
        let Some(Ok(validator)) = self.entry(name).map(Self::validator) else {
            return Vec::new();
        };
        validator
            .iter_errors(arguments)
            .map(|error| error.instance_path().to_string())
            .collect()
    }

    /// Checks arguments against the tool's schema. `Err` lists what is wrong, at most five
    /// findings, each with its place in the arguments.
    pub fn validate(&self, name: &str, arguments: &Value) -> Result<(), String> {
        let entry = self
            .entry(name)
            .ok_or_else(|| format!("unknown tool `{name}`"))?;
        if !arguments.is_object() {
            return Err(format!(
                "the arguments are {}, not an object",
                kind(arguments)
            ));
        }
        let Ok(validator) = Self::validator(entry) else {
            return Ok(());
        };
        let findings: Vec<String> = validator
            .iter_errors(arguments)
            .take(5)
            .map(|error| {
                let place = error.instance_path().to_string();
                let error = crate::core::schema::error_text(&error);
                if place.is_empty() {
                    error
                } else {
                    format!("{place}: {error}")
                }
            })
            .collect();
        if findings.is_empty() {
            Ok(())
        } else {
            Err(findings.join("; "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(name: &str, schema: Value) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: String::new(),
            input_schema: schema,
        }
    }

    #[test]
    fn validates_with_full_json_schema() {
        let (set, problems) = ToolSet::new([spec(
            "add",
            json!({"type": "object", "properties": {"a": {"type": "number"}, "tags": {"type": "array", "items": {"pattern": "^[a-z]+$"}}},
                   "required": ["a"], "additionalProperties": false}),
        )]);
        assert!(problems.is_empty());
        assert_eq!(set.validate("add", &json!({"a": 1, "tags": ["x"]})), Ok(()));
        let error = set
            .validate("add", &json!({"a": "1", "tags": ["X"], "z": 0}))
            .unwrap_err();
        assert!(
            error.contains("/a: \"1\" is not of type \"number\""),
            "{error}"
        );
        assert!(error.contains("/tags/0"), "{error}");
        assert!(error.contains("'z'"), "{error}");
        assert_eq!(
            set.validate("add", &json!([])),
            Err("the arguments are an array, not an object".into())
        );
        assert_eq!(
            set.validate("nope", &json!({})),
            Err("unknown tool `nope`".into())
        );
    }

    #[test]
    fn bad_tools_are_left_out_or_checked_loosely() {
        let (set, problems) = ToolSet::new([
            spec("ok", json!({"type": "object"})),
            spec("ok", json!({"type": "object"})),
            spec("bad name", json!({})),
            spec("list", json!([])),
            spec(
                "loose",
                json!({"type": "object", "properties": {"a": {"type": 5}}}),
            ),
        ]);
        assert_eq!(set.names().collect::<Vec<_>>(), ["ok", "loose"]);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(set
            .schema_problem("loose")
            .unwrap()
            .contains("does not compile"));
        assert_eq!(set.schema_problem("ok"), None);
        assert_eq!(set.validate("loose", &json!({"a": "anything"})), Ok(()));
    }

    #[test]
    fn canonical_names() {
        assert_eq!(canonical_name("getWeather"), "getweather");
        assert_eq!(canonical_name("get_weather"), "getweather");
        assert_eq!(canonical_name("Get-Weather"), "getweather");
    }
}
