//! The comparison with a golden notebook: its properties over generated notebook
//! pairs, snapshots of what it reports, the settings it refuses, and nbval's cell
//! markers.

use nbv_core::api::{ComparisonConfig, ComparisonStrategy};
use nbv_core::compare::Settings;
use proptest::prelude::*;
use serde_json::{Value, json};

mod nbval;
mod outcome;
mod properties;
mod samples;
mod settings;
mod snapshots;

/// A piece of output text, rendered with noise.
#[derive(Clone, Debug)]
enum Piece {
    Word(String),
    /// A measured number: noise may move it.
    Float(f64),
    /// A timestamp: it differs between runs.
    Timestamp(u32),
    /// An object address: it differs between runs.
    Address(u64),
    /// Whitespace: a run may lay it out otherwise.
    Space(String),
}

/// One output of a code cell.
#[derive(Clone, Debug)]
enum Output {
    Stream {
        stderr: bool,
        text: Vec<Piece>,
        split: bool,
    },
    Result {
        text: Vec<Piece>,
        png: Option<String>,
    },
    Display {
        png: String,
        html: Option<Vec<Piece>>,
    },
    Error {
        ename: String,
        evalue: Vec<Piece>,
    },
}

#[derive(Clone, Debug)]
enum Cell {
    Markdown(String),
    Code {
        count: Option<u32>,
        outputs: Vec<Output>,
    },
}

/// How a run differs from the golden run.
#[derive(Clone, Debug)]
struct Noise {
    /// Relative change of every number.
    float: f64,
    /// Seed of the timestamps and addresses of this run.
    seed: u32,
    /// Whether whitespace runs change.
    spacing: bool,
    /// Whether execution counts shift.
    recount: bool,
}

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,8}",
        Just("accuracy:".to_owned()),
        Just("loss=".to_owned()),
        Just("took".to_owned()),
        Just("ms".to_owned()),
        Just("run-ab12".to_owned()),
        Just("Epoch 1/3".to_owned()),
        Just("é€".to_owned()),
        "[\\x01-\\x1f]{1,2}",
    ]
}

fn piece() -> impl Strategy<Value = Piece> {
    prop_oneof![
        4 => word().prop_map(Piece::Word),
        3 => prop_oneof![0.0..1.0f64, 1.0..1e6f64, Just(0.0), Just(42.0)].prop_map(Piece::Float),
        1 => any::<u32>().prop_map(Piece::Timestamp),
        1 => any::<u64>().prop_map(Piece::Address),
        2 => prop_oneof![Just(" "), Just("  "), Just("\n"), Just("\t"), Just(" \n ")]
            .prop_map(|s| Piece::Space(s.to_owned())),
    ]
}

fn text() -> impl Strategy<Value = Vec<Piece>> {
    proptest::collection::vec(piece(), 0..12)
}

fn png() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk".to_owned()),
        Just("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk\n+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==\n".to_owned()),
    ]
}

fn output() -> impl Strategy<Value = Output> {
    prop_oneof![
        4 => (any::<bool>(), text(), any::<bool>())
            .prop_map(|(stderr, text, split)| Output::Stream { stderr, text, split }),
        2 => (text(), proptest::option::of(png())).prop_map(|(text, png)| Output::Result { text, png }),
        1 => (png(), proptest::option::of(text())).prop_map(|(png, html)| Output::Display { png, html }),
        1 => ("[A-Z][a-z]{2,8}Error", text()).prop_map(|(ename, evalue)| Output::Error { ename, evalue }),
    ]
}

fn cell() -> impl Strategy<Value = Cell> {
    prop_oneof![
        1 => "[ -~]{0,20}".prop_map(Cell::Markdown),
        4 => (proptest::option::of(1u32..30), proptest::collection::vec(output(), 0..4))
            .prop_map(|(count, outputs)| Cell::Code { count, outputs }),
    ]
}

fn cells() -> impl Strategy<Value = Vec<Cell>> {
    proptest::collection::vec(cell(), 0..8)
}

fn noise() -> impl Strategy<Value = Noise> {
    (
        prop_oneof![Just(0.0), Just(1e-9), Just(1e-5), Just(1e-3), Just(0.2)],
        any::<u32>(),
        any::<bool>(),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(float, seed, spacing, recount)| Noise {
            float,
            seed,
            spacing,
            recount,
        })
}

fn render_text(pieces: &[Piece], noise: &Noise) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            Piece::Word(w) => out.push_str(w),
            Piece::Float(x) => out.push_str(&format!("{}", x * (1.0 + noise.float))),
            Piece::Timestamp(t) => {
                let t = t.wrapping_add(noise.seed);
                out.push_str(&match t % 3 {
                    0 => format!(
                        "2026-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                        1 + t % 12,
                        1 + t % 28,
                        t % 24,
                        t % 60,
                        (t / 7) % 60,
                        t % 1000
                    ),
                    1 => format!(
                        "2026-{:02}-{:02} {:02}:{:02}:{:02}",
                        1 + t % 12,
                        1 + t % 28,
                        t % 24,
                        t % 60,
                        t % 59
                    ),
                    _ => format!("{:02}:{:02}:{:02}", t % 24, t % 60, (t / 3) % 60),
                });
            }
            Piece::Address(a) => {
                let a = a.wrapping_add(u64::from(noise.seed)) | 0x7f00_0000_0000;
                out.push_str(&format!("<object at 0x{a:x}>"));
            }
            Piece::Space(s) if noise.spacing => out.push_str(&s.replace(' ', "   ")),
            Piece::Space(s) => out.push_str(s),
        }
    }
    out
}

