//! The naive oracles: the most obvious code for each kernel, written without the tables or
//! tricks of the scalar tier, so that scalar can be checked against something independent.

use std::collections::{HashMap, HashSet};

use simdtok_kernels::{BlockMasks, ByteClassSpec, ClassSet, TrieMatch};

/// Bit by bit: class `k` of byte `i` of block `b` is bit `i` of `masks[b][k]`.
pub fn classify(spec: &ByteClassSpec, keep: ClassSet, data: &[u8]) -> Vec<BlockMasks> {
    let mut out = vec![BlockMasks::default(); data.len().div_ceil(64)];
    for (i, &b) in data.iter().enumerate() {
        let classes = spec.classes_of(b) & keep;
        for k in classes.indices() {
            out[i / 64].0[k] |= 1 << (i % 64);
        }
    }
    out
}

pub fn find(
    spec: &ByteClassSpec,
    keep: ClassSet,
    set: ClassSet,
    data: &[u8],
    from: usize,
    negate: bool,
) -> Option<usize> {
    (from..data.len()).find(|&i| (spec.classes_of(data[i]) & keep).intersects(set) != negate)
}

pub fn count_utf8_chars(data: &[u8]) -> usize {
    data.iter()
        .filter(|&&b| !(0x80..=0xBF).contains(&b))
        .count()
}

pub fn ascii_prefix_len(data: &[u8]) -> usize {
    let mut n = 0;
    while n < data.len() && data[n] < 0x80 {
        n += 1;
    }
    n
}

/// CRC-32C one bit at a time (reflected polynomial 0x82F63B78, initial and final inversion).
pub fn crc32c(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

pub fn prune_map(values: &[u8; 256], data: &[u8]) -> Vec<u8> {
    data.iter().map(|&b| values[b as usize]).collect()
}

pub fn prune_find_nonzero(values: &[u8; 256], data: &[u8], from: usize) -> Option<usize> {
    (from..data.len()).find(|&i| values[data[i] as usize] != 0)
}

/// A trie oracle without a trie: a hash map of the keys, probed at every prefix length.
pub struct Dictionary {
    keys: HashMap<Vec<u8>, u32>,
    /// Every non-empty prefix of every key.
    prefixes: HashSet<Vec<u8>>,
    max_len: usize,
}

impl Dictionary {
    pub fn new(entries: &[(Vec<u8>, u32)]) -> Dictionary {
        Dictionary {
            keys: entries.iter().cloned().collect(),
            prefixes: entries
                .iter()
                .flat_map(|(k, _)| (1..=k.len()).map(|n| k[..n].to_vec()))
                .collect(),
            max_len: entries.iter().map(|(k, _)| k.len()).max().unwrap_or(0),
        }
    }

    /// How many bytes of `text` a walk reads: up to the first that no key continues with, else
    /// all.
    pub fn walk_read_len(&self, text: &[u8]) -> usize {
        (1..=text.len())
            .find(|&r| !self.prefixes.contains(&text[..r]))
            .unwrap_or(text.len())
    }

    pub fn prefix_search(&self, text: &[u8]) -> Vec<TrieMatch> {
        (1..=self.max_len.min(text.len()))
            .filter_map(|len| {
                self.keys.get(&text[..len]).map(|&value| TrieMatch {
                    len: len as u32,
                    value,
                })
            })
            .collect()
    }
}

/// SentencePiece's space escape, one byte at a time: each space becomes `▁`, or nothing after a
/// space when `collapse`; returns the output and whether the last byte is a space.
pub fn escape_spaces(data: &[u8], collapse: bool, prev_space: bool) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut prev = prev_space;
    for &b in data {
        if b == b' ' {
            if !(collapse && prev) {
                out.extend_from_slice("\u{2581}".as_bytes());
            }
            prev = true;
        } else {
            out.push(b);
            prev = false;
        }
    }
    (out, prev)
}
