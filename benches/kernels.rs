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
//! Inputs are generated from a fixed-seed xorshift generator, so every run measures the same
//! bytes: English-like prose made of a Zipf-distributed synthetic lexicon, a multilingual UTF-8
//! mix (English, accented Latin, Cyrillic, CJK, emoji), and a SentencePiece-style trie of 30 000
//! pieces over that lexicon. Each size is a prefix of one 1 MiB buffer; every buffer is at most
//! 1 MiB, so the numbers are for data in cache. The scanning kernels are given inputs where the
//! searched-for byte never occurs, so they scan the whole buffer; each benchmark checks its result
//! against that expectation (and the scalar tier) before it is timed.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simdtok_kernels::{
    BlockMasks, ByteClassSpec, ByteClassTable, ByteSet, ClassSet, DoubleArray, Kernels, PruneTable,
    Tier, TrieBatch, TrieMatch,
};

/// Input sizes of the scanning kernels.
const SIZES: [usize; 6] = [16, 64, 256, 4 << 10, 64 << 10, 1 << 20];
/// Text sizes of the trie walks (every character start of the text is walked).
const TRIE_SIZES: [usize; 4] = [64, 256, 4 << 10, 64 << 10];
/// The largest input: every generated buffer has this length.
const MAX_SIZE: usize = 1 << 20;
/// Piece lengths of `crc32c_short` (`0` = uniformly random in 4..=16).
const SHORT_PIECES: [usize; 4] = [4, 8, 16, 0];
/// Pieces hashed per iteration of `crc32c_short`.
const SHORT_PIECE_COUNT: usize = 1024;
/// Keys in the benchmark trie.
const TRIE_KEYS: usize = 30_000;
/// Starts per call of the batched trie walk (the text is chunked the way a tokenizer would).
const TRIE_BATCH: usize = 1024;
/// SentencePiece's word-boundary mark, U+2581.
const SP_SPACE: &str = "\u{2581}";

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
// Deterministic inputs

/// xorshift64* (Vigna): small, fast, and good enough for test data.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A Zipf(1) rank in `0..n`: rank `r` has probability ∝ 1 / (r + 1), like word frequencies.
    fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (((n as f64 + 1.0).powf(u) - 1.0) as usize).min(n - 1)
    }
}

/// English-like words, most frequent first: real function words, then words built from
/// syllables.
fn lexicon() -> &'static [String] {
    static LEXICON: OnceLock<Vec<String>> = OnceLock::new();
    LEXICON.get_or_init(|| {
        const COMMON: &[&str] = &[
            "the", "of", "and", "to", "a", "in", "is", "that", "it", "was", "for", "on", "with",
            "as", "by", "at", "be", "this", "from", "or", "have", "an", "which", "not", "are",
            "but", "they", "his", "her", "all", "were", "one", "their", "there", "been", "has",
            "when", "who", "will", "more", "no", "if", "out", "so", "said", "what", "up", "its",
            "about", "into", "than", "them", "can", "only", "other", "new", "some", "could",
            "time", "these", "two", "may", "then", "do", "first", "any", "my", "now", "such",
        ];
        const ONSETS: &[&str] = &[
            "", "", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v",
            "w", "y", "z", "th", "st", "tr", "pl", "ch", "sh", "br", "gr", "cl", "fr", "sp", "wh",
        ];
        const VOWELS: &[&str] = &[
            "a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "io", "ai", "ee", "oo", "y",
        ];
        const CODAS: &[&str] = &[
            "", "", "", "n", "r", "s", "t", "l", "m", "nd", "st", "ng", "ck", "rt", "ts", "nt",
            "ss", "ll", "ght", "x",
        ];
        const SUFFIXES: &[&str] = &[
            "", "", "", "", "", "s", "ed", "ing", "er", "ly", "tion", "ment", "ness", "able",
        ];
        let mut rng = Rng::new(1);
        let mut words: Vec<String> = COMMON.iter().map(|w| w.to_string()).collect();
        let mut seen: std::collections::HashSet<String> = words.iter().cloned().collect();
        while words.len() < 6000 {
            let mut w = String::new();
            for _ in 0..rng.range(1, 4) {
                w.push_str(rng.pick(ONSETS));
                w.push_str(rng.pick(VOWELS));
                w.push_str(rng.pick(CODAS));
            }
            w.push_str(rng.pick(SUFFIXES));
            if w.len() >= 2 && w.len() <= 16 && seen.insert(w.clone()) {
                words.push(w);
            }
        }
        words
    })
}

fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One English-like sentence (printable ASCII), followed by a space.
fn english_sentence(rng: &mut Rng, out: &mut String, emoji: bool) {
    let lex = lexicon();
    let n = rng.range(4, 18);
    for i in 0..n {
        if i > 0 {
            out.push(' ');
        }
        let word = if rng.chance(3) {
            match rng.below(3) {
                0 => format!("{}", rng.below(100)),
                1 => format!("{}", 1800 + rng.below(230)),
                _ => format!("{}.{}", rng.below(100), rng.below(10)),
            }
        } else if i == 0 || rng.chance(4) {
            capitalize(&lex[rng.zipf(lex.len())])
        } else {
            lex[rng.zipf(lex.len())].clone()
        };
        match rng.below(60) {
            0 => {
                out.push('(');
                out.push_str(&word);
                out.push(')');
            }
            1 => {
                out.push('"');
                out.push_str(&word);
                out.push('"');
            }
            2 => {
                out.push_str(&word);
                out.push_str("'s");
            }
            _ => out.push_str(&word),
        }
        if i + 1 < n {
            match rng.below(100) {
                0..=7 => out.push(','),
                8 => out.push(';'),
                9 => out.push_str(" -"),
                _ => {}
            }
        }
        if emoji && rng.chance(2) {
            out.push(' ');
            out.push(char::from_u32(0x1F600 + rng.below(0x50) as u32).unwrap());
        }
    }
    out.push(rng.pick(&['.', '.', '.', '.', '.', '.', '?', '!']));
    out.push(' ');
}

/// ASCII prose: letters, digits, spaces, newlines and punctuation (never `<`).
fn prose() -> &'static [u8] {
    static PROSE: OnceLock<Vec<u8>> = OnceLock::new();
    PROSE.get_or_init(|| {
        let mut rng = Rng::new(2);
        let mut text = String::with_capacity(MAX_SIZE + 256);
        while text.len() < MAX_SIZE {
            english_sentence(&mut rng, &mut text, false);
            if rng.chance(15) {
                text.pop();
                text.push('\n');
            }
        }
        let mut text = text.into_bytes();
        text.truncate(MAX_SIZE);
        text
    })
}

/// Letters only: the prose's words run together in CamelCase (no space, digit or punctuation).
fn letters() -> &'static [u8] {
    static LETTERS: OnceLock<Vec<u8>> = OnceLock::new();
    LETTERS.get_or_init(|| {
        let lex = lexicon();
        let mut rng = Rng::new(3);
        let mut text = String::with_capacity(MAX_SIZE + 64);
        while text.len() < MAX_SIZE {
            text.push_str(&capitalize(&lex[rng.zipf(lex.len())]));
        }
        let mut text = text.into_bytes();
        text.truncate(MAX_SIZE);
        text
    })
}

/// Multilingual UTF-8: about half English (with the odd emoji), the rest accented Latin,
/// Cyrillic and CJK sentences. No control byte but `\n`, and never `<`.
fn mixed() -> &'static [u8] {
    static MIXED: OnceLock<Vec<u8>> = OnceLock::new();
    MIXED.get_or_init(|| {
        const ACCENTS: &[(char, &[char])] = &[
            ('a', &['à', 'â', 'ä', 'á']),
            ('e', &['é', 'è', 'ê', 'ë']),
            ('i', &['î', 'í']),
            ('o', &['ö', 'ô', 'ó']),
            ('u', &['ü', 'ù', 'ú']),
            ('c', &['ç']),
            ('s', &['ß']),
            ('n', &['ñ']),
        ];
        const CYR_CONSONANTS: &[char] = &[
            'б', 'в', 'г', 'д', 'ж', 'з', 'к', 'л', 'м', 'н', 'п', 'р', 'с', 'т', 'ф', 'х', 'ц',
            'ч', 'ш',
        ];
        const CYR_VOWELS: &[char] = &['а', 'е', 'и', 'о', 'у', 'ы', 'я', 'ю', 'э'];
        let mut rng = Rng::new(4);
        let mut text = String::with_capacity(MAX_SIZE + 256);
        while text.len() < MAX_SIZE {
            match rng.below(100) {
                0..=49 => english_sentence(&mut rng, &mut text, true),
                50..=69 => {
                    // Accented Latin: lexicon words with some vowels accented.
                    let mut sentence = String::new();
                    english_sentence(&mut rng, &mut sentence, false);
                    for c in sentence.chars() {
                        match ACCENTS.iter().find(|(plain, _)| *plain == c) {
                            Some((_, accented)) if rng.chance(25) => text.push(rng.pick(accented)),
                            _ => text.push(c),
                        }
                    }
                }
                70..=84 => {
                    // Cyrillic: syllables of two-byte letters.
                    let n = rng.range(4, 14);
                    for i in 0..n {
                        let mut word = String::new();
                        for _ in 0..rng.range(1, 4) {
                            word.push(rng.pick(CYR_CONSONANTS));
                            word.push(rng.pick(CYR_VOWELS));
                        }
                        if i == 0 {
                            word = capitalize(&word);
                        }
                        text.push_str(&word);
                        text.push_str(if i + 1 == n {
                            ". "
                        } else if rng.chance(8) {
                            ", "
                        } else {
                            " "
                        });
                    }
                }
                _ => {
                    // CJK: three-byte ideographs, no spaces, full-width punctuation.
                    let n = rng.range(8, 40);
                    for i in 0..n {
                        text.push(char::from_u32(0x4E00 + rng.zipf(3000) as u32).unwrap());
                        if i + 1 < n && rng.chance(10) {
                            text.push('，');
                        }
                    }
                    text.push('。');
                }
            }
            if rng.chance(10) {
                text.push('\n');
            }
        }
        let mut text = text.into_bytes();
        text.truncate(MAX_SIZE);
        text
    })
}

