//! The workbench's operations as the [`Host`] performs them: `validateArguments`
//! ([`Validate`]), `inventory` ([`Inventory`]: the open tabs surveyed
//! [`INVENTORY_TABS_AT_ONCE`] at a time), `diagnose` ([`Diagnose`]), `timeline`
//! ([`Timeline`]), and the first definition of every tool seen ([`Observe`]: kept in
//! [`Host::seen`] and in `chrome.storage.session`, so that a worker restart forgets none). The
//! core (`core::workbench`, `core::timeline`) decides.
//!
//! Invariant: the first definitions are read from storage at most once per worker (the closed
//! tabs' forgotten then), and stored again whenever they change.

use std::rc::Rc;

use serde_json::Value;

use super::io::{Frames, Input, Output, Step, Tabs};
use super::listing::{Listing, Settle};
use super::runlog::RunLogRead;
use super::stored::{found, read, read_back, write, Writes};
use super::Host;
use crate::core::limits::{INVENTORY_TABS_AT_ONCE, TAB_FACTS_MS};
use crate::core::page::bridge::Target;
use crate::core::page::site::apply_stored;
use crate::core::page::tabs::TabTools;
use crate::core::setup::store::{self, SITES_KEY};
use crate::core::storage::{Area, SEEN};
use crate::core::workbench::diagnose::{diagnose as decide, facts_of, listing, request};
use crate::core::workbench::inventory::{inventory as list, open_tab, OpenTab, Seen};
use crate::core::workbench::validate::{validate_arguments, Against, ValidateRequest};

