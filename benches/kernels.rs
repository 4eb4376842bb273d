//! Throughput of every kernel on every tier this CPU supports.
//!
//! One criterion group per kernel; within a group the function name is the tier
//! (`scalar`, `sse4.2`, `avx2`, `neon`) and the parameter the input size in bytes (for
//! `crc32c_short`, the piece length). Throughput is in input bytes, so tiers compare directly.
//!
//! ```text
//! cargo bench --bench kernels                                # everything (a few minutes)
//! cargo bench --bench kernels -- 'classify|crc32c_short'     # criterion's regex filter
//! cargo bench --bench kernels -- 'find_in/avx2'              # one kernel on one tier
//! cargo bench --bench kernels -- --test                      # run each benchmark once
//! cargo bench --bench kernels -- --measurement-time 3        # longer, steadier runs
//! python3 scripts/bench-table.py                             # Markdown table of the results
//! ```
//!
//! Inputs come from `simdtok::bench::synth` (shared with `simdtok report`): a fixed-seed xorshift
//! generator, so every run measures the same bytes: English-like prose made of a Zipf-distributed
//! synthetic lexicon, a multilingual UTF-8 mix (English, accented Latin, Cyrillic, CJK, emoji),
//! and a SentencePiece-style trie of 30 000 pieces over that lexicon. Each size is a prefix of
//! one 1 MiB buffer; every buffer is at most 1 MiB, so the numbers are for data in cache. The scanning kernels are given inputs where the
//! searched-for byte never occurs, so they scan the whole buffer; each benchmark checks its result
//! against that expectation (and the scalar tier) before it is timed.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simdtok::bench::synth::prune_values;
use simdtok::bench::synth::{
    MAX_SIZE, TRIE_TEXT_LEN, TrieInput, char_starts, letters, mixed, prose, short_pieces,
    special_values, trie_input,
};
use simdtok_kernels::{
    BlockMasks, ByteClassSpec, ByteClassTable, ByteSet, ClassSet, DoubleArray, Kernels, PruneTable,
    Tier, TrieBatch, TrieMatch,
};

/// Input sizes of the scanning kernels.
const SIZES: [usize; 6] = [16, 64, 256, 4 << 10, 64 << 10, 1 << 20];
/// Text sizes of the trie walks (every character start of the text is walked).
const TRIE_SIZES: [usize; 4] = [64, 256, 4 << 10, 64 << 10];
// Every size is a prefix of the generated buffers.
const _: () = assert!(SIZES[SIZES.len() - 1] <= MAX_SIZE && TRIE_SIZES[3] <= TRIE_TEXT_LEN);
/// Piece lengths of `crc32c_short` (`0` = uniformly random in 4..=16).
const SHORT_PIECES: [usize; 4] = [4, 8, 16, 0];
/// Pieces hashed per iteration of `crc32c_short`.
const SHORT_PIECE_COUNT: usize = 1024;
/// Starts per call of the batched trie walk (the text is chunked the way a tokenizer would).
const TRIE_BATCH: usize = 1024;

/// The tiers this CPU can run.
fn tiers() -> Vec<&'static Kernels> {
    Tier::ALL
        .into_iter()
        .filter_map(Kernels::for_tier)
        .collect()
}

fn bytes(n: usize) -> Throughput {
    Throughput::Bytes(n as u64)
}

// ---------------------------------------------------------------------------------------------
// Benchmarks

fn classify(c: &mut Criterion) {
    let table = ByteClassTable::new(&ByteClassSpec::standard(), ClassSet::ALL);
    let mut group = c.benchmark_group("classify");
    for size in SIZES {
        group.throughput(bytes(size));
        let mut expected = Vec::new();
        Kernels::scalar().classify(&table, &mixed()[..size], &mut expected);
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &mixed()[..n];
                let mut out: Vec<BlockMasks> = Vec::new();
                k.classify(&table, data, &mut out);
                assert!(
                    out == expected,
                    "{}: classify differs from scalar",
                    k.tier()
                );
                b.iter(|| {
                    k.classify(&table, black_box(data), &mut out);
                    black_box(&out);
                });
            });
        }
    }
    group.finish();
}

