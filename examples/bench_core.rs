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
//!
//! The pipeline (parser, repair, AG-UI events and their JSON lines, as `webmcp-host parse`
//! prints them) on one long output with a call every ~3 KB (about 350 calls in 1 MB, 1,400 in
//! 4 MB, most of them repaired, spread through): >= 40 MB/s on 1 MB whole, and 4 MB takes
//! <= 4.5x the time of 1 MB (linear in the size and the number of calls), whole and in 16-byte
//! chunks; fed whole, no slower than in 16-byte chunks (1 MB and 4 MB, run in turn). With
//! `BENCH_PIPELINE_OUTPUTS=DIR` it also writes both outputs there, for `make bench` to feed
//! `webmcp-host parse` whole and with `--chunk 16`. Each figure is the median of `PIPELINE_REPEATS` runs, printed with min and max and
//! beside its budget and the figure measured before the pipeline was made linear.

// The chunking helpers the tests and the fuzz targets share.
#[allow(dead_code)]
#[path = "../tests/common/chunk.rs"]
mod chunk;

use std::hint::black_box;
use std::io::Write;
use std::rc::Rc;
use std::time::{Duration, Instant};

use webmcp_host::core::parse::CallParser;
use webmcp_host::core::repair::{repair_body, Step};
use webmcp_host::core::stream::{parse_run, parse_run_each};
use webmcp_host::core::toolset::ToolSet;

const TOOLS_JSON: &str = include_str!("../tests/golden/tools.json");

/// Size of the model output the throughput figures are measured on.
const OUTPUT_BYTES: usize = 1 << 20;
/// Size of one output in the "many short outputs" figure.
const SHORT_OUTPUT_BYTES: usize = 4 << 10;
const REPEATS: usize = 7;
const REPAIRS: usize = 20_000;

const TARGET_PARSER_MBPS: f64 = 100.0;
const PIPELINE_REPEATS: usize = 15;
/// Prose pieces between two calls of the pipeline output (a call every ~3 KB).
const PROSE_PER_CALL: usize = 11;
const TARGET_PIPELINE_MBPS: f64 = 40.0;
const TARGET_PIPELINE_RATIO: f64 = 4.5;
/// The figures before the pipeline was made linear, on the same inputs (a loaded 2-core
/// machine; the pipeline's through `webmcp-host parse`): the parser alone on 1 MB, the
/// pipeline on 1 MB whole, and the 4 MB / 1 MB time whole and in 16-byte chunks.
const BEFORE_PARSER_MBPS: f64 = 91.0;
const BEFORE_PIPELINE_MBPS: f64 = 1.1;
const BEFORE_RATIO_WHOLE: f64 = 30.1;
const BEFORE_RATIO_CHUNKED: f64 = 21.3;
const TARGET_CHUNKED_RATIO: f64 = 3.0;
/// The pipeline fed whole takes at most the time of the same output in 16-byte chunks.
const TARGET_WHOLE_VS_CHUNKED: f64 = 1.0;
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

/// A long output with a call every ~3 KB: `PROSE_PER_CALL` prose pieces, then one call, the
/// mix of `CALLS` in turn (six of the eight need a repair).
/// Returns the output and its number of calls.
fn spread_output(bytes: usize) -> (String, usize) {
    let mut out = String::with_capacity(bytes + 4096);
    let mut i = 0;
    while out.len() < bytes {
        for k in 0..PROSE_PER_CALL {
            out.push_str(PROSE[(i + k) % PROSE.len()]);
        }
        out.push_str(CALLS[i % CALLS.len()]);
        i += 1;
    }
    (out, i)
}

/// The pipeline as `webmcp-host parse` runs it: the events of the run, each as a JSON line.
fn pipeline(tools: &Rc<ToolSet>, chunks: &[&str]) -> usize {
    // Written as the CLI writes them to stdout: through a buffer, each event as it is made.
    let mut out = std::io::BufWriter::new(std::io::sink());
    let mut count = 0;
    parse_run_each(tools, chunks.iter().copied(), false, |event| {
        serde_json::to_writer(&mut out, &event).expect("events serialize");
        out.write_all(b"\n").expect("a sink takes anything");
        count += 1;
    });
    black_box(count)
}

/// Times `run` `n` times after one warm-up run; sorted.
fn times_n(n: usize, mut run: impl FnMut()) -> Vec<Duration> {
    run();
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let start = Instant::now();
            run();
            start.elapsed()
        })
        .collect();
    times.sort();
    times
}

