//! `bugReport({runId})` as the [`Host`] gathers it ([`BugReport`]): the run's whole log, the
//! tab's tools and audit and its snapshot (page, screenshot, versions) while the tab still
//! shows the run's page, the session's keys (to mask) and the settings; then
//! `core::observe::bundle` assembles the file, every key masked. Answers
//! `{fileName, report}`.
//!
//! Invariant: another page's facts never go into a run's report (a tab that moved on gives
//! neither its address, tools, audit nor screenshot).

use serde_json::{json, Value};

use super::io::{Input, Output, Step, Storage, Tabs};
use super::listing::{Listing, Settle};
use super::probe::Probing;
use super::runlog::RunLogRead;
use super::settings::SettingsView;
use super::stored::found;
use super::Host;
use crate::core::observe::bundle::{assemble, file_name, session_keys, still_shown, Parts};
use crate::core::ops::AuditRequest;
use crate::core::page::tabs::{Listed, TabTools};
use crate::core::storage::Area::Session;

/// `bugReport({runId})` under way.
#[derive(Debug)]
pub struct BugReport {
    run_id: String,
    calls: String,
    phase: Phase,
    log: Value,
    listed: Option<Listed>,
    snapshot: Value,
    tools: Option<Result<TabTools, String>>,
    audit: Option<Result<Value, String>>,
    session: Value,
    settings: Option<SettingsView>,
}

#[derive(Debug)]
enum Phase {
    Log(Box<RunLogRead>),
    Listing(Listing),
    Snapshot,
    Audit(Box<Probing>),
    Session,
    Settings,
    Done,
}

impl BugReport {
    /// The report of run `run_id`, for the extension whose origin is `origin`; `calls` is a
    /// fresh name from which the audit's calls' ids are made.
    pub fn new(run_id: &str, origin: &str, calls: String) -> BugReport {
        BugReport {
            run_id: run_id.to_owned(),
            calls,
            phase: Phase::Log(Box::new(RunLogRead::new(run_id, 0))),
            log: Value::Null,
            listed: None,
            snapshot: Value::Null,
            tools: None,
            audit: None,
            session: Value::Null,
            settings: Some(SettingsView::new(origin)),
        }
    }

    fn tab_id(&self) -> Option<i64> {
        self.log.pointer("/run/tabId").and_then(Value::as_i64)
    }

    /// The snapshot taken: the tab's tools and audit asked for while it still shows the run's
    /// page, else its page's facts left out.
    fn snapped(&mut self, snapshot: Value) -> Result<Phase, String> {
        self.snapshot = snapshot;
        let open = self.snapshot.get("page").is_some();
        let listed = self.listed.take();
        let now_document =
            (listed.as_ref()).and_then(|l| l.as_ref().ok()?.documents.get(&0).cloned());
        let now_url = self.snapshot.pointer("/page/url").and_then(Value::as_str);
        let shown = still_shown(
            self.log.pointer("/run/page"),
            now_url,
            now_document.as_deref(),
        );
        let mut phase = Phase::Session;
        if let (Some(tab_id), Some(listed), Ok(()), true) = (self.tab_id(), listed, &shown, open) {
            let request = AuditRequest::parse(&json!({"tabId": tab_id})).map_err(|e| e.0)?;
            self.tools = Some(listed.map(std::rc::Rc::unwrap_or_clone));
            phase = Phase::Audit(Box::new(Probing::new(request, self.calls.clone())));
        }
        if let (Err(why), true) = (&shown, open) {
            let snapshot = &mut self.snapshot;
            snapshot["page"] = json!({"movedOn": why, "recorded": self.log.pointer("/run/page")});
            snapshot["screenshotError"] = json!(why);
            if let Some(map) = snapshot.as_object_mut() {
                map.remove("screenshot");
            }
        }
        Ok(phase)
    }