fn find_in(c: &mut Criterion) {
    // Word separators in letters-only text: none until the end.
    let set = ByteSet::of_classes(
        &ByteClassSpec::standard(),
        ClassSet::WHITESPACE | ClassSet::PUNCT,
    );
    let mut group = c.benchmark_group("find_in");
    for size in SIZES {
        group.throughput(bytes(size));
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &letters()[..n];
                assert_eq!(k.find_in(&set, data, 0), None);
                b.iter(|| k.find_in(&set, black_box(data), 0));
            });
        }
    }
    group.finish();
}

fn find_not_in(c: &mut Criterion) {
    // The first byte of ASCII prose that needs a slow path (not printable ASCII or whitespace):
    // none until the end.
    let classes = ClassSet::WHITESPACE | ClassSet::PUNCT | ClassSet::LETTER | ClassSet::DIGIT;
    let set = ByteSet::of_classes(&ByteClassSpec::standard(), classes);
    let mut group = c.benchmark_group("find_not_in");
    for size in SIZES {
        group.throughput(bytes(size));
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &prose()[..n];
                assert_eq!(k.find_not_in(&set, data, 0), None);
                b.iter(|| k.find_not_in(&set, black_box(data), 0));
            });
        }
    }
    group.finish();
}

fn count_utf8_chars(c: &mut Criterion) {
    let mut group = c.benchmark_group("count_utf8_chars");
    for size in SIZES {
        group.throughput(bytes(size));
        let expected = Kernels::scalar().count_utf8_chars(&mixed()[..size]);
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &mixed()[..n];
                assert_eq!(k.count_utf8_chars(data), expected);
                b.iter(|| k.count_utf8_chars(black_box(data)));
            });
        }
    }
    group.finish();
}

fn ascii_prefix_len(c: &mut Criterion) {
    let mut group = c.benchmark_group("ascii_prefix_len");
    for size in SIZES {
        group.throughput(bytes(size));
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &prose()[..n];
                assert_eq!(k.ascii_prefix_len(data), n);
                b.iter(|| k.ascii_prefix_len(black_box(data)));
            });
        }
    }
    group.finish();
}

fn crc32c(c: &mut Criterion) {
    let mut group = c.benchmark_group("crc32c");
    for size in SIZES {
        group.throughput(bytes(size));
        let expected = Kernels::scalar().crc32c(&prose()[..size]);
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &prose()[..n];
                assert_eq!(k.crc32c(data), expected);
                b.iter(|| k.crc32c(black_box(data)));
            });
        }
    }
    group.finish();
}

fn crc32c_short(c: &mut Criterion) {
    // Many independent short hashes (vocabulary lookups of word pieces), throughput per byte.
    let mut group = c.benchmark_group("crc32c_short");
    for len in SHORT_PIECES {
        let pieces = short_pieces(len, SHORT_PIECE_COUNT);
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let hash_all = |k: &Kernels, pieces: &[&[u8]]| {
            pieces
                .iter()
                .fold(0u32, |acc, p| acc.wrapping_add(k.crc32c(black_box(p))))
        };
        let expected = hash_all(Kernels::scalar(), &pieces);
        let param = if len == 0 {
            "4-16".to_string()
        } else {
            len.to_string()
        };
        group.throughput(bytes(total));
        for k in tiers() {
            group.bench_with_input(
                BenchmarkId::new(k.tier().name(), &param),
                &pieces,
                |b, pieces| {
                    assert_eq!(hash_all(k, pieces), expected);
                    b.iter(|| hash_all(k, pieces));
                },
            );
        }
    }
    group.finish();
}

