//! The tool set the goldens are written against.

use webmcp_host::core::toolset::ToolSet;

/// The tools of `tests/golden/tools.json`.
pub const TOOLS_JSON: &str = include_str!("../../tests/golden/tools.json");

/// The golden tool set.
pub fn golden_tools() -> ToolSet {
    let (set, problems) = ToolSet::from_json_text(TOOLS_JSON).expect("tools.json parses");
    assert!(problems.is_empty(), "{problems:?}");
    set
}
