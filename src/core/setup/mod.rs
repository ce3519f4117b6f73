//! What a run and the host's settings are set up from, decided here and performed by the
//! worker: where each setting is stored and how a stored value is read ([`store`]),
//! `configure`'s writes ([`configure`]), a run's start from its tool sources ([`start`]), and
//! the answers of the calls the worker carries out with what was set up ([`call`]).
//! Invariant: nothing here performs I/O; the worker reads and writes what these modules name,
//! and hands back what it got. This neighbourhood uses runs, pages, providers, MCP and the
//! operations' requests; none of them uses it.

/// The answers of the worker's own calls.
pub mod call;
/// `configure`'s writes.
pub mod configure;
/// A run's start from its tool sources.
pub mod start;
/// Where each setting is stored, and how a stored value is read.
pub mod store;

#[cfg(test)]
mod tests;
