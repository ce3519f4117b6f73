//! The error of a request that cannot be carried out as written: a leaf of the core, so that
//! the parsers of every area (the operations', the workbench's) name it without importing
//! one another.

use std::fmt;

/// A request that cannot be carried out as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for RequestError {}
