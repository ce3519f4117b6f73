//! URLs and origins, parsed by hand (no dependency): a URL's scheme, its authority split into
//! host and port, its path and query; the origin of a URL as written and in its normal form;
//! whether a host is this machine. Invariants: nothing here panics on any input, hosts come
//! out lowercased (IPv6 in brackets), and an origin is printed without its scheme's default
//! port.

#![warn(missing_docs)]

use std::fmt;

/// A base URL must be https, or http on loopback.
pub fn check_base_url(url: &str) -> Result<(), String> {
    let scheme = split_scheme(url).map(|(scheme, _)| scheme.to_ascii_lowercase());
    if !matches!(scheme.as_deref(), Some("http" | "https")) {
        return Err(format!("the base URL `{url}` is not an http(s) URL"));
    }
    let rest = split_scheme(url).map_or("", |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.is_empty() {
        return Err(format!("the base URL `{url}` has no host"));
    }
    if authority.contains('@') {
        return Err(format!(
            "the base URL `{url}` has user information (`…@`); give the host alone"
        ));
    }
    let parsed = Url::parse(url).ok_or_else(|| format!("the base URL `{url}` has no host"))?;
    if parsed.scheme == "http" && !parsed.is_loopback() {
        return Err(format!("the base URL {url} must be https (plain http only on this machine: localhost, 127.0.0.1)"));
    }
    Ok(())
}

/// The origin (`scheme://host[:port]`) of a URL, for permission checks and messages.
pub fn origin_of(url: &str) -> &str {
    crate::core::url::origin_slice(url).unwrap_or(url)
}

#[cfg(test)]
mod tests;

/// An absolute http(s) URL in parts. The fragment is dropped; user information (`user@`) is
/// refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `http` or `https`, lowercased.
    pub scheme: String,
    /// The host, lowercased (IPv6 in brackets).
    pub host: String,
    /// The port when the URL names one, even the scheme's default.
    pub port: Option<u16>,
    /// The path, `""` when there is none; no query, no fragment.
    pub path: String,
    /// What follows `?`, without it, up to the fragment.
    pub query: Option<String>,
}

impl Url {
    /// Parses an absolute http(s) URL, or `None` for another scheme, an empty authority, user
    /// information, a port that is not a number up to 65535, or a host with whitespace.
    pub fn parse(text: &str) -> Option<Url> {
        let (scheme, rest) = split_scheme(text)?;
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return None;
        }
        let rest = rest.split('#').next().unwrap_or("");
        let (authority, rest) = rest.split_at(authority_len(rest));
        if authority.is_empty() || authority.contains('@') {
            return None;
        }
        let (host, port) = split_authority(authority).ok()?;
        let host = host.lowercase();
        let port = match port {
            Some(port) => Some(port.parse().ok()?),
            None => None,
        };
        if host.is_empty() || host.contains(char::is_whitespace) {
            return None;
        }
        let (path, query) = match rest.split_once('?') {
            Some((path, query)) => (path.to_owned(), Some(query.to_owned())),
            None => (rest.to_owned(), None),
        };
        Some(Url {
            scheme,
            host,
            port,
            path,
            query,
        })
    }

    /// `scheme://host[:port]`, without the scheme's default port.
    pub fn origin(&self) -> String {
        format_origin(&self.scheme, &self.host, self.port)
    }

    /// Whether the host is this machine ([`is_loopback_host`]).
    pub fn is_loopback(&self) -> bool {
        is_loopback_host(&self.host)
    }
}

/// A URL's scheme and what follows its `://`, or `None` when it has no `://`. The scheme is
/// returned as written (not checked, not lowercased).
pub fn split_scheme(text: &str) -> Option<(&str, &str)> {
    text.split_once("://")
}

/// Bytes of the authority at the start of what follows `://`: up to the first `/`, `?` or
/// `#`.
fn authority_len(rest: &str) -> usize {
    rest.find(['/', '?', '#']).unwrap_or(rest.len())
}

