//! The two entry layouts of the word cache's short tier ([`super::word::WordCache`]),
//! each with its set of two ways.
//!
//! - [`WordSet`]: entries of 40 bytes with up to four tokens, for WordPiece and SentencePiece
//!   BPE, whose short words often make four pieces (`bert-base-chinese` over KJV ran about 7 %
//!   slower when words of four pieces left the short tier).
//! - [`PieceSet`]: entries of 32 bytes with up to three tokens, a set in one cache line, for
//!   byte-level BPE, whose pieces nearly all make one to three tokens. The 40-byte entries
//!   straddle two lines half the time; at 32 bytes the first pass over `en-20mb` as 8 KiB
//!   documents ran about 5 % faster on cl100k, and Python code about 15 %.
//!
//! Both keep the word's 16 key bytes; a hit compares all of them, and the length, so a result
//! is never another word's.

use crate::cache::key::Key;
use crate::cache::long::LONG_PIECE;
use crate::cache::owner::Stamp;
use crate::models::token::WordToken;

/// What a hit hands on: the sinks take four ids at a time.
pub const HIT_TOKENS: usize = 4;

/// One cached word of the short tier.
pub trait ShortEntry: Copy + Default {
    /// The most tokens an entry holds.
    const MAX_TOKENS: usize;

    /// The entry of the word `key` (1 to 16 bytes) made of `tokens` (consecutive, tiling the
    /// word from 0 to its length), stamped `stamp`; `None` when they do not fit.
    fn new(key: &Key, stamp: Stamp, tokens: &[WordToken]) -> Option<Self>;

    /// Whether the entry holds `key` under `stamp`.
    fn holds(&self, key: &Key, stamp: Stamp) -> bool;

    /// Whether the entry holds a word under `stamp` (else it is empty or stale).
    fn is_live(&self, stamp: Stamp) -> bool;

    /// The key of the word it holds.
    fn key(&self) -> Key;

    /// The number of tokens.
    fn n(&self) -> usize;

    /// The ids, four at a time (past [`ShortEntry::n`], anything).
    fn ids(&self) -> [u32; HIT_TOKENS];

    /// The tokens' ends relative to the word, four at a time (past [`ShortEntry::n`],
    /// anything).
    fn ends(&self) -> [u8; HIT_TOKENS];
}

/// Two entries of a set, the more recently used first.
pub trait ShortSet: Copy + Default {
    type Entry: ShortEntry;

    /// The longest pieces that the long tier beside this layout stores at their first sight
    /// (longer ones at their second: see [`crate::cache::long`]).
    const LONG_FIRST_SIGHT: usize;

    /// Whether a word whose set is full goes to a second set once the tier has grown (see
    /// [`crate::cache::word::WordCache`]): each miss then reads two sets.
    const SECOND_SET: bool;

    fn ways(&self) -> &[Self::Entry; 2];

    fn ways_mut(&mut self) -> &mut [Self::Entry; 2];
}

/// Whether `tokens` tile the word `0..len`: consecutive, none empty, the last ending at `len`.
fn tile(tokens: &[WordToken], len: u32) -> bool {
    let mut at = 0;
    for t in tokens {
        if t.start != at || t.end <= t.start {
            return false;
        }
        at = t.end;
    }
    at == len && !tokens.is_empty()
}

/// A word of up to four tokens: 40 bytes.
#[derive(Clone, Copy, Default)]
pub struct WordEntry {
    key: [u64; 2],
    len: u8,
    /// Tokens; 0 for an empty slot.
    n: u8,
    ends: [u8; 4],
    /// The cache's stamp when the entry was stored: entries of another stamp are empty.
    stamp: Stamp,
    ids: [u32; 4],
}

impl ShortEntry for WordEntry {
    const MAX_TOKENS: usize = 4;

    #[inline]
    fn new(key: &Key, stamp: Stamp, tokens: &[WordToken]) -> Option<Self> {
        if tokens.len() > Self::MAX_TOKENS || !tile(tokens, key.len().into()) {
            return None;
        }
        let mut e = WordEntry {
            key: key.words(),
            len: key.len(),
            n: tokens.len() as u8,
            stamp,
            ..WordEntry::default()
        };
        for (i, t) in tokens.iter().enumerate() {
            e.ends[i] = t.end as u8;
            e.ids[i] = t.id;
        }
        Some(e)
    }

    #[inline(always)]
    fn holds(&self, key: &Key, stamp: Stamp) -> bool {
        self.stamp == stamp && self.key == key.words() && self.len == key.len()
    }

    #[inline]
    fn is_live(&self, stamp: Stamp) -> bool {
        self.n != 0 && self.stamp == stamp
    }

    fn key(&self) -> Key {
        Key::from_words(self.key[0], self.key[1], self.len as usize)
    }

