//! A Server-Sent Events decoder: text in, in any chunking; events out.
//!
//! Follows the WHATWG rules: lines end with `\n`, `\r\n` or `\r`; `data:` lines join with
//! `\n`; a blank line dispatches; `:` starts a comment; one space after the colon is dropped;
//! `id` and `retry` are kept for resumption. The decoder holds only the current line and the
//! current event, so its cost is linear in the input.

/// One dispatched event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// `event:` (empty for the default "message").
    pub event: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
    /// The last `id:` seen, when any.
    pub id: Option<String>,
    /// A `retry:` reconnection time in milliseconds.
    pub retry: Option<u64>,
    /// A line or the data of this event passed the cap, and what did not fit was dropped
    /// (`max_sse_event_bytes`): the event is not what the server sent.
    pub truncated: bool,
}

pub use crate::core::limits::MAX_SSE_EVENT_BYTES;

/// The decoder. Feed it with [`SseDecoder::push`]; call [`SseDecoder::finish`] at the end of
/// the stream (an event not followed by a blank line is not dispatched, as the spec says, but
/// [`SseDecoder::finish`] reports whether one was pending).
#[derive(Debug)]
pub struct SseDecoder {
    line: String,
    /// The current line reached the cap: the rest of it is dropped, whatever the chunking.
    line_capped: bool,
    /// A `\r` ended the last chunk: a `\n` starting the next one belongs to it.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    retry: Option<u64>,
    /// Bytes in the current line and event, for the caps.
    max_line: usize,
    /// Something of the current event was dropped at the cap.
    truncated: bool,
}

impl Default for SseDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl SseDecoder {
    /// A decoder at the start of a stream, with the default event cap.
    pub fn new() -> Self {
        SseDecoder {
            line: String::new(),
            line_capped: false,
            after_cr: false,
            event: String::new(),
            data: String::new(),
            has_data: false,
            last_id: None,
            retry: None,
            max_line: MAX_SSE_EVENT_BYTES,
            truncated: false,
        }
    }

    /// Caps the size of one line and of one event's data (hostile servers): over it, the
    /// rest of the line is dropped.
    pub fn with_max_line(mut self, bytes: usize) -> Self {
        self.max_line = bytes;
        self
    }

