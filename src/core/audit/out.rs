//! What the checks share: the budgets they hold tools to, the findings of one entry as they
//! are made ([`Out`]: each finding takes its rule's severity from the table), and the text
//! rules run on every description (hidden Unicode, prompt injection, directives).

use super::table::find;
use super::words::{self, normalize};
use super::{Finding, Severity};
use crate::core::text::is_invisible;

/// The budgets the rules hold tools to (see docs/audit.md for their sources).
pub mod budget {
    /// A tool or property name, in characters.
    pub const NAME_CHARS: usize = 30;
    /// A tool's description, in characters.
    pub const DESCRIPTION_CHARS: usize = 500;
    /// A property's description, in characters.
    pub const PROPERTY_DESCRIPTION_CHARS: usize = 150;
    /// The fewest characters a description must have to choose a tool by.
    pub const DESCRIPTION_MIN_CHARS: usize = 15;
    /// The fewest words a description must have to choose a tool by.
    pub const DESCRIPTION_MIN_WORDS: usize = 3;
}

/// The findings of one entry as they are made.
pub(super) struct Out<'a> {
    /// The tool, as findings name it.
    pub tool: &'a str,
    /// The findings so far.
    pub findings: Vec<Finding>,
}

impl Out<'_> {
    /// Adds a finding of rule `id` at `pointer`.
    pub fn add(&mut self, id: &'static str, pointer: Option<&str>, message: String) {
        let severity = find(id).map_or(Severity::Error, |r| r.severity);
        self.findings.push(Finding {
            rule: id,
            severity,
            tool: self.tool.to_owned(),
            pointer: pointer.map(str::to_owned),
            message,
        });
    }
}

/// The text rules on one text: hidden Unicode, injection, directives. Also used on the
/// schema's descriptions.
pub fn check_text(text: &str, pointer: &str, out: &mut Out) {
    let hidden: Vec<String> = text
        .chars()
        .filter(|c| is_invisible(*c))
        .map(|c| format!("U+{:04X}", u32::from(c)))
        .collect();
    if !hidden.is_empty() {
        let mut shown = hidden.clone();
        shown.dedup();
        shown.truncate(5);
        out.add(
            "description-hidden-unicode",
            Some(pointer),
            format!(
                "the text has {} invisible or direction-changing character(s) ({}): what an \
                 agent reads is not what a person reviewing the page sees; remove them",
                hidden.len(),
                shown.join(", ")
            ),
        );
    }
    let visible: String = text.chars().filter(|c| !is_invisible(*c)).collect();
    let normalized = normalize(&visible);
    if let Some(phrase) = words::first_phrase(&normalized, words::INJECTION_PHRASES) {
        out.add(
            "description-injection",
            Some(pointer),
            format!(
                "the text says \"{phrase}\": it addresses the agent's instructions, as a prompt \
                 injection does; describe only what the tool does"
            ),
        );
    } else if let Some(phrase) = words::first_phrase(&normalized, words::DIRECTIVE_PHRASES) {
        out.add(
            "description-instructs",
            Some(pointer),
            format!(
                "the text says \"{phrase}\": it tells the agent what to do instead of saying \
                 what the tool does and when it helps; rewrite it as a plain description"
            ),
        );
    }
}
