//! Origin-trial tokens, as "Why no tools?" reads them: a page turns WebMCP on without the flag
//! by a token (`<meta http-equiv="origin-trial" content="…">`), and a token that expired,
//! names another origin or another feature silently turns nothing on.
//!
//! A token is base64 of: a version byte (2 or 3), a 64-byte signature, the payload's length
//! (4 bytes, big-endian) and the payload, JSON `{origin, feature, expiry, isSubdomain?,
//! isThirdParty?, usage?}` with `expiry` in seconds since 1970. The signature is Chrome's to
//! check; this reads what the token claims, to explain why it may not work.

use serde::Serialize;
use serde_json::Value;

use crate::core::url::http_origin;

/// At most this many tokens of a page are read.
pub const MAX_TOKENS: usize = crate::core::limits::MAX_TRIAL_TOKENS;
/// A token longer than this (characters) is not read.
const MAX_TOKEN_CHARS: usize = crate::core::limits::MAX_TRIAL_TOKEN_CHARS;
/// The length of a token's signature (Ed25519), a fact of the format.
const SIGNATURE_LEN: usize = 64;

/// What a token claims.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trial {
    /// The token's format version.
    pub version: u8,
    /// The origin it is for (`https://example.com:443`).
    pub origin: String,
    /// The feature it turns on (`WebMCP`).
    pub feature: String,
    /// When it expires, seconds since 1970.
    pub expiry: i64,
    /// It covers the origin's subdomains too.
    pub is_subdomain: bool,
    /// It is meant for third-party scripts.
    pub is_third_party: bool,
}

/// Reads one token, or says why it cannot be read.
pub fn decode(token: &str) -> Result<Trial, String> {
    let token = token.trim();
    if token.len() > MAX_TOKEN_CHARS {
        return Err(format!("it is over {MAX_TOKEN_CHARS} characters"));
    }
    let bytes = base64(token).ok_or("it is not base64")?;
    let (&version, rest) = bytes.split_first().ok_or("it is empty")?;
    if version != 2 && version != 3 {
        return Err(format!("its version is {version}, not 2 or 3"));
    }
    let rest = rest
        .get(SIGNATURE_LEN..)
        .ok_or("it is too short for a signature")?;
    let (length, payload) = rest.split_at_checked(4).ok_or("it has no payload length")?;
    let length = u32::from_be_bytes([length[0], length[1], length[2], length[3]]) as usize;
    let payload = payload
        .get(..length)
        .ok_or("its payload is shorter than it says")?;
    let claims: Value =
        serde_json::from_slice(payload).map_err(|_| "its payload is not JSON".to_owned())?;
    let text = |key: &str| claims.get(key).and_then(Value::as_str).map(str::to_owned);
    let flag = |key: &str| claims.get(key).and_then(Value::as_bool).unwrap_or(false);
    let (Some(origin), Some(feature), Some(expiry)) = (
        text("origin"),
        text("feature"),
        claims
            .get("expiry")
            .and_then(Value::as_f64)
            .map(|s| s as i64),
    ) else {
        return Err("its payload lacks origin, feature or expiry".into());
    };
    Ok(Trial {
        version,
        origin,
        feature,
        expiry,
        is_subdomain: flag("isSubdomain"),
        is_third_party: flag("isThirdParty"),
    })
}

