//! Whether a tab's listing shows a page ready to work on: the rule for every place that lists
//! a tab right after a load it caused (an evaluation's `reload`, a crawled page, an audit probe
//! that loaded the page again) and before each agent turn of a simulation.
//!
//! A listing taken while the tab loads can meet the old document going, the new one not yet
//! answering, or the new one still parsing (its tools not all registered): none of these is
//! the page's answer. The listing is taken again every [`PAGE_READY_POLL_MS`] until the top
//! frame answers from a document that has been parsed (`document.readyState` past `loading`:
//! a frame that never finishes loading does not hold a page back) and, after a load, until two
//! listings in a row offer the same tools (a page that registers tools at its `load` event);
//! only when
//! [`PAGE_READY_MS`] have passed since the first listing does the wait fail, saying what it saw
//! last. A tab that is gone fails at once.
//!
//! Pure: the worker lists the tab and says when (its clock); this decides.

use super::tabs::Listed;

pub use crate::core::limits::{PAGE_READY_MS, PAGE_READY_POLL_MS};

/// How settled the caller wants the tab's page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// As it is now: one listing.
    Now,
    /// Its document parsed (`ReadyWait::loaded`): before working on a page the host did not
    /// load itself.
    Loaded,
    /// After a load the host caused: parsed, and the same tools twice in a row
    /// (`ReadyWait::after_load`).
    AfterLoad,
}

/// What to do after a listing.
#[derive(Debug, Clone, PartialEq)]
pub enum Ready {
    /// The page is there, loaded, its tools settled: go on with this listing.
    Go,
    /// Not yet: list again after this many ms.
    ListAgain(u32),
    /// The budget is spent, or the tab is gone: why, with what was seen.
    Failed(String),
}

/// The wait for one tab's page to be ready.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReadyWait {
    first_ms: Option<f64>,
    /// After a load: the tools of the last ready listing, which the next must repeat.
    settle: bool,
    last_tools: Option<Vec<String>>,
}

impl ReadyWait {
    /// The wait after a load the host caused: the page loaded, and its tools the same in two
    /// listings in a row (a page that registers tools at its `load` event).
    pub fn after_load() -> ReadyWait {
        ReadyWait {
            settle: true,
            ..ReadyWait::default()
        }
    }

    /// The wait before working on a page the host did not load itself: the page loaded.
    pub fn loaded() -> ReadyWait {
        ReadyWait::default()
    }

    /// A listing (the tab's tools, or why it could not be listed) made at `now_ms`.
    pub fn listed(&mut self, listing: &Listed, now_ms: f64) -> Ready {
        let seen = match state(listing) {
            State::Gone(why) => return Ready::Failed(why),
            State::Ready(_) if !self.settle => return Ready::Go,
            State::Ready(tools) => match self.last_tools.replace(tools.clone()) {
                Some(before) if before == tools => return Ready::Go,
                _ => format!(
                    "its tools were still changing (now: {})",
                    super::tabs::offered(tools.iter().map(String::as_str), 20)
                ),
            },
            State::NotYet(why) => {
                self.last_tools = None;
                why
            }
        };
        let first = *self.first_ms.get_or_insert(now_ms);
        let waited = match now_ms.is_finite() && first.is_finite() {
            true => (now_ms - first).max(0.0),
            false => f64::from(PAGE_READY_MS), // no usable clock: one listing is all
        };
        let left = f64::from(PAGE_READY_MS) - waited;
        if left > 0.0 {
            return Ready::ListAgain(PAGE_READY_POLL_MS.min(left.ceil() as u32).max(1));
        }
        Ready::Failed(format!(
            "the tab's page was not ready after {waited:.0} ms (budget {PAGE_READY_MS} ms): {seen}"
        ))
    }
}

enum State {
    /// Loaded and answering: its tools' names.
    Ready(Vec<String>),
    /// Not yet, and what was seen.
    NotYet(String),
    /// Never: the tab is gone.
    Gone(String),
}

