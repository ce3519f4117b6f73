//! The person's settings as the [`Host`] reads and writes them: the settings view
//! (`settings()`: [`SettingsView`], every key masked) and `configure`'s writes
//! ([`Configure`]: what is stored read, the core's plan written in order, the kept listings
//! forgotten once it ends, since the site policies apply to them).
//!
//! Invariant: a key is never answered, only its mask; `configure` writes a key only to
//! session storage (the core's plan says where each value goes).

use serde_json::Value;

use super::io::{Input, Output, Step, Storage};
use super::stored::{read, read_back, write};
use super::Host;
use crate::core::observe::collector::{self, COLLECTORS_KEY};
use crate::core::observe::cost::PRICES_KEY;
use crate::core::ops::checks::settings_view;
use crate::core::setup::configure::{self, Plan};
use crate::core::setup::store::{self, MIDDLEWARE_KEY, REGISTRY_KEY, SERVERS_KEY};
use crate::core::storage::Area::{Local, Session};

/// `settings()` under way: what it read so far.
#[derive(Debug)]
pub struct SettingsView {
    origin: String,
    got: Vec<Input>,
}

impl SettingsView {
    /// The settings view, for the extension whose origin is `origin` (its pages' URLs).
    pub fn new(origin: &str) -> SettingsView {
        SettingsView {
            origin: origin.to_owned(),
            got: Vec::new(),
        }
    }
}

/// What the settings view reads, in order.
fn view_read(at: usize) -> Option<Output> {
    Some(match at {
        0 => read(Local, REGISTRY_KEY),
        1 => read(Local, SERVERS_KEY),
        2 => Output::Storage(Storage::All { area: Session }),
        3 => read(Local, COLLECTORS_KEY),
        4 => read(Local, MIDDLEWARE_KEY),
        5 => read(Local, PRICES_KEY),
        _ => return None,
    })
}

/// `configure(request)` under way.
#[derive(Debug)]
pub struct Configure {
    request: Value,
    got: Vec<Input>,
    plan: Option<Plan>,
}

impl Configure {
    /// `configure(request)`: `{models?, default?, sites?, servers?, keys?, …}`.
    pub fn new(request: &Value) -> Configure {
        Configure {
            request: request.clone(),
            got: Vec::new(),
            plan: None,
        }
    }
}

/// What `configure` reads before it plans, in order.
const CONFIGURE_READS: [&str; 3] = [REGISTRY_KEY, SERVERS_KEY, COLLECTORS_KEY];

impl Host {
    /// `settings()` → the settings view (`core::ops::checks::settings_view`).
    pub fn settings(
        &self,
        machine: &mut SettingsView,
        input: Option<Input>,
        _now_ms: f64,
    ) -> Step<Result<Value, String>> {
        machine.got.extend(input);
        if let Some(output) = view_read(machine.got.len()) {
            return Step::Do(output);
        }
        let mut got = std::mem::take(&mut machine.got).into_iter().map(Some);
        let mut next = || read_back(got.next().flatten(), "settings");
        let view = (|| {
            let registry = store::registry(next()?)?;
            let servers = store::servers(next()?)?;
            let session = next().ok().flatten().unwrap_or(Value::Null);
            let collectors = next()?;
            let stored = collector::stored(collectors.clone());
            let routes = crate::core::setup::routes(&registry.models, &servers, &stored);
            let mut view = settings_view(&registry, &servers, &session, &routes, &machine.origin);
            view["middleware"] = next()?.unwrap_or_default();
            view["prices"] = next()?.unwrap_or_default();
            view["collectors"] = collectors.unwrap_or_default();
            Ok(view)
        })();
        Step::Done(view)
    }

    /// `configure(request)`: the writes of its plan in order (the first failure ends it),
    /// then its end; the kept listings are forgotten once it ends.
    pub fn configure(
        &self,
        machine: &mut Configure,
        input: Option<Input>,
        _now_ms: f64,
    ) -> Step<Result<Value, String>> {
        let step = self.configure_step(machine, input);
        if let Step::Done(_) = step {
            self.listings.borrow_mut().clear();
        }
        step
    }

    fn configure_step(
        &self,
        machine: &mut Configure,
        input: Option<Input>,
    ) -> Step<Result<Value, String>> {
        let Some(plan) = &mut machine.plan else {
            machine.got.extend(input);
            if let Some(key) = CONFIGURE_READS.get(machine.got.len()) {
                return Step::Do(read(Local, key));
            }
            let mut got = std::mem::take(&mut machine.got).into_iter().map(Some);
            let mut next = || read_back(got.next().flatten(), "configure");
            let stored = (|| {
                Ok::<_, String>(configure::Stored {
                    registry: next()?,
                    servers: next()?,
                    collectors: next()?,
                })
            })();
            let mut plan = match stored {
                Ok(stored) => configure::plan_over(&machine.request, stored),
                Err(error) => return Step::Done(Err(error)),
            };
            plan.writes.reverse();
            machine.plan = Some(plan);
            return self.configure_step(machine, None);
        };
        match input {
            Some(Input::Done(Err(error))) => {
                let write = plan.writes.pop().expect("the write that failed");
                return Step::Done(Err(format!("{}{error}", write.failure)));
            }
            Some(_) => {
                plan.writes.pop();
            }
            None => {}
        }
        match plan.writes.last() {
            Some(next) => Step::Do(write(next.area, &next.key, next.value.clone())),
            None => Step::Done(plan.end.clone()),
        }
    }
}

#[cfg(test)]
mod tests;
