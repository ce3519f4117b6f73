//! The drive's count of a run's tokens and cost: each model step's provider report becomes a
//! [`StepUsage`] (unknown when the provider reported none), priced, and sent into the run
//! ([`Input::Usage`]) just before the step's output ends: the run emits it as the `CUSTOM`
//! event [`CUSTOM_USAGE`](crate::core::agui::CUSTOM_USAGE) and sums it, for its answer and
//! its last event.

use serde_json::Value;

use super::Drive;
use crate::core::observe::cost::{step_cost, Prices};
use crate::core::provider::usage::{RunUsage, StepUsage, Usage};
use crate::core::run::Input;

/// What the drive keeps of the run's use.
#[derive(Debug, Default)]
pub(super) struct Meter {
    /// The step of the model call in progress.
    pub(super) step: usize,
    /// The provider's report of the call in progress (tokens, finish reason).
    pub(super) report: Option<(Option<Usage>, Option<String>)>,
    prices: Prices,
}

impl Drive {
    /// The price table the run's steps are priced with (the person's, read at the start).
    pub fn set_prices(&mut self, prices: Prices) {
        self.usage.prices = prices;
    }

    /// The model steps' use so far (the run answer's `usage` is its
    /// [`RunUsage::to_value`]).
    pub fn usage(&self) -> &RunUsage {
        self.run.usage()
    }

    /// The model step's output ended: its use goes into the run's events.
    pub(super) fn step_used(&mut self) {
        let (usage, finish_reason) = self.usage.report.take().unwrap_or((None, None));
        let model = &self.setup.model;
        let provider = serde_json::to_value(model.provider).unwrap_or(Value::Null);
        let step = StepUsage {
            step: self.usage.step,
            model: model.name.clone(),
            model_id: model.model.clone(),
            provider: provider.as_str().unwrap_or_default().to_owned(),
            usage,
            finish_reason,
            cost: step_cost(
                &self.usage.prices,
                &model.name,
                &model.model,
                usage.as_ref(),
            ),
        };
        self.run.handle(Input::Usage(step));
    }
}
