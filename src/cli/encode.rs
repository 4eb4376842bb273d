//! `simdtok encode`: texts in, tokens out, in input order whatever the number of threads.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

use clap::Args;
use simdtok::corpus::offsets::DocumentOffsets;
use simdtok::{DocumentToken, Encoding, Tokenizer};

use super::args::{EncodeOptions, InputArgs, InputFormat, ModelArgs, OutputArgs, RunArgs};
use super::dataset::{Dataset, DatasetSpec, corpus_error};
use super::driver::{self, BLOCK_BYTES, Chunk, Workers};
use super::format::{Affixes, OutputFormat, RawText, Render};
use super::input::{Part, RawCut};
use super::npy::NpyWriter;
use super::output::{Output, spill_file};
use super::parts::PartEncoder;
use super::progress::Progress;
use super::{CliResult, Failure, input, model, summary};

/// The options of `encode`.
#[derive(Args, Debug)]
pub struct EncodeArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    output: OutputArgs,
    /// The output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Ids, value_name = "FORMAT")]
    output_format: OutputFormat,
    /// An id appended after each text's ids (the binary formats only), e.g. an end-of-text
    /// id.
    #[arg(long, value_name = "N", conflicts_with = "append_eos")]
    separator_id: Option<u32>,
    /// Put the model's beginning-of-sequence token before each text's ids (the binary formats
    /// only): the one its files name (a `tokenizer_config.json` beside a `tokenizer.json`, a
    /// SentencePiece model's `<s>`), else `--bos-id`.
    #[arg(long)]
    prepend_bos: bool,
    /// Put the model's end-of-sequence token after each text's ids (the binary formats only):
    /// the one its files name (a `tokenizer_config.json` beside a `tokenizer.json`, a
    /// SentencePiece model's `</s>`, tiktoken's `<|endoftext|>`), else `--eos-id`.
    #[arg(long)]
    append_eos: bool,
    /// The id `--prepend-bos` puts before each text, instead of the model's.
    #[arg(long, value_name = "N", requires = "prepend_bos")]
    bos_id: Option<u32>,
    /// The id `--append-eos` puts after each text, instead of the model's.
    #[arg(long, value_name = "N", requires = "append_eos")]
    eos_id: Option<u32>,
    #[command(flatten)]
    options: EncodeOptions,
    #[command(flatten)]
    run: RunArgs,
    /// Write each text's start in the output's tokens, then the end of the last, as
    /// little-endian int64s (npy, u16 and u32 only: `tokens[o[i]..o[i + 1]]` is text `i`).
    #[arg(long, value_name = "PATH")]
    index: Option<std::path::PathBuf>,
    /// Cut a dataset (megatron, datatrove, llmc) into numbered shards of about N tokens, each
    /// closed at the first document end at which it holds N: `--output train.bin` writes
    /// `train_00000.bin`, `train_00001.bin`, … (a Megatron PREFIX: `PREFIX_00000.bin` and
    /// `.idx`), each renamed into place when complete.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    shard_tokens: Option<u64>,
    /// Go on with a sharded run that stopped (killed, or failed): its manifest beside the
    /// output (`OUTPUT.manifest.json`) lists the shards in place; the run starts after the last
    /// of them, with the same settings and inputs, and writes what an uninterrupted run writes.
    /// Without a manifest, a new run.
    #[arg(long, requires = "shard_tokens")]
    resume: bool,
    /// Leave out bad records (invalid UTF-8, invalid JSON, a JSON line without the text field)
    /// instead of stopping at the first: each input's count, and its first, on stderr and in
    /// `--summary`.
    #[arg(long)]
    skip_bad: bool,
    /// Write what the run read and wrote (documents, bytes, tokens, the model's SHA-256, the
    /// version, the time) to this file as JSON, and a line of it to stderr.
    #[arg(long, value_name = "PATH")]
    summary: Option<std::path::PathBuf>,
}

