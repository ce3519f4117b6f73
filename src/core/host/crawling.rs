//! `crawl({tabId, ...})` as the [`Host`] performs it ([`Crawling`]): the tab marked as being
//! crawled (one crawl a tab, in the host's [`Host::crawls`]), the page it shows read, then
//! every ask of the core's [`Crawl`] (the sitemap read by the tab's top frame, the origin's
//! last crawl read, pages loaded, the tab listed as `listTools` lists it, what was seen kept in
//! local storage within the crawls' budget, [`keeping`]), each page pushed to the open pages
//! (`crawlProgress`: `{tabId, done, total, page}`). `crawl({tabId, stop: true})` asks the
//! tab's crawl to stop (it answers with the pages it has); `crawl({clear: true})` removes
//! every kept crawl ([`clearing`]).
//!
//! Invariant: the mark of a tab's crawl goes with the crawl's answer, whatever it is.

use std::collections::VecDeque;

use serde_json::{json, Value};

use super::io::{Frames, Input, Output, Storage, Tabs, Ui};
use super::listing::Listing;
use super::suite::{internal, reply_text, Errand, Got, Next, Suite, Suited};
use super::Host;
use crate::core::crawl::{clearing, keeping, kept_key, Crawl, CrawlRequest, Next as Ask, Reply};
use crate::core::limits::{CRAWL_LOAD_MS, SITEMAP_MS};
use crate::core::page::bridge::{parse_sitemap_reply, FrameRequest, Target};
use crate::core::page::call::FrameState;
use crate::core::storage::{Area, CRAWLED};

use super::io::Step;

/// A crawl under way (or a stop, or a clear).
#[derive(Debug)]
pub struct Crawling {
    tab_id: i64,
    stop: bool,
    clear: bool,
    /// The tab's mark: not yet set, set by this crawl, or gone.
    marked: Option<bool>,
    suite: Suited<Crawler>,
}

impl Crawling {
    /// What `request` asks for.
    pub fn new(request: CrawlRequest) -> Crawling {
        Crawling {
            tab_id: request.tab_id,
            stop: request.stop,
            clear: request.clear,
            marked: None,
            suite: Suited::new(Crawler {
                tab_id: request.tab_id,
                clear: request.clear.then(|| None),
                request: Some(request),
                crawl: None,
                keep: None,
                asked: Asked::Page,
            }),
        }
    }
}

/// What the crawl's last errand was for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Asked {
    Page,
    Clear,
    Crawl,
    Keep,
}

/// Keeping what the crawl saw: the index read, the keys listed, then the writes.
#[derive(Debug)]
enum Keep {
    Index {
        origin: String,
        value: Value,
        bytes: usize,
    },
    Keys {
        index: Option<Value>,
        origin: String,
        value: Value,
        bytes: usize,
    },
    /// The writes left (the crawl's own last); the crawl's write's failure, once it failed
    /// (its key then removed).
    Writes {
        left: VecDeque<(String, Option<Value>)>,
        failed: Option<String>,
    },
}

#[derive(Debug)]
pub(crate) struct Crawler {
    tab_id: i64,
    /// With `clear`: the keys left to remove and the answer, once listed.
    clear: Option<Option<(VecDeque<String>, Value)>>,
    request: Option<CrawlRequest>,
    crawl: Option<Crawl>,
    keep: Option<Keep>,
    asked: Asked,
}

fn write(key: String, value: Option<Value>) -> Errand {
    let area = Area::Local;
    Errand::out(Output::Storage(Storage::Write { area, key, value }))
}

fn keys() -> Errand {
    let area = Area::Local;
    Errand::out(Output::Storage(Storage::Keys { area }))
}

fn read(key: String) -> Errand {
    let area = Area::Local;
    Errand::out(Output::Storage(Storage::Read { area, key }))
}

impl Crawler {
    /// The next write of the keeping, or its end.
    fn keeping(&mut self) -> Option<Errand> {
        match self.keep.as_mut()? {
            Keep::Index { .. } => Some(read(CRAWLED.into())),
            Keep::Keys { .. } => Some(keys()),
            Keep::Writes { left, .. } => left.pop_front().map(|(key, value)| write(key, value)),
        }
    }

