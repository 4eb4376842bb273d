//! The batch engine shared by `encode`, `decode` and `count`: a reader thread reads the input in
//! blocks, worker threads turn each block into output bytes, and the calling thread writes them in
//! input order.
//!
//! Designed for many cores: the threads meet once per block (about 256 KiB), never per text, so no
//! lock or shared counter sits on the hot path; each worker keeps its own scratch (and the
//! tokenizer its own per-thread caches). The reader only reads and finds the last line end of
//! a block; lines are split and counted by the workers (a failure's line is moved to its place
//! in the input by the writer, which knows the lines before its block). Memory is bounded: the reader may run at most
//! `2 × threads + 2` blocks ahead of the writer (a block is read into a slot of buffers that the
//! writer gives back when it has written the block), whatever the speed of the output, and the
//! buffers are reused rather than allocated per block. The first bad record in
//! input order is the one reported, whatever the number of threads: results are taken in order.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::sync::{Mutex, PoisonError};

use super::input::{Batch, Block, Part, Reader, Record};
use super::progress::Progress;
use super::{CliResult, Failure};

/// About this many input bytes per block: large enough that the threads meet rarely, small enough
/// that every thread gets blocks on a few megabytes of input.
pub const BLOCK_BYTES: usize = 256 << 10;

/// The output of one block.
#[derive(Default)]
pub struct Chunk {
    /// What to write, already in the output format.
    pub bytes: Vec<u8>,
    /// The ids of the block's texts, for output formats rendered a block at a time (from these
    /// and `ends`, by the worker or the writer).
    pub ids: Vec<u32>,
    /// Where each text's ids end in `ids`.
    pub ends: Vec<usize>,
    /// A second stream, written after all of `bytes` of a raw text (its offsets, for `jsonl`).
    pub tail: Vec<u8>,
    /// The number of texts.
    pub texts: u64,
    /// The number of tokens.
    pub tokens: u64,
    /// Bad records left out (`encode --skip-bad`), and the first of them.
    pub skipped: u64,
    pub first_skipped: Option<Failure>,
}

impl Chunk {
    /// Leaves out a bad record, counted (`encode --skip-bad`).
    pub fn skip(&mut self, failure: Failure) {
        self.skipped += 1;
        self.first_skipped.get_or_insert(failure);
    }
}

/// Totals of a whole run.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// The number of texts.
    pub texts: u64,
    /// The number of tokens.
    pub tokens: u64,
    /// Bytes of input read (decompressed).
    pub bytes: u64,
    /// Bad records left out, and the first of them (its line in the input).
    pub skipped: u64,
    pub first_skipped: Option<Failure>,
}

/// The worker threads.
pub struct Workers {
    threads: usize,
    /// There are fewer workers than cores: the reader and the writer have time for more than
    /// reading and writing (see [`Workers::spare_core`]).
    spare_core: bool,
}

/// The buffers of one block in flight, reused from block to block: the input and its output.
/// The reader takes one to read a block into; the writer gives it back once the block is
/// written. Their number is what bounds the blocks in flight (and memory).
#[derive(Default)]
struct Slot {
    input: Block,
    chunk: Chunk,
}

impl Slot {
    fn clear(&mut self) {
        self.input.clear();
        self.chunk.bytes.clear();
        self.chunk.ids.clear();
        self.chunk.ends.clear();
        self.chunk.tail.clear();
        self.chunk.texts = 0;
        self.chunk.tokens = 0;
        self.chunk.skipped = 0;
        self.chunk.first_skipped = None;
    }
}

/// A block's result, numbered in input order.
struct Done {
    seq: u64,
    /// The block's chunk and the buffers to reuse, or why the block failed (its line counted
    /// from the block's start).
    result: CliResult<Encoded>,
}

/// A block's output, and what the writer needs to know of its input.
struct Encoded {
    slot: Slot,
    part: Part,
    /// Bytes of input it consumed.
    consumed: u64,
    /// Lines of input it spans.
    lines: u64,
}

