//! The streaming call parser: model output in, text and call pieces out, however the output is
//! split into chunks.
//!
//! Models that write calls as text use a fenced block (```` ```tool_call {…} ``` ````) or tags
//! (`<tool_call>{…}</tool_call>`). [`CallParser::push`] takes any chunk of output and returns
//! [`Piece`]s: text outside calls (never a byte of a marker: a possible marker prefix is held
//! back until it is decided), the opening of a call, its name as soon as the name's string is
//! complete, the raw text of its arguments object while it is written, and its close with the
//! whole body. Nothing here decides whether a call is valid: that is repair's job, once the
//! call is complete.
//!
//! The cost is linear in the input: every byte is looked at a bounded number of times, and no
//! buffer is re-scanned per chunk.

#![warn(missing_docs)]

use super::limits::MAX_FENCE_HEADER;

/// A piece of model output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text outside calls.
    Text(String),
    /// A call marker opened; `slot` numbers the calls of one output from 0.
    CallOpen {
        /// The call's number in this output.
        slot: usize,
    },
    /// The call's name, as written (not yet resolved), once its string is complete.
    CallName {
        /// The call this names.
        slot: usize,
        /// The name as the model wrote it.
        name: String,
    },
    /// Raw text of the call's arguments object, as it is written.
    CallArgs {
        /// The call these arguments belong to.
        slot: usize,
        /// The next piece of the arguments' text, to append to what came before.
        delta: String,
    },
    /// The call closed (`complete`) or the output ended inside it (cut off). `body` is
    /// everything between the markers.
    CallClose {
        /// The call that closed.
        slot: usize,
        /// Everything the model wrote between the call's markers.
        body: String,
        /// `true` when the closing marker came, `false` when the output ended first.
        complete: bool,
    },
    /// A native (provider function-calling) call closed: its name and its arguments as the
    /// provider wrote them (JSON text). Only [`super::native::NativeCalls`] produces it.
    NativeClose {
        /// The call that closed.
        slot: usize,
        /// The tool's name as the provider gave it.
        name: String,
        /// The arguments' JSON text as the provider wrote it (not yet parsed).
        arguments: String,
        /// `false` when the provider stopped at its token limit inside the call.
        complete: bool,
    },
}

const FENCE_OPEN: &str = "```tool_call";
const FENCE_CLOSE: &str = "```";
const TAG_OPEN: &str = "<tool_call>";
const TAG_CLOSE: &str = "</tool_call>";

/// Keys that carry a call's name in the shapes models write, the usual one first.
pub const NAME_KEYS: [&str; 5] = [
    "name",
    "tool_name",
    "tool",
    "function_name",
    "recipient_name",
];
/// Keys that carry a call's arguments in the shapes models write, the usual one first.
pub const ARGUMENT_KEYS: [&str; 5] = ["arguments", "parameters", "args", "input", "tool_input"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Marker {
    Fence,
    Tag,
}

impl Marker {
    fn open(self) -> &'static str {
        match self {
            Marker::Fence => FENCE_OPEN,
            Marker::Tag => TAG_OPEN,
        }
    }

    fn close(self) -> &'static str {
        match self {
            Marker::Fence => FENCE_CLOSE,
            Marker::Tag => TAG_CLOSE,
        }
    }
}

#[derive(Debug)]
enum Mode {
    Text,
    /// After ```` ```tool_call ````, before the body: the rest of the fence's first line.
    FenceHeader(String),
    Body(Body),
}

/// The streaming parser of one model output.
#[derive(Debug)]
pub struct CallParser {
    mode: Mode,
    /// In text mode: a held-back suffix that may begin a marker.
    held: String,
    slots: usize,
}

impl Default for CallParser {
    fn default() -> Self {
        Self::new()
    }
}

impl CallParser {
    /// A parser at the start of an output, outside any call.
    pub fn new() -> Self {
        CallParser {
            mode: Mode::Text,
            held: String::new(),
            slots: 0,
        }
    }

    /// Feeds a chunk of output; returns the pieces it completes.
    pub fn push(&mut self, chunk: &str) -> Vec<Piece> {
        let mut out = Output::default();
        let mut rest = chunk;
        while !rest.is_empty() {
            rest = match &mut self.mode {
                Mode::Text => self.text(rest, &mut out),
                Mode::FenceHeader(_) => self.fence_header(rest, &mut out),
                Mode::Body(_) => self.body(rest, &mut out),
            };
        }
        out.finish()
    }

