//! The one gate for tool calls: every call the host performs, whichever operation asks for it
//! (a run, `callTool` by hand on a page or an MCP server, a smoke or agent evaluation,
//! `replayDiff`, an audit probe, a page's call of an exposed MCP tool), passes [`screen`]
//! first, and only a call that passed carries the [`Permit`] that the page call machine
//! ([`crate::core::page::call::PageCall::new`]) and the shell's MCP call take.
//!
//! Invariants:
//! - A [`Permit`] is built only here, from a [`Pass`] that [`screen`] gave: a path that
//!   performs a call without the gate does not compile (neither shell can build one, and
//!   `Permit::map` is the core's own).
//! - The declarative layers hold for every asker alike: the person's stored layers
//!   (`configure({middleware})`) for every operation, and a run's own layers in that run, in
//!   the order they were given. `block` refuses, `fail` answers its error, `delay` holds the
//!   call; a stored layer that no longer parses refuses the call, so that a `block` is never
//!   skipped.
//! - What comes after the layers is decided by [`decide()`] for every source alike: whether
//!   the call runs, is allowed by a site policy, or is asked about (in the page for page
//!   tools, in the extension for MCP tools), in one set of words. The machine the permit is
//!   given to asks it, and stores a run's acting intent and the record of the decision.

use serde_json::Value;

mod decide;
mod layers;

pub use decide::{decide, Acting, AskedIn, Decision};
pub use layers::{declared, stored, Middleware, Pattern, MAX_DELAY_MS};

/// The operation a call is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Asker {
    /// A run's model asked for it.
    Run,
    /// `callTool` on a page tool, by hand or from a script.
    CallTool,
    /// `callTool({server})`: an MCP server's tool called by hand.
    ByHand,
    /// `evaluate` in smoke mode: an expected call performed.
    Smoke,
    /// `replayDiff`: a recorded call played again.
    Replay,
    /// `evaluate({mode: "simulate"})`: a case's setup call.
    Simulate,
    /// `audit({probe: true})`: a probe call.
    Probe,
    /// A page called an MCP tool exposed to its origin (`callExposed`).
    Exposure,
}

impl Asker {
    /// Every asker, for the tests that prove each reaches the gate.
    pub const ALL: [Asker; 8] = [
        Asker::Run,
        Asker::CallTool,
        Asker::ByHand,
        Asker::Smoke,
        Asker::Replay,
        Asker::Simulate,
        Asker::Probe,
        Asker::Exposure,
    ];

    /// The asker's name, as records and errors give it.
    pub fn as_str(self) -> &'static str {
        match self {
            Asker::Run => "run",
            Asker::CallTool => "callTool",
            Asker::ByHand => "callTool (MCP)",
            Asker::Smoke => "evaluate (smoke)",
            Asker::Replay => "replayDiff",
            Asker::Simulate => "evaluate (simulate setup)",
            Asker::Probe => "audit probe",
            Asker::Exposure => "exposed tool",
        }
    }
}

/// A call screened by the layers: how long to hold it before it runs. Only [`screen`] gives
/// one; [`Pass::permit`] turns it into the call's [`Permit`].
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a pass is the only way to a permit"]
pub struct Pass {
    asker: Asker,
    delay_ms: u32,
}

impl Pass {
    /// How long a `delay` layer holds the call before it runs (ms).
    pub fn delay_ms(&self) -> u32 {
        self.delay_ms
    }

    /// Takes the delay (the call is held that long once, then runs).
    pub fn take_delay(&mut self) -> u32 {
        std::mem::take(&mut self.delay_ms)
    }

    /// The permit of the call this pass was given for.
    pub fn permit<T>(self, call: T) -> Permit<T> {
        Permit {
            call,
            asker: self.asker,
        }
    }
}

/// A call that passed the gate: the only value the page call machine and the shells' MCP
/// calls accept. Built by [`Pass::permit`] alone.
#[derive(Debug, Clone, PartialEq)]
pub struct Permit<T> {
    call: T,
    asker: Asker,
}

impl<T> Permit<T> {
    /// The call.
    pub fn call(&self) -> &T {
        &self.call
    }

    /// Who asked for it.
    pub fn asker(&self) -> Asker {
        self.asker
    }

    /// The call, taken out (the permit is spent).
    pub fn into_call(self) -> T {
        self.call
    }

    /// The call and the permit's stamp, to be given to the call's parts
    /// ([`Permit::map`]).
    pub(in crate::core) fn split(self) -> (T, Permit<()>) {
        let stamp = Permit {
            call: (),
            asker: self.asker,
        };
        (self.call, stamp)
    }

    /// The same permit for the call in another shape (a run's call as the page call it is).
    pub(in crate::core) fn map<U>(self, f: impl FnOnce(T) -> U) -> Permit<U> {
        Permit {
            call: f(self.call),
            asker: self.asker,
        }
    }
}

/// An MCP server's tool call, as the shells perform it.
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// The tool as the server listed it (its name, its output schema).
    pub tool: crate::core::mcp::tools::McpTool,
    /// The call's arguments.
    pub arguments: serde_json::Map<String, Value>,
}

/// The declarative layers, in order, applied to a call of the tool named any of `names` (a
/// run's name and the tool's own: `block` and `fail` name either), its `count`th of the turn
/// (1 outside runs): the error it answers instead of running (`block`: `blocked: reason`;
/// `fail`: its error), or its [`Pass`] with the delay the `delay` layers add (60 s at most).
pub fn screen(
    layers: &[Middleware],
    asker: Asker,
    names: &[&str],
    count: usize,
) -> Result<Pass, String> {
    screen_each(layers, asker, names, count, |_| {})
}

/// [`screen`], telling `visit` of each layer the call reached (in order: a layer after the
/// one that refused it is not reached), so that a run's `observe` layers report it.
pub fn screen_each(
    layers: &[Middleware],
    asker: Asker,
    names: &[&str],
    count: usize,
    mut visit: impl FnMut(&Middleware),
) -> Result<Pass, String> {
    let named = |tool: &str| names.contains(&tool);
    let mut delay_ms: u32 = 0;
    for layer in layers {
        visit(layer);
        match layer {
            Middleware::Block { tools, reason } if tools.iter().any(|t| named(t)) => {
                return Err(format!("blocked: {reason}"))
            }
            Middleware::Fail { tool, error, times }
                if named(tool) && times.is_none_or(|n| count <= n) =>
            {
                return Err(error.clone())
            }
            Middleware::Delay { tool, ms } if tool.as_deref().is_none_or(named) => {
                delay_ms = delay_ms.saturating_add(*ms).min(MAX_DELAY_MS)
            }
            _ => {}
        }
    }
    Ok(Pass { asker, delay_ms })
}

/// [`screen`] for an operation outside runs, against the person's stored layers as read from
/// storage (`configure({middleware})`): a read that failed or a stored layer that no longer
/// parses refuses the call.
pub fn screen_stored(
    stored: Result<Option<Value>, String>,
    asker: Asker,
    names: &[&str],
) -> Result<Pass, String> {
    let layers = stored
        .map_err(|e| format!("the stored middleware could not be read: {e}"))
        .and_then(layers::stored)
        .map_err(|e| format!("{}: the call was not made: {e}", asker.as_str()))?;
    screen(&layers, asker, names, 1)
}

/// A refusal of the gate in `callTool`'s answer shape.
pub fn refused(error: &str) -> Value {
    serde_json::json!({"ok": false, "error": error})
}

#[cfg(test)]
mod tests;
