//! Byte-level BPE: tiktoken rank files, GPT-2's `encoder.json` + `vocab.bpe` and BPE
//! `tokenizer.json` files, with the same harness as SentencePiece and WordPiece (same process, same
//! input, one thread, ids checked against the reference before timing, medians), plus the 20 MB
//! English measurement: the first pass of a fresh process against the median of repeated passes.

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

use crate::measure::{median, time_pass_cpu};
use crate::peers::{self, Impl, ModelSpec};
use crate::report::{
    self, MORE_THAN_ONE_THREAD, Notes, cell_of, find_row, fmt_cell_marked, fmt_mbps,
    fmt_ratio_peer, ratio,
};
use crate::{
    Cell, Input, Loaded, ModelResult, Options, PROSE, Pieces, Row, Verdict, load_encoders, matches,
    probe_loads, rerun_self, run_input,
};

/// The 20 MB English text: the lines of these corpora, in this order, repeated until their bytes
/// (line ends excluded) reach [`BIG_BYTES`].
pub const BIG_NAME: &str = "en-20mb";
const BIG_SOURCES: [&str; 2] = ["en_kjv_bible", "en_jargon_file_4.4.7"];
const BIG_BYTES: usize = 20_000_000;
/// The same text as documents: runs of consecutive lines, each line with its `\n`, cut after the
/// line that brings a run to [`DOC_BYTES`] (the last run may be shorter); each run is one text.
/// Pipelines that encode documents see few calls and long texts, where per-call costs vanish.
pub const BIG_DOCS_NAME: &str = "en-20mb-docs";
const DOC_BYTES: usize = 8192;
/// The other corpora that the SentencePiece models' 20 MB measurement repeats, each alone, to
/// 20 MB of lines (issue 24's Japanese, Chinese, code and UDHR): the input's name and its corpus.
pub const SPM_BIG_OTHERS: [(&str, &str); 4] = [
    ("ja-20mb", "ja_debian_reference"),
    ("zh-20mb", "zh-cn_debian_reference"),
    ("code-20mb", "code_python311_stdlib_sample.py"),
    ("udhr-20mb", "multi_udhr_all_languages"),
];
/// The models the 20 MB measurement runs on.
const BIG_MODELS: [&str; 4] = ["cl100k_base", "o200k_base", "llama3", "gpt4o"];
/// A first pass is not run in a fresh process when the repeated passes of the same
/// implementation took longer than this per pass (seconds).
const BIG_FIRST_LIMIT_S: f64 = 60.0;

/// The one-text worst cases, 10^6 bytes each (`random-bytes`: at most 10^6).
const ONE_TEXT_BYTES: usize = 1_000_000;
const REPEATS: [(&str, char); 3] = [
    ("repeat-a", 'a'),
    ("repeat-space", ' '),
    ("repeat-中", '中'),
];
const RANDOM: &str = "random-bytes";
/// The seed of `random-bytes`' generator (splitmix64).
const RANDOM_SEED: u64 = 0x51D7_0C0B_BE11_2026;

/// Japanese and code, for the ≥ 80 MB/s target.
const JA: &str = "ja_debian_reference";
const CODE: &str = "code_python311_stdlib_sample.py";

/// The BPE inputs besides the corpora.
#[derive(Default)]
pub struct Inputs {
    /// The one-text worst cases.
    pub one_text: Vec<Input>,
    /// The 20 MB English text: line by line, then as documents.
    pub big: Vec<Input>,
}

impl Inputs {
    pub fn build(opts: &Options) -> Result<Inputs, String> {
        let mut one_text: Vec<Input> = REPEATS
            .iter()
            .filter(|(n, _)| matches(&opts.corpora, n))
            .map(|(name, ch)| Input::repeated(name, *ch, ONE_TEXT_BYTES))
            .collect();
        if matches(&opts.corpora, RANDOM) {
            one_text.push(random_input(RANDOM, ONE_TEXT_BYTES, RANDOM_SEED));
        }
        let mut big = Vec::new();
        for name in [BIG_NAME, BIG_DOCS_NAME] {
            if matches(&opts.corpora, name) {
                big.push(big_text(&opts.data, name)?);
            }
        }
        Ok(Inputs { one_text, big })
    }
}

/// One text of pseudo-random Unicode scalar values (all of them equally likely, surrogates
/// excluded: most are 4-byte characters, most of those unassigned), up to `bytes` bytes; the
/// same for every implementation and every run (splitmix64 from a fixed seed).
fn random_input(name: &str, bytes: usize, seed: u64) -> Input {
    let mut state = seed;
    let mut next = move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    const SURROGATES: u32 = 0x800;
    let mut text = String::with_capacity(bytes);
    loop {
        let v = (next() % u64::from(0x11_0000 - SURROGATES)) as u32;
        let v = if v >= 0xD800 { v + SURROGATES } else { v };
        let c = char::from_u32(v).expect("a scalar value");
        if text.len() + c.len_utf8() > bytes {
            break;
        }
        text.push(c);
    }
    Input {
        name: name.to_owned(),
        spans: std::iter::once(0..text.len()).collect(),
        bytes: text.len(),
        text,
        one_text: true,
    }
}

/// The 20 MB English text: the lines of `en_kjv_bible` then `en_jargon_file_4.4.7` (each read as
/// `simdtok encode` reads it), again and again in that order until the lines' bytes reach 20 MB;
/// each line is one text.
pub fn big_input(data: &Path) -> Result<Input, String> {
    repeated_lines(data, BIG_NAME, &BIG_SOURCES)
}

/// The text `name`: the lines of the corpora `sources` (each read as `simdtok encode` reads
/// it), again and again in that order until the lines' bytes reach 20 MB; each line one text.
fn repeated_lines(data: &Path, name: &str, sources: &[&str]) -> Result<Input, String> {
    let sources = sources
        .iter()
        .map(|n| Input::corpus(&data.join("corpora").join(format!("{n}.txt")), n, None))
        .collect::<Result<Vec<_>, _>>()?;
    let mut text = String::with_capacity(BIG_BYTES + BIG_BYTES / 16);
    let mut spans = Vec::new();
    let mut bytes = 0;
    'fill: loop {
        for source in &sources {
            if source.bytes == 0 {
                return Err(format!("{} is empty", source.name));
            }
            for span in &source.spans {
                let line = &source.text[span.clone()];
                let start = text.len();
                text.push_str(line);
                spans.push(start..text.len());
                text.push('\n');
                bytes += line.len();
                if bytes >= BIG_BYTES {
                    break 'fill;
                }
            }
        }
    }
    Ok(Input {
        name: name.to_owned(),
        text,
        spans,
        bytes,
        one_text: false,
    })
}

