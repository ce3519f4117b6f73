//! `webmcpHost.evaluate`, `toEval`, `replayDiff`: performs what the core's [`Evaluation`] and
//! [`ReplayDiff`] ask (page calls as `callTool` makes them, runs as `run` makes them, tool
//! listings, a run's log read back) and pushes each result to the open pages
//! (`{webmcpHostUi: "evalProgress", done, total, result}`).

use serde_json::{json, Map, Value};
use wasm_bindgen_futures::JsFuture;

use super::io::{now_ms, sleep};
use super::pages::push;
use crate::core::evals::plan::{EvaluateRequest, Evaluation, Next, Reply};
use crate::core::evals::record::{DiffNext, ReplayDiff};
use crate::core::gate::Asker;
use crate::core::ops::ReplaySource;
use crate::core::page::call::CallRequest;

/// Runs an eval suite on a tab; resolves to the evaluation's answer.
pub async fn evaluate(request: EvaluateRequest) -> Result<Value, String> {
    let default_model = match request.models.is_empty() {
        true => super::store::load_registry()
            .await?
            .resolve(None)
            .ok()
            .map(|m| m.name.clone()),
        false => None,
    };
    // `reload`: the page each case starts on is the one the suite started on.
    let first_page = match request.reload {
        true => Some(page_url("evaluate", request.tab_id).await?),
        false => None,
    };
    let suite = format!("eval_{}", super::io::random_id());
    let mut evaluation = Evaluation::new(request, default_model).with_suite(suite);
    loop {
        let reply = match evaluation.poll() {
            Next::Done(answer) => return Ok(answer),
            Next::Call {
                tab_id,
                name,
                args,
                timeout_ms,
            } => Reply::Called {
                answer: page(Asker::Smoke, tab_id, name, args, timeout_ms).await,
                now_ms: now_ms(),
            },
            Next::Run { request, .. } => {
                let started = now_ms();
                let answer = super::agent::run(request, None).await;
                Reply::Ran {
                    answer,
                    latency_ms: now_ms() - started,
                }
            }
            Next::Log { run_id } => Reply::Logged(super::runlog::run_log(&run_id, 0).await),
            Next::Reload { tab_id } => {
                let url = first_page.as_deref().unwrap_or_default();
                let reloaded = super::io::reload_tab(tab_id as f64, url, RELOAD_MS).await;
                Reply::Reloaded(reloaded.map(drop).map_err(|e| super::convert::describe(&e)))
            }
            Next::ListTools {
                tab_id, after_ms, ..
            } => {
                if after_ms > 0 {
                    let _ = JsFuture::from(sleep(after_ms)).await;
                }
                let tools = super::tab_tools(tab_id).await.map(|t| t.response());
                Reply::Listed {
                    tools,
                    now_ms: now_ms(),
                }
            }
        };
        if let Some(result) = evaluation.handle(reply) {
            let (done, total) = evaluation.progress();
            push(
                "evalProgress",
                json!({"done": done, "total": total, "result": result}),
            );
        }
    }
}

/// How long a page may take to load again (`reload`), ms.
pub(crate) const RELOAD_MS: u32 = crate::core::limits::EVAL_RELOAD_MS;

/// The URL of the tab's top frame, or why there is none (said for the operation `op`).
pub(crate) async fn page_url(op: &str, tab_id: i64) -> Result<String, String> {
    let top = super::chrome::frame_state(tab_id, 0).await;
    let top = top.ok_or_else(|| format!("{op}: tab {tab_id}: no such tab"))?;
    Some(top.url)
        .filter(|u| !u.is_empty())
        .ok_or_else(|| format!("{op}: tab {tab_id} shows no page"))
}

/// `toEval({runId, ...})`: an eval case made of a kept run's log.
pub async fn to_eval(run_id: &str, request: &Value) -> Result<Value, String> {
    let log = super::runlog::run_log(run_id, 0).await?;
    crate::core::evals::record::to_eval(request, &log)
}

/// `replayDiff({runId | transcript, tabId})`: the recorded calls played on the tab now.
pub async fn replay_diff(tab_id: i64, source: ReplaySource) -> Result<Value, String> {
    let mut diff = match source {
        ReplaySource::Run(run_id) => {
            let log = super::runlog::run_log(&run_id, 0).await?;
            ReplayDiff::of_run(tab_id, &run_id, &log)
        }
        ReplaySource::Transcript(text) => ReplayDiff::of_transcript(tab_id, &text)?,
    };
    loop {
        match diff.poll() {
            DiffNext::Done(answer) => return Ok(answer),
            DiffNext::ListTools(tab_id) => {
                let tools = super::tab_tools(tab_id).await.map(|t| t.response());
                diff.tools(tools);
            }
            DiffNext::Call {
                tab_id,
                name,
                args,
                timeout_ms,
            } => {
                let answer = page(Asker::Replay, tab_id, name, args, timeout_ms).await;
                diff.called(&answer);
            }
        }
    }
}

/// A page call as `callTool({tabId, name, args, timeoutMs})` makes it, through the gate.
async fn page(
    asker: Asker,
    tab_id: i64,
    name: String,
    args: Map<String, Value>,
    timeout_ms: u32,
) -> Value {
    let (frame_id, call, expect) = (None, None, None);
    let request = CallRequest {
        tab_id,
        name,
        args,
        frame_id,
        timeout_ms,
        call,
        expect,
    };
    super::gate::page_call(asker, request).await
}
