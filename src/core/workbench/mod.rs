//! The manual testing workbench: what a person (or a script) needs to try a page's tools by
//! hand, decided here and performed by the shell.
//!
//! - [`validate`]: arguments checked against a tool's input schema, each error at its field
//!   (a JSON pointer and a message), before anything is sent (`validateArguments`).
//! - [`inventory`]: every open tab's tools in one searchable list, and the tools whose
//!   definition changed since they were first seen in their tab (`inventory`).
//! - [`server`]: an MCP server's tools listed and called by hand (`listTools` and `callTool`
//!   with `server`): the tool, the arguments checked, the confirmation, the answer.
//! - [`diagnose`]: why a tab shows no tools: the facts its top frame and the worker gathered,
//!   turned into findings that each say what to do (`diagnose`).
//!
//! Invariant: values in, values out; nothing here reads a clock or performs I/O.

#![warn(missing_docs)]

pub mod diagnose;
pub mod inventory;
pub mod server;
pub mod trial;
pub mod validate;

#[cfg(test)]
mod tests;