fn crc32c_many(c: &mut Criterion) {
    // The same pieces as `crc32c_short`, hashed by one `crc32c_many` call per 1024 pieces.
    let mut group = c.benchmark_group("crc32c_many");
    for len in SHORT_PIECES {
        let pieces = short_pieces(len, SHORT_PIECE_COUNT);
        let total: usize = pieces.iter().map(|p| p.len()).sum();
        let mut expected = vec![0u32; pieces.len()];
        Kernels::scalar().crc32c_many(&pieces, &mut expected);
        let param = if len == 0 {
            "4-16".to_string()
        } else {
            len.to_string()
        };
        group.throughput(bytes(total));
        // The textbook table-driven CRC (one 256-entry table, a byte per step) as a baseline
        // beside the scalar tier's slicing-by-8.
        group.bench_with_input(
            BenchmarkId::new("bytewise-table", &param),
            &pieces,
            |b, pieces| {
                let mut out = vec![0u32; pieces.len()];
                bytewise_crc32c_many(pieces, &mut out);
                assert_eq!(out, expected);
                b.iter(|| {
                    bytewise_crc32c_many(black_box(pieces), &mut out);
                    black_box(&out);
                });
            },
        );
        for k in tiers() {
            group.bench_with_input(
                BenchmarkId::new(k.tier().name(), &param),
                &pieces,
                |b, pieces| {
                    let mut out = vec![0u32; pieces.len()];
                    k.crc32c_many(pieces, &mut out);
                    assert_eq!(out, expected);
                    b.iter(|| {
                        k.crc32c_many(black_box(pieces), &mut out);
                        black_box(&out);
                    });
                },
            );
        }
    }
    group.finish();
}

/// CRC-32C one byte per table lookup (Sarwate's algorithm).
fn bytewise_crc32c_many(pieces: &[&[u8]], out: &mut [u32]) {
    static TABLE: OnceLock<[u32; 256]> = OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, e) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0x82F6_3B78
                } else {
                    c >> 1
                };
            }
            *e = c;
        }
        t
    });
    for (o, p) in out.iter_mut().zip(pieces) {
        let mut c = !0u32;
        for &b in p.iter() {
            c = (c >> 8) ^ table[((c ^ b as u32) & 0xFF) as usize];
        }
        *o = !c;
    }
}

/// A pruning table with four distinct non-zero rows (digits; two letter rows; bytes ≥ 0xC0),
/// within what the x86 row lookup handles in SIMD.
fn few_row_values() -> [u8; 256] {
    let mut v = [0u8; 256];
    for b in 0..=255u8 {
        v[b as usize] = match b {
            b'0'..=b'9' => 2,
            b'a'..=b'z' | b'A'..=b'Z' => 4,
            0xC0..=0xFF => 3,
            _ => 0,
        };
    }
    v
}

fn prune_map(c: &mut Criterion) {
    prune_map_group(c, "prune_map", PruneTable::new(prune_values()));
    prune_map_group(c, "prune_map_few_rows", PruneTable::new(few_row_values()));
}

fn prune_map_group(c: &mut Criterion, name: &str, table: PruneTable) {
    let mut group = c.benchmark_group(name);
    for size in SIZES {
        group.throughput(bytes(size));
        let mut expected = Vec::new();
        Kernels::scalar().prune_map(&table, &mixed()[..size], &mut expected);
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &mixed()[..n];
                let mut out = Vec::new();
                k.prune_map(&table, data, &mut out);
                assert!(
                    out == expected,
                    "{}: prune_map differs from scalar",
                    k.tier()
                );
                b.iter(|| {
                    k.prune_map(&table, black_box(data), &mut out);
                    black_box(&out);
                });
            });
        }
    }
    group.finish();
}

fn prune_find_nonzero(c: &mut Criterion) {
    // The next special-token start or control byte in multilingual text: none until the end.
    let table = PruneTable::new(special_values());
    let mut group = c.benchmark_group("prune_find_nonzero");
    for size in SIZES {
        group.throughput(bytes(size));
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let data = &mixed()[..n];
                assert_eq!(k.prune_find_nonzero(&table, data, 0), None);
                b.iter(|| k.prune_find_nonzero(&table, black_box(data), 0));
            });
        }
    }
    group.finish();
}

/// The total number of matches of the prefix searches from every start, one walk at a time.
fn single_walks(k: &Kernels, da: &DoubleArray, text: &[u8], starts: &[u32]) -> usize {
    let mut out: Vec<TrieMatch> = Vec::with_capacity(da.max_key_len());
    let mut total = 0;
    for &s in starts {
        out.clear();
        total += k.trie_prefix_search(da, &text[s as usize..], &mut out);
        black_box(&out);
    }
    total
}

