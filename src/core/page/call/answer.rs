//! How a page call ended, typed ([`CallAnswer`]): what every machine that asked for a call
//! (an evaluation, a simulation's setup, `replayDiff`, an audit probe, a run) matches on, and
//! what `callTool` answers, written once from it ([`CallAnswer::to_json`]): `{ok: true,
//! result}` (with `input: "text"`, `outputErrors`), `{ok: true, navigated: true, url?, tools?,
//! openedTab?, result?, resultNote?, crossOrigin?}`, `{ok: true, result, frame, crossOrigin?}`
//! or `{ok: false, error}`, each with `confirmation` when a site policy let it act unasked.

use serde_json::{json, Value};

use crate::core::page::bridge::CallOutcome;

/// How a page call ended.
#[derive(Debug, Clone, PartialEq)]
pub struct CallAnswer {
    /// What became of the call.
    pub ended: Ended,
    /// How a consequential call made without the question was allowed (`allowed by site
    /// policy <origin>`).
    pub confirmation: Option<String>,
}

/// What became of a page call.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// The tool answered.
    Result {
        /// Its result, as text (WebMCP hands every result over as a string).
        text: String,
        /// The page took the arguments only as JSON text (`input: "text"`).
        text_input: bool,
        /// How the result breaks the tool's output schema (`[{pointer, message}]`).
        output_errors: Option<Vec<Value>>,
    },
    /// The call took the top frame (or a tab it opened) to another document.
    Navigated(Destination),
    /// The call loaded its result in a frame; the top page stays.
    InFrame {
        /// The frame.
        frame_id: i64,
        /// The frame's document's URL.
        url: String,
        /// Its JSON-LD (or title and text) as JSON text.
        text: String,
        /// The frame's origin, when not the tool's.
        cross_origin: Option<String>,
    },
    /// The call failed, was refused or was never made: why.
    Failed(String),
}

/// Where a call that navigated went, and what the destination offers and says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Destination {
    /// Its URL, when known.
    pub url: Option<String>,
    /// The tools it offers, when it was listed.
    pub tools: Option<Vec<String>>,
    /// The tab the call opened, when it opened one.
    pub opened_tab: Option<i64>,
    /// Its JSON-LD, as JSON text.
    pub result: Option<String>,
    /// Why there is no result.
    pub result_note: Option<String>,
    /// Its origin, when not the tool's.
    pub cross_origin: Option<String>,
}

impl CallAnswer {
    /// A call that failed, was refused or was never made.
    pub fn failed(error: impl Into<String>) -> CallAnswer {
        Ended::Failed(error.into()).into()
    }

    /// A call the tool answered with `text`.
    pub fn text(text: impl Into<String>) -> CallAnswer {
        Ended::Result {
            text: text.into(),
            text_input: false,
            output_errors: None,
        }
        .into()
    }

    /// The page's own outcome (or why there is none) as the call's answer.
    pub fn of(outcome: &Result<CallOutcome, String>) -> CallAnswer {
        match outcome {
            Ok(CallOutcome::Text { text, text_input }) => Ended::Result {
                text: text.clone(),
                text_input: *text_input,
                output_errors: None,
            },
            Ok(CallOutcome::Navigated { url }) => Ended::Navigated(Destination {
                url: url.clone(),
                ..Destination::default()
            }),
            Ok(CallOutcome::Failed { name, message }) => {
                Ended::Failed(format!("{name}: {message}"))
            }
            Err(message) => Ended::Failed(message.clone()),
        }
        .into()
    }

    /// Whether the call was made and answered (`ok: true`).
    pub fn ok(&self) -> bool {
        !matches!(self.ended, Ended::Failed(_))
    }

    /// Why the call failed, if it did.
    pub fn error(&self) -> Option<&str> {
        match &self.ended {
            Ended::Failed(error) => Some(error),
            _ => None,
        }
    }

    /// The result's text, when the call gave one (a navigation's is its destination's JSON-LD).
    pub fn result(&self) -> Option<&str> {
        match &self.ended {
            Ended::Result { text, .. } | Ended::InFrame { text, .. } => Some(text),
            Ended::Navigated(destination) => destination.result.as_deref(),
            Ended::Failed(_) => None,
        }
    }

    /// Where the call navigated, if it did.
    pub fn navigated(&self) -> Option<&Destination> {
        match &self.ended {
            Ended::Navigated(destination) => Some(destination),
            _ => None,
        }
    }

    /// `callTool`'s answer.
    pub fn to_json(&self) -> Value {
        let mut answer = match &self.ended {
            Ended::Result {
                text,
                text_input,
                output_errors,
            } => {
                let mut answer = json!({"ok": true, "result": text});
                if *text_input {
                    answer["input"] = json!("text");
                }
                if let Some(errors) = output_errors {
                    answer["outputErrors"] = json!(errors);
                }
                answer
            }
            Ended::Navigated(to) => {
                let mut answer = json!({"ok": true, "navigated": true});
                let fields = [
                    ("url", to.url.as_ref().map(|u| json!(u))),
                    ("tools", to.tools.as_ref().map(|t| json!(t))),
                    ("openedTab", to.opened_tab.map(|t| json!(t))),
                    ("result", to.result.as_ref().map(|r| json!(r))),
                    ("resultNote", to.result_note.as_ref().map(|n| json!(n))),
                    ("crossOrigin", to.cross_origin.as_ref().map(|o| json!(o))),
                ];
                for (key, value) in fields {
                    if let Some(value) = value {
                        answer[key] = value;
                    }
                }
                answer
            }
            Ended::InFrame {
                frame_id,
                url,
                text,
                cross_origin,
            } => {
                let mut answer = json!({"ok": true, "result": text,
                    "frame": {"frameId": frame_id, "url": url}});
                if let Some(origin) = cross_origin {
                    answer["crossOrigin"] = json!(origin);
                }
                answer
            }
            Ended::Failed(error) => json!({"ok": false, "error": error}),
        };
        if let Some(allowed) = &self.confirmation {
            answer["confirmation"] = json!(allowed);
        }
        answer
    }
}

impl From<Ended> for CallAnswer {
    fn from(ended: Ended) -> CallAnswer {
        CallAnswer {
            ended,
            confirmation: None,
        }
    }
}
