//! Where a suite began: the origin its tab's top frame showed at the suite's start (every mode:
//! smoke, agent, simulate), read from a listing taken before anything else, and held by every
//! listing the suite takes before it acts or reads: before each smoke call, each agent run
//! (each case, model and run), each simulation's setup call and agent turn, and its DOM
//! reads. A case that took the tab to another site (a checkout that goes on to a payment
//! provider) leaves the later cases, and the later steps of its own, nothing to call or read
//! there: the step is not taken, and the case (or run) is an error naming both origins and no
//! more of the other site (not its URL, not its text).
//!
//! Pure: the machines list the tab (`Next::ListTools` of each); this reads what the listing
//! shows.

use crate::core::page::call::Listed as Decided;
use crate::core::page::tabs::Listed;

/// The origin a suite began on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Began {
    origin: String,
}

impl Began {
    /// The suite's start listing read: the origin its tab's top frame shows, or why the suite
    /// cannot hold one (each case is then an error: nothing runs where the origin is unknown).
    /// An opaque origin (`null`) holds nothing, as two opaque origins are never the same.
    pub fn read(listed: &Listed) -> Result<Began, String> {
        let unknown = "its origin is unknown, so no case runs";
        let tools = (listed.as_ref()).map_err(|why| {
            format!("the suite could not list its tab at its start ({why}): {unknown}")
        })?;
        match &tools.page {
            None => Err(format!("at the suite's start the tab showed no page (its top frame did not answer): {unknown}")),
            Some(page) if page.origin.is_empty() || page.origin == "null" => Err(format!(
                "at the suite's start the tab showed a page of no origin a suite can hold ({}): {unknown}",
                page.url
            )),
            Some(page) => Ok(Began {
                origin: page.origin.clone(),
            }),
        }
    }

    /// The origin.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// A listing taken before a step: the top frame's document (`None` when Chrome did not
    /// name it) when the tab shows the suite's origin, else why the step is not taken (the
    /// listing's own error, no page, or another origin, named with nothing more of it).
    /// Without `reload`, the error says how each case can start on the first page again.
    pub fn holds(&self, listed: &Listed, reload: bool) -> Result<Option<String>, String> {
        let tools = listed.as_ref().map_err(Clone::clone)?;
        let page =
            (tools.page.as_ref()).ok_or("the tab shows no page (its top frame did not answer)")?;
        if page.origin == self.origin {
            return Ok(tools.documents.get(&0).cloned());
        }
        let hint = match reload {
            true => "",
            false => "; with `reload: true` each case starts on the suite's first page",
        };
        Err(format!(
            "the tab shows {}, not {} where the suite began: nothing is called or read on another origin{hint}",
            page.origin, self.origin
        ))
    }
}

/// The tool `name` as a listing held to the suite's origin offers it, and the document it was
/// listed from: what the suite's call of it is decided on, sent to that document or nowhere
/// (`CallRequest::expect`), so a tab that moved on between the listing and the call gets
/// nothing. `None` when the listing cannot say (the call then decides on its own listing).
pub fn decided(tools: &Listed, name: &str) -> Option<Decided> {
    let tools = tools.as_ref().ok()?;
    let tool = tools.resolve(name, None).ok()?;
    Some(Decided {
        tool: tool.clone(),
        document_id: tools.target(tool).document_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::page::tabs::fixture;

    #[test]
    fn a_suite_holds_its_origin_and_names_no_more_of_another() {
        let began = Began::read(&fixture::listed("https://shop.test/", &[])).expect("began");
        assert_eq!(began.origin(), "https://shop.test");
        let mut tab = fixture::tab("https://shop.test/thanks?order=1", &[]);
        tab.documents.insert(0, "doc-2".into());
        let here = Ok(std::rc::Rc::new(tab));
        assert_eq!(began.holds(&here, false), Ok(Some("doc-2".into())));
        let away = fixture::listed("https://pay.test/session/secret-token", &[]);
        let why = began.holds(&away, true).expect_err("another origin");
        assert_eq!(why, "the tab shows https://pay.test, not https://shop.test where the suite began: nothing is called or read on another origin");
        assert!(!why.contains("secret-token"));
        let none = fixture::unanswered("No frame.");
        assert!(began
            .holds(&none, true)
            .unwrap_err()
            .contains("shows no page"));
        assert_eq!(began.holds(&Err("gone".into()), true), Err("gone".into()));
        // No origin to hold: an opaque one, or none at all.
        let mut blank = fixture::tab("about:blank", &[]);
        if let Some(page) = &mut blank.page {
            page.origin = "null".into();
        }
        assert!(Began::read(&Ok(std::rc::Rc::new(blank))).is_err());
        assert!(Began::read(&fixture::unanswered("No frame.")).is_err());
    }
}
