//! Cutting a text into pieces the way a stream may deliver it, for chunking invariance: the one
//! copy of the chunking helpers.
//!
//! Used by the native tests (`tests/common/mod.rs` declares it), the fuzz crate
//! (`fuzz/src/lib.rs` includes it with `#[path]`, and the fuzz checks replayed by
//! `tests/fuzz_regressions.rs` reach it as `crate::chunk`) and the core benchmark
//! (`examples/bench_core.rs`, also with `#[path]`), so it uses nothing but `std`.
//! Every piece boundary falls on a character boundary, and the pieces always concatenate back
//! to the text.

/// splitmix64: a tiny deterministic generator for chunk sizes and cut positions.
pub struct Rng(pub u64);

impl Rng {
    /// The next pseudo-random number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..below` (`below` > 0).
    pub fn below(&mut self, below: usize) -> usize {
        (self.next_u64() % below as u64) as usize
    }
}

/// A 64-bit linear congruential generator: the sequence the parser goldens, the `call_parser`
/// fuzz target (its recorded regressions) and the core benchmark were written with, kept so that
/// they still cut their inputs where they did.
pub struct Lcg(pub u64);

impl Lcg {
    /// A number in `0..below` (`below` > 0).
    pub fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below
    }
}

/// Every character boundary of `text`, from 0 to `text.len()` included: where a text can be
/// split in two (the ends give an empty piece).
pub fn boundaries(text: &str) -> Vec<usize> {
    (0..=text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect()
}

/// Pieces whose sizes in bytes `size` gives one after the other (a size below 1 counts as 1),
/// each piece's end moved forward to a character boundary: no piece is empty.
pub fn sized(text: &str, mut size: impl FnMut() -> usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size().max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

/// Pieces of `size` bytes (at least 1), each widened to a character boundary.
pub fn fixed(text: &str, size: usize) -> Vec<&str> {
    sized(text, || size)
}

/// Pieces of 1..=`max` bytes drawn from `rng` (each widened to a character boundary).
pub fn random_sized<'a>(text: &'a str, max: usize, rng: &mut Lcg) -> Vec<&'a str> {
    sized(text, || 1 + rng.next(max.max(1)))
}

/// The text cut at the given byte positions, each moved forward to a character boundary.
/// Positions may repeat (an empty piece) and need not be sorted (they are sorted here).
pub fn cut_at<'a>(text: &'a str, positions: &[usize]) -> Vec<&'a str> {
    let mut at: Vec<usize> = positions
        .iter()
        .map(|&p| {
            let mut p = p.min(text.len());
            while !text.is_char_boundary(p) {
                p += 1;
            }
            p
        })
        .collect();
    at.sort_unstable();
    let mut out = Vec::with_capacity(at.len() + 1);
    let mut start = 0;
    for p in at {
        out.push(&text[start..p]);
        start = p;
    }
    out.push(&text[start..]);
    out
}

/// Pieces of `size` bytes (fixed) or of pseudo-random sizes in `0..=size` (empty pieces
/// included), widened to character boundaries.
pub fn pieces(text: &str, size: usize, random: bool, seed: u64) -> Vec<&str> {
    let mut rng = Rng(seed);
    let mut positions = Vec::new();
    let mut at = 0;
    while at < text.len() {
        let step = if random {
            rng.below(size.max(1) + 1)
        } else {
            size.max(1)
        };
        at += step;
        positions.push(at.min(text.len()));
    }
    cut_at(text, &positions)
}

/// One piece per character.
pub fn chars(text: &str) -> Vec<&str> {
    text.char_indices()
        .map(|(at, c)| &text[at..at + c.len_utf8()])
        .collect()
}

/// The fuzzer's bytes as text: the valid UTF-8 prefix when `prefix`, else lossy.
pub fn text(bytes: &[u8], prefix: bool) -> String {
    if prefix {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.to_owned(),
            Err(e) => String::from_utf8_lossy(&bytes[..e.valid_up_to()]).into_owned(),
        }
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

/// Panics at the first difference of two sequences, showing it.
pub fn assert_same<T: PartialEq + std::fmt::Debug>(whole: &[T], chunked: &[T], what: &str) {
    if whole == chunked {
        return;
    }
    let at = whole
        .iter()
        .zip(chunked)
        .position(|(a, b)| a != b)
        .unwrap_or(whole.len().min(chunked.len()));
    panic!(
        "chunking changed the {what} at index {at} (whole has {}, chunked has {}):\n  whole:   {:?}\n  chunked: {:?}",
        whole.len(),
        chunked.len(),
        whole.get(at),
        chunked.get(at)
    );
}
