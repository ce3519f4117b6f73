//! Observability: what a run used and cost, its OpenTelemetry trace, and the bug report.
//!
//! - The tokens a run used are the provider's to read (`core::provider::usage`); here:
//!   [`cost`]: the person's price table and the arithmetic of a step's, a run's and a
//!   conversation's cost.
//! - [`trace`] and [`otlp`]: a run's log as OpenTelemetry spans and their OTLP protobuf
//!   encoding; [`collector`]: the collectors the person configured and the export requests.
//! - [`bundle`]: the bug report file.
//!
//! Everything here is pure: times come from the run log, ids are derived from the run's id.

pub mod bundle;
pub mod collector;
pub mod cost;
pub mod otlp;
pub mod trace;

#[cfg(test)]
mod tests;
