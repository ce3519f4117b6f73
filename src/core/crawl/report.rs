//! The crawl's answer as one self-contained HTML page: the totals, the diff, and per page its
//! tools, forms, score and findings. Every text a page wrote is escaped; no script is allowed.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::text;
use crate::core::evals::report::escape;

/// The answer as one self-contained HTML page: the totals, the diff, and per page its tools,
/// forms, score and findings (every text escaped; no script allowed).
pub(super) fn html(answer: &Value) -> String {
    let mut out = String::from("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">");
    out.push_str("<title>Crawl report</title><style>body{font:14px system-ui,sans-serif;margin:16px;max-width:960px}\
table{border-collapse:collapse}td,th{border:1px solid #d0d5dd;padding:2px 6px;text-align:left}\
.err{color:#b42318}.add{color:#067647}.rm{color:#b42318}.muted{color:#667085}</style></head><body>");
    let t = &answer["totals"];
    let _ = write!(
        out,
        "<h1>Crawl of {}</h1><p>{} pages ({} failed), {} tools, {} declarative forms, {} findings</p>",
        escape(&text(&answer["origin"])),
        t["pages"],
        t["failed"],
        t["tools"],
        t["forms"],
        t["findings"]
    );
    match answer["diff"].as_object() {
        None => {
            out.push_str("<p class=\"muted\">The origin's first crawl: nothing to compare.</p>")
        }
        Some(diff) => {
            out.push_str("<h2>Since the previous crawl</h2><ul>");
            let list = |v: &Value| -> String {
                let items: Vec<String> = (v.as_array().into_iter().flatten())
                    .map(|n| escape(n.as_str().unwrap_or_default()))
                    .collect();
                items.join(", ")
            };
            for page in diff["pages"].as_array().into_iter().flatten() {
                let _ = write!(
                    out,
                    "<li>{}: <span class=\"add\">added {}</span>; <span class=\"rm\">removed {}</span>; redefined {}</li>",
                    escape(&text(&page["url"])),
                    list(&page["added"]),
                    list(&page["removed"]),
                    list(&page["redefined"])
                );
            }
            let _ = write!(
                out,
                "<li>New pages: {}</li><li>Not reached this time: {}</li></ul>",
                list(&diff["newPages"]),
                list(&diff["missingPages"])
            );
        }
    }
    out.push_str("<h2>Pages</h2><table><tr><th>Page</th><th>Tools</th><th>Forms</th><th>Score</th><th>Findings</th></tr>");
    for page in answer["pages"].as_array().into_iter().flatten() {
        if let Some(error) = page["error"].as_str() {
            let _ = write!(
                out,
                "<tr><td>{}</td><td colspan=\"4\" class=\"err\">{}</td></tr>",
                escape(&text(&page["url"])),
                escape(error)
            );
            continue;
        }
        let names = |key: &str, field: Option<&str>| -> String {
            let items: Vec<String> = (page[key].as_array().into_iter().flatten())
                .map(|v| escape(&text(field.map_or(v, |f| &v[f]))))
                .collect();
            items.join(", ")
        };
        let findings: Vec<String> = (page["findings"].as_array().into_iter().flatten())
            .map(|f| {
                format!(
                    "{} {} ({}): {}",
                    escape(&text(&f["severity"])),
                    escape(&text(&f["rule"])),
                    escape(&text(&f["tool"])),
                    escape(&text(&f["message"]))
                )
            })
            .collect();
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(&text(&page["url"])),
            names("tools", Some("name")),
            names("forms", None),
            page["score"],
            findings.join("<br>")
        );
    }
    out.push_str("</table>");
    let mut by_why: BTreeMap<String, usize> = BTreeMap::new();
    for s in answer["skipped"].as_array().into_iter().flatten() {
        *by_why.entry(text(&s["why"])).or_default() += 1;
    }
    for (why, n) in by_why {
        let _ = write!(out, "<p class=\"muted\">Skipped {n}: {}</p>", escape(&why));
    }
    for note in ["keptNote", "keptError"] {
        if let Some(note) = answer[note].as_str() {
            let _ = write!(out, "<p class=\"muted\">{}</p>", escape(note));
        }
    }
    out.push_str("</body></html>\n");
    out
}
