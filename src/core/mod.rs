//! The sans-IO core. Nothing in here performs I/O, reads a clock, or names a browser type:
//! the shells hand it JSON values and strings and carry out what it returns.
//!
//! - [`limits`]: caps applied to untrusted input before it is parsed.
//! - [`tool`]: page tools as plain data, parsed from a frame's report.
//! - [`bridge`]: the wire protocol between the worker and the content script of a frame.
//! - [`site`]: per-site policy for page tools (filter, always confirm, wrap as data).
//! - [`api`]: the operations of the automation surface (`listTools`, `callTool`) as values.
//! - [`ops`]: the host's operations: their one list, parser and sender authorization, their
//!   requests, the person's settings (key masks, presets, connection checks), pending items
//!   and the capped run list.

pub mod agui;
pub mod confirm;
pub mod conversation;
pub mod expose;
pub mod limits;
pub mod mcp;
pub mod native;
pub mod ops;
pub mod page;
pub mod parse;
pub mod provider;
pub mod repair;
pub mod restart;
pub mod run;
pub mod setup;
pub mod stream;
pub mod toolset;

pub use page::{bridge, site, tool};
