//! Throughput of the streaming call parser and of a whole step (parser, repair, AG-UI events),
//! and the latency of repair, on deterministic inputs. Prints numbers and whether the project's
//! targets are met; it never fails on a number.
//!
//! ```text
//! cargo run --release --example bench_core
//! ```
//!
//! Targets: the parser >= 100 MB/s natively; the output fed in 1–8 byte chunks takes <= 3x the
//! time of the output fed whole; a repair that needs no reask takes <= 50 µs (median).

// The chunking helpers the tests and the fuzz targets share.
#[allow(dead_code)]
#[path = "../tests/common/chunk.rs"]
mod chunk;

use std::hint::black_box;
use std::rc::Rc;
use std::time::{Duration, Instant};

use webmcp_host::core::parse::CallParser;
use webmcp_host::core::repair::{repair_body, Step};
use webmcp_host::core::stream::parse_run;
use webmcp_host::core::toolset::ToolSet;

const TOOLS_JSON: &str = include_str!("../tests/golden/tools.json");

/// Size of the model output the throughput figures are measured on.
const OUTPUT_BYTES: usize = 1 << 20;
/// Size of one output in the "many short outputs" figure.
const SHORT_OUTPUT_BYTES: usize = 4 << 10;
const REPEATS: usize = 7;
const REPAIRS: usize = 20_000;

const TARGET_PARSER_MBPS: f64 = 100.0;
const TARGET_CHUNKED_RATIO: f64 = 3.0;
const TARGET_REPAIR_MEDIAN_US: f64 = 50.0;

/// Prose between calls: markdown, code spans, a `<` and a fence that are not calls, non-ASCII.
const PROSE: [&str; 4] = [
    "Let me look that up for you. The forecast service is usually quick, and I will compare \
     the results with what you asked for earlier: if a < b then the first city is colder. \
     Here is the plan:\n\n1. Check the weather.\n2. Search the docs for `streaming`.\n3. Report.\n\n",
    "The documentation says the parser is **streaming**: it never waits for the whole output. \
     A code block for reference:\n\n```rust\nlet x = vec![1, 2, 3];\nprintln!(\"{x:?}\");\n```\n\n\
     That is all we need — naïve café prices in Zürich are high, by the way. ",
    "Some HTML the user pasted: <div class=\"note\"><b>Note</b></div> and an email \
     <ann@example.com>. Tags like <tool> or <tool_cal> are not calls, nor is ```tool_calling. \
     Moving on to the next step now; I will keep the answer short and to the point.\n",
    "Résumé of findings so far: two lookups returned data, one needed a retry. The totals \
     are 12 + 30 = 42, which matches the spreadsheet. Next, I will send the summary by email \
     to the team so that everyone has the same numbers before the meeting tomorrow.\n",
];

/// Calls, as models write them; most need a repair of some kind.
const CALLS: [&str; 8] = [
    // clean, tags
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\", \"days\": 3}}\n</tool_call>\n",
    // clean, fence
    "```tool_call\n{\"name\": \"search_docs\", \"arguments\": {\"query\": \"streaming\", \"tags\": [\"rust\"]}}\n```\n",
    // name case
    "<tool_call>{\"name\": \"GetWeather\", \"arguments\": {\"city\": \"Bergen\"}}</tool_call>\n",
    // coerce: numeric string, lone value to array
    "```tool_call json\n{\"name\": \"search_docs\", \"arguments\": {\"query\": \"auth\", \"limit\": \"3\", \"tags\": \"security\"}}\n```\n",
    // arguments as a JSON string
    "<tool_call>{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"notes/today.md\\\"}\"}</tool_call>\n",
    // single quotes and a trailing comma (jsonrepair)
    "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Lima',}}</tool_call>\n",
    // namespace prefix and a boolean as a string
    "<tool_call>{\"name\": \"functions.send_email\", \"arguments\": {\"to\": [\"ann@example.com\"], \"subject\": \"Totals\", \"body\": \"42\", \"urgent\": \"false\"}}</tool_call>\n",
    // clean, no arguments
    "<tool_call>{\"name\": \"current_time\", \"arguments\": {}}</tool_call>\n",
];

