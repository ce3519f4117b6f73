//! A case × model × run's result, written once its attempt is over, and the evaluation's
//! answer.

use serde_json::{json, Value};

use super::evidence::overruled;
use super::read::turn_value;
use super::{write, EndedBy, Simulate, UserSide};
use crate::core::evals::messages::Mode;
use crate::core::evals::report::{summary, Format};

impl Simulate {
    /// The attempt under way is over: its result, and on to the next.
    pub(super) fn finish(&mut self, now_ms: f64) {
        let Some(a) = self.attempt.take() else { return };
        let case = &self.request.cases[self.case];
        let model = self.agent_model().to_owned();
        let ended = a.ended;
        let duration = match (a.started_ms, a.ended_ms.or(Some(now_ms))) {
            (Some(start), Some(end)) => (end - start).max(0.0).round(),
            _ => 0.0,
        };
        let mut verdict = a.verdict.clone();
        if let Some(v) = verdict.as_mut() {
            v["turnsUsed"] = json!(a.turns.len());
            v["durationMs"] = json!(duration);
            v["endedBy"] = json!(ended.unwrap_or(EndedBy::MaxTurns).name());
            // A pass rests only on what the application answered the agent's calls: each
            // item of its evidence quotes one of those results, or it is overruled.
            if v["passed"] == true {
                let evidence = v["evidence"].as_array().cloned().unwrap_or_default();
                if let Some(why) = overruled(&evidence, &a.turns) {
                    v["passed"] = json!(false);
                    v["overruled"] = json!(why);
                }
            }
        }
        let dom_failed = a.assertions.iter().find(|r| r["outcome"] == "fail");
        let (outcome, reason) = if let Some(error) = &a.error {
            ("error", error.clone())
        } else if let Some(failed) = dom_failed {
            (
                "fail",
                format!(
                    "DOM {} {}: expected {}, got {}",
                    failed["assertion"]["selector"].as_str().unwrap_or_default(),
                    failed["kind"].as_str().unwrap_or_default(),
                    crate::core::evals::messages::short(&failed["expected"]),
                    crate::core::evals::messages::short(&failed["actual"]),
                ),
            )
        } else if let Some(v) = &verdict {
            let reasoning = v["reasoning"].as_str().unwrap_or_default();
            let first = reasoning.lines().next().unwrap_or_default().to_owned();
            match v["passed"] == true {
                true => ("pass", first),
                false => ("fail", v["overruled"].as_str().map_or(first, str::to_owned)),
            }
        } else if !a.assertions.is_empty() {
            (
                "pass",
                format!("{} DOM assertions passed", a.assertions.len()),
            )
        } else {
            ("error", "the case was not judged".into())
        };
        let user_model = match case.user {
            UserSide::Scenario { .. } => Some(
                self.request
                    .user_model
                    .clone()
                    .unwrap_or_else(|| model.clone()),
            ),
            UserSide::Message(_) => None,
        };
        let mut result = json!({
            "name": case.name,
            "caseIndex": self.case,
            "runIndex": self.run,
            "model": model,
            "outcome": outcome,
            "reason": reason,
            "setupCalls": a.setup.iter().enumerate().map(|(i, s)| {
                let mut call = json!({"index": i + 1, "functionName": s.function_name, "arguments": s.arguments, "outcome": if s.error.is_some() { "error" } else { "pass" }});
                if let Some(r) = &s.result { call["result"] = r.clone(); }
                if let Some(e) = &s.error { call["error"] = json!(e); }
                call
            }).collect::<Vec<_>>(),
            "conversation": {
                "turns": a.turns.iter().map(turn_value).collect::<Vec<_>>(),
                "turnsUsed": a.turns.len(),
                "durationMs": duration,
                "endedBy": ended.map(EndedBy::name),
            },
            "assertionResults": a.assertions,
            "latencyMs": duration,
            "tokens": a.tokens,
            "recording": a.recording.to_value(),
            "simulation": Value::Object(case.raw.clone()),
        });
        if let Some(closing) = &a.closing {
            result["conversation"]["closingMessage"] = json!(closing);
        }
        if let Some(v) = verdict {
            result["verdict"] = v;
        }
        if let Some(error) = &a.error {
            result["error"] = json!(error);
        }
        if let Some(user) = user_model {
            result["userModel"] = json!(user);
        }
        if case.success_criteria.is_some() {
            if let Some(judge) = &self.request.judge_model {
                result["judgeModel"] = json!(judge);
                if *judge == model {
                    result["judgeIsAgent"] = json!(true);
                }
            }
        }
        if a.replay.is_some() {
            result["replayed"] = json!(true);
        }
        self.results.push(result);
        // Run by run, then model by model, then case by case.
        self.run += 1;
        if self.run >= self.request.runs {
            self.run = 0;
            self.model += 1;
            if self.model >= self.models.len() {
                self.model = 0;
                self.case += 1;
            }
        }
    }

    pub(super) fn answer(&self) -> Value {
        let mut answer = summary(Mode::Simulate, self.results.clone());
        answer["suite"] = json!(self.suite);
        answer["simulations"] = json!(write(&self.request.cases));
        if let Some(judge) = &self.request.judge_model {
            answer["judgeModel"] = json!(judge);
            if self.models.contains(judge) {
                answer["judgeIsAgent"] = json!(true);
            }
        }
        match self.request.format {
            Some(format) if format != Format::Json => {
                answer["report"] = json!(format.render(&answer));
                answer
            }
            _ => answer,
        }
    }
}
