//! bench-peers: simdtok's SentencePiece, WordPiece and byte-level BPE encoding against peer
//! libraries in the same process, on the same input, on one thread. Prints Markdown tables (MB/s,
//! ratios, load time and memory, ids that differ from the reference's, the targets of the issues).
//!
//! ```text
//! cargo run --release -p bench-peers -- [--family spm|wordpiece|bpe|all|train|tokbench] [--quick]
//!     [--model NAME]... [--corpus NAME]... [--impls simdtok,spm-cpp,spm-crate,kitoken,tokie,...]
//!     [--passes N] [--data DIR]
//! ```

mod bpe;
mod goldens;
mod measure;
mod peers;
mod pretok;
mod python;
mod report;
mod tokbench;
mod train;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use measure::{median, rss_bytes, time_pass_cpu};
use peers::{Encoder, Family, Impl, ModelSpec};
use report::{Notes, cell_of, find_row, fmt_cell, fmt_mbps, ratio};

/// The corpora, each read line by line (a line without its `\n`, and a `\r` before it, is a text,
/// as `simdtok encode` reads them).
const CORPORA: [&str; 6] = [
    "en_kjv_bible",
    "ja_debian_reference",
    "zh-cn_debian_reference",
    "code_python311_stdlib_sample.py",
    "multi_udhr_all_languages",
    "emoji_unicode15_emoji-test",
];

/// Timed passes of each pre-tokenizer over each 20 MB input (a pass takes 20–50 ms).
const PRETOK_PASSES: usize = 9;

/// The prose that the repeated-character inputs are compared with.
const PROSE: &str = "en_kjv_bible";

/// The pathological inputs: about 1 MB (10^6 bytes) of one character, as one text.
const REPEATS: [(&str, char); 2] = [("repeat-a", 'a'), ("repeat-日", '日')];
const REPEAT_BYTES: usize = 1_000_000;

/// WordPiece's pathological inputs, one text each of about 10^6 bytes: one character repeated
/// (`repeat-a` is one word far over `max_input_chars_per_word`, so `[UNK]` at once), and
/// `words-a99`: words of exactly 100 `a` (the longest word still split into pieces) separated by
/// single spaces, the longest-match search at its longest.
const WP_REPEATS: [(&str, char); 2] = [("repeat-a", 'a'), ("repeat-中", '中')];
const WP_WORDS: (&str, char, usize) = ("words-a99", 'a', 100);

const USAGE: &str = "\
usage: bench-peers [--family spm|wordpiece|bpe|all|train|tokbench] [--quick] [--model NAME]...
                   [--corpus NAME]... [--impls LIST] [--passes N] [--first-runs N] [--data DIR]
                   [--runs N] [--reps N] [--cache DIR] [--cpu N]

  --family F       spm (SentencePiece .model), wordpiece (BERT vocab.txt / tokenizer.json), bpe
                   (tiktoken rank files, GPT-2 encoder.json, BPE tokenizer.json) or all (default:
                   SentencePiece, then WordPiece, then BPE), or train: BPE training against
                   tokenizers' BpeTrainer on 1, 10, 100 MB of English (not part of all; --quick:
                   1 and 10 MB; --passes N runs per cell, default 3), or tokbench: Hugging
                   Face tokbench's protocol (unseen ~10 kB chunks, one pinned CPU, ids hashed)
                   on byte-level and SentencePiece-style BPE models x seven languages, with the
                   Python peers gigatoken and fastokens (not part of all)
  --quick          3 passes, corpora cut to their first 256 KiB (the one-text inputs stay 1 MB,
                   BPE's en-20mb(-docs) stay 20 MB but have one first-pass run)
  --model NAME     only models whose name contains NAME (repeatable)
  --corpus NAME    only inputs whose name contains NAME (repeatable; repeat-a and repeat-日 are
                   the 1 MB repeated-character inputs; WordPiece: repeat-a, repeat-中, words-a99;
                   BPE: repeat-a, repeat-space, repeat-中, random-bytes, and en-20mb and
                   en-20mb-docs, the 20 MB first-pass vs repeated-passes measurement line by line
                   and as documents of 8 KiB; SentencePiece: the same two on the models of the
                   English goals, and ja-20mb, zh-20mb, code-20mb and udhr-20mb: one corpus's
                   lines repeated to 20 MB)
  --impls LIST     comma-separated. SentencePiece: simdtok,spm-cpp,spm-crate,spm-py,kitoken,tokie
                   (simdtok is always run: it is the reference the others are checked against).
                   WordPiece: tokenizers,simdtok-fast,simdtok-linear,kitoken,tokie (simdtok = both
                   simdtok columns; tokenizers is always run: it is the reference).
                   BPE: simdtok,tokenizers-1.0,tiktoken-rs,tokenizers,bpe-openai,kitoken,tokie
                   (simdtok and the references, tiktoken-rs and tokenizers-1.0, always run;
                   tokenizers is 0.23, run only when named)
  --passes N       timed passes per cell (default 5, BPE 3; a warm-up pass that also checks ids
                   comes first)
  --first-runs N   en-20mb(-docs): fresh processes per first-pass figure, the median (default 3;
                   --quick: 1)
  --repeat-limit S skip an implementation on a one-text input when one pass is estimated (from 16
                   and 64 KiB prefixes) to take over S seconds (default 30, BPE 10; --quick: 5)
  --data DIR       shared data (default $SIMDTOK_SHARED_DATA, else ../shared/data beside the
                   workspace)
  tokbench only:
  --impls LIST     simdtok,tokenizers-1.0,tokenizers,tiktoken-rs,bpe-openai,kitoken,tokie,
                   gigatoken,fastokens (default all but kitoken and tokie; simdtok and the
                   references, tokenizers and tiktoken-rs, always run)
  --runs N         times the whole matrix runs; the report gives per-cell medians (default 3)
  --reps N         timed slices per cell, after the warm-up slice (default 5)
  --cache DIR      where scripts/fetch-bench-models.sh and fetch-bench-corpora.sh put the models
                   and corpora that shared data lacks (default $SIMDTOK_BENCH_CACHE, else
                   $HOME/.cache/simdtok-bench)
  --cpu N          the CPU to pin to (default: the one it starts on)";

/// Which kinds of model `--family` selects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Families {
    Spm,
    WordPiece,
    Bpe,
    All,
    /// BPE training (`train.rs`): a family of its own, not part of `All`.
    Train,
    /// Hugging Face tokbench's protocol (`tokbench.rs`): not part of `All` either.
    Tokbench,
}

impl Families {
    fn has(self, family: Family) -> bool {
        match self {
            Families::All => true,
            Families::Spm => family == Family::Spm,
            Families::WordPiece => family == Family::WordPiece,
            Families::Bpe => family == Family::Bpe,
            Families::Train | Families::Tokbench => false,
        }
    }
}

#[derive(Clone)]
struct Options {
    quick: bool,
    family: Families,
    models: Vec<String>,
    corpora: Vec<String>,
    /// SentencePiece implementations, simdtok first.
    impls: Vec<Impl>,
    /// WordPiece implementations, in run order (`tokenizers`, the reference, first).
    wp_impls: Vec<Impl>,
    /// BPE implementations, in table order (each model runs its reference first).
    bpe_impls: Vec<Impl>,
    passes: usize,
    /// BPE: timed passes per cell (fewer than the others' by default: ten models).
    bpe_passes: usize,
    /// Training: runs per configuration and size.
    train_passes: usize,
    /// Timed pass k of a one-text input encodes the text less its last k characters (BPE), so
    /// that no pass is a cache hit of the previous one's whole word.
    vary_one_text: bool,
    /// BPE en-20mb: fresh processes per first-pass figure.
    first_runs: usize,
    data: PathBuf,
    /// Seconds one cell may take before it gets fewer passes.
    cell_budget_s: f64,
    /// The same for BPE (lower: ten models, and the 20 MB text).
    bpe_cell_budget_s: f64,
    /// A repeated-character input estimated to take longer than this per pass is skipped.
    repeat_limit_s: f64,
    /// The same for BPE's one-text inputs (lower by default: many peers are quadratic there).
    bpe_repeat_limit_s: f64,
    loads: usize,
    /// tokbench: the `--impls` keys as given (`None`: the default engines).
    tokbench_impls: Option<Vec<String>>,
    /// tokbench: times the whole matrix runs.
    runs: usize,
    /// tokbench: timed slices per cell.
    reps: usize,
    /// tokbench: the models and corpora fetched by scripts/fetch-bench-*.sh.
    cache: PathBuf,
    /// tokbench: the CPU to pin to (`None`: the one it starts on).
    cpu: Option<usize>,
}

