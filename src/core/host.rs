//! The host's state in one value: everything the worker keeps between two messages that is
//! plain data (the tabs' kept listings, the runs' logs, the conversations, what waits for the
//! person, the first definitions seen, the sign-ins' step-up challenges). The shell holds one
//! [`Host`] and reaches every part of it through it; what only the browser can hold (a run's
//! stop and inbox, the wakers of the waits, the kept MCP connections) is the shell's driver's.
//!
//! Each part is its own cell, borrowed for one synchronous step at a time (never across an
//! await), as each machine's own state was before: a step of one part may read another.
//!
//! Invariant: no I/O and no clock here; every part is a core value tested natively.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::core::ops::runlog::RunLog;
use crate::core::ops::threads::Threads;
use crate::core::ops::waits::Waits;
use crate::core::page::kept::Kept;
use crate::core::workbench::inventory::Seen;

pub mod call;

/// The host's state.
#[derive(Default)]
pub struct Host {
    /// The tabs' listings kept for the page calls that follow.
    pub listings: RefCell<Kept>,
    /// The runs' summaries and logs.
    pub runs: RefCell<RunLog>,
    /// The conversations.
    pub threads: RefCell<Threads>,
    /// The visitor inputs and confirmations waiting for the person, and their answers.
    pub waits: RefCell<Waits>,
    /// The first definition of every tool seen; `None` until read from storage.
    pub seen: RefCell<Option<Seen>>,
    /// The last step-up challenge (403 `insufficient_scope`) per server, for its next sign-in.
    pub challenges: RefCell<HashMap<String, String>>,
}
