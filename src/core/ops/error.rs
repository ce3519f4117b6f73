//! The error of a request that cannot be carried out as written: its own module, so that
//! the parsers of other areas (the workbench's) name it without importing the operations.

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
