//! `crawl`: a site's coverage, page by page. The pages of one origin (given, or read from its
//! sitemap) are loaded in the tab one after another; each page's tools are listed, audited
//! (the static rules: nothing is called) and its declarative forms named; the answer is
//! compared with the origin's previous crawl (tools added, removed, redefined), and the tab
//! goes back to the page it showed.
//!
//! Sans-IO, like an evaluation: [`Crawl::poll`] says what to do next ([`Next`]), the host's
//! crawl (`host::crawling`) does it and answers with [`Crawl::handle`] ([`Reply`]).
//!
//! Invariants: a crawl stays on the origin of the tab's page as Chrome names it (a URL of
//! another origin is skipped, never loaded; a sitemap is read on that origin only); it loads at
//! most [`MAX_CRAWL_PAGES`] pages; what it keeps for the next crawl is per origin and holds
//! only fingerprints of tool definitions ([`fingerprint`]), no page text; an origin's kept crawl
//! weighs at most [`MAX_CRAWL_KEPT_BYTES`] and every kept crawl together at most
//! [`MAX_CRAWLS_KEPT_BYTES`], as the browser counts them ([`kept`], [`keeping`]), so the
//! person's settings always have room in `chrome.storage.local`.

use serde_json::{json, Map, Value};

use crate::core::evals::messages::short as short_value;
pub use crate::core::limits::{
    CRAWL_SETTLE_MS, DEFAULT_CRAWL_PAGES, MAX_CRAWLED_ORIGINS, MAX_CRAWLS_KEPT_BYTES,
    MAX_CRAWL_KEPT_BYTES, MAX_CRAWL_MS, MAX_CRAWL_PAGES, MAX_CRAWL_URLS, MAX_CRAWL_URL_BYTES,
    MAX_SITEMAP_BYTES,
};
use crate::core::naming::kind;
use crate::core::page::ready::Settle;
use crate::core::page::tabs::{Listed, TabTools};
use crate::core::url::Url;
pub use keep::{clearing, keeping, kept, kept_key, Keeping, Kept};

mod keep;
mod report;
#[cfg(test)]
mod tests;

/// What `crawl` was asked.
#[derive(Debug, Clone, PartialEq)]
pub struct CrawlRequest {
    /// The tab the pages are loaded in.
    pub tab_id: i64,
    /// The pages, as given (absolute, or a path from the origin's root: `/shop`).
    pub urls: Vec<String>,
    /// A sitemap to read the pages from (`<loc>` entries), on the tab's origin.
    pub sitemap: Option<String>,
    /// At most this many pages are loaded.
    pub limit: usize,
    /// `html` adds `report`, the answer as one self-contained page.
    pub html: bool,
    /// `stop: true`: not a crawl, but the end of the tab's crawl under way.
    pub stop: bool,
    /// `clear: true`: not a crawl, but every kept crawl forgotten ([`clearing`]).
    pub clear: bool,
}