/// Runs `encode`.
pub fn run(args: EncodeArgs) -> CliResult {
    let started = summary::Started::now();
    let format = args.output_format;
    for (given, name) in [
        (args.separator_id.is_some(), "--separator-id"),
        (args.prepend_bos, "--prepend-bos"),
        (args.append_eos, "--append-eos"),
    ] {
        if given && !format.is_binary() {
            return Err(Failure::usage(format!(
                "{name} applies only to --output-format npy, u16, u32, megatron, datatrove or llmc"
            )));
        }
    }
    let tokenizer = Arc::new(model::load(&args.model, Some(&args.options))?);
    let affixes = document_affixes(&args, &tokenizer)?;
    // Refused before anything is written: a u16 file with wrapped ids would look valid.
    if format == OutputFormat::U16 {
        check_u16(&tokenizer, affixes)?;
    }
    if args.shard_tokens.is_some() && !format.is_documents() {
        return Err(Failure::usage(
            "--shard-tokens applies only to --output-format megatron, datatrove or llmc",
        ));
    }
    let inputs = input_paths(&args.input.input)?;
    let documents = if format.is_documents() {
        let names: Vec<String> = inputs
            .iter()
            .map(|p| {
                p.as_ref()
                    .map_or("-".to_owned(), |p| p.display().to_string())
            })
            .collect();
        if args.resume && inputs.iter().any(Option::is_none) {
            return Err(Failure::usage(
                "--resume needs --input files (stdin cannot be read again)",
            ));
        }
        let spec = DatasetSpec {
            format,
            output: &args.output.output,
            model: &args.model.model,
            affixes,
            shard_tokens: args.shard_tokens,
            resume: args.resume,
            settings: run_settings(&args)?,
            inputs: &names,
        };
        match Dataset::open(spec, &tokenizer)? {
            Some(dataset) => Some(dataset),
            None => {
                eprintln!("simdtok: the manifest beside --output says this run is complete");
                return Ok(());
            }
        }
    } else {
        None
    };
    let mut index = match &args.index {
        Some(_)
            if !matches!(
                format,
                OutputFormat::Npy | OutputFormat::U16 | OutputFormat::U32
            ) =>
        {
            return Err(Failure::usage(
                "--index applies only to --output-format npy, u16 or u32 (the dataset formats \
                 write their own index)",
            ));
        }
        Some(path) => Some(DocumentOffsets::create(path).map_err(corpus_error)?),
        None => None,
    };
    let affix_tokens = affixes.len() as u64;
    // Tokens of the raw text whose parts are being written (for its offset).
    let mut raw_tokens = 0u64;
    if args.skip_bad && args.input.input_format == InputFormat::Raw {
        return Err(Failure::usage(
            "--skip-bad applies to inputs of records (lines, jsonl, text): a raw input is one text",
        ));
    }
    let skip_bad = args.skip_bad;
    let workers = Workers::new(args.run.threads)?;
    let mut sink = match documents {
        Some(dataset) => Sink::Documents(dataset),
        None => Sink::new(Output::create(&args.output.output)?, format)?,
    };
    let pieces = format.needs_pieces();
    let render = Render::new(format, affixes, tokenizer.vocab_size())
        .with_added_suffix(tokenizer.added_suffix_len());
    // Formats written from the ids alone gather a block's ids and render them at once; with a
    // core to spare, the writer renders them while the workers encode the next blocks —
    // decimal ids cost about a tenth of a fast model's encoding.
    let writer_renders = render.per_block() && workers.spare_core();
    let mut raw = RawWriter::default();
    let mut rendered = Vec::new();
    let parts = PartEncoder::new(&tokenizer);
    let mut read = Vec::new();
    // One input after another into the one output, in the order `input_paths` gives.
    for (i, path) in inputs.iter().enumerate() {
        if let Sink::Documents(dataset) = &mut sink {
            if dataset.input_done(i) {
                continue; // a resumed run's: wholly in its shards
            }
            dataset.start_input(i);
        }
        let (source, reader) = input::open_path(
            path.as_deref(),
            &args.input,
            BLOCK_BYTES,
            raw_cuts(&tokenizer),
            skip_bad,
        )?;
        let progress = Progress::new(args.run.progress(), source.len);
        // The lines of a block that is valid UTF-8 go straight into the block's ids in one
        // loop, as the library's callers would write it: no record per line.
        let whole_lines = render.per_block() && source.is_lines();
        let (totals, _) = workers.run_keeping(
            reader,
            &progress,
            |batch, _: &mut Encoding, chunk| {
                if !whole_lines {
                    return None;
                }
                let texts =
                    batch.for_each_valid_line(|line| append_text_ids(&tokenizer, line, chunk));
                texts.map(Ok)
            },
            |record, enc: &mut Encoding, chunk| {
                let _guard = parts.guard();
                let text = match source.text(record) {
                    // A bad record left out (only whole records: a raw text's part is not one).
                    Err(bad) if skip_bad && record.part == Part::Records => {
                        chunk.skip(bad);
                        return Ok(());
                    }
                    text => parts.checked(text)?,
                };
                if render.per_block() && record.part == Part::Records {
                    append_text_ids(&tokenizer, &text, chunk);
                    return Ok(());
                }
                if format.ids_only() {
                    enc.clear();
                    parts.ids_append(record.part, &text, &mut enc.ids);
                } else {
                    parts.encode_into(record.part, &text, enc, pieces);
                }
                match record.part {
                    Part::Records => {
                        render.text(enc, &mut chunk.bytes);
                        chunk.texts += 1;
                    }
                    Part::Raw { base, first, last } => {
                        let place = (first, last);
                        render.part(enc, base, place, &mut chunk.bytes, &mut chunk.tail);
                        chunk.texts += u64::from(last);
                    }
                }
                chunk.tokens += enc.len() as u64;
                Ok(())
            },
            |chunk| {
                // A dataset's tokens are rendered here too, whatever the spare core: its writer
                // also splits them into documents, and converting ids there made it the slower
                // side (Megatron's uint16, 200 MB of JSON lines on two threads: +10 %).
                if !writer_renders || format.is_documents() {
                    render.block(&chunk.ids, &chunk.ends, &mut chunk.bytes);
                }
            },
            |chunk, part| {
                if let Some(index) = &mut index {
                    push_offsets(index, chunk, part, affix_tokens, &mut raw_tokens)?;
                }
                match part {
                    Part::Records if format.is_documents() => sink.write_texts(chunk),
                    Part::Records if writer_renders => {
                        rendered.clear();
                        render.block(&chunk.ids, &chunk.ends, &mut rendered);
                        sink.write_all(&rendered)
                    }
                    Part::Records => sink.write_all(&chunk.bytes),
                    Part::Raw { first, last, .. } => {
                        raw.write(&mut sink, format, chunk, first, last)
                    }
                }
            },
        )?;
        progress.finish();
        if totals.skipped > 0 {
            let first = totals
                .first_skipped
                .as_ref()
                .and_then(|f| f.message.as_deref());
            eprintln!(
                "simdtok: {}: left out {} bad record{} (the first: {})",
                source.name,
                totals.skipped,
                if totals.skipped == 1 { "" } else { "s" },
                first.unwrap_or("?")
            );
        }
        // Tokens written: each text's, and the ids around it.
        let totals = driver::Totals {
            tokens: totals.tokens + totals.texts * affix_tokens,
            ..totals
        };
        read.push(summary::InputSummary::new(
            source.name,
            source.compression.name(),
            totals,
        ));
    }
    sink.finish()?;
    if let Some(index) = index {
        index.finish().map_err(corpus_error)?;
    }
    if let Some(path) = &args.summary {
        let output = args
            .output
            .output
            .as_ref()
            .map_or("<stdout>".to_owned(), |p| p.display().to_string());
        let context = summary::Context {
            model: &args.model.model,
            output: &output,
            output_format: format!("{format:?}").to_lowercase(),
        };
        summary::write(path, context, started, read)?;
    }
    Ok(())
}

