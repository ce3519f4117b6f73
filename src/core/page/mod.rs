//! Page tools: what a tab offers and how a call to one of them runs.
//!
//! - [`call`]: one page tool call as a machine (resolve → confirm → send → settle →
//!   destination); the shell performs each [`call::Step`] and feeds back a [`call::Input`].

pub mod call;
