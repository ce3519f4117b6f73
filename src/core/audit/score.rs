//! The score of a tool and of a page, 0 to 100.
//!
//! A tool starts at 100 and loses, for each rule it breaks (once per rule, however many
//! properties break it), [`ERROR_COST`] for an error, [`WARNING_COST`] for a warning and
//! [`NOTE_COST`] for a note, down to 0. A page scores the mean of the mean and the lowest of its
//! tools' scores, rounded: one bad tool weighs on the page as much as the others together, since
//! an agent that picks it fails whatever the others are. A page without tools scores 0: it
//! offers an agent nothing.
//!
//! What was not checked costs nothing: a probe skipped (`probe-skipped`, `probe-no-example`)
//! says the tool was not called, not that it is worse, so asking for probes never lowers a
//! score by itself.
//!
//! Invariant: a tool without errors or warnings and with at most five notes scores at least 90,
//! and so does a page of such tools.

use std::collections::BTreeSet;

use super::{Entry, Finding, Severity, ToolScore};

/// What a broken error-level rule costs a tool.
pub const ERROR_COST: u32 = 25;
/// What a broken warning-level rule costs a tool.
pub const WARNING_COST: u32 = 8;
/// What a broken note-level rule costs a tool.
pub const NOTE_COST: u32 = 2;

/// The cost of breaking a rule of `severity`.
pub fn cost(severity: Severity) -> u32 {
    match severity {
        Severity::Error => ERROR_COST,
        Severity::Warning => WARNING_COST,
        Severity::Note => NOTE_COST,
    }
}

/// Findings that say a check was not made, and so cost nothing.
pub const UNCHECKED: [&str; 2] = ["probe-skipped", "probe-no-example"];

/// A tool's score from its findings.
pub fn tool(entry: &Entry, findings: &[Finding]) -> ToolScore {
    let rules: BTreeSet<(&str, Severity)> = findings
        .iter()
        .filter(|f| !UNCHECKED.contains(&f.rule))
        .map(|f| (f.rule, f.severity))
        .collect();
    let lost: u32 = rules.iter().map(|(_, severity)| cost(*severity)).sum();
    let count = |s: Severity| findings.iter().filter(|f| f.severity == s).count();
    ToolScore {
        name: entry.label.clone(),
        frame_id: entry.frame_id,
        score: 100u32.saturating_sub(lost) as u8,
        errors: count(Severity::Error),
        warnings: count(Severity::Warning),
        notes: count(Severity::Note),
    }
}

/// A page's score from its tools' scores: round((mean + lowest) / 2); 0 without tools.
pub fn page(tools: &[ToolScore]) -> u8 {
    let Some(lowest) = tools.iter().map(|t| u32::from(t.score)).min() else {
        return 0;
    };
    let n = tools.len() as u32;
    let sum: u32 = tools.iter().map(|t| u32::from(t.score)).sum();
    // (sum / n + lowest) / 2, rounded half up, in integers: (sum + lowest·n + n) / (2n).
    ((sum + lowest * n + n) / (2 * n)) as u8
}