/// The offsets of a block's texts (their ends in `chunk.ends`, each with `affix_tokens` around
/// it), or of a raw text once its last part is written (`raw_tokens` adds up its parts).
fn push_offsets(
    index: &mut DocumentOffsets,
    chunk: &Chunk,
    part: Part,
    affix_tokens: u64,
    raw_tokens: &mut u64,
) -> CliResult {
    match part {
        Part::Records => {
            let mut start = 0;
            for &end in &chunk.ends {
                index
                    .push((end - start) as u64 + affix_tokens)
                    .map_err(corpus_error)?;
                start = end;
            }
        }
        Part::Raw { last, .. } => {
            *raw_tokens += chunk.tokens;
            if last {
                let tokens = std::mem::take(raw_tokens) + affix_tokens;
                index.push(tokens).map_err(corpus_error)?;
            }
        }
    }
    Ok(())
}

/// The settings besides the output's that decide a dataset's bytes, for its manifest: the
/// model (by digest), how the inputs are read and the encoding options.
fn run_settings(args: &EncodeArgs) -> CliResult<serde_json::Value> {
    let o = &args.options;
    Ok(serde_json::json!({
        "model_sha256": summary::FileDigest::of(&args.model.model)?.sha256,
        "input_format": format!("{:?}", args.input.input_format),
        "field": args.input.field,
        "separator": args.input.separator,
        "add_special_tokens": o.add_special_tokens,
        "lowercase": o.lowercase(),
        "pattern": o.pattern.map(|p| format!("{p:?}")),
        "allow_special": o.allow_special,
    }))
}