impl CrawlRequest {
    /// `{tabId, urls | sitemap, sameOrigin?, limit?, format?}`, `{tabId, stop: true}` or
    /// `{clear: true}`, with errors naming the field.
    pub fn parse(value: &Value) -> Result<CrawlRequest, String> {
        let map = value
            .as_object()
            .ok_or_else(|| format!("crawl: the request is {}, not an object", kind(value)))?;
        match map.get("clear") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => {
                if let Some(other) =
                    (map.keys()).find(|k| !["clear", "tabId"].contains(&k.as_str()))
                {
                    let shown: String = other.chars().take(32).collect();
                    return Err(format!(
                        "crawl: `clear` forgets every kept crawl: it takes no `{shown}`"
                    ));
                }
                return Ok(CrawlRequest {
                    tab_id: map.get("tabId").and_then(Value::as_i64).unwrap_or(0),
                    urls: Vec::new(),
                    sitemap: None,
                    limit: DEFAULT_CRAWL_PAGES,
                    html: false,
                    stop: false,
                    clear: true,
                });
            }
            Some(other) => return Err(format!("crawl: `clear` is {}, not true", kind(other))),
        }
        let tab_id = map
            .get("tabId")
            .and_then(Value::as_i64)
            .ok_or("crawl: `tabId` is required: the tab to load the pages in")?;
        let stop = match map.get("stop") {
            None | Some(Value::Null) | Some(Value::Bool(false)) => false,
            Some(Value::Bool(true)) => true,
            Some(other) => return Err(format!("crawl: `stop` is {}, not true", kind(other))),
        };
        if stop {
            return Ok(CrawlRequest {
                tab_id,
                urls: Vec::new(),
                sitemap: None,
                limit: DEFAULT_CRAWL_PAGES,
                html: false,
                stop,
                clear: false,
            });
        }
        if let Some(same) = map.get("sameOrigin").filter(|v| !v.is_null()) {
            if same != &Value::Bool(true) {
                return Err(
                    "crawl: `sameOrigin` must be true: a crawl stays on the origin of the tab's page"
                        .into(),
                );
            }
        }
        let urls = match map.get("urls") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => {
                if items.len() > MAX_CRAWL_URLS {
                    return Err(format!(
                        "crawl: {} `urls`, over the cap of {MAX_CRAWL_URLS}",
                        items.len()
                    ));
                }
                items
                    .iter()
                    .map(|u| u.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or("crawl: `urls` must be strings")?
            }
            Some(other) => return Err(format!("crawl: `urls` is {}, not an array", kind(other))),
        };
        let sitemap = match map.get("sitemap") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            Some(other) => {
                return Err(format!("crawl: `sitemap` is {}, not a URL", kind(other)));
            }
        };
        match (urls.is_empty(), &sitemap) {
            (true, None) => return Err("crawl: give `urls` or a `sitemap`".into()),
            (false, Some(_)) => return Err("crawl: give `urls` or a `sitemap`, not both".into()),
            _ => {}
        }
        let limit = match map.get("limit") {
            None | Some(Value::Null) => DEFAULT_CRAWL_PAGES,
            Some(v) => match v.as_u64() {
                Some(n) if (1..=MAX_CRAWL_PAGES as u64).contains(&n) => n as usize,
                _ => {
                    let shown: String = v.to_string().chars().take(32).collect();
                    return Err(format!(
                        "crawl: `limit` must be 1 to {MAX_CRAWL_PAGES}, not {shown}"
                    ));
                }
            },
        };
        let html = match map.get("format").and_then(Value::as_str) {
            None | Some("json") => false,
            Some("html") => true,
            Some(other) => {
                let shown: String = other.chars().take(32).collect();
                return Err(format!(
                    "crawl: unknown format {shown:?}; known: json, html"
                ));
            }
        };
        Ok(CrawlRequest {
            tab_id,
            urls,
            sitemap,
            limit,
            html,
            stop,
            clear: false,
        })
    }
}

/// What the host does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    /// Read the sitemap `url` (on the tab's origin) in the tab's page: [`Reply::Sitemap`].
    ReadSitemap {
        /// The tab.
        tab_id: i64,
        /// The sitemap.
        url: String,
    },
    /// Read what the origin's previous crawl kept: [`Reply::Previous`].
    Previous {
        /// The origin.
        origin: String,
    },
    /// Load `url` in the tab (a page to crawl, or at the end the page it showed):
    /// [`Reply::Loaded`].
    Load {
        /// The tab.
        tab_id: i64,
        /// The page.
        url: String,
    },
    /// List the tab's tools (as `listTools` lists them), `after_ms` from now, its page as
    /// settled as `settle` says: [`Reply::Listed`].
    List {
        /// The tab.
        tab_id: i64,
        /// The wait before listing.
        after_ms: u32,
        /// How settled the page must be: [`Settle::AfterLoad`] after a page is loaded.
        settle: Settle,
    },
    /// Keep `value` for the origin's next crawl (the other kept crawls as [`keeping`] says):
    /// [`Reply::Kept`].
    Keep {
        /// The origin.
        origin: String,
        /// What to keep.
        value: Value,
        /// What it weighs against the quota ([`Kept::bytes`]).
        bytes: usize,
    },
    /// The answer.
    Done(Value),
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// The sitemap's text, or why it could not be read.
    Sitemap(Result<String, String>),
    /// What the origin's previous crawl kept, if any.
    Previous(Option<Value>),
    /// The page loaded (the URL the tab shows then), or why not.
    Loaded(Result<String, String>),
    /// The tab's tools as `listTools` answers them, or why they could not be listed.
    Listed(Listed),
    /// Kept (or the keeping failed: the answer says so).
    Kept(Result<(), String>),
}

#[derive(Debug, Clone, PartialEq)]
enum Stage {
    Sitemap,
    Previous,
    Load,
    /// The page loaded: listed once it is ready (`core::page::ready`).
    Ready,
    List {
        tries: u32,
    },
    Return,
    Keep,
    Done,
}

