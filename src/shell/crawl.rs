//! `webmcpHost.crawl`: the host's [`Crawling`] driven to its answer (the crawl, its stop or
//! the kept crawls cleared).

use serde_json::Value;

use crate::core::crawl::CrawlRequest;
use crate::core::host::crawling::Crawling;

/// Crawls one origin's pages in a tab; resolves to the crawl's answer. With `stop: true`, ends
/// the tab's crawl under way instead (it answers with the pages it has): `true` if there was
/// one. With `clear: true`, removes every kept crawl.
pub async fn crawl(request: CrawlRequest) -> Result<Value, String> {
    let mut c = Crawling::new(request);
    super::drive(|host, input, now| host.crawl(&mut c, input, now)).await
}