    /// The output ended. A call still open is closed as cut off unless its JSON is complete
    /// and the output was not cut by the token limit (models often end on a call without
    /// writing its closing tag).
    pub fn finish(mut self, cut_by_limit: bool) -> Vec<Piece> {
        let mut out = Output::default();
        match std::mem::replace(&mut self.mode, Mode::Text) {
            Mode::Text => out.text(&self.held),
            Mode::FenceHeader(header) => {
                // `tool_call` and a header but no body: not a call we can read.
                out.text(FENCE_OPEN);
                out.text(&header);
            }
            Mode::Body(body) if !body.opened => {
                out.text(body.marker.open());
                out.text(&body.text);
            }
            Mode::Body(body) => {
                let complete = !cut_by_limit && body.scan.is_complete();
                out.pieces.push(Piece::CallClose {
                    slot: body.slot,
                    body: body.text,
                    complete,
                });
            }
        }
        out.finish()
    }

    fn text<'a>(&mut self, input: &'a str, out: &mut Output) -> &'a str {
        let mut rest = input;
        while !rest.is_empty() {
            if self.held.is_empty() {
                // Fast path: everything before the next possible marker start is text.
                let run = find_byte(rest, |b| b == b'<' || b == b'`');
                out.text(&rest[..run]);
                rest = &rest[run..];
                if rest.is_empty() {
                    break;
                }
            }
            let Some(c) = rest.chars().next() else { break };
            rest = &rest[c.len_utf8()..];
            self.held.push(c);
            if self.held == TAG_OPEN {
                self.held.clear();
                self.open_body(Marker::Tag, out);
                return rest;
            }
            if self.held == FENCE_OPEN {
                self.held.clear();
                self.mode = Mode::FenceHeader(String::new());
                return rest;
            }
            self.release_held(out);
        }
        ""
    }

    /// Releases held text until what is left could still begin a marker.
    fn release_held(&mut self, out: &mut Output) {
        while !self.held.is_empty() && !is_marker_prefix(&self.held) {
            let first = self.held.chars().next().map_or(0, char::len_utf8);
            out.text(&self.held[..first]);
            self.held.drain(..first);
        }
    }

    fn fence_header<'a>(&mut self, input: &'a str, out: &mut Output) -> &'a str {
        let Mode::FenceHeader(header) = &mut self.mode else {
            unreachable!("called in header mode")
        };
        for (i, c) in input.char_indices() {
            if c == '\n' || c == '{' || c == '[' {
                let fits = matches!(header.trim(), "" | "s" | "json" | "s json");
                if fits {
                    // The body starts after a newline, or with the `{`/`[` itself.
                    let rest = if c == '\n' {
                        &input[i + 1..]
                    } else {
                        &input[i..]
                    };
                    self.open_body(Marker::Fence, out);
                    return rest;
                }
                header.push(c);
                let text = format!("{FENCE_OPEN}{header}");
                self.mode = Mode::Text;
                out.text(&text);
                return &input[i + c.len_utf8()..];
            }
            header.push(c);
            if header.len() > MAX_FENCE_HEADER {
                let text = format!("{FENCE_OPEN}{header}");
                self.mode = Mode::Text;
                out.text(&text);
                return &input[i + c.len_utf8()..];
            }
        }
        ""
    }

    /// A marker was read. The call opens only once its body starts with `{` or `[`: a marker
    /// followed by anything else is text (`<tool_call>` named in prose or in code).
    fn open_body(&mut self, marker: Marker, _out: &mut Output) {
        let slot = self.slots;
        self.mode = Mode::Body(Body {
            marker,
            opened: false,
            slot,
            text: String::new(),
            scan: Scan::default(),
        });
    }

    fn body<'a>(&mut self, input: &'a str, out: &mut Output) -> &'a str {
        let Mode::Body(body) = &mut self.mode else {
            unreachable!("called in body mode")
        };
        let close = body.marker.close();
        let mut next = 0;
        while next < input.len() {
            // Inside a JSON string, a run of plain characters changes nothing but the text:
            // take it whole (to the next quote, backslash, or last character of a marker).
            if body.opened && body.scan.in_string && !body.scan.escaped && !body.scan.closed {
                let rest = &input[next..];
                let run = find_byte(rest, |b| matches!(b, b'"' | b'\\' | b'>' | b'`'));
                if run > 0 {
                    let plain = &rest[..run];
                    body.text.push_str(plain);
                    if body.scan.string_run(plain) {
                        out.args_str(body.slot, plain);
                    }
                    next += run;
                    continue;
                }
            }
            let i = next;
            let Some(c) = input[i..].chars().next() else {
                break;
            };
            next += c.len_utf8();
            if !body.opened {
                if c.is_whitespace() {
                    body.text.push(c);
                    continue;
                }
                if c != '{' && c != '[' {
                    let text = format!("{}{}", body.marker.open(), body.text);
                    self.mode = Mode::Text;
                    out.text(&text);
                    return &input[i..];
                }
                body.opened = true;
                self.slots += 1;
                out.pieces.push(Piece::CallOpen { slot: body.slot });
            }
            body.text.push(c);
            let event = body.scan.step(c);
            match event {
                ScanEvent::None => {}
                ScanEvent::Args => out.args(body.slot, c),
                ScanEvent::NameDone(name) => {
                    out.pieces.push(Piece::CallName {
                        slot: body.slot,
                        name,
                    });
                }
            }
            // A fence closes only outside JSON strings (arguments may carry code blocks);
            // a closing tag closes wherever it appears.
            // Both closing markers end in a character rarely seen otherwise (`>` or a backtick):
            // only then is the tail compared.
            let may_close =
                (c == '>' || c == '`') && (body.marker == Marker::Tag || !body.scan.in_string);
            if may_close && body.text.ends_with(close) {
                let len = body.text.len() - close.len();
                body.text.truncate(len);
                let slot = body.slot;
                let text = std::mem::take(&mut body.text);
                out.pieces.push(Piece::CallClose {
                    slot,
                    body: text,
                    complete: true,
                });
                self.mode = Mode::Text;
                return &input[i + c.len_utf8()..];
            }
        }
        ""
    }
}

