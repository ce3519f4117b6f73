//! The questions the host asks the person before a call that acts: one function per kind of
//! call, all in the same words ("WebMCP Host", what wants to run where, the arguments shown,
//! "Allow it?").
//!
//! Invariants, so that a question cannot hide what the call does:
//! - every argument is shown: each key whole, each value on a line of its own, a value too long
//!   for its line cut visibly (`"xxxx"… 640 more characters`), nested objects and arrays key by
//!   key, item by item;
//! - characters that hide, reorder or break text (controls, bidi overrides and isolates, line
//!   and paragraph separators, zero-width and other format characters, spaces other than
//!   U+0020, stacked combining marks) are shown escaped (`\u{202E}`), in the names of the tool,
//!   origin and server too;
//! - the whole question fits the browser's `confirm()` dialog, which keeps [`CONFIRM_ROWS`]
//!   lines of fewer than [`CONFIRM_COLUMNS`] characters and silently drops the rest.
//!
//! A call that cannot be shown so (too many keys, nesting too deep, a key too long) is not
//! asked about: its question is an `Err` that says why, and the caller declines the call.

use serde_json::{Map, Value};

use crate::core::limits::{CONFIRM_COLUMNS, CONFIRM_ROWS};

/// The host's words for a call the person did not allow (the page bridge says them after
/// `NotAllowedError: `).
pub const DECLINED: &str = "declined: the person did not allow this call";

/// The answer of a call the person did not allow (declined, or no answer in time), whoever
/// asked it: a run's call, an MCP call by hand, an exposed tool's call.
pub fn declined() -> Value {
    serde_json::json!({"ok": false, "error": DECLINED})
}

/// The longest line of a question (Chrome rewraps a line of [`CONFIRM_COLUMNS`] or more).
const WIDTH: usize = CONFIRM_COLUMNS - 2;
/// The least room left for a value beside its key (else the value goes on the next line).
const VALUE_ROOM: usize = 32;
/// Consecutive combining marks shown as they are; more are escaped (they stack over lines).
const MARKS: usize = 2;

/// Before a consequential page tool of `origin` runs; `hints_unknown`: it is asked only
/// because the page's polyfill does not say which tools act, and the question says so.
pub fn page_tool(
    name: &str,
    origin: &str,
    args: &Map<String, Value>,
    hints_unknown: bool,
) -> Result<String, String> {
    let (name, origin) = (escaped(name), escaped(origin));
    let why = match hints_unknown {
        true => " (asked because this page's WebMCP polyfill does not say which tools act)",
        false => "",
    };
    question(
        &format!("The agent wants to run “{name}” on {origin}{why} with:"),
        args,
    )
}

/// Before a run's agent calls a tool of an MCP server.
pub fn mcp_tool(server: &str, name: &str, args: &Map<String, Value>) -> Result<String, String> {
    let (server, name) = (escaped(server), escaped(name));
    let sentence = format!("The agent wants to run “{name}” of the MCP server {server} with:");
    question(&sentence, args)
}

/// Before a tool of an MCP server runs because the person called it by hand (`callTool`
/// with `server`): the same question, without an agent.
pub fn manual_mcp_tool(
    server: &str,
    name: &str,
    args: &Map<String, Value>,
) -> Result<String, String> {
    let (server, name) = (escaped(server), escaped(name));
    let sentence = format!("A call by hand wants to run “{name}” of the MCP server {server} with:");
    question(&sentence, args)
}

/// Before a page (`origin`) calls an MCP server's tool exposed to it.
pub fn exposed_tool(
    origin: &str,
    server: &str,
    name: &str,
    args: &Map<String, Value>,
) -> Result<String, String> {
    let (origin, server, name) = (escaped(origin), escaped(server), escaped(name));
    let sentence =
        format!("This page ({origin}) wants to run “{name}” of the MCP server {server} with:");
    question(&sentence, args)
}

/// Why the arguments cannot be shown honestly.
enum Unshowable {
    /// More lines than the dialog keeps.
    TooMany(usize),
    /// Indented past the room left for a value.
    TooDeep,
    /// A key longer than a line.
    LongKey,
}

