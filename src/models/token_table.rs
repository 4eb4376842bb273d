//! Token bytes → id, for the lookups byte-level BPE makes by the million: every piece, and
//! every pair of adjacent parts while merging.
//!
//! Nearly all tokens are at most 16 bytes. Those live in an open-addressing table whose slots
//! hold the bytes themselves (two little-endian words, zero-padded) with the id, so a lookup is
//! a multiply-mix hash, one slot read and two compares — no pointer to follow, no `memcmp`.
//! The key words are assembled from overlapping loads (the usual short-string trick), never
//! from a byte copy. Longer tokens go to an ordinary hash map.

use std::collections::HashMap;

/// Tokens up to this many bytes are stored inline.
pub const INLINE: usize = 16;

#[derive(Clone, Copy, Default, Debug)]
struct Slot {
    lo: u64,
    hi: u64,
    /// Length in bytes; 0 marks an empty slot.
    len: u32,
    id: u32,
}

/// See the module documentation.
#[derive(Debug)]
pub struct TokenTable {
    /// One byte per slot: 0 for empty, else `0x80 | 7 bits of the hash`. A lookup reads these
    /// (a 64th of the slots' size, cache-resident) and touches a slot only on a tag match, so
    /// the many misses of merging cost no trip to the slots. Eight at a time
    /// ([`TokenTable::get`]): the first [`GROUP`] tags are repeated after the last, so a group
    /// read from any slot stays in bounds and sees the slots that follow it, wrapping.
    tags: Box<[u8]>,
    slots: Box<[Slot]>,
    mask: usize,
    long: HashMap<Box<[u8]>, u32>,
    /// A one-hash Bloom filter of the long tokens (by their first and last 8 bytes and length):
    /// merging CJK text asks for many 17-byte-plus slices, nearly none of them tokens, and a
    /// bit test answers most of them without hashing the whole slice.
    long_filter: Box<[u64]>,
}

const LONG_FILTER_BITS: usize = 1 << 16;

/// Tags compared at once (one `u64`).
const GROUP: usize = 8;
const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// The filter bit of a long (more than 16 bytes) slice.
#[inline(always)]
fn long_bit(b: &[u8]) -> usize {
    let n = b.len();
    let first = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
    let last = u64::from_le_bytes(b[n - 8..].try_into().expect("8 bytes"));
    let h = hash(first, last, n);
    (h >> 48) as usize & (LONG_FILTER_BITS - 1)
}

/// The bytes of `b` (at most 8) as a little-endian word, zero-padded.
#[inline(always)]
fn word(b: &[u8]) -> u64 {
    let n = b.len();
    debug_assert!(n <= 8);
    if n >= 4 {
        let first = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let last = u32::from_le_bytes([b[n - 4], b[n - 3], b[n - 2], b[n - 1]]) as u64;
        first | (last << (8 * (n - 4)))
    } else if n > 0 {
        (b[0] as u64) | ((b[n / 2] as u64) << (8 * (n / 2))) | ((b[n - 1] as u64) << (8 * (n - 1)))
    } else {
        0
    }
}

/// The two key words of `b` (at most 16 bytes): its bytes, little-endian, zero-padded.
#[inline(always)]
pub fn words(b: &[u8]) -> (u64, u64) {
    if b.len() > 8 {
        let lo = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
        (lo, word(&b[8..]))
    } else {
        (word(b), 0)
    }
}

/// The tag byte of hash `h`: never 0.
#[inline(always)]
fn tag(h: u64) -> u8 {
    0x80 | (h >> 57) as u8
}

#[inline(always)]
fn hash(lo: u64, hi: u64, len: usize) -> u64 {
    (lo ^ (len as u64).rotate_right(8))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(31)
        ^ hi.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
}

