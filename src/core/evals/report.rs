//! An evaluation's answer and its reports: the counts and the per-model table ([`summary`]),
//! and the answer written as JSON, JUnit XML or one self-contained HTML page
//! ([`Format::render`]; per case its prompt, expected and actual calls, the reason and, for an
//! agent run, the run's timeline: steps with their text and tokens, calls, errors, the answer).
//!
//! Invariants: pure; every text from a page, a model or an eval file is escaped (XML and HTML
//! alike), so a tool's name or result can never add markup; characters XML cannot carry are
//! replaced by U+FFFD.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Value};

use super::messages::Mode;

/// How a report is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The answer as JSON.
    Json,
    /// JUnit XML, for CI systems.
    Junit,
    /// One self-contained HTML page.
    Html,
    /// A Markdown summary, for a CI job summary or a pull-request comment ([`super::ci`]).
    Markdown,
    /// A SARIF 2.1.0 log: the cases that did not pass as results ([`super::ci`]).
    Sarif,
}

impl Format {
    /// `json`, `junit`, `html`, `markdown` or `sarif`.
    pub fn parse(name: &str) -> Result<Format, String> {
        match name {
            "json" => Ok(Format::Json),
            "junit" => Ok(Format::Junit),
            "html" => Ok(Format::Html),
            "markdown" => Ok(Format::Markdown),
            "sarif" => Ok(Format::Sarif),
            other => Err(format!(
                "unknown report format {:?}; known: json, junit, html, markdown, sarif",
                other.chars().take(32).collect::<String>()
            )),
        }
    }

    /// The report of an evaluation's answer (as [`summary`] writes it).
    pub fn render(self, answer: &Value) -> String {
        self.render_for(answer, None)
    }

    /// [`Format::render`], a SARIF log locating its results in the eval file `file`.
    pub fn render_for(self, answer: &Value, file: Option<&str>) -> String {
        let pretty = |v: &Value| serde_json::to_string_pretty(v).expect("JSON values serialize");
        match self {
            Format::Json => pretty(answer),
            Format::Junit => junit(answer),
            Format::Html => html(answer),
            Format::Markdown => super::ci::markdown(answer),
            Format::Sarif => pretty(&super::ci::sarif(answer, file)),
        }
    }
}

