//! `simdtok encode`: texts in, tokens out, in input order whatever the number of threads.

use clap::Args;
use simdtok::{Encoding, Tokenizer};

use super::args::{EncodeOptions, InputArgs, ModelArgs, OutputArgs, RunArgs};
use super::driver::Workers;
use super::format::OutputFormat;
use super::npy::NpyWriter;
use super::output::Output;
use super::progress::Progress;
use super::{CliResult, Failure, input, model};

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
    /// An id appended after each text's ids (npy, u16 and u32 only), e.g. an end-of-text id.
    #[arg(long, value_name = "N")]
    separator_id: Option<u32>,
    #[command(flatten)]
    options: EncodeOptions,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs `encode`.
pub fn run(args: EncodeArgs) -> CliResult {
    let format = args.output_format;
    if args.separator_id.is_some() && !format.is_binary() {
        return Err(Failure::usage(
            "--separator-id applies only to --output-format npy, u16 or u32",
        ));
    }
    let tokenizer = model::load(&args.model, Some(&args.options))?;
    // Refused before anything is written: a u16 file with wrapped ids would look valid.
    if format == OutputFormat::U16 {
        check_u16(&tokenizer, args.separator_id)?;
    }
    let workers = Workers::new(args.run.threads)?;
    let (max_bytes, max_records) = workers.batch_limits();
    let (source, mut reader) = input::open(&args.input, max_bytes, max_records)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut sink = Sink::new(Output::create(&args.output.output)?, format)?;
    let pieces = format.needs_pieces();
    workers.run(
        &mut reader,
        &progress,
        |record, enc: &mut Encoding, chunk| {
            let text = source.text(record)?;
            if format.ids_only() {
                enc.clear();
                tokenizer.encode_ids_into(&text, &mut enc.ids);
            } else {
                tokenizer.encode_into(&text, enc, pieces);
            }
            format.render(enc, args.separator_id, &mut chunk.bytes);
            chunk.texts += 1;
            chunk.tokens += enc.len() as u64;
            Ok(())
        },
        |bytes| sink.write_all(bytes),
    )?;
    sink.finish()?;
    progress.finish();
    Ok(())
}

/// Refuses u16 output when an id could exceed 65535.
fn check_u16(tokenizer: &Tokenizer, separator: Option<u32>) -> CliResult {
    let size = tokenizer.vocab_size();
    if size > 1 << 16 {
        return Err(Failure::runtime(format!(
            "--output-format u16: the model has {size} ids, more than u16 holds (65536); use u32"
        )));
    }
    if let Some(id) = separator.filter(|&id| id > u32::from(u16::MAX)) {
        return Err(Failure::runtime(format!(
            "--output-format u16: --separator-id {id} does not fit in u16 (at most 65535); use u32"
        )));
    }
    Ok(())
}

/// The output, with the `.npy` framing when asked for.
enum Sink {
    Plain(Output),
    Npy(NpyWriter),
}

impl Sink {
    fn new(out: Output, format: OutputFormat) -> CliResult<Sink> {
        Ok(match format {
            OutputFormat::Npy => Sink::Npy(NpyWriter::new(out)?),
            _ => Sink::Plain(out),
        })
    }

    fn write_all(&mut self, bytes: &[u8]) -> CliResult {
        match self {
            Sink::Plain(out) => out.write_all(bytes),
            Sink::Npy(npy) => npy.write_all(bytes),
        }
    }

    fn finish(self) -> CliResult {
        match self {
            Sink::Plain(out) => out.finish(),
            Sink::Npy(npy) => npy.finish()?.finish(),
        }
    }
}
