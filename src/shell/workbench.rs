//! The workbench's operations performed: `validateArguments`, `inventory`, `diagnose`,
//! `timeline`, and an MCP server's tools listed and called by hand (`listTools` / `callTool`
//! with `server`: opened as a run opens it, then kept as one session for the person's later
//! listings and calls, closed after 5 minutes unused). The core (`core::workbench`,
//! `core::timeline`) decides; this lists tabs and frames (16 tabs at a time), asks the top
//! frame for its facts, reads the run log, and keeps the first definitions seen (`Seen`, in
//! `chrome.storage.session` too, so that a worker restart forgets none).

use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen_futures::spawn_local;

use super::io::random_id;
use super::{ask, chrome, kept, mcp, runlog, store, tab_tools, timer, waits};
use crate::core::gate::{Asker, McpCall};
use crate::core::host::listing::Listing;
use crate::core::limits::{INVENTORY_TABS_AT_ONCE, TAB_FACTS_MS};
use crate::core::mcp::source::McpServerConfig;
use crate::core::mcp::tools::namespaced;
use crate::core::mcp::tools::McpTool;
use crate::core::page::bridge::Target;
use crate::core::page::tabs::TabTools;
use crate::core::setup::store::Area;
use crate::core::workbench::diagnose::{diagnose as decide, facts_of, listing, request};
use crate::core::workbench::inventory::{inventory as list, open_tab, tab_ids, Seen};
use crate::core::workbench::server::{self as by_hand, ServerCallRequest};
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
/// server sees a person's calls as one session (a pool of its own, held by the driver).
const BY_HAND: kept::Kept = kept::Kept::ByHand;

/// A use of a server by hand, from its start to its [`done`] (the host counts them).
fn begin(name: &str) {
    super::state::host(|host| host.use_begins(name));
}

/// The end of a use: the server's connection is closed when the host says, at the timer it
/// asks for, that the server has been unused since (`core::host::uses`).
fn done(name: &str) {
    let idle = super::state::host(|host| host.use_ends(name));
    timer::after(idle.after_ms, move || {
        if super::state::host(|host| host.idle(&idle)) {
            kept::forget(BY_HAND, &idle.server);
        }
    });
}

/// A configured server's kept connection (opened as a run opens one: its key, its sign-in) and
/// its tools as listed now: one `tools/list` on the kept session, or a new connection when there
/// is none, the server's settings or key changed, or the kept one no longer answers (a listing
/// is safe to send twice; a call is never sent again).
async fn open_server(name: &str) -> Result<(McpServerConfig, Open), String> {
    let servers = store::load_servers().await?;
    let server = by_hand::find_server(&servers, name)?.clone();
    let (open, new) = kept::connection_or_new(BY_HAND, &server).await?;
    if new {
        let tools = open.tools.to_vec();
        return Ok((server, (open, tools)));
    }
    match mcp::relist(&open.client).await {
        Ok(tools) => Ok((server, (open, tools))),
        Err(_) => {
            kept::forget(BY_HAND, name);
            let open = kept::connection(BY_HAND, &server).await?;
            let tools = open.tools.to_vec();
            Ok((server, (open, tools)))
        }
    }
}

type Open = (Rc<kept::Open>, Vec<McpTool>);

/// `listTools({server})`.
pub(crate) async fn server_tools(name: &str) -> Result<Value, String> {
    begin(name);
    let opened = open_server(name).await;
    done(name);
    let (server, (_, tools)) = opened?;
    Ok(by_hand::tools_response(&server, &tools))
}

/// `callTool({server, name, args, timeoutMs?})`: planned by the core, confirmed by the person
/// (`pending`) when the tool acts, then sent within `timeoutMs` on the server's kept session.
pub(crate) async fn server_call(request: ServerCallRequest) -> Result<Value, String> {
    begin(&request.server);
    let answer = call_by_hand(&request).await;
    done(&request.server);
    answer
}

async fn call_by_hand(request: &ServerCallRequest) -> Result<Value, String> {
    let (server, (open, tools)) = open_server(&request.server).await?;
    let planned = match by_hand::plan_call(&server, &tools, request) {
        Err(refused) => return Ok(refused),
        Ok(planned) => planned,
    };
    let run_id = format!("{}{}", by_hand::MANUAL_RUN_PREFIX, random_id());
    let (tool, args) = (planned.tool.clone(), request.args.clone());
    // The gate first (a `block` names the tool as a run knows it, or by its own name).
    let run_name = namespaced(server.namespace.as_deref(), &tool.name);
    let pass = match super::gate::pass(Asker::ByHand, &[&tool.name, &run_name]).await {
        Ok(pass) => pass,
        Err(error) => return Ok(crate::core::gate::refused(&error)),
    };
    if let Some(question) = planned.question {
        let names = (server.name.as_str(), tool.name.as_str());
        if !waits::confirm_in_extension((&run_id, "call"), names, &args, question).await {
            return Ok(crate::core::confirm::declined());
        }
    }
    let client = open.client.clone();
    let permit = pass.permit(McpCall {
        tool,
        arguments: args,
    });
    let call = async move { Ok(mcp::call(client, permit).await) };
    Ok(match timer::limit(request.timeout_ms, call).await {
        Ok(Some(result)) => {
            let auth = open.client.borrow().session.auth().cloned();
            let secrets = crate::core::mcp::secrets_of(open.key.as_deref(), auth.as_ref());
            by_hand::call_answer(&planned.tool, result, &secrets)
        }
        _ => by_hand::timed_out(request),
    })
}
