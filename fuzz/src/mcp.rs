//! The JSON-RPC decoder and an MCP session fed whatever a server may send.
//!
//! Input: byte 0 chooses how the rest is read:
//!
//! | bits of byte 0 | meaning |
//! |---|---|
//! | `0x0f` | chunk size − 1 (1..=16 bytes, widened to a char boundary), SSE only |
//! | `0x10` | chunk sizes pseudo-random in 0..=size (empty pieces too) instead of fixed |
//! | `0x20` | the body is an SSE stream, each event's data a JSON-RPC body; else one JSON body |
//! | `0x40` | the body's first line is the answer's headers: content type, `Mcp-Session-Id` and `WWW-Authenticate`, separated by tabs |
//! | `0x80` | only the valid UTF-8 prefix of the rest is used (else lossy) |
//!
//! The session has four requests pending (`initialize` id 1, `tools/list` id 2, `tools/call`
//! of `add` id 3, `ping` id 4) so that answers reach every reading of a result.
//!
//! Invariants checked:
//! - no panic (`parse_messages`, `Session::answer`, `Session::receive`, the `WWW-Authenticate`
//!   parser);
//! - each request is settled at most once, and only by an answer with its id: `CallDone` only
//!   for id 3 and the tool `add`, `Failed` only for 1, 2 and 4; what is settled is no longer
//!   pending;
//! - a session id taken from the headers is visible ASCII of at most 1024 bytes; a negotiated
//!   protocol is one the client speaks;
//! - SSE: the messages and events are the same for the whole stream, in pieces, and one
//!   character at a time.

use std::collections::HashSet;

use serde_json::json;
use webmcp_host::core::mcp::auth::parse_www_authenticate;
use webmcp_host::core::mcp::jsonrpc::parse_messages;
use webmcp_host::core::mcp::{McpEvent, Session, SUPPORTED_PROTOCOLS};
use webmcp_host::core::provider::sse::SseDecoder;

use crate::chunk::{assert_same, chars, pieces, text};

/// What one JSON-RPC body gave: the session's events, or the decoder's error.
pub type Outcome = Result<Vec<McpEvent>, String>;

/// A session with the four requests of the module's doc pending.
pub fn session() -> Session {
    let mut session = Session::new("http://127.0.0.1:3001/mcp");
    let ids = [
        session.initialize("fuzz", "0", json!({})).id,
        session.list_tools(None).id,
        session
            .call_tool("add", &serde_json::Map::new(), Some(json!(7)))
            .id,
        session.call("ping", None).id,
    ];
    assert_eq!(ids, [Some(1), Some(2), Some(3), Some(4)]);
    session
}

/// Decodes one body and hands its messages to the session.
pub fn receive(session: &mut Session, body: &str) -> Outcome {
    let messages = parse_messages(body)?;
    Ok(messages
        .into_iter()
        .flat_map(|m| session.receive(m))
        .collect())
}

/// The outcomes of an SSE stream fed in `parts`, one per event with data.
pub fn sse_outcomes<S: AsRef<str>>(parts: &[S]) -> (Vec<Outcome>, Session) {
    let mut session = session();
    let mut decoder = SseDecoder::new();
    let mut out = Vec::new();
    let mut events = Vec::new();
    for part in parts {
        events.extend(decoder.push(part.as_ref()));
    }
    events.extend(decoder.finish());
    for event in events {
        out.push(receive(&mut session, &event.data));
    }
    (out, session)
}

/// Checks the events of a session (see the module's doc).
pub fn check_session(outcomes: &[Outcome], session: &Session) {
    let mut settled = HashSet::new();
    let mut settle = |id: i64| {
        assert!(settled.insert(id), "request {id} settled twice");
    };
    for event in outcomes.iter().flatten().flatten() {
        match event {
            McpEvent::Initialized { protocol, .. } => {
                assert!(SUPPORTED_PROTOCOLS.contains(&protocol.as_str()));
                settle(1);
            }
            McpEvent::Tools { .. } => settle(2),
            McpEvent::CallDone { id, name, .. } => {
                assert_eq!((*id, name.as_str()), (3, "add"), "{event:?}");
                settle(3);
            }
            McpEvent::Failed { id, .. } => {
                assert!([1, 2, 4].contains(id), "{event:?}");
                settle(*id);
            }
            McpEvent::Note(note) if note.starts_with("request ") => {
                assert_eq!(note, "request 4 answered");
                settle(4);
            }
            _ => {}
        }
    }
    let pending: HashSet<i64> = session.pending().map(|(id, _)| id).collect();
    for id in 1..=4 {
        assert_ne!(
            settled.contains(&id),
            pending.contains(&id),
            "request {id}: settled and pending disagree"
        );
    }
    if let Some(protocol) = session.protocol() {
        assert!(SUPPORTED_PROTOCOLS.contains(&protocol));
    }
}

/// The answer's headers, as the first line gives them.
fn headers(session: &mut Session, line: &str) {
    let mut fields = line.split('\t');
    let content_type = fields.next();
    let session_id = fields.next();
    let www_authenticate = fields.next();
    let _ = session.answer(200, content_type, session_id, false, None);
    if let Some(id) = session.session_id() {
        assert!(
            !id.is_empty() && id.len() <= 1024 && id.bytes().all(|b| (0x21..=0x7e).contains(&b)),
            "a session id that is not visible ASCII: {id:?}"
        );
    }
    for status in [401, 403] {
        if let Err(error) = session.answer(status, content_type, None, true, www_authenticate) {
            let _ = error.to_string();
        }
    }
    if let Some(header) = www_authenticate {
        let _ = parse_www_authenticate(header);
    }
}

/// The JSON-RPC fuzz target.
pub fn jsonrpc(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let size = usize::from(mode & 0x0f) + 1;
    let random = mode & 0x10 != 0;
    let input = text(rest, mode & 0x80 != 0);
    let mut body = input.as_str();
    let mut session = session();
    if mode & 0x40 != 0 {
        let (line, after) = body.split_once('\n').unwrap_or((body, ""));
        headers(&mut session, line);
        body = after;
    }
    if mode & 0x20 == 0 {
        let outcome = receive(&mut session, body);
        check_session(&[outcome], &session);
        return;
    }
    let (whole, session) = sse_outcomes(&[body]);
    check_session(&whole, &session);
    let parts = pieces(body, size, random, rest.len() as u64 ^ u64::from(mode));
    assert_same(&whole, &sse_outcomes(&parts).0, "MCP outcomes");
    assert_same(&whole, &sse_outcomes(&chars(body)).0, "MCP outcomes");
}
