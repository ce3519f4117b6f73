//! What a judge's pass may rest on: the results the application gave the agent's calls, and
//! nothing else. A call the person declined, the host refused, a layer blocked or failed, or
//! that the tool never answered has no result from the application (its record, `{"error":
//! …}`, is the host's); the host's own clock is not the application either. After the verdict,
//! each item of a pass's evidence must quote one of those results, or the pass is overruled.
//!
//! An item quotes a result when its letters and digits, lower-cased, in order, are found in
//! the result's, as the judge was shown it (its JSON) or as the application wrote it (each of
//! its strings); spacing, quotes, brackets and JSON's escapes do not count. An item may begin
//! with a label naming the tool whose result it quotes (`add_to_cart: {"cart": 2}`,
//! `add_to_cart result → …`); any other words around a quote make it no quote.

use serde_json::Value;

use super::{Turn, TurnCall};
use crate::core::evals::messages::failed;
use crate::core::run::local::CURRENT_TIME;

/// Whether a call's result came from the application: it has one, it is not the host's word
/// that the call did not go through, and the tool is not the host's own clock.
pub fn answered(call: &TurnCall) -> bool {
    call.function_name != CURRENT_TIME && call.result.as_ref().is_some_and(|r| failed(r).is_none())
}

/// Why a judge's pass cannot stand, when it cannot: no call of the agent reached the
/// application, or an item of its `evidence` quotes nothing the application answered (named).
pub fn overruled(evidence: &[Value], turns: &[Turn]) -> Option<String> {
    let answers: Vec<(&str, Vec<String>)> = (turns.iter())
        .flat_map(|t| &t.tool_calls)
        .filter(|c| answered(c))
        .map(|c| (c.function_name.as_str(), texts(c.result.as_ref())))
        .collect();
    if answers.is_empty() {
        return Some("the judge passed the case, but the agent made no call with a result from the application (a call the person declined, or the host refused, blocked or failed, has none): its claims alone are not evidence".into());
    }
    let missing = (evidence.iter())
        .filter_map(Value::as_str)
        .find(|item| !found(item, &answers))?;
    Some(format!(
        "the judge passed the case, but its evidence \"{}\" is not found in any result the application gave the agent's calls: a pass rests only on what the application answered",
        one_line(missing)
    ))
}

/// An item as a reason quotes it: on one line, at most 200 characters.
fn one_line(item: &str) -> String {
    let line: String = (item.chars())
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                ' '
            } else {
                c
            }
        })
        .collect();
    match line.char_indices().nth(200) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

/// Text as quotes are compared: its letters and digits only, lower-cased.
fn folded(text: &str) -> String {
    (text.chars())
        .flat_map(char::to_lowercase)
        .filter(|c| c.is_alphanumeric())
        .collect()
}

/// A result's texts, folded: its JSON, as the judge was shown it, and each of its strings.
fn texts(result: Option<&Value>) -> Vec<String> {
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(folded(s)),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let Some(result) = result else {
        return Vec::new();
    };
    let mut out = vec![folded(&result.to_string())];
    strings(result, &mut out);
    out
}

/// Whether an item quotes one of the answers (tool, folded texts): whole, or after a label
/// that names the tool whose result it quotes.
fn found(item: &str, answers: &[(&str, Vec<String>)]) -> bool {
    fn quotes<'a>(quote: &str, mut of: impl Iterator<Item = &'a Vec<String>>) -> bool {
        let quote = folded(quote);
        !quote.is_empty() && of.any(|texts| texts.iter().any(|t| t.contains(&quote)))
    }
    if quotes(item, answers.iter().map(|(_, texts)| texts)) {
        return true;
    }
    let Some((label, quote)) = labelled(item) else {
        return false;
    };
    let label = label.to_lowercase();
    let named = (answers.iter()).filter(|(tool, _)| label.contains(&tool.to_lowercase()));
    quotes(quote, named.map(|(_, texts)| texts))
}

/// An item's label and quote, split at the first `:`, `→`, `->` or `=>`, when what comes
/// before is a label: short, and no part of a quoted value (no quote mark or bracket).
fn labelled(item: &str) -> Option<(&str, &str)> {
    let (at, sep) = (item.char_indices()).find_map(|(at, _)| {
        [":", "→", "->", "=>"]
            .into_iter()
            .find(|sep| item[at..].starts_with(sep))
            .map(|sep| (at, sep.len()))
    })?;
    let label = &item[..at];
    let plain = !label.contains(['{', '[', '"', '\'', '`', '“', '”']);
    (plain && label.chars().count() <= 80).then(|| (label, &item[at + sep..]))
}
