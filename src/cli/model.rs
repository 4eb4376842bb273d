//! Loads the tokenizer for `--model`/`--tier`, after checking that the encoding options make sense
//! for the kind of model: an option this version cannot honour is refused loudly.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use simdtok::kernels::Kernels;
use simdtok::{Error, LoadOptions, ModelKind, Tokenizer};

use super::args::{EncodeOptions, ModelArgs, Pattern};
use super::{CliResult, Failure};

/// The tokenizer of `args`, for encoding with `options` (`None` for commands that only decode).
pub fn load(args: &ModelArgs, options: Option<&EncodeOptions>) -> CliResult<Tokenizer> {
    let mut load_options = LoadOptions {
        cache_budget: args.cache_budget,
        ..LoadOptions::default()
    };
    if let Some(options) = options {
        check_options(&args.model, detect(&args.model)?, options)?;
        load_options = LoadOptions {
            lowercase: options.lowercase(),
            add_special_tokens: options.add_special_tokens,
            wordpiece_algorithm: options.wordpiece_algorithm,
            tiktoken_encoding: options.pattern.map(Pattern::encoding),
            allow_special: options.allow_special,
            cache_budget: args.cache_budget,
        };
    }
    let loaded = match args.tier {
        Some(tier) => Kernels::request(tier).map_err(Error::from),
        None => Kernels::active().map_err(Error::from),
    }
    .and_then(|kernels| Tokenizer::from_file_with_options(&args.model, kernels, &load_options));
    if args.verbose
        && let Ok(tokenizer) = &loaded
    {
        for note in slow_paths(tokenizer) {
            eprintln!("simdtok: {}: {note}", args.model.display());
        }
    }
    loaded.map_err(|e| match e {
        // An option the model cannot honour is a usage error.
        Error::Option { .. } => Failure::usage(e),
        // A tier this machine cannot run (from --tier or SIMDTOK_TIER) is a usage error, as in
        // `simdtok cpu`.
        Error::Tier(e) if args.tier.is_some() => Failure::usage(format!("--tier: {e}")),
        Error::Tier(e) => Failure::usage(e),
        other => Failure::runtime(other),
    })
}

/// What `--verbose` says of the slower paths a model takes, one line each.
pub fn slow_paths(tokenizer: &Tokenizer) -> Vec<String> {
    tokenizer
        .regex_fallbacks()
        .into_iter()
        .map(|source| {
            format!(
                "the pre-tokenizer regex {source:?} has no hand-written scanner: it runs on the regex engine (fancy-regex), several times slower"
            )
        })
        .collect()
}

/// The kind of the model file, detected as the library does (its first 4 KiB and its name).
fn detect(path: &Path) -> CliResult<ModelKind> {
    let io = |e: std::io::Error| Failure::runtime(format!("{}: {e}", path.display()));
    let mut head = Vec::with_capacity(4096);
    File::open(path)
        .map_err(io)?
        .take(4096)
        .read_to_end(&mut head)
        .map_err(io)?;
    Ok(ModelKind::detect(path, &head))
}

/// Refuses options that do not apply to `kind`, or that would change the result in a way this
/// version cannot produce yet.
fn check_options(path: &Path, kind: ModelKind, options: &EncodeOptions) -> CliResult {
    let model = format!("{} is a {} model", path.display(), kind.name());
    let wordpiece = matches!(
        kind,
        ModelKind::VocabTxt | ModelKind::TokenizerJson | ModelKind::Gguf
    );
    if options.wordpiece_algorithm.is_some() && !wordpiece {
        return Err(Failure::usage(format!(
            "--wordpiece-algorithm applies only to WordPiece models ({model})"
        )));
    }
    if let Some(lowercase) = options.lowercase() {
        let flag = if lowercase {
            "--lowercase"
        } else {
            "--no-lowercase"
        };
        if kind != ModelKind::VocabTxt {
            return Err(Failure::usage(format!(
                "{flag} applies only to BERT vocab.txt models ({model})"
            )));
        }
    }
    let tiktoken = matches!(kind, ModelKind::Tiktoken | ModelKind::Gpt2);
    if options.pattern.is_some() && !tiktoken {
        return Err(Failure::usage(format!(
            "--pattern applies only to tiktoken rank files ({model})"
        )));
    }
    if options.allow_special && !tiktoken {
        return Err(Failure::usage(format!(
            "--allow-special applies only to tiktoken rank files ({model})"
        )));
    }
    Ok(())
}