/// [`BIG_NAME`], [`BIG_DOCS_NAME`], or one of [`SPM_BIG_OTHERS`].
pub fn big_text(data: &Path, name: &str) -> Result<Input, String> {
    match name {
        BIG_NAME => big_input(data),
        BIG_DOCS_NAME => Ok(as_documents(big_input(data)?)),
        other => match SPM_BIG_OTHERS.iter().find(|(n, _)| *n == other) {
            Some(&(name, source)) => repeated_lines(data, name, &[source]),
            None => Err(format!("no 20 MB text is called {other}")),
        },
    }
}

/// The lines of `lines` grouped into documents of [`DOC_BYTES`] or more (see [`BIG_DOCS_NAME`]).
fn as_documents(lines: Input) -> Input {
    let mut spans = Vec::new();
    let mut start = None;
    for span in &lines.spans {
        let s = *start.get_or_insert(span.start);
        // The line with its `\n` (every line of the text is followed by one).
        let end = (span.end + 1).min(lines.text.len());
        if end - s >= DOC_BYTES {
            spans.push(s..end);
            start = None;
        }
    }
    if let (Some(s), Some(last)) = (start, lines.spans.last()) {
        spans.push(s..(last.end + 1).min(lines.text.len()));
    }
    let bytes = spans.iter().map(|r| r.len()).sum();
    Input {
        name: BIG_DOCS_NAME.to_owned(),
        text: lines.text,
        spans,
        bytes,
        one_text: false,
    }
}

/// The column heading of a BPE implementation (two versions of `tokenizers` are compared).
fn label(imp: Impl) -> &'static str {
    match imp {
        Impl::Tokenizers => "tokenizers 0.23",
        other => other.label(),
    }
}

/// The column headings of some implementations.
fn labels(columns: &[Impl]) -> impl Iterator<Item = String> + '_ {
    columns.iter().map(|&c| label(c).to_owned())
}

/// The ratio columns that close the throughput tables.
const RATIO_COLUMNS: (&str, &str) = (
    " simdtok ÷ tokenizers 1.0 | simdtok ÷ fastest peer |",
    "---:|---:|",
);

/// The first pass over the 20 MB text in fresh processes.
#[derive(Clone, Debug)]
pub(crate) enum FirstCell {
    /// Not run (why).
    Skipped(String),
    /// A child process failed (why).
    Failed(String),
    Done {
        /// MB/s of each fresh process.
        runs: Vec<f64>,
        /// CPU time ÷ wall time of the first run's pass.
        cpu_per_wall: f64,
        /// Whether the first run's ids hash to the reference's (`None`: no reference hash).
        same: Option<bool>,
    },
}

impl FirstCell {
    fn mbps(&self) -> Option<f64> {
        match self {
            FirstCell::Done { runs, .. } => Some(median(runs)),
            _ => None,
        }
    }
}

/// The 20 MB measurement of one model on one of its two forms.
pub(crate) struct Big {
    pub(crate) name: String,
    bytes: usize,
    lines: usize,
    first: Vec<(Impl, FirstCell)>,
    repeated: Vec<(Impl, Cell)>,
}

/// One model's results.
pub struct BpeResult {
    model: ModelResult,
    /// What each peer loaded, where it is not simdtok's file, and the bundled-ranks checks.
    sources: Vec<String>,
    big: Vec<Big>,
    /// Every loaded implementation on the model's committed goldens (`Err`: none for it).
    goldens: Result<Vec<crate::goldens::Outcome>, String>,
}

/// Runs every BPE model: the corpora and worst cases, then (for [`BIG_MODELS`]) the 20 MB text.
pub fn run(
    opts: &Options,
    models: &[ModelSpec],
    inputs: &[&Input],
    big: &[Input],
) -> Vec<BpeResult> {
    let mut opts = opts.clone();
    opts.vary_one_text = true;
    opts.repeat_limit_s = opts.bpe_repeat_limit_s;
    opts.cell_budget_s = opts.bpe_cell_budget_s;
    opts.passes = opts.bpe_passes;
    let opts = &opts;
    let mut results = Vec::new();
    for spec in models {
        let big = if BIG_MODELS.contains(&spec.name) {
            big
        } else {
            &[]
        };
        if inputs.is_empty() && big.is_empty() {
            continue;
        }
        let reference = spec.reference();
        eprintln!(
            "== {} ({}; reference {})",
            spec.name,
            spec.path.display(),
            label(reference)
        );
        if let Err(e) = peers::prepare_bpe(spec) {
            eprintln!("   cannot write the tokenizer.json for the Hugging Face-format peers: {e}");
        }
        // The reference first: its warm-up ids are the ones the others are checked against.
        let mut order: Vec<Impl> = vec![reference];
        order.extend(opts.bpe_impls.iter().copied().filter(|&i| i != reference));
        let loads = probe_loads(opts, &opts.bpe_impls, spec);
        let mut encoders = load_encoders(order.iter().copied(), spec);
        let goldens = crate::goldens::check(spec.name, &mut encoders);
        let sources = sources(spec, &opts.bpe_impls);
        let pieces = match peers::bpe_pieces(spec) {
            Some(table) => Some(Pieces::Table(table)),
            None => simdtok::kernels::Kernels::active()
                .ok()
                .and_then(|k| {
                    simdtok::Tokenizer::from_file_with_options(
                        &spec.path,
                        k,
                        &simdtok::LoadOptions::default(),
                    )
                    .ok()
                })
                .map(Pieces::Simdtok),
        };
        let mut rows = Vec::new();
        for input in inputs {
            let cells = run_input(opts, &mut encoders, input, reference, pieces.as_ref());
            rows.push(Row {
                input: input.name.clone(),
                bytes: input.bytes,
                lines: input.lines(),
                one_text: input.one_text,
                cells,
            });
        }
        let big = big
            .iter()
            .map(|big| run_big(opts, spec, &mut encoders, big, reference, pieces.as_ref()))
            .collect();
        results.push(BpeResult {
            model: ModelResult {
                spec: spec.clone(),
                loads,
                rows,
            },
            sources,
            big,
            goldens,
        });
    }
    results
}

