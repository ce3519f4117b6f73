//! The workbench's operations performed: `validateArguments`, `inventory`, `diagnose`,
//! `timeline`, and an MCP server's tools listed by hand (`listTools` with `server`: opened as a
//! run opens it, then kept as one session for the person's later listings and calls, closed
//! after 5 minutes unused; a call by hand is the host's, performed in `calls.rs`). The core (`core::workbench`,
//! `core::timeline`) decides; this lists tabs and frames (16 tabs at a time), asks the top
//! frame for its facts, reads the run log, and keeps the first definitions seen (`Seen`, in
//! `chrome.storage.session` too, so that a worker restart forgets none).

use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::{ask, chrome, kept, runlog, store, tab_tools, timer};
use crate::core::host::listing::Listing;
use crate::core::limits::{INVENTORY_TABS_AT_ONCE, TAB_FACTS_MS};
use crate::core::page::bridge::Target;
use crate::core::page::tabs::TabTools;
use crate::core::setup::store::Area;
use crate::core::workbench::diagnose::{diagnose as decide, facts_of, listing, request};
use crate::core::workbench::inventory::{inventory as list, open_tab, tab_ids, Seen};
use crate::core::workbench::server as by_hand;
use crate::core::workbench::validate::{validate_arguments, Against, ValidateRequest};

/// Where the first definitions are kept between workers.
const SEEN_KEY: &str = crate::core::storage::SEEN;

fn with_seen<T>(f: impl FnOnce(&mut Seen) -> T) -> T {
    super::state::host(|host| f(host.seen.borrow_mut().get_or_insert_with(Seen::default)))
}

/// Reads the kept first definitions once per worker (the closed tabs' forgotten).
async fn loaded() {
    if super::state::host(|host| host.seen.borrow().is_some()) {
        return;
    }
    let stored = store::read(Area::Session, SEEN_KEY).await;
    let mut seen = Seen::from_stored(&stored.ok().flatten().unwrap_or(Value::Null));
    seen.keep_tabs(&tab_ids(&chrome::tab_list().await));
    super::state::host(|host| {
        host.seen.borrow_mut().get_or_insert(seen);
    });
}

async fn save() {
    let stored = with_seen(|seen| seen.to_stored());
    if let Err(e) = store::put(Area::Session, SEEN_KEY, Some(&stored)).await {
        chrome::warn(&format!("webmcp-host: keeping the tools first seen: {e}"));
    }
}

/// Every listing of a tab passes here: the first definition of each tool is kept (and
/// stored when new).
pub(crate) fn observe(tab_id: i64, tools: Rc<TabTools>) {
    spawn_local(async move {
        loaded().await;
        if with_seen(|seen| seen.observe(tab_id, &tools.tools)) {
            save().await;
        }
    });
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

/// `inventory({query?, developer?})`: the open tabs listed [`INVENTORY_TABS_AT_ONCE`] at a time (each
/// tab's title asked of its top frame, its frames listed, each within its own deadline), so a
/// slow tab holds up no other of its group and a window of a hundred tabs is not asked all at
/// once.
pub(crate) async fn inventory(query: Option<String>, developer: bool) -> Result<Value, String> {
    let tab_ids = tab_ids(&chrome::tab_list().await);
    let mut listed = Vec::with_capacity(tab_ids.len());
    for group in tab_ids.chunks(INVENTORY_TABS_AT_ONCE) {
        let listings: Vec<_> = (group.iter().copied())
            .map(|tab_id| {
                timer::started(async move {
                    let facts = ask(tab_id, Target::TOP, &request(), TAB_FACTS_MS);
                    let tools = tab_tools(tab_id).await.map(std::rc::Rc::unwrap_or_clone);
                    let facts = facts_of(&facts.await).ok();
                    (open_tab(tab_id, facts.as_ref()), tools)
                })
            })
            .collect();
        for listing in listings {
            listed.extend(listing.await);
        }
    }
    loaded().await;
    let open: Vec<i64> = listed.iter().map(|(t, _)| t.tab_id).collect();
    let (value, forgot) = with_seen(|seen| {
        let forgot = seen.keep_tabs(&open);
        (
            to_value(list(listed, seen, query.as_deref(), developer)),
            forgot,
        )
    });
    if forgot {
        save().await;
    }
    value
}

/// `diagnose({tabId})`.
pub(crate) async fn diagnose(tab_id: i64) -> Result<Value, String> {
    let listed = super::list(Listing::raw(tab_id)).await?;
    let mut shown = (*listed).clone();
    crate::core::page::site::apply_stored(store::load_sites().await, &mut shown);
    let facts = facts_of(&ask(tab_id, Target::TOP, &request(), TAB_FACTS_MS).await);
    let mut listing = listing(&listed, &shown);
    listing.now_ms = super::io::now_ms();
    to_value(decide(facts.as_ref().map_err(String::as_str), &listing))
}

/// `timeline({runId})`.
pub(crate) async fn timeline(run_id: &str) -> Result<Value, String> {
    let log = runlog::run_log(run_id, 0).await?;
    to_value(crate::core::timeline::of_log(&log))
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