    /// Feeds the next chunk of the stream; returns the events it completed.
    pub fn push(&mut self, chunk: &str) -> Vec<SseEvent> {
        let mut out = Vec::new();
        if chunk.is_empty() {
            // Nothing to read; a pending `\r` still waits for the next character.
            return out;
        }
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let Some(stripped) = rest.strip_prefix('\n') {
                rest = stripped;
            }
        }
        // A byte scan: both line endings are ASCII, so no UTF-8 decoding is needed to find them.
        while let Some(at) = rest.bytes().position(|b| b == b'\n' || b == b'\r') {
            if self.line.is_empty() && !self.line_capped && at <= self.max_line {
                // The whole line is in this chunk: read it where it is, without a copy.
                self.line_done(&rest[..at], &mut out);
            } else {
                self.append(&rest[..at]);
                let line = std::mem::take(&mut self.line);
                self.line_capped = false;
                self.line_done(&line, &mut out);
            }
            let ending = rest.as_bytes()[at];
            rest = &rest[at + 1..];
            if ending == b'\r' {
                if rest.is_empty() {
                    self.after_cr = true;
                } else if let Some(stripped) = rest.strip_prefix('\n') {
                    rest = stripped;
                }
            }
        }
        self.append(rest);
        out
    }

    /// The end of the stream. Returns an event that was complete but for its blank line
    /// (servers that close right after their last `data:`), which callers may accept.
    pub fn finish(&mut self) -> Option<SseEvent> {
        let line = std::mem::take(&mut self.line);
        self.line_capped = false;
        let mut out = Vec::new();
        if !line.is_empty() {
            self.line_done(&line, &mut out);
        }
        if self.has_data {
            self.has_data = false;
            return Some(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
                id: self.last_id.clone(),
                retry: self.retry,
                truncated: std::mem::take(&mut self.truncated),
            });
        }
        None
    }

    /// The last event id (for `Last-Event-ID`).
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    fn append(&mut self, text: &str) {
        if self.line_capped {
            return;
        }
        let room = self.max_line.saturating_sub(self.line.len());
        if text.len() <= room {
            self.line.push_str(text);
        } else {
            self.line.push_str(crate::core::limits::cut_to(text, room));
            self.truncated = true;
            // Found by fuzzing (tests/golden/fuzz-regressions/sse): without this, a character
            // that did not fit was dropped but a shorter one in a later chunk was kept.
            self.line_capped = true;
        }
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                    id: self.last_id.clone(),
                    retry: self.retry,
                    truncated: std::mem::take(&mut self.truncated),
                });
                self.has_data = false;
            } else {
                self.event.clear();
                self.truncated = false;
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(at) => {
                let value = &line[at + 1..];
                (&line[..at], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                if self.data.len() + value.len() <= self.max_line {
                    self.data.push_str(value);
                } else {
                    self.truncated = true;
                }
                self.has_data = true;
            }
            "event" => self.event = value.to_owned(),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse::<u64>() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&str]) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
        out.extend(decoder.finish());
        out
    }

    fn every_split(input: &str) -> Vec<SseEvent> {
        let whole = decode(&[input]);
        for i in (0..=input.len()).filter(|&i| input.is_char_boundary(i)) {
            assert_eq!(decode(&[&input[..i], &input[i..]]), whole, "split at {i}");
        }
        whole
    }

    #[test]
    fn an_event_over_the_cap_says_it_was_cut() {
        let mut decoder = SseDecoder::new().with_max_line(8);
        let mut events = decoder.push("data: 0123456789\n\ndata: ok\n\n");
        events.extend(decoder.finish());
        assert_eq!(events.len(), 2);
        assert!(events[0].truncated && events[0].data == "01");
        assert!(!events[1].truncated && events[1].data == "ok");
    }

    #[test]
    fn events_fields_and_comments() {
        let events = every_split(
            ": hello\nevent: delta\ndata: {\"a\":1}\nid: 7\n\ndata: x\ndata:  y\nretry: 1500\n\n",
        );
        assert_eq!(events.len(), 2);
        assert_eq!(
            events[0],
            SseEvent {
                event: "delta".into(),
                data: "{\"a\":1}".into(),
                id: Some("7".into()),
                retry: None,
                truncated: false
            }
        );
        assert_eq!(events[1].data, "x\n y");
        assert_eq!(events[1].id.as_deref(), Some("7"), "the last id stays");
        assert_eq!(events[1].retry, Some(1500));
    }

    #[test]
    fn crlf_and_cr_line_endings() {
        let events = every_split("data: a\r\n\r\ndata: b\r\rdata: c\n\n");
        assert_eq!(
            events.iter().map(|e| e.data.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }

    #[test]
    fn a_last_event_without_blank_line_is_handed_over_by_finish() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.push("data: [DONE]").is_empty());
        assert_eq!(decoder.finish().map(|e| e.data), Some("[DONE]".into()));
    }

    #[test]
    fn a_capped_line_drops_its_rest_in_any_chunking() {
        // 6 + 3 bytes fit the cap of 11; the second U+FFFD does not, nor does what follows.
        let input = "data: \u{FFFD}\u{FFFD}\u{1}\n\n";
        let capped = |chunks: &[&str]| {
            let mut decoder = SseDecoder::new().with_max_line(11);
            let mut out: Vec<SseEvent> = chunks.iter().flat_map(|c| decoder.push(c)).collect();
            out.extend(decoder.finish());
            out
        };
        let whole = capped(&[input]);
        assert_eq!(whole[0].data, "\u{FFFD}");
        for i in (0..=input.len()).filter(|&i| input.is_char_boundary(i)) {
            assert_eq!(capped(&[&input[..i], &input[i..]]), whole, "split at {i}");
        }
        let next_line = capped(&["data: \u{FFFD}\u{FFFD}", "\ndata: x\n\n"]);
        assert_eq!(
            next_line[0].data, "\u{FFFD}\nx",
            "the cap ends with the line"
        );
    }

    #[test]
    fn empty_chunks_change_nothing() {
        // An empty chunk between `\r` and `\n` must not make the `\n` a second line end
        // (a blank line, which would dispatch the event early).
        let whole = decode(&["data: a\r\ndata: b\n\n"]);
        assert_eq!(whole[0].data, "a\nb");
        assert_eq!(decode(&["data: a\r", "", "\ndata: b\n", "", "\n"]), whole);
    }

    #[test]
    fn overlong_lines_are_capped() {
        let mut decoder = SseDecoder::new().with_max_line(8);
        let events = decoder.push("data: 0123456789abcdef\n\n");
        assert_eq!(events[0].data.len(), 2, "{:?}", events[0].data);
    }
}
