//! The loopback redirect listener's side of HTTP, sans-IO: the redirect a browser brings to
//! `http://127.0.0.1:PORT/callback`, and the page it gets back. The shell owns the socket.

/// The whole HTTP/1.1 response the browser gets from the loopback listener.
pub fn loopback_response() -> String {
    let page =
        "<!doctype html><title>webmcp-host</title><p>Signed in: you can close this page.</p>";
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
        page.len()
    )
}

/// The redirect (the redirect URI with the callback's query) that a browser's request to the
/// listener carries, when it is for the callback path of `redirect_uri`.
pub fn loopback_redirect(request_head: &str, redirect_uri: &str) -> Option<String> {
    let target = request_head.lines().next()?.split(' ').nth(1)?;
    let origin = redirect_uri.strip_suffix("/callback")?;
    target
        .starts_with("/callback")
        .then(|| format!("{origin}{target}"))
}