/// The same, batched: calls of at most [`TRIE_BATCH`] starts over the whole text.
fn batch_walks(
    k: &Kernels,
    da: &DoubleArray,
    text: &[u8],
    starts: &[u32],
    out: &mut TrieBatch,
) -> usize {
    let mut total = 0;
    for chunk in starts.chunks(TRIE_BATCH) {
        k.trie_prefix_search_batch(da, text, chunk, da.max_key_len(), out);
        total += (0..out.len()).map(|i| out.count(i)).sum::<usize>();
    }
    total
}

fn trie_prefix_search_batch(c: &mut Criterion) {
    // Every tier runs the scalar walk (see `Kernels::trie_prefix_search`); measured here are that
    // walk and, on AVX2 machines, the gather variant the tables do not dispatch.
    let mut group = c.benchmark_group("trie_prefix_search_batch");
    for size in TRIE_SIZES {
        group.throughput(bytes(size));
        let TrieInput { da, text } = trie_input();
        let text = &text[..size];
        let starts = char_starts(text);
        let expected = single_walks(Kernels::scalar(), da, text, &starts);
        group.bench_with_input(BenchmarkId::new("scalar", size), &size, |b, _| {
            let mut out = TrieBatch::new();
            assert_eq!(
                batch_walks(Kernels::scalar(), da, text, &starts, &mut out),
                expected
            );
            b.iter(|| batch_walks(Kernels::scalar(), da, black_box(text), &starts, &mut out));
        });
        #[cfg(target_arch = "x86_64")]
        if Kernels::for_tier(Tier::Avx2).is_some() {
            group.bench_with_input(BenchmarkId::new("avx2-gather", size), &size, |b, _| {
                assert_eq!(gather_walks(da, text, &starts), expected);
                b.iter(|| gather_walks(da, black_box(text), &starts));
            });
        }
    }
    group.finish();
}

/// The AVX2 gather variant over every start, in batches of [`TRIE_BATCH`]; the total matches.
#[cfg(target_arch = "x86_64")]
fn gather_walks(da: &DoubleArray, text: &[u8], starts: &[u32]) -> usize {
    let stride = da.max_key_len();
    let mut counts = vec![0u32; TRIE_BATCH];
    let mut matches = vec![TrieMatch::default(); TRIE_BATCH * stride];
    let mut total = 0;
    for chunk in starts.chunks(TRIE_BATCH) {
        let (c, m) = (
            &mut counts[..chunk.len()],
            &mut matches[..chunk.len() * stride],
        );
        // SAFETY: called only where `Kernels::for_tier(Avx2)` is `Some` (the CPU has AVX2);
        // starts are inside `text` and the buffers have the sizes the kernel requires.
        unsafe {
            simdtok_kernels::x86_64::avx2::trie_prefix_search_batch_gather(
                da, text, chunk, stride, c, m,
            )
        };
        total += c.iter().map(|&n| n as usize).sum::<usize>();
    }
    total
}

fn trie_prefix_search(c: &mut Criterion) {
    // Every tier runs the scalar walk here, so the tiers should tie: a gauge of the noise.
    let mut group = c.benchmark_group("trie_prefix_search");
    for size in TRIE_SIZES {
        group.throughput(bytes(size));
        for k in tiers() {
            group.bench_with_input(BenchmarkId::new(k.tier().name(), size), &size, |b, &n| {
                let TrieInput { da, text } = trie_input();
                let text = &text[..n];
                let starts = char_starts(text);
                b.iter(|| single_walks(k, da, black_box(text), &starts));
            });
        }
    }
    group.finish();
}

fn config() -> Criterion {
    // Short runs so the whole suite takes a few minutes; criterion's command-line options
    // (`--warm-up-time`, `--measurement-time`, `--sample-size`) override these.
    Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(20)
}

criterion_group! {
    name = benches;
    config = config();
    targets = classify, find_in, find_not_in, count_utf8_chars, ascii_prefix_len, crc32c,
        crc32c_short, crc32c_many, prune_map, prune_find_nonzero, trie_prefix_search_batch,
        trie_prefix_search
}
criterion_main!(benches);
