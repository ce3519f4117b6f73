//! Every JSON Schema of a page, server, model or person is compiled here, within budgets: a
//! schema's regular expressions (`pattern`, `patternProperties`) are counted before it
//! compiles (at most [`MAX_SCHEMA_PATTERNS`]), and each match may backtrack at most
//! [`PATTERN_BACKTRACK_LIMIT`] times. Patterns without lookaround or backreferences run on
//! the linear-time `regex` engine; those with them on `fancy-regex`'s backtracking VM,
//! bounded so. A match that reaches the bound is a validation error naming it, never a
//! frozen worker: a check costs at most patterns × bound steps per string checked.
//!
//! Patterns are written for browsers: ECMAScript `RegExp` without the `u` flag, which reads
//! some classes that Rust's engines refuse (`[\w-.]`: a `-` beside a class escape is a `-`;
//! `[^]`, any character; `[]`, none; a `[` inside a class is a `[`). [`ecma_pattern`]
//! rewrites those spellings to what they mean before a schema compiles, so a pattern that a
//! browser takes is never refused here for its spelling.

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
    let rewritten = ecma_patterns(schema);
    let schema = rewritten.as_ref().unwrap_or(schema);
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

/// `pattern` as Rust's `regex` and `fancy-regex` read what an ECMAScript `RegExp` without the
/// `u` flag reads, or `None` when it needs no change. Inside a class: a `-` next to a class
/// escape (`\w`, `\d`, `\s` and their negations) or before another `-` is a literal `-`;
/// `[`, `&` and `~` are literals (Rust reads nested classes and set operations there); `\b`
/// is a backspace. `[^]` is any character, `[]` none.
pub fn ecma_pattern(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let class_escape = |i: usize| {
        chars.get(i) == Some(&'\\') && chars.get(i + 1).is_some_and(|c| "wWdDsS".contains(*c))
    };
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    // Whether the last item of the class so far was a class escape.
    let mut after_class_escape = false;
    while i < chars.len() {
        let c = chars[i];
        if !in_class {
            match c {
                '\\' => {
                    out.push(c);
                    if let Some(next) = chars.get(i + 1) {
                        out.push(*next);
                    }
                    i += 2;
                }
                '[' => {
                    let negated = chars.get(i + 1) == Some(&'^');
                    let body = i + 1 + usize::from(negated);
                    if chars.get(body) == Some(&']') {
                        out.push_str(if negated { "[\\s\\S]" } else { "[^\\s\\S]" });
                        i = body + 1;
                    } else {
                        out.push_str(if negated { "[^" } else { "[" });
                        in_class = true;
                        after_class_escape = false;
                        i = body;
                    }
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            }
            continue;
        }
        match c {
            '\\' => {
                if class_escape(i) {
                    out.push(c);
                    out.push(chars[i + 1]);
                    after_class_escape = true;
                } else {
                    match chars.get(i + 1) {
                        Some('b') => out.push_str("\\x08"),
                        Some(next) => {
                            out.push(c);
                            out.push(*next);
                        }
                        None => out.push(c),
                    }
                    after_class_escape = false;
                }
                i += 2;
                continue;
            }
            ']' => {
                out.push(c);
                in_class = false;
            }
            '-' if after_class_escape
                || class_escape(i + 1)
                || chars.get(i + 1) == Some(&'-')
                || chars.get(i.wrapping_sub(1)) == Some(&'-') =>
            {
                out.push_str("\\-");
            }
            '[' | '&' | '~' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
        after_class_escape = false;
        i += 1;
    }
    (out != pattern).then_some(out)
}

/// `schema` with every `pattern` and `patternProperties` key read as [`ecma_pattern`] reads
/// it, or `None` when none needs a change.
fn ecma_patterns(schema: &Value) -> Option<Value> {
    fn needs(value: &Value) -> bool {
        match value {
            Value::Object(map) => map.iter().any(|(key, value)| match (key.as_str(), value) {
                ("pattern", Value::String(p)) => ecma_pattern(p).is_some(),
                ("patternProperties", Value::Object(patterns)) => {
                    patterns.keys().any(|p| ecma_pattern(p).is_some()) || needs(value)
                }
                _ => needs(value),
            }),
            Value::Array(items) => items.iter().any(needs),
            _ => false,
        }
    }
    fn rewrite(value: &mut Value) {
        match value {
            Value::Object(map) => {
                if let Some(Value::String(p)) = map.get_mut("pattern") {
                    if let Some(rust) = ecma_pattern(p) {
                        *p = rust;
                    }
                }
                if let Some(Value::Object(patterns)) = map.get_mut("patternProperties") {
                    let keys: Vec<String> = patterns.keys().cloned().collect();
                    for key in keys {
                        if let Some(rust) = ecma_pattern(&key) {
                            if let Some(sub) = patterns.shift_remove(&key) {
                                patterns.insert(rust, sub);
                            }
                        }
                    }
                }
                map.values_mut().for_each(rewrite);
            }
            Value::Array(items) => items.iter_mut().for_each(rewrite),
            _ => {}
        }
    }
    // The walk is bounded as the schema is (max_schema_depth, max_schema_bytes): it is
    // recursive, like the compiler that comes after it.
    if !needs(schema) {
        return None;
    }
    let mut copy = schema.clone();
    rewrite(&mut copy);
    Some(copy)
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