fn default_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"))
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        family: Families::All,
        models: Vec::new(),
        corpora: Vec::new(),
        impls: Impl::ALL.to_vec(),
        wp_impls: Impl::WORDPIECE.to_vec(),
        bpe_impls: Impl::BPE.to_vec(),
        passes: 5,
        bpe_passes: 3,
        train_passes: 3,
        vary_one_text: false,
        first_runs: 3,
        data: default_data(),
        cell_budget_s: 40.0,
        bpe_cell_budget_s: 15.0,
        repeat_limit_s: 30.0,
        bpe_repeat_limit_s: 10.0,
        loads: 5,
        tokbench_impls: None,
        runs: tokbench::DEFAULT_RUNS,
        reps: tokbench::DEFAULT_REPS,
        cache: tokbench::default_cache(),
        cpu: None,
    };
    let mut passes = None;
    let mut first_runs = None;
    let mut repeat_limit = None;
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--quick" => o.quick = true,
            "--family" => {
                o.family = match value("--family")?.as_str() {
                    "spm" | "sentencepiece" => Families::Spm,
                    "wordpiece" => Families::WordPiece,
                    "bpe" => Families::Bpe,
                    "all" => Families::All,
                    "train" => Families::Train,
                    "tokbench" => Families::Tokbench,
                    other => {
                        return Err(format!(
                            "--family {other}: not spm, wordpiece, bpe, all, train or tokbench"
                        ));
                    }
                }
            }
            "--model" => o.models.push(value("--model")?),
            "--corpus" => o.corpora.push(value("--corpus")?),
            "--impls" => {
                let list = value("--impls")?;
                let mut impls = vec![Impl::Simdtok];
                let mut wp_impls = vec![Impl::Tokenizers];
                // BPE: simdtok, the peer the issue measures it against, and both references.
                let mut bpe_impls = vec![
                    Impl::Simdtok,
                    Impl::Tokenizers1,
                    Impl::TiktokenRs,
                    Impl::Tokenizers,
                ];
                o.tokbench_impls = Some(
                    list.split(',')
                        .filter(|k| !k.is_empty())
                        .map(str::to_owned)
                        .collect(),
                );
                for key in list.split(',').filter(|k| !k.is_empty()) {
                    // The Python peers of the tokbench protocol are no implementation here.
                    if tokbench::PYTHON_KEYS.contains(&key) {
                        continue;
                    }
                    let imp = Impl::from_key(key).ok_or(format!("unknown implementation {key}"))?;
                    // `simdtok` also names both WordPiece columns of simdtok.
                    let wp: &[Impl] = if imp == Impl::Simdtok {
                        &[Impl::SimdtokFast, Impl::SimdtokLinear]
                    } else {
                        &[imp]
                    };
                    if Impl::ALL.contains(&imp) && !impls.contains(&imp) {
                        impls.push(imp);
                    }
                    for &w in wp {
                        if Impl::WORDPIECE.contains(&w) && !wp_impls.contains(&w) {
                            wp_impls.push(w);
                        }
                    }
                    if Impl::BPE.contains(&imp) && !bpe_impls.contains(&imp) {
                        bpe_impls.push(imp);
                    }
                }
                impls.sort_by_key(|i| Impl::ALL.iter().position(|a| a == i));
                wp_impls.sort_by_key(|i| Impl::WORDPIECE.iter().position(|a| a == i));
                bpe_impls.sort_by_key(|i| Impl::BPE.iter().position(|a| a == i));
                o.impls = impls;
                o.wp_impls = wp_impls;
                o.bpe_impls = bpe_impls;
            }
            "--passes" => {
                let v = value("--passes")?;
                passes = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("--passes {v}: not a positive integer"))?,
                );
            }
            "--first-runs" => {
                let v = value("--first-runs")?;
                first_runs = Some(
                    v.parse::<usize>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or(format!("--first-runs {v}: not a positive integer"))?,
                );
            }
            "--data" => o.data = PathBuf::from(value("--data")?),
            "--cache" => o.cache = PathBuf::from(value("--cache")?),
            "--runs" | "--reps" => {
                let v = value(&arg)?;
                let n = v
                    .parse::<usize>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or(format!("{arg} {v}: not a positive integer"))?;
                if arg == "--runs" {
                    o.runs = n;
                } else {
                    o.reps = n;
                }
            }
            "--cpu" => {
                let v = value("--cpu")?;
                o.cpu = Some(
                    v.parse::<usize>()
                        .map_err(|_| format!("--cpu {v}: not a CPU number"))?,
                );
            }
            "--repeat-limit" => {
                let v = value("--repeat-limit")?;
                repeat_limit = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|s| *s > 0.0)
                        .ok_or(format!("--repeat-limit {v}: not a positive number"))?,
                );
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if o.quick {
        o.passes = 3;
        o.first_runs = 1;
        o.loads = 3;
        o.cell_budget_s = 10.0;
        o.bpe_cell_budget_s = 5.0;
        o.repeat_limit_s = 5.0;
        o.bpe_repeat_limit_s = 5.0;
    }
    if let Some(n) = passes {
        o.passes = n;
        o.bpe_passes = n;
        o.train_passes = n;
    }
    if let Some(n) = first_runs {
        o.first_runs = n;
    }
    if let Some(s) = repeat_limit {
        o.repeat_limit_s = s;
        o.bpe_repeat_limit_s = s;
    }
    Ok(o)
}

/// An implementation and what loading the model gave it.
pub(crate) type Loaded = (Impl, Result<Box<dyn Encoder>, String>);

/// One input: texts as spans of one string.
struct Input {
    name: String,
    text: String,
    spans: Vec<Range<usize>>,
    /// Bytes encoded (line ends excluded).
    bytes: usize,
    one_text: bool,
}

impl Input {
    fn corpus(path: &Path, name: &str, limit: Option<usize>) -> Result<Input, String> {
        let raw = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut text =
            String::from_utf8(raw).map_err(|e| format!("{}: not UTF-8: {e}", path.display()))?;
        if let Some(limit) = limit.filter(|&l| l < text.len()) {
            // Cut after the line end at or past the limit.
            let end = text.as_bytes()[limit..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| limit + i + 1);
            text.truncate(end);
        }
        let mut spans = Vec::new();
        let mut start = 0;
        let bytes = text.as_bytes();
        while start < bytes.len() {
            let (end, next) = match text[start..].find('\n') {
                Some(i) => {
                    let nl = start + i;
                    let end = if nl > start && bytes[nl - 1] == b'\r' {
                        nl - 1
                    } else {
                        nl
                    };
                    (end, nl + 1)
                }
                None => (bytes.len(), bytes.len()),
            };
            spans.push(start..end);
            start = next;
        }
        let total = spans.iter().map(|s| s.len()).sum();
        Ok(Input {
            name: name.to_owned(),
            text,
            spans,
            bytes: total,
            one_text: false,
        })
    }

    fn repeated(name: &str, ch: char, bytes: usize) -> Input {
        let text: String = std::iter::repeat_n(ch, bytes.div_ceil(ch.len_utf8())).collect();
        Input {
            name: name.to_owned(),
            spans: std::iter::once(0..text.len()).collect(),
            bytes: text.len(),
            text,
            one_text: true,
        }
    }

    /// Words of `len` copies of `ch` separated by single spaces, about `bytes` bytes, as one text.
    fn words(name: &str, ch: char, len: usize, bytes: usize) -> Input {
        let word: String = std::iter::repeat_n(ch, len).collect();
        let count = (bytes + 1).div_ceil(word.len() + 1);
        let text = vec![word; count].join(" ");
        Input {
            name: name.to_owned(),
            spans: std::iter::once(0..text.len()).collect(),
            bytes: text.len(),
            text,
            one_text: true,
        }
    }

    fn lines(&self) -> usize {
        self.spans.len()
    }
}

/// How a peer's ids compare with simdtok's on an input.
#[derive(Clone, Debug)]
enum Verdict {
    Same,
    Differs {
        lines: usize,
        total: usize,
        example: String,
        /// Further differing texts (the BPE report lists them; at most [`MORE_EXAMPLES`]).
        more: Vec<String>,
    },
    /// simdtok itself did not run on this input.
    Unverified,
}

#[derive(Clone, Debug)]
enum Cell {
    /// The implementation could not load the model (the reason).
    NotLoaded(String),
    /// Not run (the reason).
    Skipped(String),
    Done {
        mbps: f64,
        passes: usize,
        reduced: bool,
        verdict: Verdict,
        /// CPU time of the process ÷ wall time over the timed passes: about 1 on one thread
        /// (`None` for the Python library, timed in its own process).
        cpu_per_wall: Option<f64>,
    },
}

impl Cell {
    fn mbps(&self) -> Option<f64> {
        match self {
            Cell::Done { mbps, .. } => Some(*mbps),
            _ => None,
        }
    }
}

#[derive(Clone, Debug)]
enum LoadCell {
    NotLoaded(String),
    Done {
        median_ms: f64,
        rss_delta: Option<i64>,
    },
}

