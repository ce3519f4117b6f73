//! What the fuzz targets share: the golden tool set, and a guard that lets a run go on past
//! bugs that are already known and reported (see `KNOWN`), so that fuzzing can look for new
//! ones before those are fixed.

use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe, PanicHookInfo};
use std::sync::Once;

use webmcp_host::core::toolset::ToolSet;

/// The tools the goldens are written against.
pub const TOOLS_JSON: &str = include_str!("../../tests/golden/tools.json");

/// The golden tool set.
pub fn golden_tools() -> ToolSet {
    let (set, problems) = ToolSet::from_json_text(TOOLS_JSON).expect("tools.json parses");
    assert!(problems.is_empty(), "{problems:?}");
    set
}

/// Known panics, as (file the panic is raised from or passes through, text in its message).
/// Each should have an input in `fuzz/regressions/`. They are skipped only when the
/// environment variable `FUZZ_SKIP_KNOWN` is set; by default every panic is a crash. With
/// `FUZZ_KNOWN_LOG` also set, each skipped panic prints where it came from. Remove an entry
/// once its bug is fixed.
///
/// Empty now. It held `("src/core/repair/name.rs", "is not a char boundary")` while the two
/// name-repair panics (`regressions/*-name-*`) were open; they were fixed in `resolve_name`.
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