impl Workers {
    /// `threads` worker threads (0: one per core).
    pub fn new(threads: usize) -> CliResult<Workers> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let threads = if threads == 0 { cores } else { threads };
        Ok(Workers {
            threads,
            spare_core: threads < cores,
        })
    }

    /// Whether there are fewer workers than cores. Then the reader finds the line ends,
    /// checks the UTF-8 and takes the texts out of JSON lines, and the writer may render output
    /// (see `encode`), work the workers would otherwise do: with one worker on a machine of two
    /// cores, that brought `encode` from about 0.78 to 0.9 of the library's speed (the JSON
    /// from 0.77–0.82 to 0.88–0.97 with cl100k). With a worker on every core they
    /// do it themselves, so that the reader and the writer never hold the workers back.
    pub fn spare_core(&self) -> bool {
        self.spare_core
    }

    /// Runs `work` on every record of `reader` (with one scratch `S` per worker thread, reused
    /// across its records), then `finish` on each block's chunk, and hands the chunks, in input
    /// order, to `write` with the part of the input each came from.
    pub fn run<S, W, F>(
        &self,
        reader: Reader,
        progress: &Progress,
        work: W,
        finish: F,
        write: impl FnMut(&Chunk, Part) -> CliResult,
    ) -> CliResult<Totals>
    where
        S: Default + Send,
        W: Fn(Record<'_>, &mut S, &mut Chunk) -> CliResult + Sync,
        F: Fn(&mut Chunk) + Sync,
    {
        self.run_keeping(reader, progress, no_whole_batch, work, finish, write)
            .map(|(totals, _)| totals)
    }

    /// [`Workers::run`], offering each batch whole to `whole` first, and giving back each
    /// worker's scratch at the end (what it gathered, for a job such as training whose result
    /// is not a stream of output). `whole` returns the number of records it did (then `work`
    /// sees none of them), or `None` to leave the batch to `work`, record by record
    /// ([`no_whole_batch`] always does): a job with a tight loop over a block's texts saves the
    /// record's bookkeeping per text (a few per cent of a fast model's time on short lines).
    pub fn run_keeping<S, B, W, F>(
        &self,
        mut reader: Reader,
        progress: &Progress,
        whole: B,
        work: W,
        finish: F,
        mut write: impl FnMut(&Chunk, Part) -> CliResult,
    ) -> CliResult<(Totals, Vec<S>)>
    where
        S: Default + Send,
        B: Fn(&Batch, &mut S, &mut Chunk) -> Option<CliResult<u64>> + Sync,
        W: Fn(Record<'_>, &mut S, &mut Chunk) -> CliResult + Sync,
        F: Fn(&mut Chunk) + Sync,
    {
        reader.prepare(self.spare_core);
        let ahead = 2 * self.threads + 2;
        let (slot_tx, slot_rx) = sync_channel::<Slot>(ahead);
        for _ in 0..ahead {
            slot_tx
                .send(Slot::default())
                .expect("the channel has room for every slot");
        }
        // Room for every block the slots allow: the reader never blocks on a full queue, only on
        // a slot, so it stops as soon as the writer does.
        let (work_tx, work_rx) = sync_channel::<(u64, Batch, Chunk)>(ahead);
        let work_rx = Mutex::new(work_rx);
        let (done_tx, done_rx) = channel::<Done>();
        std::thread::scope(|scope| {
            let reader_done = done_tx.clone();
            std::thread::Builder::new()
                .name("simdtok-read".into())
                .spawn_scoped(scope, move || read(reader, slot_rx, work_tx, reader_done))
                .map_err(|e| Failure::runtime(format!("cannot start a thread: {e}")))?;
            let mut workers = Vec::with_capacity(self.threads);
            for i in 0..self.threads {
                let (work_rx, done_tx) = (&work_rx, done_tx.clone());
                let jobs = Jobs {
                    whole: &whole,
                    work: &work,
                    finish: &finish,
                };
                let worker = std::thread::Builder::new()
                    .name(format!("simdtok-{i}"))
                    .spawn_scoped(scope, move || encode(work_rx, done_tx, jobs))
                    .map_err(|e| Failure::runtime(format!("cannot start a thread: {e}")))?;
                workers.push(worker);
            }
            drop(done_tx);
            // Whatever ends this (the last block, a bad record, a failed write), dropping the
            // slots and the results stops the reader and the workers, and the scope waits.
            let totals = write_in_order(done_rx, slot_tx, progress, &mut write)?;
            let scratches = workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
                .collect();
            Ok((totals, scratches))
        })
    }
}

/// A `whole` for [`Workers::run_keeping`] that leaves every batch to the records' `work`.
pub fn no_whole_batch<S>(_: &Batch, _: &mut S, _: &mut Chunk) -> Option<CliResult<u64>> {
    None
}

/// What a worker runs: on a whole batch, on each record, and on each block's chunk.
struct Jobs<'a, B, W, F> {
    whole: &'a B,
    work: &'a W,
    finish: &'a F,
}