/// What a listing shows of the tab's page.
fn state(listing: &Listed) -> State {
    let listing = match listing {
        // Chrome's words for a tab that is no more.
        Err(why) if why.contains("No tab with id") || why.contains("no such tab") => {
            return State::Gone(format!("the tab is gone: {why}"))
        }
        Err(why) => return State::NotYet(format!("the tab could not be listed: {why}")),
        Ok(listing) => listing,
    };
    let Some(page) = &listing.page else {
        // The top frame did not answer: say what it said, when it said something.
        let problem = (listing.problems.iter()).find(|p| p.frame_id == 0);
        return State::NotYet(match problem {
            Some(problem) => format!("the page did not answer ({})", problem.message),
            None => "the page did not answer".into(),
        });
    };
    if page.loading {
        return State::NotYet(format!("the page {} was still loading", page.url));
    }
    State::Ready(listing.tools.iter().map(|t| t.name.clone()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::page::tabs::fixture;

    fn page(loading: bool, tools: &[&str]) -> Listed {
        match loading {
            true => fixture::loading("http://127.0.0.1/shop"),
            false => fixture::listed("http://127.0.0.1/shop", tools),
        }
    }

    fn no_answer() -> Listed {
        fixture::unanswered("the message port closed")
    }

    #[test]
    fn a_loaded_page_goes_at_once_when_the_host_did_not_load_it() {
        assert_eq!(
            ReadyWait::loaded().listed(&page(false, &["a"]), 0.0),
            Ready::Go
        );
        // No tools is an answer too: the page offers none.
        assert_eq!(
            ReadyWait::loaded().listed(&page(false, &[]), 0.0),
            Ready::Go
        );
    }

    #[test]
    fn a_page_loading_or_not_answering_is_listed_again_until_it_is_ready() {
        let mut wait = ReadyWait::loaded();
        assert_eq!(
            wait.listed(&no_answer(), 1_000.0),
            Ready::ListAgain(PAGE_READY_POLL_MS)
        );
        assert_eq!(
            wait.listed(&page(true, &[]), 1_100.0),
            Ready::ListAgain(PAGE_READY_POLL_MS)
        );
        let failed = Err("tab 3: Frame with ID 0 is showing error page".to_owned());
        assert_eq!(
            wait.listed(&failed, 1_200.0),
            Ready::ListAgain(PAGE_READY_POLL_MS)
        );
        assert_eq!(wait.listed(&page(false, &["a"]), 1_300.0), Ready::Go);
    }

    #[test]
    fn after_a_load_the_tools_must_hold_still_for_two_listings() {
        let mut wait = ReadyWait::after_load();
        assert_eq!(
            wait.listed(&page(false, &["a"]), 0.0),
            Ready::ListAgain(PAGE_READY_POLL_MS)
        );
        // A tool registered at the page's load event: still settling.
        assert_eq!(
            wait.listed(&page(false, &["a", "b"]), 100.0),
            Ready::ListAgain(PAGE_READY_POLL_MS)
        );
        assert_eq!(wait.listed(&page(false, &["a", "b"]), 200.0), Ready::Go);
        // A listing that did not answer in between starts the comparison again.
        let mut wait = ReadyWait::after_load();
        assert!(matches!(
            wait.listed(&page(false, &["a"]), 0.0),
            Ready::ListAgain(_)
        ));
        assert!(matches!(
            wait.listed(&no_answer(), 100.0),
            Ready::ListAgain(_)
        ));
        assert!(matches!(
            wait.listed(&page(false, &["a"]), 200.0),
            Ready::ListAgain(_)
        ));
        assert_eq!(wait.listed(&page(false, &["a"]), 300.0), Ready::Go);
    }

    #[test]
    fn the_budget_spent_fails_with_what_was_seen_last() {
        let mut wait = ReadyWait::loaded();
        assert!(matches!(
            wait.listed(&page(true, &[]), 5_000.0),
            Ready::ListAgain(_)
        ));
        // The last poll is cut to what is left of the budget.
        assert_eq!(
            wait.listed(&page(true, &[]), 5_000.0 + f64::from(PAGE_READY_MS) - 30.0),
            Ready::ListAgain(30)
        );
        let Ready::Failed(why) = wait.listed(&no_answer(), 5_000.0 + f64::from(PAGE_READY_MS))
        else {
            panic!("the budget is spent")
        };
        assert!(why.contains(&format!("after {PAGE_READY_MS} ms")), "{why}");
        assert!(why.contains("the message port closed"), "{why}");
        let mut wait = ReadyWait::after_load();
        wait.listed(&page(false, &["a"]), 0.0);
        let Ready::Failed(why) = wait.listed(&page(false, &["b"]), f64::from(PAGE_READY_MS)) else {
            panic!("the budget is spent")
        };
        assert!(why.contains("still changing (now: b)"), "{why}");
    }

    #[test]
    fn a_tab_that_is_gone_fails_at_once_and_a_clock_that_is_not_a_number_lists_once() {
        let gone = Err("tab 9: No tab with id: 9.".to_owned());
        let Ready::Failed(why) = ReadyWait::loaded().listed(&gone, 0.0) else {
            panic!("a closed tab is final")
        };
        assert!(why.starts_with("the tab is gone"), "{why}");
        assert!(matches!(
            ReadyWait::loaded().listed(&page(true, &[]), f64::NAN),
            Ready::Failed(_)
        ));
    }
}
