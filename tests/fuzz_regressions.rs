//! Replays the inputs that made a fuzz target fail (`tests/golden/fuzz-regressions/<target>/`)
//! through the same checks the target runs: the check modules of `fuzz/src/` are included
//! here, so plain `cargo test` keeps every bug the fuzzers found fixed.
//!
//! Each target's seed corpus (`fuzz/corpus/<target>/`) is replayed too, so the targets' checks
//! themselves stay true of realistic input.

mod common;
// The fuzz checks below reach the chunking helpers as `crate::chunk`.
use common::chunk;

#[allow(dead_code)]
#[path = "../fuzz/src/call_parser.rs"]
mod call_parser;
#[allow(dead_code)]
#[path = "../fuzz/src/golden.rs"]
mod golden;
#[allow(dead_code)]
#[path = "../fuzz/src/mcp.rs"]
mod mcp;
#[allow(dead_code)]
#[path = "../fuzz/src/page.rs"]
mod page;
#[allow(dead_code)]
#[path = "../fuzz/src/repair.rs"]
mod repair;
#[allow(dead_code)]
#[path = "../fuzz/src/stream.rs"]
mod stream;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// A fuzz target's check of one input.
type Check = fn(&[u8]);

/// Every fuzz target and its check.
const TARGETS: &[(&str, Check)] = &[
    ("call_parser", call_parser::call_parser),
    ("repair", repair::repair),
    ("native_repair", repair::native_repair),
    ("sse", stream::sse),
    ("provider_stream", stream::provider_stream),
    ("jsonrpc", mcp::jsonrpc),
    ("page_message", page::page_message),
];

/// Runs `check` on every file of `dir`; returns the failures.
fn replay(target: &str, check: Check, dir: &Path) -> (usize, Vec<String>) {
    let mut failures = Vec::new();
    let inputs = common::files(dir, None);
    for path in &inputs {
        let data = std::fs::read(path).unwrap();
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| check(&data))) {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            failures.push(format!("{target}: {}: {message}", path.display()));
        }
    }
    (inputs.len(), failures)
}

#[test]
fn crashing_inputs_stay_fixed() {
    let dir = common::golden("fuzz-regressions");
    let mut failures = Vec::new();
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some((target, check)) = TARGETS.iter().find(|(t, _)| *t == name) else {
            panic!("{}: no fuzz target of that name", path.display());
        };
        let (n, failed) = replay(target, *check, &path);
        count += n;
        failures.extend(failed);
    }
    assert!(count >= 9, "expected the kept inputs, found {count}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn seed_corpora_pass_their_checks() {
    let mut failures = Vec::new();
    for (target, check) in TARGETS {
        let (n, failed) = replay(
            target,
            *check,
            &common::root().join("fuzz/corpus").join(target),
        );
        assert!(n > 0, "{target}: no seeds");
        failures.extend(failed);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
