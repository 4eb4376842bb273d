//! `simdtok train-bpe`: trains a BPE model on the texts of one or more inputs and writes it as a
//! `tokenizer.json` or a tiktoken rank file.
//!
//! The inputs are read as `encode` reads them (same formats, same errors naming file and line),
//! on `encode`'s engine: worker threads cut their blocks' texts into words and count them, each
//! into its own table, and the tables are added together at the end; only unique words and
//! their counts are kept, so a corpus larger than memory is fine. The merges then run on one
//! thread (see [`simdtok::train::greedy`]), the same for any `--threads`.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use simdtok::kernels::{Kernels, TierRequest};
use simdtok::train::{self, Counter, Counting, PreTokenizer, Settings, WordCounts};

use super::args::{InputArgs, InputFormat, OutputArgs, RunArgs};
use super::driver::{BLOCK_BYTES, Workers, no_whole_batch};
use super::output::Output;
use super::progress::Progress;
use super::{CliResult, Failure, input};

/// The pre-tokenizers, by their command-line names.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum PreTokenizerArg {
    /// Byte-level, GPT-2's split.
    Gpt2,
    /// Byte-level, cl100k's split (Llama 3, gpt-3.5/4).
    Cl100k,
    /// Byte-level, o200k's split (gpt-4o).
    O200k,
    /// Hugging Face's `Whitespace` (`\w+|[^\w\s]+`), over characters.
    Whitespace,
}

impl From<PreTokenizerArg> for PreTokenizer {
    fn from(arg: PreTokenizerArg) -> PreTokenizer {
        match arg {
            PreTokenizerArg::Gpt2 => PreTokenizer::Gpt2,
            PreTokenizerArg::Cl100k => PreTokenizer::Cl100k,
            PreTokenizerArg::O200k => PreTokenizer::O200k,
            PreTokenizerArg::Whitespace => PreTokenizer::Whitespace,
        }
    }
}

/// How pairs are counted.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum CountingArg {
    /// Every adjacent pair (`aaa` holds two `aa`), as `tokenizers`, `sentencepiece` and
    /// tiktoken's trainer count.
    Windows,
    /// A run of k equal symbols holds ⌊k/2⌋ pairs (the paper's count, YouTokenToMe's).
    NonOverlapping,
}

/// The output formats.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TrainFormat {
    /// A Hugging Face `tokenizer.json`.
    #[value(name = "tokenizer.json")]
    TokenizerJson,
    /// A tiktoken rank file (byte-level pre-tokenizers only).
    Tiktoken,
}

/// The options of `train-bpe`.
#[derive(Args, Debug)]
pub struct TrainArgs {
    /// An input file (`-` for stdin); repeat for several, read in order.
    #[arg(long, value_name = "PATH", required = true)]
    input: Vec<PathBuf>,
    /// How texts are laid out in the inputs.
    #[arg(long, value_enum, default_value_t = InputFormat::Lines, value_name = "FORMAT")]
    input_format: InputFormat,
    /// The field holding the text in `--input-format jsonl` (default `text`).
    #[arg(long, value_name = "NAME")]
    field: Option<String>,
    /// The vocabulary size: special tokens, alphabet and merged tokens.
    #[arg(long, value_name = "N", required_unless_present = "exact")]
    vocab_size: Option<usize>,
    /// Instead of training: search the optimal sequence of at most `--merges` merges of a tiny
    /// input (Zouhar et al.'s exact search) and print its compression utility next to the
    /// greedy sequence's.
    #[arg(
        long,
        requires = "merges",
        conflicts_with_all = ["vocab_size", "format", "min_frequency", "max_token_length", "special_tokens"]
    )]
    exact: bool,
    /// With `--exact`: the most merges.
    #[arg(long, value_name = "M", requires = "exact")]
    merges: Option<usize>,
    /// Stop when the most frequent pair occurs fewer times than this.
    #[arg(long, default_value_t = 0, value_name = "F")]
    min_frequency: u64,
    /// A special token (ids from 0, in the order given); repeat for several. Taken out of the
    /// texts before they are cut into words, so never merged with or inside.
    #[arg(long = "special-token", value_name = "TOKEN")]
    special_tokens: Vec<String>,
    /// How texts are cut into words.
    #[arg(long, value_enum, default_value_t = PreTokenizerArg::Cl100k, value_name = "NAME")]
    pre_tokenizer: PreTokenizerArg,
    /// A merge forms a pair only if it covers fewer characters than this (as `tokenizers`'
    /// `max_token_length`).
    #[arg(long, value_name = "L")]
    max_token_length: Option<usize>,
    /// How pairs are counted.
    #[arg(long, value_enum, default_value_t = CountingArg::Windows, value_name = "MODE")]
    counting: CountingArg,
    /// The output's format.
    #[arg(long, value_enum, default_value_t = TrainFormat::TokenizerJson, value_name = "FORMAT")]
    format: TrainFormat,
    /// Force a SIMD tier for the pre-tokenizer (scalar, sse4.2, avx2, neon or auto).
    #[arg(long, value_name = "TIER")]
    tier: Option<TierRequest>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs `train-bpe`.