/// What each peer loads for `spec` where that is not simdtok's file, and whether the ranks that
/// tiktoken-rs and bpe-openai bundle equal the local rank file.
fn sources(spec: &ModelSpec, impls: &[Impl]) -> Vec<String> {
    let file = |p: &Path| {
        p.file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned())
    };
    let mut out = Vec::new();
    for &imp in impls {
        let text = match imp {
            Impl::Simdtok => format!("`{}`", file(&spec.path)),
            Impl::TiktokenRs | Impl::BpeOpenai => {
                let Some((name, path)) = &spec.ranks else {
                    continue;
                };
                if imp == Impl::BpeOpenai && !matches!(*name, "cl100k_base" | "o200k_base") {
                    continue;
                }
                let check = match peers::bundled_ranks_match(imp, name, path) {
                    Some(Ok(true)) => "bundled ranks = local file's: yes".to_owned(),
                    Some(Ok(false)) => "bundled ranks = local file's: **no**".to_owned(),
                    Some(Err(e)) => format!("bundled ranks not checked: {e}"),
                    None => "bundles no such encoding".to_owned(),
                };
                if imp == Impl::TiktokenRs {
                    format!(
                        "`{}` (local rank file, `CoreBPE::new` with tiktoken-rs's {name} pattern; \
                         {check})",
                        file(path)
                    )
                } else {
                    format!("bundled `{name}()` ({check})")
                }
            }
            Impl::Kitoken if spec.path.extension().is_some_and(|e| e == "tiktoken") => {
                format!(
                    "`{}` (`Kitoken::from_tiktoken_file`: pattern and specials chosen by vocabulary size)",
                    file(&spec.path)
                )
            }
            Impl::Tokenizers1 | Impl::Tokenizers | Impl::Kitoken | Impl::Tokie => {
                match &spec.peer_json {
                    Some(p) if *p != spec.path => {
                        if spec.name == "gpt2" {
                            "the `tokenizer.json` that `tokenizers` 0.23 writes for `encoder.json` \
                             + `vocab.bpe`"
                                .to_owned()
                        } else {
                            format!("`{}`", file(p))
                        }
                    }
                    _ => continue,
                }
            }
            _ => continue,
        };
        out.push(format!("{}: {text}", label(imp)));
    }
    if spec.is_tokenizer_json() {
        let readers: Vec<&str> = impls
            .iter()
            .filter(|i| {
                matches!(
                    i,
                    Impl::Tokenizers1 | Impl::Tokenizers | Impl::Kitoken | Impl::Tokie
                )
            })
            .map(|&i| label(i))
            .collect();
        out.push(format!("{}: the file itself", readers.join(", ")));
    }
    out
}