/// The question: the host's name, `sentence` (wrapped), the arguments, "Allow it?".
fn question(sentence: &str, args: &Map<String, Value>) -> Result<String, String> {
    let mut lines = vec!["WebMCP Host".to_owned(), String::new()];
    lines.extend(wrapped(sentence));
    let budget = CONFIRM_ROWS.saturating_sub(lines.len() + 2);
    let mut shown = Shown {
        lines: Vec::new(),
        budget,
    };
    shown.object(0, String::new(), args, false).map_err(|why| {
        let why = match why {
            Unshowable::TooMany(lines) => format!(
                "they need more than the {lines} lines left in a confirmation; every key is shown on a line of its own"
            ),
            Unshowable::TooDeep => "they are nested too deeply".to_owned(),
            Unshowable::LongKey => format!("an argument's name is longer than {WIDTH} characters"),
        };
        format!(
            "not run: its arguments cannot all be shown to the person for confirmation ({why}). Call the tool with fewer or less nested arguments"
        )
    })?;
    lines.extend(shown.lines);
    lines.extend([String::new(), "Allow it?".to_owned()]);
    Ok(lines.join("\n"))
}

/// The argument lines of a question, at most `budget` of them.
struct Shown {
    lines: Vec<String>,
    budget: usize,
}

impl Shown {
    fn push(&mut self, line: String) -> Result<(), Unshowable> {
        if self.lines.len() >= self.budget {
            return Err(Unshowable::TooMany(self.budget));
        }
        self.lines.push(line);
        Ok(())
    }

    /// `value` at `indent`, after `prefix` (its key, or nothing), with a comma after it when
    /// `comma`.
    fn value(
        &mut self,
        indent: usize,
        prefix: String,
        value: &Value,
        comma: bool,
    ) -> Result<(), Unshowable> {
        match value {
            Value::Object(map) => self.object(indent, prefix, map, comma),
            Value::Array(items) => {
                let comma = if comma { "," } else { "" };
                if indent + 2 + VALUE_ROOM > WIDTH {
                    return Err(Unshowable::TooDeep);
                }
                if items.is_empty() {
                    return self.push(format!("{prefix}[]{comma}"));
                }
                self.push(format!("{prefix}["))?;
                for (at, item) in items.iter().enumerate() {
                    let inner = " ".repeat(indent + 2);
                    self.value(indent + 2, inner, item, at + 1 < items.len())?;
                }
                self.push(format!("{}]{comma}", " ".repeat(indent)))
            }
            scalar => {
                let comma = if comma { "," } else { "" };
                let room = WIDTH.saturating_sub(width(&prefix) + comma.len());
                self.push(format!("{prefix}{}{comma}", capped(scalar, room)))
            }
        }
    }

    fn object(
        &mut self,
        indent: usize,
        prefix: String,
        map: &Map<String, Value>,
        comma: bool,
    ) -> Result<(), Unshowable> {
        let end = if comma { "," } else { "" };
        if map.is_empty() {
            return self.push(format!("{prefix}{{}}{end}"));
        }
        let inner = indent + 2;
        if inner + VALUE_ROOM > WIDTH {
            return Err(Unshowable::TooDeep);
        }
        self.push(format!("{prefix}{{"))?;
        for (at, (key, value)) in map.iter().enumerate() {
            let key = quoted(key);
            let pad = " ".repeat(inner);
            let comma = at + 1 < map.len();
            if inner + width(&key) + 2 + VALUE_ROOM <= WIDTH {
                self.value(inner, format!("{pad}{key}: "), value, comma)?;
            } else if inner + width(&key) < WIDTH && inner + 2 + VALUE_ROOM <= WIDTH {
                // A long key: its value on the next line.
                self.push(format!("{pad}{key}:"))?;
                let below = " ".repeat(inner + 2);
                self.value(inner + 2, below, value, comma)?;
            } else {
                return Err(Unshowable::LongKey);
            }
        }
        self.push(format!("{}}}{end}", " ".repeat(indent)))
    }
}

