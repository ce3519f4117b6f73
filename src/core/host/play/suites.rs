//! The suites played: evaluations, simulations, crawls and audits, each performed as its
//! shell driver performs it (`shell::evals`, `shell::crawl`, `shell::audit`).

use serde_json::Value;

use super::*;
use crate::core::crawl::{clearing, keeping, kept_key};
use crate::core::evals::record::{DiffNext, ReplayDiff};
use crate::core::host::probe::Probing;
use crate::core::storage::CRAWLED;

impl Play {
    /// `evaluate({mode: "smoke" | "agent"})` as `shell::evals::evaluate` performs it.
    pub(crate) fn evaluate(&mut self, request: EvaluateRequest) -> Value {
        let first = self.first_page(request.reload, request.tab_id);
        let mut evaluation = Evaluation::new(request, None).with_suite("eval_play".into());
        loop {
            let reply = match evaluation.poll() {
                Eval::Done(answer) => return answer,
                Eval::Call {
                    tab_id,
                    name,
                    args,
                    timeout_ms,
                    expect,
                } => {
                    let request = CallRequest {
                        expect: expect.map(|decided| *decided),
                        ..CallRequest::asked(tab_id, name, args, timeout_ms)
                    };
                    let answer = self.asked(Asker::Smoke, request);
                    EvalReply::Called {
                        answer,
                        now_ms: self.now,
                    }
                }
                Eval::Run { request, .. } => {
                    let started = self.now;
                    let answer = self.run_ended(&request, None);
                    EvalReply::Ran {
                        answer,
                        latency_ms: self.now - started,
                    }
                }
                Eval::Log { run_id } => EvalReply::Logged(self.run_log(&run_id)),
                Eval::Reload { tab_id } => {
                    EvalReply::Reloaded(self.back_to(tab_id, first.as_deref()))
                }
                Eval::ListTools {
                    tab_id,
                    after_ms,
                    settle,
                    ..
                } => EvalReply::Listed {
                    tools: self.list(Listing::kept(tab_id, settle).after(after_ms)),
                    now_ms: self.now,
                },
            };
            evaluation.handle(reply);
        }
    }

    /// `crawl({tabId, ...})` as `shell::crawl::crawl` performs it.
    pub(crate) fn crawl(&mut self, request: CrawlRequest) -> Result<Value, String> {
        let tab_id = request.tab_id;
        let stored: Vec<String> = self.local.keys().cloned().collect();
        if request.clear {
            let (keys, answer) = clearing(&stored);
            for key in keys {
                self.local.remove(&key);
            }
            return Ok(answer);
        }
        let start = (self.pages.get(&tab_id).map(|page| page.url.clone()))
            .ok_or_else(|| format!("crawl: tab {tab_id}: no such tab"))?;
        let mut crawl = Crawl::new(request, &start, self.now)?;
        loop {
            crawl.tick(self.now);
            let reply = match crawl.poll() {
                CrawlNext::Done(answer) => return Ok(answer),
                CrawlNext::ReadSitemap { tab_id, url } => {
                    let message = FrameRequest::ReadSitemap { url }.to_message();
                    CrawlReply::Sitemap(match self.send(tab_id, &Target::TOP, &message) {
                        FrameReply::Answered(Ok(text)) => parse_sitemap_reply(&text),
                        other => Err(format!("no sitemap: {other:?}")),
                    })
                }
                CrawlNext::Previous { origin } => {
                    CrawlReply::Previous(self.local.get(&kept_key(&origin)).cloned())
                }
                CrawlNext::Load { tab_id, url } => {
                    let (loading, late) = self.loading;
                    let page = self.pages.get_mut(&tab_id);
                    CrawlReply::Loaded(match page {
                        Some(page) => {
                            page.load(&url, loading, late);
                            self.now += LOAD_MS;
                            Ok(url)
                        }
                        None => Err(format!("No tab with id: {tab_id}.")),
                    })
                }
                CrawlNext::List {
                    tab_id,
                    after_ms,
                    settle,
                } => CrawlReply::Listed(self.list(Listing::kept(tab_id, settle).after(after_ms))),
                CrawlNext::Keep {
                    origin,
                    value,
                    bytes,
                } => {
                    let stored: Vec<String> = self.local.keys().cloned().collect();
                    let plan = keeping(self.local.get(CRAWLED), &stored, &origin, bytes);
                    for key in &plan.remove {
                        self.local.remove(key);
                    }
                    self.local.insert(CRAWLED.into(), plan.index);
                    self.local.insert(kept_key(&origin), value);
                    CrawlReply::Kept(Ok(()))
                }
            };
            crawl.handle(reply);
        }
    }

