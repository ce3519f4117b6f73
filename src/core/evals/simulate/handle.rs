//! [`Simulate::handle`]: what happened to the request a case's stage made, and where the case
//! goes next (the stages are `mod.rs`'s; the page-ready and origin checks before an agent
//! turn, the end of a conversation, the DOM's and the judge's verdicts).

use serde_json::Value;

use super::read::{add, judge_dom, past, ran, ran_outcome, setup_failure, turn_calls, verdict};
use super::*;
use crate::core::evals::wait::Seen;

impl Simulate {
    /// What happened to the last [`Next`], at `now_ms`; the result it completed, if any.
    pub fn handle(&mut self, reply: Reply, now_ms: f64) -> Option<Value> {
        let before = self.results.len();
        let timeout_ms = self.request.timeout_ms;
        let case = self.request.cases.get(self.case)?.clone();
        let a = self.attempt.as_mut()?;
        a.asked = None;
        match (a.stage.clone(), reply) {
            (Stage::Reload, Reply::Reloaded(Ok(()))) => a.stage = Stage::Loaded,
            (Stage::Loaded, Reply::Listed(tools)) => match tools {
                Ok(_) => a.stage = setup_at(0),
                Err(why) => a.fail(format!("after the reload, {why}")),
            },
            (Stage::Reload, Reply::Reloaded(Err(why))) => {
                a.fail(format!("the tab could not be reloaded: {why}"))
            }
            (
                Stage::Setup {
                    index, mut wait, ..
                },
                Reply::Listed(tools),
            ) => {
                let name = &case.setup[index].function_name;
                match wait.listed(name, &tools, now_ms, timeout_ms) {
                    Seen::Call => {
                        a.stage = Stage::Setup {
                            index,
                            wait,
                            listed: true,
                            after_ms: 0,
                        }
                    }
                    Seen::ListAgain(ms) => {
                        a.stage = Stage::Setup {
                            index,
                            wait,
                            listed: false,
                            after_ms: ms,
                        }
                    }
                    Seen::Missing(why) => {
                        a.fail(format!("setup call {} ({name}): {why}", index + 1))
                    }
                }
            }
            (Stage::Setup { index, .. }, Reply::Called(answer)) => {
                let call = &case.setup[index];
                let failure = setup_failure(&answer);
                a.setup.push(SetupOutcome {
                    function_name: call.function_name.clone(),
                    arguments: call.arguments.clone(),
                    result: (answer.result())
                        .filter(|_| failure.is_none())
                        .map(|text| Value::String(text.to_owned())),
                    error: failure.clone(),
                });
                a.stage = setup_at(index + 1);
                if let Some(why) = failure {
                    a.fail(format!(
                        "setup call {} ({}) failed: {why}",
                        index + 1,
                        call.function_name
                    ));
                }
            }
            (Stage::User, Reply::Ran(answer)) => {
                let over = past(a.started_ms, now_ms, &case);
                match ran(&answer) {
                    Err(_) if over => a.end(EndedBy::Timeout, now_ms, &case),
                    Err(why) => {
                        a.error = Some(format!("the simulated user: {why}"));
                        a.end(EndedBy::Error, now_ms, &case);
                    }
                    Ok(done) => {
                        a.recording.user.push(done.transcript);
                        add(&mut a.tokens, done.tokens);
                        let (message, finished) = prompts::user_reply(&done.text);
                        if finished {
                            a.closing = Some(message).filter(|m| !m.is_empty());
                            a.end(EndedBy::User, now_ms, &case);
                        } else if message.is_empty() {
                            a.error = Some("the simulated user wrote nothing".into());
                            a.end(EndedBy::Error, now_ms, &case);
                        } else if over {
                            a.end(EndedBy::Timeout, now_ms, &case);
                        } else {
                            a.stage = Stage::Agent(message);
                        }
                    }
                }
            }
            (Stage::Agent(message), Reply::Listed(tools)) => {
                a.stage = Stage::Agent(message);
                let turn = a.turns.len() + 1;
                match tools {
                    Ok(tools) => {
                        a.checked = turn;
                        let now = tools.page.as_ref().map(|p| p.origin.clone());
                        match (&a.origin, now) {
                            (_, None) => a.fail("the tab shows no page to talk about".into()),
                            (None, Some(origin)) => a.origin = Some(origin),
                            (Some(began), Some(now)) if *began != now => {
                                let why = format!("the tab now shows {now}, not {began} where the conversation began: the conversation is not carried to another origin");
                                a.error = Some(why);
                                a.end(EndedBy::Error, now_ms, &case);
                            }
                            _ => {}
                        }
                    }
                    Err(why) => {
                        a.error = Some(format!("before the agent's turn {turn}, {why}"));
                        a.end(EndedBy::Error, now_ms, &case);
                    }
                }
            }
            (Stage::Agent(message), Reply::Ran(answer)) => {
                let over = past(a.started_ms, now_ms, &case);
                let index = a.turns.len() + 1;
                let run_id = answer
                    .as_ref()
                    .ok()
                    .and_then(|v| v["runId"].as_str())
                    .map(str::to_owned);
                let mut turn = Turn {
                    index,
                    user_message: message,
                    agent_text: String::new(),
                    tool_calls: Vec::new(),
                    run_id,
                };
                match ran(&answer) {
                    Err(why) => {
                        if let Ok(answer) = &answer {
                            turn.tool_calls = turn_calls(answer, a.history.len());
                        }
                        a.turns.push(turn);
                        match over {
                            true => a.end(EndedBy::Timeout, now_ms, &case),
                            false => {
                                a.error = Some(format!("the agent's turn {index}: {why}"));
                                a.end(EndedBy::Error, now_ms, &case);
                            }
                        }
                    }
                    Ok(done) => {
                        let answer = answer.unwrap_or_default();
                        turn.tool_calls = turn_calls(&answer, a.history.len());
                        turn.agent_text = done.text;
                        a.recording.agent.push(done.transcript);
                        add(&mut a.tokens, done.tokens);
                        if let Some(messages) = answer["messages"].as_array() {
                            a.history = messages.clone();
                        }
                        a.turns.push(turn);
                        if matches!(case.user, UserSide::Message(_)) {
                            a.end(EndedBy::SingleTurn, now_ms, &case);
                        } else if over {
                            a.end(EndedBy::Timeout, now_ms, &case);
                        } else {
                            a.stage = Stage::User;
                        }
                    }
                }
            }
            (Stage::Dom, Reply::Queried(observed)) => {
                a.assertions = judge_dom(&case.assertions, observed);
                if let Some(bad) = a.assertions.iter().find(|r| r["outcome"] == "error") {
                    let why = format!(
                        "the DOM assertion on \"{}\" could not be evaluated: {}",
                        bad["assertion"]["selector"].as_str().unwrap_or_default(),
                        bad["error"].as_str().unwrap_or("no answer")
                    );
                    a.fail(why);
                } else if a.assertions.iter().any(|r| r["outcome"] == "fail") {
                    // A measured mismatch is final: no judge may overrule it.
                    a.stage = Stage::Over;
                } else {
                    a.stage = match case.success_criteria {
                        Some(_) => Stage::Judge,
                        None => Stage::Over,
                    };
                }
            }
            (Stage::Judge, Reply::Ran(answer)) => match ran_outcome(&answer) {
                Err(why) => a.fail(format!("the judge: {why}")),
                Ok((outcome, transcript, tokens)) => {
                    let input = a.judge_input.clone().unwrap_or_default();
                    a.recording.judge = Some((input, transcript));
                    add(&mut a.tokens, tokens);
                    match verdict(&outcome) {
                        Ok(verdict) => {
                            a.verdict = Some(verdict);
                            a.stage = Stage::Over;
                        }
                        Err(why) => a.fail(format!("the judge: {why}")),
                    }
                }
            },
            (_, _) => a.fail("the host answered out of turn".into()),
        }
        if a.stage == Stage::Over {
            self.finish(now_ms);
        }
        (self.results.len() > before).then(|| self.results.last().cloned())?
    }
}
