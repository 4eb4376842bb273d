//! `simdtok count`: the number of tokens of each text, and the total on stderr.

use clap::Args;
use simdtok::Encoding;

use super::args::{EncodeOptions, InputArgs, ModelArgs, OutputArgs, RunArgs};
use super::driver::Workers;
use super::format::push_decimal;
use super::output::Output;
use super::progress::Progress;
use super::{CliResult, input, model};

/// The options of `count`.
#[derive(Args, Debug)]
pub struct CountArgs {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    options: EncodeOptions,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs `count`.
pub fn run(args: CountArgs) -> CliResult {
    let tokenizer = model::load(&args.model, Some(&args.options))?;
    let workers = Workers::new(args.run.threads)?;
    let (max_bytes, max_records) = workers.batch_limits();
    let (source, mut reader) = input::open(&args.input, max_bytes, max_records)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut out = Output::create(&args.output.output)?;
    let totals = workers.run(
        &mut reader,
        &progress,
        |record, enc: &mut Encoding, chunk| {
            let text = source.text(record)?;
            enc.clear();
            tokenizer.encode_ids_into(&text, &mut enc.ids);
            push_decimal(&mut chunk.bytes, enc.len() as u32);
            chunk.bytes.push(b'\n');
            chunk.texts += 1;
            chunk.tokens += enc.len() as u64;
            Ok(())
        },
        |bytes| out.write_all(bytes),
    )?;
    out.finish()?;
    progress.finish();
    eprintln!("total: {} tokens in {} texts", totals.tokens, totals.texts);
    Ok(())
}
