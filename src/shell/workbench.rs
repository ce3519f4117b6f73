//! The workbench's operations performed: `validateArguments`, `inventory`, `diagnose`,
//! `timeline`. The core (`core::workbench`, `core::timeline`) decides; this lists tabs and
//! frames, asks the top frame for its facts, reads the run log, and keeps the first definitions
//! seen (`Seen`, for as long as the worker lives).

use std::cell::RefCell;

use serde_json::Value;

use super::{ask, chrome, frame_listings, runlog, store, tab_tools};
use crate::core::bridge::Target;
use crate::core::page::tabs::TabTools;
use crate::core::workbench::diagnose::{diagnose as decide, facts_of, listing, request};
use crate::core::workbench::inventory::{inventory as list, open_tab, tab_ids, Seen};
use crate::core::workbench::validate::{validate_arguments, Against, ValidateRequest};

thread_local! {
    static SEEN: RefCell<Seen> = RefCell::new(Seen::default());
}

/// Every listing of a tab passes here: the first definition of each tool is kept.
pub(crate) fn observe(tab_id: i64, tools: &TabTools) {
    SEEN.with(|seen| seen.borrow_mut().observe(tab_id, &tools.tools));
}

fn to_value(value: impl serde::Serialize) -> Result<Value, String> {
    serde_json::to_value(value).map_err(|e| e.to_string())
}

/// `validateArguments(...)`.
pub(crate) async fn validate(request: ValidateRequest) -> Result<Value, String> {
    let schema = match request.against {
        Against::Schema(schema) => schema,
        Against::Tool {
            tab_id,
            name,
            frame_id,
        } => tab_tools(tab_id)
            .await?
            .resolve(&name, frame_id)?
            .input_schema
            .clone(),
    };
    to_value(validate_arguments(&schema, &request.args))
}

/// `inventory({query?, developer?})`: every open tab listed, one after the other.
pub(crate) async fn inventory(query: Option<String>, developer: bool) -> Result<Value, String> {
    // Every top frame is asked for its title at once; the tabs are then listed in turn.
    let asked: Vec<_> = (tab_ids(&chrome::tab_list().await).into_iter())
        .map(|tab_id| (tab_id, ask(tab_id, Target::TOP, &request(), 2_000)))
        .collect();
    let mut listed = Vec::with_capacity(asked.len());
    for (tab_id, facts) in asked {
        let facts = facts_of(&facts.await).ok();
        listed.push((
            open_tab(tab_id, facts.as_ref()),
            tab_tools(tab_id).await.map(std::rc::Rc::unwrap_or_clone),
        ));
    }
    let open: Vec<i64> = listed.iter().map(|(t, _)| t.tab_id).collect();
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        seen.keep_tabs(&open);
        to_value(list(listed, &seen, query.as_deref(), developer))
    })
}

/// `diagnose({tabId})`.
pub(crate) async fn diagnose(tab_id: i64) -> Result<Value, String> {
    let listed = TabTools::from_frames(frame_listings(tab_id).await?);
    let mut shown = listed.clone();
    crate::core::site::apply_stored(store::load_sites().await, &mut shown);
    let facts = facts_of(&ask(tab_id, Target::TOP, &request(), 2_000).await);
    to_value(decide(
        facts.as_ref().map_err(String::as_str),
        &listing(&listed, &shown),
    ))
}

/// `timeline({runId})`.
pub(crate) async fn timeline(run_id: &str) -> Result<Value, String> {
    let log = runlog::run_log(run_id, 0).await?;
    to_value(crate::core::timeline::of_log(&log))
}
