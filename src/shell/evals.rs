//! The runs the host's suites start (the evaluations and simulations, opened by the door as
//! the host's machines), performed as `run` makes them (`perform_run`).

use serde_json::json;
use wasm_bindgen_futures::JsFuture;

use super::io::sleep;
use crate::core::host::io::{Input, Runs};

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