impl TokenTable {
    /// The table of `(bytes, id)` pairs; the caller has checked that no bytes repeat.
    pub fn new<'a>(tokens: impl Iterator<Item = (&'a [u8], u32)> + Clone) -> TokenTable {
        let short = tokens.clone().filter(|(b, _)| b.len() <= INLINE).count();
        // At most four fifths full: the tag groups keep probes short at that load, and the
        // slots take half the memory of a half-full table, so fewer of a rare token's lines are
        // cold when a piece misses the piece cache (English +2–5 %, random text the same).
        let size = (short + short / 4).next_power_of_two().max(16);
        let mut slots = vec![Slot::default(); size].into_boxed_slice();
        let mut tags = vec![0u8; size + GROUP].into_boxed_slice();
        let mask = size - 1;
        let mut long = HashMap::new();
        let mut long_filter = vec![0u64; LONG_FILTER_BITS / 64].into_boxed_slice();
        for (bytes, id) in tokens {
            if bytes.is_empty() {
                continue;
            }
            if bytes.len() > INLINE {
                let bit = long_bit(bytes);
                long_filter[bit / 64] |= 1 << (bit % 64);
                long.insert(bytes.into(), id);
                continue;
            }
            let (lo, hi) = words(bytes);
            let h = hash(lo, hi, bytes.len());
            let mut i = h as usize & mask;
            while slots[i].len != 0 {
                i = (i + 1) & mask;
            }
            tags[i] = tag(h);
            if i < GROUP {
                tags[size + i] = tag(h);
            }
            slots[i] = Slot {
                lo,
                hi,
                len: bytes.len() as u32,
                id,
            };
        }
        TokenTable {
            tags,
            slots,
            mask,
            long,
            long_filter,
        }
    }

    /// The id of exactly `bytes`.
    #[inline]
    pub fn get(&self, bytes: &[u8]) -> Option<u32> {
        if bytes.len() > INLINE {
            let bit = long_bit(bytes);
            if self.long_filter[bit / 64] & (1 << (bit % 64)) == 0 {
                return None;
            }
            return self.long.get(bytes).copied();
        }
        let (lo, hi) = words(bytes);
        let len = bytes.len() as u32;
        let h = hash(lo, hi, bytes.len());
        let want = tag(h);
        // Eight tags at a time, without a branch per tag (a random text's lookups mispredicted
        // one per probe): the empty ones have their top bit clear; the matching ones are the
        // zero bytes of `group ^ want` (the usual zero-byte test, whose rare false positives
        // just cost a slot compare). Only matches before the first empty tag count.
        let mut i = h as usize & self.mask;
        loop {
            let group = u64::from_le_bytes(
                self.tags[i..i + GROUP]
                    .try_into()
                    .expect("GROUP tags past any slot"),
            );
            let empty = !group & HIGH_BITS;
            let mut matches = crate::swar::bytes_equal(group, want);
            if empty != 0 {
                matches &= (empty & empty.wrapping_neg()) - 1;
            }
            while matches != 0 {
                let s = &self.slots[(i + matches.trailing_zeros() as usize / 8) & self.mask];
                if s.len == len && s.lo == lo && s.hi == hi {
                    return Some(s.id);
                }
                matches &= matches - 1;
            }
            if empty != 0 {
                return None;
            }
            i = (i + GROUP) & self.mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_bytes() {
        let text = b"0123456789abcdefghij";
        for n in 0..=16 {
            let (lo, hi) = words(&text[..n]);
            let mut buf = [0u8; 16];
            buf[..n].copy_from_slice(&text[..n]);
            assert_eq!(lo, u64::from_le_bytes(buf[..8].try_into().unwrap()), "{n}");
            assert_eq!(hi, u64::from_le_bytes(buf[8..].try_into().unwrap()), "{n}");
        }
    }

    #[test]
    fn finds_exactly_the_tokens() {
        let toks: Vec<Vec<u8>> = (0..2000u32)
            .map(|i| format!("t{i}").into_bytes())
            .chain([
                b"".to_vec(),
                b"\0".to_vec(),
                b"\0\0".to_vec(),
                vec![b'x'; 40],
                vec![b'y'; 17],
                (0..200u8).collect(),
            ])
            .collect();
        let table = TokenTable::new(toks.iter().enumerate().map(|(i, t)| (&t[..], i as u32)));
        for (i, t) in toks.iter().enumerate().filter(|(_, t)| !t.is_empty()) {
            assert_eq!(table.get(t), Some(i as u32));
        }
        assert_eq!(table.get(b"t2000"), None);
        assert_eq!(table.get(b"\0\0\0"), None);
        assert_eq!(table.get(&[b'x'; 39]), None);
        assert_eq!(table.get(&[b'y'; 18]), None);
        assert_eq!(table.get(&(0..199u8).collect::<Vec<_>>()), None);
    }

    #[test]
    fn answers_as_a_map_at_every_size() {
        // Small tables wrap their probe groups around the end; larger ones have long runs of
        // full slots. Present and absent keys of every short length.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for n in [1, 5, 7, 8, 9, 15, 16, 17, 31, 100, 1000, 5000] {
            let mut map = HashMap::new();
            while map.len() < n {
                let len = 1 + (next() % 16) as usize;
                let key: Vec<u8> = (0..len).map(|_| b'a' + (next() % 4) as u8).collect();
                let id = map.len() as u32;
                map.entry(key).or_insert(id);
            }
            let table = TokenTable::new(map.iter().map(|(k, &id)| (&k[..], id)));
            for (k, &id) in &map {
                assert_eq!(table.get(k), Some(id), "{n} {k:?}");
            }
            for _ in 0..20 * n {
                let len = 1 + (next() % 16) as usize;
                let key: Vec<u8> = (0..len).map(|_| b'a' + (next() % 4) as u8).collect();
                assert_eq!(table.get(&key), map.get(&key).copied(), "{n} {key:?}");
            }
        }
    }
}