struct Row {
    input: String,
    bytes: usize,
    lines: usize,
    one_text: bool,
    cells: Vec<(Impl, Cell)>,
}

struct ModelResult {
    spec: ModelSpec,
    loads: Vec<(Impl, LoadCell)>,
    rows: Vec<Row>,
}

/// Token strings by id, for the report's examples of differing ids.
enum Pieces {
    /// simdtok's SentencePiece model (which also recomputes ids for the Python column).
    Simdtok(simdtok::Tokenizer),
    /// The reference's vocabulary, indexed by id.
    Table(Vec<String>),
}

impl Pieces {
    fn get(&self, id: u32) -> Option<&str> {
        match self {
            Pieces::Simdtok(tok) => tok.id_to_piece(id),
            Pieces::Table(table) => table.get(id as usize).map(String::as_str),
        }
    }
}

fn main() -> ExitCode {
    // A peer's panic while encoding is caught and reported as its error (peers::Guarded): one
    // line, not a backtrace.
    std::panic::set_hook(Box::new(|info| eprintln!("   (panic caught) {info}")));
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("--load-probe") {
        args.next();
        return load_probe(args.collect());
    }
    if args.peek().map(String::as_str) == Some("--first-pass") {
        args.next();
        return bpe::first_pass_child(args.collect());
    }
    if args.peek().map(String::as_str) == Some("--train-child") {
        args.next();
        return train::child(args.collect());
    }
    let opts = match parse_args(args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("bench-peers: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    if opts.family == Families::Train {
        return train::main(&opts);
    }
    if opts.family == Families::Tokbench {
        return tokbench::main(&opts);
    }
    match run(&opts) {
        Ok(report) => {
            print!("{report}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench-peers: {e}");
            ExitCode::FAILURE
        }
    }
}

fn matches(filters: &[String], name: &str) -> bool {
    filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
}

fn run(opts: &Options) -> Result<String, String> {
    if !opts.data.is_dir() {
        return Err(format!(
            "shared data not found at {} (set SIMDTOK_SHARED_DATA or --data)",
            opts.data.display()
        ));
    }
    let spm_models: Vec<ModelSpec> = if opts.family.has(Family::Spm) {
        peers::models(&opts.data)
            .into_iter()
            .filter(|m| matches(&opts.models, m.name))
            .collect()
    } else {
        Vec::new()
    };
    let wp_models: Vec<ModelSpec> = if opts.family.has(Family::WordPiece) {
        peers::wordpiece_models(&opts.data)
            .into_iter()
            .filter(|m| matches(&opts.models, m.name))
            .collect()
    } else {
        Vec::new()
    };
    let bpe_models: Vec<ModelSpec> = if opts.family.has(Family::Bpe) {
        peers::bpe_models(&opts.data)
            .into_iter()
            .filter(|m| matches(&opts.models, m.name))
            .collect()
    } else {
        Vec::new()
    };
    if spm_models.is_empty() && wp_models.is_empty() && bpe_models.is_empty() {
        return Err("no model matches --model".to_owned());
    }
    let limit = opts.quick.then_some(256 << 10);
    let mut corpora = Vec::new();
    for name in CORPORA.iter().filter(|n| matches(&opts.corpora, n)) {
        let path = opts.data.join("corpora").join(format!("{name}.txt"));
        corpora.push(Input::corpus(&path, name, limit)?);
    }
    let spm_inputs: Vec<&Input> = corpora.iter().collect();
    let spm_repeats: Vec<Input> = REPEATS
        .iter()
        .filter(|(n, _)| matches(&opts.corpora, n))
        .map(|(name, ch)| Input::repeated(name, *ch, REPEAT_BYTES))
        .collect();
    let spm_inputs: Vec<&Input> = spm_inputs.into_iter().chain(&spm_repeats).collect();
    let mut wp_adversarial: Vec<Input> = WP_REPEATS
        .iter()
        .filter(|(n, _)| matches(&opts.corpora, n))
        .map(|(name, ch)| Input::repeated(name, *ch, REPEAT_BYTES))
        .collect();
    let (words, ch, len) = WP_WORDS;
    if matches(&opts.corpora, words) {
        wp_adversarial.push(Input::words(words, ch, len, REPEAT_BYTES));
    }
    let wp_inputs: Vec<&Input> = corpora.iter().chain(&wp_adversarial).collect();
    let bpe_extra = if bpe_models.is_empty() {
        bpe::Inputs::default()
    } else {
        bpe::Inputs::build(opts)?
    };
    let bpe_inputs: Vec<&Input> = corpora.iter().chain(&bpe_extra.one_text).collect();
    // The 20 MB first-pass measurement, for the models of the English goals.
    let mut spm_big = Vec::new();
    if spm_models.iter().any(|m| SPM_BIG_MODELS.contains(&m.name)) {
        let others = bpe::SPM_BIG_OTHERS.iter().map(|(name, _)| *name);
        for name in [bpe::BIG_NAME, bpe::BIG_DOCS_NAME]
            .into_iter()
            .chain(others)
        {
            if matches(&opts.corpora, name) {
                spm_big.push(bpe::big_text(&opts.data, name)?);
            }
        }
    }
    let spm_run = !spm_models.is_empty() && (!spm_inputs.is_empty() || !spm_big.is_empty());
    let wp_run = !wp_models.is_empty() && !wp_inputs.is_empty();
    let bpe_run = !bpe_models.is_empty() && (!bpe_inputs.is_empty() || !bpe_extra.big.is_empty());
    if !spm_run && !wp_run && !bpe_run {
        return Err("no input matches --corpus".to_owned());
    }

    let started = Instant::now();
    let mut out = String::new();
    if spm_run {
        let results = run_spm(opts, &spm_models, &spm_inputs);
        let big = run_spm_big(opts, &spm_models, &spm_big);
        let seconds = started.elapsed().as_secs_f64();
        if wp_run {
            out.push_str("## SentencePiece\n\n");
        }
        if !results.iter().all(|r| r.rows.is_empty()) {
            out.push_str(&report(opts, &results, seconds));
        }
        let rows: Vec<(&ModelSpec, &bpe::Big)> = big.iter().map(|(m, b)| (m, b)).collect();
        for input in &spm_big {
            out.push_str(&bpe::report_big_plain(opts, &rows, &input.name));
        }
    }
    if wp_run {
        let wp_started = Instant::now();
        let results = run_wordpiece(opts, &wp_models, &wp_inputs);
        let seconds = wp_started.elapsed().as_secs_f64();
        if spm_run {
            out.push_str("\n## WordPiece\n\n");
        }
        out.push_str(&report_wordpiece(opts, &results, seconds));
    }
    if bpe_run {
        let bpe_started = Instant::now();
        let results = bpe::run(opts, &bpe_models, &bpe_inputs, &bpe_extra.big);
        let seconds = bpe_started.elapsed().as_secs_f64();
        if spm_run || wp_run {
            out.push_str("\n## Byte-level BPE\n\n");
        }
        out.push_str(&bpe::report(opts, &results, seconds));
        // The split alone, on the 20 MB inputs, where the whole encodings are compared.
        let rows = pretok::run(&bpe_extra.big, &opts.models, PRETOK_PASSES);
        out.push_str(&pretok::report(&rows, PRETOK_PASSES));
    }
    eprintln!("done in {:.0} s", started.elapsed().as_secs_f64());
    Ok(out)
}

/// The SentencePiece models of the English goals (issue 24), which get the 20 MB rows (of
/// English, and of the other corpora).
const SPM_BIG_MODELS: [&str; 4] = [
    "botchan_en_unigram_1000",
    "xlm-roberta-nomic.from-gguf",
    "botchan_en_bpe_1000",
    "llama-spm.from-gguf",
];

/// The 20 MB texts on the SentencePiece models of [`SPM_BIG_MODELS`]: repeated passes in this
/// process, then each implementation's first pass in fresh processes (as the byte-level BPE
/// family's `en-20mb` rows). The Python column is left out: it runs in its own process already.
fn run_spm_big(opts: &Options, models: &[ModelSpec], big: &[Input]) -> Vec<(ModelSpec, bpe::Big)> {
    let mut out = Vec::new();
    if big.is_empty() {
        return out;
    }
    for spec in models.iter().filter(|m| SPM_BIG_MODELS.contains(&m.name)) {
        eprintln!("== {} ({}), 20 MB", spec.name, spec.algorithm);
        let mut encoders =
            load_encoders(opts.impls.iter().copied().filter(|i| i.in_process()), spec);
        let pieces = simdtok::Tokenizer::from_file(&spec.path)
            .ok()
            .map(Pieces::Simdtok);
        for input in big {
            let result = bpe::run_big(
                opts,
                spec,
                &mut encoders,
                input,
                Family::Spm.reference(),
                pieces.as_ref(),
            );
            out.push((spec.clone(), result));
        }
    }
    out
}

/// The SentencePiece models: simdtok is the reference.
fn run_spm(opts: &Options, models: &[ModelSpec], inputs: &[&Input]) -> Vec<ModelResult> {
    let mut results = Vec::new();
    for spec in models {
        eprintln!("== {} ({})", spec.name, spec.algorithm);
        let loads = probe_loads(opts, &opts.impls, spec);
        let mut encoders =
            load_encoders(opts.impls.iter().copied().filter(|i| i.in_process()), spec);
        let pieces = simdtok::Tokenizer::from_file(&spec.path)
            .ok()
            .map(Pieces::Simdtok);
        let mut rows = Vec::new();
        for input in inputs {
            let reference = Family::Spm.reference();
            let mut cells = run_input(opts, &mut encoders, input, reference, pieces.as_ref());
            if opts.impls.contains(&Impl::SpmPy) {
                let cell = run_python(opts, spec, input, &cells, pieces.as_ref());
                cells.push((Impl::SpmPy, cell));
            }
            rows.push(Row {
                input: input.name.clone(),
                bytes: input.bytes,
                lines: input.lines(),
                one_text: input.one_text,
                cells,
            });
        }
        results.push(ModelResult {
            spec: spec.clone(),
            loads,
            rows,
        });
    }
    results
}

/// The WordPiece models: `tokenizers` is the reference.
fn run_wordpiece(opts: &Options, models: &[ModelSpec], inputs: &[&Input]) -> Vec<ModelResult> {
    let mut results = Vec::new();
    for spec in models {
        eprintln!("== {} ({})", spec.name, spec.path.display());
        // The tokenizer.json that kitoken and tokie load, for a vocab.txt: before any load.
        if let Err(e) = peers::prepare(spec) {
            eprintln!("   cannot write the tokenizer.json for kitoken and tokie: {e}");
        }
        let loads = probe_loads(opts, &opts.wp_impls, spec);
        let mut encoders = load_encoders(opts.wp_impls.iter().copied(), spec);
        let pieces = peers::wordpiece_pieces(spec).map(Pieces::Table);
        let mut rows = Vec::new();
        for input in inputs {
            let cells = run_input(
                opts,
                &mut encoders,
                input,
                Family::WordPiece.reference(),
                pieces.as_ref(),
            );
            rows.push(Row {
                input: input.name.clone(),
                bytes: input.bytes,
                lines: input.lines(),
                one_text: input.one_text,
                cells,
            });
        }
        results.push(ModelResult {
            spec: spec.clone(),
            loads,
            rows,
        });
    }
    results
}

/// Times and checks every implementation on one input. `reference` must come first in `encoders`:
/// its warm-up pass gives the ids that the others are checked against.
fn run_input(
    opts: &Options,
    encoders: &mut [Loaded],
    input: &Input,
    reference: Impl,
    pieces: Option<&Pieces>,
) -> Vec<(Impl, Cell)> {
    let mut cells: Vec<(Impl, Option<Cell>)> = Vec::new();
    // Reference ids: flat, with the start of each line.
    let mut expected: Option<(Vec<u32>, Vec<usize>)> = None;
    // Per implementation: the warm-up time, or its final cell.
    let mut warm: Vec<Option<f64>> = Vec::new();
    for (imp, enc) in encoders.iter_mut() {
        let enc = match enc {
            Ok(e) => e,
            Err(e) => {
                cells.push((*imp, Some(Cell::NotLoaded(e.clone()))));
                warm.push(None);
                continue;
            }
        };
        if input.one_text
            && let Some(reason) = too_slow(enc.as_mut(), input, opts.repeat_limit_s)
        {
            eprintln!("   {:<28} {:<14} skipped: {reason}", input.name, imp.key());
            cells.push((*imp, Some(Cell::Skipped(reason))));
            warm.push(None);
            continue;
        }
        // Warm-up pass, which also checks the ids against the reference's.
        let start = Instant::now();
        let (verdict, failure) = if *imp == reference {
            let mut ids = Vec::new();
            let mut starts = Vec::with_capacity(input.spans.len() + 1);
            let mut failure = None;
            for span in &input.spans {
                starts.push(ids.len());
                match enc.encode(&input.text[span.clone()]) {
                    Ok(got) => ids.extend_from_slice(got),
                    Err(e) => failure = failure.or(Some(e)),
                }
            }
            starts.push(ids.len());
            if !(input.one_text && failure.is_some()) {
                expected = Some((ids, starts));
            }
            (Verdict::Same, failure)
        } else {
            match &expected {
                Some((ids, starts)) => {
                    compare(enc.as_mut(), input, ids, starts, *imp, reference, pieces)
                }
                None => {
                    // No reference ids: the warm-up pass still encodes every text (its time
                    // sets the passes and is the input's first encode).
                    let mut failure = None;
                    for span in &input.spans {
                        if let Err(e) = enc.encode(&input.text[span.clone()]) {
                            failure = failure.or(Some(e));
                        }
                    }
                    (Verdict::Unverified, failure)
                }
            }
        };
        let t = start.elapsed().as_secs_f64();
        if input.one_text
            && let Some(e) = failure
        {
            // No figure for an implementation that fails on the one text.
            let reason = format!("fails: {e}");
            eprintln!("   {:<28} {:<14} {reason}", input.name, imp.key());
            cells.push((*imp, Some(Cell::Skipped(reason))));
            warm.push(None);
            continue;
        }
        cells.push((
            *imp,
            Some(Cell::Done {
                mbps: 0.0,
                passes: 0,
                reduced: false,
                verdict,
                cpu_per_wall: None,
            }),
        ));
        warm.push(Some(t));
    }

    // Timed passes, round robin so that drifts of the machine hit every implementation alike.
    let passes: Vec<usize> = warm
        .iter()
        .map(|w| match w {
            Some(t) if t * opts.passes as f64 > opts.cell_budget_s => {
                ((opts.cell_budget_s / t) as usize).clamp(1, opts.passes)
            }
            Some(_) => opts.passes,
            None => 0,
        })
        .collect();
    let most = passes.iter().copied().max().unwrap_or(0);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); encoders.len()];
    // CPU seconds of the process over the timed passes, per implementation.
    let mut cpu = vec![0.0; encoders.len()];
    for pass in 0..most {
        // A one-text input with `vary_one_text`: this pass's text, `pass + 1` characters shorter.
        let varied: Option<Range<usize>> = (opts.vary_one_text && input.one_text).then(|| {
            let end = input
                .text
                .char_indices()
                .rev()
                .nth(pass)
                .map_or(0, |(i, _)| i);
            0..end
        });
        let spans: &[Range<usize>] = varied
            .as_ref()
            .map_or(&input.spans[..], std::slice::from_ref);
        for (i, (_, enc)) in encoders.iter_mut().enumerate() {
            if pass < passes[i]
                && let Ok(enc) = enc
            {
                let (secs, used) = time_pass_cpu(enc.as_mut(), &input.text, spans);
                times[i].push(secs);
                cpu[i] += used;
            }
        }
    }
    cells
        .into_iter()
        .enumerate()
        .map(|(i, (imp, cell))| {
            let cell = match cell.expect("cell") {
                Cell::Done { verdict, .. } => {
                    let mbps = input.bytes as f64 / median(&times[i]) / 1e6;
                    let wall: f64 = times[i].iter().sum();
                    let cell = Cell::Done {
                        mbps,
                        passes: passes[i],
                        reduced: passes[i] < opts.passes,
                        verdict,
                        cpu_per_wall: (wall > 0.0).then(|| cpu[i] / wall),
                    };
                    eprintln!(
                        "   {:<28} {:<14} {:>9.2} MB/s  cpu/wall {:.2}  {}",
                        input.name,
                        imp.key(),
                        mbps,
                        cpu[i] / wall,
                        verdict_short(&cell)
                    );
                    cell
                }
                other => other,
            };
            (imp, cell)
        })
        .collect()
}

