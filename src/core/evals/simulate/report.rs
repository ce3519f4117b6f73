//! A simulate result in the HTML report: the verdict and its evidence, the DOM assertions,
//! the setup (the harness's work), the conversation turn by turn; every text escaped.

use std::fmt::Write as _;

use serde_json::Value;

use crate::core::evals::html::escape;

/// A value as text: strings as they are, others as JSON.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// What the answer says of its judge, for the report's head: a warning when the judge is one
/// of the agent models (it grades itself).
pub fn judge_note(answer: &Value) -> Option<String> {
    let judge = answer["judgeModel"].as_str()?;
    Some(match answer["judgeIsAgent"] == true {
        true => format!("The judge, {judge}, is also an agent model of this evaluation: it grades its own runs."),
        false => format!("Judge: {judge}."),
    })
}

/// The body of one simulate result.
pub fn result_html(r: &Value, out: &mut String) {
    if let Some(v) = r.get("verdict").filter(|v| v.is_object()) {
        let _ = write!(
            out,
            "<p><b>Judge's reasoning</b> ({}): {}</p>",
            if v["passed"] == true {
                "passed"
            } else {
                "not passed"
            },
            escape(&text(&v["reasoning"]))
        );
        if let Some(overruled) = v["overruled"].as_str() {
            let _ = write!(
                out,
                "<p class=\"fail\">Overruled: {}</p>",
                escape(overruled)
            );
        }
        out.push_str("<b>Evidence the judge cited</b><ul>");
        for e in v["evidence"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let _ = write!(out, "<li>{}</li>", escape(&text(e)));
        }
        out.push_str("</ul>");
    }
    if let Some(criteria) = r["simulation"]["successCriteria"].as_str() {
        let _ = write!(
            out,
            "<p><span class=\"muted\">Success criteria, as written:</span> {}</p>",
            escape(criteria)
        );
    }
    let assertions = r["assertionResults"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !assertions.is_empty() {
        out.push_str("<b>DOM assertions (the final page)</b><table><tr><th>Selector</th><th>Check</th><th>Expected</th><th>Actual</th><th>Outcome</th></tr>");
        for a in assertions {
            let outcome = text(&a["outcome"]);
            let actual = match a.get("error") {
                Some(e) => format!("error: {}", text(e)),
                None => a.get("actual").map_or("–".into(), Value::to_string),
            };
            let _ = write!(
                out,
                "<tr><td><code>{}</code></td><td>{}</td><td><pre>{}</pre></td><td><pre>{}</pre></td><td class=\"{}\">{}</td></tr>",
                escape(&text(&a["assertion"]["selector"])),
                escape(&text(&a["kind"])),
                escape(&a["expected"].to_string()),
                escape(&actual),
                if outcome == "pass" { "pass" } else { "fail" },
                escape(&outcome)
            );
        }
        out.push_str("</table>");
    }
    let setup = r["setupCalls"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if !setup.is_empty() {
        out.push_str("<b>World before the conversation</b> <span class=\"muted\">(the harness's setup calls, not the agent's work)</span><ol>");
        for s in setup {
            let result = s
                .get("error")
                .or(s.get("result"))
                .map(text)
                .unwrap_or_default();
            let _ = write!(
                out,
                "<li><code>{}</code> <pre>{}</pre> → {}: <pre>{}</pre></li>",
                escape(&text(&s["functionName"])),
                escape(&s["arguments"].to_string()),
                escape(&text(&s["outcome"])),
                escape(&result)
            );
        }
        out.push_str("</ol>");
    }
    let c = &r["conversation"];
    let _ = write!(
        out,
        "<p class=\"muted\">{} turns, {} ms, ended by {}{}</p>",
        escape(&text(&c["turnsUsed"])),
        escape(&text(&c["durationMs"])),
        escape(&text(&c["endedBy"])),
        r["userModel"]
            .as_str()
            .map(|u| format!("; user model {}", escape(u)))
            .unwrap_or_default()
    );
    for t in c["turns"].as_array().map(Vec::as_slice).unwrap_or_default() {
        let _ = write!(
            out,
            "<details open><summary>Turn {}</summary><p><b>User:</b> {}</p>",
            escape(&text(&t["index"])),
            escape(&text(&t["userMessage"]))
        );
        let calls = t["toolCalls"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if !calls.is_empty() {
            out.push_str("<table><tr><th>Tool</th><th>Arguments</th><th>Result</th></tr>");
            for call in calls {
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td><pre>{}</pre></td><td><pre>{}</pre></td></tr>",
                    escape(&text(&call["functionName"])),
                    escape(&call["args"].to_string()),
                    escape(&call.get("result").map_or("(no result)".into(), text))
                );
            }
            out.push_str("</table>");
        }
        let _ = write!(
            out,
            "<p><b>Agent:</b> {}</p></details>",
            escape(&text(&t["agentText"]))
        );
    }
    if let Some(closing) = c["closingMessage"].as_str() {
        let _ = write!(
            out,
            "<p><b>User's parting line:</b> {}</p>",
            escape(closing)
        );
    }
}
