//! The shell's two globals, and the only ones: the core's [`Host`] (all the host's state that
//! is plain data) and the [`Driver`] (what only the browser can hold: each run's stop and
//! inbox, the wakers of the person's waits, the kept MCP connections of both pools). Every
//! module reaches them through [`host`] and [`driver`].
//!
//! Invariant: a part of either is borrowed for one synchronous step, never across an await.

use std::cell::RefCell;
use std::collections::HashMap;

use js_sys::Function;

use super::agent::Record;
use super::kept::Pool;
use crate::core::host::Host;
use crate::core::ops::waits::Waiter;

/// What the shell's driver holds of the browser.
pub(crate) struct Driver {
    /// The runs of this worker: their events, stop and inbox.
    pub(crate) runs: RefCell<HashMap<String, Record>>,
    /// The `resolve` of each waiter's promise (the person's waits).
    pub(crate) wakers: RefCell<HashMap<Waiter, Function>>,
    /// The MCP servers exposed to pages: their kept connections hear the server's messages.
    pub(crate) exposures: Pool,
    /// The MCP servers called by hand: their kept connections open no GET stream.
    pub(crate) by_hand: Pool,
    /// Per server called by hand: its uses under way, and how many there were (to close its
    /// connection once unused).
    pub(crate) by_hand_uses: RefCell<HashMap<String, (u32, u64)>>,
}

impl Default for Driver {
    fn default() -> Driver {
        Driver {
            runs: RefCell::default(),
            wakers: RefCell::default(),
            exposures: Pool::listening(),
            by_hand: Pool::quiet(),
            by_hand_uses: RefCell::default(),
        }
    }
}

thread_local! {
    static HOST: Host = Host::default();
    static DRIVER: Driver = Driver::default();
}

/// `f` on the host's state.
pub(crate) fn host<T>(f: impl FnOnce(&Host) -> T) -> T {
    HOST.with(f)
}

/// `f` on the driver's browser handles.
pub(crate) fn driver<T>(f: impl FnOnce(&Driver) -> T) -> T {
    DRIVER.with(f)
}
