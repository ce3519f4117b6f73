//! `diagnose({tabId})`: why a tab shows no tools (or fewer than it should). The tab's top
//! frame reports facts (the bridge's `diagnose` request: whether `document.modelContext` is
//! there, a polyfill, the Permissions Policy, its frames, `document.domain`, the browser's
//! version); the worker adds what the listing gave and what the site policies left out; this
//! module turns them into findings, each saying what to do.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::limits::Limits;
use crate::core::url::http_origin;

/// An iframe of the top document, as the content script saw its element.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct FrameFact {
    /// Its `src` (resolved).
    pub src: String,
    /// Its `allow` attribute.
    pub allow: String,
}

/// What the top frame reports (untrusted: a page can shape it; only the person reads the
/// findings, and nothing is decided for a call from them).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct PageFacts {
    /// The frame's URL.
    pub url: String,
    /// `document.modelContext` is the browser's own (native WebMCP).
    pub native: bool,
    /// A polyfilled `document.modelContext` answers in the page's world.
    pub polyfill: bool,
    /// Which polyfill the page bridge recognised (`google-demo`, `mcp-b`, else unknown).
    pub polyfill_name: String,
    /// The page loads a WebMCP polyfill's script (`@mcp-b/...`), whether or not it installed.
    pub polyfill_script: bool,
    /// `document.featurePolicy.allowsFeature('tools')`, when the browser tells.
    pub tools_allowed: Option<bool>,
    /// `document.domain` differs from the host name (the page set it).
    pub document_domain: bool,
    /// The top document's iframes.
    pub frames: Vec<FrameFact>,
    /// `navigator.userAgent`.
    pub user_agent: String,
    /// `document.title` (the inventory's tab title: the worker may not read tab titles).
    pub title: String,
    /// The page's origin-trial tokens (`<meta http-equiv="origin-trial">`), as written.
    pub origin_trial_tokens: Vec<String>,
    /// `window.originAgentCluster`, when the browser tells.
    pub origin_agent_cluster: Option<bool>,
}

/// What the worker knows besides the page's facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Listing {
    /// Tools the frames listed, before the site policies.
    pub listed: usize,
    /// Tools left after the site policies.
    pub shown: usize,
    /// Entries skipped as malformed, with why.
    pub problems: Vec<String>,
    /// Frames that answered with an error instead of their tools, with why.
    pub frame_errors: Vec<String>,
    /// The worker's clock (ms since 1970), for the tokens' expiry; 0 when unknown.
    pub now_ms: f64,
}

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Keeps tools from showing.
    Problem,
    /// May keep some tools from showing, or changes how they behave.
    Warning,
    /// Good to know.
    Info,
}

/// One finding of a diagnosis.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    /// A stable id (`no-webmcp`, `policy-blocked`, …).
    pub id: &'static str,
    /// How much it matters.
    pub level: Level,
    /// What was found.
    pub message: String,
    /// What to do.
    pub fix: String,
}

/// The answer of `diagnose`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnosis {
    /// How many tools the tab shows.
    pub tools: usize,
    /// The browser's major version, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chrome_version: Option<u32>,
    /// Every finding, problems first.
    pub findings: Vec<Finding>,
}

/// The first Chrome version with the WebMCP origin trial.
pub const ORIGIN_TRIAL_FROM: u32 = 149;

/// Reads the top frame's reply to `diagnose` (size-checked; unknown fields ignored).
pub fn parse_facts(text: &str) -> Result<PageFacts, String> {
    let cap = Limits::DEFAULT.max_message_bytes;
    if text.len() > cap {
        return Err(format!(
            "the page's facts are {} bytes, over the cap of {cap} (max_message_bytes)",
            text.len()
        ));
    }
    let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    if value.get("ok") != Some(&Value::Bool(true)) {
        let message = value
            .pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("the page's content script gave no facts");
        return Err(message.chars().take(300).collect());
    }
    let mut facts: PageFacts =
        serde_json::from_value(value.get("facts").cloned().unwrap_or_default())
            .map_err(|e| format!("the page's facts are malformed: {e}"))?;
    facts.frames.truncate(100);
    facts.origin_trial_tokens.truncate(super::trial::MAX_TOKENS);
    Ok(facts)
}

