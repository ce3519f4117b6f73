//! A scripted shop page, answering the bridge's messages as the content script of a WebMCP
//! page would (`listTools`, `callTool`, `queryDom`, `cancel`): its tools change its cart, which
//! its DOM shows. A page can take its tab elsewhere (a tool that links to a URL, or its own
//! script a moment after a listing), to a page of its site or of another one.

use serde_json::{json, Value};

/// The page of one tab.
#[derive(Debug, Clone)]
pub(crate) struct ShopPage {
    /// The page's URL.
    pub url: String,
    /// How many mugs are in the cart.
    pub cart: u64,
    /// Every tool call the page ran: name and arguments.
    pub ran: Vec<(String, Value)>,
    /// Listings answered while the document still parses (`readyState: "loading"`, no tools)
    /// before the page offers its tools (a page loading after a reload).
    pub loading_listings: usize,
    /// Then listings answered once parsed but before its script registered its tools (a page
    /// that registers them late).
    pub late_listings: usize,
    /// How many times the page was asked for its tools.
    pub listed: usize,
    /// How many times the page loaded: its document's id changes with each load.
    pub loads: u32,
    /// Tools every page of the shop offers before its own (JSON definitions; `open_about`
    /// takes the tab to the shop's about page).
    pub extra: Vec<Value>,
    /// The shop's sitemap, as the page reads it.
    pub sitemap: String,
    /// Whether the person declines the question the page's content script asks before a
    /// consequential call (`confirm()`): the call is not run, and the page answers as the
    /// content script does (`NotAllowedError`).
    pub decline: bool,
    /// Tools that take the tab to a URL when called (name, URL): a checkout that goes on to a
    /// payment site of another origin. Their definitions are the test's, in [`ShopPage::extra`].
    pub links: Vec<(String, String)>,
    /// The page's own script takes the tab to this URL right after the page answered its
    /// `n`th listing from now (1: the next).
    pub moves: Option<(usize, String)>,
    /// Where the page is taking the tab: the harness takes it there once the page answered.
    pub leaving: Option<String>,
    /// How many times its DOM was read (`queryDom`).
    pub read: usize,
}

impl ShopPage {
    pub(crate) fn new(url: &str) -> ShopPage {
        ShopPage {
            url: url.into(),
            cart: 0,
            ran: Vec::new(),
            loading_listings: 0,
            late_listings: 0,
            listed: 0,
            loads: 1,
            extra: Vec::new(),
            sitemap: String::new(),
            decline: false,
            links: Vec::new(),
            moves: None,
            leaving: None,
            read: 0,
        }
    }

    pub(crate) fn origin(&self) -> String {
        crate::core::url::http_origin(&self.url).unwrap_or_default()
    }

    /// The tab loads `url` (a page of the shop: its cart kept), as slowly as a reload.
    pub(crate) fn load(&mut self, url: &str, loading: usize, late: usize) {
        let cart = self.cart;
        self.url = url.into();
        self.reload(loading, late);
        self.cart = cart;
    }

    /// The id of the document the tab holds (`webNavigation`'s `documentId`), unique across
    /// the sites of a test.
    pub(crate) fn document(&self) -> String {
        format!("doc-{}-{}", self.origin(), self.loads)
    }

    /// The page loaded again: a new document, an empty cart, `loading` listings while it
    /// parses and `late` ones before it registers its tools.
    pub(crate) fn reload(&mut self, loading: usize, late: usize) {
        self.loads += 1;
        self.cart = 0;
        self.loading_listings = loading;
        self.late_listings = late;
    }

