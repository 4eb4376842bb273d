//! The kernel measurements of `simdtok report`: each kernel family (byte classes, CRC-32C,
//! first-byte pruning, trie walks) invoked as `benches/kernels.rs` invokes it, on the same
//! generated inputs ([`super::synth`]), at a few sizes. Each case also yields a fingerprint of
//! its full result (masks, positions, hashes, matches), compared with the scalar tier's.

use std::hint::black_box;

use simdtok_kernels::{
    BlockMasks, ByteClassSpec, ByteClassTable, ByteSet, ClassSet, DoubleArray, Kernels, PruneTable,
    TrieBatch, TrieMatch,
};

use super::inputs::InputDigest;
use super::synth;

/// Input sizes of the scanning kernels: a short piece, a page, a chunk in L2, a buffer past it.
pub const SIZES: [usize; 4] = [64, 4 << 10, 64 << 10, 1 << 20];
/// Text sizes of the trie walks (every character start of the text is walked).
pub const TRIE_SIZES: [usize; 2] = [4 << 10, 64 << 10];
/// Pieces hashed per call of `crc32c_many` (of 4 to 16 bytes, as word pieces are).
pub const PIECES: usize = 1024;
/// Starts per call of the batched trie walk.
const TRIE_BATCH: usize = 1024;

/// The report's names of the generated inputs.
pub mod input {
    /// English-like ASCII prose.
    pub const PROSE: &str = "synthetic/prose";
    /// Letters only.
    pub const LETTERS: &str = "synthetic/letters";
    /// Multilingual UTF-8.
    pub const MIXED: &str = "synthetic/mixed";
    /// The trie's keys, as the double array's bytes.
    pub const TRIE_KEYS: &str = "synthetic/trie-keys";
    /// The text the trie is walked over.
    pub const TRIE_TEXT: &str = "synthetic/trie-text";
}

type Op = Box<dyn FnMut(&'static Kernels, Mode) -> u64>;

/// Timing the kernel, or fingerprinting its whole result.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Time,
    Check,
}

/// One kernel at one size.
pub struct KernelCase {
    /// `byte-classes`, `crc32c`, `prune` or `trie`.
    pub family: &'static str,
    /// The kernel (`classify`, `find_in`, …).
    pub name: &'static str,
    /// Bytes per iteration.
    pub size: usize,
    /// The names of its inputs.
    pub inputs: Vec<&'static str>,
    op: Op,
}

impl KernelCase {
    /// One iteration on `kernels`; returns a cheap part of the result (to keep it alive).
    pub fn run(&mut self, kernels: &'static Kernels) -> u64 {
        (self.op)(kernels, Mode::Time)
    }

    /// A fingerprint of one iteration's whole result on `kernels`.
    pub fn fingerprint(&mut self, kernels: &'static Kernels) -> u64 {
        (self.op)(kernels, Mode::Check)
    }
}

/// Folds `x` into a running FNV-style hash.
fn mix(acc: u64, x: u64) -> u64 {
    (acc ^ x).wrapping_mul(0x0000_0100_0000_01B3)
}

/// Every case: each kernel at each of its sizes.
pub fn cases() -> Vec<KernelCase> {
    let mut out = Vec::new();
    let spec = ByteClassSpec::standard();
    for size in SIZES {
        out.push(classify(&spec, size));
        out.push(find(&spec, size, false));
        out.push(find(&spec, size, true));
        out.push(count_utf8_chars(size));
        out.push(ascii_prefix_len(size));
        out.push(escape_spaces(size));
        out.push(crc32c(size));
        out.push(prune_map(size));
        out.push(prune_find_nonzero(size));
    }
    out.push(crc32c_many());
    for size in TRIE_SIZES {
        out.push(trie(size, false));
        out.push(trie(size, true));
    }
    // Grouped by kernel, then size (the order tables show).
    out.sort_by_key(|c| (order(c.name), c.size));
    out
}

fn order(name: &str) -> usize {
    const ORDER: [&str; 12] = [
        "classify",
        "find_in",
        "find_not_in",
        "count_utf8_chars",
        "ascii_prefix_len",
        "escape_spaces",
        "crc32c",
        "crc32c_many",
        "prune_map",
        "prune_find_nonzero",
        "trie_prefix_search",
        "trie_prefix_search_batch",
    ];
    ORDER.iter().position(|n| *n == name).unwrap_or(ORDER.len())
}