/// The Chrome major version in a user agent (`Chrome/156.0…`).
pub fn chrome_version(user_agent: &str) -> Option<u32> {
    let at = user_agent.find("Chrome/")? + "Chrome/".len();
    user_agent[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

fn finding(id: &'static str, level: Level, message: String, fix: &str) -> Finding {
    Finding {
        id,
        level,
        message,
        fix: fix.to_owned(),
    }
}

/// The findings of a tab: `facts` from its top frame (or why there are none), `listing` from
/// the worker.
pub fn diagnose(facts: Result<&PageFacts, &str>, listing: &Listing) -> Diagnosis {
    let mut out = Vec::new();
    let version = facts.ok().and_then(|f| chrome_version(&f.user_agent));
    match facts {
        Err(why) => out.push(finding(
            "no-content-script",
            Level::Problem,
            format!("The host's content script did not answer in this tab's top frame: {why}"),
            "Reload the tab. Pages of the browser itself (chrome://, the Web Store) and pages opened before the extension was installed or reloaded have no content script.",
        )),
        Ok(facts) => page_findings(facts, listing, version, &mut out),
    }
    if listing.listed > 0 && listing.shown == 0 {
        out.push(finding(
            "site-policy",
            Level::Problem,
            format!(
                "The page registers {} tool{}, but every one is left out by a site policy.",
                listing.listed,
                if listing.listed == 1 { "" } else { "s" }
            ),
            "Change the site policy for this origin (configure({sites})) if the tools should show.",
        ));
    } else if listing.shown < listing.listed {
        out.push(finding(
            "site-policy-some",
            Level::Info,
            format!(
                "A site policy leaves out {} of the page's {} tools.",
                listing.listed - listing.shown,
                listing.listed
            ),
            "Change the site policy for this origin if those tools should show.",
        ));
    }
    let blocked = out.iter().any(|f| f.id == "policy-blocked");
    for error in listing.frame_errors.iter().take(20) {
        // The policy's own error is the finding above.
        if blocked && error.to_lowercase().contains("permissions policy") {
            continue;
        }
        out.push(finding(
            "frame-error",
            Level::Warning,
            format!("A frame could not list its tools: {error}"),
            "Reload the tab; if the frame's page throws while listing its tools, see its console.",
        ));
    }
    for problem in listing.problems.iter().take(20) {
        out.push(finding(
            "skipped-entry",
            Level::Warning,
            format!("An entry was skipped: {problem}"),
            "Fix the tool's definition in the page (a name of A-Z, a-z, 0-9, _ and -; an object input schema; sizes within the caps).",
        ));
    }
    out.sort_by_key(|f| f.level as u8);
    Diagnosis {
        tools: listing.shown,
        chrome_version: version,
        findings: out,
    }
}

fn page_findings(
    facts: &PageFacts,
    listing: &Listing,
    version: Option<u32>,
    out: &mut Vec<Finding>,
) {
    let blocked = facts.tools_allowed == Some(false);
    if blocked {
        out.push(finding(
            "policy-blocked",
            Level::Problem,
            "The page's Permissions Policy does not allow WebMCP here (`Permissions-Policy: tools=()` or an iframe without `allow=\"tools\"`): `document.modelContext` cannot register tools.".into(),
            "Serve the page without `tools=()` in its Permissions-Policy header (or with `tools=(self)`).",
        ));
    }
    if facts.native {
        out.push(finding(
            "webmcp-native",
            Level::Info,
            "WebMCP is on in this browser: the page has the browser's own `document.modelContext`."
                .into(),
            "Nothing to do.",
        ));
        if facts.polyfill_script {
            out.push(finding(
                "polyfill-idle",
                Level::Info,
                "A WebMCP polyfill is loaded but idle: native WebMCP is on, so the page's tools are the browser's.".into(),
                "Nothing to do; the polyfill only installs where the browser has no WebMCP.",
            ));
        }
    } else if facts.polyfill {
        use crate::core::page::bridge::{GOOGLE_DEMO_POLYFILL, MCP_B_POLYFILL};
        let (which, hints) = match facts.polyfill_name.as_str() {
            GOOGLE_DEMO_POLYFILL => (
                "Google's demo polyfill (webmcp-tools' `demos/shared/webmcp-polyfill.js`)",
                "It passes every hint on, so the page's hints are read as on a native page.",
            ),
            MCP_B_POLYFILL => (
                "`@mcp-b/webmcp-polyfill` (or `@mcp-b/global`, built on it)",
                "It keeps only `readOnlyHint` and `untrustedContentHint`: every tool that is not read-only is confirmed, marked \"hints unknown\".",
            ),
            _ => (
                "a polyfill the host does not recognise",
                "It may drop `consequentialHint`: every tool that is not read-only is confirmed, marked \"hints unknown\".",
            ),
        };
        out.push(finding(
            "webmcp-polyfill",
            Level::Info,
            format!("WebMCP is off in this browser; the page's tools come from {which} in its own world. {hints}"),
            &format!("Nothing to do; to test native WebMCP instead: {}", flag_for(version)),
        ));
    } else if !blocked {
        let why = match version {
            Some(v) if v < ORIGIN_TRIAL_FROM => format!(
                "This Chrome ({v}) is older than the WebMCP origin trial (Chrome {ORIGIN_TRIAL_FROM})."
            ),
            _ => "WebMCP is off: the flag is not set and the page has no valid origin-trial token, or this browser has no WebMCP.".into(),
        };
        out.push(finding(
            "no-webmcp",
            Level::Problem,
            format!("The page has no `document.modelContext` and no polyfill. {why}"),
            &format!(
                "{} Or load a WebMCP polyfill in the page.",
                flag_for(version)
            ),
        ));
    }
    let own = http_origin(&facts.url);
    for frame in &facts.frames {
        let Some(origin) = http_origin(&frame.src) else {
            continue;
        };
        let delegated = frame
            .allow
            .split(';')
            .any(|feature| feature.split_whitespace().next() == Some("tools"));
        if own.as_deref() != Some(origin.as_str()) && !delegated {
            out.push(finding(
                "frame-not-delegated",
                Level::Warning,
                format!(
                    "A cross-origin frame ({origin}) is not given WebMCP: its iframe has no `allow=\"tools\"`, so its tools cannot register."
                ),
                "Add `allow=\"tools\"` to the iframe if its tools should show.",
            ));
        }
    }
    if facts.document_domain {
        out.push(finding(
            "document-domain",
            Level::Warning,
            "The page set `document.domain`: its frames share an agent cluster across origins, which WebMCP may refuse.".into(),
            "Stop setting `document.domain` (Chrome is removing it), or give the page an `Origin-Agent-Cluster` header.",
        ));
    }
    if facts.origin_agent_cluster == Some(false) {
        out.push(finding(
            "origin-agent-cluster",
            Level::Warning,
            "`window.originAgentCluster` is false: the page shares its agent cluster with other origins of its site, and the WebMCP draft rejects `registerTool` there with a `SecurityError`.".into(),
            "Serve the page with the header `Origin-Agent-Cluster: ?1` and do not set `document.domain`.",
        ));
    }
    trial_findings(facts, version, listing.now_ms, out);
    if let Some(v) = version {
        out.push(finding(
            "chrome-version",
            Level::Info,
            format!("Chrome {v}: {}", shape_of(v)),
            "Nothing to do.",
        ));
    }
    if listing.listed == 0 && (facts.native || facts.polyfill) && !blocked {
        out.push(finding(
            "none-registered",
            Level::Problem,
            "WebMCP is there, but the page registered no tool (yet).".into(),
            "Check that the page calls `document.modelContext.registerTool(...)` (and that it ran without an error: see the page's console); a tool registered later shows once the page announces it.",
        ));
    }
}

/// How to switch native WebMCP on in Chrome `version` (both ways where it is unknown).
pub fn flag_for(version: Option<u32>) -> String {
    match version {
        Some(v) if v >= WEBMCP_FEATURE_FROM => format!(
            "Start Chrome with --enable-features=WebMCP: from Chrome {WEBMCP_FEATURE_FROM} on, chrome://flags/#enable-webmcp-testing (WebMCPTesting) alone no longer turns it on."
        ),
        Some(_) => "Turn on chrome://flags/#enable-webmcp-testing, or start Chrome with --enable-features=WebMCP (which works from Chrome 157 on too).".into(),
        None => format!(
            "Start Chrome with --enable-features=WebMCP (any version), or before Chrome {WEBMCP_FEATURE_FROM} turn on chrome://flags/#enable-webmcp-testing."
        ),
    }
}

/// The first Chrome version where only the `WebMCP` feature (not `WebMCPTesting`) turns it on.
pub const WEBMCP_FEATURE_FROM: u32 = 157;

/// What WebMCP in Chrome `version` differs in, as the host reads it, in one short clause: the
/// `chrome-version` finding (docs/chrome-versions.md has each version's whole shape).
pub fn shape_of(version: u32) -> &'static str {
    match version {
        0..=154 => "`inputSchema` and `executeTool`'s arguments are JSON text; the host sends text.",
        155 => "`executeTool` takes the arguments as an object; `toolactivated`/`toolcancel` fire on `window`.",
        156..=158 => "`toolactivated`/`toolcancel` fire on `document.modelContext`; `outputSchema` from 159.",
        159 => "`registerTool` keeps `outputSchema`; the host checks results against it.",
        _ => "`getTools()` gives `Tool` objects whose attributes are getters (`source`, not `window`).",
    }
}

/// The findings of the page's origin-trial tokens: each read, and said when it cannot turn
/// WebMCP on here (expired, for another origin, unreadable).
fn trial_findings(facts: &PageFacts, version: Option<u32>, now_ms: f64, out: &mut Vec<Finding>) {
    use super::trial::{covers, date, decode};
    let origin = http_origin(&facts.url);
    for token in &facts.origin_trial_tokens {
        let trial = match decode(token) {
            Ok(trial) => trial,
            Err(why) => {
                out.push(finding(
                    "origin-trial-unreadable",
                    Level::Warning,
                    format!("The page has an origin-trial token that cannot be read: {why}."),
                    "Check the token in the page's `<meta http-equiv=\"origin-trial\">`; copy it again from the origin trials console.",
                ));
                continue;
            }
        };
        let lower = trial.feature.to_ascii_lowercase();
        if !lower.contains("webmcp") && !lower.contains("modelcontext") {
            continue;
        }
        let level = if facts.native {
            Level::Info
        } else {
            Level::Problem
        };
        let until = date(trial.expiry);
        let what = format!(
            "The page's origin-trial token for {} ({}{})",
            trial.feature,
            trial.origin,
            if trial.is_subdomain {
                " and its subdomains"
            } else {
                ""
            }
        );
        if now_ms > 0.0 && (trial.expiry as f64) * 1000.0 <= now_ms {
            out.push(finding(
                "origin-trial-expired",
                level,
                format!("{what} expired on {until}: it turns nothing on."),
                &format!("Renew the token in the origin trials console, or switch WebMCP on yourself. {}", flag_for(version)),
            ));
        } else if !origin.as_deref().is_some_and(|o| covers(&trial, o)) {
            out.push(finding(
                "origin-trial-origin",
                level,
                format!(
                    "{what} is not for this page's origin ({}): it turns nothing on here.",
                    origin.as_deref().unwrap_or("none")
                ),
                "Use a token registered for this origin.",
            ));
        } else {
            out.push(finding(
                "origin-trial",
                Level::Info,
                format!("{what} is valid until {until}."),
                "Nothing to do.",
            ));
        }
    }
}

/// The message that asks a top frame for its facts.
pub fn request() -> Value {
    crate::core::page::bridge::FrameRequest::Diagnose.to_message()
}

/// The facts of a top frame's reply (or why there are none).
pub fn facts_of(reply: &crate::core::page::bridge::Reply) -> Result<PageFacts, String> {
    use crate::core::page::bridge::Reply;
    match reply {
        Reply::Answered(Ok(text)) => parse_facts(text),
        Reply::Answered(Err(e)) | Reply::Failed(e) => Err(e.clone()),
        Reply::TimedOut => Err("no answer within 2 s".into()),
    }
}

/// The worker's side of a diagnosis: the tools listed, those the site policies left, the
/// entries skipped and the frames that failed.
pub fn listing(
    listed: &crate::core::page::tabs::TabTools,
    shown: &crate::core::page::tabs::TabTools,
) -> Listing {
    let mut out = Listing {
        listed: listed.tools.len(),
        shown: shown.tools.len(),
        ..Listing::default()
    };
    for problem in &shown.problems {
        match &problem.tool {
            Some(tool) => out.problems.push(format!("{tool}: {}", problem.message)),
            None => out.frame_errors.push(problem.message.clone()),
        }
    }
    out
}
