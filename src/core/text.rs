//! Characters that change what a reader sees without showing themselves: the one table behind
//! both the data wrapper (which drops them from untrusted text, `run::wrap_as_data`) and the
//! confirmation text (which shows them escaped, `confirm`).
//!
//! Invariant: one list; each user adds only what its own reader needs (controls, odd spaces).

/// Whether `c` shows as nothing, or reorders or joins what is shown around it: the soft
/// hyphen, prepended and other format characters, bidi marks, overrides and isolates,
/// zero-width characters and joiners, word joiners and invisible operators, fillers, variation
/// selectors, the combining grapheme joiner, interlinear annotation marks and tag characters.
/// Controls, spaces and line separators are the caller's choice.
pub fn is_invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0xAD | 0x34F
            | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

#[cfg(test)]
mod tests {
    use super::is_invisible;

    #[test]
    fn format_characters_are_invisible_and_text_is_not() {
        for c in [
            '\u{AD}',
            '\u{200B}',
            '\u{202E}',
            '\u{2066}',
            '\u{FEFF}',
            '\u{E0041}',
            '\u{600}',
        ] {
            assert!(is_invisible(c), "{:04X}", u32::from(c));
        }
        for c in ['a', ' ', '<', '\n', '\u{E9}', '\u{4E2D}', '\u{2028}'] {
            assert!(!is_invisible(c), "{:04X}", u32::from(c));
        }
    }
}
