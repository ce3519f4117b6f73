//! The rules: their table ([`RULES`]: id, severity, what each checks) and the checks of one
//! entry's name, description, hints and declarative form ([`check_entry`]), and of the entries
//! together: duplicate names and descriptions that name other tools ([`check_across`]).
//!
//! Invariant: a finding's severity is its rule's, from the table (a rule has one severity).

use serde_json::{Map, Value};

use super::out::{budget, check_text, Out};
pub use super::table::{all, find, Rule, PROBE_RULES, RULES};
use super::words::{self, name_words};
use super::{schema, Entry, Finding};
use crate::core::limits::Limits;
use crate::core::naming::{is_valid_name, kind};

/// Every rule of one entry (the rules across entries are [`check_across`]'s).
pub fn check_entry(entry: &Entry) -> Vec<Finding> {
    let mut out = Out {
        tool: &entry.label,
        findings: Vec::new(),
    };
    if let Some(reason) = &entry.skipped {
        out.add(
            "host-skipped",
            None,
            format!(
                "the host skipped this tool: {reason}. Fix the definition so the host can read it"
            ),
        );
        return out.findings;
    }
    let Some(obj) = entry.value.as_object() else {
        out.add(
            "name-missing",
            None,
            format!(
                "the entry is {}, not a tool definition: write an object \
                 {{name, description, inputSchema, annotations?}}",
                kind(&entry.value)
            ),
        );
        return out.findings;
    };
    let name = check_name(obj, &mut out);
    let declarative = obj.get("declarative").and_then(Value::as_object);
    check_description(obj, declarative.is_some(), &mut out);
    schema::check(obj.get("inputSchema"), &mut out);
    // Why the name (with the description as evidence) says the tool acts with consequences,
    // if it does: read once, for the hint rules and the form rule.
    let description = obj
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let consequence = name
        .as_deref()
        .and_then(|n| words::consequence(&name_words(n), description));
    let hints = check_hints(obj, name.as_deref(), consequence.as_deref(), &mut out);
    if let Some(form) = declarative {
        check_form(form, consequence.as_deref(), hints, &mut out);
    }
    out.findings
}

fn check_name(obj: &Map<String, Value>, out: &mut Out) -> Option<String> {
    let name = match obj.get("name") {
        Some(Value::String(name)) if !name.is_empty() => name,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            out.add(
                "name-missing",
                Some("/name"),
                "the tool has no name: give it a short verb_object name such as `search_flights`"
                    .into(),
            );
            return None;
        }
        Some(other) => {
            out.add(
                "name-missing",
                Some("/name"),
                format!(
                    "the name is {}, not a string: give it a string name",
                    kind(other)
                ),
            );
            return None;
        }
    };
    let cap = Limits::DEFAULT.max_name_bytes;
    if name.len() > cap {
        out.add(
            "name-too-long",
            Some("/name"),
            format!(
                "the name is {} bytes, over the host's cap of {cap}: the host skips this tool; \
                 shorten the name",
                name.len()
            ),
        );
    } else if !is_valid_name(name, cap) {
        let bad: String = name
            .chars()
            .filter(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
            .map(|c| format!("{:?}", c))
            .collect::<Vec<_>>()
            .join(", ");
        out.add(
            "name-charset",
            Some("/name"),
            format!(
                "the name has characters outside A-Z, a-z, 0-9, '_' and '-' ({bad}): the host \
                 skips this tool and models cannot call it; use snake_case"
            ),
        );
    }
    let chars = name.chars().count();
    if chars > super::rules::budget::NAME_CHARS {
        out.add(
            "name-length",
            Some("/name"),
            format!(
                "the name is {chars} characters, over the budget of {}: shorten it to a verb \
                 and its object",
                budget::NAME_CHARS
            ),
        );
    }
    check_verb(name, out);
    Some(name.clone())
}

fn check_verb(name: &str, out: &mut Out) {
    let words = name_words(name);
    let Some(first) = words.first() else {
        return;
    };
    if words::is_in(words::GENERIC_VERBS, first) {
        out.add(
            "name-verb",
            Some("/name"),
            format!(
                "the name starts with `{first}`, which says nothing of what the tool does: start \
                 with a specific verb (`search_`, `add_`, `book_`)"
            ),
        );
    } else if !words::is_verb(first) {
        out.add(
            "name-verb",
            Some("/name"),
            format!(
                "the name starts with `{first}`, not a verb: name the action first, as in `{}`",
                suggestion(&words)
            ),
        );
    }
}

