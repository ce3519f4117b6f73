//! The fuzz targets' checks, one module per family (each target in `fuzz_targets/` is one line
//! calling its function here), and a guard that lets a run go on past bugs that are already
//! known and reported (see `KNOWN`), so that fuzzing can look for new ones before those are
//! fixed.
//!
//! The check modules use only `std`, `serde_json` and `webmcp_host`, and reach each other
//! through `crate::`: `tests/fuzz_regressions.rs` at the root includes the same files to
//! replay the crashing inputs with plain `cargo test`.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

pub mod call_parser;
/// The chunking helpers the native tests and the benchmark share (`tests/common/chunk.rs`).
#[path = "../../tests/common/chunk.rs"]
pub mod chunk;
pub mod golden;
pub mod mcp;
pub mod page;
pub mod repair;
pub mod stream;

pub use golden::{golden_tools, TOOLS_JSON};

/// Known panics, as (file the panic is raised from or passes through, text in its message).
/// Each should have an input in `tests/golden/fuzz-regressions/`. They are skipped only when the
/// environment variable `FUZZ_SKIP_KNOWN` is set; by default every panic is a crash. With
/// `FUZZ_KNOWN_LOG` also set, each skipped panic prints where it came from. Remove an entry
/// once its bug is fixed.
///
/// Empty now. It held `("src/core/repair/name.rs", "is not a char boundary")` while the two
/// name-repair panics (`fuzz-regressions/*/name-*`) were open; they were fixed in `resolve_name`.
pub const KNOWN: &[(&str, &str)] = &[];

thread_local! {
    static KNOWN_HIT: Cell<bool> = const { Cell::new(false) };
}

fn is_known(info: &PanicHookInfo<'_>) -> bool {
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
        .unwrap_or_default();
    let candidates: Vec<&str> = KNOWN
        .iter()
        .filter(|(_, text)| message.contains(text))
        .map(|(file, _)| *file)
        .collect();
    if candidates.is_empty() {
        return false;
    }
    if let Some(location) = info.location() {
        if candidates
            .iter()
            .any(|file| location.file().ends_with(file))
        {
            return true;
        }
    }
    // A panic raised inside `core` (`str::split_at`): the frame that matters is a caller.
    let backtrace = std::backtrace::Backtrace::force_capture().to_string();
    candidates.iter().any(|file| backtrace.contains(file))
}

fn skip_known() -> bool {
    static SKIP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SKIP.get_or_init(|| std::env::var_os("FUZZ_SKIP_KNOWN").is_some())
}

/// Runs one input. With `FUZZ_SKIP_KNOWN` set, a known panic ends the input quietly; any
/// other panic (and, without the variable, every panic) is a crash as usual.
pub fn run(test: impl FnOnce()) {
    if !skip_known() {
        test();
        return;
    }
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        // libFuzzer's hook (print and abort) stays in charge of every other panic.
        let crash = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if is_known(info) {
                KNOWN_HIT.with(|hit| hit.set(true));
            } else {
                crash(info);
            }
        }));
    });
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(test)) {
        if !KNOWN_HIT.with(|hit| hit.replace(false)) {
            panic::resume_unwind(payload);
        }
    }
}