/// Times `a` and `b` `n` times each, one right after the other (so that a machine's load
/// weighs on both alike), after one warm-up run of each; both sorted.
fn times_paired(
    n: usize,
    mut a: impl FnMut(),
    mut b: impl FnMut(),
) -> (Vec<Duration>, Vec<Duration>) {
    a();
    b();
    let time = |run: &mut dyn FnMut()| {
        let start = Instant::now();
        run();
        start.elapsed()
    };
    let (mut ta, mut tb): (Vec<Duration>, Vec<Duration>) =
        (0..n).map(|_| (time(&mut a), time(&mut b))).unzip();
    ta.sort();
    tb.sort();
    (ta, tb)
}

/// One figure: its median with min and max, beside its budget and the figure before.
fn figure(label: &str, value: f64, min: f64, max: f64, unit: &str, budget: &str, before: &str) {
    println!(
        "{label:<34} {value:>8.1} {unit} (min {min:.1}, max {max:.1}; budget {budget}; before {before})"
    );
}

/// The MB/s of `bytes` over sorted times: median, min (slowest run), max (fastest run).
fn rates(bytes: usize, sorted: &[Duration]) -> (f64, f64, f64) {
    (
        mbps(bytes, median(sorted)),
        mbps(bytes, sorted[sorted.len() - 1]),
        mbps(bytes, sorted[0]),
    )
}

