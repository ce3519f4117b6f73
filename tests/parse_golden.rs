//! Golden files for `parse`: each `tests/golden/parse/NAME.txt` is one model output (cut at the
//! token limit when NAME ends in `-cut`), and `NAME.events.jsonl` the AG-UI events of its run.
//! Every golden must also hold for every split of its input into chunks: every byte boundary
//! (two and three pieces) for short inputs, and random 1–8 byte chunkings for all.
//! `UPDATE_EXPECT=1 cargo test --test parse_golden` rewrites the expected files.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use webmcp_host::core::agui::Event;
use webmcp_host::core::stream::parse_run;
use webmcp_host::core::toolset::ToolSet;

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn tools() -> std::rc::Rc<ToolSet> {
    let text = std::fs::read_to_string(golden_dir().join("tools.json")).unwrap();
    let (set, problems) = ToolSet::from_json_text(&text).unwrap();
    assert!(problems.is_empty(), "{problems:?}");
    std::rc::Rc::new(set)
}

fn lines(events: &[Event]) -> String {
    events.iter().map(|e| e.to_json_line() + "\n").collect()
}

fn boundaries(input: &str) -> Vec<usize> {
    (0..=input.len())
        .filter(|&i| input.is_char_boundary(i))
        .collect()
}

/// A small deterministic generator, so that failures reproduce.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, below: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % below
    }
}

fn random_chunks<'a>(input: &'a str, rng: &mut Lcg) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < input.len() {
        let mut end = (start + 1 + rng.next(8)).min(input.len());
        while !input.is_char_boundary(end) {
            end += 1;
        }
        out.push(&input[start..end]);
        start = end;
    }
    out
}

#[test]
fn goldens_hold_for_every_chunking() {
    let tools = tools();
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(golden_dir().join("parse"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 20,
        "expected the golden corpus, found {}",
        inputs.len()
    );
    let mut failures = Vec::new();
    for path in &inputs {
        let input = std::fs::read_to_string(path).unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let cut = stem.ends_with("-cut");
        let whole = parse_run(&tools, [input.as_str()], cut);
        let expected_path = path.with_extension("events.jsonl");
        if update {
            std::fs::write(&expected_path, lines(&whole)).unwrap();
        } else {
            let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
            if expected != lines(&whole) {
                failures.push(format!(
                    "{stem}: events differ from {}",
                    expected_path.display()
                ));
                continue;
            }
        }
        let bounds = boundaries(&input);
        for &i in &bounds {
            if parse_run(&tools, [&input[..i], &input[i..]], cut) != whole {
                failures.push(format!("{stem}: split at {i} differs"));
            }
            if input.len() <= 200 {
                for &j in bounds.iter().filter(|&&j| j > i) {
                    if parse_run(&tools, [&input[..i], &input[i..j], &input[j..]], cut) != whole {
                        failures.push(format!("{stem}: split at {i},{j} differs"));
                    }
                }
            }
        }
        let mut rng = Lcg(stem.len() as u64 * 7919);
        for _ in 0..200 {
            if parse_run(&tools, random_chunks(&input, &mut rng), cut) != whole {
                failures.push(format!("{stem}: a random chunking differs"));
                break;
            }
        }
    }
    failures.truncate(20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