    #[inline(always)]
    fn n(&self) -> usize {
        self.n as usize
    }

    #[inline(always)]
    fn ids(&self) -> [u32; HIT_TOKENS] {
        self.ids
    }

    #[inline(always)]
    fn ends(&self) -> [u8; HIT_TOKENS] {
        self.ends
    }
}

/// Two [`WordEntry`]s: 80 bytes.
#[derive(Clone, Copy, Default)]
pub struct WordSet([WordEntry; 2]);

impl ShortSet for WordSet {
    type Entry = WordEntry;
    /// SentencePiece BPE's words of many tokens (a small vocabulary makes many English words
    /// so), and its long ones, repeat as words do: a second BPE of each cost more than the
    /// records of those that do not. Words of up to 16 bytes at first sight: botchan's BPE on
    /// the first 20 MB of English 113 → 118–120 MB/s, on Python code the second pass 65 →
    /// 75–77. Then words of every length: first passes over Chinese 69 → 80 (`llama-spm`) and
    /// 87 → 98 MB/s (botchan), over Japanese 83 → 95, `llama-spm`'s second pass over Python
    /// code 36 → 103; English and the UDHR's 532 languages level.
    const LONG_FIRST_SIGHT: usize = LONG_PIECE;
    /// A SentencePiece BPE miss is a BPE of a word (about 0.8 µs), worth a second set's read:
    /// `llama-spm`'s repeated passes over 20 MB of English missed 34 578 times with one set,
    /// 991 with two. (WordPiece, the other user, never grows the tier, so never spills.)
    const SECOND_SET: bool = true;

    #[inline(always)]
    fn ways(&self) -> &[WordEntry; 2] {
        &self.0
    }

    #[inline(always)]
    fn ways_mut(&mut self) -> &mut [WordEntry; 2] {
        &mut self.0
    }
}

/// A piece of up to three tokens: 32 bytes, so that a set of two is one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(32))]
pub struct PieceEntry {
    key: [u64; 2],
    ids: [u32; 3],
    /// The cache's stamp when the entry was stored (bits 0–15; entries of another stamp are
    /// empty, and no current stamp is 0), the word's length less one (16–19), the number of
    /// tokens (20–21), and the ends of the first two tokens when they are not the word's end
    /// (22–25, 26–29; an end before the word's end is at most 15). All 0 for an empty slot.
    meta: u32,
}

/// The bits of [`PieceEntry::meta`] that a lookup compares: the stamp and the length.
const STAMP_AND_LEN: u32 = 0xF_FFFF;

impl PieceEntry {
    /// `stamp` and `len` (1 to 16) as [`PieceEntry::meta`] holds them.
    #[inline(always)]
    fn stamp_and_len(stamp: Stamp, len: usize) -> u32 {
        u32::from(stamp.bits()) | ((len as u32).wrapping_sub(1) & 15) << 16
    }

    #[inline(always)]
    fn len(&self) -> usize {
        (self.meta >> 16 & 15) as usize + 1
    }
}

impl ShortEntry for PieceEntry {
    const MAX_TOKENS: usize = 3;

    #[inline]
    fn new(key: &Key, stamp: Stamp, tokens: &[WordToken]) -> Option<Self> {
        // An empty word's length would wrap to 16's bits.
        if key.len() == 0 || tokens.len() > Self::MAX_TOKENS || !tile(tokens, key.len().into()) {
            return None;
        }
        let mut e = PieceEntry {
            key: key.words(),
            meta: Self::stamp_and_len(stamp, key.len() as usize) | (tokens.len() as u32) << 20,
            ..PieceEntry::default()
        };
        for (i, t) in tokens.iter().enumerate() {
            e.ids[i] = t.id;
            if i + 1 < tokens.len() {
                e.meta |= (t.end & 15) << (22 + 4 * i);
            }
        }
        Some(e)
    }

    #[inline(always)]
    fn holds(&self, key: &Key, stamp: Stamp) -> bool {
        // An empty key would compare as a 16-byte one (`len - 1` wraps); callers never ask
        // for one, and `key.len() != 0` keeps that true.
        self.meta & STAMP_AND_LEN == Self::stamp_and_len(stamp, key.len() as usize)
            && self.key == key.words()
            && key.len() != 0
    }

    #[inline]
    fn is_live(&self, stamp: Stamp) -> bool {
        self.meta != 0 && self.meta as u16 == stamp.bits()
    }

    fn key(&self) -> Key {
        Key::from_words(self.key[0], self.key[1], self.len())
    }

    #[inline(always)]
    fn n(&self) -> usize {
        (self.meta >> 20 & 3) as usize
    }

    #[inline(always)]
    fn ids(&self) -> [u32; HIT_TOKENS] {
        [self.ids[0], self.ids[1], self.ids[2], 0]
    }

