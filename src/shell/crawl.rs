//! `webmcpHost.crawl`: performs what the core's [`Crawl`] asks (the sitemap read by the tab's
//! top frame, pages loaded in the tab, its tools listed as `listTools` lists them, the origin's
//! last crawl read and kept in `chrome.storage.local`, the other kept crawls forgotten as
//! [`keeping`] says) and pushes each page to the open pages
//! (`{webmcpHostUi: "crawlProgress", tabId, done, total, page}`); `crawl({clear: true})`
//! removes every kept crawl ([`clearing`]).

use serde_json::{json, Value};

use super::io::now_ms;
use super::pages::push;
use crate::core::crawl::{clearing, keeping, kept_key, Crawl, CrawlRequest, Next, Reply};
use crate::core::host::listing::Listing;
use crate::core::limits::{CRAWL_LOAD_MS, SITEMAP_MS};
use crate::core::page::bridge::{parse_sitemap_reply, FrameRequest, Reply as Frame, Target};
use crate::core::storage::{Area, CRAWLED};

use super::state::driver;

/// Keeps an origin's crawl of `bytes`, and the index of the origins kept: the crawls
/// [`keeping`] forgets are removed first, then the index is written, then the crawl (removed
/// when it could not be written: nothing is stored past what the index weighs).
async fn keep(origin: &str, value: &Value, bytes: usize) -> Result<(), String> {
    let index = super::store::read(Area::Local, CRAWLED)
        .await
        .ok()
        .flatten();
    let stored = super::store::keys(Area::Local).await?;
    let plan = keeping(index.as_ref(), &stored, origin, bytes);
    for key in &plan.remove {
        super::store::put(Area::Local, key, None).await?;
    }
    super::store::put(Area::Local, CRAWLED, Some(&plan.index)).await?;
    let key = kept_key(origin);
    let kept = super::store::put(Area::Local, &key, Some(value)).await;
    if kept.is_err() {
        let _ = super::store::put(Area::Local, &key, None).await;
    }
    kept
}

/// `crawl({clear: true})`: every kept crawl and the index removed; `{cleared: [origin]}`.
async fn clear() -> Result<Value, String> {
    let (keys, answer) = clearing(&super::store::keys(Area::Local).await?);
    for key in &keys {
        super::store::put(Area::Local, key, None).await?;
    }
    Ok(answer)
}

/// The tab's crawl under way, marked in the driver while it runs (one a tab).
struct Crawling(i64);

impl Crawling {
    fn begin(tab: i64) -> Result<Crawling, String> {
        driver(|d| {
            let mut crawls = d.crawls.borrow_mut();
            if crawls.contains_key(&tab) {
                return Err(format!(
                    "crawl: tab {tab} is being crawled already (stop it with crawl({{tabId: {tab}, stop: true}}))"
                ));
            }
            crawls.insert(tab, false);
            Ok(Crawling(tab))
        })
    }

    fn stop_asked(&self) -> bool {
        driver(|d| d.crawls.borrow().get(&self.0).copied().unwrap_or(false))
    }
}

impl Drop for Crawling {
    fn drop(&mut self) {
        driver(|d| d.crawls.borrow_mut().remove(&self.0));
    }
}

/// Crawls one origin's pages in a tab; resolves to the crawl's answer. With `stop: true`, ends
/// the tab's crawl under way instead (it answers with the pages it has): `true` if there was
/// one.
pub async fn crawl(request: CrawlRequest) -> Result<Value, String> {
    let tab = request.tab_id;
    if request.clear {
        return clear().await;
    }
    if request.stop {
        let stopped = driver(|d| d.crawls.borrow_mut().get_mut(&tab).map(|s| *s = true));
        return Ok(Value::Bool(stopped.is_some()));
    }
    let crawling = Crawling::begin(tab)?;
    let start = super::evals::page_url("crawl", tab).await?;
    let mut crawl = Crawl::new(request, &start, now_ms())?;
    loop {
        crawl.tick(now_ms());
        if crawling.stop_asked() {
            crawl.stop();
        }
        let reply = match crawl.poll() {
            Next::Done(answer) => return Ok(answer),
            Next::ReadSitemap { tab_id, url } => {
                let message = FrameRequest::ReadSitemap { url }.to_message();
                Reply::Sitemap(
                    match super::ask(tab_id, Target::TOP, &message, SITEMAP_MS).await {
                        Frame::Answered(Ok(text)) => parse_sitemap_reply(&text),
                        Frame::Answered(Err(e)) | Frame::Failed(e) => Err(e),
                        Frame::TimedOut => Err(format!("no answer within {SITEMAP_MS} ms")),
                    },
                )
            }
            Next::Previous { origin } => Reply::Previous(
                super::store::read(Area::Local, &kept_key(&origin))
                    .await
                    .ok()
                    .flatten(),
            ),
            Next::Load { tab_id, url } => Reply::Loaded(
                match super::io::load_tab(tab_id as f64, &url, CRAWL_LOAD_MS).await {
                    Ok(landed) => Ok(landed.as_string().unwrap_or(url)),
                    Err(e) => Err(super::convert::describe(&e)),
                },
            ),
            Next::List {
                tab_id,
                after_ms,
                settle,
            } => Reply::Listed(super::list(Listing::kept(tab_id, settle).after(after_ms)).await),
            Next::Keep {
                origin,
                value,
                bytes,
            } => Reply::Kept(keep(&origin, &value, bytes).await),
        };
        if let Some(page) = crawl.handle(reply) {
            let (done, total) = crawl.progress();
            push(
                "crawlProgress",
                json!({"tabId": tab, "done": done, "total": total, "page": page}),
            );
        }
    }
}