/// The inputs of `--input` (none: stdin), expanded ([`simdtok::corpus::inputs::expand`]);
/// `None` for stdin.
fn input_paths(names: &[std::path::PathBuf]) -> CliResult<Vec<Option<std::path::PathBuf>>> {
    if names.is_empty() {
        return Ok(vec![None]);
    }
    let files = simdtok::corpus::inputs::expand(names).map_err(Failure::runtime)?;
    Ok(files
        .into_iter()
        .map(|p| (p.as_os_str() != "-").then_some(p))
        .collect())
}

/// Appends one text's ids straight to its block's ids (no copy per text), for a format rendered
/// a block at a time.
fn append_text_ids(tokenizer: &Tokenizer, text: &str, chunk: &mut Chunk) {
    let before = chunk.ids.len();
    tokenizer.encode_ids_append(text, &mut chunk.ids);
    chunk.ends.push(chunk.ids.len());
    chunk.texts += 1;
    chunk.tokens += (chunk.ids.len() - before) as u64;
}

/// Where a raw input may be cut for this tokenizer ([`Tokenizer::last_part_cut`]); `None` for a
/// model without cuts (the text is then read whole).
pub fn raw_cuts(tokenizer: &Arc<Tokenizer>) -> Option<RawCut> {
    // Every rule cuts at a space or a line end between words: a model that has none in this
    // text has no cuts (or too few to pay for reading in parts).
    tokenizer.last_part_cut(b"ab cd\nef gh\nij kl")?;
    let tokenizer = Arc::clone(tokenizer);
    // The bytes before a cut that the decision reads, with room to spare.
    let lookback = tokenizer.part_cut_lookback() + 3;
    Some(Box::new(move |text: &[u8], from: usize| {
        // A window that starts `lookback` bytes before `from` answers as the whole text for
        // any cut at or after `from` (and at its very start, the window's start is the text's).
        let window = from.saturating_sub(lookback);
        let cut = window + tokenizer.last_part_cut(&text[window..])?;
        (cut >= from && (window == 0 || cut >= window + lookback)).then_some(cut)
    }))
}

/// Joins the parts of a raw text into one text's output; `jsonl`'s offsets wait in a temporary
/// file until the ids are written (memory stays bounded however long the text).
#[derive(Default)]
struct RawWriter {
    join: RawText,
    offsets: Option<BufWriter<File>>,
}

impl RawWriter {
    fn write(
        &mut self,
        sink: &mut Sink,
        format: OutputFormat,
        chunk: &Chunk,
        first: bool,
        last: bool,
    ) -> CliResult {
        if let Sink::Documents(dataset) = sink {
            // A dataset's document: the parts' tokens as they are stored.
            dataset.write_part(&chunk.bytes, first)?;
            return if last { dataset.end_text() } else { Ok(()) };
        }
        if first {
            sink.write_all(RawText::opening(format))?;
        }
        sink.write_all(self.join.join(format, &chunk.bytes, false))?;
        if format == OutputFormat::Jsonl {
            let tail = self.join.join(format, &chunk.tail, true);
            if self.offsets.is_none() {
                self.offsets = Some(BufWriter::with_capacity(1 << 16, spill_file()?));
            }
            let spill = self.offsets.as_mut().expect("created above");
            spill.write_all(tail).map_err(spill_error)?;
        }
        if last {
            if let Some(spill) = self.offsets.take() {
                sink.write_all(RawText::middle(format))?;
                let mut file = spill
                    .into_inner()
                    .map_err(|e| spill_error(e.into_error()))?;
                file.seek(SeekFrom::Start(0)).map_err(spill_error)?;
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    let n = file.read(&mut buf).map_err(spill_error)?;
                    if n == 0 {
                        break;
                    }
                    sink.write_all(&buf[..n])?;
                }
            }
            sink.write_all(RawText::closing(format))?;
            sink.end_text()?;
        }
        Ok(())
    }
}

