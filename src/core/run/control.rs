//! `events({runId})` and `stop({runId, reason?})` read: the run they name, and why it stops.
//! Invariant: a request without a string `runId` names no run.

use serde_json::Value;

/// Why a run stops when `stop` gives no reason.
pub const STOPPED_BY_THE_PERSON: &str = "stopped by the person";

/// A request about a run already going.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// The run it names.
    pub run_id: String,
    /// Why the run stops (for `stop`).
    pub reason: String,
}

impl Control {
    /// Reads `{runId, reason?}`.
    pub fn parse(request: &Value) -> Result<Control, String> {
        let text = |key: &str| request.get(key).and_then(Value::as_str).map(str::to_owned);
        Ok(Control {
            run_id: text("runId").ok_or("`runId` is required")?,
            reason: text("reason").unwrap_or_else(|| STOPPED_BY_THE_PERSON.into()),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_control_names_its_run_and_a_reason() {
        let stop = Control::parse(&json!({"runId": "r1", "reason": "enough"})).expect("a run");
        assert_eq!(
            (stop.run_id.as_str(), stop.reason.as_str()),
            ("r1", "enough")
        );
        let events = Control::parse(&json!({"runId": "r2"})).expect("a run");
        assert_eq!(events.reason, STOPPED_BY_THE_PERSON);
        for bad in [json!({}), json!({"runId": 3}), json!(null)] {
            assert_eq!(Control::parse(&bad), Err("`runId` is required".into()));
        }
    }
}
