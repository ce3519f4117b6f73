use super::*;

fn url(text: &str) -> Url {
    Url::parse(text).unwrap_or_else(|| panic!("`{text}` should parse"))
}

#[test]
fn parses_scheme_host_port_path_query() {
    let u = url("HTTPS://Example.COM:8443/a/b?x=1&y=2#frag");
    assert_eq!(u.scheme, "https");
    assert_eq!(u.host, "example.com");
    assert_eq!(u.port, Some(8443));
    assert_eq!(u.path, "/a/b");
    assert_eq!(u.query.as_deref(), Some("x=1&y=2"));

    let u = url("http://h");
    assert_eq!((u.port, u.path.as_str(), u.query), (None, "", None));
    let u = url("http://h?q");
    assert_eq!((u.path.as_str(), u.query.as_deref()), ("", Some("q")));
    let u = url("http://h#f?not-a-query");
    assert_eq!((u.path.as_str(), u.query), ("", None));
    let u = url("http://h/p#f");
    assert_eq!(u.path, "/p");
}

#[test]
fn parses_ipv6_hosts() {
    let u = url("http://[::1]:8080/mcp");
    assert_eq!((u.host.as_str(), u.port), ("[::1]", Some(8080)));
    let u = url("https://[FE80::1]/");
    assert_eq!(
        (u.host.as_str(), u.port, u.path.as_str()),
        ("[fe80::1]", None, "/")
    );
    assert_eq!(Url::parse("http://[::1"), None);
    assert_eq!(Url::parse("http://[::1]x/"), None);
    assert_eq!(Url::parse("http://[::1]:/"), None);
}

#[test]
fn refuses_what_is_not_an_http_url() {
    for text in [
        "",
        "example.com",
        "ftp://example.com/",
        "chrome-extension://abc/page.html",
        "http://",
        "http:///path",
        "http://user@example.com/",
        "http://user:pw@example.com/",
        "http://example.com:/",
        "http://example.com:port/",
        "http://example.com:65536/",
        "http://exa mple.com/",
        "http://:80/",
    ] {
        assert_eq!(Url::parse(text), None, "{text}");
    }
}

#[test]
fn origins_leave_out_default_ports() {
    assert_eq!(url("https://a.example:443/x").origin(), "https://a.example");
    assert_eq!(url("http://a.example:80/x").origin(), "http://a.example");
    assert_eq!(
        url("https://a.example:80/x").origin(),
        "https://a.example:80"
    );
    assert_eq!(url("http://a.example:443").origin(), "http://a.example:443");
    assert_eq!(url("http://[::1]:3000/mcp").origin(), "http://[::1]:3000");
    assert_eq!(format_origin("http", "h", None), "http://h");
    assert_eq!(format_origin("https", "h", Some(1)), "https://h:1");
}

#[test]
fn origin_slices_keep_the_text_as_written() {
    assert_eq!(
        origin_slice("https://A.example:443/x?y#z"),
        Some("https://A.example:443")
    );
    assert_eq!(
        origin_slice("https://a.example?x"),
        Some("https://a.example")
    );
    assert_eq!(
        origin_slice("https://a.example#x"),
        Some("https://a.example")
    );
    assert_eq!(origin_slice("https://a.example"), Some("https://a.example"));
    assert_eq!(
        origin_slice("chrome-extension://abc/popup.html"),
        Some("chrome-extension://abc")
    );
    assert_eq!(origin_slice("about:blank"), None);
    assert_eq!(origin_slice(""), None);
    assert_eq!(origin_slice("://x/y"), Some("://x"));
}

#[test]
fn http_origins_of_page_urls() {
    assert_eq!(
        http_origin("HTTPS://Shop.Example:443/cart?x=1").as_deref(),
        Some("https://shop.example")
    );
    assert_eq!(
        http_origin("http://127.0.0.1:8080/").as_deref(),
        Some("http://127.0.0.1:8080")
    );
    assert_eq!(http_origin("chrome://extensions/"), None);
    assert_eq!(http_origin("file:///tmp/a.html"), None);
    assert_eq!(http_origin("about:blank"), None);
    assert_eq!(http_origin("https://user@evil.example/"), None);
}

#[test]
fn authorities_split_into_host_and_port() {
    assert_eq!(split_authority("h"), Ok((Host::Name("h"), None)));
    assert_eq!(split_authority("h:1"), Ok((Host::Name("h"), Some("1"))));
    assert_eq!(split_authority("h:"), Ok((Host::Name("h"), Some(""))));
    assert_eq!(split_authority("a:b:1"), Ok((Host::Name("a:b"), Some("1"))));
    assert_eq!(split_authority("[::1]"), Ok((Host::Ipv6("::1"), None)));
    assert_eq!(
        split_authority("[::1]:9"),
        Ok((Host::Ipv6("::1"), Some("9")))
    );
    assert_eq!(split_authority("[::1"), Err(SplitError::UnclosedIpv6));
    assert_eq!(
        split_authority("[::1]9"),
        Err(SplitError::TextAfterIpv6 { inside: "::1" })
    );
    assert_eq!(Host::Ipv6("FE80::A").lowercase(), "[fe80::a]");
    assert_eq!(Host::Name("A.Example").lowercase(), "a.example");
    assert_eq!(split_scheme("a://b://c"), Some(("a", "b://c")));
    assert_eq!(split_scheme("a:/b"), None);
}