pub fn run(args: TrainArgs) -> CliResult {
    if args.exact {
        return run_exact(&args);
    }
    let Some(vocab_size) = args.vocab_size else {
        return Err(Failure::usage("train-bpe needs --vocab-size N"));
    };
    if args.output.output.is_none() {
        return Err(Failure::usage(
            "train-bpe needs --output PATH (`-` for stdout)",
        ));
    }
    let pre_tokenizer: PreTokenizer = args.pre_tokenizer.into();
    if matches!(args.format, TrainFormat::Tiktoken) && !pre_tokenizer.byte_level() {
        return Err(Failure::usage(train::TrainError::NotByteLevel));
    }
    if args.special_tokens.iter().any(String::is_empty) {
        return Err(Failure::usage(train::TrainError::EmptySpecial));
    }
    let kernels = match args.tier {
        Some(tier) => Kernels::request(tier).map_err(|e| Failure::usage(format!("--tier: {e}"))),
        None => Kernels::active().map_err(Failure::runtime),
    }?;
    let counts = count_words(&args, pre_tokenizer, kernels)?;
    let settings = Settings {
        vocab_size,
        min_frequency: args.min_frequency,
        max_token_length: args.max_token_length,
        counting: match args.counting {
            CountingArg::Windows => Counting::Windows,
            CountingArg::NonOverlapping => Counting::NonOverlapping,
        },
    };
    // Merges are counted against the vocabulary size: the bar ends early when the corpus runs
    // out of pairs or `--min-frequency` stops training.
    let progress = Progress::steps(args.run.progress(), vocab_size as u64, "merges (at most)");
    let model = train::train(
        &counts,
        pre_tokenizer,
        &args.special_tokens,
        &settings,
        &mut |merges| {
            if merges % 64 == 0 {
                progress.set_position(merges as u64)
            }
        },
    );
    progress.finish();
    let model = model.map_err(Failure::runtime)?;
    let text = match args.format {
        TrainFormat::TokenizerJson => model.tokenizer_json() + "\n",
        TrainFormat::Tiktoken => model.tiktoken().map_err(Failure::runtime)?,
    };
    let mut out = Output::create(&args.output.output)?;
    out.write_all(text.as_bytes())?;
    out.finish()?;
    eprintln!(
        "trained: {} tokens ({} merges) from {} unique words",
        model.trained.tokens.len(),
        model.trained.merges.len(),
        counts.len()
    );
    Ok(())
}

