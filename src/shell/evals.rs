//! `webmcpHost.evaluate`, `toEval`, `replayDiff`: performs what the core's [`Evaluation`] and
//! [`ReplayDiff`] ask (page calls as `callTool` makes them, runs as `run` makes them, tool
//! listings, a run's log read back, a simulation's DOM read in the document it names) and
//! pushes each result to the open pages
//! (`{webmcpHostUi: "evalProgress", done, total, result}`).

use serde_json::{json, Map, Value};
use wasm_bindgen_futures::JsFuture;

use super::io::{now_ms, sleep};
use super::pages::push;
use crate::core::evals::plan::{EvaluateRequest, Evaluation, Next, Reply};
use crate::core::evals::record::{DiffNext, ReplayDiff};
use crate::core::evals::simulate::SimulateRequest;
use crate::core::gate::Asker;
use crate::core::host::listing::Listing;
use crate::core::limits::DOM_QUERY_MS;
use crate::core::ops::ReplaySource;
use crate::core::page::bridge::{parse_dom_reply, FrameRequest, Reply as Frame};
use crate::core::page::call::{CallAnswer, CallRequest};

/// Runs an eval suite on a tab; resolves to the evaluation's answer.
pub async fn evaluate(request: EvaluateRequest) -> Result<Value, String> {
    let (default_model, first_page) =
        suite_start(request.models.is_empty(), request.reload, request.tab_id).await?;
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
                expect,
            } => {
                let request = CallRequest {
                    expect: expect.map(|decided| *decided),
                    ..CallRequest::asked(tab_id, name, args, timeout_ms)
                };
                Reply::Called {
                    answer: super::asked_call(Asker::Smoke, request).await,
                    now_ms: now_ms(),
                }
            }
            Next::Run { request, .. } => {
                let started = now_ms();
                let answer = super::agent::run_ended(request, None).await;
                Reply::Ran {
                    answer,
                    latency_ms: now_ms() - started,
                }
            }
            Next::Log { run_id } => Reply::Logged(super::runlog::run_log(&run_id, 0).await),
            Next::Reload { tab_id } => Reply::Reloaded(reload(tab_id, first_page.as_deref()).await),
            Next::ListTools {
                tab_id,
                after_ms,
                settle,
                ..
            } => Reply::Listed {
                tools: super::list(Listing::kept(tab_id, settle).after(after_ms)).await,
                now_ms: now_ms(),
            },
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

/// Plays a simulations suite on a tab (`evaluate({mode: "simulate"})`); resolves to its answer.
pub async fn simulate(request: SimulateRequest) -> Result<Value, String> {
    use crate::core::evals::simulate::{Next, Reply, Simulate};
    let (default_model, first_page) =
        suite_start(request.models.is_empty(), request.reload, request.tab_id).await?;
    let suite = format!("sim_{}", super::io::random_id());
    let mut simulation = Simulate::new(request, default_model, suite);
    loop {
        let reply = match simulation.poll(now_ms()) {
            Next::Done(answer) => return Ok(answer),
            Next::Reload { tab_id } => Reply::Reloaded(reload(tab_id, first_page.as_deref()).await),
            Next::ListTools {
                tab_id,
                after_ms,
                settle,
            } => Reply::Listed(super::list(Listing::kept(tab_id, settle).after(after_ms)).await),
            Next::Call {
                tab_id,
                name,
                args,
                timeout_ms,
                expect,
            } => {
                let request = CallRequest {
                    expect: expect.map(|decided| *decided),
                    ..CallRequest::asked(tab_id, name, args, timeout_ms)
                };
                Reply::Called(super::asked_call(Asker::Simulate, request).await)
            }
            Next::Run {
                request, within_ms, ..
            } => {
                // The conversation's deadline stops the run where it is.
                let run_id = request["runId"].as_str().unwrap_or_default().to_owned();
                let ms = within_ms.min(u64::from(u32::MAX)) as u32;
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = JsFuture::from(sleep(ms)).await;
                    let stop =
                        json!({"runId": run_id, "reason": "the simulation's time budget ran out"});
                    let _ = super::agent::stop(&stop);
                });
                Reply::Ran(super::agent::run_ended(request, None).await)
            }
            Next::QueryDom {
                tab_id,
                target,
                queries,
            } => {
                let asked = queries.len();
                let message = FrameRequest::QueryDom { queries }.to_message();
                Reply::Queried(
                    match super::ask(tab_id, target, &message, DOM_QUERY_MS).await {
                        Frame::Answered(Ok(text)) => parse_dom_reply(&text, asked),
                        Frame::Answered(Err(e)) | Frame::Failed(e) => Err(e),
                        Frame::TimedOut => Err(format!("no answer within {DOM_QUERY_MS} ms")),
                    },
                )
            }
        };
        if let Some(result) = simulation.handle(reply, now_ms()) {
            let (done, total) = simulation.progress();
            push(
                "evalProgress",
                json!({"done": done, "total": total, "result": result}),
            );
        }
    }
}

/// What a suite starts from: the registry's default model when the request names none, and
/// (`reload`) the page each case starts on: the one the suite started on.
async fn suite_start(
    default_wanted: bool,
    reload: bool,
    tab_id: i64,
) -> Result<(Option<String>, Option<String>), String> {
    let default_model = match default_wanted {
        true => super::store::load_registry()
            .await?
            .resolve(None)
            .ok()
            .map(|m| m.name.clone()),
        false => None,
    };
    let first_page = match reload {
        true => Some(page_url("evaluate", tab_id).await?),
        false => None,
    };
    Ok((default_model, first_page))
}

/// The tab brought back to the suite's first page, freshly loaded, or why not.
async fn reload(tab_id: i64, first_page: Option<&str>) -> Result<(), String> {
    let url = first_page.unwrap_or_default();
    let reloaded =
        super::io::reload_tab(tab_id as f64, url, crate::core::limits::EVAL_RELOAD_MS).await;
    reloaded.map(drop).map_err(|e| super::convert::describe(&e))
}

/// The URL of the tab's top frame, or why there is none (said for the operation `op`).
pub(crate) async fn page_url(op: &str, tab_id: i64) -> Result<String, String> {
    let top = super::chrome::frame_state(tab_id, 0).await;
    crate::core::page::call::FrameState::page_url(op, tab_id, top)
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
            DiffNext::ListTools { tab_id, settle } => {
                diff.tools(super::list(Listing::kept(tab_id, settle)).await);
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
) -> CallAnswer {
    let request = CallRequest::asked(tab_id, name, args, timeout_ms);
    super::asked_call(asker, request).await
}