#[test]
fn loopback_hosts() {
    for host in [
        "localhost",
        "127.0.0.1",
        "127.1.2.3",
        "127.255.255.255",
        "[::1]",
    ] {
        assert!(is_loopback_host(host), "{host}");
    }
    for host in [
        "",
        "LOCALHOST",
        "localhost.example",
        "127.0.0",
        "127.0.0.256",
        "127.0.0.1.2",
        "128.0.0.1",
        "[::2]",
        "::1",
        "0.0.0.0",
    ] {
        assert!(!is_loopback_host(host), "{host}");
    }
    assert!(url("http://LocalHost:3000/").is_loopback());
    assert!(!url("https://example.com/").is_loopback());
}

#[test]
fn origin_shapes_of_any_scheme() {
    for text in [
        "https://shop.example",
        "http://127.0.0.1:8080",
        "chrome-extension://abc",
        "web+app://x",
    ] {
        assert!(has_origin_shape(text), "{text}");
    }
    for text in [
        "*",
        "shop.example",
        "https://",
        "://shop.example",
        "https://shop.example/",
        "https://shop.example?x",
        "https://shop.example#x",
        "https://user@shop.example",
        "https://shop example",
        "ht_tp://shop.example",
    ] {
        assert!(!has_origin_shape(text), "{text}");
    }
}

#[test]
fn origins_are_normalized() {
    for (text, normal) in [
        ("https://shop.example", "https://shop.example"),
        ("  HTTPS://Shop.Example/ ", "https://shop.example"),
        ("https://shop.example:443", "https://shop.example"),
        ("http://shop.example:80", "http://shop.example"),
        ("http://shop.example:0080", "http://shop.example"),
        ("https://shop.example:8443", "https://shop.example:8443"),
        ("http://localhost:3000/", "http://localhost:3000"),
        ("http://[::1]:3000", "http://[::1]:3000"),
        ("http://[FE80::1]", "http://[fe80::1]"),
        ("http://shop.example.", "http://shop.example."),
    ] {
        assert_eq!(normalize_origin(text).as_deref(), Ok(normal), "{text}");
    }
}

#[test]
fn origins_that_are_not_say_why() {
    for (text, problem) in [
        ("shop.example", OriginProblem::NoScheme),
        ("ftp://shop.example", OriginProblem::NotHttp),
        ("chrome-extension://abc", OriginProblem::NotHttp),
        // The one trailing `/` an origin may have goes first, and with it the `://`.
        ("https://", OriginProblem::NoScheme),
        ("https:///", OriginProblem::NoHost),
        ("https://shop.example/path", OriginProblem::NotOnlyAuthority),
        ("https://shop.example?x", OriginProblem::NotOnlyAuthority),
        ("https://user@shop.example", OriginProblem::NotOnlyAuthority),
        ("https://*.example", OriginProblem::NotOnlyAuthority),
        ("https://a\\b", OriginProblem::NotOnlyAuthority),
        ("https://a b", OriginProblem::NotOnlyAuthority),
        ("http://[::1", OriginProblem::UnclosedIpv6),
        ("http://[]", OriginProblem::BadIpv6),
        ("http://[zz]", OriginProblem::BadIpv6),
        ("http://[zz]x", OriginProblem::BadIpv6),
        ("http://[::1]x", OriginProblem::TextAfterIpv6),
        ("http://.shop.example", OriginProblem::BadHost),
        ("http://shop..example", OriginProblem::BadHost),
        ("http://shop_example", OriginProblem::BadHost),
        ("http://:80", OriginProblem::BadHost),
        ("http://shop.example:", OriginProblem::BadPort),
        ("http://shop.example:0", OriginProblem::BadPort),
        ("http://shop.example:+80", OriginProblem::BadPort),
        ("http://shop.example:65536", OriginProblem::BadPort),
        ("http://[::1]:x", OriginProblem::BadPort),
    ] {
        let error = normalize_origin(text).expect_err(text);
        assert_eq!(error.problem, problem, "{text}");
    }
}

#[test]
fn origin_errors_show_the_text_and_the_reason() {
    let error = normalize_origin("ftp://x").unwrap_err();
    assert_eq!(
        error.to_string(),
        "`ftp://x` is not an origin (only http and https origins can be exposed to)"
    );
    let long = format!("https://{}", "a/".repeat(100));
    let shown = normalize_origin(&long).unwrap_err().shown;
    assert_eq!(shown.chars().count(), 80);
    assert!(long.starts_with(&shown));
}

#[test]
fn nothing_panics_on_odd_text() {
    let odd = [
        "://",
        ":///",
        "[",
        "http://[",
        "http://]",
        "http://[]:",
        "é://ü",
        "http://é:é/é",
        "http://a:99999999999999999999",
        "\u{0}://\u{0}",
    ];
    for text in odd {
        let _ = Url::parse(text);
        let _ = origin_slice(text);
        let _ = http_origin(text);
        let _ = normalize_origin(text);
        let _ = has_origin_shape(text);
    }
}
