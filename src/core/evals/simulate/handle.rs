//! [`Simulate::handle`]: what happened to the request a case's stage made, and where the case
//! goes next, a function an answer of a stage (the stages are `mod.rs`'s, their requests
//! `step.rs`'s): the suite's start (its origin read), the setup's listings and calls, the
//! user's and the agent's turns, the DOM's and the judge's verdicts; every listing before a
//! step held to the suite's origin.

use serde_json::Value;

use super::read::{add, judge_dom, past, ran, ran_outcome, setup_failure, turn_calls, verdict};
use super::*;
use crate::core::evals::began::decided;
use crate::core::evals::messages::run_tokens;
use crate::core::evals::wait::Seen;
use crate::core::page::tabs::undelivered;

impl Simulate {
    /// What happened to the last [`Next`], at `now_ms`; the result it completed, if any.
    pub fn handle(&mut self, reply: Reply, now_ms: f64) -> Option<Value> {
        let before = self.results.len();
        let (timeout_ms, reload) = (self.request.timeout_ms, self.request.reload);
        if self.began.is_none() {
            if let Reply::Listed(tools) = reply {
                self.began = Some(Began::read(&tools));
            }
            return None;
        }
        let Some(Ok(began)) = self.began.clone() else {
            return None;
        };
        let case = self.request.cases.get(self.case)?.clone();
        let a = self.attempt.as_mut()?;
        a.asked = None;
        match (a.stage.clone(), reply) {
            (Stage::Reload, Reply::Reloaded(Ok(()))) => a.stage = Stage::Loaded,
            (Stage::Loaded, Reply::Listed(tools)) => match began.holds(&tools, reload) {
                Ok(_) => a.stage = setup_at(0),
                Err(why) => a.fail(format!("after the reload, {why}")),
            },
            (Stage::Reload, Reply::Reloaded(Err(why))) => {
                a.fail(format!("the tab could not be reloaded: {why}"))
            }
            (Stage::Setup { index, wait, .. }, Reply::Listed(tools)) => {
                match began.holds(&tools, reload) {
                    Ok(_) => a.setup_listed(&case, index, wait, &tools, now_ms, timeout_ms),
                    Err(why) => {
                        let name = &case.setup[index].function_name;
                        a.fail(format!("setup call {} ({name}): {why}", index + 1))
                    }
                }
            }
            (Stage::Setup { index, .. }, Reply::Called(answer)) => {
                a.setup_called(&case, index, &answer)
            }
            (Stage::User, Reply::Ran(answer)) => a.user_ran(&case, answer, now_ms),
            (Stage::Agent(message), Reply::Listed(tools)) => {
                a.agent_listed(&case, message, began.holds(&tools, reload), now_ms)
            }
            (Stage::Agent(message), Reply::Ran(answer)) => {
                a.agent_ran(&case, message, answer, now_ms)
            }
            (Stage::Dom, Reply::Listed(tools)) => match began.holds(&tools, reload) {
                Ok(document_id) => {
                    a.stage = Stage::DomRead(Target {
                        frame_id: 0,
                        document_id,
                    })
                }
                Err(why) => a.fail(format!("before the DOM assertions, {why}")),
            },
            (Stage::DomRead(_), Reply::Queried(Err(why))) if undelivered(&why) => a.fail(format!(
                "the DOM assertions were not read: the tab no longer held the document listed before them ({why})"
            )),
            (Stage::DomRead(_), Reply::Queried(observed)) => a.dom_read(&case, observed),
            (Stage::Judge, Reply::Ran(answer)) => a.judged(answer),
            (_, _) => a.fail("the host answered out of turn".into()),
        }
        if a.stage == Stage::Over {
            self.finish(now_ms);
        }
        (self.results.len() > before).then(|| self.results.last().cloned())?
    }
}

impl Attempt {
    /// A listing while the setup call at `index` waits for its tool.
    fn setup_listed(
        &mut self,
        case: &Simulation,
        index: usize,
        mut wait: ToolWait,
        tools: &Listed,
        now_ms: f64,
        timeout_ms: u32,
    ) {
        let name = &case.setup[index].function_name;
        match wait.listed(name, tools, now_ms, timeout_ms) {
            Seen::Call => {
                self.decided = decided(tools, name);
                self.stage = Stage::Setup {
                    index,
                    wait,
                    listed: true,
                    after_ms: 0,
                }
            }
            Seen::ListAgain(ms) => {
                self.stage = Stage::Setup {
                    index,
                    wait,
                    listed: false,
                    after_ms: ms,
                }
            }
            Seen::Missing(why) => self.fail(format!("setup call {} ({name}): {why}", index + 1)),
        }
    }

    /// The setup call at `index` ended: recorded, and the case an error when it failed.
    fn setup_called(&mut self, case: &Simulation, index: usize, answer: &CallAnswer) {
        let call = &case.setup[index];
        let failure = setup_failure(answer);
        self.setup.push(SetupOutcome {
            function_name: call.function_name.clone(),
            arguments: call.arguments.clone(),
            result: (answer.result())
                .filter(|_| failure.is_none())
                .map(|text| Value::String(text.to_owned())),
            error: failure.clone(),
        });
        self.stage = setup_at(index + 1);
        if let Some(why) = failure {
            self.fail(format!(
                "setup call {} ({}) failed: {why}",
                index + 1,
                call.function_name
            ));
        }
    }

