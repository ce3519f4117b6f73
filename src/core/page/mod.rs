//! Page tools: what a tab offers and how a call to one of them runs.
//!
//! - [`call`]: one page tool call as a machine (resolve → confirm → send → settle →
//!   destination); the shell performs each [`call::Step`] and feeds back a [`call::Input`].
//! - [`tool`]: page tools as plain data, parsed from a frame's report.
//! - [`bridge`]: the wire protocol between the worker and the content script of a frame.
//! - [`tabs`]: a tab's frames merged into one tool list; names resolved.
//! - [`kept`]: the tabs' listings kept between page calls.
//! - [`ready`]: whether a listing shows a page loaded and settled (after a load, before a turn).
//! - [`site`]: per-site policy for page tools (filter, always confirm, wrap as data).

pub mod bridge;
pub mod call;
pub mod kept;
pub mod ready;
pub mod site;
pub mod tabs;
pub mod tool;