    /// `audit({...})` as `shell::audit` performs it.
    pub(crate) fn audit(&mut self, request: AuditRequest) -> Result<Value, String> {
        let mut probing = Probing::new(request, format!("call_{}", self.fresh()));
        self.drive(|host, input, now| host.probe(&mut probing, input, now))
    }

    /// `evaluate({mode: "simulate"})` as `shell::evals::simulate` performs it.
    pub(crate) fn simulate(&mut self, request: SimulateRequest) -> Value {
        let first = self.first_page(request.reload, request.tab_id);
        let mut simulation = Simulate::new(request, None, "sim_play".into());
        loop {
            let reply = match simulation.poll(self.now) {
                Next::Done(answer) => return answer,
                Next::Reload { tab_id } => Reply::Reloaded(self.back_to(tab_id, first.as_deref())),
                Next::ListTools {
                    tab_id,
                    after_ms,
                    settle,
                } => Reply::Listed(self.list(Listing::kept(tab_id, settle).after(after_ms))),
                Next::Call {
                    tab_id,
                    name,
                    args,
                    timeout_ms,
                    expect,
                } => {
                    let request = CallRequest {
                        expect: expect.map(|decided| *decided),
                        ..CallRequest::asked(tab_id, name, args, timeout_ms)
                    };
                    Reply::Called(self.asked(Asker::Simulate, request))
                }
                Next::Run {
                    request, within_ms, ..
                } => Reply::Ran(self.run_ended(&request, Some(within_ms))),
                Next::QueryDom {
                    tab_id,
                    target,
                    queries,
                } => {
                    let asked = queries.len();
                    let message = FrameRequest::QueryDom { queries }.to_message();
                    Reply::Queried(match self.send(tab_id, &target, &message) {
                        FrameReply::Answered(Ok(text)) => parse_dom_reply(&text, asked),
                        FrameReply::Answered(Err(e)) | FrameReply::Failed(e) => Err(e),
                        other => Err(format!("no answer: {other:?}")),
                    })
                }
            };
            simulation.handle(reply, self.now);
        }
    }

    /// With `reload`, the page each case starts on: the one the tab shows as the suite starts
    /// (as `shell::evals`' `suite_start` reads it).
    fn first_page(&self, reload: bool, tab_id: i64) -> Option<String> {
        let page = self.pages.get(&tab_id).filter(|_| reload);
        page.map(|page| page.url.clone())
    }

    /// `replayDiff({runId, tabId})` as `shell::evals::replay_diff` performs it.
    pub(crate) fn replay_diff(&mut self, tab_id: i64, run_id: &str) -> Result<Value, String> {
        let log = self.run_log(run_id)?;
        let mut diff = ReplayDiff::of_run(tab_id, run_id, &log);
        loop {
            match diff.poll() {
                DiffNext::Done(answer) => return Ok(answer),
                DiffNext::ListTools { tab_id, settle } => {
                    diff.tools(self.list(Listing::kept(tab_id, settle)));
                }
                DiffNext::Call {
                    tab_id,
                    name,
                    args,
                    timeout_ms,
                } => {
                    let request = CallRequest::asked(tab_id, name, args, timeout_ms);
                    let answer = self.asked(Asker::Replay, request);
                    diff.called(&answer);
                }
            }
        }
    }
}