/// The 20 MB text on one model: the repeated passes in this process (after the warm-up pass that
/// checks the ids), then the first pass of each implementation in fresh processes.
pub(crate) fn run_big(
    opts: &Options,
    spec: &ModelSpec,
    encoders: &mut [Loaded],
    big: &Input,
    reference: Impl,
    pieces: Option<&Pieces>,
) -> Big {
    let repeated = run_input(opts, encoders, big, reference, pieces);
    let mut first = Vec::new();
    let mut reference_hash = None;
    for (imp, cell) in &repeated {
        let result = match cell {
            Cell::NotLoaded(why) => FirstCell::Skipped(format!("cannot load: {why}")),
            Cell::Skipped(why) => FirstCell::Skipped(why.clone()),
            Cell::Done { mbps, .. } if big.bytes as f64 / mbps / 1e6 > BIG_FIRST_LIMIT_S => {
                FirstCell::Skipped(format!(
                    "a repeated pass took {:.0} s",
                    big.bytes as f64 / mbps / 1e6
                ))
            }
            Cell::Done { .. } => first_pass(
                opts,
                *imp,
                spec,
                &big.name,
                &mut reference_hash,
                *imp == reference,
            ),
        };
        match &result {
            FirstCell::Done {
                runs,
                cpu_per_wall,
                same,
            } => eprintln!(
                "   {:<28} {:<14} {:>9.2} MB/s first pass (median of {}: {})  cpu/wall {cpu_per_wall:.2}  {}",
                format!("{} first", big.name),
                imp.key(),
                median(runs),
                runs.len(),
                runs.iter()
                    .map(|r| format!("{r:.1}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                match same {
                    Some(true) | None => "",
                    Some(false) => "ids differ from the reference's",
                }
            ),
            FirstCell::Skipped(why) | FirstCell::Failed(why) => {
                eprintln!("   {} first {:<14} {why}", big.name, imp.key())
            }
        }
        first.push((*imp, result));
    }
    Big {
        name: big.name.clone(),
        bytes: big.bytes,
        lines: big.lines(),
        first,
        repeated,
    }
}

/// `opts.first_runs` fresh processes, each timing one pass over the 20 MB text `input`; the
/// first also hashes the ids (after its timed pass), which are compared with the reference's.
fn first_pass(
    opts: &Options,
    imp: Impl,
    spec: &ModelSpec,
    input: &str,
    reference_hash: &mut Option<String>,
    is_reference: bool,
) -> FirstCell {
    let mut runs = Vec::new();
    let mut cpu_per_wall = f64::NAN;
    let mut same = None;
    for run in 0..opts.first_runs {
        let verify = run == 0;
        let mode = if verify { "verify" } else { "time" };
        let answer = rerun_self(
            "the child",
            &[
                "--first-pass".as_ref(),
                imp.key().as_ref(),
                spec.name.as_ref(),
                opts.data.as_os_str(),
                input.as_ref(),
                mode.as_ref(),
            ],
        );
        let fields = match answer {
            Ok(fields) => fields,
            Err(why) => return FirstCell::Failed(why),
        };
        let [secs, cpu, bytes, hash] = fields.as_slice() else {
            return FirstCell::Failed(format!("bad answer from the child: {fields:?}"));
        };
        let (Ok(secs), Ok(cpu), Ok(bytes)) = (
            secs.parse::<f64>(),
            cpu.parse::<f64>(),
            bytes.parse::<usize>(),
        ) else {
            return FirstCell::Failed(format!("bad answer from the child: {fields:?}"));
        };
        runs.push(bytes as f64 / secs / 1e6);
        if verify {
            cpu_per_wall = cpu / secs;
            if is_reference {
                *reference_hash = Some(hash.clone());
            }
            same = reference_hash.as_deref().map(|h| h == hash);
        }
    }
    FirstCell::Done {
        runs,
        cpu_per_wall,
        same,
    }
}

/// The child side: `--first-pass IMPL MODEL DATA INPUT verify|time`. Builds the 20 MB text
/// `INPUT` ([`BIG_NAME`] or [`BIG_DOCS_NAME`]), loads the model (neither is timed), then times
/// one pass; with `verify`, a second pass hashes the ids.
/// Prints `ok\tSECONDS\tCPU_SECONDS\tBYTES\tHASH` or `err\tMESSAGE`.
pub fn first_pass_child(args: Vec<String>) -> ExitCode {
    let [key, name, data, input, mode] = args.as_slice() else {
        eprintln!("--first-pass IMPL MODEL DATA INPUT verify|time");
        return ExitCode::from(2);
    };
    let data = Path::new(data);
    // A byte-level BPE model, or a SentencePiece one (the SentencePiece family's 20 MB rows).
    let (Some(imp), Some(spec)) = (
        Impl::from_key(key),
        peers::bpe_models(data)
            .into_iter()
            .chain(peers::models(data))
            .find(|m| m.name == name),
    ) else {
        eprintln!("--first-pass: bad arguments");
        return ExitCode::from(2);
    };
    let fail = |e: String| {
        println!("err\t{}", e.replace(['\t', '\n'], " "));
        ExitCode::SUCCESS
    };
    let input = match big_text(data, input) {
        Ok(i) => i,
        Err(e) => return fail(e),
    };
    let mut enc = match peers::load(imp, &spec) {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    enc.one_thread();
    let (secs, cpu) = time_pass_cpu(enc.as_mut(), &input.text, &input.spans);
    let mut hash = 0xCBF2_9CE4_8422_2325_u64;
    if mode == "verify" {
        let mut mix = |v: u32| {
            for b in v.to_le_bytes() {
                hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3);
            }
        };
        for span in &input.spans {
            match enc.encode(&input.text[span.clone()]) {
                Ok(ids) => ids.iter().for_each(|&id| mix(id)),
                Err(_) => mix(u32::MAX - 1),
            }
            mix(u32::MAX);
        }
    }
    println!("ok\t{secs}\t{cpu}\t{}\t{hash:016x}", input.bytes);
    ExitCode::SUCCESS
}

// ---- the report ----

/// The repeated-passes cell of implementation `c` in a 20 MB row, under column heading `label`
/// (`n/a`: it could not load the model; empty: it did not run).
fn repeated_cell(big: &Big, c: Impl, label: &str, spec: &ModelSpec, notes: &mut Notes) -> String {
    big.repeated
        .iter()
        .find(|(i, _)| *i == c)
        .map_or(String::new(), |(_, cell)| match cell {
            Cell::NotLoaded(_) => "n/a".to_owned(),
            other => fmt_cell_marked(other, label, spec, notes),
        })
}

/// The 20 MB rows of a family other than byte-level BPE (SentencePiece): per model, the first
/// pass of fresh processes, the repeated passes of this process, and their ratio, one column per
/// implementation that ran.
pub(crate) fn report_big_plain(opts: &Options, rows: &[(&ModelSpec, &Big)], name: &str) -> String {
    let mut out = String::new();
    let rows: Vec<&(&ModelSpec, &Big)> = rows.iter().filter(|(_, b)| b.name == name).collect();
    let Some((_, first)) = rows.first() else {
        return out;
    };
    let mut columns: Vec<Impl> = Vec::new();
    for (_, big) in &rows {
        for (imp, _) in &big.repeated {
            if !columns.contains(imp) {
                columns.push(*imp);
            }
        }
    }
    let form = if name == BIG_DOCS_NAME {
        format!(
            "as {} documents of {DOC_BYTES} bytes or a line more",
            first.lines
        )
    } else {
        format!("as {} lines, each one text", first.lines)
    };
    let (what, sources) = match SPM_BIG_OTHERS.iter().find(|(n, _)| *n == name) {
        Some((_, source)) => (format!("`{source}`"), format!("`{source}`")),
        None => (
            "English".to_owned(),
            format!("`{}` then `{}`", BIG_SOURCES[0], BIG_SOURCES[1]),
        ),
    };
    let _ = writeln!(
        out,
        "\n**20 MB of {what}, first pass vs repeated passes** (`{name}`: the lines of {sources}, \
         repeated until they reach 20 MB ({} bytes), {form}). *First*: the median of \
         {} fresh process{} of this binary (`--first-pass`), each building the text and loading \
         the model (neither timed), then timing its first pass; the first one's ids are hashed \
         and compared with simdtok's (`≠`: different). *Repeated*: the median of {} passes in \
         this process after the warm-up pass that checks every text's ids. MB/s:\n",
        first.bytes,
        opts.first_runs,
        if opts.first_runs == 1 { "" } else { "es" },
        opts.passes
    );
    let _ = write!(out, "| model | pass |");
    for c in &columns {
        let _ = write!(out, " {} |", c.label());
    }
    let _ = write!(out, "\n|:---|:---|");
    for _ in &columns {
        let _ = write!(out, "---:|");
    }
    out.push('\n');
    let mut notes = Notes::default();
    for (spec, big) in rows {
        let first_of = |i: Impl| {
            big.first
                .iter()
                .find(|(c, _)| *c == i)
                .and_then(|(_, f)| f.mbps())
        };
        let _ = write!(out, "| `{}` | first |", spec.name);
        for &c in &columns {
            let text = match big.first.iter().find(|(i, _)| *i == c).map(|(_, f)| f) {
                Some(FirstCell::Done { runs, same, .. }) => {
                    let mut s = fmt_mbps(median(runs));
                    if *same == Some(false) {
                        s.push_str(" ≠");
                    }
                    s
                }
                Some(FirstCell::Skipped(why)) | Some(FirstCell::Failed(why)) => {
                    format!("—{}", notes.mark(&format!("{}: {why}", c.label())))
                }
                None => String::new(),
            };
            let _ = write!(out, " {text} |");
        }
        let _ = write!(out, "\n| | repeated |");
        for &c in &columns {
            let text = repeated_cell(big, c, c.label(), spec, &mut notes);
            let _ = write!(out, " {text} |");
        }
        let _ = write!(out, "\n| | repeated ÷ first |");
        for &c in &columns {
            let _ = write!(
                out,
                " {} |",
                ratio(cell_of_cells(&big.repeated, c), first_of(c))
            );
        }
        out.push('\n');
    }
    notes.write(&mut out);
    out
}

/// A BPE cell: [`fmt_cell_marked`] under this section's column heading.
fn fmt_cell_bpe(cell: &Cell, imp: Impl, spec: &ModelSpec, notes: &mut Notes) -> String {
    fmt_cell_marked(cell, label(imp), spec, notes)
}

/// The fastest peer (any implementation but simdtok) of a row: (implementation, MB/s, ids differ).
fn fastest_peer<'a>(cells: impl Iterator<Item = &'a (Impl, Cell)>) -> Option<(Impl, f64, bool)> {
    report::fastest(
        cells
            .filter(|(i, _)| *i != Impl::Simdtok)
            .map(|(i, c)| (*i, c)),
    )
}

