//! What a call was decided on, and whether it still holds when the call goes out: the tool
//! as listed and the document it was listed from ([`Listed`]), checked against the listing
//! at hand (the same origin and definition; the same document) and against the frame's
//! state just before sending.

use super::browser::FrameState;
use crate::core::page::bridge::Target;
use crate::core::page::tool::PageTool;

/// A page tool as a caller decided on it: its definition, and the document its frame listed it
/// from (`None` when Chrome gave no document id).
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    /// The tool as listed.
    pub tool: PageTool,
    /// The document it was listed from.
    pub document_id: Option<String>,
}

/// Whether the tool found now is the one a run was given: same frame, origin and definition.
/// A page that navigated, or re-registered a tool with another definition, does not get the
/// call (the person and the model agreed to the old one).
pub fn still_same_page_tool(given: &PageTool, now: &PageTool) -> Result<(), String> {
    if given.origin != now.origin {
        return Err(format!(
            "`{}` now belongs to {} (the run began with it on {}); the call was not sent",
            given.name, now.origin, given.origin
        ));
    }
    // A site policy changed since (`allowActing`) is not a new definition: the call is
    // decided on the policy as it is now.
    let mut now = now.clone();
    now.annotations.allow_acting = given.annotations.allow_acting;
    if *given != now {
        return Err(format!(
            "the page changed the definition of `{}` during this run; the call was not sent. Start a new run to use the new definition",
            given.name
        ));
    }
    Ok(())
}

/// Where a call decided on `expected` goes: the document it was listed from, whatever the
/// listing at hand says. A frame that holds another document now (it navigated, even within
/// its site, to a look-alike of the tool) does not get the call; a listing that knows no
/// document for the frame leaves the decided one (Chrome delivers there or nowhere).
pub fn still_listed_document(expected: &Listed, now: Target) -> Result<Target, String> {
    match (&expected.document_id, &now.document_id) {
        (Some(decided), Some(held)) if decided != held => Err(format!(
            "the frame that offered `{}` holds another document since this run listed its tools; the call was not sent",
            expected.tool.name
        )),
        (Some(decided), _) => Ok(Target {
            document_id: Some(decided.clone()),
            ..now
        }),
        (None, _) => Ok(now),
    }
}

/// Whether the frame still holds the document `name` was listed from, as
/// `webNavigation.getFrame` says just before the call is sent: a frame that navigated since (to
/// another site, perhaps, with a tool of the same name that acts) does not get the call.
pub fn still_listed(name: &str, target: &Target, now: Option<&FrameState>) -> Result<(), String> {
    let Some(listed) = &target.document_id else {
        return Ok(());
    };
    match now {
        Some(now) if now.document_id.as_ref() == Some(listed) => Ok(()),
        Some(now) => Err(format!(
            "the frame that offered `{name}` holds another document ({}) since its tools were listed; the call was not sent",
            if now.url.is_empty() { "unknown URL" } else { &now.url }
        )),
        None => Err(format!(
            "the frame that offered `{name}` is gone since its tools were listed; the call was not sent"
        )),
    }
}