/// The index of the first byte of `text` that `wanted` picks, or `text.len()`. Only ASCII
/// bytes are looked for, which never occur inside a multi-byte character, so the index is
/// always a character boundary. A byte loop: much faster than searching by `char`.
fn find_byte(text: &str, wanted: impl Fn(u8) -> bool) -> usize {
    text.bytes().position(wanted).unwrap_or(text.len())
}

fn is_marker_prefix(s: &str) -> bool {
    TAG_OPEN.starts_with(s) || FENCE_OPEN.starts_with(s)
}

/// Pieces of one `push`, with text and argument deltas merged as they are produced.
#[derive(Default)]
struct Output {
    pieces: Vec<Piece>,
}

impl Output {
    fn text(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Text(text)) => text.push_str(s),
            _ => self.pieces.push(Piece::Text(s.to_owned())),
        }
    }

    fn args(&mut self, slot: usize, c: char) {
        match self.pieces.last_mut() {
            Some(Piece::CallArgs { slot: s, delta }) if *s == slot => delta.push(c),
            _ => self.pieces.push(Piece::CallArgs {
                slot,
                delta: c.to_string(),
            }),
        }
    }

    fn args_str(&mut self, slot: usize, text: &str) {
        match self.pieces.last_mut() {
            Some(Piece::CallArgs { slot: s, delta }) if *s == slot => delta.push_str(text),
            _ => self.pieces.push(Piece::CallArgs {
                slot,
                delta: text.to_owned(),
            }),
        }
    }

    fn finish(self) -> Vec<Piece> {
        self.pieces
    }
}

#[derive(Debug)]
struct Body {
    marker: Marker,
    /// Whether the body has started (`{` or `[` after the marker) and `CallOpen` was sent.
    opened: bool,
    slot: usize,
    text: String,
    scan: Scan,
}

/// What a character meant to the scan of a call body.
#[derive(Debug, PartialEq, Eq)]
enum ScanEvent {
    None,
    /// The character belongs to the arguments object.
    Args,
    /// The name's string closed; the name, decoded.
    NameDone(String),
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
enum Expect {
    #[default]
    Key,
    Colon,
    Value,
    Comma,
}

#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
enum Capture {
    #[default]
    None,
    Key,
    Name,
}

/// An incremental scan of a JSON call body: depth, strings, and the top-level keys that carry
/// the name and the arguments. It never fails: JSON it does not understand is simply not
/// streamed, and repair reads the whole body at the close.
#[derive(Debug, Default)]
struct Scan {
    depth: u32,
    in_string: bool,
    escaped: bool,
    started: bool,
    closed: bool,
    expect: Expect,
    capture: Capture,
    captured: String,
    key: String,
    name_seen: bool,
    /// Depth at which the arguments object opened, while it is being written.
    args_depth: Option<u32>,
    args_seen: bool,
}

impl Scan {
    fn is_complete(&self) -> bool {
        self.started && self.closed
    }