    /// What the keeping got: `Some` once it ended.
    fn kept(&mut self, got: Got) -> Result<Option<Result<(), String>>, String> {
        let keep = self.keep.take();
        self.keep = match (keep, got) {
            (
                Some(Keep::Index {
                    origin,
                    value,
                    bytes,
                }),
                Got::In(Some(Input::Read(index))),
            ) => {
                let index = index.ok().flatten();
                Some(Keep::Keys {
                    index,
                    origin,
                    value,
                    bytes,
                })
            }
            (Some(Keep::Keys { .. }), Got::In(Some(Input::Keys(Err(e))))) => {
                return Ok(Some(Err(e)))
            }
            (
                Some(Keep::Keys {
                    index,
                    origin,
                    value,
                    bytes,
                }),
                Got::In(Some(Input::Keys(Ok(stored)))),
            ) => {
                let plan = keeping(index.as_ref(), &stored, &origin, bytes);
                let mut left: VecDeque<_> = (plan.remove.into_iter()).map(|k| (k, None)).collect();
                left.push_back((CRAWLED.to_owned(), Some(plan.index)));
                left.push_back((kept_key(&origin), Some(value)));
                Some(Keep::Writes { left, failed: None })
            }
            (Some(Keep::Writes { mut left, failed }), Got::In(Some(Input::Done(done)))) => {
                match (failed, done) {
                    // The crawl's key removed after its write failed.
                    (Some(failed), _) => return Ok(Some(Err(failed))),
                    // The crawl's own write (the last) failed: its key is removed.
                    (None, Err(e)) if left.is_empty() => {
                        let key = kept_key(self.crawl.as_ref().map_or("", Crawl::origin));
                        left.push_back((key, None));
                        Some(Keep::Writes {
                            left,
                            failed: Some(e),
                        })
                    }
                    (None, Err(e)) => return Ok(Some(Err(e))),
                    (None, Ok(())) if left.is_empty() => return Ok(Some(Ok(()))),
                    (None, Ok(())) => Some(Keep::Writes { left, failed: None }),
                }
            }
            (_, Got::In(fed)) => return Err(internal(Self::WHAT, fed.as_ref())),
            _ => return Err(internal(Self::WHAT, None)),
        };
        Ok(None)
    }

    /// The next of `crawl({clear: true})`'s removals, or its answer.
    fn clearing(&mut self) -> Result<Errand, Result<Value, String>> {
        self.asked = Asked::Clear;
        match self.clear.as_mut() {
            Some(Some((left, answer))) => match left.pop_front() {
                Some(key) => Ok(write(key, None)),
                None => Err(Ok(answer.clone())),
            },
            _ => Ok(keys()),
        }
    }
}

impl Suite for Crawler {
    const WHAT: &'static str = "the crawl";

    fn next(&mut self, host: &Host, now_ms: f64) -> Result<Errand, Result<Value, String>> {
        if self.clear.is_some() {
            return self.clearing();
        }
        if let Some(errand) = self.keeping() {
            self.asked = Asked::Keep;
            return Ok(errand);
        }
        let Some(crawl) = self.crawl.as_mut() else {
            self.asked = Asked::Page;
            let tab_id = self.tab_id;
            return Ok(Errand::out(Output::Frames(Frames::State {
                tab_id,
                frame_id: 0,
            })));
        };
        crawl.tick(now_ms);
        if host
            .crawls
            .borrow()
            .get(&self.tab_id)
            .copied()
            .unwrap_or(false)
        {
            crawl.stop();
        }
        self.asked = Asked::Crawl;
        Ok(match crawl.poll() {
            Ask::Done(answer) => return Err(Ok(answer)),
            Ask::ReadSitemap { tab_id, url } => {
                let message = FrameRequest::ReadSitemap { url }.to_message();
                Errand::out(Output::Frames(Frames::Ask {
                    tab_id,
                    target: Target::TOP,
                    message,
                    ms: SITEMAP_MS,
                }))
            }
            Ask::Previous { origin } => read(kept_key(&origin)),
            Ask::Load { tab_id, url } => Errand::out(Output::Tabs(Tabs::Load {
                tab_id,
                url,
                ms: CRAWL_LOAD_MS,
            })),
            Ask::List {
                tab_id,
                after_ms,
                settle,
            } => Errand::List(Listing::kept(tab_id, settle).after(after_ms)),
            Ask::Keep {
                origin,
                value,
                bytes,
            } => {
                self.keep = Some(Keep::Index {
                    origin,
                    value,
                    bytes,
                });
                return self.next(host, now_ms);
            }
        })
    }