/// The origin of a URL as it is written (`scheme://authority`, nothing normalized, any
/// scheme), or `None` when the text has no `://`.
pub fn origin_slice(url: &str) -> Option<&str> {
    let (scheme, rest) = split_scheme(url)?;
    Some(&url[..scheme.len() + "://".len() + authority_len(rest)])
}

/// The normal origin ([`normalize_origin`]) of an http(s) page's URL, or `None` for any
/// other URL.
pub fn http_origin(url: &str) -> Option<String> {
    normalize_origin(origin_slice(url)?).ok()
}

/// `scheme://host[:port]`, leaving out the port when it is the scheme's default (443 for
/// https, 80 otherwise). `host` is written as given.
pub fn format_origin(scheme: &str, host: &str, port: Option<u16>) -> String {
    let default = match scheme {
        "https" => 443,
        _ => 80,
    };
    match port {
        Some(port) if port != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    }
}

/// A host as written in an authority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host<'a> {
    /// A name or an IPv4 address: everything before the last `:`.
    Name(&'a str),
    /// An IPv6 address: what is inside the brackets.
    Ipv6(&'a str),
}

impl Host<'_> {
    /// The host lowercased, an IPv6 address back in its brackets.
    pub fn lowercase(&self) -> String {
        match self {
            Host::Name(name) => name.to_ascii_lowercase(),
            Host::Ipv6(inside) => format!("[{}]", inside.to_ascii_lowercase()),
        }
    }
}

/// Why an authority could not be split into host and port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError<'a> {
    /// A `[` opened an IPv6 address and no `]` closed it.
    UnclosedIpv6,
    /// Something other than `:port` follows the `]` of the IPv6 address `inside`.
    TextAfterIpv6 {
        /// What is inside the brackets.
        inside: &'a str,
    },
}

/// Splits an authority into its host and its port as written (the port text unchecked, `""`
/// for a bare `:`). A host in brackets is IPv6; otherwise the port follows the last `:`.
pub fn split_authority(authority: &str) -> Result<(Host<'_>, Option<&str>), SplitError<'_>> {
    if let Some(rest) = authority.strip_prefix('[') {
        let (inside, after) = rest.split_once(']').ok_or(SplitError::UnclosedIpv6)?;
        let port = match after.strip_prefix(':') {
            Some(port) => Some(port),
            None if after.is_empty() => None,
            None => return Err(SplitError::TextAfterIpv6 { inside }),
        };
        Ok((Host::Ipv6(inside), port))
    } else {
        Ok(match authority.rsplit_once(':') {
            Some((host, port)) => (Host::Name(host), Some(port)),
            None => (Host::Name(authority), None),
        })
    }
}

/// Whether a host is this machine: `localhost`, `127.x.x.x` or `[::1]` (as written, so give
/// it lowercased).
pub fn is_loopback_host(host: &str) -> bool {
    host == "localhost"
        || host == "[::1]"
        || host.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|p| p.parse::<u8>().is_ok())
        })
}

/// Whether a text has the shape of an origin of any scheme: `scheme://authority` with a
/// scheme of letters, digits, `+`, `-` or `.`, a non-empty authority, and no path, query,
/// fragment, user or space. Nothing is normalized.
pub fn has_origin_shape(text: &str) -> bool {
    let Some((scheme, rest)) = split_scheme(text) else {
        return false;
    };
    !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !rest.contains(['/', '?', '#', ' ', '@'])
}

/// Why a text is not an http(s) origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginProblem {
    /// No `://`.
    NoScheme,
    /// A scheme other than http or https.
    NotHttp,
    /// Nothing after `://`.
    NoHost,
    /// A path, query, fragment, user, wildcard or space after `://`.
    NotOnlyAuthority,
    /// An IPv6 address without its closing `]`.
    UnclosedIpv6,
    /// Brackets holding something other than hex digits, `:` and `.`.
    BadIpv6,
    /// Something other than `:port` after an IPv6 address.
    TextAfterIpv6,
    /// A host that is not a host name or an IPv4 address.
    BadHost,
    /// A port that is not a number from 1 to 65535.
    BadPort,
}