/// `--exact`: the optimal and the greedy merge sequences of a tiny input, as text.
fn run_exact(args: &TrainArgs) -> CliResult {
    let pre_tokenizer: PreTokenizer = args.pre_tokenizer.into();
    let kernels = Kernels::active().map_err(Failure::runtime)?;
    let counts = count_words(args, pre_tokenizer, kernels)?;
    if counts.is_empty() {
        return Err(Failure::runtime(train::TrainError::EmptyCorpus));
    }
    // The alphabet: the symbols seen (bytes for a byte-level pre-tokenizer, characters
    // otherwise), in order; the search's ids are their ranks.
    let words = counts.sorted();
    let symbols = |w: &[u8]| -> Vec<String> {
        if pre_tokenizer.byte_level() {
            let table = simdtok::load::tiktoken::byte_level_alphabet();
            w.iter().map(|&b| table[b as usize].to_string()).collect()
        } else {
            let text = std::str::from_utf8(w).expect("words are UTF-8");
            text.chars().map(String::from).collect()
        }
    };
    let alphabet: std::collections::BTreeSet<String> =
        words.iter().flat_map(|&(w, _)| symbols(w)).collect();
    let mut tokens: Vec<String> = alphabet.iter().cloned().collect();
    let id = |s: &String| tokens.binary_search(s).expect("in the alphabet") as u32;
    let ids: Vec<(Vec<u32>, u64)> = words
        .iter()
        .map(|&(w, n)| (symbols(w).iter().map(id).collect(), n))
        .collect();
    let counting = match args.counting {
        CountingArg::Windows => Counting::Windows,
        CountingArg::NonOverlapping => Counting::NonOverlapping,
    };
    let merges = args.merges.expect("clap requires --merges with --exact");
    let alphabet_len = tokens.len() as u32;
    let result = train::exact::compare(
        &ids,
        alphabet_len,
        merges,
        counting,
        &train::exact::Limits::default(),
    )
    .map_err(Failure::runtime)?;
    // New tokens' strings, in the optimal sequence's numbering, then the greedy one's.
    let spell = |merges: &[(u32, u32)], tokens: &mut Vec<String>| -> Vec<String> {
        tokens.truncate(alphabet_len as usize);
        merges
            .iter()
            .map(|&(l, r)| {
                let s = format!("{}{}", tokens[l as usize], tokens[r as usize]);
                tokens.push(s.clone());
                s
            })
            .collect()
    };
    let optimal = spell(&result.optimal.merges, &mut tokens);
    let greedy = spell(&result.greedy.merges, &mut tokens);
    let total: u64 = ids.iter().map(|(w, n)| w.len() as u64 * n).sum();
    let gap = result.optimal.utility.saturating_sub(result.greedy.utility);
    let quote = |list: &[String]| -> String {
        list.iter()
            .map(|s| serde_json::to_string(s).expect("strings serialize"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let report = format!(
        "exact BPE search: {} distinct words, {total} symbols, alphabet of {alphabet_len}, at most {merges} merges\n\
         optimal utility: {} (merges: {})\n\
         greedy utility:  {} ({} counting; merges: {})\n\
         greedy falls short by {gap} ({:.1} % of the optimal); states searched: {}\n",
        ids.len(),
        result.optimal.utility,
        quote(&optimal),
        result.greedy.utility,
        match counting {
            Counting::Windows => "windows",
            Counting::NonOverlapping => "non-overlapping",
        },
        quote(&greedy),
        if result.optimal.utility == 0 {
            0.0
        } else {
            100.0 * gap as f64 / result.optimal.utility as f64
        },
        result.states_visited,
    );
    let mut out = Output::create(&args.output.output)?;
    out.write_all(report.as_bytes())?;
    out.finish()
}

/// Where a `raw` input may be cut so that its parts are counted apart with the same words:
/// after a line end that a letter follows. In every pre-tokenizer a line end ends a whitespace
/// piece there and no piece takes a line end before a letter (cl100k's and o200k's letter
/// pieces take one leading character that is not a line end; GPT-2's, a space), so the pieces
/// on both sides are the whole text's. No cuts when a special token holds a line end.
fn raw_cut(specials: &[String]) -> Option<input::RawCut> {
    if specials.iter().any(|s| s.contains(['\n', '\r'])) {
        return None;
    }
    Some(Box::new(|text: &[u8], from: usize| {
        let mut end = text.len();
        while let Some(newline) = memchr::memrchr(b'\n', &text[..end]) {
            let cut = newline + 1;
            if cut < from {
                return None;
            }
            if text.get(cut).is_some_and(u8::is_ascii_alphabetic) {
                return Some(cut);
            }
            end = newline;
        }
        None
    }))
}

/// Reads every input and counts its words, on every worker thread.
fn count_words(
    args: &TrainArgs,
    pre_tokenizer: PreTokenizer,
    kernels: &'static Kernels,
) -> CliResult<WordCounts> {
    let workers = Workers::new(args.run.threads)?;
    let mut inputs = Vec::with_capacity(args.input.len());
    for path in &args.input {
        let input_args = InputArgs {
            input: vec![path.clone()],
            input_format: args.input_format,
            field: args.field.clone(),
            separator: None,
        };
        inputs.push(input::open(
            &input_args,
            BLOCK_BYTES,
            raw_cut(&args.special_tokens),
        )?);
    }
    let total = inputs
        .iter()
        .map(|(source, _)| source.len)
        .sum::<Option<u64>>();
    let progress = Progress::new(args.run.progress(), total);
    let mut counts = WordCounts::new(kernels);
    for (source, reader) in inputs {
        let (_, counters) = workers.run_keeping(
            reader,
            &progress,
            no_whole_batch,
            |record, counter: &mut Option<Counter>, _chunk| {
                let text = source.text(record)?;
                counter
                    .get_or_insert_with(|| {
                        Counter::new(pre_tokenizer, &args.special_tokens, kernels)
                    })
                    .add(&text);
                Ok(())
            },
            |_| {},
            |_, _| Ok(()),
        )?;
        for counter in counters.into_iter().flatten() {
            counts.absorb(counter.into_counts());
        }
    }
    progress.finish();
    Ok(counts)
}
