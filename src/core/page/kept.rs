//! The tabs' listings kept between page calls, so that a call does not list every frame of its
//! tab again.
//!
//! A kept listing is only ever a guess of what the call means: the call names the document its
//! tool was listed from (Chrome delivers it there or nowhere) and the tool's version (the frame
//! runs the tool only while its definition is the listed one), and a call on a kept listing
//! that finds the tool unknown, changed or its document gone lists the tab again, once, and
//! decides again ([`super::call::PageCall`]). A listing is forgotten when a frame of its tab
//! says its tools changed, when the settings change (site policies apply to it), and after
//! [`KEPT_MS`]; at most [`KEPT_TABS`] tabs are kept.
//!
//! Time enters as a value: the shell passes its clock in. A listing made while a forget
//! happened (it may predate what was forgotten) is not kept: the shell notes [`Kept::epoch`]
//! before it lists and hands it back to [`Kept::put`].

use std::rc::Rc;

use super::tabs::TabTools;

/// How long a listing is kept (ms).
pub const KEPT_MS: f64 = crate::core::limits::KEPT_LISTING_MS;
/// How many tabs' listings are kept at most (the oldest goes first).
pub const KEPT_TABS: usize = 16;

/// The kept listings, newest last.
#[derive(Debug, Default)]
pub struct Kept {
    tabs: Vec<(i64, f64, Rc<TabTools>)>,
    epoch: u64,
}

impl Kept {
    /// The tab's listing kept at `now_ms`, if there is one young enough.
    pub fn get(&self, tab_id: i64, now_ms: f64) -> Option<Rc<TabTools>> {
        self.tabs
            .iter()
            .find(|(tab, at, _)| *tab == tab_id && (0.0..KEPT_MS).contains(&(now_ms - at)))
            .map(|(_, _, tools)| tools.clone())
    }

    /// A count of the forgets so far: a listing started at one epoch is kept only in it.
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Keeps `tools` as the tab's listing, made at `now_ms`, if nothing was forgotten since
    /// `epoch` (when the listing started).
    pub fn put(&mut self, tab_id: i64, now_ms: f64, tools: Rc<TabTools>, epoch: u64) {
        if epoch != self.epoch {
            return;
        }
        self.tabs.retain(|(tab, _, _)| *tab != tab_id);
        if self.tabs.len() >= KEPT_TABS {
            self.tabs.remove(0);
        }
        self.tabs.push((tab_id, now_ms, tools));
    }

    /// Forgets the tab's listing (a frame's tools changed, or the tab is gone).
    pub fn forget(&mut self, tab_id: i64) {
        self.epoch += 1;
        self.tabs.retain(|(tab, _, _)| *tab != tab_id);
    }

    /// Forgets every listing (the settings changed).
    pub fn clear(&mut self) {
        self.epoch += 1;
        self.tabs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_is_kept_for_its_tab_until_forgotten_or_old() {
        let mut kept = Kept::default();
        let listing = Rc::new(TabTools::default());
        kept.put(7, 1_000.0, listing.clone(), kept.epoch());
        assert!(kept.get(7, 1_000.0).is_some());
        assert!(kept.get(8, 1_000.0).is_none(), "another tab");
        assert!(kept.get(7, 1_000.0 + KEPT_MS).is_none(), "too old");
        assert!(kept.get(7, 999.0).is_none(), "a clock that went back");
        kept.forget(7);
        assert!(kept.get(7, 1_000.0).is_none());
        kept.put(7, 0.0, listing.clone(), kept.epoch());
        kept.clear();
        assert!(kept.get(7, 0.0).is_none());
    }

    #[test]
    fn a_listing_that_started_before_a_forget_is_not_kept() {
        let mut kept = Kept::default();
        let started = kept.epoch();
        kept.forget(3);
        kept.put(7, 0.0, Rc::new(TabTools::default()), started);
        assert!(kept.get(7, 0.0).is_none());
        kept.put(7, 0.0, Rc::new(TabTools::default()), kept.epoch());
        assert!(kept.get(7, 0.0).is_some());
    }

    #[test]
    fn at_most_so_many_tabs_are_kept_the_oldest_going_first() {
        let mut kept = Kept::default();
        for tab in 0..=KEPT_TABS as i64 {
            kept.put(tab, 0.0, Rc::new(TabTools::default()), kept.epoch());
        }
        assert!(kept.get(0, 0.0).is_none());
        assert!(kept.get(1, 0.0).is_some());
        assert!(kept.get(KEPT_TABS as i64, 0.0).is_some());
    }
}