/// The Python library on one input, in its own process; its ids are checked against simdtok's
/// (the `Simdtok` cell's warm-up ids are recomputed here, which costs one more simdtok pass).
fn run_python(
    opts: &Options,
    spec: &ModelSpec,
    input: &Input,
    cells: &[(Impl, Cell)],
    pieces: Option<&Pieces>,
) -> Cell {
    let simdtok_ran = cells
        .iter()
        .any(|(i, c)| *i == Impl::Simdtok && matches!(c, Cell::Done { .. }));
    let texts: Vec<&str> = input.spans.iter().map(|s| &input.text[s.clone()]).collect();
    let limits = python::Limits {
        passes: opts.passes,
        budget_s: opts.cell_budget_s,
        repeat_limit_s: opts.repeat_limit_s,
    };
    let cell = match python::run(&spec.path, &texts, input.one_text, &limits) {
        python::Outcome::Failed(e) => Cell::NotLoaded(e),
        python::Outcome::Skipped(reason) => Cell::Skipped(reason),
        python::Outcome::Done { times, ids } => {
            let verdict = match pieces {
                Some(Pieces::Simdtok(tok)) if simdtok_ran => {
                    let mut differing = 0;
                    let mut example = None;
                    for (i, (text, got)) in texts.iter().zip(&ids).enumerate() {
                        let want = tok.encode(text);
                        if want != *got {
                            differing += 1;
                            if example.is_none() {
                                example = Some(describe(
                                    i,
                                    text,
                                    &want,
                                    Ok(got),
                                    (Impl::SpmPy, Impl::Simdtok),
                                    input.one_text,
                                    pieces,
                                ));
                            }
                        }
                    }
                    match example {
                        None => Verdict::Same,
                        Some(example) => Verdict::Differs {
                            lines: differing,
                            total: texts.len(),
                            example,
                            more: Vec::new(),
                        },
                    }
                }
                _ => Verdict::Unverified,
            };
            Cell::Done {
                mbps: input.bytes as f64 / median(&times) / 1e6,
                passes: times.len(),
                reduced: times.len() < opts.passes,
                verdict,
                cpu_per_wall: None,
            }
        }
    };
    match &cell {
        Cell::Done { mbps, .. } => eprintln!(
            "   {:<28} {:<14} {:>9.2} MB/s  {}",
            input.name,
            Impl::SpmPy.key(),
            mbps,
            verdict_short(&cell)
        ),
        Cell::Skipped(r) | Cell::NotLoaded(r) => {
            eprintln!("   {:<28} {:<14} {r}", input.name, Impl::SpmPy.key())
        }
    }
    cell
}

