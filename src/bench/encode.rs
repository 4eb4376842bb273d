//! Encode throughput of one model on several tiers and thread counts, over one corpus.
//!
//! Each configuration (tier × thread count) gets a pool of worker threads that lives for the
//! whole measurement: the texts are split into contiguous slices of about equal bytes, one per
//! thread, and every pass each worker encodes its slice into its own `Vec<u32>` — no lock or
//! shared counter inside the loop; barriers only start and end a pass. Workers persist because
//! simdtok's piece caches are per thread: a pool reused across passes keeps them warm, as a
//! long-running service does, and a single-thread run goes through the same path as an N-thread
//! one, so the two compare fairly.
//!
//! The first pass of each pool is a warm-up; it also records the ids, which must be identical
//! to the scalar tier's on one thread. Timed passes then go round-robin over the configurations,
//! so a disturbance on a shared machine spreads over all of them instead of skewing one.

use std::ops::Range;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use simdtok_kernels::{Kernels, Tier};

use super::corpus::{Corpus, ModelSpec};
use super::error::BenchError;
use super::inputs::hex;
use crate::cache::budget;
use crate::{CacheBudget, LoadOptions, Tokenizer};

/// How many timed passes each configuration gets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PassPlan {
    /// At least this many (0 measures nothing but the warm-up and the ids check).
    pub min_passes: usize,
    /// At most this many.
    pub max_passes: usize,
    /// Past `min_passes`, passes continue while a configuration's timed passes add up to less
    /// than this.
    pub time_per_config: Duration,
}

impl PassPlan {
    /// Exactly `n` timed passes.
    pub fn fixed(n: usize) -> PassPlan {
        PassPlan {
            min_passes: n,
            max_passes: n,
            time_per_config: Duration::ZERO,
        }
    }

    fn wants_more(&self, samples: &[u64]) -> bool {
        let spent: u64 = samples.iter().sum();
        samples.len() < self.min_passes
            || (samples.len() < self.max_passes
                && Duration::from_nanos(spent) < self.time_per_config)
    }
}

/// What a worker does with the ids of a timed pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PassIds {
    /// One buffer, reused for every text (`encode_ids_into`): the encoder's own speed.
    #[default]
    Discard,
    /// Every id of the pass, kept in one vector per thread (`encode_ids_append`), as a batch
    /// call that returns all its ids does: its memory traffic (the ids of a 4 MB corpus are about
    /// as large, more than a core's cache) is part of the time.
    Keep,
}

/// The measurement of one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodeMeasurement {
    /// The tier.
    pub tier: Tier,
    /// Worker threads.
    pub threads: usize,
    /// Bytes of text per pass.
    pub bytes: u64,
    /// Tokens per pass.
    pub tokens: u64,
    /// SHA-256 of every text's token count and ids (little-endian `u32`s), in text order.
    pub ids_sha256: String,
    /// The warm-up pass (cold caches), in nanoseconds.
    pub warmup_ns: u64,
    /// The timed passes, in nanoseconds each.
    pub samples_ns: Vec<u64>,
    /// The model's pre-tokenizer regexes that run on the regex engine
    /// ([`Tokenizer::regex_fallbacks`]): a slower path, said beside the table.
    pub regex_fallbacks: Vec<String>,
    /// The most bytes one worker's caches held after a pass ([`budget::held_on_this_thread`]).
    pub cache_bytes_per_thread: u64,
}

/// Contiguous ranges of `texts`, one per part, of about equal bytes (fewer parts than asked
/// when there are fewer texts; none for no texts).
pub fn split_even(texts: &[&str], parts: usize) -> Vec<Range<usize>> {
    let total: usize = texts.iter().map(|t| t.len()).sum();
    let parts = parts.clamp(1, texts.len().max(1));
    let mut ranges = Vec::with_capacity(parts);
    let (mut start, mut acc) = (0, 0);
    for (i, t) in texts.iter().enumerate() {
        acc += t.len();
        let k = ranges.len() + 1;
        let left = texts.len() - (i + 1);
        // Close slice k where its share ends: when the middle of the next text lies past it
        // (keeping a text for each slice still to come, and closing anyway when only that many
        // are left).
        let next = texts.get(i + 1).map_or(0, |t| t.len());
        let share = (2 * acc + next) * parts >= 2 * total * k && left >= parts - k;
        if k < parts && (share || left == parts - k) {
            ranges.push(start..i + 1);
            start = i + 1;
        }
    }
    if start < texts.len() {
        ranges.push(start..texts.len());
    }
    ranges
}

