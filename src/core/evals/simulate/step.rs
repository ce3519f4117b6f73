//! [`Simulate::step`]: the next request of the attempt under way, a function a stage (the
//! reload, the setup, the user's turn, the agent's turn, the DOM reads, the judge); each
//! either asks the worker for something or moves the attempt on to its next stage.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::read::hex;
use super::*;

/// What a stage did.
enum Stepped {
    /// It asks the worker for this.
    Ask(Next),
    /// It moved the attempt on (or ended it): step again.
    Moved,
}

impl Simulate {
    /// The next request of the attempt under way; `None` once it is over.
    pub(super) fn step(&mut self, now_ms: f64) -> Option<Next> {
        let tab_id = self.request.tab_id;
        loop {
            let stage = self.attempt.as_ref().expect("an attempt").stage.clone();
            let stepped = match stage {
                Stage::Over => return None,
                Stage::Reload => Stepped::Ask(Next::Reload { tab_id }),
                Stage::Loaded => Stepped::Ask(Next::ListTools {
                    tab_id,
                    after_ms: 0,
                    settle: Settle::AfterLoad,
                }),
                Stage::Setup {
                    index,
                    listed,
                    after_ms,
                    ..
                } => self.setup_step(index, listed, after_ms, now_ms),
                Stage::User => self.user_step(now_ms),
                // Before each agent turn, the tab's page, once loaded, and its origin: the
                // conversation goes on only where it began.
                Stage::Agent(_) if self.turn_unchecked() => Stepped::Ask(Next::ListTools {
                    tab_id,
                    after_ms: 0,
                    settle: Settle::Loaded,
                }),
                Stage::Agent(message) => self.agent_step(&message, now_ms),
                // Before the DOM reads, the tab's page as before a turn, on the suite's origin.
                Stage::Dom => Stepped::Ask(Next::ListTools {
                    tab_id,
                    after_ms: 0,
                    settle: Settle::Loaded,
                }),
                Stage::DomRead(target) => Stepped::Ask(self.dom_reads(target)),
                Stage::Judge => self.judge_step(),
            };
            if let Stepped::Ask(next) = stepped {
                return Some(next);
            }
        }
    }

    fn attempt_mut(&mut self) -> &mut Attempt {
        self.attempt.as_mut().expect("an attempt")
    }

    /// Whether the page has not been checked yet before the agent's next turn.
    fn turn_unchecked(&self) -> bool {
        let a = self.attempt.as_ref().expect("an attempt");
        a.checked <= a.turns.len()
    }

    /// The time left of the conversation at `now_ms`, from its start.
    fn time_left(&self, started_ms: f64, now_ms: f64) -> f64 {
        let case = &self.request.cases[self.case];
        case.max_duration_ms.unwrap_or(SIM_DURATION_MS) as f64 - (now_ms - started_ms)
    }

    /// The setup call at `index`: listed until its tool is there, then made; past the last,
    /// the conversation starts.
    fn setup_step(&mut self, index: usize, listed: bool, after_ms: u32, now_ms: f64) -> Stepped {
        let tab_id = self.request.tab_id;
        let timeout_ms = self.request.timeout_ms;
        match self.request.cases[self.case].setup.get(index).cloned() {
            Some(_) if !listed => Stepped::Ask(Next::ListTools {
                tab_id,
                after_ms,
                settle: Settle::Loaded,
            }),
            Some(call) => Stepped::Ask(Next::Call {
                tab_id,
                name: call.function_name,
                args: call.arguments,
                timeout_ms,
                expect: self.attempt_mut().decided.take().map(Box::new),
            }),
            None => {
                let a = self.attempt_mut();
                a.started_ms = Some(now_ms);
                a.stage = Stage::User;
                Stepped::Moved
            }
        }
    }

    /// The user's next line: the case's message, or the user model's run; the conversation
    /// ends at its turn or time budget.
    fn user_step(&mut self, now_ms: f64) -> Stepped {
        let case = self.request.cases[self.case].clone();
        let a = self.attempt_mut();
        let started = *a.started_ms.get_or_insert(now_ms);
        if a.turns.len() >= case.user.max_turns() as usize {
            a.end(EndedBy::MaxTurns, now_ms, &case);
            return Stepped::Moved;
        }
        let left = self.time_left(started, now_ms);
        let a = self.attempt_mut();
        if left <= 0.0 {
            a.end(EndedBy::Timeout, now_ms, &case);
            return Stepped::Moved;
        }
        let scenario = match &case.user {
            UserSide::Message(message) => {
                a.stage = Stage::Agent(message.clone());
                return Stepped::Moved;
            }
            UserSide::Scenario { scenario, .. } => scenario,
        };
        let replay = match a.recorded(Role::User, a.recording.user.len()) {
            Some(Err(why)) => {
                a.fail(why);
                return Stepped::Moved;
            }
            other => other.and_then(Result::ok),
        };
        let body = json!({
            "noTools": true,
            "messages": prompts::user_messages(scenario, &a.turns),
            "maxSteps": 1,
        });
        let model =
            (self.request.user_model.clone()).unwrap_or_else(|| self.agent_model().to_owned());
        let request = self.run_request(Role::User, &model, body, replay);
        Stepped::Ask(Next::Run {
            role: Role::User,
            request,
            within_ms: left.max(1.0) as u64,
        })
    }

