//! The workbench in the worker: the first definitions seen (the host's `Observe`, driven here
//! for every listing) and the tabs an inventory surveys, asked here all at once
//! (`validateArguments`, `inventory`, `diagnose`, `timeline`, and `listTools` with `server`
//! are the door's machines).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::{ask, drive, tab_tools, timer};
use crate::core::host::io::{Listed, Reply, Target};
use crate::core::host::workbench::Observe;
use crate::core::page::tabs::TabTools;

/// Every listing of a tab passes here: the first definition of each tool is kept (and
/// stored when new).
pub(crate) fn observe(tab_id: i64, tools: Rc<TabTools>) {
    let mut observe = Observe::new(tab_id, tools);
    spawn_local(drive(move |host, input, now| {
        host.observe(&mut observe, input, now)
    }));
}

/// Surveys tabs all at once (`Frames::Survey`): each top frame asked `message`, within `ms`,
/// while the tab is listed.
pub(crate) async fn survey(
    tab_ids: Vec<i64>,
    message: &Value,
    ms: u32,
) -> Vec<(i64, Reply, Listed)> {
    let surveys: Vec<_> = (tab_ids.into_iter())
        .map(|tab_id| {
            let facts = ask(tab_id, Target::TOP, message, ms);
            // A listing is driven by the host, which may ask for a survey: boxed.
            let tools: Pin<Box<dyn Future<Output = Listed>>> = Box::pin(tab_tools(tab_id));
            timer::started(async move { (tab_id, facts.await, tools.await) })
        })
        .collect();
    let mut surveyed = Vec::with_capacity(surveys.len());
    for survey in surveys {
        surveyed.extend(survey.await);
    }
    surveyed
}