    /// The report, once everything is gathered at `now_ms`.
    fn assembled(&mut self, settings: Value, now_ms: f64) -> Value {
        let snapshot = &self.snapshot;
        let text = |key: &str| snapshot.get(key).and_then(Value::as_str).map(str::to_owned);
        let parts = Parts {
            log: std::mem::take(&mut self.log),
            page: snapshot.get("page").cloned(),
            tools: self.tools.take(),
            audit: self.audit.take(),
            screenshot: text("screenshot")
                .ok_or_else(|| text("screenshotError").unwrap_or_default()),
            user_agent: text("userAgent").unwrap_or_default(),
            extension_version: text("version").unwrap_or_default(),
            settings,
            created_ms: now_ms,
        };
        let report = assemble(parts, &session_keys(&self.session));
        json!({"fileName": file_name(&self.run_id), "report": report})
    }
}

impl Host {
    /// Steps `bugReport` ([`BugReport`]) to its answer.
    pub fn bug_report(
        &self,
        machine: &mut BugReport,
        input: Option<Input>,
        now_ms: f64,
    ) -> Step<Result<Value, String>> {
        let mut input = input;
        loop {
            let input = input.take();
            let next = match std::mem::replace(&mut machine.phase, Phase::Done) {
                Phase::Log(mut read) => match self.run_log(&mut read, input, now_ms) {
                    Step::Do(output) => {
                        machine.phase = Phase::Log(read);
                        return Step::Do(output);
                    }
                    Step::Done(log) => {
                        machine.log = match log {
                            Ok(log) => log,
                            Err(error) => return Step::Done(Err(error)),
                        };
                        match machine.tab_id() {
                            Some(tab_id) => Phase::Listing(Listing::kept(tab_id, Settle::Now)),
                            None => return self.ask_snapshot(machine),
                        }
                    }
                },
                Phase::Listing(mut listing) => match self.list(&mut listing, input, now_ms) {
                    Step::Do(output) => {
                        machine.phase = Phase::Listing(listing);
                        return Step::Do(output);
                    }
                    Step::Done(listed) => {
                        machine.listed = Some(listed);
                        return self.ask_snapshot(machine);
                    }
                },
                Phase::Snapshot => {
                    let snapshot = match input {
                        Some(Input::Snapshot(snapshot)) => snapshot,
                        _ => Value::Null,
                    };
                    match machine.snapped(snapshot) {
                        Ok(phase) => phase,
                        Err(error) => return Step::Done(Err(error)),
                    }
                }
                Phase::Audit(mut probing) => match self.probe(&mut probing, input, now_ms) {
                    Step::Do(output) => {
                        machine.phase = Phase::Audit(probing);
                        return Step::Do(output);
                    }
                    Step::Done(audit) => {
                        machine.audit = Some(audit);
                        Phase::Session
                    }
                },
                Phase::Session if input.is_none() => {
                    machine.phase = Phase::Session;
                    return Step::Do(Output::Storage(Storage::All { area: Session }));
                }
                Phase::Session => {
                    machine.session = found(input).unwrap_or_default();
                    Phase::Settings
                }
                Phase::Settings => {
                    let view = machine.settings.as_mut().expect("the settings, once");
                    match self.settings(view, input, now_ms) {
                        Step::Do(output) => {
                            machine.phase = Phase::Settings;
                            return Step::Do(output);
                        }
                        Step::Done(settings) => {
                            let settings = settings.unwrap_or_else(|e| json!({"error": e}));
                            return Step::Done(Ok(machine.assembled(settings, now_ms)));
                        }
                    }
                }
                Phase::Done => {
                    return Step::Done(
                        Err("internal error: a bug report's step asked again".into()),
                    )
                }
            };
            machine.phase = next;
        }
    }

    /// The tab's snapshot asked for.
    fn ask_snapshot(&self, machine: &mut BugReport) -> Step<Result<Value, String>> {
        machine.phase = Phase::Snapshot;
        let tab_id = machine.tab_id();
        Step::Do(Output::Tabs(Tabs::Snapshot { tab_id }))
    }
}

#[cfg(test)]
mod tests;