fn to_value(value: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// The first definitions seen, read once per worker: what was stored, then the open tabs
/// (the closed tabs' forgotten).
#[derive(Debug, Default)]
struct SeenLoad {
    stored: Option<Option<Value>>,
}

impl Host {
    /// The next output of the first definitions' load; `None` once they are in the host.
    fn load_seen(&self, load: &mut SeenLoad, input: Option<Input>) -> Option<Output> {
        if self.seen.borrow().is_some() {
            return None;
        }
        match (load.stored.take(), input) {
            (None, None) => return Some(read(Area::Session, SEEN)),
            (None, input) => {
                load.stored = Some(found(input));
                return Some(Output::Tabs(Tabs::List));
            }
            (Some(stored), input) => {
                let mut seen = Seen::from_stored(&stored.unwrap_or(Value::Null));
                let open = match input {
                    Some(Input::Tabs(tabs)) => tabs.iter().map(|t| t.id).collect(),
                    _ => Vec::new(),
                };
                seen.keep_tabs(&open);
                self.seen.borrow_mut().get_or_insert(seen);
            }
        }
        None
    }

    /// `f` on the first definitions seen.
    fn with_seen<T>(&self, f: impl FnOnce(&mut Seen) -> T) -> T {
        f(self.seen.borrow_mut().get_or_insert_with(Seen::default))
    }

    /// The first definitions stored (a failure warned of).
    fn store_seen(&self) -> Writes {
        let stored = self.with_seen(|seen| seen.to_stored());
        let warning = "webmcp-host: keeping the tools first seen: ".to_owned();
        Writes::default().then(write(Area::Session, SEEN, Some(stored)), Some(warning))
    }
}

/// A tab's listing observed: the first definition of each of its tools kept (and stored when
/// new).
#[derive(Debug)]
pub struct Observe {
    tab_id: i64,
    tools: Rc<TabTools>,
    load: SeenLoad,
    writes: Option<Writes>,
}

impl Observe {
    /// The listing `tools` of tab `tab_id`.
    pub fn new(tab_id: i64, tools: Rc<TabTools>) -> Observe {
        Observe {
            tab_id,
            tools,
            load: SeenLoad::default(),
            writes: None,
        }
    }
}

/// `validateArguments(...)` under way.
#[derive(Debug)]
pub struct Validate {
    request: ValidateRequest,
    listing: Option<Listing>,
}

impl Validate {
    /// Checks `request`'s arguments against its schema, or its tab's tool's.
    pub fn new(request: ValidateRequest) -> Validate {
        Validate {
            request,
            listing: None,
        }
    }
}

/// `inventory({query?, developer?})` under way.
#[derive(Debug)]
pub struct Inventory {
    query: Option<String>,
    developer: bool,
    /// Whether the open tabs were asked for.
    asked: bool,
    /// The tabs still to survey, last first (`None`: the open tabs not known yet), and those
    /// surveyed.
    left: Option<Vec<i64>>,
    listed: Vec<(OpenTab, Result<TabTools, String>)>,
    load: SeenLoad,
    saving: Option<(Writes, Result<Value, String>)>,
}

impl Inventory {
    /// The tools of every open tab (matching `query`; `developer`: the debugging tools too).
    pub fn new(query: Option<String>, developer: bool) -> Inventory {
        Inventory {
            query,
            developer,
            asked: false,
            left: None,
            listed: Vec::new(),
            load: SeenLoad::default(),
            saving: None,
        }
    }
}

/// `diagnose({tabId})` under way.
#[derive(Debug)]
pub struct Diagnose {
    listing: Listing,
    listed: Option<(Rc<TabTools>, Option<TabTools>)>,
}

impl Diagnose {
    /// Diagnoses tab `tab_id`.
    pub fn new(tab_id: i64) -> Diagnose {
        Diagnose {
            listing: Listing::raw(tab_id),
            listed: None,
        }
    }
}

/// `timeline({runId})` under way.
#[derive(Debug)]
pub struct Timeline {
    log: RunLogRead,
}

impl Timeline {
    /// The timeline of run `run_id`.
    pub fn new(run_id: &str) -> Timeline {
        Timeline {
            log: RunLogRead::new(run_id, 0),
        }
    }
}

impl Host {
    /// Steps a tab's listing observed ([`Observe`]) to its end.
    pub fn observe(&self, machine: &mut Observe, input: Option<Input>, _now_ms: f64) -> Step<()> {
        let input = match &mut machine.writes {
            Some(writes) => return writes.next(input).map_or(Step::Done(()), Step::Do),
            None => input,
        };
        if let Some(output) = self.load_seen(&mut machine.load, input) {
            return Step::Do(output);
        }
        if !self.with_seen(|seen| seen.observe(machine.tab_id, &machine.tools.tools)) {
            return Step::Done(());
        }
        let writes = machine.writes.insert(self.store_seen());
        writes.next(None).map_or(Step::Done(()), Step::Do)
    }

    /// Steps `validateArguments` ([`Validate`]) to its answer.
    pub fn validate(
        &self,
        machine: &mut Validate,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        let (tab_id, name, frame_id) = match &machine.request.against {
            Against::Schema(schema) => {
                return Step::Done(to_value(validate_arguments(schema, &machine.request.args)))
            }
            Against::Tool {
                tab_id,
                name,
                frame_id,
            } => (*tab_id, name, *frame_id),
        };
        let listing = (machine.listing).get_or_insert_with(|| Listing::kept(tab_id, Settle::Now));
        let listed = match self.list(listing, input, now_ms) {
            Step::Do(output) => return Step::Do(output),
            Step::Done(listed) => listed,
        };
        let schema =
            listed.and_then(|tools| Ok(tools.resolve(name, frame_id)?.input_schema.clone()));
        Step::Done(
            schema.and_then(|schema| to_value(validate_arguments(&schema, &machine.request.args))),
        )
    }

    /// Steps `inventory` ([`Inventory`]) to its answer: the open tabs surveyed
    /// [`INVENTORY_TABS_AT_ONCE`] at a time (each tab's title asked of its top frame while it
    /// is listed, each within its own deadline), so that a slow tab holds up no other of its
    /// group and a window of a hundred tabs is not asked all at once.
    pub fn inventory(
        &self,
        machine: &mut Inventory,
        input: Option<Input>,
        _now_ms: f64,
    ) -> Step<Result<Value, String>> {
        if let Some((writes, value)) = &mut machine.saving {
            return writes
                .next(input)
                .map_or_else(|| Step::Done(value.clone()), Step::Do);
        }
        if !machine.asked {
            machine.asked = true;
            return Step::Do(Output::Tabs(Tabs::List));
        }
        let (left, input) = match (&mut machine.left, input) {
            (None, input) => {
                let tabs = match input {
                    Some(Input::Tabs(tabs)) => tabs,
                    _ => Vec::new(),
                };
                (
                    machine
                        .left
                        .insert(tabs.iter().map(|t| t.id).rev().collect()),
                    None,
                )
            }
            (Some(left), Some(Input::Surveyed(surveyed))) => {
                for (tab_id, reply, tools) in surveyed {
                    let facts = facts_of(&reply).ok();
                    let tools = tools.map(Rc::unwrap_or_clone);
                    machine
                        .listed
                        .push((open_tab(tab_id, facts.as_ref()), tools));
                }
                (left, None)
            }
            (Some(left), input) => (left, input),
        };
        if !left.is_empty() {
            let at = left.len().saturating_sub(INVENTORY_TABS_AT_ONCE);
            let tab_ids: Vec<i64> = left.split_off(at).into_iter().rev().collect();
            return Step::Do(Output::Frames(Frames::Survey {
                tab_ids,
                message: request(),
                ms: TAB_FACTS_MS,
            }));
        }
        if let Some(output) = self.load_seen(&mut machine.load, input) {
            return Step::Do(output);
        }
        let listed = std::mem::take(&mut machine.listed);
        let open: Vec<i64> = listed.iter().map(|(t, _)| t.tab_id).collect();
        let (query, developer) = (machine.query.as_deref(), machine.developer);
        let (value, forgot) = self.with_seen(|seen| {
            let forgot = seen.keep_tabs(&open);
            (to_value(list(listed, seen, query, developer)), forgot)
        });
        if !forgot {
            return Step::Done(value);
        }
        let (writes, _) = machine.saving.insert((self.store_seen(), value.clone()));
        writes.next(None).map_or(Step::Done(value), Step::Do)
    }

    /// Steps `diagnose` ([`Diagnose`]) to its answer: the tab listed as its frames give it,
    /// the site policies read and applied to a copy (the listing as calls see it), the top
    /// frame asked for its facts.
    pub fn diagnose(
        &self,
        machine: &mut Diagnose,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        let tab_id = machine.listing.tab_id();
        match &mut machine.listed {
            None => match self.list(&mut machine.listing, input, now_ms) {
                Step::Do(output) => Step::Do(output),
                Step::Done(Err(error)) => Step::Done(Err(error)),
                Step::Done(Ok(listed)) => {
                    machine.listed = Some((listed, None));
                    Step::Do(read(Area::Local, SITES_KEY))
                }
            },
            Some((listed, shown @ None)) => {
                let mut copy = (**listed).clone();
                apply_stored(
                    read_back(input, "diagnose").and_then(store::sites),
                    &mut copy,
                );
                *shown = Some(copy);
                Step::Do(Output::Frames(Frames::Ask {
                    tab_id,
                    target: Target::TOP,
                    message: request(),
                    ms: TAB_FACTS_MS,
                }))
            }
            Some((listed, Some(shown))) => {
                let facts = match input {
                    Some(Input::Reply(reply)) => facts_of(&reply),
                    other => Err(format!(
                        "{} came for the page's facts",
                        super::io::unasked(other.as_ref())
                    )),
                };
                let mut listing = listing(listed, shown);
                listing.now_ms = now_ms;
                Step::Done(to_value(decide(
                    facts.as_ref().map_err(String::as_str),
                    &listing,
                )))
            }
        }
    }

    /// Steps `timeline` ([`Timeline`]) to its answer: the run's whole log, as a timeline.
    pub fn timeline(
        &self,
        machine: &mut Timeline,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        match self.run_log(&mut machine.log, input, now_ms) {
            Step::Do(output) => Step::Do(output),
            Step::Done(log) => {
                Step::Done(log.and_then(|log| to_value(crate::core::timeline::of_log(&log))))
            }
        }
    }
}

#[cfg(test)]
mod tests;