    fn step(&mut self, c: char) -> ScanEvent {
        if self.closed {
            return ScanEvent::None;
        }
        let in_args = self.args_depth.is_some();
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.in_string = false;
                if let Some(event) = self.string_closed() {
                    return event;
                }
            }
            if self.capture != Capture::None && self.in_string {
                self.captured.push(c);
            }
            return if in_args {
                ScanEvent::Args
            } else {
                ScanEvent::None
            };
        }
        match c {
            '"' => {
                self.in_string = true;
                if self.depth == 1 && !in_args {
                    match self.expect {
                        Expect::Key => self.begin_capture(Capture::Key),
                        Expect::Value
                            if !self.name_seen && NAME_KEYS.contains(&self.key.as_str()) =>
                        {
                            self.begin_capture(Capture::Name)
                        }
                        _ => {}
                    }
                }
            }
            '{' | '[' => {
                if self.depth == 0 {
                    self.started = true;
                } else if self.depth == 1
                    && c == '{'
                    && self.expect == Expect::Value
                    && !self.args_seen
                    && ARGUMENT_KEYS.contains(&self.key.as_str())
                {
                    self.args_depth = Some(self.depth);
                    self.args_seen = true;
                }
                self.depth += 1;
            }
            '}' | ']' => {
                self.depth = self.depth.saturating_sub(1);
                if self.args_depth == Some(self.depth) {
                    self.args_depth = None;
                    self.expect = Expect::Comma;
                    return ScanEvent::Args;
                }
                if self.depth == 0 && self.started {
                    self.closed = true;
                }
                if self.depth == 1 {
                    self.expect = Expect::Comma;
                }
            }
            ':' if self.depth == 1 && !in_args => self.expect = Expect::Value,
            ',' if self.depth == 1 && !in_args => self.expect = Expect::Key,
            _ => {}
        }
        if in_args || self.args_depth.is_some() {
            ScanEvent::Args
        } else {
            ScanEvent::None
        }
    }

    /// A run of plain characters inside a string (no quote, no backslash): captured when a
    /// key or the name is being read. Returns whether the run belongs to the arguments.
    fn string_run(&mut self, plain: &str) -> bool {
        if self.capture != Capture::None {
            self.captured.push_str(plain);
        }
        self.args_depth.is_some()
    }

    fn begin_capture(&mut self, capture: Capture) {
        self.capture = capture;
        self.captured.clear();
    }

    fn string_closed(&mut self) -> Option<ScanEvent> {
        let capture = std::mem::take(&mut self.capture);
        match capture {
            Capture::None => {
                if self.depth == 1 && self.args_depth.is_none() && self.expect == Expect::Value {
                    self.expect = Expect::Comma;
                }
                None
            }
            Capture::Key => {
                self.key = decode_json_string(&self.captured);
                self.expect = Expect::Colon;
                None
            }
            Capture::Name => {
                self.name_seen = true;
                self.expect = Expect::Comma;
                Some(ScanEvent::NameDone(decode_json_string(&self.captured)))
            }
        }
    }
}