    /// The user model's run ended: its line goes to the agent, or the conversation ends.
    fn user_ran(&mut self, case: &Simulation, answer: Result<RunEnded, String>, now_ms: f64) {
        let over = past(self.started_ms, now_ms, case);
        match ran(&answer) {
            Err(_) if over => self.end(EndedBy::Timeout, now_ms, case),
            Err(why) => {
                self.error = Some(format!("the simulated user: {why}"));
                self.end(EndedBy::Error, now_ms, case);
            }
            Ok(done) => {
                self.recording.user.push(done.transcript);
                add(&mut self.tokens, done.tokens);
                let (message, finished) = prompts::user_reply(&done.text);
                if finished {
                    self.closing = Some(message).filter(|m| !m.is_empty());
                    self.end(EndedBy::User, now_ms, case);
                } else if message.is_empty() {
                    self.error = Some("the simulated user wrote nothing".into());
                    self.end(EndedBy::Error, now_ms, case);
                } else if over {
                    self.end(EndedBy::Timeout, now_ms, case);
                } else {
                    self.stage = Stage::Agent(message);
                }
            }
        }
    }

    /// The page before the agent's turn (`here`: its listing held to the suite's origin):
    /// ready, and on that origin, or the conversation ends there.
    fn agent_listed(
        &mut self,
        case: &Simulation,
        message: String,
        here: Result<Option<String>, String>,
        now_ms: f64,
    ) {
        self.stage = Stage::Agent(message);
        let turn = self.turns.len() + 1;
        match here {
            Ok(_) => self.checked = turn,
            Err(why) => {
                self.error = Some(format!("before the agent's turn {turn}, {why}"));
                self.end(EndedBy::Error, now_ms, case);
            }
        }
    }

    /// The agent's turn ended: the turn recorded, then the user's next line or the end.
    fn agent_ran(
        &mut self,
        case: &Simulation,
        message: String,
        answer: Result<RunEnded, String>,
        now_ms: f64,
    ) {
        let over = past(self.started_ms, now_ms, case);
        let index = self.turns.len() + 1;
        let ended = answer.as_ref().ok();
        let mut turn = Turn {
            index,
            user_message: message,
            agent_text: String::new(),
            tool_calls: (ended.map(|e| turn_calls(e, self.history.len()))).unwrap_or_default(),
            run_id: ended.map(|e| e.run_id.clone()),
        };
        match ran(&answer) {
            Err(why) => {
                self.turns.push(turn);
                match over {
                    true => self.end(EndedBy::Timeout, now_ms, case),
                    false => {
                        self.error = Some(format!("the agent's turn {index}: {why}"));
                        self.end(EndedBy::Error, now_ms, case);
                    }
                }
            }
            Ok(done) => {
                self.history = (answer.map(|e| e.messages)).unwrap_or_default();
                turn.agent_text = done.text;
                self.recording.agent.push(done.transcript);
                add(&mut self.tokens, done.tokens);
                self.turns.push(turn);
                if matches!(case.user, UserSide::Message(_)) {
                    self.end(EndedBy::SingleTurn, now_ms, case);
                } else if over {
                    self.end(EndedBy::Timeout, now_ms, case);
                } else {
                    self.stage = Stage::User;
                }
            }
        }
    }

    /// The final page read: the DOM assertions judged; a measured mismatch is final.
    fn dom_read(&mut self, case: &Simulation, observed: Result<Vec<DomObserved>, String>) {
        self.assertions = judge_dom(&case.assertions, observed);
        if let Some(bad) = self.assertions.iter().find(|r| r["outcome"] == "error") {
            let why = format!(
                "the DOM assertion on \"{}\" could not be evaluated: {}",
                bad["assertion"]["selector"].as_str().unwrap_or_default(),
                bad["error"].as_str().unwrap_or("no answer")
            );
            self.fail(why);
        } else if self.assertions.iter().any(|r| r["outcome"] == "fail") {
            // A measured mismatch is final: no judge may overrule it.
            self.stage = Stage::Over;
        } else {
            self.stage = match case.success_criteria {
                Some(_) => Stage::Judge,
                None => Stage::Over,
            };
        }
    }

    /// The judge's run ended: its verdict, or the case an error.
    fn judged(&mut self, answer: Result<RunEnded, String>) {
        match ran_outcome(&answer) {
            Err(why) => self.fail(format!("the judge: {why}")),
            Ok(ended) => {
                let input = self.judge_input.clone().unwrap_or_default();
                self.recording.judge = Some((input, ended.transcript.clone()));
                add(&mut self.tokens, run_tokens(&ended.usage));
                match verdict(&ended.outcome) {
                    Ok(verdict) => {
                        self.verdict = Some(verdict);
                        self.stage = Stage::Over;
                    }
                    Err(why) => self.fail(format!("the judge: {why}")),
                }
            }
        }
    }
}