/// The digests of the generated inputs.
pub fn input_digests() -> Vec<InputDigest> {
    let trie = synth::trie_input();
    let keys: Vec<u8> = trie.da.to_bytes();
    vec![
        InputDigest::of_bytes(input::PROSE, "synthetic", synth::prose()),
        InputDigest::of_bytes(input::LETTERS, "synthetic", synth::letters()),
        InputDigest::of_bytes(input::MIXED, "synthetic", synth::mixed()),
        InputDigest::of_bytes(input::TRIE_KEYS, "synthetic", &keys),
        InputDigest::of_bytes(input::TRIE_TEXT, "synthetic", &trie.text),
    ]
}

fn classify(spec: &ByteClassSpec, size: usize) -> KernelCase {
    let table = ByteClassTable::new(spec, ClassSet::ALL);
    let data = &synth::mixed()[..size];
    let mut out: Vec<BlockMasks> = Vec::new();
    KernelCase {
        family: "byte-classes",
        name: "classify",
        size,
        inputs: vec![input::MIXED],
        op: Box::new(move |k, mode| {
            k.classify(&table, black_box(data), &mut out);
            match mode {
                Mode::Time => out.len() as u64,
                Mode::Check => out.iter().flat_map(|m| m.0).fold(0, mix),
            }
        }),
    }
}

/// `find_in` over letters for a separator (none until the end), or `find_not_in` over prose
/// for a byte that needs a slow path (none either): both scan the whole buffer.
fn find(spec: &ByteClassSpec, size: usize, not_in: bool) -> KernelCase {
    let (name, set, input, data) = if not_in {
        let classes = ClassSet::WHITESPACE | ClassSet::PUNCT | ClassSet::LETTER | ClassSet::DIGIT;
        let set = ByteSet::of_classes(spec, classes);
        ("find_not_in", set, input::PROSE, &synth::prose()[..size])
    } else {
        let set = ByteSet::of_classes(spec, ClassSet::WHITESPACE | ClassSet::PUNCT);
        ("find_in", set, input::LETTERS, &synth::letters()[..size])
    };
    KernelCase {
        family: "byte-classes",
        name,
        size,
        inputs: vec![input],
        op: Box::new(move |k, _| {
            let found = if not_in {
                k.find_not_in(&set, black_box(data), 0)
            } else {
                k.find_in(&set, black_box(data), 0)
            };
            found.map_or(u64::MAX, |p| p as u64)
        }),
    }
}

fn count_utf8_chars(size: usize) -> KernelCase {
    let data = &synth::mixed()[..size];
    KernelCase {
        family: "byte-classes",
        name: "count_utf8_chars",
        size,
        inputs: vec![input::MIXED],
        op: Box::new(move |k, _| k.count_utf8_chars(black_box(data)) as u64),
    }
}

fn ascii_prefix_len(size: usize) -> KernelCase {
    let data = &synth::prose()[..size];
    KernelCase {
        family: "byte-classes",
        name: "ascii_prefix_len",
        size,
        inputs: vec![input::PROSE],
        op: Box::new(move |k, _| k.ascii_prefix_len(black_box(data)) as u64),
    }
}

/// Prose escaped as a SentencePiece normalizer escapes it: each space as `▁`, a space after a
/// space dropped.
fn escape_spaces(size: usize) -> KernelCase {
    let data = &synth::prose()[..size];
    let mut out = Vec::new();
    KernelCase {
        family: "byte-classes",
        name: "escape_spaces",
        size,
        inputs: vec![input::PROSE],
        op: Box::new(move |k, mode| {
            out.clear();
            let last = k.escape_spaces_append(black_box(data), &mut out, true, false);
            match mode {
                Mode::Time => out.len() as u64,
                Mode::Check => out.iter().fold(last as u64, |acc, &b| mix(acc, b as u64)),
            }
        }),
    }
}

fn crc32c(size: usize) -> KernelCase {
    let data = &synth::prose()[..size];
    KernelCase {
        family: "crc32c",
        name: "crc32c",
        size,
        inputs: vec![input::PROSE],
        op: Box::new(move |k, _| u64::from(k.crc32c(black_box(data)))),
    }
}

/// [`PIECES`] pieces of 4 to 16 bytes cut one after another from the prose, hashed in one call.
fn crc32c_many() -> KernelCase {
    let pieces = synth::short_pieces(0, PIECES);
    let size = pieces.iter().map(|p| p.len()).sum();
    let mut out = vec![0u32; pieces.len()];
    KernelCase {
        family: "crc32c",
        name: "crc32c_many",
        size,
        inputs: vec![input::PROSE],
        op: Box::new(move |k, mode| {
            k.crc32c_many(black_box(&pieces), &mut out);
            match mode {
                Mode::Time => u64::from(out[0]),
                Mode::Check => out.iter().map(|&h| u64::from(h)).fold(0, mix),
            }
        }),
    }
}