    /// The agent's turn on `message`: a run on the tab with the conversation so far.
    fn agent_step(&mut self, message: &str, now_ms: f64) -> Stepped {
        let tab_id = self.request.tab_id;
        let started = self.attempt_mut().started_ms.unwrap_or(now_ms);
        let left = self.time_left(started, now_ms);
        let a = self.attempt_mut();
        let replay = match a.recorded(Role::Agent, a.recording.agent.len()) {
            Some(Err(why)) => {
                a.fail(why);
                return Stepped::Moved;
            }
            other => other.and_then(Result::ok),
        };
        let mut messages: Vec<Value> = a.history.iter().map(|m| json!(m)).collect();
        let id = format!("sim-user-{}", a.turns.len() + 1);
        messages.push(json!({"id": id, "role": "user", "content": message}));
        let mut body = json!({
            "tabId": tab_id,
            "messages": messages,
            "maxSteps": self.request.max_steps,
        });
        // The turn acts only on the suite's origin, whatever the page did since the listing
        // that checked it.
        if let Some(Ok(began)) = &self.began {
            body["expectOrigin"] = json!(began.origin());
        }
        let model = self.agent_model().to_owned();
        if !self.request.models.is_empty() {
            body["model"] = json!(model);
        }
        let request = self.run_request(Role::Agent, &model, body, replay);
        Stepped::Ask(Next::Run {
            role: Role::Agent,
            request,
            within_ms: left.max(1.0) as u64,
        })
    }

    /// The final page read for the case's DOM assertions, in the document `target` names.
    fn dom_reads(&self, target: Target) -> Next {
        let queries = (self.request.cases[self.case].assertions.iter())
            .map(|assertion| DomQuery {
                selector: assertion.selector.clone(),
                attribute: match &assertion.expect {
                    Expect::Attribute { name, .. } => Some(name.clone()),
                    _ => None,
                },
            })
            .collect();
        Next::QueryDom {
            tab_id: self.request.tab_id,
            target,
            queries,
        }
    }

    /// The judge's run on the transcript, or its recorded verdict when the transcript is the
    /// one recorded and `rejudge` is not asked; no judge without success criteria.
    fn judge_step(&mut self) -> Stepped {
        let case = self.request.cases[self.case].clone();
        let judge_model = self.request.judge_model.clone();
        let rejudge = self.request.rejudge;
        let timeout_ms = self.request.timeout_ms;
        let a = self.attempt_mut();
        let Some(criteria) = case.success_criteria.as_deref() else {
            a.stage = Stage::Over;
            return Stepped::Moved;
        };
        let ended = a.ended.unwrap_or(EndedBy::MaxTurns);
        let prompt =
            prompts::judge_prompt(criteria, &a.setup, &a.turns, a.closing.as_deref(), ended);
        let input = hex(&Sha256::digest(prompt.as_bytes()));
        // A replayed judge whose transcript is unchanged answers as it did (the hash is no
        // signature: a recording vouches only for itself); one whose transcript changed, or
        // any with `rejudge`, is asked again, when a judge is named.
        let recorded = (a.replay.as_ref())
            .filter(|_| !rejudge)
            .filter(|r| {
                r.pointer("/recording/judge/input").and_then(Value::as_str) == Some(input.as_str())
            })
            .and_then(|r| {
                r.pointer("/recording/judge/transcript")?
                    .as_str()
                    .map(str::to_owned)
            });
        let model = match (&recorded, judge_model) {
            (_, Some(model)) => model,
            (Some(_), None) => "judge".into(),
            (None, None) => {
                a.fail("the judge's transcript is not the recorded one, and no `judgeModel` is named to judge it again".into());
                return Stepped::Moved;
            }
        };
        a.judge_input = Some(input);
        let body = json!({
            "noTools": true,
            "messages": [
                {"id": "judge-system", "role": "system", "content": prompts::JUDGE_SYSTEM},
                {"id": "judge-transcript", "role": "user", "content": prompt},
            ],
            "outputSchema": prompts::verdict_schema(),
            "maxSteps": 2,
        });
        let request = self.run_request(Role::Judge, &model, body, recorded);
        Stepped::Ask(Next::Run {
            role: Role::Judge,
            request,
            within_ms: u64::from(timeout_ms).max(1),
        })
    }
}
