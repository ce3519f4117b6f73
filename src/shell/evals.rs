//! `webmcpHost.evaluate`, `toEval`, `replayDiff`: the host's suites ([`Evaluating`],
//! [`Simulating`], [`Replaying`]) driven to their answers; and the runs they start, performed
//! as `run` makes them (`perform_run`).

use serde_json::{json, Value};
use wasm_bindgen_futures::JsFuture;

use super::io::{random_id, sleep};
use crate::core::evals::plan::EvaluateRequest;
use crate::core::evals::simulate::SimulateRequest;
use crate::core::host::io::{Input, Runs};
use crate::core::host::suite::{Evaluating, Replaying, Simulating};
use crate::core::ops::ReplaySource;

/// Runs an eval suite on a tab; resolves to the evaluation's answer.
pub async fn evaluate(request: EvaluateRequest) -> Result<Value, String> {
    let suite = format!("eval_{}", random_id());
    let mut e = Evaluating::new(request, suite, format!("call_{}", random_id()));
    super::drive(|host, input, now| host.evaluate(&mut e, input, now)).await
}

/// Plays a simulations suite on a tab (`evaluate({mode: "simulate"})`); resolves to its answer.
pub async fn simulate(request: SimulateRequest) -> Result<Value, String> {
    let suite = format!("sim_{}", random_id());
    let mut s = Simulating::new(request, suite, format!("call_{}", random_id()));
    super::drive(|host, input, now| host.simulate(&mut s, input, now)).await
}

/// `replayDiff({runId | transcript, tabId})`: the recorded calls played on the tab now.
pub async fn replay_diff(tab_id: i64, source: ReplaySource) -> Result<Value, String> {
    let mut r = Replaying::new(tab_id, source, format!("call_{}", random_id()));
    super::drive(|host, input, now| host.replay_diff(&mut r, input, now)).await
}

/// `toEval({runId, ...})`: an eval case made of a kept run's log.
pub async fn to_eval(run_id: &str, request: &Value) -> Result<Value, String> {
    let log = super::runlog::run_log(run_id, 0).await?;
    crate::core::evals::record::to_eval(request, &log)
}

/// Performs one output of the [`Runs`] family: a run started as `run` starts it (and stopped
/// once `within_ms` passed), or a run's log read.
pub(crate) async fn perform_run(runs: Runs) -> Input {
    match runs {
        Runs::Start {
            request,
            within_ms,
            stop_reason,
        } => {
            if let Some(ms) = within_ms {
                let run_id = request["runId"].clone();
                let ms = ms.min(u64::from(u32::MAX)) as u32;
                wasm_bindgen_futures::spawn_local(async move {
                    let _ = JsFuture::from(sleep(ms)).await;
                    let _ = super::agent::stop(&json!({"runId": run_id, "reason": stop_reason}));
                });
            }
            Input::Ran(super::agent::run_ended(request, None).await)
        }
        Runs::Log { run_id } => Input::Logged(super::runlog::run_log(&run_id, 0).await),
    }
}
