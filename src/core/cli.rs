//! The pure part of the native CLI's commands: their arguments read and their output written
//! as values, so the binary only reads files and prints ([`Answer`]).
//!
//! - [`audit`]: `webmcp-host audit TOOLS.json [--format json|sarif]`.
//! - [`eval_report`]: `webmcp-host eval-report ANSWER.json [--format junit|html|json]`.
//! - [`chunks`]: `parse --chunk N`'s pieces of the input.

use crate::core::audit::{audit_text, Format, Severity};

/// What a command prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// For stdout.
    pub stdout: String,
    /// For stderr.
    pub stderr: String,
    /// The exit status: 0 success, 1 the input has problems, 2 a usage error.
    pub code: u8,
}

impl Answer {
    fn usage(message: &str) -> Answer {
        Answer {
            stdout: String::new(),
            stderr: format!(
                "webmcp-host: {message}\nusage: webmcp-host audit TOOLS.json [--format json|sarif]\n"
            ),
            code: 2,
        }
    }
}

/// `audit TOOLS.json [--format json|sarif]`: the audit of the file's tools (docs/audit.md) as
/// JSON (default) or a SARIF 2.1.0 log; exits 1 when a finding is an error, 2 on a usage error
/// or a file that cannot be read or is not a tools file. `read` reads a file's text.
pub fn audit<'a, E: std::fmt::Display>(
    args: &[&'a str],
    read: impl FnOnce(&'a str) -> Result<String, E>,
) -> Answer {
    let mut file = None;
    let mut format = Format::Json;
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        let name = match *arg {
            "--format" => match rest.next() {
                Some(name) => *name,
                None => return Answer::usage("--format needs json or sarif"),
            },
            other => match other.strip_prefix("--format=") {
                Some(name) => name,
                None if other.starts_with('-') && other.len() > 1 => {
                    return Answer::usage(&format!("unknown option `{other}`"))
                }
                None if file.is_some() => {
                    return Answer::usage(&format!("one tools file at a time, not also `{other}`"))
                }
                None => {
                    file = Some(other);
                    continue;
                }
            },
        };
        format = match Format::parse(name) {
            Ok(format) => format,
            Err(message) => return Answer::usage(&message),
        };
    }
    let Some(file) = file else {
        return Answer::usage("audit needs a tools file");
    };
    let text = match read(file) {
        Ok(text) => text,
        Err(e) => return Answer::usage(&format!("cannot read {file}: {e}")),
    };
    let audit = match audit_text(&text) {
        Ok(audit) => audit,
        Err(e) => return Answer::usage(&format!("{file}: {e}")),
    };
    let value = audit.render(format, Some(file));
    let stdout = serde_json::to_string_pretty(&value).unwrap_or_else(|e| e.to_string()) + "\n";
    let errors = audit
        .findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    Answer {
        stdout,
        stderr: match errors {
            0 => String::new(),
            n => format!(
                "webmcp-host: {file}: {n} error-level finding(s); score {}\n",
                audit.score
            ),
        },
        code: u8::from(errors > 0),
    }
}

/// `eval-report ANSWER.json [--format junit|html|json]`: an answer of `evaluate` (saved as
/// JSON) written as JUnit XML (default), one HTML page or JSON; exits 1 when a result failed or
/// errored, 2 on a usage error or a file that is not such an answer.
pub fn eval_report<'a, E: std::fmt::Display>(
    args: &[&'a str],
    read: impl FnOnce(&'a str) -> Result<String, E>,
) -> Answer {
    let usage = |message: &str| {
        Answer {
        stdout: String::new(),
        stderr: format!("webmcp-host: {message}\nusage: webmcp-host eval-report ANSWER.json [--format junit|html|json|markdown|sarif] [--evals FILE]\n"),
        code: 2,
    }
    };
    let (mut file, mut format, mut evals) = (None, "junit", None);
    let mut rest = args.iter();
    while let Some(arg) = rest.next() {
        match (*arg, arg.strip_prefix("--format=")) {
            ("--format", _) => match rest.next() {
                Some(name) => format = name,
                None => return usage("--format needs junit, html, json, markdown or sarif"),
            },
            (_, Some(name)) => format = name,
            // The eval file the answer came from: where a SARIF log locates its results.
            ("--evals", _) => match rest.next() {
                Some(path) => evals = Some(*path),
                None => return usage("--evals needs the eval file's path"),
            },
            (other, _) if other.starts_with('-') => {
                return usage(&format!("unknown option `{other}`"))
            }
            (other, _) if file.is_none() => file = Some(other),
            (other, _) => return usage(&format!("one answer file at a time, not also `{other}`")),
        }
    }
    let Some(file) = file else {
        return usage("eval-report needs an answer of `evaluate` (a JSON file)");
    };
    let text = match read(file) {
        Ok(text) => text,
        Err(e) => return usage(&format!("cannot read {file}: {e}")),
    };
    let report: serde_json::Value = match serde_json::from_str(&text) {
        Ok(report) => report,
        Err(e) => return usage(&format!("{file}: not JSON: {e}")),
    };
    let request = serde_json::json!({"report": report, "format": format, "file": evals});
    match crate::core::evals::report::eval_report(&request) {
        Ok(written) => {
            let bad = ["failCount", "errorCount"]
                .iter()
                .filter_map(|k| report[k].as_u64())
                .sum::<u64>();
            Answer {
                stdout: written.as_str().unwrap_or_default().to_owned(),
                stderr: match bad {
                    0 => String::new(),
                    n => format!("webmcp-host: {file}: {n} result(s) failed or errored\n"),
                },
                code: u8::from(bad > 0),
            }
        }
        Err(e) => usage(&format!("{file}: {e}")),
    }
}

/// Splits `text` into pieces of about `n` bytes, never inside a character.
pub fn chunks(text: &str, n: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + n.max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}
