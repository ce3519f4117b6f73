//! The gate as the [`Host`] applies it to a call outside runs, whichever its kind: a page call
//! ([`super::call::HostCall`] screens through this), an MCP call by hand, an exposed tool's
//! call. The person's stored layers are taken from the host ([`super::StoredLayers`], read
//! from storage only when the host does not know them, and kept unless they changed while
//! they were read), the call screened by [`crate::core::gate`], and held for its `delay`;
//! then the [`Pass`] that alone gives the call its permit.
//!
//! Invariant: this is the one door to the gate for operations; a run screens its calls in its
//! own drive (the stored layers and its own, with its `observe` layers told).

use super::io::{unasked, Input, Output, Step, Storage};
use super::Host;
use crate::core::gate::{self, Asker, Pass};
use crate::core::setup::store::{Area, MIDDLEWARE_KEY};

/// One call being screened.
#[derive(Debug)]
pub struct Screening {
    asker: Asker,
    names: Vec<String>,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    Start,
    /// The layers asked for at this epoch of the host's kept layers.
    Reading(u64),
    /// Passed, held for its delay.
    Holding(Pass),
    Done,
}

impl Screening {
    /// A call of the tool named any of `names` (its name as a run knows it, and its own),
    /// asked for by `asker`.
    pub fn new(asker: Asker, names: &[&str]) -> Screening {
        Screening {
            asker,
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            phase: Phase::Start,
        }
    }
}

impl Host {
    /// Feeds the input of the last effect (`None` for the first) and says what to do next.
    /// An input the screening did not ask for refuses the call (a bug in the shell, said as
    /// such).
    pub fn screen(
        &self,
        screening: &mut Screening,
        input: Option<Input>,
    ) -> Step<Result<Pass, String>> {
        let phase = std::mem::replace(&mut screening.phase, Phase::Done);
        let stored = match (phase, input) {
            (Phase::Start, None) => {
                let layers = self.layers.borrow();
                match layers.get() {
                    Some(stored) => Ok(stored),
                    None => {
                        screening.phase = Phase::Reading(layers.epoch());
                        return Step::Do(Output::Storage(Storage::Read {
                            area: Area::Local,
                            key: MIDDLEWARE_KEY.into(),
                        }));
                    }
                }
            }
            (Phase::Reading(epoch), Some(Input::Read(stored))) => {
                if let Ok(stored) = &stored {
                    self.layers.borrow_mut().keep(epoch, stored.clone());
                }
                stored
            }
            (Phase::Holding(pass), Some(Input::Slept)) => return Step::Done(Ok(pass)),
            (_, input) => {
                return Step::Done(Err(format!(
                    "internal error: {} came where the gate did not ask for it",
                    unasked(input.as_ref())
                )));
            }
        };
        let names: Vec<&str> = screening.names.iter().map(String::as_str).collect();
        match gate::screen_stored(stored, screening.asker, &names) {
            Err(error) => Step::Done(Err(error)),
            Ok(mut pass) => match pass.take_delay() {
                0 => Step::Done(Ok(pass)),
                ms => {
                    screening.phase = Phase::Holding(pass);
                    Step::Do(Output::Sleep { ms })
                }
            },
        }
    }
}

#[cfg(test)]
mod tests;