/// Standard base64 (padding optional, `-`/`_` accepted too); `None` when it is not.
fn base64(text: &str) -> Option<Vec<u8>> {
    let digit = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let text = text.trim_end_matches('=').as_bytes();
    if text.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for chunk in text.chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= digit(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

/// Whether a token for `trial.origin` covers the page's `origin` (both read as origins by
/// [`http_origin`], so default ports and case do not matter): the same origin, or, for a
/// subdomain token, a host under the token's with the same scheme and port.
pub fn covers(trial: &Trial, origin: &str) -> bool {
    let (Some(claimed), Some(page)) = (http_origin(&trial.origin), http_origin(origin)) else {
        return false;
    };
    if claimed == page {
        return true;
    }
    match (
        trial.is_subdomain,
        claimed.split_once("://"),
        page.split_once("://"),
    ) {
        (true, Some((scheme, host)), Some((page_scheme, page_host))) => {
            scheme == page_scheme && page_host.ends_with(&format!(".{host}"))
        }
        _ => false,
    }
}

/// A date (UTC) of seconds since 1970, `YYYY-MM-DD`.
pub fn date(seconds: i64) -> String {
    let (year, month, day) = crate::core::run::local::civil_from_days(seconds.div_euclid(86_400));
    format!("{year:04}-{month:02}-{day:02}")
}

/// Tokens made for tests.
#[cfg(test)]
pub(crate) mod sample {
    use super::SIGNATURE_LEN;

    /// A token as Chrome's tools write one (the signature zeros: it is not checked here).
    pub fn token(version: u8, payload: &str) -> String {
        let mut bytes = vec![version];
        bytes.extend([0u8; SIGNATURE_LEN]);
        bytes.extend((payload.len() as u32).to_be_bytes());
        bytes.extend(payload.as_bytes());
        encode(&bytes)
    }

    pub fn encode(bytes: &[u8]) -> String {
        const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let mut n = 0u32;
            for (i, b) in chunk.iter().enumerate() {
                n |= u32::from(*b) << (16 - 8 * i);
            }
            for i in 0..=chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i) & 63) as usize] as char);
            }
        }
        while out.len() % 4 != 0 {
            out.push('=');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::sample::{encode, token};
    use super::*;

    #[test]
    fn a_token_reads_as_what_it_claims() {
        let t = token(
            3,
            r#"{"origin":"https://shop.test:443","feature":"WebMCP","expiry":1794873600,"isSubdomain":true}"#,
        );
        let trial = decode(&t).unwrap();
        assert_eq!(trial.feature, "WebMCP");
        assert_eq!(trial.origin, "https://shop.test:443");
        assert_eq!(trial.expiry, 1_794_873_600);
        assert!(trial.is_subdomain && !trial.is_third_party);
        assert_eq!(date(trial.expiry), "2026-11-17");
        assert!(covers(&trial, "https://shop.test"));
        assert!(covers(&trial, "https://www.shop.test"));
        assert!(!covers(&trial, "http://shop.test"));
        assert!(!covers(&trial, "https://evilshop.test"));
    }

    #[test]
    fn a_token_for_the_origin_alone_does_not_cover_its_subdomains() {
        let t = token(
            2,
            r#"{"origin":"http://localhost:8080","feature":"WebMCP","expiry":1}"#,
        );
        let trial = decode(&t).unwrap();
        assert!(covers(&trial, "http://localhost:8080"));
        assert!(!covers(&trial, "http://a.localhost:8080"));
        assert_eq!(date(0), "1970-01-01");
    }

    #[test]
    fn a_malformed_token_says_why() {
        assert_eq!(decode("%%%"), Err("it is not base64".into()));
        assert!(decode(&token(1, "{}"))
            .unwrap_err()
            .contains("version is 1"));
        assert!(decode(&encode(&[3, 0, 0]))
            .unwrap_err()
            .contains("signature"));
        let short = &token(3, r#"{"origin":"a"}"#);
        assert!(decode(short).unwrap_err().contains("lacks"));
        let mut cut = vec![3u8];
        cut.extend([0u8; SIGNATURE_LEN]);
        cut.extend(100u32.to_be_bytes());
        cut.extend(b"{}");
        assert!(decode(&encode(&cut)).unwrap_err().contains("shorter"));
        assert!(decode(&"A".repeat(5_000)).unwrap_err().contains("over"));
        assert!(decode(&token(3, "not json"))
            .unwrap_err()
            .contains("not JSON"));
    }
}