fn verdict_short(cell: &Cell) -> String {
    match cell {
        Cell::Done {
            verdict: Verdict::Differs { lines, total, .. },
            ..
        } => format!("ids differ on {lines} of {total} texts"),
        Cell::Done {
            verdict: Verdict::Unverified,
            ..
        } => "unverified".to_owned(),
        _ => String::new(),
    }
}

/// For a one-text input: a reason to skip `enc` when a pass over the whole input would take more
/// than `limit_s` seconds, estimated from 16 KiB and 64 KiB prefixes (catches quadratic peers).
fn too_slow(enc: &mut dyn Encoder, input: &Input, limit_s: f64) -> Option<String> {
    let prefix = |n: usize| {
        let mut end = n.min(input.text.len());
        while !input.text.is_char_boundary(end) {
            end -= 1;
        }
        &input.text[..end]
    };
    let small = prefix(16 << 10);
    let large = prefix(64 << 10);
    let time = |enc: &mut dyn Encoder, t: &str| {
        let start = Instant::now();
        let _ = std::hint::black_box(enc.encode(t).map(|ids| ids.len()));
        start.elapsed().as_secs_f64()
    };
    let extrapolate = |t_small: f64, t_large: f64| {
        let growth = (t_large / t_small).ln() / (large.len() as f64 / small.len() as f64).ln();
        let growth = growth.clamp(1.0, 3.0);
        let estimate = t_large * (input.text.len() as f64 / large.len() as f64).powf(growth);
        (estimate, growth)
    };
    time(enc, small);
    let mut t_small = time(enc, small).max(1e-9);
    let mut t_large = time(enc, large).max(1e-9);
    let (mut estimate, mut growth) = extrapolate(t_small, t_large);
    if estimate > limit_s && t_large < 0.25 {
        // Before skipping, the best of two more timings of each prefix: one preemption of a
        // millisecond-long timing on a busy machine would otherwise look like quadratic growth.
        // (A 64 KiB prefix that takes a quarter of a second or more is slow, not preempted.)
        for _ in 0..2 {
            t_small = t_small.min(time(enc, small).max(1e-9));
            t_large = t_large.min(time(enc, large).max(1e-9));
        }
        (estimate, growth) = extrapolate(t_small, t_large);
    }
    (estimate > limit_s).then(|| {
        format!(
            "one pass estimated at {estimate:.0} s (64 KiB took {:.2} s, {:.2} MB/s; time grows as size^{growth:.1})",
            t_large,
            large.len() as f64 / t_large / 1e6
        )
    })
}

/// How many differing texts besides the first a cell keeps for the report.
const MORE_EXAMPLES: usize = 4;

/// Checks `enc`'s ids against the reference, line by line; also gives the first error, if any.
fn compare(
    enc: &mut dyn Encoder,
    input: &Input,
    ref_ids: &[u32],
    starts: &[usize],
    imp: Impl,
    reference: Impl,
    pieces: Option<&Pieces>,
) -> (Verdict, Option<String>) {
    let mut differing = 0;
    let mut examples = Vec::new();
    let mut failure = None;
    for (i, span) in input.spans.iter().enumerate() {
        let want = &ref_ids[starts[i]..starts[i + 1]];
        let text = &input.text[span.clone()];
        let got = enc.encode(text);
        if let Err(e) = &got {
            failure = failure.or_else(|| Some(e.clone()));
        }
        let same = matches!(&got, Ok(g) if *g == want);
        if !same {
            differing += 1;
            if examples.len() <= MORE_EXAMPLES {
                examples.push(describe(
                    i,
                    text,
                    want,
                    got,
                    (imp, reference),
                    input.one_text,
                    pieces,
                ));
            }
        }
    }
    let mut examples = examples.into_iter();
    let verdict = match examples.next() {
        None => Verdict::Same,
        Some(example) => Verdict::Differs {
            lines: differing,
            total: input.spans.len(),
            example,
            more: examples.collect(),
        },
    };
    (verdict, failure)
}

