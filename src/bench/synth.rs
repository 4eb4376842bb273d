//! Deterministic synthetic inputs for the kernel measurements (`cargo bench --bench kernels` and
//! `simdtok report`): every run, on every machine, measures the same bytes.
//!
//! A fixed-seed xorshift generator makes English-like prose from a Zipf-distributed synthetic
//! lexicon, a multilingual UTF-8 mix (English, accented Latin, Cyrillic, CJK, emoji), and a
//! SentencePiece-style trie of 30 000 pieces over that lexicon. Every buffer is [`MAX_SIZE`]
//! long and smaller inputs are its prefixes, so the numbers are for data in cache. The scanning
//! inputs never contain the bytes their benchmarks search for, so a search scans the whole buffer.

use std::sync::OnceLock;

use simdtok_kernels::{ByteClassSpec, ClassSet, DoubleArray};

/// The largest input: every generated buffer has this length.
pub const MAX_SIZE: usize = 1 << 20;
/// The length of the trie walks' text ([`TrieInput::text`]).
pub const TRIE_TEXT_LEN: usize = 64 << 10;
/// Keys in the benchmark trie.
pub const TRIE_KEYS: usize = 30_000;
/// SentencePiece's word-boundary mark, U+2581.
pub const SP_SPACE: &str = "\u{2581}";

/// xorshift64* (Vigna): small, fast, and good enough for test data.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    /// A Zipf(1) rank in `0..n`: rank `r` has probability ∝ 1 / (r + 1), like word frequencies.
    pub fn zipf(&mut self, n: usize) -> usize {
        let u = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        (((n as f64 + 1.0).powf(u) - 1.0) as usize).min(n - 1)
    }
}

/// English-like words, most frequent first: real function words, then words built from
/// syllables.
pub fn lexicon() -> &'static [String] {
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

pub fn capitalize(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// One English-like sentence (printable ASCII), followed by a space.
pub fn english_sentence(rng: &mut Rng, out: &mut String, emoji: bool) {
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
pub fn prose() -> &'static [u8] {
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
pub fn letters() -> &'static [u8] {
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
pub fn mixed() -> &'static [u8] {
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
pub fn short_pieces(len: usize, count: usize) -> Vec<&'static [u8]> {
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
pub fn prune_values() -> [u8; 256] {
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
pub fn special_values() -> [u8; 256] {
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
pub struct TrieInput {
    pub da: DoubleArray,
    /// Prose with every space and newline replaced by U+2581, as SentencePiece normalizes it.
    pub text: Vec<u8>,
}

pub fn trie_input() -> &'static TrieInput {
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
        let max = TRIE_TEXT_LEN;
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
pub fn char_starts(text: &[u8]) -> Vec<u32> {
    (0..text.len())
        .filter(|&i| text[i] & 0xC0 != 0x80)
        .map(|i| i as u32)
        .collect()
}