/// A name with its verb first: the first verb of `words` moved to the front, or `get_` put
/// before them.
fn suggestion(words: &[String]) -> String {
    match words.iter().position(|w| words::is_verb(w)) {
        Some(at) => {
            let mut reordered = vec![words[at].clone()];
            reordered.extend(
                words
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| *i != at)
                    .map(|(_, w)| w.clone()),
            );
            reordered.join("_")
        }
        None => format!("get_{}", words.join("_")),
    }
}

fn check_description(obj: &Map<String, Value>, declarative: bool, out: &mut Out) {
    let missing_rule = if declarative {
        "form-description-missing"
    } else {
        "description-missing"
    };
    let text = match obj.get("description") {
        Some(Value::String(text)) if !text.trim().is_empty() => text,
        Some(Value::String(_)) | None | Some(Value::Null) => {
            let how = if declarative {
                "add a tooldescription attribute to the form that says what submitting it does"
            } else {
                "add one or two sentences that say what the tool does and when to use it"
            };
            out.add(
                missing_rule,
                Some("/description"),
                format!(
                    "the tool has no description, so an agent cannot tell when to use it: {how}"
                ),
            );
            check_text_fields(obj, out);
            return;
        }
        Some(other) => {
            out.add(
                missing_rule,
                Some("/description"),
                format!(
                    "the description is {}, not a string: the host skips this tool; write it \
                     as text",
                    kind(other)
                ),
            );
            return;
        }
    };
    let chars = text.chars().count();
    let words = text.split_whitespace().count();
    let cap = Limits::DEFAULT.max_description_bytes;
    if text.len() > cap {
        out.add(
            "description-too-long",
            Some("/description"),
            format!(
                "the description is {} bytes, over the host's cap of {cap}: the host skips this \
                 tool; keep it to what the tool does and when to use it",
                text.len()
            ),
        );
    } else if chars > budget::DESCRIPTION_CHARS {
        out.add(
            "description-long",
            Some("/description"),
            format!(
                "the description is {chars} characters, over the budget of {}: every tool's \
                 description is in the agent's context on every turn; move parameter details \
                 into the schema's property descriptions",
                budget::DESCRIPTION_CHARS
            ),
        );
    }
    if chars < budget::DESCRIPTION_MIN_CHARS || words < budget::DESCRIPTION_MIN_WORDS {
        out.add(
            "description-short",
            Some("/description"),
            format!(
                "the description ({words} words) is too short to choose the tool by: say what it \
                 does, to what, and when to use it"
            ),
        );
    }
    check_text_fields(obj, out);
}

/// The description and title: hidden characters, injection, directives.
fn check_text_fields(obj: &Map<String, Value>, out: &mut Out) {
    for key in ["description", "title"] {
        if let Some(Value::String(text)) = obj.get(key) {
            check_text(text, &format!("/{key}"), out);
        }
    }
}

/// The hints the entry gives: (readOnlyHint, consequentialHint), each counted only when `true`.
fn check_hints(
    obj: &Map<String, Value>,
    name: Option<&str>,
    consequence: Option<&str>,
    out: &mut Out,
) -> (bool, bool) {
    let annotations = match obj.get("annotations") {
        None | Some(Value::Null) => None,
        Some(Value::Object(map)) => Some(map),
        Some(other) => {
            out.add(
                "annotations-invalid",
                Some("/annotations"),
                format!(
                    "the annotations are {}, not an object: the host skips this tool; write \
                     {{\"readOnlyHint\": true}} or the like",
                    kind(other)
                ),
            );
            return (false, false);
        }
    };
    let mut hint = |key: &str| match annotations.and_then(|a| a.get(key)) {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            out.add(
                "hint-not-boolean",
                Some(&format!("/annotations/{key}")),
                format!(
                    "{key} is {}, not a boolean: the host counts a hint only when it is `true`; \
                     write true or leave it out",
                    kind(other)
                ),
            );
            false
        }
    };
    let read_only = hint("readOnlyHint");
    let consequential = hint("consequentialHint");
    hint("untrustedContentHint");
    if read_only && consequential {
        out.add(
            "hint-conflict",
            Some("/annotations"),
            "the tool says both readOnlyHint and consequentialHint: a tool that only reads has \
             no consequences; keep the one that is true"
                .into(),
        );
    }
    let name_words = name.map(name_words).unwrap_or_default();
    let Some(verb) = name_words.first().cloned() else {
        return (read_only, consequential);
    };
    let acts = consequence.is_some();
    // A verb alone (`add`) may be arithmetic or a change: only a verb with its object
    // (`add_to_cart`) says the tool writes. `remove_topping` writes; `share_pizza` may only
    // make a link.
    let writes = acts
        || ((words::is_in(words::WRITE_VERBS, &verb)
            || (words::is_in(words::CONTEXT_VERBS, &verb) && verb != "share"))
            && name_words.len() > 1);
    if writes && read_only {
        out.add(
            "hint-write-read-only",
            Some("/annotations/readOnlyHint"),
            format!(
                "the name starts with `{verb}`, which changes things, yet the tool says \
                 readOnlyHint: an agent may call it without asking; remove readOnlyHint (or \
                 rename the tool if it only reads)"
            ),
        );
    }
    if let Some(why) = consequence.filter(|_| !consequential && !read_only) {
        out.add(
            "hint-consequential-missing",
            Some("/annotations"),
            format!(
                "{why}, but the tool does not say consequentialHint: add \
                 \"consequentialHint\": true so each call is confirmed by the person"
            ),
        );
    }
    // A declarative form navigates when submitted: it is not held to readOnlyHint.
    let form = obj.contains_key("declarative");
    if words::is_in(words::READ_VERBS, &verb) && !read_only && !consequential && !form {
        out.add(
            "hint-read-missing",
            Some("/annotations"),
            format!(
                "the name starts with `{verb}`, which reads, but the tool does not say \
                 readOnlyHint: add \"readOnlyHint\": true if it changes nothing (or rename it \
                 if it does)"
            ),
        );
    }
    (read_only, consequential)
}