    #[inline(always)]
    fn ends(&self) -> [u8; HIT_TOKENS] {
        let len = self.len() as u8;
        let (first, second) = ((self.meta >> 22 & 15) as u8, (self.meta >> 26 & 15) as u8);
        match self.n() {
            1 => [len, 0, 0, 0],
            2 => [first, len, 0, 0],
            _ => [first, second, len, 0],
        }
    }
}

/// Two [`PieceEntry`]s in one cache line.
#[derive(Clone, Copy, Default)]
#[repr(C, align(64))]
pub struct PieceSet([PieceEntry; 2]);

impl ShortSet for PieceSet {
    type Entry = PieceEntry;
    /// Byte-level pieces of many tokens that do not repeat (other scripts, code) would take the
    /// arena from those that do: storing those of up to 16 bytes at first sight made cl100k's
    /// second pass on the UDHR 8 % slower.
    const LONG_FIRST_SIGHT: usize = 0;
    /// Byte-level BPE looks up many pieces that the short tier never holds (four tokens or
    /// more): reading a second set for each made cl100k 7–10 % slower on English.
    const SECOND_SET: bool = false;

    #[inline(always)]
    fn ways(&self) -> &[PieceEntry; 2] {
        &self.0
    }

    #[inline(always)]
    fn ways_mut(&mut self) -> &mut [PieceEntry; 2] {
        &mut self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(std::mem::size_of::<WordEntry>(), 40);
        assert_eq!(std::mem::size_of::<PieceEntry>(), 32);
        assert_eq!(std::mem::size_of::<PieceSet>(), 64);
        assert_eq!(std::mem::align_of::<PieceSet>(), 64);
    }

    /// Every way to cut each length of word into tokens an entry holds: stored and read back,
    /// and another length or stamp is another word.
    fn every_split_round_trips<E: ShortEntry>() {
        let text: Vec<u8> = (0..16u8).map(|b| b'a' + b).collect();
        let stamp = crate::cache::owner::CacheOwner::default().stamp();
        for len in 1..=16usize {
            let key = Key::new(&text[..len]);
            // Ends of every split into 1 to MAX_TOKENS + 1 tokens (by binary counting).
            for mask in 0u32..1 << (len - 1) {
                let ends: Vec<usize> = (1..len)
                    .filter(|&i| mask >> (i - 1) & 1 == 1)
                    .chain([len])
                    .collect();
                if ends.len() > E::MAX_TOKENS + 1 {
                    continue;
                }
                let tokens: Vec<WordToken> = ends
                    .iter()
                    .enumerate()
                    .map(|(i, &end)| WordToken {
                        id: 0x00AB_CDEF + (len * 100 + end) as u32 + i as u32,
                        start: if i == 0 { 0 } else { ends[i - 1] as u32 },
                        end: end as u32,
                    })
                    .collect();
                let Some(e) = E::new(&key, stamp, &tokens) else {
                    assert!(tokens.len() > E::MAX_TOKENS, "{len} {ends:?}");
                    continue;
                };
                assert!(tokens.len() <= E::MAX_TOKENS);
                assert!(e.holds(&key, stamp) && e.is_live(stamp));
                let (ids, got_ends) = (e.ids(), e.ends());
                let got: Vec<(u32, u32)> = (0..e.n())
                    .map(|i| (ids[i], u32::from(got_ends[i])))
                    .collect();
                let want: Vec<(u32, u32)> = tokens.iter().map(|t| (t.id, t.end)).collect();
                assert_eq!(got, want, "{len} {ends:?}");
                let k = e.key();
                assert_eq!((k.words(), k.len()), (key.words(), key.len()));
                if len < 16 {
                    assert!(!e.holds(&Key::new(&text[..len + 1]), stamp));
                }
                let mut other = crate::cache::owner::CacheOwner::default();
                other.claim(1);
                assert!(!e.holds(&key, other.stamp()) && !e.is_live(other.stamp()));
            }
        }
        // Tokens that do not tile the word are not stored; an empty entry holds nothing.
        let gap = [WordToken {
            id: 1,
            start: 0,
            end: 2,
        }];
        assert!(E::new(&Key::new(b"abc"), stamp, &gap).is_none());
        assert!(E::new(&Key::new(b""), stamp, &gap).is_none());
        assert!(E::new(&Key::new(b"ab"), stamp, &[]).is_none());
        let empty = E::default();
        assert!(!empty.is_live(stamp) && !empty.holds(&Key::new(b""), stamp));
    }

    #[test]
    fn word_entries_round_trip() {
        every_split_round_trips::<WordEntry>();
    }

    #[test]
    fn piece_entries_round_trip() {
        every_split_round_trips::<PieceEntry>();
    }
}