/// One crawl under way.
#[derive(Debug)]
pub struct Crawl {
    request: CrawlRequest,
    origin: String,
    start_url: String,
    now_ms: f64,
    stage: Stage,
    queue: Vec<String>,
    skipped: Vec<Value>,
    at: usize,
    pages: Vec<Value>,
    previous: Option<Value>,
    keep: Option<Kept>,
    kept_error: Option<String>,
    kept_note: Option<String>,
    sitemap_note: Option<String>,
}

impl Crawl {
    /// A crawl of `request` from the tab's page `start_url` (as Chrome names it), at `now_ms`.
    /// Fails when that page has no http(s) origin or the sitemap is on another origin.
    pub fn new(request: CrawlRequest, start_url: &str, now_ms: f64) -> Result<Crawl, String> {
        let origin = Url::parse(start_url)
            .map(|u| u.origin())
            .ok_or("crawl: the tab shows no http(s) page to crawl from")?;
        let mut crawl = Crawl {
            origin,
            start_url: start_url.to_owned(),
            now_ms,
            stage: Stage::Previous,
            queue: Vec::new(),
            skipped: Vec::new(),
            at: 0,
            pages: Vec::new(),
            previous: None,
            keep: None,
            kept_error: None,
            kept_note: None,
            sitemap_note: None,
            request,
        };
        if let Some(sitemap) = crawl.request.sitemap.clone() {
            let url = crawl
                .resolve(&sitemap)
                .map_err(|why| format!("crawl: the sitemap {why}"))?;
            crawl.request.sitemap = Some(url);
            crawl.stage = Stage::Sitemap;
        } else {
            let urls = std::mem::take(&mut crawl.request.urls);
            crawl.enqueue(urls);
        }
        Ok(crawl)
    }

    /// The origin crawled.
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Pages done, and pages in all (known once the sitemap is read).
    pub fn progress(&self) -> (usize, usize) {
        (self.pages.len(), self.queue.len())
    }

    /// `url` made absolute on the crawl's origin, without its fragment; or why it is not crawled.
    fn resolve(&self, url: &str) -> Result<String, String> {
        let url = url.trim();
        let absolute = if url.starts_with('/') && !url.starts_with("//") {
            format!("{}{url}", self.origin)
        } else {
            url.to_owned()
        };
        if absolute.len() > MAX_CRAWL_URL_BYTES {
            return Err(format!("is over {MAX_CRAWL_URL_BYTES} bytes long"));
        }
        let parsed = Url::parse(&absolute)
            .ok_or_else(|| "is not an http(s) URL or a path from the site's root".to_owned())?;
        if parsed.origin() != self.origin {
            return Err(format!(
                "is on another origin ({}): a crawl stays on {}",
                parsed.origin(),
                self.origin
            ));
        }
        Ok(normal_url(&parsed))
    }

    fn enqueue(&mut self, urls: Vec<String>) {
        for url in urls {
            match self.resolve(&url) {
                Err(why) => self.skipped.push(json!({"url": url, "why": why})),
                Ok(url) if self.queue.contains(&url) => {}
                Ok(url) if self.queue.len() >= self.request.limit => self.skipped.push(
                    json!({"url": url, "why": format!("over the limit of {} pages", self.request.limit)}),
                ),
                Ok(url) => self.queue.push(url),
            }
        }
    }

    /// What to do next (the same until [`Crawl::handle`] is told what happened).
    pub fn poll(&mut self) -> Next {
        let tab_id = self.request.tab_id;
        match &self.stage {
            Stage::Sitemap => Next::ReadSitemap {
                tab_id,
                url: self.request.sitemap.clone().unwrap_or_default(),
            },
            Stage::Previous => Next::Previous {
                origin: self.origin.clone(),
            },
            Stage::Load => match self.queue.get(self.at) {
                Some(url) => Next::Load {
                    tab_id,
                    url: url.clone(),
                },
                // Nothing was loaded: the tab is where it was, and nothing new is kept.
                None if self.pages.is_empty() => {
                    self.stage = Stage::Done;
                    self.poll()
                }
                None => {
                    self.stage = Stage::Return;
                    self.poll()
                }
            },
            Stage::Ready => Next::List {
                tab_id,
                after_ms: 0,
                settle: Settle::AfterLoad,
            },
            Stage::List { tries } => Next::List {
                tab_id,
                after_ms: if *tries == 0 { 0 } else { CRAWL_SETTLE_MS },
                settle: Settle::Now,
            },
            Stage::Return => Next::Load {
                tab_id,
                url: self.start_url.clone(),
            },
            Stage::Keep => match &self.keep {
                Some(kept) => Next::Keep {
                    origin: self.origin.clone(),
                    value: kept.value.clone(),
                    bytes: kept.bytes,
                },
                None => {
                    self.stage = Stage::Done;
                    self.poll()
                }
            },
            Stage::Done => Next::Done(self.answer()),
        }
    }

