//! The audit's rules as data, the static ones ([`RULES`]) and the probes' ([`PROBE_RULES`]):
//! each rule's stable id, its one severity and what it checks, in the order the docs list them. The checks that make findings are in `rules`, `schema` and
//! `probe`.

use super::Severity;

/// One rule of the audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The stable id findings carry.
    pub id: &'static str,
    /// How bad breaking it is.
    pub severity: Severity,
    /// What it checks, in one line.
    pub summary: &'static str,
}

const fn rule(id: &'static str, severity: Severity, summary: &'static str) -> Rule {
    Rule {
        id,
        severity,
        summary,
    }
}

use Severity::{Error, Note, Warning};

/// Every rule, in the order the docs list them.
pub const RULES: &[Rule] = &[
    rule("name-missing", Error, "The tool has a name, a string."),
    rule(
        "name-charset",
        Error,
        "The name is made of A-Z, a-z, 0-9, '_' and '-' only.",
    ),
    rule(
        "name-too-long",
        Error,
        "The name is within the host's cap (128 bytes).",
    ),
    rule("name-length", Warning, "The name is at most 30 characters."),
    rule(
        "name-verb",
        Warning,
        "The name starts with a clear, specific verb.",
    ),
    rule(
        "name-duplicate",
        Error,
        "No two tools of one frame and source share a name.",
    ),
    rule(
        "name-duplicate-across",
        Warning,
        "No two frames or sources offer the same name.",
    ),
    rule("description-missing", Error, "The tool has a description."),
    rule(
        "description-short",
        Warning,
        "The description is long enough to choose the tool by.",
    ),
    rule(
        "description-long",
        Warning,
        "The description is at most 500 characters.",
    ),
    rule(
        "description-too-long",
        Error,
        "The description is within the host's cap (16 KiB).",
    ),
    rule(
        "description-injection",
        Error,
        "The text does not try to override the agent.",
    ),
    rule(
        "description-instructs",
        Warning,
        "The text says what the tool does, not what the agent must do.",
    ),
    rule(
        "description-cross-tool",
        Warning,
        "The description does not name other tools of the page.",
    ),
    rule(
        "description-hidden-unicode",
        Error,
        "The text has no invisible or direction-changing characters.",
    ),
    rule(
        "schema-invalid",
        Error,
        "The input schema is valid JSON Schema.",
    ),
    rule(
        "schema-too-large",
        Error,
        "The input schema is within the host's caps (64 KiB, 32 deep).",
    ),
    rule(
        "schema-root-not-object",
        Error,
        "The input schema's root is an object schema.",
    ),
    rule(
        "schema-root-type-missing",
        Warning,
        "The input schema's root says \"type\": \"object\".",
    ),
    rule(
        "schema-required-absent",
        Error,
        "Every name in \"required\" is a declared property.",
    ),
    rule(
        "property-description-missing",
        Warning,
        "Every property has a description.",
    ),
    rule(
        "property-description-long",
        Note,
        "A property's description is at most 150 characters.",
    ),
    rule(
        "property-name-length",
        Note,
        "A property's name is at most 30 characters.",
    ),
    rule(
        "property-unconstrained",
        Warning,
        "A URL, path, command, SQL, HTML or email string is constrained.",
    ),
    rule(
        "schema-additional-properties",
        Note,
        "The input schema says whether other properties are allowed.",
    ),
    rule(
        "schema-as-text",
        Warning,
        "The input schema is given as an object, not as JSON text.",
    ),
    rule(
        "schema-outside-subset",
        Note,
        "The input schema keeps to the keywords browsers are converging on validating.",
    ),
    rule(
        "annotations-invalid",
        Error,
        "The annotations are an object.",
    ),
    rule("hint-not-boolean", Warning, "Every hint is true or false."),
    rule(
        "hint-conflict",
        Error,
        "A tool is not both read-only and consequential.",
    ),
    rule(
        "hint-write-read-only",
        Error,
        "A tool whose name writes or acts is not read-only.",
    ),
    rule(
        "hint-consequential-missing",
        Warning,
        "A tool whose name acts (delete, send, pay, book, ...) is consequential.",
    ),
    rule(
        "hint-read-missing",
        Warning,
        "A tool whose name reads (get, list, search, ...) is read-only.",
    ),
    rule(
        "form-description-missing",
        Error,
        "A declarative form with toolname has a tooldescription.",
    ),
    rule(
        "form-autosubmit-consequential",
        Error,
        "A consequential declarative form does not auto-submit.",
    ),
    rule(
        "host-skipped",
        Error,
        "The host could read the tool (listTools reported no problem).",
    ),
];

/// The probes' rules (their findings join the static ones; `docs/audit.md` lists them).
pub const PROBE_RULES: &[Rule] = &[
    Rule {
        id: "probe-skipped",
        severity: Note,
        summary:
            "Every tool is probed (tools that are not read-only only when the person allows it).",
    },
    Rule {
        id: "probe-no-example",
        severity: Note,
        summary: "The host can build a call its schema accepts.",
    },
    Rule {
        id: "probe-throws",
        severity: Error,
        summary: "A call with valid arguments answers a result, not an error.",
    },
    Rule {
        id: "probe-hangs",
        severity: Error,
        summary: "A call answers within 5 s.",
    },
    Rule {
        id: "probe-navigates",
        severity: Warning,
        summary: "A call does not navigate the page away (an error for a read-only tool).",
    },
    Rule {
        id: "probe-accepts-invalid",
        severity: Warning,
        summary: "A call with arguments its schema refuses is refused.",
    },
    Rule {
        id: "probe-oversized",
        severity: Warning,
        summary: "A result is at most 100,000 bytes.",
    },
    Rule {
        id: "probe-empty",
        severity: Note,
        summary: "A call with valid arguments answers something.",
    },
    Rule {
        id: "probe-text-input",
        severity: Note,
        summary: "A call takes its arguments as an object (WebMCP's input since Chrome 155).",
    },
];

/// Every rule, static then probes, in the order the docs list them.
pub fn all() -> impl Iterator<Item = &'static Rule> {
    RULES.iter().chain(PROBE_RULES)
}

/// The rule with id `id` (every id a check uses is in [`RULES`] or [`PROBE_RULES`]).
pub fn find(id: &str) -> Option<&'static Rule> {
    all().find(|r| r.id == id)
}