/// The pipeline figures: phases on 1 MB (where the time goes), then 1 MB and 4 MB, whole and
/// in 16-byte chunks.
fn pipeline_figures(tools: &Rc<ToolSet>) {
    let (one, one_calls) = spread_output(1 << 20);
    let (four, four_calls) = spread_output(4 << 20);
    println!(
        "pipeline outputs: {} bytes with {one_calls} calls, {} bytes with {four_calls} calls \
         (a call every ~3 KB, 6 of every 8 repaired)",
        one.len(),
        four.len(),
    );
    let n = PIPELINE_REPEATS;
    // Where the time goes, on 1 MB whole: the parser, then the events, then their JSON.
    let parser = times_n(n, || parser_only(&[one.as_str()]));
    let events = times_n(n, || step(tools, &[one.as_str()]));
    let (whole, whole4) = times_paired(
        n,
        || {
            pipeline(tools, &[one.as_str()]);
        },
        || {
            pipeline(tools, &[four.as_str()]);
        },
    );
    let (p, pmin, pmax) = rates(one.len(), &parser);
    let parser_budget = format!(">= {TARGET_PARSER_MBPS} MB/s");
    let before = format!("{BEFORE_PARSER_MBPS} MB/s");
    figure(
        "parser alone, 1 MB",
        p,
        pmin,
        pmax,
        "MB/s",
        &parser_budget,
        &before,
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{:<34} parser {:.1} ms, + repair and events {:.1} ms, + JSON lines {:.1} ms (medians)",
        "  phases, 1 MB whole",
        ms(median(&parser)),
        ms(median(&events).saturating_sub(median(&parser))),
        ms(median(&whole).saturating_sub(median(&events)))
    );
    let (w, wmin, wmax) = rates(one.len(), &whole);
    let budget = format!(">= {TARGET_PIPELINE_MBPS} MB/s");
    let before = format!("{BEFORE_PIPELINE_MBPS} MB/s");
    figure(
        "pipeline, 1 MB whole",
        w,
        wmin,
        wmax,
        "MB/s",
        &budget,
        &before,
    );
    let (w4, w4min, w4max) = rates(four.len(), &whole4);
    figure(
        "pipeline, 4 MB whole",
        w4,
        w4min,
        w4max,
        "MB/s",
        "-",
        "0.15 MB/s",
    );
    let one16 = chunk::fixed(&one, 16);
    let four16 = chunk::fixed(&four, 16);
    let (chunked1, chunked4) = times_paired(
        n,
        || {
            pipeline(tools, &one16);
        },
        || {
            pipeline(tools, &four16);
        },
    );
    let (c1, c1min, c1max) = rates(one.len(), &chunked1);
    figure(
        "pipeline, 1 MB in 16 B chunks",
        c1,
        c1min,
        c1max,
        "MB/s",
        "-",
        "1.0 MB/s",
    );
    let (c4, c4min, c4max) = rates(four.len(), &chunked4);
    figure(
        "pipeline, 4 MB in 16 B chunks",
        c4,
        c4min,
        c4max,
        "MB/s",
        "-",
        "0.2 MB/s",
    );
    // The 4 MB / 1 MB time ratio: of the medians, and the worst and best pairings.
    let ratio = |four: &[Duration], one: &[Duration]| {
        let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        (
            r(median(four), median(one)),
            r(four[0], one[one.len() - 1]),
            r(four[four.len() - 1], one[0]),
        )
    };
    let budget = format!("<= {TARGET_PIPELINE_RATIO}x");
    let (r, rmin, rmax) = ratio(&whole4, &whole);
    let before = format!("{BEFORE_RATIO_WHOLE}x");
    figure(
        "pipeline 4 MB / 1 MB time, whole",
        r,
        rmin,
        rmax,
        "x",
        &budget,
        &before,
    );
    let (rc, rcmin, rcmax) = ratio(&chunked4, &chunked1);
    let before = format!("{BEFORE_RATIO_CHUNKED}x");
    figure(
        "  same, in 16 B chunks",
        rc,
        rcmin,
        rcmax,
        "x",
        &budget,
        &before,
    );
    // Whole against chunked, run by run in turn (so that a machine's load weighs on both
    // alike): fed whole must be no slower than fed in 16-byte chunks.
    let whole_vs_chunked = |text: &str, pieces: &[&str]| {
        let (whole, chunked) = times_paired(
            n,
            || {
                pipeline(tools, &[text]);
            },
            || {
                pipeline(tools, pieces);
            },
        );
        let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
        (
            r(median(&whole), median(&chunked)),
            r(whole[0], chunked[chunked.len() - 1]),
            r(whole[whole.len() - 1], chunked[0]),
        )
    };
    let (wc1, wc1min, wc1max) = whole_vs_chunked(&one, &one16);
    figure(
        "pipeline whole / 16 B time, 1 MB",
        wc1,
        wc1min,
        wc1max,
        "x",
        &format!("<= {TARGET_WHOLE_VS_CHUNKED}x"),
        "-",
    );
    let (wc4, wc4min, wc4max) = whole_vs_chunked(&four, &four16);
    figure(
        "  same, 4 MB",
        wc4,
        wc4min,
        wc4max,
        "x",
        &format!("<= {TARGET_WHOLE_VS_CHUNKED}x"),
        "-",
    );
    // The same outputs for `make bench` to feed the CLI's `webmcp-host parse`.
    if let Some(dir) = std::env::var_os("BENCH_PIPELINE_OUTPUTS") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("the outputs' folder");
        std::fs::write(dir.join("pipeline-1mb.txt"), &one).expect("1 MB written");
        std::fs::write(dir.join("pipeline-4mb.txt"), &four).expect("4 MB written");
    }
    println!();
    for (label, met, value) in [
        (
            format!("target: pipeline whole <= {TARGET_WHOLE_VS_CHUNKED}x 16 B chunks (1 MB)"),
            wc1 <= TARGET_WHOLE_VS_CHUNKED,
            format!("{wc1:.2}x"),
        ),
        (
            format!("target: pipeline whole <= {TARGET_WHOLE_VS_CHUNKED}x 16 B chunks (4 MB)"),
            wc4 <= TARGET_WHOLE_VS_CHUNKED,
            format!("{wc4:.2}x"),
        ),
        (
            format!("target: parser alone >= {TARGET_PARSER_MBPS} MB/s (1 MB)"),
            p >= TARGET_PARSER_MBPS,
            format!("{p:.1} MB/s"),
        ),
        (
            format!("target: pipeline >= {TARGET_PIPELINE_MBPS} MB/s (1 MB whole)"),
            w >= TARGET_PIPELINE_MBPS,
            format!("{w:.1} MB/s"),
        ),
        (
            format!("target: pipeline 4 MB <= {TARGET_PIPELINE_RATIO}x 1 MB (whole)"),
            r <= TARGET_PIPELINE_RATIO,
            format!("{r:.2}x"),
        ),
        (
            format!("target: pipeline 4 MB <= {TARGET_PIPELINE_RATIO}x 1 MB (16 B)"),
            rc <= TARGET_PIPELINE_RATIO,
            format!("{rc:.2}x"),
        ),
    ] {
        println!("{label:<42} {} ({value})", verdict(met));
    }
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
    println!();
    pipeline_figures(&tools);
}