    /// What happened; a page's entry once it is done (for the host to push as progress).
    pub fn handle(&mut self, reply: Reply) -> Option<Value> {
        match (self.stage.clone(), reply) {
            (Stage::Sitemap, Reply::Sitemap(text)) => {
                match text {
                    Ok(text) => {
                        let (urls, nested) = sitemap_locs(&text);
                        if nested > 0 {
                            self.sitemap_note = Some(format!(
                                "the sitemap is an index of {nested} sitemaps: give one of them"
                            ));
                        } else if urls.is_empty() {
                            self.sitemap_note = Some("the sitemap lists no <loc>".into());
                        }
                        self.enqueue(urls);
                    }
                    Err(why) => {
                        self.sitemap_note = Some(format!("the sitemap was not read: {why}"))
                    }
                }
                self.stage = Stage::Previous;
                None
            }
            (Stage::Previous, Reply::Previous(previous)) => {
                self.previous = previous.filter(|p| p["pages"].is_object());
                self.stage = Stage::Load;
                None
            }
            (Stage::Load, Reply::Loaded(loaded)) => {
                let url = self.queue[self.at].clone();
                match loaded.and_then(|landed| self.on_origin(&landed)) {
                    Ok(()) => {
                        self.stage = Stage::Ready;
                        None
                    }
                    Err(why) => self.page_done(json!({"url": url, "error": why})),
                }
            }
            (Stage::Ready, Reply::Listed(listed)) => self.listed(0, listed),
            (Stage::List { tries }, Reply::Listed(listed)) => self.listed(tries, listed),
            (Stage::Return, Reply::Loaded(_)) => {
                self.keep = self.kept();
                self.stage = Stage::Keep;
                None
            }
            (Stage::Keep, Reply::Kept(kept)) => {
                self.kept_error = kept.err();
                self.stage = Stage::Done;
                None
            }
            // A reply for another stage (a bug in its driver): ignored, the stage asks again.
            _ => None,
        }
    }

    /// The page's listing (its `tries`th, from 0): its entry, or one more listing.
    fn listed(&mut self, tries: u32, listed: Listed) -> Option<Value> {
        let url = self.queue[self.at].clone();
        match listed {
            // A page that registers its tools a moment after loading is listed again.
            Ok(listing) if listing.tools.is_empty() && tries == 0 => {
                self.stage = Stage::List { tries: 1 };
                None
            }
            // The page may have moved on by itself since it loaded: its tools are
            // this origin's only while it shows a page of it.
            Ok(listing) => match (listing.page.as_ref()).map(|p| self.on_origin(&p.url)) {
                Some(Err(why)) => self.page_done(json!({"url": url, "error": why})),
                _ => self.page_done(page_entry(&url, &listing, &self.origin)),
            },
            Err(why) => self.page_done(json!({"url": url, "error": why})),
        }
    }

    /// Whether the tab shows a page of the crawl's origin (`landed`: where it went).
    fn on_origin(&self, landed: &str) -> Result<(), String> {
        match Url::parse(landed).map(|u| u.origin()) {
            Some(origin) if origin == self.origin => Ok(()),
            Some(origin) => Err(format!(
                "the page went to another origin ({origin}); its tools are not listed"
            )),
            None => Err(format!(
                "the page went to {}: not a page of {}",
                short(landed),
                self.origin
            )),
        }
    }

    /// Past the crawl's time budget ([`MAX_CRAWL_MS`] from its start, `now_ms`): the pages not
    /// loaded yet are skipped, and the crawl ends with those it has.
    pub fn tick(&mut self, now_ms: f64) {
        if now_ms - self.now_ms > MAX_CRAWL_MS as f64 {
            let minutes = MAX_CRAWL_MS / 60_000;
            self.skip_the_rest(&format!(
                "over the crawl's time budget of {minutes} minutes"
            ));
        }
    }

    /// Stopped by the person (`crawl({tabId, stop: true})`): the pages not loaded yet are
    /// skipped, and the crawl ends with those it has (the tab goes back, what it saw is kept).
    pub fn stop(&mut self) {
        self.skip_the_rest("the crawl was stopped");
    }