    /// The reply of the top frame's document to a bridge message, as JSON text; or, when
    /// the message made the page go elsewhere (`open_about`), the channel's failure.
    pub(crate) fn answer(&mut self, message: &Value) -> Result<String, String> {
        let name = message["name"].as_str().unwrap_or_default();
        let link = (self.links.iter()).find(|(tool, _)| tool == name);
        if let (Some("callTool"), Some((_, url))) = (message["op"].as_str(), link) {
            self.leaving = Some(url.clone());
            self.ran.push((name.to_owned(), message["args"].clone()));
            return Err("The message port closed before a response was received.".into());
        }
        let reply = match message["op"].as_str().unwrap_or_default() {
            "listTools" => self.listing(),
            "callTool" if message["name"] == "open_about" => {
                self.ran
                    .push(("open_about".into(), message["args"].clone()));
                let about = format!("{}/about", self.origin());
                self.load(&about, 0, 0);
                return Err("The message port closed before a response was received.".into());
            }
            "callTool" if self.decline && message["confirm"].is_string() => {
                json!({"ok": false, "error": {"name": "NotAllowedError",
                    "message": "declined: the person did not allow this call"}})
            }
            "callTool" => self.call(message),
            "queryDom" => self.query(message),
            "cancel" => json!({"ok": true, "cancelled": false}),
            "readSitemap" => json!({"ok": true, "text": self.sitemap}),
            other => json!({"ok": false, "error": {"name": "NotSupportedError",
                "message": format!("no op `{other}` on this page")}}),
        };
        Ok(reply.to_string())
    }

    fn listing(&mut self) -> Value {
        self.listed += 1;
        if let Some((n, url)) = self.moves.take() {
            match n {
                0 | 1 => self.leaving = Some(url),
                n => self.moves = Some((n - 1, url)),
            }
        }
        let origin = self.origin();
        if self.loading_listings > 0 || self.late_listings > 0 {
            let state = match self.loading_listings {
                0 => "complete",
                _ => "loading",
            };
            match self.loading_listings {
                0 => self.late_listings -= 1,
                _ => self.loading_listings -= 1,
            }
            return json!({"ok": true, "supported": true, "origin": origin, "title": "Shop",
                "readyState": state, "tools": []});
        }
        let qty = json!({"type": "object",
            "properties": {"id": {"type": "string"}, "qty": {"type": "integer"}},
            "required": ["id", "qty"]});
        let empty = json!({"name": "empty_cart", "description": "Empties the cart.",
            "inputSchema": {"type": "object"}});
        let add = json!({"name": "add_to_cart", "description": "Adds mugs to the cart.",
            "inputSchema": qty});
        // The shop's front page offers both; its mugs page adds only; its other pages none.
        let path = self.url.strip_prefix(&origin).unwrap_or("/");
        let own = match path.split(['?', '#']).next().unwrap_or("/") {
            "/" | "" => vec![empty, add],
            "/mugs" => vec![add],
            _ => Vec::new(),
        };
        let mut tools = self.extra.clone();
        tools.extend(own);
        json!({"ok": true, "supported": true, "origin": origin, "title": "Shop",
            "readyState": "complete", "tools": tools})
    }

    fn call(&mut self, message: &Value) -> Value {
        let name = message["name"].as_str().unwrap_or_default().to_owned();
        let args = message["args"].clone();
        self.ran.push((name.clone(), args.clone()));
        match name.as_str() {
            "empty_cart" => {
                self.cart = 0;
                json!({"ok": true, "result": r#"{"emptied": true}"#})
            }
            "add_to_cart" => {
                self.cart += args["qty"].as_u64().unwrap_or(0);
                json!({"ok": true, "result": json!({"cart": self.cart}).to_string()})
            }
            // Offered only when a test adds it (`extra`).
            "place_order" => {
                let order = format!("A-{}", 1000 + self.ran.len());
                json!({"ok": true, "result": json!({"orderId": order, "status": "placed"}).to_string()})
            }
            _ => json!({"ok": false, "error": {"name": "NotFoundError",
                "message": format!("no tool named \"{name}\"")}}),
        }
    }

    /// `.cart-count` shows the cart; no other selector matches.
    fn query(&mut self, message: &Value) -> Value {
        self.read += 1;
        let queries = message["queries"].as_array().cloned().unwrap_or_default();
        let results: Vec<Value> = (queries.iter())
            .map(|query| match query["selector"].as_str() {
                Some(".cart-count") => json!({"count": 1, "text": self.cart.to_string()}),
                _ => json!({"count": 0}),
            })
            .collect();
        json!({"ok": true, "results": results})
    }
}
