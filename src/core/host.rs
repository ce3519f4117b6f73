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

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use crate::core::ops::runlog::RunLog;
use crate::core::ops::threads::Threads;
use crate::core::ops::waits::Waits;
use crate::core::page::kept::Kept;
use crate::core::page::tabs::TabTools;
use crate::core::workbench::inventory::Seen;

pub mod call;
pub mod checks;
pub mod conversations;
pub mod crawling;
pub mod door;
pub mod io;
pub mod listing;
pub mod machine;
pub mod mcp;
pub mod probe;
pub mod report;
pub mod run;
pub mod runlog;
pub mod screen;
pub mod server_call;
pub mod settings;
pub mod stored;
pub mod suite;
pub mod uses;
pub mod workbench;

#[cfg(test)]
pub(crate) mod play;

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
    /// The person's stored layers as last read, for the gate of every call.
    pub layers: RefCell<StoredLayers>,
    /// The MCP servers used by hand: their uses, for the idle policy of their connections.
    pub uses: RefCell<uses::Uses>,
    /// The questions pages' calls of exposed tools have open, and the pages just declined.
    pub questions: RefCell<server_call::PageQuestions>,
    /// The listings the host kept since the shell last took them ([`Host::take_listed`]),
    /// whoever asked for them: each is observed (the first definitions seen, `seen`).
    pub listed: RefCell<Vec<(i64, Rc<TabTools>)>>,
    /// The tabs being crawled, and whether the person asked to stop each crawl (one crawl a
    /// tab: [`crawling::Crawling`]).
    pub crawls: RefCell<HashMap<i64, bool>>,
    /// The MCP clients: every connection's session and what it knows of its server.
    pub mcp: RefCell<mcp::Clients>,
    /// The kept MCP connections of both pools.
    pub pools: RefCell<mcp::pools::Pools>,
    /// The last id a fetch was given ([`Host::fetch_id`]).
    pub fetch_ids: Cell<u64>,
    /// The last id a timer was given ([`Host::timer_id`]).
    pub timer_ids: Cell<u64>,
}

impl Host {
    /// The listings kept since the last call, for the shell to observe.
    pub fn take_listed(&self) -> Vec<(i64, Rc<TabTools>)> {
        std::mem::take(&mut self.listed.borrow_mut())
    }
}

/// The person's stored layers (`configure({middleware})`) as the worker last read them, kept
/// so that a call does not read storage again, and forgotten whenever they change: the shell
/// forgets them after every write of their key, its own (`configure`) or another context's
/// (`chrome.storage.onChanged`).
///
/// Invariant: a read is kept only if nothing changed since it was asked for ([`epoch`]), so a
/// read that raced a write never outlives it.
///
/// [`epoch`]: StoredLayers::epoch
#[derive(Debug, Default)]
pub struct StoredLayers {
    epoch: u64,
    kept: Option<Option<Value>>,
}

impl StoredLayers {
    /// What is stored, if known (`Some(None)`: nothing is stored).
    pub fn get(&self) -> Option<Option<Value>> {
        self.kept.clone()
    }

    /// The count of changes so far: asked for before a read, given back to [`keep`].
    ///
    /// [`keep`]: StoredLayers::keep
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Keeps what a read asked for at `epoch` found, unless they changed since.
    pub fn keep(&mut self, epoch: u64, stored: Option<Value>) {
        if epoch == self.epoch {
            self.kept = Some(stored);
        }
    }

    /// They changed (or may have): the next call reads them again.
    pub fn forget(&mut self) {
        self.epoch += 1;
        self.kept = None;
    }
}