    fn skip_the_rest(&mut self, why: &str) {
        if self.stage != Stage::Load {
            return;
        }
        for url in self.queue.drain(self.at..) {
            self.skipped.push(json!({"url": url, "why": why}));
        }
    }

    fn page_done(&mut self, page: Value) -> Option<Value> {
        self.pages.push(page.clone());
        self.at += 1;
        self.stage = Stage::Load;
        Some(page)
    }

    /// What is kept for the origin's next crawl ([`kept`]): `{at, pages: {url: {at, tools:
    /// {tool: fingerprint}}}}`, this crawl's pages over the ones kept before (a page this crawl
    /// did not reach keeps its last state, so a partial crawl forgets nothing), within the
    /// origin's budget; what was left out is said in the answer (`keptNote`).
    fn kept(&mut self) -> Option<Kept> {
        let pages: Vec<(String, Value)> = (self.pages.iter())
            .filter(|p| p.get("error").is_none())
            .map(|p| (text(&p["url"]), p["fingerprints"].clone()))
            .collect();
        let kept = kept(&self.origin, self.now_ms, &pages, self.previous.as_ref());
        let budget =
            format!("an origin keeps at most {MAX_CRAWL_KEPT_BYTES} bytes (max_crawl_kept_bytes)");
        self.kept_note = match &kept {
            None => Some(format!(
                "nothing was kept for the next crawl: the origin's name is too long ({budget})"
            )),
            Some(k) if k.left_out + k.forgotten > 0 => {
                let mut said = Vec::new();
                if k.left_out > 0 {
                    said.push(format!(
                        "{} of the {} pages of this crawl were not kept for the next crawl",
                        k.left_out,
                        pages.len()
                    ));
                }
                if k.forgotten > 0 {
                    said.push(format!("{} pages kept before were forgotten", k.forgotten));
                }
                Some(format!("{}: {budget}", said.join(", and ")))
            }
            Some(_) => None,
        };
        kept
    }

    fn answer(&self) -> Value {
        let pages: Vec<Value> = (self.pages.iter())
            .map(|p| {
                let mut p = p.clone();
                if let Some(map) = p.as_object_mut() {
                    map.remove("fingerprints");
                }
                p
            })
            .collect();
        let ok: Vec<&Value> = pages.iter().filter(|p| p.get("error").is_none()).collect();
        let count = |key: &str| -> usize {
            ok.iter()
                .map(|p| p[key].as_array().map_or(0, Vec::len))
                .sum()
        };
        let scores: Vec<u64> = ok.iter().filter_map(|p| p["score"].as_u64()).collect();
        let mut answer = json!({
            "origin": self.origin,
            "pages": pages,
            "totals": {
                "pages": self.pages.len(),
                "failed": self.pages.len() - ok.len(),
                "tools": count("tools"),
                "forms": count("forms"),
                "findings": count("findings"),
                "lowestScore": scores.iter().min(),
            },
            "skipped": self.skipped,
            "diff": self.diff(),
        });
        if let Some(note) = &self.sitemap_note {
            answer["sitemapNote"] = json!(note);
        }
        if let Some(note) = &self.kept_note {
            answer["keptNote"] = json!(note);
        }
        if let Some(error) = &self.kept_error {
            answer["keptError"] = json!(error);
        }
        if self.request.html {
            answer["report"] = json!(report::html(&answer));
        }
        answer
    }