fn check_form(
    form: &Map<String, Value>,
    consequence: Option<&str>,
    (_, consequential): (bool, bool),
    out: &mut Out,
) {
    if form.get("autoSubmit") != Some(&Value::Bool(true)) {
        return;
    }
    let method = form
        .get("method")
        .and_then(Value::as_str)
        .unwrap_or("get")
        .to_ascii_lowercase();
    let why = if consequential {
        Some("it says consequentialHint".to_owned())
    } else if let Some(why) = consequence {
        Some(why.to_owned())
    } else if method == "post" {
        Some("it submits with POST".to_owned())
    } else {
        None
    };
    if let Some(why) = why {
        out.add(
            "form-autosubmit-consequential",
            Some("/declarative/autoSubmit"),
            format!(
                "the form auto-submits (toolautosubmit) and acts ({why}): an agent would submit \
                 it without the person seeing the filled form; remove toolautosubmit so the \
                 person submits it"
            ),
        );
    }
}

/// The rules across entries: duplicate names (in one frame and source: an error; across
/// frames or sources: a warning) and descriptions that name other tools of the page.
pub fn check_across(entries: &[Entry], per_entry: &mut [Vec<Finding>]) {
    let name_of = |e: &Entry| match e.value.get("name") {
        Some(Value::String(n)) if e.skipped.is_none() && !n.is_empty() => Some(n.clone()),
        _ => None,
    };
    let names: Vec<Option<String>> = entries.iter().map(name_of).collect();
    for (i, entry) in entries.iter().enumerate() {
        let Some(name) = &names[i] else { continue };
        let mut out = Out {
            tool: &entry.label,
            findings: Vec::new(),
        };
        let same = |j: usize| names[j].as_ref() == Some(name);
        let place = |e: &Entry| (e.frame_id, e.source.clone());
        if (0..i).any(|j| same(j) && place(&entries[j]) == place(entry)) {
            out.add(
                "name-duplicate",
                Some("/name"),
                format!(
                    "another tool of the same frame is named `{name}`: the host keeps only the \
                     first and WebMCP refuses the second registration; give each tool its own name"
                ),
            );
        } else if (0..entries.len())
            .any(|j| j != i && same(j) && place(&entries[j]) != place(entry))
        {
            out.add(
                "name-duplicate-across",
                Some("/name"),
                format!(
                    "another frame or source also offers `{name}`: an agent sees two tools of \
                     one name (the host tells them apart as `{name}__frameN`); give them \
                     distinct names"
                ),
            );
        }
        if let Some(Value::String(text)) = entry.value.get("description") {
            let mentioned = names.iter().enumerate().find_map(|(j, other)| {
                let other = other.as_deref()?;
                // A one-word name (`search`) is also a plain word: only names of two or more
                // words (`search_flights`, `getWeather`) count.
                let named = name_words(other).len() >= 2 && mentions(text, other);
                (j != i && other != name && named).then_some(other)
            });
            if let Some(other) = mentioned {
                out.add(
                    "description-cross-tool",
                    Some("/description"),
                    format!(
                        "the description names another tool, `{other}`: one tool's text that \
                         steers calls to another is how a tool shadows or hijacks others; say \
                         only what this tool does"
                    ),
                );
            }
        }
        per_entry[i].extend(out.findings);
    }
}

/// Whether `text` has `name` as a whole word (not inside a longer name).
fn mentions(text: &str, name: &str) -> bool {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    text.match_indices(name).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + name.len()..].chars().next();
        !before.is_some_and(is_name_char) && !after.is_some_and(is_name_char)
    })
}
