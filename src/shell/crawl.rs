//! `webmcpHost.crawl`: performs what the core's [`Crawl`] asks (the sitemap read by the tab's
//! top frame, pages loaded in the tab, its tools listed as `listTools` lists them, the origin's
//! last crawl read and kept in `chrome.storage.local`) and pushes each page to the open pages
//! (`{webmcpHostUi: "crawlProgress", tabId, done, total, page}`).

use serde_json::{json, Value};

use super::io::now_ms;
use super::pages::push;
use crate::core::crawl::{Crawl, CrawlRequest, Next, Reply};
use crate::core::host::listing::Listing;
use crate::core::limits::{CRAWL_LOAD_MS, SITEMAP_MS};
use crate::core::page::bridge::{parse_sitemap_reply, FrameRequest, Reply as Frame, Target};
use crate::core::storage::{Area, CRAWLED, CRAWL_PREFIX};

use super::state::driver;

/// Keeps an origin's crawl, and the index of the origins kept: the least recently crawled
/// past [`crate::core::limits::MAX_CRAWLED_ORIGINS`] is forgotten.
async fn keep(origin: &str, value: &Value) -> Result<(), String> {
    let stored = super::store::read(Area::Local, CRAWLED)
        .await
        .ok()
        .flatten();
    let (origins, dropped) = crate::core::crawl::index(stored.as_ref(), origin);
    for old in dropped {
        super::store::put(Area::Local, &format!("{CRAWL_PREFIX}{old}"), None).await?;
    }
    super::store::put(Area::Local, CRAWLED, Some(&origins)).await?;
    super::store::put(Area::Local, &format!("{CRAWL_PREFIX}{origin}"), Some(value)).await
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
                super::store::read(Area::Local, &format!("{CRAWL_PREFIX}{origin}"))
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
            Next::Keep { origin, value } => Reply::Kept(keep(&origin, &value).await),
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