fn prune_map(size: usize) -> KernelCase {
    let table = PruneTable::new(synth::prune_values());
    let data = &synth::mixed()[..size];
    let mut out = Vec::new();
    KernelCase {
        family: "prune",
        name: "prune_map",
        size,
        inputs: vec![input::MIXED],
        op: Box::new(move |k, mode| {
            k.prune_map(&table, black_box(data), &mut out);
            match mode {
                Mode::Time => out.len() as u64,
                Mode::Check => out.iter().map(|&v| u64::from(v)).fold(0, mix),
            }
        }),
    }
}

/// The next special-token start or control byte in multilingual text: none until the end.
fn prune_find_nonzero(size: usize) -> KernelCase {
    let table = PruneTable::new(synth::special_values());
    let data = &synth::mixed()[..size];
    KernelCase {
        family: "prune",
        name: "prune_find_nonzero",
        size,
        inputs: vec![input::MIXED],
        op: Box::new(move |k, _| {
            k.prune_find_nonzero(&table, black_box(data), 0)
                .map_or(u64::MAX, |p| p as u64)
        }),
    }
}

/// Prefix searches from every character start of the trie text, one walk at a time or in
/// batches. Every tier runs the scalar walk (see `Kernels::trie_prefix_search`), so the tiers
/// should tie: the rows gauge the noise.
fn trie(size: usize, batched: bool) -> KernelCase {
    let trie = synth::trie_input();
    let da: &'static DoubleArray = &trie.da;
    let text = &trie.text[..size];
    let starts = synth::char_starts(text);
    let mut single: Vec<TrieMatch> = Vec::with_capacity(da.max_key_len());
    let mut batch = TrieBatch::new();
    KernelCase {
        family: "trie",
        name: if batched {
            "trie_prefix_search_batch"
        } else {
            "trie_prefix_search"
        },
        size,
        inputs: vec![input::TRIE_KEYS, input::TRIE_TEXT],
        op: Box::new(move |k, mode| {
            let mut acc = 0u64;
            let check = mode == Mode::Check;
            if batched {
                for chunk in starts.chunks(TRIE_BATCH) {
                    k.trie_prefix_search_batch(
                        da,
                        black_box(text),
                        chunk,
                        da.max_key_len(),
                        &mut batch,
                    );
                    for i in 0..batch.len() {
                        acc = acc.wrapping_add(batch.count(i) as u64);
                        if check {
                            for m in batch.matches(i) {
                                acc = mix(acc, (u64::from(m.len) << 32) | u64::from(m.value));
                            }
                        }
                    }
                }
            } else {
                for &s in &starts {
                    single.clear();
                    acc = acc.wrapping_add(k.trie_prefix_search(
                        da,
                        &black_box(text)[s as usize..],
                        &mut single,
                    ) as u64);
                    if check {
                        for m in &single {
                            acc = mix(acc, (u64::from(m.len) << 32) | u64::from(m.value));
                        }
                    }
                }
            }
            acc
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simdtok_kernels::Tier;

    #[test]
    fn every_tier_fingerprints_like_scalar() {
        let scalar = Kernels::scalar();
        for mut case in cases()
            .into_iter()
            .filter(|c| c.size <= 4096 || c.name == "crc32c_many")
        {
            let expected = case.fingerprint(scalar);
            for tier in Tier::supported() {
                let k = Kernels::for_tier(tier).unwrap();
                assert_eq!(
                    case.fingerprint(k),
                    expected,
                    "{} {} {tier}",
                    case.name,
                    case.size
                );
                case.run(k);
            }
        }
    }

    #[test]
    fn scanning_cases_scan_everything() {
        let scalar = Kernels::scalar();
        for mut case in cases() {
            if matches!(case.name, "find_in" | "find_not_in" | "prune_find_nonzero") {
                assert_eq!(case.run(scalar), u64::MAX, "{} finds nothing", case.name);
            }
            if case.name == "ascii_prefix_len" {
                assert_eq!(case.run(scalar), case.size as u64);
            }
        }
        let digests = input_digests();
        assert_eq!(digests.len(), 5);
        assert!(digests.iter().all(|d| d.bytes > 0 && d.sha256.len() == 64));
    }
}