/// Measures `model` over `corpus` on each tier × thread count.
///
/// # Errors
/// When the model does not load, a tier is not supported by this CPU, or an encoder panics.
pub fn measure_model(
    model: &ModelSpec,
    corpus: &Corpus,
    tiers: &[Tier],
    threads: &[usize],
    plan: &PassPlan,
    pass_ids: PassIds,
    cache_budget: CacheBudget,
) -> Result<Vec<EncodeMeasurement>, BenchError> {
    let mut tokenizers = Vec::new();
    let options = LoadOptions {
        cache_budget,
        ..LoadOptions::default()
    };
    for &tier in tiers {
        let kernels = Kernels::for_tier(tier)
            .ok_or_else(|| BenchError::Tier(format!("tier {tier} is not supported by this CPU")))?;
        let tokenizer = Tokenizer::from_file_with_options(&model.path, kernels, &options)?;
        tokenizers.push((tier, tokenizer));
    }
    let texts = corpus.texts();
    let bytes = corpus.bytes();
    std::thread::scope(|scope| {
        let mut pools = Vec::new();
        for (tier, tokenizer) in &tokenizers {
            for &n in threads {
                pools.push(Pool::spawn(scope, tokenizer, &texts, n, *tier, pass_ids));
            }
        }
        let result = run_pools(&pools, plan, model);
        // Every pool is released, whatever happened, so the scope can join its threads.
        let cache_bytes: Vec<u64> = pools
            .iter()
            .map(|p| p.sync.cache_bytes.load(Ordering::Relaxed) as u64)
            .collect();
        let ids: Vec<_> = pools.into_iter().map(Pool::finish).collect();
        let timings = result?;
        let mut out = Vec::new();
        for (((pool_ids, (warmup_ns, samples_ns)), cache_bytes), (tier, n)) in
            ids.into_iter().zip(timings).zip(cache_bytes).zip(
                tokenizers
                    .iter()
                    .flat_map(|(t, _)| threads.iter().map(|&n| (*t, n))),
            )
        {
            let (ids, lens) = pool_ids.ok_or_else(|| BenchError::Panicked {
                model: model.label.clone(),
                tier: tier.name().to_owned(),
                threads: n,
            })?;
            out.push(EncodeMeasurement {
                tier,
                threads: n,
                bytes,
                tokens: ids.len() as u64,
                ids_sha256: digest(&lens, &ids),
                warmup_ns,
                samples_ns,
                regex_fallbacks: tokenizers[0].1.regex_fallbacks(),
                cache_bytes_per_thread: cache_bytes,
            });
        }
        Ok(out)
    })
}

/// The warm-up of every pool, then timed passes round-robin until each has what `plan` asks.
fn run_pools(
    pools: &[Pool<'_>],
    plan: &PassPlan,
    model: &ModelSpec,
) -> Result<Vec<(u64, Vec<u64>)>, BenchError> {
    let check = |pool: &Pool<'_>| {
        if pool.sync.failed.load(Ordering::Relaxed) {
            Err(BenchError::Panicked {
                model: model.label.clone(),
                tier: pool.tier.name().to_owned(),
                threads: pool.threads,
            })
        } else {
            Ok(())
        }
    };
    let mut timings = Vec::with_capacity(pools.len());
    for pool in pools {
        let warmup = pool.pass();
        check(pool)?;
        timings.push((warmup, Vec::new()));
    }
    loop {
        let mut any = false;
        for (pool, (_, samples)) in pools.iter().zip(timings.iter_mut()) {
            if plan.wants_more(samples) {
                samples.push(pool.pass());
                check(pool)?;
                any = true;
            }
        }
        if !any {
            return Ok(timings);
        }
    }
}

/// The warm-up pass's output of one worker: ids of its texts, and each text's count.
type WorkerIds = (Vec<u32>, Vec<u32>);

/// What the main thread and a pool's workers share: two barriers that start and end a pass, and
/// flags read only between passes.
struct PoolSync {
    start: Barrier,
    done: Barrier,
    quit: AtomicBool,
    failed: AtomicBool,
    /// The most bytes a worker's caches held after a pass.
    cache_bytes: AtomicUsize,
}

/// Worker threads of one configuration, waiting for the next pass.
struct Pool<'scope> {
    sync: Arc<PoolSync>,
    workers: Vec<ScopedJoinHandle<'scope, WorkerIds>>,
    tier: Tier,
    threads: usize,
}

