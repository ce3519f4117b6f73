//! What the host's storage machines share: the storage outputs they ask for, their inputs read
//! back (leniently, or as the operation's error), and a queue of writes whose failures are
//! warned of in the worker's console ([`Writes`]).
//!
//! Invariant: a read's error reaches the operation as the storage said it, word for word.

use std::collections::VecDeque;

use serde_json::Value;

use super::io::{unasked, Input, Output, Storage, Ui};
use crate::core::storage::Area;

/// Read `key` of `area`: [`Input::Read`].
pub fn read(area: Area, key: &str) -> Output {
    Output::Storage(Storage::Read {
        area,
        key: key.to_owned(),
    })
}

/// Store `value` under `key` of `area` (`None`: remove it): [`Input::Done`].
pub fn write(area: Area, key: &str, value: Option<Value>) -> Output {
    Output::Storage(Storage::Write {
        area,
        key: key.to_owned(),
        value,
    })
}

/// Warn of `message` in the worker's console.
pub fn warn(message: String) -> Output {
    Output::Ui(Ui::Warn { message })
}

/// What a read found, its failure taken as nothing stored (the lenient reads).
pub fn found(input: Option<Input>) -> Option<Value> {
    match input {
        Some(Input::Read(Ok(value))) => value,
        _ => None,
    }
}

/// What a read found, or why it failed (as the storage said it); another input is a bug of
/// the shell, said as such for `what`.
pub fn read_back(input: Option<Input>, what: &str) -> Result<Option<Value>, String> {
    match input {
        Some(Input::Read(read)) => read,
        other => Err(format!(
            "internal error: {} came where {what} asked for a stored value",
            unasked(other.as_ref())
        )),
    }
}

/// Writes performed one after another; a write given a warning has its failure warned of
/// (`{warning}{error}`) before the next.
#[derive(Debug)]
pub struct Writes {
    left: VecDeque<(Output, Option<String>)>,
    /// The warning of the write under way.
    warning: Option<String>,
    /// The last write's outcome.
    last: Result<(), String>,
}

impl Default for Writes {
    fn default() -> Writes {
        Writes {
            left: VecDeque::new(),
            warning: None,
            last: Ok(()),
        }
    }
}

impl Writes {
    /// Then `output`, its failure warned of with `warning` (none: ignored).
    pub fn then(mut self, output: Output, warning: Option<String>) -> Writes {
        self.left.push_back((output, warning));
        self
    }

    /// The next output, given the last one's input; `None` once all are done.
    pub fn next(&mut self, input: Option<Input>) -> Option<Output> {
        if let Some(Input::Done(done)) = &input {
            self.last = done.clone();
        }
        if let (Some(Input::Done(Err(error))), Some(warning)) = (&input, self.warning.take()) {
            return Some(warn(format!("{warning}{error}")));
        }
        self.warning = None;
        let (output, warning) = self.left.pop_front()?;
        self.warning = warning;
        Some(output)
    }

    /// The last write's outcome (a warning after it leaves it as it was).
    pub fn last(&self) -> Result<(), String> {
        self.last.clone()
    }
}
