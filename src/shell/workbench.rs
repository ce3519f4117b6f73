//! The workbench in the worker: the first definitions seen (the host's `Observe`, driven here
//! for every listing) and the tabs an inventory surveys, asked here all at once
//! (`validateArguments`, `inventory`, `diagnose`, `timeline` are the door's machines). An MCP server's tools listed by hand (`listTools` with `server`: opened as a run opens
//! it, then kept as one session for the person's later listings and calls, closed after 5
//! minutes unused; a call by hand is the host's, performed in `calls.rs`).

use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::{ask, drive, kept, store, tab_tools, timer};
use crate::core::host::workbench::Observe;
use crate::core::page::bridge::{Reply, Target};
use crate::core::page::tabs::{Listed, TabTools};
use crate::core::workbench::server as by_hand;

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

/// The servers called by hand: one kept connection (one MCP session) each, so that a stateful
/// server sees a person's calls as one session (a pool of its own, held by the driver). A call
/// by hand is the host's (`calls.rs`).
const BY_HAND: kept::Kept = kept::Kept::ByHand;

/// `listTools({server})`: one use of the server's kept connection (the host counts them, and
/// says when it has been idle long enough to close).
pub(crate) async fn server_tools(name: &str) -> Result<Value, String> {
    super::state::host(|host| host.use_begins(name));
    let listed = async {
        let servers = store::load_servers().await?;
        let server = by_hand::find_server(&servers, name)?.clone();
        let (_, tools) = kept::listed_now(BY_HAND, &server).await?;
        Ok::<_, String>(by_hand::tools_response(&server, &tools))
    };
    let answer = listed.await;
    kept::close_when_idle(BY_HAND, super::state::host(|host| host.use_ends(name)));
    answer
}