/// nbformat's multiline string, as a list of lines.
fn lines(text: &str) -> Value {
    let mut parts = Vec::new();
    let mut rest = text;
    while let Some(end) = rest.find('\n') {
        parts.push(Value::String(rest[..=end].to_owned()));
        rest = &rest[end + 1..];
    }
    if !rest.is_empty() {
        parts.push(Value::String(rest.to_owned()));
    }
    Value::Array(parts)
}

fn render_output(output: &Output, count: Option<u32>, noise: &Noise) -> Vec<Value> {
    match output {
        Output::Stream {
            stderr,
            text,
            split,
        } => {
            let name = if *stderr { "stderr" } else { "stdout" };
            let text = render_text(text, noise);
            let cut = text
                .char_indices()
                .nth(text.chars().count() / 2)
                .map_or(0, |(i, _)| i);
            if *split && cut > 0 {
                vec![
                    json!({"output_type": "stream", "name": name, "text": &text[..cut]}),
                    json!({"output_type": "stream", "name": name, "text": lines(&text[cut..])}),
                ]
            } else {
                vec![json!({"output_type": "stream", "name": name, "text": lines(&text)})]
            }
        }
        Output::Result { text, png } => {
            let mut data = json!({"text/plain": lines(&render_text(text, noise))});
            if let Some(png) = png {
                data["image/png"] = json!(png);
            }
            vec![
                json!({"output_type": "execute_result", "execution_count": count, "metadata": {}, "data": data}),
            ]
        }
        Output::Display { png, html } => {
            let mut data =
                json!({"image/png": png, "text/plain": "<Figure size 640x480 with 1 Axes>"});
            if let Some(html) = html {
                data["text/html"] = lines(&render_text(html, noise));
            }
            vec![json!({"output_type": "display_data", "metadata": {}, "data": data})]
        }
        Output::Error { ename, evalue } => vec![json!({
            "output_type": "error", "ename": ename, "evalue": render_text(evalue, noise),
            "traceback": [format!("\u{1b}[0;31m{ename}\u{1b}[0m Traceback (seed {})", noise.seed)]
        })],
    }
}

/// The notebook `cells` render to in a run with `noise`.
fn render(cells: &[Cell], noise: &Noise) -> Value {
    let cells: Vec<Value> = cells
        .iter()
        .map(|cell| match cell {
            Cell::Markdown(text) => json!({"cell_type": "markdown", "metadata": {}, "source": text}),
            Cell::Code { count, outputs } => {
                let count = count.map(|c| if noise.recount { c + 1 } else { c });
                let outputs: Vec<Value> = outputs
                    .iter()
                    .flat_map(|o| render_output(o, count, noise))
                    .collect();
                json!({"cell_type": "code", "execution_count": count, "metadata": {"papermill": {"duration": 0.1}},
                       "outputs": outputs, "source": "print(1)"})
            }
        })
        .collect();
    json!({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
}

/// Custom patterns in the accepted subset, as users write them.
const PATTERNS: [&str; 5] = [
    r"took \d+ms",
    r"run-[0-9a-f]{4}",
    r"\d+\.\d+s",
    r"(?:Epoch|Step) \d+/\d+",
    r"[A-Z][a-z]{2} +\d{1,2}",
];

fn settings() -> impl Strategy<Value = Settings> {
    let strategy = prop_oneof![
        Just(ComparisonStrategy::Exact),
        Just(ComparisonStrategy::Normalized)
    ];
    let tolerance = prop_oneof![
        Just("0"),
        Just("0.000001"),
        Just("0.0001"),
        Just("0.01"),
        Just("0.5")
    ];
    let ignored = proptest::sample::subsequence(
        vec![
            "image/png",
            "stream",
            "error",
            "display_data",
            "image/*",
            "text/html",
        ],
        0..3,
    );
    let patterns = proptest::sample::subsequence(PATTERNS.to_vec(), 0..3);
    (
        strategy,
        tolerance,
        any::<bool>(),
        any::<bool>(),
        ignored,
        patterns,
    )
        .prop_map(
            |(strategy, tolerance, timestamps, counts, ignored, patterns)| {
                let config = ComparisonConfig {
                    strategy: Some(strategy),
                    floating_point_tolerance: Some(tolerance.to_owned()),
                    ignore_timestamps: Some(timestamps),
                    ignore_execution_count: Some(counts),
                    ignore_output_types: Some(ignored.into_iter().map(str::to_owned).collect()),
                    custom_timestamp_patterns: Some(
                        patterns.into_iter().map(str::to_owned).collect(),
                    ),
                };
                Settings::resolve(Some(&config), None).expect("valid settings")
            },
        )
}

/// An edit of the run's cells: a cell dropped or added.
fn edit() -> impl Strategy<Value = Option<(bool, usize, Cell)>> {
    proptest::option::weighted(0.2, (any::<bool>(), any::<usize>(), cell()))
}

fn apply(cells: &[Cell], edit: &Option<(bool, usize, Cell)>) -> Vec<Cell> {
    let mut cells = cells.to_vec();
    match edit {
        Some((true, at, _)) if !cells.is_empty() => {
            let at = at % cells.len();
            cells.remove(at);
        }
        Some((_, at, cell)) => cells.insert(at % (cells.len() + 1), cell.clone()),
        None => {}
    }
    cells
}

/// A golden notebook and a run of it: noise, and sometimes a cell more or less.
fn pair() -> impl Strategy<Value = (Value, Value)> {
    (cells(), noise(), noise(), edit()).prop_map(|(cells, golden, run, edit)| {
        (render(&apply(&cells, &edit), &run), render(&cells, &golden))
    })
}
