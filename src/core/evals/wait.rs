//! Smoke mode's wait for an expected tool: a page may register a tool a moment after it loads
//! (after a fetch, a framework's first render), so before each smoke call the tab's tools are
//! listed, and listed again every [`POLL_MS`] while the tool is not there, for at most
//! [`TOOL_WAIT_MS`] (or the call's timeout when shorter), before the step is judged an error
//! because the tool is missing; as `webmcp-evals`' smoke evaluator does.
//!
//! Pure: the worker lists the tools and says when (its clock); this decides.

use crate::core::page::tabs::Listed;

/// The longest wait for an expected tool to appear, ms.
pub const TOOL_WAIT_MS: u32 = crate::core::limits::EVAL_TOOL_WAIT_MS;
/// The pause between two listings while waiting, ms.
pub const POLL_MS: u32 = crate::core::limits::EVAL_POLL_MS;

/// What to do after a listing.
#[derive(Debug, Clone, PartialEq)]
pub enum Seen {
    /// The tool is listed (or the listing failed: the call will say why): call it.
    Call,
    /// Not listed yet: list again after this many ms.
    ListAgain(u32),
    /// Not listed after the whole wait: the step's error.
    Missing(String),
}

/// The wait for one step's tool.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolWait {
    first_ms: Option<f64>,
}

impl ToolWait {
    /// A listing (the tab's tools, or why they could not be listed) made at `now_ms`, for the tool `name`, whose call's timeout is `timeout_ms`.
    pub fn listed(&mut self, name: &str, tools: &Listed, now_ms: f64, timeout_ms: u32) -> Seen {
        let Ok(tools) = tools else {
            return Seen::Call;
        };
        let listed: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
        if listed.contains(&name) {
            return Seen::Call;
        }
        let first = *self.first_ms.get_or_insert(now_ms);
        let cap = f64::from(TOOL_WAIT_MS.min(timeout_ms));
        let waited = if now_ms.is_finite() && first.is_finite() {
            (now_ms - first).max(0.0)
        } else {
            cap // no usable clock: one listing is all
        };
        if waited < cap {
            return Seen::ListAgain(POLL_MS.min((cap - waited).ceil() as u32).max(1));
        }
        // What the tab offers instead, at most 20 names.
        let offers = crate::core::page::tabs::offered(listed, 20);
        Seen::Missing(format!(
            "the tool is not on the page (waited {waited:.0} ms for it to appear); the tab offers: {offers}"
        ))
    }
}
