//! The URLs of discovery: endpoint checks (https, or http on loopback), the canonical
//! resource, and the well-known metadata URLs in the order the spec gives.

/// The parts of an absolute http(s) URL: the one parser of `core::url`, under the name
/// discovery has always used.
pub use crate::core::url::Url as UrlParts;

/// `localhost`, `127.x.x.x` or `[::1]`.
pub fn is_loopback_host(host: &str) -> bool {
    crate::core::url::is_loopback_host(host)
}

/// Discovery and OAuth endpoints must be https; plain http only on loopback.
pub fn check_endpoint_url(url: &str, what: &str) -> Result<UrlParts, String> {
    let parts = UrlParts::parse(url)
        .ok_or_else(|| format!("the {what} `{}` is not an http(s) URL", strip_query(url)))?;
    if parts.scheme != "https" && !parts.is_loopback() {
        return Err(format!(
            "the {what} {} must use https (plain http only on loopback)",
            strip_query(url)
        ));
    }
    Ok(parts)
}

/// A URL without its query and fragment, for messages.
pub fn strip_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// The server URL as a resource indicator (RFC 8707): scheme and host lowercased, no
/// fragment, no default port, no trailing slash (unless the path is just `/`).
pub fn canonical_resource(server_url: &str) -> String {
    match UrlParts::parse(server_url) {
        Some(parts) => {
            let mut path = parts.path.clone();
            while path.len() > 1 && path.ends_with('/') {
                path.pop();
            }
            if path == "/" {
                path.clear();
            }
            let query = parts
                .query
                .as_deref()
                .map(|q| format!("?{q}"))
                .unwrap_or_default();
            format!("{}{path}{query}", parts.origin())
        }
        None => server_url.to_owned(),
    }
}

/// Whether a protected resource's `resource` covers the server URL: same origin, and the
/// server's path within the resource's.
pub fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some(r), Some(s)) = (UrlParts::parse(resource), UrlParts::parse(server_url)) else {
        return false;
    };
    if r.origin() != s.origin() {
        return false;
    }
    let trim = |p: &str| p.trim_end_matches('/').to_owned();
    let (rp, sp) = (trim(&r.path), trim(&s.path));
    rp.is_empty() || sp == rp || sp.starts_with(&format!("{rp}/"))
}

/// Where to look for the protected resource metadata, in order: the header's URL, the
/// path-based well-known URL, the root one.
pub fn resource_metadata_urls(server_url: &str, from_header: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(url) = from_header {
        out.push(url.to_owned());
    }
    if let Some(parts) = UrlParts::parse(server_url) {
        let path = parts.path.trim_end_matches('/');
        let origin = parts.origin();
        if !path.is_empty() {
            out.push(format!(
                "{origin}/.well-known/oauth-protected-resource{path}"
            ));
        }
        out.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    out.dedup();
    out
}

/// Where to look for an authorization server's metadata, in order (RFC 8414 §3.1 and OpenID
/// Connect discovery): for an issuer with a path, the path goes after the well-known part
/// (`oauth-authorization-server`, then `openid-configuration`), then the OpenID form with the
/// well-known part appended; without a path, the two root documents.
pub fn authorization_server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some(parts) = UrlParts::parse(issuer) else {
        return Vec::new();
    };
    let origin = parts.origin();
    let path = parts.path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}
