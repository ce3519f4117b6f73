//! Listing a tab as the [`Host`] performs it, for every caller (`listTools`, a page call
//! without a fresh kept listing, a run's relisting, an evaluation, a simulation, a crawl,
//! `replayDiff`, an audit, `inventory`, `diagnose`): every frame asked at once, the bridge
//! injected once into a tab whose scripts are orphaned and the frames asked again, the site
//! policies applied, the listing kept for the page calls that follow, and, when the caller
//! asks for it, the tab listed again until its page is ready ([`core::page::ready`]).
//!
//! The shell sees one [`Output`] at a time (a pause, the frames asked, the bridge injected)
//! and answers each with one [`Input`] through [`Host::list`]; the caller gets the tools typed ([`Listed`]), never `listTools`'
//! JSON to parse again.
//!
//! Invariant: a listing is kept only if the kept listings were not forgotten since its frames
//! were asked (a tool change reported meanwhile makes it stale already).
//!
//! [`core::page::ready`]: crate::core::page::ready

use std::rc::Rc;

use super::io::{unasked, Frames, Input, Output, Step};
use super::Host;
pub use crate::core::page::ready::Settle;
use crate::core::page::ready::{Ready, ReadyWait};
use crate::core::page::site::{self, SitePolicy};
use crate::core::page::tabs::{orphaned, FrameAnswer, Listed, TabTools};

/// One listing under way.
#[derive(Debug)]
pub struct Listing {
    tab_id: i64,
    /// Applied the site policies and kept in the host (every caller but `diagnose`).
    kept: bool,
    ready: Option<ReadyWait>,
    injected: bool,
    /// The kept listings' epoch when the frames were asked.
    epoch: u64,
    phase: Phase,
}

#[derive(Debug)]
enum Phase {
    /// Not started, or a pause over: ask the frames (after `after_ms`, when not 0).
    Start {
        after_ms: u32,
    },
    /// Waiting for a pause.
    Sleeping,
    /// Waiting for the frames.
    Asked,
    /// Waiting for the bridge to be injected; the frames' first answers, used if it fails.
    Injecting {
        answers: Vec<FrameAnswer>,
        sites: Option<Result<Vec<SitePolicy>, String>>,
    },
    Done,
}

impl Listing {
    /// The tab's listing as calls use it: the site policies applied, kept in the host; its
    /// page as settled as `settle` says.
    pub fn kept(tab_id: i64, settle: Settle) -> Listing {
        Listing {
            tab_id,
            kept: true,
            ready: match settle {
                Settle::Now => None,
                Settle::Loaded => Some(ReadyWait::loaded()),
                Settle::AfterLoad => Some(ReadyWait::after_load()),
            },
            injected: false,
            epoch: 0,
            phase: Phase::Start { after_ms: 0 },
        }
    }

    /// [`Listing::kept`] after a pause of `after_ms` (0: none).
    pub fn after(mut self, after_ms: u32) -> Listing {
        self.phase = Phase::Start { after_ms };
        self
    }

    /// The tab's listing as its frames gave it: no site policy applied, nothing kept
    /// (`diagnose` compares it with the listing as calls see it).
    pub fn raw(tab_id: i64) -> Listing {
        Listing {
            kept: false,
            ..Listing::kept(tab_id, Settle::Now)
        }
    }

    /// The tab.
    pub fn tab_id(&self) -> i64 {
        self.tab_id
    }
}

impl Host {
    /// Feeds the input of the last effect (`None` for the first) at `now_ms` and says what to
    /// do next. An input the effect did not ask for ends the listing with an error (a bug in
    /// the shell, said as such).
    pub fn list(&self, listing: &mut Listing, input: Option<Input>, now_ms: f64) -> Step<Listed> {
        let tab_id = listing.tab_id;
        let phase = std::mem::replace(&mut listing.phase, Phase::Done);
        let (answers, sites) = match (phase, input) {
            (Phase::Start { after_ms }, None) if after_ms > 0 => {
                listing.phase = Phase::Sleeping;
                return Step::Do(Output::Sleep { ms: after_ms });
            }
            (Phase::Start { .. }, None) | (Phase::Sleeping, Some(Input::Slept)) => {
                listing.epoch = self.listings.borrow().epoch();
                listing.phase = Phase::Asked;
                let sites = listing.kept;
                return Step::Do(Output::Frames(Frames::List { tab_id, sites }));
            }
            (Phase::Asked, Some(Input::Listed { answers, sites })) => match answers {
                Ok(answers) if !listing.injected && orphaned(&answers) => {
                    listing.injected = true;
                    listing.phase = Phase::Injecting { answers, sites };
                    return Step::Do(Output::Frames(Frames::Inject { tab_id }));
                }
                answers => (answers, sites),
            },
            (Phase::Injecting { .. }, Some(Input::Done(Ok(())))) => {
                listing.phase = Phase::Asked;
                let sites = listing.kept;
                return Step::Do(Output::Frames(Frames::List { tab_id, sites }));
            }
            (Phase::Injecting { answers, sites }, Some(Input::Done(Err(_)))) => {
                (Ok(answers), sites)
            }
            (_, input) => {
                return Step::Done(Err(format!(
                    "internal error: {} came where the listing of tab {tab_id} did not ask for it",
                    unasked(input.as_ref())
                )));
            }
        };
        let listed = answers.map(|answers| self.listed(listing, answers, sites, now_ms));
        let Some(wait) = &mut listing.ready else {
            return Step::Done(listed);
        };
        match wait.listed(&listed, now_ms) {
            Ready::Go => Step::Done(listed),
            Ready::ListAgain(ms) => {
                listing.phase = Phase::Sleeping;
                Step::Do(Output::Sleep { ms })
            }
            Ready::Failed(why) => Step::Done(Err(why)),
        }
    }

    /// The frames' answers merged, the site policies applied and the listing kept.
    fn listed(
        &self,
        listing: &Listing,
        answers: Vec<FrameAnswer>,
        sites: Option<Result<Vec<SitePolicy>, String>>,
        now_ms: f64,
    ) -> Rc<TabTools> {
        let mut tools = TabTools::from_frames(answers);
        if !listing.kept {
            return Rc::new(tools);
        }
        let sites = sites.unwrap_or_else(|| Err("the site policies could not be read".into()));
        site::apply_stored(sites, &mut tools);
        let tools = Rc::new(tools);
        self.keep_listing(listing.tab_id, now_ms, tools.clone(), listing.epoch);
        (self.listed.borrow_mut()).push((listing.tab_id, tools.clone()));
        tools
    }
}

/// A listing played to its end for a test of a machine that asks for one: the frames answer
/// as `frames` says at each listing (the site policies: none), pauses pass on the clock
/// `now_ms`, an injection succeeds.
#[cfg(test)]
pub(crate) fn played(
    host: &Host,
    mut listing: Listing,
    now_ms: &mut f64,
    mut frames: impl FnMut() -> Vec<FrameAnswer>,
) -> Listed {
    let mut input = None;
    loop {
        input = Some(match host.list(&mut listing, input.take(), *now_ms) {
            Step::Done(listed) => return listed,
            Step::Do(Output::Sleep { ms }) => {
                *now_ms += f64::from(ms);
                Input::Slept
            }
            Step::Do(Output::Frames(Frames::List { .. })) => Input::Listed {
                answers: Ok(frames()),
                sites: Some(Ok(Vec::new())),
            },
            Step::Do(Output::Frames(Frames::Inject { .. })) => Input::Done(Ok(())),
            Step::Do(other) => panic!("a listing asked for {other:?}"),
        });
    }
}

#[cfg(test)]
mod tests;