/// The reader thread: reads blocks while it has slots, numbers them and hands them out.
fn read(
    mut reader: Reader,
    slots: Receiver<Slot>,
    work: SyncSender<(u64, Batch, Chunk)>,
    done: std::sync::mpsc::Sender<Done>,
) {
    let mut seq = 0;
    while let Ok(slot) = slots.recv() {
        match reader.next_batch(slot.input) {
            Ok(Some(batch)) => {
                if work.send((seq, batch, slot.chunk)).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(failure) => {
                // In order, after the blocks read before it.
                let _ = done.send(Done {
                    seq,
                    result: Err(failure),
                });
                return;
            }
        }
        seq += 1;
    }
}

/// A worker thread: encodes whole blocks until there are none.
fn encode<S, B, W, F>(
    work: &Mutex<Receiver<(u64, Batch, Chunk)>>,
    done: std::sync::mpsc::Sender<Done>,
    jobs: Jobs<'_, B, W, F>,
) -> S
where
    S: Default,
    B: Fn(&Batch, &mut S, &mut Chunk) -> Option<CliResult<u64>>,
    W: Fn(Record<'_>, &mut S, &mut Chunk) -> CliResult,
    F: Fn(&mut Chunk),
{
    let mut scratch = S::default();
    loop {
        // The lock is held only while waiting for the next block: once per block, not per text.
        let next = work.lock().unwrap_or_else(PoisonError::into_inner).recv();
        let Ok((seq, batch, mut chunk)) = next else {
            return scratch;
        };
        let encoded = (jobs.whole)(&batch, &mut scratch, &mut chunk).unwrap_or_else(|| {
            let mut records = 0;
            batch
                .records()
                .try_for_each(|record| {
                    records += 1;
                    (jobs.work)(record, &mut scratch, &mut chunk)
                })
                .map(|()| records)
        });
        let result = encoded.map(|records| {
            (jobs.finish)(&mut chunk);
            // Records the reader left out (a Parquet file's, with `--skip-bad`).
            chunk.skipped += batch.skipped;
            if let Some(first) = &batch.first_skipped {
                chunk.first_skipped.get_or_insert_with(|| first.clone());
            }
            let lines = batch.lines(records);
            let (part, consumed) = (batch.part, batch.consumed);
            let input = batch.into_block();
            Encoded {
                slot: Slot { input, chunk },
                part,
                consumed,
                lines,
            }
        });
        if done.send(Done { seq, result }).is_err() {
            return scratch;
        }
    }
}

/// The calling thread: writes the blocks' chunks in input order, giving back a slot for each.
fn write_in_order(
    done: Receiver<Done>,
    slots: SyncSender<Slot>,
    progress: &Progress,
    write: &mut impl FnMut(&Chunk, Part) -> CliResult,
) -> CliResult<Totals> {
    let mut totals = Totals::default();
    // Results that arrived before the ones ahead of them: slot `i` is block `next + i`.
    let mut waiting: VecDeque<Option<CliResult<Encoded>>> = VecDeque::new();
    let mut next = 0u64;
    // Lines of input before the next block: a failure's line is counted from its block's start.
    let mut lines_before = 0u64;
    for Done { seq, result } in done {
        let slot = (seq - next) as usize;
        if waiting.len() <= slot {
            waiting.resize_with(slot + 1, || None);
        }
        waiting[slot] = Some(result);
        while let Some(Some(_)) = waiting.front() {
            let result = waiting.pop_front().flatten().expect("checked above");
            let Encoded {
                mut slot,
                part,
                consumed,
                lines,
            } = result.map_err(|failure| failure.after_lines(lines_before))?;
            write(&slot.chunk, part)?;
            totals.texts += slot.chunk.texts;
            totals.tokens += slot.chunk.tokens;
            totals.bytes += consumed;
            totals.skipped += slot.chunk.skipped;
            if let Some(first) = slot.chunk.first_skipped.take() {
                totals
                    .first_skipped
                    .get_or_insert_with(|| first.after_lines(lines_before));
            }
            lines_before += lines;
            progress.advance(consumed);
            next += 1;
            slot.clear();
            // The reader may be gone already (end of input): a slot nobody takes is harmless.
            let _ = slots.try_send(slot);
        }
    }
    Ok(totals)
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;
    use crate::cli::args::InputFormat;

    /// `lines` lines of varied lengths, line `i` holding `i` in decimal (a bad byte on the lines
    /// in `bad`), generated as read.
    struct Lines {
        next: u64,
        lines: u64,
        bad: Vec<u64>,
        pending: Vec<u8>,
    }

    impl Read for Lines {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            while self.pending.len() < buf.len() && self.next <= self.lines {
                let i = self.next;
                self.next += 1;
                let fill = (i * 7919 % 300) as usize;
                self.pending.extend_from_slice(format!("{i} ").as_bytes());
                self.pending.extend(std::iter::repeat_n(b'x', fill));
                if self.bad.contains(&i) {
                    self.pending.push(0xFF);
                }
                self.pending.push(b'\n');
            }
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }

    fn reader(lines: u64, bad: &[u64], block: usize) -> Reader {
        let input = Lines {
            next: 1,
            lines,
            bad: bad.to_vec(),
            pending: Vec::new(),
        };
        Reader::new(
            Box::new(input),
            InputFormat::Lines,
            "gen".into(),
            block,
            None,
        )
    }

    /// Runs every line through the engine: each becomes its first word and its line number.
    fn run(threads: usize, lines: u64, bad: &[u64], block: usize) -> CliResult<(Vec<u8>, Totals)> {
        let mut out = Vec::new();
        let source = super::super::input::Source::for_tests("gen");
        let totals = Workers::new(threads)?.run(
            reader(lines, bad, block),
            &Progress::new(Some(false), None),
            |record, _: &mut (), chunk| {
                let text = source.line(record)?;
                let word = text.split(' ').next().unwrap_or("");
                chunk
                    .bytes
                    .extend_from_slice(format!("{word}\n").as_bytes());
                chunk.texts += 1;
                Ok(())
            },
            |_| {},
            |chunk, part| {
                assert_eq!(part, Part::Records);
                out.extend_from_slice(&chunk.bytes);
                Ok(())
            },
        )?;
        Ok((out, totals))
    }

    #[test]
    fn output_is_in_input_order_for_any_thread_count() {
        let want: Vec<u8> = (1..=20_000u64)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        for threads in [1, 2, 3, 8] {
            for block in [1, 4096, 65536] {
                let (got, totals) = run(threads, 20_000, &[], block).unwrap();
                assert_eq!(totals.texts, 20_000);
                assert!(got == want, "{threads} threads, blocks of {block}");
            }
        }
    }

    #[test]
    fn the_first_bad_line_in_input_order_is_reported() {
        for threads in [1, 2, 4] {
            let err = run(threads, 30_000, &[29_999, 12_345, 20_000], 4096).unwrap_err();
            let message = err.message.unwrap();
            assert!(message.starts_with("gen:12345: invalid UTF-8"), "{message}");
        }
    }

    /// The peak resident memory of this process, from /proc (Linux only).
    fn peak_rss() -> Option<u64> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        line.split_whitespace()
            .nth(1)?
            .parse::<u64>()
            .ok()
            .map(|kb| kb << 10)
    }

    #[test]
    fn memory_stays_bounded_whatever_the_input_size() {
        // About 300 MB of lines through four workers and a writer that is slower than them: the
        // blocks in flight stay bounded, so the peak grows by megabytes, not by the input.
        let Some(before) = peak_rss() else { return };
        let mut out_bytes = 0u64;
        let totals = Workers::new(4)
            .unwrap()
            .run(
                reader(2_000_000, &[], BLOCK_BYTES),
                &Progress::new(Some(false), None),
                |record, _: &mut (), chunk| {
                    chunk.bytes.extend_from_slice(record.bytes);
                    chunk.texts += 1;
                    Ok(())
                },
                |_| {},
                |chunk, _| {
                    out_bytes += chunk.bytes.len() as u64;
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    Ok(())
                },
            )
            .unwrap();
        assert_eq!(totals.texts, 2_000_000);
        assert!(out_bytes > 250 << 20, "{out_bytes}");
        let grown = peak_rss().unwrap().saturating_sub(before);
        assert!(grown < 64 << 20, "peak memory grew by {} MB", grown >> 20);
    }
}
