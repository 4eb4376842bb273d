//! The batch loop shared by `encode`, `decode` and `count`: read a batch of records, process it
//! in chunks on the worker threads while the next batch is read, then write the chunks' bytes in
//! input order. Memory stays bounded by two batches; the first bad record in input order is the
//! one reported, whatever the number of threads.

use rayon::ThreadPool;
use rayon::prelude::*;

use super::input::{Reader, Record};
use super::progress::Progress;
use super::{CliResult, Failure};

/// About this many input bytes per worker thread in one batch.
const BATCH_BYTES_PER_THREAD: usize = 256 << 10;
/// At most this many records per worker thread in one batch.
const BATCH_RECORDS_PER_THREAD: usize = 1024;
/// Chunks per thread in a batch, so that uneven records still spread over all threads.
const CHUNKS_PER_THREAD: usize = 4;

/// The output of a run of records.
#[derive(Default)]
pub struct Chunk {
    /// What to write, already in the output format.
    pub bytes: Vec<u8>,
    /// The number of texts.
    pub texts: u64,
    /// The number of tokens.
    pub tokens: u64,
}

/// Totals of a whole run.
#[derive(Clone, Copy, Debug, Default)]
pub struct Totals {
    /// The number of texts.
    pub texts: u64,
    /// The number of tokens.
    pub tokens: u64,
}

/// The worker threads.
pub struct Workers {
    pool: ThreadPool,
    threads: usize,
}

impl Workers {
    /// `threads` worker threads (0: one per core).
    pub fn new(threads: usize) -> CliResult<Workers> {
        let threads = match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        };
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("simdtok-{i}"))
            .build()
            .map_err(|e| Failure::runtime(format!("cannot start {threads} threads: {e}")))?;
        Ok(Workers { pool, threads })
    }

    /// The batch size, in bytes and records, for [`super::input::open`].
    pub fn batch_limits(&self) -> (usize, usize) {
        let t = self.threads.max(4);
        (BATCH_BYTES_PER_THREAD * t, BATCH_RECORDS_PER_THREAD * t)
    }

    /// Runs `work` on every record of `reader` (with one scratch `S` per chunk, reused across
    /// its records) and hands each chunk, in input order, to `write`.
    pub fn run<S, W>(
        &self,
        reader: &mut Reader,
        progress: &Progress,
        work: W,
        mut write: impl FnMut(&[u8]) -> CliResult,
    ) -> CliResult<Totals>
    where
        S: Default,
        W: Fn(Record<'_>, &mut S, &mut Chunk) -> CliResult + Sync,
    {
        let mut totals = Totals::default();
        let mut next = reader.next_batch()?;
        while let Some(batch) = next {
            let per_chunk = batch
                .len()
                .div_ceil(self.threads * CHUNKS_PER_THREAD)
                .max(1);
            let (chunks, following) = self.pool.install(|| {
                rayon::join(
                    || {
                        batch
                            .spans()
                            .par_chunks(per_chunk)
                            .enumerate()
                            .map(|(c, spans)| {
                                let mut scratch = S::default();
                                let mut chunk = Chunk::default();
                                for (i, span) in spans.iter().enumerate() {
                                    let record = batch.record(c * per_chunk + i, span);
                                    work(record, &mut scratch, &mut chunk)?;
                                }
                                Ok(chunk)
                            })
                            .collect::<Vec<CliResult<Chunk>>>()
                    },
                    || reader.next_batch(),
                )
            });
            for chunk in chunks {
                let chunk = chunk?;
                write(&chunk.bytes)?;
                totals.texts += chunk.texts;
                totals.tokens += chunk.tokens;
            }
            progress.advance(batch.consumed);
            next = following?;
        }
        Ok(totals)
    }
}