fn impl_text(imp: Impl, tier: &str) -> String {
    match imp {
        Impl::Simdtok => format!(
            "the `{tier}` tier, `Tokenizer::from_file_with_options(path, Kernels::active()?, \
             &LoadOptions::default())` on the `.tiktoken` file, GPT-2's `encoder.json` or the \
             `tokenizer.json`; `encode_ids_into` with a reused vector (ids only, no special \
             tokens: tiktoken's `encode_ordinary`)"
        ),
        Impl::Tokenizers1 => "**the peer the issue measures simdtok against** (not a \
                              reference: its word cache keys long words by a 64-bit hash and its \
                              vocabulary keeps a 32-bit digest of each token, and it gives wrong \
                              ids on the goldens' digest-collision cases): Hugging Face \
                              `tokenizers` **1.0.0-rc.3** (the newest 1.0 release candidate on \
                              crates.io, the `tk-encode` engine; default features off, `bpe`, \
                              `normalizers`, `regex`), `from_json_file`, or for a file in the \
                              pre-2.0 format (all of these) `canonicalize_file` then `from_json` \
                              (in the load time); `PipelineTokenizer::encode_into` with \
                              `add_special_tokens: false`, truncation and padding off, into a \
                              reused vector (its allocation-free call). It keeps a word cache \
                              across calls"
            .to_owned(),
        Impl::TiktokenRs => "**the reference of the tiktoken and GPT-2 models**: `tiktoken-rs` \
                             0.12.1 (the Rust port of tiktoken), `CoreBPE::new` on the local \
                             rank file with the pattern and special tokens of the crate's own \
                             constructor for that encoding (GPT-2: r50k_base, its ranks); \
                             `encode_ordinary`"
            .to_owned(),
        Impl::Tokenizers => "**the reference of the `tokenizer.json` models**: Hugging Face \
                             `tokenizers` 0.23.2 (newest stable; default features off, \
                             `onig`, the regex backend of its Python package), `Tokenizer::from_file`, truncation and padding off; \
                             `encode_fast(text, false)`"
            .to_owned(),
        Impl::BpeOpenai => "`bpe-openai` 0.3.2 (github/rust-gems' exact linear-time BPE over \
                            its own regex pre-tokenizer), its bundled `cl100k_base()` and \
                            `o200k_base()`: nothing else; `encode`. Its models are process-wide \
                            statics, so its load time is the first load's"
            .to_owned(),
        Impl::Kitoken => "`kitoken` 0.11.1: `Kitoken::from_tiktoken_file` on a `.tiktoken` \
                          file, else `Definition::from_tokenizers_file` on the `tokenizer.json` \
                          (padding and truncation removed) and `Kitoken::from_definition`; \
                          `encode(text, false)`"
            .to_owned(),
        Impl::Tokie => "`tokie` 0.1.4: `Tokenizer::from_json` on the `tokenizer.json`, \
                        `no_truncation().no_padding()`; `encode_ids(text, false)`; kept on \
                        one thread as in the WordPiece section"
            .to_owned(),
        _ => String::new(),
    }
}

pub fn report(opts: &Options, results: &[BpeResult], seconds: f64) -> String {
    let mut out = String::new();
    let mut notes = Notes::default();
    let tier = simdtok::kernels::Kernels::active().map_or("?".to_owned(), |k| k.tier().to_string());
    report::preamble(&mut out, &tier, seconds);
    let _ = writeln!(
        out,
        "Byte-level BPE (and Llama 2's SentencePiece-style BPE `tokenizer.json`), ids only, no \
         special tokens. MB/s = 10^6 input bytes (line ends excluded) / median seconds of {} \
         timed passes{}, one thread, after a warm-up pass that also checks every text's ids \
         against **the reference: `tiktoken-rs` for the tiktoken rank files and GPT-2, \
         `tokenizers` 0.23.2 for the `tokenizer.json` files**. Texts are the lines of each \
         corpus{}; `repeat-a`, `repeat-space` and `repeat-中` are 10^6 bytes of one character as \
         one text, `random-bytes` is one text of up to 10^6 bytes of pseudo-random Unicode \
         scalar values (splitmix64, seed {RANDOM_SEED:#x}, uniform over all scalar values but \
         the surrogates: mostly unassigned 4-byte characters). **Timed pass k of a one-text \
         input encodes it less its last k characters**, so that no pass finds the previous \
         one's whole word in a cache (`tokenizers` 1.0 caches words: encoding the same 1 MB of \
         `a` again takes it 1 ms); the warm-up pass checks the whole text. A one-text input is \
         skipped for an implementation whose pass is estimated (from 16 and 64 KiB prefixes) to \
         take over {} s. `≠N`: ids differ from the reference's on N texts (listed below); `n/a [k]`: \
         cannot load the model, note k says why. Ratios: simdtok MB/s ÷ `tokenizers` 1.0's and ÷ \
         the fastest peer's (any peer, references included, agreeing or not; `≠` if its ids \
         differ).",
        opts.bpe_passes,
        report::round_robin(opts.bpe_passes),
        report::quick_cut(opts.quick),
        opts.bpe_repeat_limit_s,
    );
    out.push('\n');
    let columns: Vec<Impl> = Impl::BPE
        .into_iter()
        .filter(|i| opts.bpe_impls.contains(i))
        .collect();
    let _ = writeln!(out, "Implementations:\n");
    for &imp in &columns {
        let _ = writeln!(out, "- {}: {}", label(imp), impl_text(imp, &tier));
    }

    // What each implementation loads.
    let _ = writeln!(
        out,
        "\n**Models** (what each implementation loads where it is not simdtok's file; a \
         `tokenizer.json` named for a tiktoken encoding is that encoding's, so its ids are \
         checked against `tiktoken-rs`' on the same texts):\n"
    );
    let _ = writeln!(out, "| model | reference | loads |\n|:---|:---|:---|");
    for r in results {
        let spec = &r.model.spec;
        let loads = &r.sources;
        let _ = writeln!(
            out,
            "| `{}` ({}) | {} | {} |",
            spec.name,
            spec.algorithm,
            label(spec.reference()),
            loads.join("; ")
        );
    }
    out.push('\n');

    // Throughput.
    report::table_head(
        &mut out,
        ("| model | input | MB | texts |", "|:---|:---|---:|---:|"),
        labels(&columns),
        RATIO_COLUMNS,
    );
    for r in results {
        let m = &r.model;
        for (k, row) in m.rows.iter().enumerate() {
            let model = if k == 0 {
                format!("`{}`", m.spec.name)
            } else {
                String::new()
            };
            report::row_lead(&mut out, &model, row);
            for &c in &columns {
                let cell = cell_of(row, c)
                    .map_or(String::new(), |x| fmt_cell_bpe(x, c, &m.spec, &mut notes));
                let _ = write!(out, " {cell} |");
            }
            let s = cell_of(row, Impl::Simdtok).and_then(Cell::mbps);
            let t1 = cell_of(row, Impl::Tokenizers1).and_then(Cell::mbps);
            let _ = writeln!(
                out,
                " {} | {} |",
                ratio(s, t1),
                fmt_ratio_peer(s, fastest_peer(row.cells.iter()), label)
            );
        }
    }
    notes.write(&mut out);

    // The 20 MB text: first pass against repeated passes.
    for name in [BIG_NAME, BIG_DOCS_NAME] {
        if results.iter().any(|r| r.big.iter().any(|b| b.name == name)) {
            out.push_str(&report_big(opts, results, &columns, name));
        }
    }

    // The worst cases against prose.
    let _ = writeln!(
        out,
        "\n**Worst cases vs prose** (prose = `{PROSE}` line by line, same model; per-byte time ÷ \
         prose's, lower is better; the issue's target for simdtok: within 3×):\n"
    );
    report::table_head(
        &mut out,
        ("| model | input |", "|:---|:---|"),
        labels(&columns),
        (" simdtok within 3× |", ":---:|"),
    );
    for r in results {
        let m = &r.model;
        let prose = find_row(m, PROSE);
        for row in m.rows.iter().filter(|r| r.one_text) {
            let _ = write!(out, "| `{}` | `{}` |", m.spec.name, row.input);
            let mut simdtok_ok = "?";
            for &c in &columns {
                let p = prose.and_then(|r| cell_of(r, c)).and_then(Cell::mbps);
                let a = cell_of(row, c).and_then(Cell::mbps);
                if c == Impl::Simdtok
                    && let (Some(p), Some(a)) = (p, a)
                    && a > 0.0
                {
                    simdtok_ok = if p / a <= 3.0 { "yes" } else { "**no**" };
                }
                let text = report::vs_prose(p, a).unwrap_or_else(|| match cell_of(row, c) {
                    Some(Cell::Skipped(_)) => "skipped".to_owned(),
                    _ => "–".to_owned(),
                });
                let _ = write!(out, " {text} |");
            }
            let _ = writeln!(out, " {simdtok_ok} |");
        }
    }

    out.push_str(&report_targets(results));
    out.push_str(&report_loads(opts, results, &columns));
    out.push_str(&report_differences(results, &columns));
    out.push_str(&report_goldens(results, &columns));
    out
}

