//! WebMCP Host: an LLM agent host for WebMCP pages.
//!
//! The crate has one pure core and two shells:
//!
//! - [`core`]: sans-IO. Values in, values out: no clock, no I/O, no browser types. Everything
//!   that can be decided about untrusted data (page tool lists, messages and their senders,
//!   call results) is decided here and tested natively with `cargo test`.
//! - `shell` (wasm32 only): the service worker of the extension. It alone touches
//!   `wasm_bindgen`, `js_sys` and `chrome.*`; it performs what the core asks and feeds back
//!   the answers.
//! - `src/bin/webmcp-host/`: the native CLI, a second shell over the same core.

pub mod core;

#[cfg(target_arch = "wasm32")]
pub mod shell;

/// The host's version, shared by the extension, its manifest and the CLI.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
