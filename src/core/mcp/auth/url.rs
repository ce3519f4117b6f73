//! The URLs of discovery: endpoint checks (https, or http on loopback), the canonical
//! resource, and the well-known metadata URLs in the order the spec gives.

/// The parts of an absolute http(s) URL this module needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlParts {
    /// `http` or `https`, lowercased.
    pub scheme: String,
    /// The host, lowercased (IPv6 in brackets).
    pub host: String,
    /// The port, when one is written.
    pub port: Option<u16>,
    /// The path, `""` when there is none; no query, no fragment.
    pub path: String,
    /// The query, without its `?`.
    pub query: Option<String>,
}

impl UrlParts {
    /// Parses an absolute `http`/`https` URL; `None` for anything else.
    pub fn parse(url: &str) -> Option<UrlParts> {
        let (scheme, rest) = url.split_once("://")?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
        let authority = &rest[..authority_end];
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (inside, after) = v6.split_once(']')?;
            let port = match after.strip_prefix(':') {
                Some(p) => Some(p.parse().ok()?),
                None if after.is_empty() => None,
                None => return None,
            };
            (format!("[{}]", inside.to_ascii_lowercase()), port)
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h.to_ascii_lowercase(), Some(p.parse().ok()?)),
                None => (authority.to_ascii_lowercase(), None),
            }
        };
        if host.is_empty() || host.contains(char::is_whitespace) {
            return None;
        }
        let rest = &rest[authority_end..];
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
            None => (rest.to_owned(), None),
        };
        Some(UrlParts {
            scheme,
            host,
            port,
            path,
            query,
        })
    }

    /// `scheme://host[:port]`, without the scheme's default port.
    pub fn origin(&self) -> String {
        let default = match self.scheme.as_str() {
            "https" => 443,
            _ => 80,
        };
        match self.port {
            Some(port) if port != default => format!("{}://{}:{port}", self.scheme, self.host),
            _ => format!("{}://{}", self.scheme, self.host),
        }
    }

    /// Whether the host is a loopback address (`localhost`, `127.0.0.1`, `[::1]`).
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

/// `localhost`, `127.x.x.x` or `[::1]`.
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host == "[::1]"
        || host.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|p| p.parse::<u8>().is_ok())
        })
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