impl<'scope> Pool<'scope> {
    fn spawn<'env>(
        scope: &'scope Scope<'scope, 'env>,
        tokenizer: &'env Tokenizer,
        texts: &'env [&'env str],
        threads: usize,
        tier: Tier,
        pass_ids: PassIds,
    ) -> Pool<'scope> {
        let slices = split_even(texts, threads);
        let sync = Arc::new(PoolSync {
            start: Barrier::new(slices.len() + 1),
            done: Barrier::new(slices.len() + 1),
            quit: AtomicBool::new(false),
            failed: AtomicBool::new(false),
            cache_bytes: AtomicUsize::new(0),
        });
        let workers = slices
            .into_iter()
            .map(|range| {
                let sync = Arc::clone(&sync);
                let slice = &texts[range];
                scope.spawn(move || worker(tokenizer, slice, &sync, pass_ids))
            })
            .collect();
        Pool {
            sync,
            workers,
            tier,
            threads,
        }
    }

    /// One pass of every worker; its wall time in nanoseconds.
    fn pass(&self) -> u64 {
        let start = Instant::now();
        self.sync.start.wait();
        self.sync.done.wait();
        start.elapsed().as_nanos() as u64
    }

    /// Stops the workers; the warm-up pass's ids and counts in text order (`None` if a worker
    /// panicked).
    fn finish(self) -> Option<WorkerIds> {
        self.sync.quit.store(true, Ordering::Relaxed);
        self.sync.start.wait();
        let failed = self.sync.failed.load(Ordering::Relaxed);
        let mut ids = Vec::new();
        let mut lens = Vec::new();
        for worker in self.workers {
            let (i, l) = worker.join().ok()?;
            ids.extend_from_slice(&i);
            lens.extend_from_slice(&l);
        }
        (!failed).then_some((ids, lens))
    }
}

/// A worker: waits for a pass, encodes its slice, reports the end of the pass. The first pass
/// records the ids (for the check); the others encode, doing with the ids what `pass_ids` says.
/// A panic is caught and flagged, and the worker keeps taking part in the barriers, so the pool
/// still shuts down cleanly.
fn worker(tokenizer: &Tokenizer, texts: &[&str], sync: &PoolSync, pass_ids: PassIds) -> WorkerIds {
    let mut ids = Vec::new();
    // The kept ids of a pass; its room, once grown, is reused by every later pass.
    let mut kept = Vec::new();
    let mut all = Vec::new();
    let mut lens = Vec::with_capacity(texts.len());
    let mut first = true;
    loop {
        sync.start.wait();
        // The barrier orders this load after the main thread's store.
        if sync.quit.load(Ordering::Relaxed) {
            return (all, lens);
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            if first {
                for text in texts {
                    tokenizer.encode_ids_into(text, &mut ids);
                    lens.push(ids.len() as u32);
                    all.extend_from_slice(&ids);
                }
            } else if pass_ids == PassIds::Keep {
                kept.clear();
                for text in texts {
                    tokenizer.encode_ids_append(text, &mut kept);
                }
                std::hint::black_box(&kept);
            } else {
                for text in texts {
                    tokenizer.encode_ids_into(text, &mut ids);
                    std::hint::black_box(&ids);
                }
            }
        }));
        if outcome.is_err() {
            sync.failed.store(true, Ordering::Relaxed);
        }
        sync.cache_bytes
            .fetch_max(budget::held_on_this_thread(), Ordering::Relaxed);
        first = false;
        sync.done.wait();
    }
}

fn digest(lens: &[u32], ids: &[u32]) -> String {
    let mut hasher = Sha256::new();
    let mut at = 0;
    for &n in lens {
        hasher.update(n.to_le_bytes());
        for id in &ids[at..at + n as usize] {
            hasher.update(id.to_le_bytes());
        }
        at += n as usize;
    }
    hex(&hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_contiguous_and_balanced() {
        let texts = ["aaaa", "b", "cc", "dddd", "e", "fff"];
        for parts in 1..=8 {
            let ranges = split_even(&texts, parts);
            assert_eq!(ranges.len(), parts.min(texts.len()));
            assert_eq!(ranges[0].start, 0);
            assert_eq!(ranges.last().unwrap().end, texts.len());
            for w in ranges.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert!(!w[0].is_empty());
            }
        }
        let halves = split_even(&texts, 2);
        assert_eq!(halves, [0..3, 3..6]);
        assert!(split_even(&[], 4).is_empty());
    }

    #[test]
    fn every_tier_and_thread_count_gives_the_same_ids() {
        let corpus = Corpus::from_texts(&["I am a cat.", "", "As yet I have no name.", "x"]);
        let model = ModelSpec {
            label: "unigram".into(),
            path: super::super::corpus::bundled_root()
                .join("tests/data/sentencepiece/botchan_en_unigram_1000.model"),
        };
        let tiers = Tier::supported();
        let mut digests = Vec::new();
        for pass_ids in [PassIds::Discard, PassIds::Keep] {
            let plan = PassPlan::fixed(2);
            let runs = measure_model(
                &model,
                &corpus,
                &tiers,
                &[1, 3],
                &plan,
                pass_ids,
                CacheBudget::DEFAULT,
            )
            .unwrap();
            assert_eq!(runs.len(), tiers.len() * 2);
            for run in &runs {
                assert_eq!(run.ids_sha256, runs[0].ids_sha256, "{:?}", run.tier);
                assert_eq!(run.tokens, runs[0].tokens);
                assert_eq!(run.samples_ns.len(), 2);
                assert_eq!(run.bytes, corpus.bytes());
            }
            assert!(runs[0].tokens > 5);
            digests.push(runs[0].ids_sha256.clone());
        }
        assert_eq!(digests[0], digests[1]);
    }
}
