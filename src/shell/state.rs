//! The shell's two globals, and the only ones: the core's [`Host`] (all the host's state that
//! is plain data) and the `Driver` (what only the browser can hold: each run's stop and
//! inbox, the wakers of the person's waits, the fetches and timers under way). Every
//! module reaches them through `host` and `driver`.
//!
//! The shapes of what the driver holds are defined here too (a run's `Record`, an MCP
//! connection's [`McpClient`], the id the host holds its state under), with nothing
//! but core and browser types in them; their behaviour stays with the modules that use them (`agent.rs`,
//! `kept.rs`, `mcp.rs`). So this module imports no other module of the shell, and every
//! module may import it: no import circle runs through the globals.
//!
//! Invariant: a part of either is borrowed for one synchronous step, never across an await.

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::JsValue;

use crate::core::host::mcp::ClientId;
use crate::core::host::run::RunFeed;
use crate::core::host::Host;
use crate::core::mcp::Session;
use crate::core::ops::waits::Waiter;

/// What the shell's driver holds of the browser.
#[derive(Default)]
pub(crate) struct Driver {
    /// The runs of this worker: their events, stop and inbox.
    pub(crate) runs: RefCell<HashMap<String, Record>>,
    /// The `resolve` of each waiter's promise (the person's waits).
    pub(crate) wakers: RefCell<HashMap<Waiter, Function>>,
    /// The fetches under way, by the id the host gave them: each handle, and its read not
    /// yet answered when its reader stopped waiting.
    pub(crate) fetches: RefCell<HashMap<u64, (JsValue, Option<Promise>)>>,
    /// The timers set, by the id the host gave them: each handle, and the `resolve` that
    /// ends its wait (with `true` when it fired).
    pub(crate) timers: RefCell<HashMap<u64, (JsValue, Function)>>,
}

/// Where a run stands, for `stop`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Going {
    Yes,
    Stopped,
    Finished,
}

/// What the worker keeps of a run.
pub(crate) struct Record {
    pub(crate) events: Vec<Value>,
    /// Resolved by `stop` (with `resolve_stop`), for the waits that end with it (the person's
    /// answers, Chrome's model).
    pub(crate) stop: Promise,
    pub(crate) resolve_stop: Option<js_sys::Function>,
    pub(crate) going: Going,
    pub(crate) inbox: Rc<Inbox>,
}

/// The answers of a run's effects, in the order they came, and the wake-up of its loop.
#[derive(Default)]
pub(crate) struct Inbox {
    pub(crate) queue: RefCell<VecDeque<RunFeed>>,
    pub(crate) wake: RefCell<Option<js_sys::Function>>,
}

/// One server's client, shared by the run's concurrent calls.
pub type Shared = Rc<McpClient>;

/// One server's MCP client: the id its state is held under by the host
/// ([`crate::core::host::mcp`]).
pub struct McpClient {
    pub(crate) id: ClientId,
}

impl McpClient {
    /// Its session as the host holds it now.
    pub fn borrow(&self) -> Held {
        Held {
            session: host(|host| host.mcp_session(self.id)),
        }
    }
}

/// A copy of a client's session.
pub struct Held {
    /// The session (its sign-in, its protocol).
    pub session: Session,
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
