//! Golden files for `parse`: each `tests/golden/parse/NAME.txt` is one model output (cut at the
//! token limit when NAME ends in `-cut`), and `NAME.events.jsonl` the AG-UI events of its run.
//! Every golden must also hold for every split of its input into chunks: every byte boundary
//! (two and three pieces) for short inputs, and random 1–8 byte chunkings for all.
//! `UPDATE_EXPECT=1 cargo test --test parse_golden` rewrites the expected files.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use std::path::PathBuf;

use common::chunk::{boundaries, random_sized, Lcg};
use webmcp_host::core::agui::Event;
use webmcp_host::core::stream::parse_run;

fn lines(events: &[Event]) -> String {
    events.iter().map(|e| e.to_json_line() + "\n").collect()
}

/// The goldens are shared out over the machine's cores (each split of each input is a whole
/// run of the parser: tens of thousands of runs, 16 s on one core of a debug build).
#[test]
fn goldens_hold_for_every_chunking() {
    let inputs: Vec<PathBuf> = common::files(&common::golden("parse"), Some("txt"));
    assert!(
        inputs.len() >= 20,
        "expected the golden corpus, found {}",
        inputs.len()
    );
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let share: Vec<&PathBuf> = inputs.iter().skip(w).step_by(workers).collect();
                scope.spawn(move || check_goldens(&share))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a golden check panicked"))
            .collect()
    });
    failures.truncate(20);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The failures of `inputs`' goldens, whole and chunked.
fn check_goldens(inputs: &[&PathBuf]) -> Vec<String> {
    let tools = std::rc::Rc::new(common::tool_set(&common::golden("tools.json")));
    let mut failures = Vec::new();
    for path in inputs {
        let input = std::fs::read_to_string(path).unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap().to_owned();
        let cut = stem.ends_with("-cut");
        let whole = parse_run(&tools, [input.as_str()], cut);
        let expected_path = path.with_extension("events.jsonl");
        if !common::expect(&expected_path, &lines(&whole)) {
            failures.push(format!(
                "{stem}: events differ from {}",
                expected_path.display()
            ));
            continue;
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
            if parse_run(&tools, random_sized(&input, 8, &mut rng), cut) != whole {
                failures.push(format!("{stem}: a random chunking differs"));
                break;
            }
        }
    }
    failures
}
