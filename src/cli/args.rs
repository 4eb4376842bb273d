//! Command-line options shared by several commands (flattened into each command's own).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use simdtok::kernels::TierRequest;
use simdtok::{CacheBudget, TiktokenEncoding, WordPieceAlgorithm};

/// The model and the SIMD tier to run it with.
#[derive(Args, Debug)]
pub struct ModelArgs {
    /// The model file: SentencePiece `.model`, `tokenizer.json`, `*.tiktoken` or BERT `vocab.txt`
    /// (detected from its content and name).
    #[arg(long, value_name = "PATH")]
    pub model: PathBuf,
    /// Force a SIMD tier (scalar, sse4.2, avx2, neon or auto); default: SIMDTOK_TIER, else the
    /// best the CPU supports.
    #[arg(long, value_name = "TIER")]
    pub tier: Option<TierRequest>,
    /// Say on stderr which slower paths the model takes (a pre-tokenizer regex that no
    /// hand-written scanner implements runs on the regex engine).
    #[arg(long)]
    pub verbose: bool,
    /// The most memory each thread's caches hold (e.g. 4MiB, 512KiB, 0; default: their tuned
    /// sizes, under 11 MiB a thread for BPE and WordPiece, 22 MiB for unigram). Smaller
    /// budgets cost speed, never a different id.
    #[arg(long, value_name = "SIZE", default_value = "default")]
    pub cache_budget: CacheBudget,
}

/// Options that change how a model encodes; each is refused where it would change nothing or
/// where this version cannot honour it yet (never silently ignored).
#[derive(Args, Debug)]
pub struct EncodeOptions {
    /// Add the special tokens the reference adds when asked (e.g. `<s>`, `[CLS]`).
    #[arg(long)]
    pub add_special_tokens: bool,
    /// Lowercase before WordPiece (BERT vocab.txt only; the default there).
    #[arg(long, overrides_with = "no_lowercase")]
    pub lowercase: bool,
    /// Keep the case (BERT vocab.txt only).
    #[arg(long, overrides_with = "lowercase")]
    pub no_lowercase: bool,
    /// The pre-tokenization pattern of a tiktoken rank file; default from the file name.
    #[arg(long, value_name = "NAME")]
    pub pattern: Option<Pattern>,
    /// The WordPiece encoder (vocab.txt and WordPiece tokenizer.json): `fast` (greedy, the
    /// default) or `linear` (LinMaxMatch); both give the same tokens.
    #[arg(long, value_name = "ALGORITHM")]
    pub wordpiece_algorithm: Option<WordPieceAlgorithm>,
    /// Recognise the encoding's special tokens (`<|endoftext|>`, …) in the text (tiktoken
    /// files; by default none is, as with tiktoken's `encode_ordinary`).
    #[arg(long)]
    pub allow_special: bool,
}

impl EncodeOptions {
    /// `Some(true)` for `--lowercase`, `Some(false)` for `--no-lowercase` (the last one given
    /// wins), `None` for neither.
    pub fn lowercase(&self) -> Option<bool> {
        match (self.lowercase, self.no_lowercase) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

/// The tiktoken pre-tokenization patterns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Pattern {
    /// GPT-2 / r50k_base (also `gpt2`).
    #[value(alias = "gpt2")]
    R50k,
    /// p50k_base.
    P50k,
    /// cl100k_base.
    Cl100k,
    /// o200k_base.
    O200k,
}

impl Pattern {
    /// The library's name for the encoding.
    pub fn encoding(self) -> TiktokenEncoding {
        match self {
            Pattern::R50k => TiktokenEncoding::R50k,
            Pattern::P50k => TiktokenEncoding::P50k,
            Pattern::Cl100k => TiktokenEncoding::Cl100k,
            Pattern::O200k => TiktokenEncoding::O200k,
        }
    }
}

/// How texts are laid out in the input.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// One text per line (without its `\n`, and a `\r` before it).
    Lines,
    /// One JSON object per line; the text in field `text` (or `--field`).
    Jsonl,
    /// The whole input is one text.
    Raw,
    /// Texts one after another, each ended by `--separator` (the last may lack it).
    Text,
    /// A Parquet file: the strings of column `text` (or `--field`), one text per row (the
    /// default for a `.parquet` file).
    Parquet,
}

/// Where texts come from.
#[derive(Args, Debug)]
pub struct InputArgs {
    /// The input file, or `-` for stdin (the default). `encode` takes several (repeatable):
    /// files, directories (every file below) and glob patterns (`'data/**/*.jsonl.gz'`), read
    /// one after another in the order given, each directory's and pattern's files sorted.
    #[arg(long, value_name = "PATH")]
    pub input: Vec<PathBuf>,
    /// How texts are laid out in the input.
    #[arg(long, value_enum, default_value_t = InputFormat::Lines, value_name = "FORMAT")]
    pub input_format: InputFormat,
    /// The field holding the text in `--input-format jsonl`, or the column in `parquet`
    /// (default `text`).
    #[arg(long, value_name = "NAME")]
    pub field: Option<String>,
    /// The string that ends each text in `--input-format text` (e.g. `'<|endoftext|>'`); it
    /// belongs to neither text.
    #[arg(long, value_name = "STRING")]
    pub separator: Option<String>,
}

/// Where results go.
#[derive(Args, Debug)]
pub struct OutputArgs {
    /// The output file, or `-` for stdout (the default). A file is written beside its final
    /// name and renamed into place only when the command succeeds.
    #[arg(long, value_name = "PATH")]
    pub output: Option<PathBuf>,
}

/// How the work is run: threads and the progress bar.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Worker threads (0, the default: one per core). The output is in input order whatever
    /// the number.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub threads: usize,
    /// Show a progress bar on stderr even when stderr is not a terminal.
    #[arg(long, overrides_with = "no_progress")]
    pub progress: bool,
    /// Never show a progress bar (by default it is shown when stderr is a terminal).
    #[arg(long, overrides_with = "progress")]
    pub no_progress: bool,
}

impl RunArgs {
    /// `Some(true)` for `--progress`, `Some(false)` for `--no-progress`, `None` for neither.
    pub fn progress(&self) -> Option<bool> {
        match (self.progress, self.no_progress) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}
