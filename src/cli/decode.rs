//! `simdtok decode`: lines of ids (as `encode` writes them) in, one text per line out.

use clap::Args;

use super::args::{ModelArgs, OutputArgs, RunArgs};
use super::driver::{BLOCK_BYTES, Workers};
use super::output::Output;
use super::progress::Progress;
use super::{CliResult, Failure, input, model};

/// The options of `decode`.
#[derive(Args, Debug)]
pub struct DecodeArgs {
    #[command(flatten)]
    model: ModelArgs,
    /// The input file of `ids` lines (decimal ids separated by whitespace), or `-` for stdin (the
    /// default).
    #[arg(long, value_name = "PATH")]
    input: Option<std::path::PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    run: RunArgs,
}

/// Runs `decode`.
pub fn run(args: DecodeArgs) -> CliResult {
    let tokenizer = model::load(&args.model, None)?;
    let workers = Workers::new(args.run.threads)?;
    let (source, reader) = input::open_lines(&args.input, BLOCK_BYTES)?;
    let progress = Progress::new(args.run.progress(), source.len);
    let mut out = Output::create(&args.output.output)?;
    workers.run(
        reader,
        &progress,
        |record, ids: &mut Vec<u32>, chunk| {
            let fail = |cause: String| Failure::at(&source.name, record.line, cause);
            ids.clear();
            for word in source.line(record)?.split_ascii_whitespace() {
                let id = word
                    .parse()
                    .map_err(|_| fail(format!("{word:?} is not a token id")))?;
                ids.push(id);
            }
            let text = tokenizer.decode(ids).map_err(|e| fail(e.to_string()))?;
            chunk.bytes.extend_from_slice(text.as_bytes());
            chunk.bytes.push(b'\n');
            chunk.texts += 1;
            chunk.tokens += ids.len() as u64;
            Ok(())
        },
        |_| {},
        |chunk, _| out.write_all(&chunk.bytes),
    )?;
    out.finish()?;
    progress.finish();
    Ok(())
}
