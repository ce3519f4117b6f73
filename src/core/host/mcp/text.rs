//! One HTTP request whose whole (capped) body is read, as a sub-machine over [`Http`]: a
//! sign-in's token and metadata requests, a refresh. Within `ms` in all; reading stops once the
//! text is over the cap (that piece kept whole, so the reader sees the body was larger); the
//! fetch is aborted then, and whenever it is left unread.

use super::super::io::{Fetched, Http, Input, Output, Piece, Step};
use super::super::Host;
use crate::core::http::HttpRequest;

/// The request's status and text, `None` when time ran out, or why it failed.
pub type Texted = Result<Option<(u16, String)>, String>;

/// The machine: see the module's documentation.
#[derive(Debug)]
pub struct Text {
    request: Option<HttpRequest>,
    ms: u32,
    cap: usize,
    until: f64,
    id: u64,
    status: u16,
    text: String,
    /// The answer, once known, given after the fetch was aborted.
    answer: Option<Texted>,
}

impl Text {
    /// `request` within `ms`, its body read up to `cap` bytes.
    pub fn new(request: HttpRequest, ms: u32, cap: usize) -> Text {
        Text {
            request: Some(request),
            ms,
            cap,
            until: 0.0,
            id: 0,
            status: 0,
            text: String::new(),
            answer: None,
        }
    }

    /// One step.
    pub fn step(&mut self, host: &Host, input: Option<Input>, now: f64) -> Step<Texted> {
        if let Some(request) = self.request.take() {
            self.id = host.fetch_id();
            self.until = now + f64::from(self.ms);
            return Step::Do(Output::Http(Http::Fetch {
                id: self.id,
                request,
                within_ms: self.ms,
            }));
        }
        if let Some(answer) = self.answer.take() {
            return Step::Done(answer);
        }
        let (answer, abort) = match input {
            Some(Input::Fetched(Fetched::Head(head))) => {
                self.status = head.status;
                return self.read(now);
            }
            Some(Input::Fetched(Fetched::TimedOut)) => (Ok(None), false),
            Some(Input::Fetched(Fetched::Failed(error))) => (Err(error), false),
            Some(Input::Piece(Piece::Text(text))) => {
                self.text.push_str(&text);
                if self.text.len() <= self.cap {
                    return self.read(now);
                }
                (Ok(Some(self.whole())), true)
            }
            Some(Input::Piece(Piece::End)) => (Ok(Some(self.whole())), false),
            Some(Input::Piece(Piece::Failed(error))) => (Err(error), false),
            Some(Input::Piece(Piece::Late)) => (Ok(None), true),
            other => (
                Err(format!(
                    "internal error: {}",
                    super::super::io::unasked(other.as_ref())
                )),
                false,
            ),
        };
        if !abort {
            return Step::Done(answer);
        }
        self.answer = Some(answer);
        Step::Do(Output::Http(Http::Abort { id: self.id }))
    }

    fn read(&mut self, now: f64) -> Step<Texted> {
        let left = (self.until - now).max(0.0) as u32;
        Step::Do(Output::Http(Http::Read {
            id: self.id,
            within_ms: Some(left),
        }))
    }

    fn whole(&mut self) -> (u16, String) {
        (self.status, std::mem::take(&mut self.text))
    }
}

impl Host {
    /// One step of a [`Text`].
    pub fn fetch_text(&self, m: &mut Text, input: Option<Input>, now: f64) -> Step<Texted> {
        m.step(self, input, now)
    }
}