/// One differing text, for the report: where and how the ids first differ (`got` from `imp`,
/// `want` from `reference`).
fn describe(
    line: usize,
    text: &str,
    want: &[u32],
    got: Result<&[u32], String>,
    (imp, reference): (Impl, Impl),
    one_text: bool,
    pieces: Option<&Pieces>,
) -> String {
    let shown: String = if text.chars().count() > 100 {
        text.chars().take(100).collect::<String>() + "…"
    } else {
        text.to_owned()
    };
    let where_ = if one_text {
        "the text".to_owned()
    } else {
        format!("line {}", line + 1)
    };
    let got = match got {
        Ok(g) => g,
        Err(e) => {
            return format!("{where_} {}: {} fails: {e}", code_span(&shown), imp.label());
        }
    };
    let first = want
        .iter()
        .zip(got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    let window = |ids: &[u32]| {
        let lo = first.saturating_sub(2);
        let hi = (first + 4).min(ids.len());
        let mut s = String::new();
        if lo > 0 {
            s.push_str("… ");
        }
        for &id in &ids[lo.min(ids.len())..hi] {
            let piece = pieces.and_then(|p| p.get(id)).unwrap_or("?");
            if piece.chars().count() > 24 {
                // A long piece (a run of spaces, say) is shown by its start and length.
                let start: String = piece.chars().take(12).collect();
                let _ = write!(s, "{id}:{start:?}…({} chars) ", piece.chars().count());
            } else {
                let _ = write!(s, "{id}:{piece:?} ");
            }
        }
        if hi < ids.len() {
            s.push('…');
        }
        s.trim_end().to_owned()
    };
    format!(
        "{where_} {}: first difference at token {first} of {} ({}) / {} ({}); {} `{}` vs {} `{}`",
        code_span(&shown),
        want.len(),
        reference.label(),
        got.len(),
        imp.label(),
        reference.label(),
        window(want),
        imp.label(),
        window(got)
    )
}

fn code_span(s: &str) -> String {
    let s = s.replace('`', "'").replace('|', "\\|");
    format!("`{s}`")
}

// ---- model loading, measured in a fresh process ----

/// Runs `--load-probe` in a child process, so that the resident-memory growth is the model's alone.
/// [`probe_load`] of each implementation.
fn probe_loads(opts: &Options, impls: &[Impl], spec: &ModelSpec) -> Vec<(Impl, LoadCell)> {
    impls
        .iter()
        .map(|&imp| (imp, probe_load(opts, imp, spec)))
        .collect()
}

/// Loads the implementations in this process, each kept on one thread; says on stderr which failed.
fn load_encoders(impls: impl Iterator<Item = Impl>, spec: &ModelSpec) -> Vec<Loaded> {
    let mut encoders: Vec<Loaded> = impls.map(|imp| (imp, peers::load(imp, spec))).collect();
    for enc in encoders.iter_mut().filter_map(|(_, e)| e.as_mut().ok()) {
        enc.one_thread();
    }
    for (imp, e) in &encoders {
        if let Err(e) = e {
            eprintln!("   {}: {e}", imp.key());
        }
    }
    encoders
}

fn probe_load(opts: &Options, imp: Impl, spec: &ModelSpec) -> LoadCell {
    if imp == Impl::SpmPy {
        return match python::probe_load(&spec.path, opts.loads) {
            Ok((median_ms, rss_delta)) => LoadCell::Done {
                median_ms,
                rss_delta,
            },
            Err(e) => LoadCell::NotLoaded(e),
        };
    }
    let loads = opts.loads.to_string();
    let answer = rerun_self(
        "load probe",
        &[
            "--load-probe".as_ref(),
            imp.key().as_ref(),
            spec.name.as_ref(),
            opts.data.as_os_str(),
            loads.as_ref(),
        ],
    );
    let cell = match answer.as_deref() {
        Ok([ms, rss, _loads]) => LoadCell::Done {
            median_ms: ms.parse().unwrap_or(f64::NAN),
            rss_delta: rss.parse().ok(),
        },
        Ok(fields) => LoadCell::NotLoaded(format!("bad answer from the load probe: {fields:?}")),
        Err(why) => LoadCell::NotLoaded(why.clone()),
    };
    if let LoadCell::Done {
        median_ms,
        rss_delta,
        ..
    } = &cell
    {
        eprintln!(
            "   load {:<14} {median_ms:>8.1} ms  RSS +{:.1} MiB",
            imp.key(),
            rss_delta.unwrap_or(0) as f64 / 1048576.0
        );
    }
    cell
}

/// Runs this binary again with `args` (a hidden subcommand) and returns the tab-separated fields
/// after the `ok` of the last line it prints. `Err` says why there are none: it could not start,
/// it answered `err\tMESSAGE`, or it answered nothing of the kind (its exit status and stderr,
/// under `what`).
fn rerun_self(what: &str, args: &[&OsStr]) -> Result<Vec<String>, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot re-run myself: {e}"))?;
    let out = std::process::Command::new(exe)
        .args(args)
        .output()
        .map_err(|e| format!("cannot re-run myself: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or("");
    let fields: Vec<&str> = line.split('\t').collect();
    match fields.as_slice() {
        ["ok", rest @ ..] => Ok(rest.iter().map(|f| (*f).to_owned()).collect()),
        ["err", msg] => Err((*msg).to_owned()),
        _ => Err(format!(
            "{what} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )),
    }
}

/// The child side: `--load-probe IMPL MODEL DATA LOADS`. Prints `ok\tMEDIAN_MS\tRSS_DELTA\tLOADS`
/// or `err\tMESSAGE`.
fn load_probe(args: Vec<String>) -> ExitCode {
    let [key, name, data, loads] = args.as_slice() else {
        eprintln!("--load-probe IMPL MODEL DATA LOADS");
        return ExitCode::from(2);
    };
    let (Some(imp), Some(spec), Ok(loads)) = (
        Impl::from_key(key),
        peers::models(Path::new(data))
            .into_iter()
            .chain(peers::wordpiece_models(Path::new(data)))
            .chain(peers::bpe_models(Path::new(data)))
            .find(|m| m.name == name),
        loads.parse::<usize>(),
    ) else {
        eprintln!("--load-probe: bad arguments");
        return ExitCode::from(2);
    };
    let before = rss_bytes();
    let start = Instant::now();
    let kept = match peers::load(imp, &spec) {
        Ok(k) => k,
        Err(e) => {
            println!("err\t{}", e.replace(['\t', '\n'], " "));
            return ExitCode::SUCCESS;
        }
    };
    let mut times = vec![start.elapsed().as_secs_f64() * 1e3];
    let after = rss_bytes();
    for _ in 1..loads.max(1) {
        let start = Instant::now();
        let again = peers::load(imp, &spec);
        times.push(start.elapsed().as_secs_f64() * 1e3);
        drop(again);
    }
    drop(kept);
    let delta = match (before, after) {
        (Some(b), Some(a)) => (a as i64 - b as i64).to_string(),
        _ => "-".to_owned(),
    };
    // bpe-openai's models are process-wide statics: only the first load costs anything.
    let shown = if imp == Impl::BpeOpenai {
        times[0]
    } else {
        median(&times)
    };
    println!("ok\t{shown}\t{delta}\t{}", times.len());
    ExitCode::SUCCESS
}

// ---- the report ----

fn report(opts: &Options, results: &[ModelResult], seconds: f64) -> String {
    let mut out = String::new();
    let mut notes = Notes::default();
    let tier = results
        .first()
        .and_then(|m| simdtok::Tokenizer::from_file(&m.spec.path).ok())
        .map_or("?".to_owned(), |t| t.kernels().tier().to_string());
    report::preamble(&mut out, &tier, seconds);
    let _ = writeln!(
        out,
        "MB/s = 10^6 input bytes (line ends excluded) / median seconds of {} timed passes{}, one \
         thread, after a warm-up pass that also checks every text's ids against simdtok's. Texts \
         are the lines of each corpus{}; `repeat-a` and `repeat-日` are 10^6 bytes of one \
         character as one text. `≠N`: the peer's ids differ from simdtok's on N texts (see below); \
         `n/a`: the peer cannot load the model. Ratio columns: simdtok MB/s ÷ peer MB/s.",
        opts.passes,
        report::round_robin(opts.passes),
        report::quick_cut(opts.quick),
    );
    out.push('\n');
    let _ = writeln!(out, "Implementations:\n");
    for imp in &opts.impls {
        let what = match imp {
            Impl::Simdtok => format!(
                "the `{tier}` tier, `Tokenizer::encode_ids_into` with a reused vector (ids only, like the peers)"
            ),
            Impl::SpmCpp => "the reference C++ library 0.2.1 as bundled by `sentencepiece-sys` \
                             0.14.0 (built here with cmake, RelWithDebInfo: `-O2`), \
                             `SentencePieceProcessor::Encode(text, &ids)` through \
                             `bench-peers/cpp/spm_ids.cc`"
                .to_owned(),
            Impl::SpmCrate => {
                "the `sentencepiece` crate 0.14.0, `encode` (its only encode: pieces \
                               and ids of the same C++ library, through a serialized proto)"
                    .to_owned()
            }
            Impl::SpmPy => format!(
                "Python `sentencepiece` {} (the version simdtok's goldens come from) **in its own \
                 process**, `encode(lines, num_threads=1)` timed with `perf_counter`; includes \
                 building Python lists: only roughly comparable",
                python::version().unwrap_or_else(|e| format!("(unavailable: {e})"))
            ),
            Impl::Kitoken => "`kitoken` 0.11.1, `Kitoken::from_sentencepiece_file`, \
                              `encode(text, false)`"
                .to_owned(),
            Impl::Tokie => "`tokie` 0.1.4: reads Hugging Face `tokenizer.json` or its own `.tkz`, \
                            not `.model` (`Tokenizer::from_file` is tried on the `.model`)"
                .to_owned(),
            Impl::SimdtokFast | Impl::SimdtokLinear | Impl::Tokenizers => {
                wordpiece_impl_text(*imp, &tier)
            }
            Impl::TiktokenRs | Impl::Tokenizers1 | Impl::BpeOpenai => {
                "(a byte-level BPE implementation)".to_owned()
            }
        };
        let _ = writeln!(out, "- {}: {what}", imp.label());
    }
    out.push('\n');

    let peers: Vec<Impl> = opts
        .impls
        .iter()
        .copied()
        .filter(|&i| i != Impl::Simdtok)
        .collect();
    // Throughput.
    report::table_head(
        &mut out,
        (
            "| model | input | MB | texts | simdtok |",
            "|:---|:---|---:|---:|---:|",
        ),
        (peers.iter().map(|p| p.label().to_owned()))
            .chain(peers.iter().map(|p| format!("÷ {}", p.label()))),
        ("", ""),
    );
    for m in results {
        for (k, row) in m.rows.iter().enumerate() {
            let s = cell_of(row, Impl::Simdtok);
            let model = if k == 0 {
                format!("`{}` ({})", m.spec.name, m.spec.algorithm)
            } else {
                String::new()
            };
            report::row_lead(&mut out, &model, row);
            let _ = write!(
                out,
                " {} |",
                s.map_or(String::new(), |c| fmt_cell(c, &mut notes))
            );
            for p in &peers {
                let c = cell_of(row, *p).map_or(String::new(), |c| fmt_cell(c, &mut notes));
                let _ = write!(out, " {c} |");
            }
            for p in &peers {
                let r = ratio(
                    s.and_then(Cell::mbps),
                    cell_of(row, *p).and_then(Cell::mbps),
                );
                let _ = write!(out, " {r} |");
            }
            out.push('\n');
        }
    }
    notes.write(&mut out);
    // Repeated characters against prose.
    let _ = writeln!(
        out,
        "\n**One repeated character vs prose** (simdtok; prose = `{PROSE}`, same model; target: \
         per-byte time within 3× of prose's):\n"
    );
    let _ = writeln!(
        out,
        "| model | prose MB/s | input | MB/s | per-byte time ÷ prose's | within 3× |\n|:---|---:|:---|---:|---:|:---:|"
    );
    for m in results {
        let prose = find_row(m, PROSE)
            .and_then(|r| cell_of(r, Impl::Simdtok))
            .and_then(Cell::mbps);
        for (name, _) in REPEATS {
            let Some(row) = find_row(m, name) else {
                continue;
            };
            let rep = cell_of(row, Impl::Simdtok).and_then(Cell::mbps);
            let (slow, ok) = match (prose, rep) {
                (Some(p), Some(r)) if r > 0.0 => (
                    format!("{:.2}×", p / r),
                    if p / r <= 3.0 { "yes" } else { "**no**" },
                ),
                _ => (String::new(), "?"),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | `{name}` | {} | {slow} | {ok} |",
                m.spec.name,
                prose.map_or("–".to_owned(), fmt_mbps),
                rep.map_or("–".to_owned(), fmt_mbps)
            );
        }
    }

    // Loading.
    let _ = writeln!(
        out,
        "\n**Model load** (median of {} loads in a fresh process; RSS = growth of the process's \
         resident set from before the first load to after it, model kept; /proc/self/statm):\n",
        opts.loads
    );
    report::table_head(
        &mut out,
        ("| model | file MB |", "|:---|---:|"),
        opts.impls.iter().map(|i| i.label().to_owned()),
        ("", ""),
    );
    for m in results {
        let size = std::fs::metadata(&m.spec.path).map_or(0, |md| md.len());
        let _ = write!(out, "| `{}` | {:.2} |", m.spec.name, size as f64 / 1e6);
        for (_, cell) in &m.loads {
            let _ = write!(out, " {} |", report::load_cell(Some(cell)));
        }
        out.push('\n');
    }
    report::load_reasons(&mut out, results.iter(), Impl::label);

    // Differences.
    let _ = writeln!(out, "\n**Ids that differ from simdtok's:**\n");
    report::differences(
        &mut out,
        results,
        |row| row.cells.iter().map(|(i, c)| (*i, c)).collect(),
        "none: every peer that ran agreed with simdtok on every text.",
    );

    // Targets.
    let _ = writeln!(
        out,
        "\n**Against the targets of issue #3** (on `{PROSE}`; fastest peer = the highest MB/s of \
         any peer, agreeing or not):\n"
    );
    let _ = writeln!(
        out,
        "| target | model | simdtok MB/s | fastest peer | simdtok ÷ fastest | verdict |\n|:---|:---|---:|:---|---:|:---|"
    );
    for m in results {
        let (target, floor) = match m.spec.algorithm {
            "unigram" if m.spec.name != "kyoto_ja_unigram_8000" => (
                "unigram English ≥ 150 MB/s and ≥ 3× the fastest peer",
                150.0,
            ),
            "bpe" => (
                "SentencePiece BPE ≥ 100 MB/s and ≥ 3× the fastest peer",
                100.0,
            ),
            _ => continue,
        };
        let Some(row) = find_row(m, PROSE) else {
            continue;
        };
        let Some(s) = cell_of(row, Impl::Simdtok).and_then(Cell::mbps) else {
            continue;
        };
        let fastest = report::fastest(
            row.cells
                .iter()
                .filter(|(i, _)| *i != Impl::Simdtok)
                .map(|(i, c)| (*i, c)),
        );
        let (peer, r) = match fastest {
            Some((imp, v, differs)) => (
                format!(
                    "{} {}{}",
                    imp.label(),
                    fmt_mbps(v),
                    if differs { " (ids differ)" } else { "" }
                ),
                Some(s / v),
            ),
            None => ("none ran".to_owned(), None),
        };
        let verdict = match r {
            Some(r) if s >= floor && r >= 3.0 => "met".to_owned(),
            Some(r) => {
                let mut missed = Vec::new();
                if s < floor {
                    missed.push(format!("{} < {floor:.0} MB/s", fmt_mbps(s)));
                }
                if r < 3.0 {
                    missed.push(format!("{r:.2}× < 3×"));
                }
                format!("**not met**: {}", missed.join(", "))
            }
            None => "?".to_owned(),
        };
        let _ = writeln!(
            out,
            "| {target} | `{}` | {} | {peer} | {} | {verdict} |",
            m.spec.name,
            fmt_mbps(s),
            r.map_or(String::new(), |r| format!("{r:.2}×"))
        );
    }
    out
}

// ---- the WordPiece report ----

/// What runs in a WordPiece column.
fn wordpiece_impl_text(imp: Impl, tier: &str) -> String {
    match imp {
        Impl::SimdtokFast | Impl::SimdtokLinear => format!(
            "the `{tier}` tier, `Tokenizer::from_file_with_options` with `wordpiece_algorithm: \
             Some(WordPieceAlgorithm::{})`, `lowercase: None` (the model's default), \
             `add_special_tokens: false`; `encode_ids_into` with a reused vector (ids only)",
            if imp == Impl::SimdtokFast {
                "Fast"
            } else {
                "Linear"
            }
        ),
        Impl::Tokenizers => "**the reference**: Hugging Face `tokenizers` 0.23.2 (newest stable; \
                             default features off, `onig`). A `vocab.txt` is built as \
                             Python's `BertWordPieceTokenizer(vocab, lowercase=True)` builds it \
                             (WordPiece unk `[UNK]`, prefix `##`, 100 characters a word at most; \
                             `[UNK] [SEP] [CLS] [PAD] [MASK]` as special tokens where the \
                             vocabulary has them; `BertNormalizer(clean_text, \
                             handle_chinese_chars, strip_accents=None, lowercase)`; \
                             `BertPreTokenizer`); a `tokenizer.json` is read with \
                             `Tokenizer::from_file`; truncation and padding off. \
                             `encode_fast(text, false)`: its fastest exact single-text call \
                             (`encode` also computes offsets)"
            .to_owned(),
        Impl::Kitoken => "`kitoken` 0.11.1: reads no `vocab.txt`, so the `tokenizer.json` (for \
                          a `vocab.txt`, the one `tokenizers` writes for the model above) through \
                          `Definition::from_tokenizers_file`, its padding and truncation removed, \
                          `Kitoken::from_definition`; `encode(text, false)`"
            .to_owned(),
        Impl::Tokie => "`tokie` 0.1.4: reads no `vocab.txt`, so the same `tokenizer.json` \
                        through `Tokenizer::from_json`, then `no_truncation().no_padding()`; \
                        `encode_ids(text, false)`"
            .to_owned(),
        Impl::Simdtok | Impl::SpmCpp | Impl::SpmCrate | Impl::SpmPy => {
            "(a SentencePiece implementation)".to_owned()
        }
        Impl::TiktokenRs | Impl::Tokenizers1 | Impl::BpeOpenai => {
            "(a byte-level BPE implementation)".to_owned()
        }
    }
}

/// The column order of the WordPiece tables: simdtok's two encoders, then the peers.
const WP_COLUMNS: [Impl; 5] = [
    Impl::SimdtokFast,
    Impl::SimdtokLinear,
    Impl::Tokenizers,
    Impl::Kitoken,
    Impl::Tokie,
];

fn report_wordpiece(opts: &Options, results: &[ModelResult], seconds: f64) -> String {
    let mut out = String::new();
    let mut notes = Notes::default();
    let tier = simdtok::kernels::Kernels::active().map_or("?".to_owned(), |k| k.tier().to_string());
    report::preamble(&mut out, &tier, seconds);
    let words = results
        .iter()
        .flat_map(|m| &m.rows)
        .find(|r| r.input == WP_WORDS.0)
        .map(|r| r.bytes);
    let _ = writeln!(
        out,
        "BERT WordPiece models, ids only, no special tokens. MB/s = 10^6 input bytes (line ends \
         excluded) / median seconds of {} timed passes{}, one thread, after a warm-up pass that \
         also checks every text's ids against **`tokenizers`' (the reference)**. Texts are the \
         lines of each corpus{}; `repeat-a` and `repeat-中` are 10^6 bytes of one character as \
         one text (`repeat-a` is one word over the 100 characters a word may have: `[UNK]`); \
         `words-a99` is one text of words of exactly 100 `a` (the longest word still split into \
         pieces) separated by single spaces{}. `≠N`: ids differ from `tokenizers`' on N texts \
         (see below); `n/a [k]`: cannot load the model, note k says why. Ratios: simdtok fast \
         MB/s ÷ `tokenizers`' and ÷ the fastest peer's (any peer, agreeing or not; `≠` if its \
         ids differ), and simdtok linear ÷ simdtok fast.",
        opts.passes,
        report::round_robin(opts.passes),
        report::quick_cut(opts.quick),
        words.map_or(String::new(), |b| format!(
            " ({} words, {b} bytes)",
            (b + 1) / (WP_WORDS.2 + 1)
        )),
    );
    out.push('\n');
    let columns: Vec<Impl> = WP_COLUMNS
        .into_iter()
        .filter(|i| opts.wp_impls.contains(i))
        .collect();
    let _ = writeln!(out, "Implementations:\n");
    for &imp in &columns {
        let _ = writeln!(
            out,
            "- {}: {}",
            imp.label(),
            wordpiece_impl_text(imp, &tier)
        );
    }
    out.push('\n');

    // Throughput.
    let has = |i: Impl| columns.contains(&i);
    let peers: Vec<Impl> = columns
        .iter()
        .copied()
        .filter(|&i| i != Impl::SimdtokFast && i != Impl::SimdtokLinear)
        .collect();
    let tail = match (has(Impl::SimdtokFast), has(Impl::SimdtokLinear)) {
        (true, true) => (
            " fast ÷ tokenizers | fast ÷ fastest peer | linear ÷ fast |",
            "---:|---:|---:|",
        ),
        (true, false) => (" fast ÷ tokenizers | fast ÷ fastest peer |", "---:|---:|"),
        (false, _) => ("", ""),
    };
    report::table_head(
        &mut out,
        ("| model | input | MB | texts |", "|:---|:---|---:|---:|"),
        columns.iter().map(|c| c.label().to_owned()),
        tail,
    );
    for m in results {
        for (k, row) in m.rows.iter().enumerate() {
            let model = if k == 0 {
                format!("`{}`", m.spec.name)
            } else {
                String::new()
            };
            report::row_lead(&mut out, &model, row);
            for &c in &columns {
                let cell = cell_of(row, c).map_or(String::new(), |x| {
                    report::fmt_cell_marked(x, c.label(), &m.spec, &mut notes)
                });
                let _ = write!(out, " {cell} |");
            }
            if has(Impl::SimdtokFast) {
                let fast = cell_of(row, Impl::SimdtokFast).and_then(Cell::mbps);
                let reference = cell_of(row, Impl::Tokenizers).and_then(Cell::mbps);
                let fastest =
                    report::fastest(peers.iter().filter_map(|&p| Some((p, cell_of(row, p)?))));
                let best = report::fmt_ratio_peer(fast, fastest, Impl::label);
                let _ = write!(out, " {} | {best} |", ratio(fast, reference));
                if has(Impl::SimdtokLinear) {
                    let linear = cell_of(row, Impl::SimdtokLinear).and_then(Cell::mbps);
                    let _ = write!(out, " {} |", ratio(linear, fast));
                }
            }
            out.push('\n');
        }
    }
    notes.write(&mut out);

    // The adversarial inputs against prose.
    let _ = writeln!(
        out,
        "\n**Adversarial inputs vs prose** (prose = `{PROSE}`, same model; per-byte time ÷ \
         prose's, lower is better):\n"
    );
    report::table_head(
        &mut out,
        ("| model | input |", "|:---|:---|"),
        columns.iter().map(|c| c.label().to_owned()),
        ("", ""),
    );
    for m in results {
        let prose = find_row(m, PROSE);
        for row in m.rows.iter().filter(|r| r.one_text) {
            let _ = write!(out, "| `{}` | `{}` |", m.spec.name, row.input);
            for &c in &columns {
                let p = prose.and_then(|r| cell_of(r, c)).and_then(Cell::mbps);
                let a = cell_of(row, c).and_then(Cell::mbps);
                let text = report::vs_prose(p, a).unwrap_or_else(|| "–".to_owned());
                let _ = write!(out, " {text} |");
            }
            out.push('\n');
        }
    }

    // Loading.
    let _ = writeln!(
        out,
        "\n**Model load** (median of {} loads in a fresh process; RSS = growth of the process's \
         resident set from before the first load to after it, model kept; /proc/self/statm; \
         kitoken and tokie load a `tokenizer.json`, for a `vocab.txt` the one `tokenizers` \
         writes):\n",
        opts.loads
    );
    report::table_head(
        &mut out,
        ("| model | file | MB |", "|:---|:---|---:|"),
        columns.iter().map(|c| c.label().to_owned()),
        ("", ""),
    );
    for m in results {
        report::load_lead(&mut out, &m.spec);
        for &c in &columns {
            let text = report::load_cell(m.loads.iter().find(|(i, _)| *i == c).map(|(_, l)| l));
            let _ = write!(out, " {text} |");
        }
        out.push('\n');
    }
    report::load_reasons(&mut out, results.iter(), Impl::label);

    // Differences.
    let _ = writeln!(out, "\n**Ids that differ from `tokenizers`':**\n");
    report::differences(
        &mut out,
        results,
        |row| {
            columns
                .iter()
                .filter_map(|&c| Some((c, cell_of(row, c)?)))
                .collect()
        },
        "none: every implementation that ran agreed with `tokenizers` on every text.",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        parse_args(args.iter().map(|a| (*a).to_owned()))
    }

    #[test]
    fn words_input_is_max_length_words() {
        let (name, ch, len) = WP_WORDS;
        let input = Input::words(name, ch, len, REPEAT_BYTES);
        assert!(input.one_text);
        assert!(input.bytes.abs_diff(REPEAT_BYTES) <= len);
        assert!(input.text.split(' ').all(|w| w.len() == len));
        assert!(!input.text.contains("  "));
    }

    #[test]
    fn family_option() {
        assert_eq!(parse(&[]).unwrap().family, Families::All);
        assert_eq!(parse(&["--family", "spm"]).unwrap().family, Families::Spm);
        assert_eq!(
            parse(&["--family", "wordpiece"]).unwrap().family,
            Families::WordPiece
        );
        assert_eq!(parse(&["--family", "bpe"]).unwrap().family, Families::Bpe);
        let o = parse(&["--family", "train", "--passes", "2"]).unwrap();
        assert_eq!((o.family, o.train_passes), (Families::Train, 2));
        assert_eq!(parse(&["--family", "train"]).unwrap().train_passes, 3);
        // Training is a family of its own: it selects no model family (and `all` stays as it was).
        for f in [Family::Spm, Family::WordPiece, Family::Bpe] {
            assert!(!Families::Train.has(f) && Families::All.has(f));
        }
        assert!(parse(&["--family", "nope"]).is_err());
    }

    #[test]
    fn impls_split_by_family() {
        let o = parse(&["--impls", "kitoken,simdtok"]).unwrap();
        assert_eq!(o.impls, [Impl::Simdtok, Impl::Kitoken]);
        assert_eq!(
            o.wp_impls,
            [
                Impl::Tokenizers,
                Impl::SimdtokFast,
                Impl::SimdtokLinear,
                Impl::Kitoken
            ]
        );
        // BPE: simdtok, tokenizers 1.0 and both references always.
        assert_eq!(
            o.bpe_impls,
            [
                Impl::Simdtok,
                Impl::Tokenizers1,
                Impl::TiktokenRs,
                Impl::Tokenizers,
                Impl::Kitoken
            ]
        );
        assert_eq!(parse(&[]).unwrap().bpe_impls, Impl::BPE);
        let o = parse(&["--impls", "bpe-openai"]).unwrap();
        assert_eq!(
            o.bpe_impls,
            [
                Impl::Simdtok,
                Impl::Tokenizers1,
                Impl::TiktokenRs,
                Impl::Tokenizers,
                Impl::BpeOpenai
            ]
        );
        let o = parse(&["--impls", "tokie,simdtok-linear"]).unwrap();
        assert_eq!(o.impls, [Impl::Simdtok, Impl::Tokie]);
        assert_eq!(
            o.wp_impls,
            [Impl::Tokenizers, Impl::SimdtokLinear, Impl::Tokie]
        );
        assert!(parse(&["--impls", "nope"]).is_err());
    }

    #[test]
    fn tokbench_options() {
        let o = parse(&["--family", "tokbench"]).unwrap();
        assert_eq!(o.family, Families::Tokbench);
        assert_eq!((o.runs, o.reps, o.cpu), (3, 5, None));
        assert!(o.tokbench_impls.is_none());
        // Not part of `all`, like training.
        for f in [Family::Spm, Family::WordPiece, Family::Bpe] {
            assert!(!Families::Tokbench.has(f));
        }
        let o = parse(&[
            "--family",
            "tokbench",
            "--runs",
            "1",
            "--reps",
            "3",
            "--cpu",
            "0",
            "--cache",
            "/c",
            "--impls",
            "gigatoken,kitoken",
        ])
        .unwrap();
        assert_eq!((o.runs, o.reps, o.cpu), (1, 3, Some(0)));
        assert_eq!(o.cache, Path::new("/c"));
        assert_eq!(o.tokbench_impls.unwrap(), ["gigatoken", "kitoken"]);
        // The Python engines are no implementation of the other families.
        assert_eq!(o.bpe_impls.last(), Some(&Impl::Kitoken));
        assert!(parse(&["--runs", "0"]).is_err());
        assert!(parse(&["--cpu", "x"]).is_err());
    }
}