/// Every implementation against the committed goldens' edge cases: a table of the cases whose
/// ids differ, per model.
fn report_goldens(results: &[BpeResult], columns: &[Impl]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n**Against the committed goldens** (`tests/golden/bpe/<model>.jsonl.gz`, ids from \
         tiktoken 0.14.0 for the rank files and GPT-2, `tokenizers` 0.23.3 for the \
         `tokenizer.json` files; their edge cases that carry text and ids, each encoded once by \
         every implementation that loaded the model, `tokenizers` 1.0 included; cells: cases \
         whose ids differ, of all, then `+k` cases that differ in texts holding special-token \
         syntax (`<|`, `<s>`, `</s>`, `<unk>`), where an API that matches added tokens in the \
         text and tiktoken's `encode_ordinary` differ by design; the names of up to {} of the \
         others below the table):\n",
        crate::MORE_EXAMPLES + 1
    );
    let _ = writeln!(
        out,
        "| model | {} |\n|:---|{}",
        labels(columns).collect::<Vec<_>>().join(" | "),
        "---:|".repeat(columns.len())
    );
    let mut named = Vec::new();
    for r in results {
        let name = r.model.spec.name;
        let outcomes = match &r.goldens {
            Ok(o) => o,
            Err(e) => {
                let _ = writeln!(out, "| `{name}` | {e} |");
                continue;
            }
        };
        let _ = write!(out, "| `{name}` |");
        for &c in columns {
            let cell = outcomes
                .iter()
                .find(|o| o.imp == c)
                .map_or("–".to_owned(), |o| {
                    if !o.differ.is_empty() {
                        named.push((name, c, &o.differ));
                    }
                    let special = if o.special.is_empty() {
                        String::new()
                    } else {
                        format!(" +{}", o.special.len())
                    };
                    format!("{} of {}{special}", o.differ.len(), o.cases)
                });
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    for (model, imp, differ) in named {
        let shown: Vec<String> = differ
            .iter()
            .take(crate::MORE_EXAMPLES + 1)
            .map(|n| format!("`{n}`"))
            .collect();
        let _ = writeln!(out, "- {} on `{model}`: {}", label(imp), shown.join(", "));
    }
    out
}

/// The table of one 20 MB text (`name`): first pass of a fresh process and median of repeated
/// passes.
fn report_big(opts: &Options, results: &[BpeResult], columns: &[Impl], name: &str) -> String {
    let mut out = String::new();
    let with_big: Vec<(&BpeResult, &Big)> = results
        .iter()
        .filter_map(|r| r.big.iter().find(|b| b.name == name).map(|b| (r, b)))
        .collect();
    let (bytes, lines) = with_big.first().map_or((0, 0), |(_, b)| (b.bytes, b.lines));
    let what = if name == BIG_DOCS_NAME {
        format!(
            "\n**20 MB of English as documents, first pass vs repeated passes** (`{name}`: the \
             text of `{BIG_NAME}` with its line ends, cut into {lines} documents of {DOC_BYTES} \
             bytes or a line more, {bytes} bytes; each document one text)."
        )
    } else {
        format!(
            "\n**20 MB of English, first pass vs repeated passes** (`{name}`: the lines of \
             `{}` then `{}`, repeated in that order until their bytes reach 20 MB: {bytes} bytes \
             in {lines} lines, each line one text, so each distinct line occurs about {:.1} \
             times).",
            BIG_SOURCES[0],
            BIG_SOURCES[1],
            bytes as f64 / (4_298_239.0 + 1_681_817.0),
        )
    };
    let _ = writeln!(
        out,
        "{what} *First*: the median of {} fresh process{} of this binary (`--first-pass`), each \
         building the text, loading the model (neither timed), then timing its first pass; the \
         first one's ids are then hashed and compared with the reference's first pass (`≠`: \
         different). *Repeated*: the median of {} passes in this process after the warm-up pass \
         that checks every text's ids, so word caches are warm. MB/s:\n",
        opts.first_runs,
        if opts.first_runs == 1 { "" } else { "es" },
        opts.bpe_passes
    );
    report::table_head(
        &mut out,
        ("| model | pass |", "|:---|:---|"),
        labels(columns),
        RATIO_COLUMNS,
    );
    let mut notes = Notes::default();
    for (r, big) in &with_big {
        let spec = &r.model.spec;
        // First pass.
        let _ = write!(out, "| `{}` | first |", spec.name);
        for &c in columns {
            let text = match big.first.iter().find(|(i, _)| *i == c).map(|(_, f)| f) {
                Some(FirstCell::Done {
                    runs,
                    cpu_per_wall,
                    same,
                }) => {
                    let mut s = fmt_mbps(median(runs));
                    if *cpu_per_wall > MORE_THAN_ONE_THREAD {
                        s += &notes.mark(&format!(
                            "{} used more than one thread in its first pass: CPU time \
                             {cpu_per_wall:.2}× wall time",
                            label(c)
                        ));
                    }
                    if *same == Some(false) {
                        s.push_str(" ≠");
                    }
                    s
                }
                Some(FirstCell::Skipped(why)) => {
                    if why.starts_with("cannot load") {
                        "n/a".to_owned()
                    } else {
                        format!("skipped{}", notes.mark(why))
                    }
                }
                Some(FirstCell::Failed(why)) => format!(
                    "failed{}",
                    notes.mark(&format!("{}'s first-pass process: {why}", label(c)))
                ),
                None => String::new(),
            };
            let _ = write!(out, " {text} |");
        }
        let first_of = |i: Impl| {
            big.first
                .iter()
                .find(|(c, _)| *c == i)
                .and_then(|(_, f)| f.mbps())
        };
        let s = first_of(Impl::Simdtok);
        let fastest = big
            .first
            .iter()
            .filter(|(i, _)| *i != Impl::Simdtok)
            .filter_map(|(i, f)| {
                let differs = matches!(
                    f,
                    FirstCell::Done {
                        same: Some(false),
                        ..
                    }
                );
                Some((*i, f.mbps()?, differs))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let _ = writeln!(
            out,
            " {} | {} |",
            ratio(s, first_of(Impl::Tokenizers1)),
            fmt_ratio_peer(s, fastest, label)
        );
        // Repeated passes.
        let _ = write!(out, "| | repeated |");
        for &c in columns {
            let text = repeated_cell(big, c, label(c), spec, &mut notes);
            let _ = write!(out, " {text} |");
        }
        let s = cell_of_cells(&big.repeated, Impl::Simdtok);
        let t1 = cell_of_cells(&big.repeated, Impl::Tokenizers1);
        let _ = writeln!(
            out,
            " {} | {} |",
            ratio(s, t1),
            fmt_ratio_peer(s, fastest_peer(big.repeated.iter()), label)
        );
        // Repeated ÷ first.
        let _ = write!(out, "| | repeated ÷ first |");
        for &c in columns {
            let f = first_of(c);
            let rep = cell_of_cells(&big.repeated, c);
            let _ = write!(out, " {} |", ratio(rep, f));
        }
        let _ = writeln!(out, " | |");
    }
    notes.write(&mut out);
    out
}

fn cell_of_cells(cells: &[(Impl, Cell)], imp: Impl) -> Option<f64> {
    cells
        .iter()
        .find(|(i, _)| *i == imp)
        .and_then(|(_, c)| c.mbps())
}

/// The goals, measured: one row per model.
fn report_targets(results: &[BpeResult]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n**Against the goals of the issue** (simdtok; `**no**` where a goal is missed; English \
         = the first pass over `{BIG_NAME}`, the ratio in the same run; the same as documents, \
         `{BIG_DOCS_NAME}`, beside it; worst cases: per-byte time ÷ `{PROSE}`'s):\n\n| model | \
         English first pass ≥ 150 MB/s | ≥ 2× tokenizers 1.0 | as documents: first pass, ÷ \
         tokenizers 1.0 | Japanese ≥ 80 MB/s | code ≥ 80 MB/s | worst cases within 3× |\n\
         |:---|---:|---:|---:|---:|---:|:---|"
    );
    let verdict = |ok: bool| if ok { "" } else { " **no**" };
    for r in results {
        let spec = &r.model.spec;
        let first_on = |name: &str, i: Impl| {
            r.big.iter().find(|b| b.name == name).and_then(|big| {
                big.first
                    .iter()
                    .find(|(c, _)| *c == i)
                    .and_then(|(_, f)| f.mbps())
            })
        };
        let first = |i: Impl| first_on(BIG_NAME, i);
        let s = first(Impl::Simdtok);
        let t1 = first(Impl::Tokenizers1);
        let documents = match (
            first_on(BIG_DOCS_NAME, Impl::Simdtok),
            first_on(BIG_DOCS_NAME, Impl::Tokenizers1),
        ) {
            (Some(s), Some(t)) => {
                format!("{}, {:.2}×{}", fmt_mbps(s), s / t, verdict(s / t >= 2.0))
            }
            (Some(s), None) => fmt_mbps(s),
            _ => "–".to_owned(),
        };
        let english = s.map_or("–".to_owned(), |s| {
            format!("{}{}", fmt_mbps(s), verdict(s >= 150.0))
        });
        let versus = match (s, t1) {
            (Some(s), Some(t)) => format!("{:.2}×{}", s / t, verdict(s / t >= 2.0)),
            _ => "–".to_owned(),
        };
        let corpus = |input: &str| {
            find_row(&r.model, input)
                .and_then(|row| cell_of(row, Impl::Simdtok))
                .and_then(Cell::mbps)
                .map_or("–".to_owned(), |v| {
                    format!("{}{}", fmt_mbps(v), verdict(v >= 80.0))
                })
        };
        let prose = find_row(&r.model, PROSE)
            .and_then(|row| cell_of(row, Impl::Simdtok))
            .and_then(Cell::mbps);
        let worst: Vec<String> = r
            .model
            .rows
            .iter()
            .filter(|row| row.one_text)
            .filter_map(|row| {
                let p = prose?;
                let a = cell_of(row, Impl::Simdtok).and_then(Cell::mbps)?;
                Some(format!(
                    "`{}` {:.2}×{}",
                    row.input,
                    p / a,
                    verdict(p / a <= 3.0)
                ))
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | {english} | {versus} | {documents} | {} | {} | {} |",
            spec.name,
            corpus(JA),
            corpus(CODE),
            if worst.is_empty() {
                "–".to_owned()
            } else {
                worst.join(", ")
            }
        );
    }
    out
}

fn report_loads(opts: &Options, results: &[BpeResult], columns: &[Impl]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n**Model load** (median of {} loads in a fresh process, bpe-openai: the first; RSS = \
         growth of the process's resident set from before the first load to after it, model \
         kept; /proc/self/statm; each implementation loads what the Models table says):\n",
        opts.loads
    );
    report::table_head(
        &mut out,
        ("| model | file | MB |", "|:---|:---|---:|"),
        labels(columns),
        ("", ""),
    );
    for r in results {
        let m = &r.model;
        report::load_lead(&mut out, &m.spec);
        for &c in columns {
            let text = report::load_cell(m.loads.iter().find(|(i, _)| *i == c).map(|(_, l)| l));
            let _ = write!(out, " {text} |");
        }
        out.push('\n');
    }
    report::load_reasons(&mut out, results.iter().map(|r| &r.model), label);
    out
}

fn report_differences(results: &[BpeResult], columns: &[Impl]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n**Ids that differ from the reference's** (each cell: how many texts, then up to {} of \
         them):\n",
        crate::MORE_EXAMPLES + 1
    );
    let mut any = false;
    for r in results {
        let m = &r.model;
        let big_rows = r
            .big
            .iter()
            .map(|b| (b.name.as_str(), b.lines, false, &b.repeated));
        let rows = m
            .rows
            .iter()
            .map(|row| (row.input.as_str(), row.lines, row.one_text, &row.cells))
            .chain(big_rows);
        for (input, _, one_text, cells) in rows {
            for &c in columns {
                let Some(Cell::Done {
                    verdict:
                        Verdict::Differs {
                            lines,
                            total,
                            example,
                            more,
                        },
                    ..
                }) = cells.iter().find(|(i, _)| *i == c).map(|(_, cell)| cell)
                else {
                    continue;
                };
                any = true;
                let _ = writeln!(
                    out,
                    "- {} on `{}` × `{input}` (reference {}): {}.",
                    label(c),
                    m.spec.name,
                    label(m.spec.reference()),
                    report::texts_differ(one_text, *lines, *total)
                );
                for e in std::iter::once(example).chain(more) {
                    let _ = writeln!(out, "  - {e}");
                }
            }
        }
        for big in &r.big {
            for (imp, f) in &big.first {
                if let FirstCell::Done {
                    same: Some(false), ..
                } = f
                {
                    any = true;
                    let _ = writeln!(
                        out,
                        "- {} on `{}` × `{}`, first pass in a fresh process: the ids' \
                         hash differs from the reference's first pass.",
                        label(*imp),
                        m.spec.name,
                        big.name
                    );
                }
            }
        }
    }
    if !any {
        let _ = writeln!(
            out,
            "none: every implementation that ran agreed with its model's reference on every text."
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plain_twenty_mb_table_has_first_repeated_and_their_ratio_per_model() {
        let opts = crate::parse_args(["--family", "spm"].into_iter().map(String::from)).unwrap();
        let spec = peers::models(Path::new("/nowhere")).remove(0);
        let done = |mbps| Cell::Done {
            mbps,
            passes: 5,
            reduced: false,
            verdict: Verdict::Same,
            cpu_per_wall: Some(1.0),
        };
        let big = Big {
            name: BIG_NAME.to_owned(),
            bytes: 20_000_000,
            lines: 250_000,
            first: vec![
                (
                    Impl::Simdtok,
                    FirstCell::Done {
                        runs: vec![100.0, 80.0, 120.0],
                        cpu_per_wall: 1.0,
                        same: Some(true),
                    },
                ),
                (
                    Impl::SpmCpp,
                    FirstCell::Done {
                        runs: vec![3.0],
                        cpu_per_wall: 1.0,
                        same: Some(false),
                    },
                ),
            ],
            repeated: vec![(Impl::Simdtok, done(150.0)), (Impl::SpmCpp, done(3.0))],
        };
        let table = report_big_plain(&opts, &[(&spec, &big)], BIG_NAME);
        assert!(
            table.contains(&format!("| `{}` | first | 100 | 3.00 ≠ |", spec.name)),
            "{table}"
        );
        assert!(table.contains("| | repeated | 150 | 3.00 |"), "{table}");
        assert!(
            table.contains("| | repeated ÷ first | 1.50× | 1.00× |"),
            "{table}"
        );
        // Another input's rows are not this table's.
        assert!(report_big_plain(&opts, &[(&spec, &big)], BIG_DOCS_NAME).is_empty());
    }

    #[test]
    fn documents_are_runs_of_whole_lines_covering_the_text() {
        // Lines of assorted lengths, each followed by a line end, as `big_input` builds them.
        let mut text = String::new();
        let mut spans = Vec::new();
        for i in 0..5000usize {
            let start = text.len();
            text.push_str(&"word ".repeat(i * 7 % 60));
            spans.push(start..text.len());
            text.push('\n');
        }
        let bytes = spans.iter().map(|r: &std::ops::Range<usize>| r.len()).sum();
        let lines = Input {
            name: BIG_NAME.to_owned(),
            text: text.clone(),
            spans: spans.clone(),
            bytes,
            one_text: false,
        };
        let docs = as_documents(lines);
        assert_eq!(docs.name, BIG_DOCS_NAME);
        assert_eq!(docs.bytes, text.len());
        // Back to back from the start to the end, each ending with a line end, each but the
        // last of at least DOC_BYTES, and no longer than needed to reach them.
        assert_eq!(docs.spans.first().unwrap().start, 0);
        assert_eq!(docs.spans.last().unwrap().end, text.len());
        for (i, d) in docs.spans.iter().enumerate() {
            assert!(docs.text[d.clone()].ends_with('\n'), "{i}");
            if i + 1 < docs.spans.len() {
                assert_eq!(d.end, docs.spans[i + 1].start);
                assert!(d.len() >= DOC_BYTES, "{i}");
                let without_last_line = docs.text[d.start..d.end - 1].rfind('\n').unwrap() + 1;
                assert!(without_last_line < DOC_BYTES, "{i}");
            }
        }
    }

    #[test]
    fn the_other_twenty_mb_texts_repeat_one_corpus_line_by_line() {
        let data = std::env::temp_dir().join(format!("bench-peers-big-{}", std::process::id()));
        std::fs::create_dir_all(data.join("corpora")).unwrap();
        let lines = ["日本語の行", "", "二行目です。", "third line"];
        std::fs::write(
            data.join("corpora/ja_debian_reference.txt"),
            lines.join("\n") + "\n",
        )
        .unwrap();
        let input = big_text(&data, "ja-20mb").unwrap();
        assert_eq!(input.name, "ja-20mb");
        assert!(!input.one_text);
        assert!(input.bytes >= BIG_BYTES && input.bytes < BIG_BYTES + 32);
        for (i, span) in input.spans.iter().enumerate() {
            assert_eq!(
                &input.text[span.clone()],
                lines[i % lines.len()],
                "line {i}"
            );
        }
        assert!(big_text(&data, "xx-20mb").is_err());
        // A corpus that is absent is an error, not an empty text.
        assert!(big_text(&data, "zh-20mb").is_err());
        std::fs::remove_dir_all(&data).unwrap();
    }

    #[test]
    fn random_input_is_fixed_valid_and_about_a_megabyte() {
        let a = random_input(RANDOM, ONE_TEXT_BYTES, RANDOM_SEED);
        let b = random_input(RANDOM, ONE_TEXT_BYTES, RANDOM_SEED);
        assert_eq!(a.text, b.text);
        assert!(a.bytes <= ONE_TEXT_BYTES && a.bytes > ONE_TEXT_BYTES - 4);
        assert!(a.one_text);
        // Characters from every plane and every UTF-8 length.
        for len in 1..=4 {
            assert!(a.text.chars().any(|c| c.len_utf8() == len), "{len}");
        }
        assert!(a.text.chars().any(|c| c as u32 > 0x10_0000));
    }
}
