//! The audit as a SARIF 2.1.0 log: one run whose driver is `webmcp-host audit` with every rule
//! of [`RULES`](super::rules::RULES) and the probes', one result per finding (its rule, level, message, and the tool as a logical
//! location whose fully qualified name is the tool and the finding's JSON pointer), and the
//! scores in the run's `properties`.
//!
//! Invariant: the log validates against the OASIS SARIF 2.1.0 JSON schema (tested with the
//! schema vendored under `tests/audit/`).

use serde_json::{json, Value};

use super::table::all;
use super::Audit;

/// The schema a SARIF 2.1.0 log names (OASIS, errata 01).
pub const SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// Where the rules are documented.
pub const RULES_DOC: &str = "docs/audit.md";

/// The SARIF 2.1.0 log of `audit`; `artifact` is the audited file's URI, when there is one.
pub fn log(audit: &Audit, artifact: Option<&str>) -> Value {
    let artifact = artifact.map(uri_reference);
    let artifact = artifact.as_deref();
    let rules: Vec<Value> = all()
        .map(|rule| {
            json!({
                "id": rule.id,
                "shortDescription": {"text": rule.summary},
                "help": {"text": format!("{RULES_DOC}, rule {}", rule.id)},
                "defaultConfiguration": {"level": rule.severity.as_str()},
            })
        })
        .collect();
    let results: Vec<Value> = audit
        .findings
        .iter()
        .map(|finding| {
            let index = all().position(|r| r.id == finding.rule);
            let qualified = match &finding.pointer {
                Some(pointer) => format!("{}{pointer}", finding.tool),
                None => finding.tool.clone(),
            };
            let mut location = json!({
                "logicalLocations": [{
                    "name": finding.tool, "fullyQualifiedName": qualified, "kind": "function"
                }]
            });
            if let Some(uri) = artifact {
                location["physicalLocation"] = json!({"artifactLocation": {"uri": uri}});
            }
            let mut result = json!({
                "ruleId": finding.rule,
                "level": finding.severity.as_str(),
                "message": {"text": finding.message},
                "locations": [location],
                "properties": {"tool": finding.tool},
            });
            if let Some(index) = index {
                result["ruleIndex"] = json!(index);
            }
            if let Some(pointer) = &finding.pointer {
                result["properties"]["pointer"] = json!(pointer);
            }
            result
        })
        .collect();
    let mut run = json!({
        "tool": {"driver": {
            "name": "webmcp-host audit",
            "version": crate::VERSION,
            "rules": rules,
        }},
        "results": results,
        "properties": {"score": audit.score, "tools": audit.tools},
    });
    if let Some(uri) = artifact {
        run["artifacts"] = json!([{"location": {"uri": uri}}]);
    }
    json!({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]})
}

/// A file path as a URI reference: every byte but unreserved ones, `/` and `:` percent-encoded
/// (a path with spaces stays a valid `uri-reference`).
pub fn uri_reference(path: &str) -> String {
    path.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}