impl OriginProblem {
    /// The reason in words, as the person reads it.
    pub fn reason(self) -> &'static str {
        match self {
            OriginProblem::NoScheme => "write it as https://host or http://host:port",
            OriginProblem::NotHttp => "only http and https origins can be exposed to",
            OriginProblem::NoHost => "it has no host",
            OriginProblem::NotOnlyAuthority => {
                "an origin has no path, query, user or wildcard: only scheme, host and port"
            }
            OriginProblem::UnclosedIpv6 => "an IPv6 host needs its closing ]",
            OriginProblem::BadIpv6 => "the IPv6 host is malformed",
            OriginProblem::TextAfterIpv6 => "only a port may follow the host",
            OriginProblem::BadHost => "the host is not a host name or an IPv4 address",
            OriginProblem::BadPort => "the port is not a number from 1 to 65535",
        }
    }
}

/// A text that is not an http(s) origin: its first 80 characters and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginError {
    /// The first 80 characters of the text, as given.
    pub shown: String,
    /// What is wrong with it.
    pub problem: OriginProblem,
}

impl fmt::Display for OriginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not an origin ({})",
            self.shown,
            self.problem.reason()
        )
    }
}

impl std::error::Error for OriginError {}

/// `scheme://host[:port]` in its normal form: http or https only, lowercase, the default port
/// left out. The text may have spaces around it and one trailing `/`, nothing else after the
/// authority.
pub fn normalize_origin(text: &str) -> Result<String, OriginError> {
    let invalid = |problem| OriginError {
        shown: text.chars().take(80).collect(),
        problem,
    };
    let trimmed = text.trim();
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    let (scheme, authority) =
        split_scheme(trimmed).ok_or_else(|| invalid(OriginProblem::NoScheme))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(invalid(OriginProblem::NotHttp));
    }
    if authority.is_empty() {
        return Err(invalid(OriginProblem::NoHost));
    }
    if authority
        .chars()
        .any(|c| matches!(c, '/' | '?' | '#' | '@' | '*' | '\\') || c.is_whitespace())
    {
        return Err(invalid(OriginProblem::NotOnlyAuthority));
    }
    let (host, port) = match split_authority(authority) {
        Err(SplitError::UnclosedIpv6) => return Err(invalid(OriginProblem::UnclosedIpv6)),
        Err(SplitError::TextAfterIpv6 { inside }) if is_ipv6_text(inside) => {
            return Err(invalid(OriginProblem::TextAfterIpv6))
        }
        Err(SplitError::TextAfterIpv6 { .. }) => return Err(invalid(OriginProblem::BadIpv6)),
        Ok((Host::Ipv6(inside), _)) if !is_ipv6_text(inside) => {
            return Err(invalid(OriginProblem::BadIpv6))
        }
        Ok((Host::Name(name), _)) if !is_host_name(name) => {
            return Err(invalid(OriginProblem::BadHost))
        }
        Ok((host, port)) => (host.lowercase(), port),
    };
    let port = match port {
        None => None,
        Some(port) => match port.parse::<u16>() {
            Ok(n) if n > 0 && port.bytes().all(|b| b.is_ascii_digit()) => Some(n),
            _ => return Err(invalid(OriginProblem::BadPort)),
        },
    };
    Ok(format_origin(&scheme, &host, port))
}

/// Non-empty, and only hex digits, `:` and `.`.
fn is_ipv6_text(inside: &str) -> bool {
    !inside.is_empty()
        && inside
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == ':' || c == '.')
}

/// Non-empty labels of letters, digits and `-`, separated by single dots (a trailing dot
/// allowed).
fn is_host_name(host: &str) -> bool {
    !host.is_empty()
        && !host.starts_with('.')
        && !host.contains("..")
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.')
}