/// `count` pieces of `len` bytes (`0`: random lengths in 4..=16), cut one after another from the
/// prose.
fn short_pieces(len: usize, count: usize) -> Vec<&'static [u8]> {
    let text = prose();
    let mut rng = Rng::new(5 + len as u64);
    let mut pos = 0;
    (0..count)
        .map(|_| {
            let n = if len == 0 { rng.range(4, 16) } else { len };
            let piece = &text[pos..pos + n];
            pos += n;
            piece
        })
        .collect()
}

/// A realistic first-byte pruning table: for each byte, the length of the longest vocabulary
/// piece starting with it. Letters start long pieces, digits and punctuation short ones, UTF-8
/// lead bytes whole characters (two- to four-byte ones); continuation, control and invalid bytes
/// start nothing.
fn prune_values() -> [u8; 256] {
    let spec = ByteClassSpec::standard();
    let mut values = [0u8; 256];
    for b in 0..=255u8 {
        let classes = spec.classes_of(b);
        values[b as usize] = if classes.contains(ClassSet::LETTER) {
            if b.is_ascii_lowercase() { 16 } else { 12 }
        } else if classes.contains(ClassSet::DIGIT) {
            4
        } else if classes.contains(ClassSet::PUNCT) {
            if b"'.-".contains(&b) { 3 } else { 1 }
        } else if b == b' ' || b == b'\n' {
            1
        } else if classes.contains(ClassSet::UTF8_LEAD) {
            match b {
                0xC2..=0xDF => 6, // Latin, Cyrillic: a few characters per piece
                0xE0..=0xEF => 9, // CJK, U+2581: up to three characters
                _ => 4,           // emoji: one character
            }
        } else {
            0
        };
    }
    values
}

/// A sparse table: only the bytes that start a special token (`<`) or need escaping (control
/// bytes but tab, newline and carriage return). The inputs contain none of them, so a search
/// scans the whole buffer.
fn special_values() -> [u8; 256] {
    let mut values = [0u8; 256];
    for b in 0..0x20u8 {
        if !b"\t\n\r".contains(&b) {
            values[b as usize] = 1;
        }
    }
    values[0x7F] = 1;
    values[b'<' as usize] = 13; // "<|endoftext|>"
    values
}

/// The SentencePiece-style benchmark trie and the normalized English text it is walked over.
struct TrieInput {
    da: DoubleArray,
    /// Prose with every space and newline replaced by U+2581, as SentencePiece normalizes it.
    text: Vec<u8>,
}

fn trie_input() -> &'static TrieInput {
    static TRIE: OnceLock<TrieInput> = OnceLock::new();
    TRIE.get_or_init(|| {
        let mut keys: Vec<String> = Vec::with_capacity(TRIE_KEYS);
        let mut seen = std::collections::HashSet::new();
        let mut add = |keys: &mut Vec<String>, key: String| {
            if keys.len() < TRIE_KEYS && seen.insert(key.clone()) {
                keys.push(key);
            }
        };
        // Every printable ASCII character and the boundary mark, so that every character start
        // of the text has a match (as in a SentencePiece vocabulary).
        for b in b' '..=b'~' {
            add(&mut keys, (b as char).to_string());
        }
        add(&mut keys, SP_SPACE.to_string());
        // Then, by frequency, whole words with and without the boundary mark, capitalized, and
        // their prefixes (the pieces BPE and unigram vocabularies are made of).
        for word in lexicon() {
            for form in [word.clone(), capitalize(word)] {
                add(&mut keys, format!("{SP_SPACE}{form}"));
                for end in (2..form.len()).rev() {
                    add(&mut keys, format!("{SP_SPACE}{}", &form[..end]));
                }
                add(&mut keys, form.clone());
                for end in 2..form.len() {
                    add(&mut keys, form[end..].to_string());
                }
            }
        }
        assert_eq!(keys.len(), TRIE_KEYS, "the lexicon yields enough keys");
        let entries: Vec<(&[u8], u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, k)| (k.as_bytes(), i as u32))
            .collect();
        let da = DoubleArray::build(&entries).expect("benchmark keys are valid");
        let max = *TRIE_SIZES.iter().max().unwrap();
        let mut text = Vec::with_capacity(max + 64);
        for &b in prose() {
            if text.len() >= max {
                break;
            }
            if b == b' ' || b == b'\n' {
                text.extend_from_slice(SP_SPACE.as_bytes());
            } else {
                text.push(b);
            }
        }
        text.truncate(max);
        TrieInput { da, text }
    })
}

/// The character starts (non-continuation bytes) of `text`.
fn char_starts(text: &[u8]) -> Vec<u32> {
    (0..text.len())
        .filter(|&i| text[i] & 0xC0 != 0x80)
        .map(|i| i as u32)
        .collect()
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
