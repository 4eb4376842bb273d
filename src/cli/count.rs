//! `simdtok count`: the number of tokens of each text, and the total on stderr.

use std::sync::Arc;

use clap::Args;

use super::args::{EncodeOptions, InputArgs, InputFormat, ModelArgs, OutputArgs, RunArgs};
use super::driver::{BLOCK_BYTES, Chunk, Workers};
use super::encode::raw_cuts;
use super::format::push_decimal;
use super::input::Part;
use super::output::Output;
use super::parts::PartEncoder;
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
    let tokenizer = Arc::new(model::load(&args.model, Some(&args.options))?);
    let workers = Workers::new(args.run.threads)?;
    let cuts = raw_cuts(&tokenizer);
    let (source, reader) = input::open(&args.input, BLOCK_BYTES, cuts)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut out = Output::create(&args.output.output)?;
    let parts = PartEncoder::new(&tokenizer);
    // The tokens of the raw text's parts so far.
    let mut raw_tokens = 0u64;
    // Lines checked as UTF-8 are counted in one loop over the block, as `encode` does.
    let lines = source.is_lines();
    let (totals, _) = workers.run_keeping(
        reader,
        &progress,
        |batch, ids: &mut Vec<u32>, chunk| {
            if !lines {
                return None;
            }
            let texts = batch.for_each_valid_line(|line| {
                ids.clear();
                parts.ids_append(Part::Records, line, ids);
                push_count(ids.len(), chunk);
            });
            texts.map(Ok)
        },
        |record, ids: &mut Vec<u32>, chunk| {
            let _guard = parts.guard();
            let text = parts.checked(source.text(record))?;
            ids.clear();
            parts.ids_append(record.part, &text, ids);
            if record.part == Part::Records {
                push_count(ids.len(), chunk);
            } else {
                chunk.tokens += ids.len() as u64;
            }
            Ok(())
        },
        |_| {},
        |chunk, part| match part {
            Part::Records => out.write_all(&chunk.bytes),
            Part::Raw { last, .. } => {
                raw_tokens += chunk.tokens;
                if last {
                    let mut line = itoa::Buffer::new().format(raw_tokens).as_bytes().to_vec();
                    line.push(b'\n');
                    out.write_all(&line)?;
                }
                Ok(())
            }
        },
    )?;
    out.finish()?;
    progress.finish();
    // A raw input is one text, however many parts it was encoded in.
    let texts = if matches!(args.input.input_format, InputFormat::Raw) {
        1
    } else {
        totals.texts
    };
    eprintln!("total: {} tokens in {} texts", totals.tokens, texts);
    Ok(())
}

/// Writes one text's count of `tokens` on its own line and adds it to the block's totals.
fn push_count(tokens: usize, chunk: &mut Chunk) {
    push_decimal(&mut chunk.bytes, tokens as u32);
    chunk.bytes.push(b'\n');
    chunk.texts += 1;
    chunk.tokens += tokens as u64;
}