/// A deterministic model output of at least `bytes` bytes: prose and calls in turn, starting
/// at the `first` mix.
fn model_output(first: usize, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 1024);
    let mut i = first;
    while out.len() < bytes {
        out.push_str(PROSE[i % PROSE.len()]);
        out.push_str(PROSE[(i + 1) % PROSE.len()]);
        out.push_str(CALLS[i % CALLS.len()]);
        i += 1;
    }
    out
}

/// `input` in chunks of 1–8 bytes (widened to a char boundary), as the parser goldens cut theirs.
fn chunks(input: &str, seed: u64) -> Vec<&str> {
    chunk::random_sized(input, 8, &mut chunk::Lcg(seed))
}

fn parser_only(chunks: &[&str]) {
    let mut parser = CallParser::new();
    for chunk in chunks {
        black_box(parser.push(chunk));
    }
    black_box(parser.finish(false));
}

fn step(tools: &Rc<ToolSet>, chunks: &[&str]) {
    black_box(parse_run(tools, chunks.iter().copied(), false));
}

/// Times `run` `REPEATS` times after one warm-up run; sorted.
fn times(mut run: impl FnMut()) -> Vec<Duration> {
    run();
    let mut times: Vec<Duration> = (0..REPEATS)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

fn median(sorted: &[Duration]) -> Duration {
    sorted[sorted.len() / 2]
}

fn mbps(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

/// Prints one throughput line; returns the median time.
fn throughput(label: &str, bytes: usize, sorted: &[Duration]) -> Duration {
    let slowest = sorted[sorted.len() - 1];
    println!(
        "{label:<34} {:>8.1} MB/s (median of {}; min {:.1})",
        mbps(bytes, median(sorted)),
        sorted.len(),
        mbps(bytes, slowest)
    );
    median(sorted)
}

fn verdict(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

/// The kinds of repair the latency figure mixes: each needs no reask.
const REPAIR_KINDS: [(&str, &str, Option<Step>); 4] = [
    (
        "clean",
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}"#,
        None,
    ),
    (
        "name case",
        r#"{"name": "GetWeather", "arguments": {"city": "Oslo", "days": 3}}"#,
        Some(Step::Name),
    ),
    (
        "coerce",
        r#"{"name": "get_weather", "arguments": {"city": "Oslo", "days": "3"}}"#,
        Some(Step::Coerce),
    ),
    (
        "string arguments",
        r#"{"name": "get_weather", "arguments": "{\"city\": \"Oslo\", \"days\": 3}"}"#,
        Some(Step::Json),
    ),
];

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[at]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn main() {
    let (tools, problems) = ToolSet::from_json_text(TOOLS_JSON).expect("the golden tools parse");
    assert!(problems.is_empty(), "{problems:?}");
    let tools = Rc::new(tools);

    let output = model_output(0, OUTPUT_BYTES);
    let whole = [output.as_str()];
    let chunked = chunks(&output, 42);
    let calls = output.matches("<tool_call>").count() + output.matches("```tool_call").count();
    println!(
        "model output: {} bytes, {} calls ({} kinds), {} chunks of 1-8 bytes",
        output.len(),
        calls,
        CALLS.len(),
        chunked.len()
    );
    if cfg!(debug_assertions) {
        println!("(debug build: run with --release for meaningful numbers)");
    }
    println!();

    // Parser alone.
    let parser_whole = times(|| parser_only(&whole));
    let parser_chunked = times(|| parser_only(&chunked));
    let pw = throughput("parser (whole)", output.len(), &parser_whole);
    let pc = throughput("parser (1-8 byte chunks)", output.len(), &parser_chunked);
    let parser_ratio = pc.as_secs_f64() / pw.as_secs_f64();
    println!("{:<34} {parser_ratio:>8.2}x", "parser chunked/whole time");

    // Parser, repair and events: one output of 1 MB.
    let step_whole = times(|| step(&tools, &whole));
    let step_chunked = times(|| step(&tools, &chunked));
    let sw = throughput("parse_run (whole)", output.len(), &step_whole);
    let sc = throughput("parse_run (1-8 byte chunks)", output.len(), &step_chunked);
    let step_ratio = sc.as_secs_f64() / sw.as_secs_f64();
    println!("{:<34} {step_ratio:>8.2}x", "parse_run chunked/whole time");

    // The same bytes as many short outputs (one step each), as a run sees them.
    let short: Vec<String> = (0..OUTPUT_BYTES / SHORT_OUTPUT_BYTES)
        .map(|i| model_output(i, SHORT_OUTPUT_BYTES))
        .collect();
    let short_bytes: usize = short.iter().map(String::len).sum();
    let short_chunked: Vec<Vec<&str>> = short
        .iter()
        .enumerate()
        .map(|(i, s)| chunks(s, i as u64))
        .collect();
    let many_whole = times(|| {
        for s in &short {
            step(&tools, &[s.as_str()]);
        }
    });
    let many_chunked = times(|| {
        for c in &short_chunked {
            step(&tools, c);
        }
    });
    let label = format!("parse_run ({} outputs of ~4 KB)", short.len());
    let mw = throughput(&label, short_bytes, &many_whole);
    let label = format!("parse_run ({} x 4 KB, chunked)", short.len());
    let mc = throughput(&label, short_bytes, &many_chunked);
    println!(
        "{:<34} {:>8.2}x",
        "parse_run 4 KB chunked/whole time",
        mc.as_secs_f64() / mw.as_secs_f64()
    );
    println!();

    // Repair latency.
    for (kind, body, step) in REPAIR_KINDS {
        match repair_body(body, &tools) {
            Ok(repaired) => {
                let steps: Vec<Step> = repaired.fixes.iter().map(|f| f.step).collect();
                if steps.first().copied() != step {
                    println!("note: `{kind}` repaired with fixes {steps:?}, expected {step:?}");
                }
            }
            Err(error) => println!("note: `{kind}` did not repair: {}", error.error),
        }
    }
    let mut per_kind: Vec<Vec<Duration>> = vec![Vec::with_capacity(REPAIRS); REPAIR_KINDS.len()];
    for i in 0..REPAIRS / 10 {
        black_box(repair_body(REPAIR_KINDS[i % 4].1, &tools).ok());
    }
    for i in 0..REPAIRS {
        let kind = i % REPAIR_KINDS.len();
        let body = black_box(REPAIR_KINDS[kind].1);
        let start = Instant::now();
        let result = repair_body(body, &tools);
        let elapsed = start.elapsed();
        black_box(result.ok());
        per_kind[kind].push(elapsed);
    }
    let mut all: Vec<Duration> = per_kind.iter().flatten().copied().collect();
    all.sort();
    println!(
        "{:<34} {:>8.1} µs median, {:.1} µs p99 ({} repairs)",
        "repair (mix)",
        micros(median(&all)),
        micros(percentile(&all, 0.99)),
        all.len()
    );
    for (kind, times) in REPAIR_KINDS.iter().zip(&mut per_kind) {
        times.sort();
        println!(
            "{:<34} {:>8.1} µs median, {:.1} µs p99 ({} repairs)",
            format!("repair ({})", kind.0),
            micros(median(times)),
            micros(percentile(times, 0.99)),
            times.len()
        );
    }
    let repair_median = micros(median(&all));
    println!();

    let parser_mbps = mbps(output.len(), pw);
    let targets = [
        (
            format!("target: parser >= {TARGET_PARSER_MBPS} MB/s (whole)"),
            parser_mbps >= TARGET_PARSER_MBPS,
            format!("{parser_mbps:.1} MB/s"),
        ),
        (
            format!("target: parser chunked <= {TARGET_CHUNKED_RATIO}x whole"),
            parser_ratio <= TARGET_CHUNKED_RATIO,
            format!("{parser_ratio:.2}x"),
        ),
        (
            format!("target: parse_run chunked <= {TARGET_CHUNKED_RATIO}x whole"),
            step_ratio <= TARGET_CHUNKED_RATIO,
            format!("{step_ratio:.2}x"),
        ),
        (
            format!("target: repair median <= {TARGET_REPAIR_MEDIAN_US} µs"),
            repair_median <= TARGET_REPAIR_MEDIAN_US,
            format!("{repair_median:.1} µs"),
        ),
    ];
    for (label, met, value) in targets {
        println!("{label:<42} {} ({value})", verdict(met));
    }
}