    fn got(&mut self, got: Got, now_ms: f64) -> Result<Option<Ui>, String> {
        let reply = match (self.asked, got) {
            (Asked::Clear, Got::In(Some(Input::Keys(keys)))) => {
                let (keys, answer) = clearing(&keys?);
                self.clear = Some(Some((keys.into(), answer)));
                return Ok(None);
            }
            (Asked::Clear, Got::In(Some(Input::Done(done)))) => return done.map(|()| None),
            (Asked::Page, Got::In(Some(Input::Frame(top)))) => {
                let start = FrameState::page_url("crawl", self.tab_id, top)?;
                let request = self
                    .request
                    .take()
                    .ok_or_else(|| internal(Self::WHAT, None))?;
                self.crawl = Some(Crawl::new(request, &start, now_ms)?);
                return Ok(None);
            }
            (Asked::Keep, got) => match self.kept(got)? {
                Some(kept) => Reply::Kept(kept),
                None => return Ok(None),
            },
            (Asked::Crawl, Got::Listed(listed)) => Reply::Listed(listed),
            (Asked::Crawl, Got::In(Some(Input::Reply(reply)))) => Reply::Sitemap(
                reply_text(reply, SITEMAP_MS).and_then(|text| parse_sitemap_reply(&text)),
            ),
            (Asked::Crawl, Got::In(Some(Input::Read(read)))) => {
                Reply::Previous(read.ok().flatten())
            }
            (Asked::Crawl, Got::In(Some(Input::Landed(landed)))) => Reply::Loaded(landed),
            (_, Got::In(fed)) => return Err(internal(Self::WHAT, fed.as_ref())),
            _ => return Err(internal(Self::WHAT, None)),
        };
        let crawl = self
            .crawl
            .as_mut()
            .ok_or_else(|| internal(Self::WHAT, None))?;
        Ok(crawl.handle(reply).map(|page| {
            let (done, total) = crawl.progress();
            Ui::Push {
                kind: "crawlProgress".into(),
                body: json!({"tabId": self.tab_id, "done": done, "total": total, "page": page}),
            }
        }))
    }
}

impl Host {
    /// Steps a crawl (`crawl`): the input of its last output fed, its next output or its
    /// answer. A crawl of a tab being crawled already is refused; `stop` asks the tab's crawl
    /// to stop (`true` if there was one).
    pub fn crawl(&self, c: &mut Crawling, input: Option<Input>, now_ms: f64) -> Next {
        let tab = c.tab_id;
        if c.marked.is_none() && !c.clear {
            if c.stop {
                let mut crawls = self.crawls.borrow_mut();
                let stopped = crawls.get_mut(&tab).map(|stop| *stop = true);
                return Step::Done(Ok(Value::Bool(stopped.is_some())));
            }
            if self.crawls.borrow().contains_key(&tab) {
                return Step::Done(Err(format!(
                    "crawl: tab {tab} is being crawled already (stop it with crawl({{tabId: {tab}, stop: true}}))"
                )));
            }
            self.crawls.borrow_mut().insert(tab, false);
            c.marked = Some(true);
        }
        let step = self.suite(&mut c.suite, input, now_ms);
        if matches!(step, Step::Done(_)) && c.marked == Some(true) {
            self.crawls.borrow_mut().remove(&tab);
            c.marked = Some(false);
        }
        step
    }
}

#[cfg(test)]
mod tests;