    /// This crawl against what the origin's earlier crawls kept: per page the tools added,
    /// removed and redefined since it was last crawled (`since`); the pages never crawled
    /// before, and those kept that this crawl did not reach. `null` for the origin's first
    /// crawl.
    fn diff(&self) -> Value {
        let Some(previous) = &self.previous else {
            return Value::Null;
        };
        let before = previous["pages"].as_object().cloned().unwrap_or_default();
        let mut changed = Vec::new();
        let mut new_pages = Vec::new();
        for page in self.pages.iter().filter(|p| p.get("error").is_none()) {
            let url = text(&page["url"]);
            let now = page["fingerprints"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let Some(kept) = before.get(&url) else {
                new_pages.push(json!(url));
                continue;
            };
            let Some(then) = kept["tools"].as_object() else {
                new_pages.push(json!(url));
                continue;
            };
            let names = |m: &Map<String, Value>, other: &Map<String, Value>| -> Vec<String> {
                m.keys()
                    .filter(|k| !other.contains_key(*k))
                    .cloned()
                    .collect()
            };
            let (added, removed) = (names(&now, then), names(then, &now));
            let redefined: Vec<&String> = (now.iter())
                .filter(|(k, v)| then.get(*k).is_some_and(|w| w != *v))
                .map(|(k, _)| k)
                .collect();
            if !(added.is_empty() && removed.is_empty() && redefined.is_empty()) {
                changed.push(json!({"url": url, "since": kept["at"], "added": added,
                                    "removed": removed, "redefined": redefined}));
            }
        }
        let crawled: Vec<String> = self.pages.iter().map(|p| text(&p["url"])).collect();
        let missing: Vec<&String> = before.keys().filter(|u| !crawled.contains(u)).collect();
        json!({
            "previousAt": previous["at"],
            "pages": changed,
            "newPages": new_pages,
            "missingPages": missing,
        })
    }
}

fn short(text: &str) -> String {
    short_value(&json!(text))
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_owned()
}

/// A URL as Chrome writes it: origin without its scheme's default port, a path (`/` at least),
/// the query, no fragment, spaces as `%20`.
fn normal_url(url: &Url) -> String {
    let path = if url.path.is_empty() { "/" } else { &url.path };
    let query = url
        .query
        .as_ref()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    format!("{}{path}{query}", url.origin()).replace(' ', "%20")
}

/// A tool's definition as one short fingerprint (the first 128 bits of the SHA-256 of its
/// title, description, schemas and hints, as hex): two crawls compare them to tell a redefined
/// tool, and a page cannot make two definitions collide.
pub fn fingerprint(tool: &Value) -> String {
    use sha2::{Digest, Sha256};
    let definition = json!([
        tool["title"],
        tool["description"],
        tool["inputSchema"],
        tool["outputSchema"],
        tool["annotations"],
    ])
    .to_string();
    let digest = Sha256::digest(definition.as_bytes());
    digest[..16].iter().map(|b| format!("{b:02x}")).collect()
}

/// One page's entry: its tools (name, frame, description, form), its declarative forms, the
/// audit's score and findings, what the listing skipped, and the fingerprints kept.
fn page_entry(url: &str, listing: &TabTools, origin: &str) -> Value {
    let tools: Vec<Value> = (listing.tools.iter())
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect();
    let audit = crate::core::audit::audit_tab(listing);
    let mut fingerprints = Map::new();
    let listed: Vec<Value> = (tools.iter())
        .map(|t| {
            let name = text(&t["name"]);
            // A frame of another origin's tool is kept under its origin too: the same name in
            // two origins' frames is two tools.
            let key = match t["origin"].as_str() {
                Some(other) if other != origin => format!("{name} ({other})"),
                _ => name.clone(),
            };
            fingerprints.insert(key, json!(fingerprint(t)));
            let mut entry =
                json!({"name": name, "frameId": t["frameId"], "description": t["description"]});
            if t["form"].is_object() {
                entry["form"] = t["form"].clone();
            }
            entry
        })
        .collect();
    let forms: Vec<Value> = (tools.iter())
        .filter(|t| t["form"].is_object())
        .map(|t| t["name"].clone())
        .collect();
    let mut page = json!({
        "url": url,
        "title": listing.page.as_ref().map(|p| p.title.as_str()),
        "tools": listed,
        "forms": forms,
        "fingerprints": fingerprints,
    });
    let landed = listing.page.as_ref().map(|p| p.url.as_str());
    if let Some(landed) = landed.filter(|l| *l != url) {
        page["landed"] = json!(landed);
    }
    let audit = audit.to_json();
    page["score"] = audit["score"].clone();
    page["findings"] = audit["findings"].clone();
    if !listing.problems.is_empty() {
        page["problems"] = json!(listing.problems);
    }
    page
}

/// The `<loc>` entries of a sitemap (XML entities read back), and how many of them are nested
/// sitemaps (a sitemap index's `<sitemap><loc>`), which are not followed.
pub fn sitemap_locs(text: &str) -> (Vec<String>, usize) {
    let text = crate::core::limits::cut_to(text, MAX_SITEMAP_BYTES);
    let nested = text.matches("<sitemap>").count() + text.matches("<sitemap ").count();
    if nested > 0 {
        return (Vec::new(), nested);
    }
    let mut urls = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("<loc>") {
        let after = &rest[start + 5..];
        let Some(end) = after.find("</loc>") else {
            break;
        };
        let loc = after[..end]
            .trim()
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&");
        urls.push(loc);
        rest = &after[end + 6..];
        if urls.len() >= MAX_CRAWL_URLS {
            break;
        }
    }
    (urls, 0)
}
