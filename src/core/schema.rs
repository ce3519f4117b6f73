//! Every JSON Schema of a page, server, model or person is compiled here, within budgets: a
//! schema's regular expressions (`pattern`, `patternProperties`) are counted before it
//! compiles (at most [`MAX_SCHEMA_PATTERNS`]), and each match may backtrack at most
//! [`PATTERN_BACKTRACK_LIMIT`] times. Patterns without lookaround or backreferences run on
//! the linear-time `regex` engine; those with them on `fancy-regex`'s backtracking VM,
//! bounded so. A match that reaches the bound is a validation error naming it, never a
//! frozen worker: a check costs at most patterns × bound steps per string checked.

use serde_json::Value;

pub use crate::core::limits::{MAX_SCHEMA_PATTERNS, PATTERN_BACKTRACK_LIMIT, PATTERN_SIZE_LIMIT};

/// A validator for `schema` (formats checked when `formats`), or why it may not be used: it
/// does not compile, or it has more than [`MAX_SCHEMA_PATTERNS`] regular expressions
/// (`max_schema_patterns`).
pub fn validator(schema: &Value, formats: bool) -> Result<jsonschema::Validator, String> {
    let patterns = count_patterns(schema, MAX_SCHEMA_PATTERNS + 1);
    if patterns > MAX_SCHEMA_PATTERNS {
        return Err(format!(
            "it has more than {MAX_SCHEMA_PATTERNS} regular expressions (max_schema_patterns)"
        ));
    }
    let patterns = jsonschema::PatternOptions::fancy_regex()
        .backtrack_limit(PATTERN_BACKTRACK_LIMIT)
        .size_limit(PATTERN_SIZE_LIMIT)
        .dfa_size_limit(PATTERN_SIZE_LIMIT);
    jsonschema::options()
        .should_validate_formats(formats)
        .with_pattern_options(patterns)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// A validation error's text, said plainly when a match reached the backtracking bound.
pub fn error_text(error: &jsonschema::ValidationError) -> String {
    let text = error.to_string();
    match text.contains("backtracking count exceeded") {
        true => format!(
            "its pattern needs more than {PATTERN_BACKTRACK_LIMIT} backtracking steps on this value (pattern_backtrack_limit): not checked further, so not accepted"
        ),
        false => text,
    }
}

/// Where and how `value` breaks `validator`'s schema: `[{pointer, message}]`, at most
/// `max_validation_errors` of them (empty: it matches).
pub fn pointed_errors(validator: &jsonschema::Validator, value: &Value) -> Vec<Value> {
    validator
        .iter_errors(value)
        .take(crate::core::limits::MAX_VALIDATION_ERRORS)
        .map(|e| {
            serde_json::json!({"pointer": e.instance_path().to_string(), "message": error_text(&e)})
        })
        .collect()
}

/// [`validator`] without format checks.
pub fn validator_for(schema: &Value) -> Result<jsonschema::Validator, String> {
    validator(schema, false)
}

/// The regular expressions of a schema (`pattern` strings, `patternProperties` keys), counted
/// up to `most` (the walk stops there).
pub fn count_patterns(schema: &Value, most: usize) -> usize {
    let mut count = 0;
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        if count >= most {
            break;
        }
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("pattern", Value::String(_)) => count += 1,
                        ("patternProperties", Value::Object(patterns)) => count += patterns.len(),
                        _ => {}
                    }
                    stack.push(value);
                }
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    count.min(most)
}

#[cfg(test)]
mod tests;