fn spill_error(e: std::io::Error) -> Failure {
    Failure::runtime(format!("temporary file: {e}"))
}

/// The ids to put around each text: `--prepend-bos` / `--bos-id`, and `--append-eos` /
/// `--eos-id` or `--separator-id`. The model's own when it names them; an error when it does
/// not and no id is given, or when a given id is not one of the model's.
fn document_affixes(args: &EncodeArgs, tokenizer: &Tokenizer) -> CliResult<Affixes> {
    let named = tokenizer.document_tokens();
    let vocab = tokenizer.vocab_size();
    // (the flag, the option giving the id, the word for messages)
    let pick = |asked: bool,
                given: Option<u32>,
                own: Option<&DocumentToken>,
                (flag, option, what): (&str, &str, &str)| {
        if !asked {
            return Ok(None);
        }
        match (given, own) {
            (Some(id), _) if id as usize >= vocab => Err(Failure::usage(format!(
                "{option} {id}: not an id of the model (it has {vocab})"
            ))),
            (Some(id), _) => Ok(Some(id)),
            (None, Some(token)) => {
                if args.model.verbose {
                    eprintln!(
                        "simdtok: {flag}: {:?} (id {}, from {})",
                        token.content, token.id, token.source
                    );
                }
                Ok(Some(token.id))
            }
            (None, None) => Err(Failure::usage(format!(
                "{flag}: {} names no {what}-of-sequence token (a tokenizer.json's come from the \
                 tokenizer_config.json beside it); give {option} N",
                args.model.model.display()
            ))),
        }
    };
    Ok(Affixes {
        before: pick(
            args.prepend_bos,
            args.bos_id,
            named.bos.as_ref(),
            ("--prepend-bos", "--bos-id", "beginning"),
        )?,
        after: match args.separator_id {
            Some(id) => Some(id),
            None => pick(
                args.append_eos,
                args.eos_id,
                named.eos.as_ref(),
                ("--append-eos", "--eos-id", "end"),
            )?,
        },
    })
}

/// Refuses u16 output when an id could exceed 65535.
fn check_u16(tokenizer: &Tokenizer, affixes: Affixes) -> CliResult {
    let size = tokenizer.vocab_size();
    if size > 1 << 16 {
        return Err(Failure::runtime(format!(
            "--output-format u16: the model has {size} ids, more than u16 holds (65536); use u32"
        )));
    }
    let ids = [affixes.before, affixes.after];
    if let Some(id) = ids
        .into_iter()
        .flatten()
        .find(|&id| id > u32::from(u16::MAX))
    {
        return Err(Failure::runtime(format!(
            "--output-format u16: {} id {id} does not fit in u16 (at most 65535); use u32",
            affixes.option_of(id)
        )));
    }
    Ok(())
}

/// The output, with the `.npy` framing when asked for, or a dataset of documents (and the ids
/// around each one).
enum Sink {
    Plain(Output),
    Npy(NpyWriter),
    Documents(Dataset),
}

impl Sink {
    fn new(out: Output, format: OutputFormat) -> CliResult<Sink> {
        Ok(match format {
            OutputFormat::Npy => Sink::Npy(NpyWriter::new(out)?),
            _ => Sink::Plain(out),
        })
    }

    /// Rendered bytes; for a dataset, a raw text's part (as its tokens are stored).
    fn write_all(&mut self, bytes: &[u8]) -> CliResult {
        match self {
            Sink::Plain(out) => out.write_all(bytes),
            Sink::Npy(npy) => npy.write_all(bytes),
            Sink::Documents(_) => unreachable!("a dataset takes raw parts through write_part"),
        }
    }

    /// A block's texts as documents.
    fn write_texts(&mut self, chunk: &Chunk) -> CliResult {
        let Sink::Documents(dataset) = self else {
            unreachable!("only a dataset's writer takes texts as documents");
        };
        dataset.write_texts(chunk)
    }

    /// The end of a raw text (its parts written): for a dataset, the end of its document.
    fn end_text(&mut self) -> CliResult {
        match self {
            Sink::Documents(dataset) => dataset.end_text(),
            _ => Ok(()),
        }
    }

    fn finish(self) -> CliResult {
        match self {
            Sink::Plain(out) => out.finish(),
            Sink::Npy(npy) => npy.finish()?.finish(),
            Sink::Documents(dataset) => dataset.finish(),
        }
    }
}
