//! The evaluation's waits and checks, as [`Evaluation`]'s: the tab on the suite's origin
//! before each smoke call and agent run ([`Began`](crate::core::evals::began::Began)), the
//! tools an agent case expects after a reload, and the tool of the next smoke call (the page
//! itself after a reload is awaited by the host's listing, `core::host::listing`).

use serde_json::json;

use super::super::wait::Seen;
use super::{flatten, Evaluation, Mode};
use crate::core::evals::began::decided;
use crate::core::page::tabs::Listed;

impl Evaluation {
    /// The page of the case (or run) under way could not be loaded afresh: its error.
    pub(super) fn unloaded(&mut self, why: String) {
        match self.request.mode {
            Mode::Smoke => self.finish_case("error", Some(why)),
            Mode::Agent | Mode::Simulate => self.ran(Err(why), 0.0),
        }
    }

    /// A listing before a smoke call or an agent run: the top frame's document when the tab
    /// shows the suite's origin, else why nothing is done there.
    pub(super) fn holds(&self, tools: &Listed) -> Result<Option<String>, String> {
        match &self.began {
            Some(Ok(began)) => began.holds(tools, self.request.reload),
            Some(Err(why)) => Err(why.clone()),
            None => Err("the suite's origin was not read at its start".into()),
        }
    }

    /// The tools the case under way expects, each once, optional ones left out.
    pub(super) fn expected_tools(&self) -> Vec<String> {
        let mut calls = Vec::new();
        if let Some(case) = self.request.cases.get(self.case) {
            flatten(
                case.expected_call.as_deref().unwrap_or_default(),
                &mut calls,
            );
        }
        let mut names: Vec<String> = Vec::new();
        for call in calls.into_iter().filter(|c| !c.optional) {
            if !names.contains(&call.function_name) {
                names.push(call.function_name.clone());
            }
        }
        names
    }

    /// Agent mode after a reload: a listing while waiting for the expected tools; the run
    /// starts once all are listed, or when the wait is over (what the page lacks then is the
    /// run's to meet).
    pub(super) fn settled(&mut self, tools: &Listed, now_ms: f64) {
        // A listing that shows a page must show it on the suite's origin.
        let elsewhere = match tools {
            Ok(found) if found.page.is_some() => self.holds(tools).err(),
            _ => None,
        };
        if let Some(why) = elsewhere {
            self.settling.clear();
            return self.ran(Err(format!("before this run, {why}")), 0.0);
        }
        let timeout_ms = self.request.timeout_ms;
        while let Some(name) = self.settling.first() {
            match self.settle.0.listed(name, tools, now_ms, timeout_ms) {
                Seen::Call => {
                    self.settling.remove(0);
                }
                Seen::ListAgain(ms) => {
                    self.settle.1 = ms;
                    return;
                }
                Seen::Missing(_) => {
                    self.settling.clear();
                    return;
                }
            }
        }
    }

    /// Smoke: a listing while waiting for the next call's tool.
    pub(super) fn listed(&mut self, tools: Listed, now_ms: f64) {
        let Some(Ok(steps)) = &self.steps else { return };
        let Some(step) = steps.get(self.calls.len()).cloned() else {
            return;
        };
        let timeout_ms = self.request.timeout_ms;
        // Nothing is called where the tab is not on the suite's origin, or cannot be listed.
        if let Err(why) = self.holds(&tools) {
            let index = self.calls.len() + 1;
            (self.calls)
                .push(json!({"name": step.name, "args": step.args, "made": false, "error": why}));
            return self.finish_case(
                "error",
                Some(format!("step {index} ({}): {why}", step.name)),
            );
        }
        let Err((wait, after_ms)) = &mut self.wait else {
            return;
        };
        match wait.listed(&step.name, &tools, now_ms, timeout_ms) {
            Seen::Call => self.wait = Ok(decided(&tools, &step.name)),
            Seen::ListAgain(ms) => *after_ms = ms,
            Seen::Missing(why) => {
                let index = self.calls.len() + 1;
                // Never called: the record says so (and the error, what the tab offers).
                self.calls.push(
                    json!({"name": step.name, "args": step.args, "made": false, "error": why}),
                );
                self.finish_case(
                    "error",
                    Some(format!("step {index} ({}): {why}", step.name)),
                );
            }
        }
    }
}
