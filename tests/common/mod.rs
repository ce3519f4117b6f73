//! Helpers shared by the integration tests of `tests/`: where the golden data lives, listing its
//! files, tools files as tool sets, expected files compared (or rewritten with
//! `UPDATE_EXPECT=1`), and `chunk`, the chunking helpers (also used by the fuzz crate and the
//! benchmark, see its own doc). Each test file takes them with `mod common;`; no test uses them
//! all, hence `dead_code` allowed. Helpers panic with the path on I/O errors: only tests call them.
#![allow(dead_code)]

pub mod chunk;
pub mod corpus;
pub mod turns;

use std::path::{Path, PathBuf};

use webmcp_host::core::toolset::ToolSet;

/// The repository's root (the crate's manifest directory).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A path under `tests/golden/` (`""` for the directory itself).
pub fn golden(path: &str) -> PathBuf {
    root().join("tests/golden").join(path)
}

/// A text file's content; panics naming the file when it cannot be read.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files of `dir` (not its directories), sorted; only those whose extension is `ext` when
/// given. A missing directory has none.
pub fn files(dir: &Path, ext: Option<&str>) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .filter(|p| ext.is_none_or(|ext| p.extension().is_some_and(|x| x == ext)))
        .collect();
    out.sort();
    out
}

/// The tools file at `path` as a tool set; panics when it does not parse or an entry is
/// skipped (a golden tools file has no bad entry).
pub fn tool_set(path: &Path) -> ToolSet {
    let (set, problems) = ToolSet::from_json_text(&read(path))
        .unwrap_or_else(|e| panic!("{}: {e:?}", path.display()));
    assert!(problems.is_empty(), "{}: {problems:?}", path.display());
    set
}

/// Whether expected files are being rewritten (`UPDATE_EXPECT` set) rather than compared.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Compares `actual` with the expected file at `path` (a missing file is empty), or writes it
/// when `UPDATE_EXPECT` is set. `false` when they differ.
pub fn expect(path: &Path, actual: &str) -> bool {
    if updating() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        }
        std::fs::write(path, actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return true;
    }
    std::fs::read_to_string(path).unwrap_or_default() == actual
}