/// A scalar in at most `room` characters: whole, or a string cut with the count of the
/// characters left out.
fn capped(scalar: &Value, room: usize) -> String {
    let Value::String(text) = scalar else {
        // A number, `true`, `false` or `null`: short, and shown whole.
        return scalar.to_string();
    };
    let mut marks = 0;
    let pieces = text.chars().map(move |c| escape(c, true, &mut marks));
    let mut whole = String::from('"');
    let mut used = 1;
    for piece in pieces.clone() {
        used += width(&piece);
        if used + 1 > room {
            break;
        }
        whole.push_str(&piece);
    }
    if used < room {
        return whole + "\"";
    }
    // Cut: as many characters as leave room for the marker.
    let total = text.chars().count();
    let marker = width("\"… ") + total.to_string().len() + " more characters".len();
    let limit = room.saturating_sub(marker);
    let mut shown = String::from('"');
    let (mut used, mut taken) = (1, 0);
    for piece in pieces {
        if used + width(&piece) > limit {
            break;
        }
        used += width(&piece);
        shown.push_str(&piece);
        taken += 1;
    }
    let left = total - taken;
    let noun = if left == 1 { "character" } else { "characters" };
    format!("{shown}\"… {left} more {noun}")
}

/// A name shown in a question's sentence: escaped, unquoted.
fn escaped(name: &str) -> String {
    let mut marks = 0;
    name.chars().map(|c| escape(c, false, &mut marks)).collect()
}

/// A key shown in quotes, escaped.
fn quoted(key: &str) -> String {
    let mut marks = 0;
    let inner: String = key.chars().map(|c| escape(c, true, &mut marks)).collect();
    format!("\"{inner}\"")
}

/// How one character is shown; `json` escapes `"` and `\` too (inside quotes). `marks` counts
/// the combining marks just before.
fn escape(c: char, json: bool, marks: &mut usize) -> String {
    let combining = is_combining(c);
    *marks = if combining { *marks + 1 } else { 0 };
    match c {
        '"' if json => "\\\"".to_owned(),
        '\\' if json => "\\\\".to_owned(),
        '\n' => "\\n".to_owned(),
        '\t' => "\\t".to_owned(),
        '\r' => "\\r".to_owned(),
        c if is_hiding(c) || (combining && *marks > MARKS) => {
            format!("\\u{{{:04X}}}", u32::from(c))
        }
        c => c.to_string(),
    }
}

/// Whether `c` hides, reorders or breaks the text around it, or looks like a plain space.
fn is_hiding(c: char) -> bool {
    c.is_control()
        || crate::core::text::is_invisible(c)
        || matches!(
            u32::from(c),
            // Spaces other than U+0020, and the Braille blank.
            0xA0 | 0x1680 | 0x2000..=0x200A | 0x202F | 0x205F | 0x3000 | 0x2800
            // Line and paragraph separators.
            | 0x2028 | 0x2029
            // Private use (no known glyph) and noncharacters.
            | 0xE000..=0xF8FF | 0xF0000..=0x10FFFF | 0xFDD0..=0xFDEF | 0xFFFE | 0xFFFF
        )
}

/// Whether `c` is a combining mark of the common blocks (those that stack).
fn is_combining(c: char) -> bool {
    matches!(
        u32::from(c),
        0x300..=0x36F | 0x483..=0x489 | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF
            | 0xFE20..=0xFE2F
    )
}

/// The width Chrome counts: UTF-16 code units.
fn width(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `sentence` in lines of at most [`WIDTH`]: broken at spaces, a word longer than a line
/// broken where it must.
fn wrapped(sentence: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let (mut line, mut used) = (String::new(), 0);
    for word in sentence.split(' ') {
        if used > 0 && used + 1 + width(word) > WIDTH {
            lines.push(std::mem::take(&mut line));
            used = 0;
        }
        if used > 0 {
            line.push(' ');
            used += 1;
        }
        for c in word.chars() {
            if used + c.len_utf16() > WIDTH {
                lines.push(std::mem::take(&mut line));
                used = 0;
            }
            line.push(c);
            used += c.len_utf16();
        }
    }
    lines.push(line);
    lines
}

#[cfg(test)]
mod tests;