/// The value of a JSON string's raw contents (between the quotes); raw text when it does not
/// decode.
fn decode_json_string(raw: &str) -> String {
    serde_json::from_str::<String>(&format!("\"{raw}\"")).unwrap_or_else(|_| raw.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `input` fed in the given chunks and merges adjacent text and argument pieces.
    pub(crate) fn parse_chunks(chunks: &[&str], cut_by_limit: bool) -> Vec<Piece> {
        let mut parser = CallParser::new();
        let mut pieces = Vec::new();
        for chunk in chunks {
            pieces.extend(parser.push(chunk));
        }
        pieces.extend(parser.finish(cut_by_limit));
        merge(pieces)
    }

    pub(crate) fn merge(pieces: Vec<Piece>) -> Vec<Piece> {
        let mut out: Vec<Piece> = Vec::new();
        for piece in pieces {
            match (out.last_mut(), piece) {
                (_, Piece::Text(t)) if t.is_empty() => {}
                (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
                (
                    Some(Piece::CallArgs { slot: s, delta: a }),
                    Piece::CallArgs { slot, delta: b },
                ) if *s == slot => a.push_str(&b),
                (_, piece) => out.push(piece),
            }
        }
        out
    }

    fn text(s: &str) -> Piece {
        Piece::Text(s.into())
    }

    /// Every split of `input` into two and three chunks gives the same merged pieces.
    fn check_all_splits(input: &str, cut: bool) -> Vec<Piece> {
        let whole = parse_chunks(&[input], cut);
        let bounds: Vec<usize> = (0..=input.len())
            .filter(|&i| input.is_char_boundary(i))
            .collect();
        for &i in &bounds {
            assert_eq!(
                parse_chunks(&[&input[..i], &input[i..]], cut),
                whole,
                "split at {i}"
            );
            for &j in bounds.iter().filter(|&&j| j > i) {
                let chunks = [&input[..i], &input[i..j], &input[j..]];
                assert_eq!(parse_chunks(&chunks, cut), whole, "split at {i}, {j}");
            }
        }
        whole
    }

    #[test]
    fn tag_call_between_text() {
        let input =
            "Let me add.<tool_call>{\"name\": \"add\", \"arguments\": {\"a\": 1}}</tool_call>Done.";
        assert_eq!(
            check_all_splits(input, false),
            vec![
                text("Let me add."),
                Piece::CallOpen { slot: 0 },
                Piece::CallName {
                    slot: 0,
                    name: "add".into()
                },
                Piece::CallArgs {
                    slot: 0,
                    delta: "{\"a\": 1}".into()
                },
                Piece::CallClose {
                    slot: 0,
                    body: "{\"name\": \"add\", \"arguments\": {\"a\": 1}}".into(),
                    complete: true
                },
                text("Done."),
            ]
        );
    }

    #[test]
    fn fenced_call_with_code_in_an_argument() {
        let input = "```tool_call\n{\"name\":\"run\",\"arguments\":{\"code\":\"```py\\nx=1\\n```\"}}\n```\nok";
        let pieces = check_all_splits(input, false);
        assert_eq!(pieces[0], Piece::CallOpen { slot: 0 });
        assert_eq!(
            pieces[2],
            Piece::CallArgs {
                slot: 0,
                delta: "{\"code\":\"```py\\nx=1\\n```\"}".into()
            }
        );
        assert!(
            matches!(&pieces[3], Piece::CallClose { complete: true, body, .. } if body.ends_with("}}\n"))
        );
        assert_eq!(pieces[4], text("\nok"));
    }

    #[test]
    fn other_fences_and_angle_brackets_stay_text() {
        let input = "a < b and ```python\nx``` and <tool_cal> and ```tool_calling stuff\n";
        assert_eq!(check_all_splits(input, false), vec![text(input)]);
    }

    #[test]
    fn name_after_arguments_and_parameters_key() {
        let input = "<tool_call>{\"parameters\": {\"q\": \"x\"}, \"name\": \"find\"}</tool_call>";
        assert_eq!(
            check_all_splits(input, false)[1..3],
            [
                Piece::CallArgs {
                    slot: 0,
                    delta: "{\"q\": \"x\"}".into()
                },
                Piece::CallName {
                    slot: 0,
                    name: "find".into()
                },
            ]
        );
    }

    #[test]
    fn several_calls_and_cut_off_last_call() {
        let input = "<tool_call>{\"name\":\"a\",\"arguments\":{}}</tool_call>\n<tool_call>{\"name\":\"b\",\"arguments\":{\"x\":";
        let pieces = check_all_splits(input, true);
        assert!(matches!(
            pieces.last(),
            Some(Piece::CallClose {
                slot: 1,
                complete: false,
                ..
            })
        ));
        assert!(pieces.contains(&Piece::CallClose {
            slot: 0,
            body: "{\"name\":\"a\",\"arguments\":{}}".into(),
            complete: true
        }));
    }

    #[test]
    fn a_complete_body_without_closing_tag_is_complete_unless_cut_by_the_limit() {
        let input = "<tool_call>\n{\"name\": \"a\", \"arguments\": {}}\n";
        assert!(matches!(
            check_all_splits(input, false).last(),
            Some(Piece::CallClose { complete: true, .. })
        ));
        assert!(matches!(
            check_all_splits(input, true).last(),
            Some(Piece::CallClose {
                complete: false,
                ..
            })
        ));
    }

    #[test]
    fn held_prefix_at_the_end_is_text() {
        assert_eq!(
            check_all_splits("see <tool_ca", false),
            vec![text("see <tool_ca")]
        );
        assert_eq!(
            check_all_splits("x ```tool_call json", false),
            vec![text("x ```tool_call json")]
        );
    }

    #[test]
    fn multibyte_text_around_calls() {
        let input = "héllo → <tool_call>{\"name\":\"é\",\"arguments\":{\"k\":\"ü\"}}</tool_call>✓";
        let pieces = check_all_splits(input, false);
        assert_eq!(pieces[0], text("héllo → "));
        assert_eq!(
            pieces[2],
            Piece::CallName {
                slot: 0,
                name: "é".into()
            }
        );
        assert_eq!(pieces.last(), Some(&text("✓")));
    }
}
