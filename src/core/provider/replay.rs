//! The replay provider: a recorded transcript played back, one model output per step, so that
//! a run is deterministic (demo, tests, QA regression runs).
//!
//! A transcript is JSONL, one line per model call of the run, in order:
//! `{"text": "...", "calls": [{"name": "...", "arguments": {...}}], "finish": "stop"|"length"}`
//! (`calls` are native calls; `arguments` may be a raw string, kept as written; text may also
//! hold text-format calls). [`Recorder`] writes the same line from a live model's events.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ModelEvent, ProviderError};
use crate::core::native::NativeDelta;

/// One recorded model output.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayStep {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    /// The text the model wrote.
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    /// The native calls it made, in order.
    pub calls: Vec<ReplayCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Why the output ended (`length` when cut at the token limit).
    pub finish: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
/// One native call of a recorded output.
pub struct ReplayCall {
    /// The tool's name as the model wrote it.
    pub name: String,
    /// An object, or the raw text the model wrote.
    #[serde(default)]
    pub arguments: Value,
}

/// Reads a transcript. Blank lines are skipped; a bad line is an error naming it.
pub fn parse_transcript(text: &str) -> Result<Vec<ReplayStep>, String> {
    let mut steps = Vec::new();
    for (number, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let step: ReplayStep = serde_json::from_str(line)
            .map_err(|e| format!("transcript line {}: {e}", number + 1))?;
        steps.push(step);
    }
    if steps.is_empty() {
        return Err("the transcript has no steps".into());
    }
    Ok(steps)
}

/// The events of step `step` (1-based), with text in pieces of `chunk` characters.
pub fn replay_events(steps: &[ReplayStep], step: usize, chunk: usize) -> Vec<ModelEvent> {
    let Some(recorded) = step.checked_sub(1).and_then(|i| steps.get(i)) else {
        return vec![ModelEvent::Error(ProviderError::fatal(format!(
            "the replay transcript has {} steps; the run asked for step {step}",
            steps.len()
        )))];
    };
    let mut out = Vec::new();
    let chars: Vec<char> = recorded.text.chars().collect();
    for piece in chars.chunks(chunk.max(1)) {
        out.push(ModelEvent::Text(piece.iter().collect()));
    }
    for (index, call) in recorded.calls.iter().enumerate() {
        let arguments = match &call.arguments {
            Value::String(raw) => raw.clone(),
            Value::Null => "{}".to_owned(),
            other => other.to_string(),
        };
        out.push(ModelEvent::Native(NativeDelta {
            index,
            id: Some(format!("replay_{step}_{index}")),
            name: Some(call.name.clone()),
            arguments: Some(arguments),
        }));
    }
    out.push(ModelEvent::Done {
        cut_by_limit: recorded.finish.as_deref() == Some("length"),
    });
    out
}

/// Records a live model's events as a transcript line.
#[derive(Debug, Default)]
pub struct Recorder {
    step: ReplayStep,
    arguments: Vec<(usize, String)>,
}

impl Recorder {
    /// Records one event of the model call being recorded.
    pub fn observe(&mut self, event: &ModelEvent) {
        match event {
            ModelEvent::Text(text) => self.step.text.push_str(text),
            ModelEvent::Native(delta) => {
                let at = match self.arguments.iter().position(|(i, _)| *i == delta.index) {
                    Some(at) if delta.name.is_none() || self.step.calls[at].name.is_empty() => at,
                    _ => {
                        self.arguments.push((delta.index, String::new()));
                        self.step.calls.push(ReplayCall {
                            name: String::new(),
                            arguments: Value::Null,
                        });
                        self.arguments.len() - 1
                    }
                };
                if let Some(name) = &delta.name {
                    self.step.calls[at].name = name.clone();
                }
                if let Some(arguments) = &delta.arguments {
                    self.arguments[at].1.push_str(arguments);
                }
            }
            ModelEvent::Done { cut_by_limit } => {
                self.step.finish = Some(if *cut_by_limit { "length" } else { "stop" }.into());
            }
            ModelEvent::Error(_) | ModelEvent::Report { .. } => {}
        }
    }

    /// The transcript line (without the newline).
    pub fn line(mut self) -> String {
        for (call, (_, raw)) in self.step.calls.iter_mut().zip(&self.arguments) {
            call.arguments = match serde_json::from_str::<Value>(raw) {
                Ok(Value::Object(map)) => Value::Object(map),
                _ if raw.is_empty() => Value::Object(Default::default()),
                _ => Value::String(raw.clone()),
            };
        }
        serde_json::to_string(&self.step).expect("a replay step serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn transcripts_play_back_step_by_step() {
        let steps = parse_transcript(
            "{\"text\": \"Looking up.\", \"calls\": [{\"name\": \"search\", \"arguments\": {\"q\": \"tea\"}}]}\n\n{\"text\": \"Found: sencha.\"}\n",
        )
        .unwrap();
        let first = replay_events(&steps, 1, 4);
        assert_eq!(first[0], ModelEvent::Text("Look".into()));
        assert!(first.contains(&ModelEvent::Native(NativeDelta {
            index: 0,
            id: Some("replay_1_0".into()),
            name: Some("search".into()),
            arguments: Some("{\"q\":\"tea\"}".into())
        })));
        assert_eq!(
            first.last(),
            Some(&ModelEvent::Done {
                cut_by_limit: false
            })
        );
        assert!(
            matches!(&replay_events(&steps, 3, 4)[0], ModelEvent::Error(e) if e.message.contains("has 2 steps"))
        );
        assert!(parse_transcript("{\"text\": 5}")
            .unwrap_err()
            .starts_with("transcript line 1"));
        assert!(parse_transcript("\n").is_err());
    }

    #[test]
    fn recording_round_trips() {
        let mut recorder = Recorder::default();
        for event in [
            ModelEvent::Text("Hi ".into()),
            ModelEvent::Native(NativeDelta {
                index: 0,
                id: Some("a".into()),
                name: Some("add".into()),
                arguments: Some("{\"a\":".into()),
            }),
            ModelEvent::Native(NativeDelta {
                index: 0,
                id: None,
                name: None,
                arguments: Some("1}".into()),
            }),
            ModelEvent::Native(NativeDelta {
                index: 0,
                id: Some("b".into()),
                name: Some("add".into()),
                arguments: Some("{bad".into()),
            }),
            ModelEvent::Done { cut_by_limit: true },
        ] {
            recorder.observe(&event);
        }
        let line = recorder.line();
        let steps = parse_transcript(&line).unwrap();
        assert_eq!(steps[0].calls[0].arguments, json!({"a": 1}));
        assert_eq!(
            steps[0].calls[1].arguments,
            json!("{bad"),
            "broken arguments are kept as written"
        );
        assert_eq!(steps[0].finish.as_deref(), Some("length"));
    }
}