/// A count as a report writes it: a whole number, whatever the answer file held (0 if none).
fn number(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// `evalReport({report, format})`: an evaluation's answer written in `format`. Its counts
/// must be whole numbers (an answer file is untrusted text): anything else is refused.
pub fn eval_report(request: &Value) -> Result<Value, String> {
    let report = request
        .get("report")
        .filter(|r| r.get("results").is_some_and(Value::is_array))
        .ok_or("evalReport: `report` is required: an answer of `evaluate`")?;
    for count in ["testCount", "passCount", "failCount", "errorCount"] {
        if report.get(count).is_some_and(|v| v.as_u64().is_none()) {
            return Err(format!(
                "evalReport: `report.{count}` must be a whole number, not {}",
                crate::core::naming::kind(&report[count])
            ));
        }
    }
    let models = report.get("models").and_then(Value::as_object);
    if let Some((name, _)) = (models.into_iter().flatten())
        .find(|(_, m)| m.get("runs").is_some_and(|v| v.as_u64().is_none()))
    {
        return Err(format!(
            "evalReport: `report.models[{}].runs` must be a whole number",
            serde_json::to_string(name).unwrap_or_default()
        ));
    }
    let format = match request.get("format").and_then(Value::as_str) {
        Some(name) => Format::parse(name).map_err(|e| format!("evalReport: {e}"))?,
        None => return Err(
            "evalReport: `format` must be \"json\", \"junit\", \"html\", \"markdown\" or \"sarif\""
                .into(),
        ),
    };
    let file = match request.get("file") {
        None | Some(Value::Null) => None,
        Some(Value::String(file)) if !file.is_empty() => Some(file.as_str()),
        Some(_) => return Err("evalReport: `file` must be the eval file's path or URL".into()),
    };
    Ok(json!(format.render_for(report, file)))
}

/// The answer of an evaluation: its results, the counts, and per model the pass rate, the
/// latency (median and 95th percentile, nearest rank) and the tokens (`null` when any run's
/// were not reported).
pub fn summary(mode: Mode, results: Vec<Value>) -> Value {
    let count = |o: &str| results.iter().filter(|r| r["outcome"] == o).count();
    let (pass, fail, error) = (count("pass"), count("fail"), count("error"));
    let mut models: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for result in &results {
        if let Some(model) = result.get("model").and_then(Value::as_str) {
            models.entry(model.to_owned()).or_default().push(result);
        }
    }
    let cases = super::ci::reliability(&results);
    let models: serde_json::Map<String, Value> = models
        .into_iter()
        .map(|(name, runs)| {
            let passed = runs.iter().filter(|r| r["outcome"] == "pass").count();
            let mut latency: Vec<f64> = runs.iter().filter_map(|r| r["latencyMs"].as_f64()).collect();
            latency.sort_by(f64::total_cmp);
            let tokens: Option<u64> = runs.iter().map(|r| r["tokens"].as_u64()).sum();
            let (k, all, any) = super::ci::model_reliability(&cases, &name);
            let (usage, cost) = super::ci::model_usage(&runs, &name);
            (
                name,
                json!({
                    "passRate": passed as f64 / runs.len() as f64,
                    "runs": runs.len(),
                    "k": k,
                    "pass^k": all,
                    "pass@k": any,
                    "latencyMs": {"median": percentile(&latency, 50.0), "p95": percentile(&latency, 95.0)},
                    "tokens": tokens,
                    "usage": usage,
                    "costUsd": cost,
                }),
            )
        })
        .collect();
    json!({
        "mode": match mode { Mode::Smoke => "smoke", Mode::Agent => "agent", Mode::Simulate => "simulate" },
        "results": results,
        "testCount": results.len(),
        "passCount": pass,
        "failCount": fail,
        "errorCount": error,
        "models": models,
        "cases": cases,
    })
}

/// The nearest-rank percentile of sorted values (`null` for none).
pub fn percentile(sorted: &[f64], p: f64) -> Value {
    if sorted.is_empty() {
        return Value::Null;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    json!(sorted[rank.min(sorted.len()) - 1])
}

pub use super::html::escape;

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn title(result: &Value) -> String {
    let name = text(&result["name"]);
    match result.get("model").and_then(Value::as_str) {
        Some(model) => format!(
            "{name} [{model} #{}]",
            result["runIndex"].as_u64().unwrap_or(0) + 1
        ),
        None => name,
    }
}

fn junit(answer: &Value) -> String {
    let results = answer["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut suites: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for result in results {
        let suite = match result.get("model").and_then(Value::as_str) {
            Some(model) => format!("agent: {model}"),
            None => text(&answer["mode"]).if_empty("smoke"),
        };
        suites.entry(suite).or_default().push(result);
    }
    let count = |rs: &[&Value], o: &str| rs.iter().filter(|r| r["outcome"] == o).count();
    let seconds = |r: &Value| r["latencyMs"].as_f64().unwrap_or(0.0) / 1000.0;
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"webmcp-evals\" tests=\"{}\" failures=\"{}\" errors=\"{}\">",
        results.len(),
        answer["failCount"].as_u64().unwrap_or(0),
        answer["errorCount"].as_u64().unwrap_or(0)
    );
    for (name, rs) in &suites {
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"0\" time=\"{:.3}\">",
            escape(name),
            rs.len(),
            count(rs, "fail"),
            count(rs, "error"),
            rs.iter().map(|r| seconds(r)).sum::<f64>()
        );
        for r in rs {
            let _ = writeln!(
                out,
                "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
                escape(&format!("webmcp-evals.{name}")),
                escape(&title(r)),
                seconds(r)
            );
            let reason = escape(&text(&r["reason"]));
            match r["outcome"].as_str() {
                Some("fail") => {
                    let _ = writeln!(
                        out,
                        "      <failure message=\"{reason}\" type=\"fail\">{reason}</failure>"
                    );
                }
                Some("pass") => {}
                _ => {
                    let _ = writeln!(
                        out,
                        "      <error message=\"{reason}\" type=\"error\">{reason}</error>"
                    );
                }
            }
            let warning = r["warning"]
                .as_str()
                .map(|w| format!("{w}\n"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "      <system-out>{}</system-out>",
                escape(&format!("{warning}calls: {}", r["calls"]))
            );
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

trait IfEmpty {
    fn if_empty(self, other: &str) -> String;
}

impl IfEmpty for String {
    fn if_empty(self, other: &str) -> String {
        if self.is_empty() {
            other.to_owned()
        } else {
            self
        }
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1d2430;max-width:1100px}\
h1{font-size:20px}h2{font-size:16px;margin:0}table{border-collapse:collapse;margin:8px 0}\
td,th{border:1px solid #d0d5dd;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f2f4f7}section{border:1px solid #d0d5dd;border-radius:6px;padding:12px;margin:12px 0}\
.pass{color:#067647}.fail{color:#b42318}.error{color:#b54708}.badge{font-weight:600;text-transform:uppercase}\
pre{white-space:pre-wrap;word-break:break-word;background:#f8f9fb;padding:6px;margin:4px 0;font-size:12px}\
.cols{display:grid;grid-template-columns:1fr 1fr;gap:12px}.muted{color:#667085}.warning{color:#b54708}\
details.timeline{margin-top:8px}summary{cursor:pointer}ol.tl{list-style:none;padding-left:12px;margin:6px 0}\
ol.tl>li{margin:4px 0}.tl-call{border-left:3px solid #d0d5dd;padding-left:8px;margin:4px 0}\
.tl-answer{font-weight:600}";

fn html(answer: &Value) -> String {
    let results = answer["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut out = String::from("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    out.push_str("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">");
    let _ = write!(
        out,
        "<title>Eval report</title><style>{STYLE}</style></head><body>"
    );
    let _ = write!(
        out,
        "<h1>Eval report ({} mode)</h1><p><b>{}</b> results: <span class=\"pass\">{} passed</span>, \
         <span class=\"fail\">{} failed</span>, <span class=\"error\">{} errors</span></p>",
        escape(&text(&answer["mode"])),
        number(&answer["testCount"]),
        number(&answer["passCount"]),
        number(&answer["failCount"]),
        number(&answer["errorCount"])
    );
    if let Some(note) = super::simulate::report::judge_note(answer) {
        let class = if answer["judgeIsAgent"] == true {
            "warning"
        } else {
            "muted"
        };
        let _ = write!(out, "<p class=\"{class}\">{}</p>", escape(&note));
    }
    if let Some(models) = answer["models"].as_object().filter(|m| !m.is_empty()) {
        out.push_str("<h2>Models</h2><table><tr><th>Model</th><th>Runs</th><th>Pass rate</th><th>pass^k</th><th>pass@k</th><th>Latency median (ms)</th><th>Latency p95 (ms)</th><th>Tokens</th><th>Cost (USD)</th></tr>");
        for (name, m) in models {
            let share = |v: &Value| {
                v.as_f64()
                    .map_or("–".into(), |s| format!("{:.0}%", s * 100.0))
            };
            let cost = m["costUsd"]
                .as_f64()
                .map_or("unknown".into(), |c| format!("{c:.4}"));
            let _ = write!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{cost}</td></tr>",
                escape(name),
                number(&m["runs"]),
                share(&m["passRate"]),
                share(&m["pass^k"]),
                share(&m["pass@k"]),
                escape(&text(&m["latencyMs"]["median"])),
                escape(&text(&m["latencyMs"]["p95"])),
                if m["tokens"].is_null() { "unknown".into() } else { escape(&text(&m["tokens"])) }
            );
        }
        out.push_str("</table>");
    }
    for r in results {
        let outcome = r["outcome"].as_str().unwrap_or("error");
        let class = match outcome {
            "pass" | "fail" => outcome,
            _ => "error",
        };
        let _ = write!(
            out,
            "<section><h2><span class=\"badge {class}\">{}</span> {}</h2>",
            escape(outcome),
            escape(&title(r))
        );
        if let Some(reason) = r["reason"].as_str() {
            let _ = write!(out, "<p class=\"{class}\">{}</p>", escape(reason));
        }
        if let Some(warning) = r["warning"].as_str() {
            let _ = write!(out, "<p class=\"warning\">{}</p>", escape(warning));
        }
        if r.get("conversation").is_some_and(Value::is_object) {
            super::simulate::report::result_html(r, &mut out);
            out.push_str("</section>");
            continue;
        }
        let _ = write!(
            out,
            "<p><span class=\"muted\">Prompt:</span> {}</p>",
            escape(&text(&r["prompt"]))
        );
        if let Some(ms) = r["latencyMs"].as_f64() {
            let _ = write!(
                out,
                "<p class=\"muted\">{ms:.0} ms{}{}</p>",
                r["tokens"]
                    .as_u64()
                    .map(|t| format!(", {t} tokens"))
                    .unwrap_or_default(),
                r["runId"]
                    .as_str()
                    .map(|id| format!(", run {}", escape(id)))
                    .unwrap_or_default()
            );
        }
        let expected = match &r["expected"] {
            Value::Null => "no call".to_owned(),
            e => serde_json::to_string_pretty(e).unwrap_or_default(),
        };
        let _ = write!(
            out,
            "<div class=\"cols\"><div><b>Expected calls</b><pre>{}</pre></div><div><b>Actual calls</b>",
            escape(&expected)
        );
        let calls = r["calls"].as_array().map(Vec::as_slice).unwrap_or_default();
        if calls.is_empty() {
            out.push_str("<p class=\"muted\">none</p>");
        } else {
            out.push_str(
                "<table><tr><th>#</th><th>Tool</th><th>Arguments</th><th>Result</th></tr>",
            );
            for (i, c) in calls.iter().enumerate() {
                let result = match (c.get("result"), c.get("error")) {
                    (_, Some(e)) if c["made"] == false => format!("not made: {}", text(e)),
                    (_, Some(e)) => format!("error: {}", text(e)),
                    (Some(res), _) => text(res),
                    _ => "(no result)".into(),
                };
                let allowed = c["confirmation"].as_str().map_or(String::new(), |a| {
                    format!("<br><span class=\"muted\">{}</span>", escape(a))
                });
                let _ = write!(
                    out,
                    "<tr><td>{}</td><td>{}{allowed}</td><td><pre>{}</pre></td><td><pre>{}</pre></td></tr>",
                    i + 1,
                    escape(&text(&c["name"])),
                    escape(&c["args"].to_string()),
                    escape(&result)
                );
            }
            out.push_str("</table>");
        }
        out.push_str("</div></div>");
        if let Some(timeline) = r.get("timeline").filter(|t| t.is_object()) {
            timeline_html(timeline, &mut out);
        } else if let Some(error) = r["timelineError"].as_str() {
            let _ = write!(
                out,
                "<p class=\"muted\">Timeline: not available ({})</p>",
                escape(error)
            );
        }
        out.push_str("</section>");
    }
    out.push_str("</body></html>\n");
    out
}

fn ms(value: &Value) -> Option<String> {
    value.as_f64().map(|ms| format!("{ms:.0} ms"))
}

/// A step's tokens as `core::timeline::Tokens` writes them: counts and cost, or `tokens unknown`.
fn tokens_text(tokens: &Value) -> String {
    if tokens["usage"] != "reported" {
        return "tokens unknown".into();
    }
    let mut out = format!("{} in", text(&tokens["inputTokens"]));
    if let Some(cached) = tokens["cachedInputTokens"].as_u64() {
        let _ = write!(out, " ({cached} cached)");
    }
    let _ = write!(out, " · {} out", text(&tokens["outputTokens"]));
    if let Some(cost) = tokens["cost"].as_f64() {
        let _ = write!(out, " · ${cost:.6}");
    }
    out
}

/// A run's timeline (as `core::timeline::Timeline` serializes) as HTML, every text escaped.
fn timeline_html(t: &Value, out: &mut String) {
    let entries = t["entries"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let steps = entries.iter().filter(|e| e["kind"] == "step").count();
    let plural = if steps == 1 { "" } else { "s" };
    let mut meta = vec![text(&t["state"]), format!("{steps} step{plural}")];
    meta.extend(ms(&t["durationMs"]));
    let _ = write!(
        out,
        "<details class=\"timeline\" open><summary><b>Timeline</b> <span class=\"muted\">{}</span></summary><ol class=\"tl\">",
        escape(&meta.join(" · "))
    );
    if let Some(prompt) = t["prompt"].as_str() {
        let _ = write!(
            out,
            "<li class=\"tl-prompt\"><span class=\"muted\">Prompt:</span> {}</li>",
            escape(prompt)
        );
    }
    let mut step = 0;
    for entry in entries {
        match entry["kind"].as_str() {
            Some("step") => {
                step += 1;
                let mut meta: Vec<String> = ms(&entry["durationMs"]).into_iter().collect();
                meta.push(tokens_text(&entry["tokens"]));
                let _ = write!(
                    out,
                    "<li class=\"tl-step\"><b>Step {step}</b> <span class=\"muted\">{}</span>",
                    escape(&meta.join(" · "))
                );
                if let Some(said) = entry["text"].as_str().filter(|s| !s.is_empty()) {
                    let _ = write!(out, "<p>{}</p>", escape(said));
                }
                let calls = entry["calls"].as_array().map(Vec::as_slice);
                for call in calls.unwrap_or_default() {
                    call_html(call, out);
                }
                out.push_str("</li>");
            }
            Some("error") => {
                let code = entry["code"].as_str().map(|c| format!(" ({c})"));
                let _ = write!(
                    out,
                    "<li class=\"tl-error error\">Run error{}: {}</li>",
                    escape(&code.unwrap_or_default()),
                    escape(&text(&entry["message"]))
                );
            }
            _ => {
                let _ = write!(
                    out,
                    "<li class=\"tl-note muted\">{}: {}</li>",
                    escape(&text(&entry["name"])),
                    escape(&short(&entry["value"]))
                );
            }
        }
    }
    if let Some(answer) = t["answer"].as_str() {
        let _ = write!(
            out,
            "<li class=\"tl-answer\"><span class=\"muted\">Answer:</span> {}</li>",
            escape(answer)
        );
    }
    out.push_str("</ol></details>");
}

fn call_html(call: &Value, out: &mut String) {
    let mut meta = Vec::new();
    if let Some(written) = call["writtenName"].as_str() {
        meta.push(format!("written {written}"));
    }
    meta.extend(ms(&call["durationMs"]));
    let args = match &call["args"] {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let _ = write!(
        out,
        "<div class=\"tl-call\">Call <b>{}</b> <span class=\"muted\">{}</span><pre>{}</pre>",
        escape(&text(&call["name"])),
        escape(&meta.join(" · ")),
        escape(&args)
    );
    for repair in call["repairs"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
    {
        let _ = write!(
            out,
            "<p class=\"muted\">repaired: {}</p>",
            escape(&text(repair))
        );
    }
    if let Some(answer) = call["confirmation"].as_str() {
        let _ = write!(out, "<p>Confirmation: {}</p>", escape(answer));
    }
    if let Some(why) = call["rejected"].as_str() {
        let _ = write!(out, "<p class=\"fail\">Not run: {}</p>", escape(why));
    } else if let Some(error) = call["error"].as_str() {
        let _ = write!(out, "<p class=\"fail\">Error: {}</p>", escape(error));
    } else if let Some(result) = call["result"].as_str() {
        let _ = write!(out, "<pre>{}</pre>", escape(result));
    }
    out.push_str("</div>");
}

/// A value as short JSON text (at most 200 characters).
fn short(value: &Value) -> String {
    super::messages::short(value)
}
