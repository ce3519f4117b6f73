//! `WWW-Authenticate` parsing: every challenge of the header, and the Bearer challenge's
//! parameters (`resource_metadata`, `scope`, `error`). Untrusted input: nothing here panics.

use serde::{Deserialize, Serialize};

/// One challenge of a `WWW-Authenticate` header: its scheme and auth-params (names lowercased).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The scheme (`Bearer`), as written.
    pub scheme: String,
    /// Its parameters, names lowercased, in order.
    pub params: Vec<(String, String)>,
}

/// Parses a `WWW-Authenticate` header (RFC 9110 §11.6.1): challenges separated by commas,
/// auth-params as `name=token` or `name="quoted \"string\""`. A token68 is skipped.
pub fn parse_www_authenticate(header: &str) -> Vec<Challenge> {
    let bytes = header.as_bytes();
    let mut at = 0;
    let mut out: Vec<Challenge> = Vec::new();
    let skip_ws = |at: &mut usize| {
        while *at < bytes.len() && (bytes[*at] == b' ' || bytes[*at] == b'\t' || bytes[*at] == b',')
        {
            *at += 1;
        }
    };
    let token_end = |mut at: usize| {
        while at < bytes.len() && !matches!(bytes[at], b' ' | b'\t' | b',' | b'=' | b'"') {
            at += 1;
        }
        at
    };
    loop {
        skip_ws(&mut at);
        if at >= bytes.len() {
            break;
        }
        let start = at;
        let end = token_end(at);
        if end == start {
            at += 1; // a stray quote or `=`
            continue;
        }
        let word = &header[start..end];
        // After the word: `=` makes it a parameter of the current challenge.
        let mut look = end;
        while look < bytes.len() && (bytes[look] == b' ' || bytes[look] == b'\t') {
            look += 1;
        }
        let is_param = look < bytes.len() && bytes[look] == b'=' && !out.is_empty() && {
            // `token68=` (trailing `=` padding) is not a parameter.
            let mut after = look + 1;
            while after < bytes.len() && bytes[after] == b'=' {
                after += 1;
            }
            after == look + 1
        };
        if !is_param {
            out.push(Challenge {
                scheme: word.to_ascii_lowercase(),
                params: Vec::new(),
            });
            at = end;
            // A padded token68 right after the scheme (`Basic dXNlcjpw==`): skip it. (One
            // without padding reads as a scheme of its own, with no parameter: harmless.)
            let mut probe = end;
            while probe < bytes.len() && bytes[probe] == b' ' {
                probe += 1;
            }
            let t_end = token_end(probe);
            let mut eq = t_end;
            while eq < bytes.len() && bytes[eq] == b'=' {
                eq += 1;
            }
            if t_end > probe && eq - t_end >= 2 {
                at = eq;
            }
            continue;
        }
        // name = value
        at = look + 1;
        while at < bytes.len() && (bytes[at] == b' ' || bytes[at] == b'\t') {
            at += 1;
        }
        let value = if at < bytes.len() && bytes[at] == b'"' {
            at += 1;
            let mut value = String::new();
            let mut chars = header[at..].char_indices();
            let mut consumed = header.len() - at;
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, escaped)) = chars.next() {
                            value.push(escaped);
                        }
                    }
                    '"' => {
                        consumed = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            at += consumed;
            value
        } else {
            let v_end = token_end(at);
            let value = header[at..v_end].to_owned();
            at = v_end;
            value
        };
        if let Some(challenge) = out.last_mut() {
            challenge.params.push((word.to_ascii_lowercase(), value));
        }
    }
    out
}

/// What a Bearer challenge says to this client.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BearerChallenge {
    /// `resource_metadata`: the protected resource metadata URL.
    pub resource_metadata: Option<String>,
    /// `scope`: the scope the server wants.
    pub scope: Option<String>,
    /// `error` (`invalid_token`, `insufficient_scope`).
    pub error: Option<String>,
    /// `error_description`: the server's words.
    pub error_description: Option<String>,
}

impl BearerChallenge {
    /// The `Bearer` challenge of a `WWW-Authenticate` header (empty when there is none).
    pub fn from_header(header: Option<&str>) -> Self {
        let Some(header) = header else {
            return Self::default();
        };
        let Some(bearer) = parse_www_authenticate(header)
            .into_iter()
            .find(|c| c.scheme == "bearer")
        else {
            return Self::default();
        };
        let get = |name: &str| {
            bearer
                .params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.trim().is_empty())
        };
        BearerChallenge {
            resource_metadata: get("resource_metadata"),
            scope: get("scope"),
            error: get("error"),
            error_description: get("error_description"),
        }
    }

    /// Whether it is a step-up: `error="insufficient_scope"`.
    pub fn insufficient_scope(&self) -> bool {
        self.error.as_deref() == Some("insufficient_scope")
    }
}
