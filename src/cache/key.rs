//! A word (or piece) of up to [`MAX_WORD`] bytes as a cache key: its bytes in two words,
//! its length and a hash, built without a byte copy from the text it lies in.

/// Words up to this many bytes are cached.
pub const MAX_WORD: usize = 16;

/// A word as a cache key: its bytes zero-padded to 16, and its length.
#[derive(Clone, Copy)]
pub struct Key {
    words: [u64; 2],
    len: u8,
    /// The hash of the word: its top bits pick the slot.
    hash: u64,
}

impl Key {
    /// The key of `word` (at most [`MAX_WORD`] bytes).
    #[inline]
    pub fn new(word: &[u8]) -> Key {
        debug_assert!(word.len() <= MAX_WORD);
        let (lo, hi) = crate::models::token_table::words(word);
        Key::from_words(lo, hi, word.len())
    }

    /// The key of the word `text[at..at + len]` (`len` at most [`MAX_WORD`]). Reads the 16
    /// bytes from `at` in two loads when the text has them and masks off what is past the
    /// word: no branch on the word's length (which varies from word to word, and mispredicted),
    /// no byte copy (and no store-forwarding stall reading it back).
    #[inline]
    pub fn in_text(text: &[u8], at: usize, len: usize) -> Key {
        let (lo, hi) = text_words(text, at, len);
        Key::from_words(lo, hi, len)
    }

    /// [`Key::in_text`] of an ASCII word, lowercased when `lowercase`.
    #[inline]
    pub fn ascii(text: &[u8], at: usize, len: usize, lowercase: bool) -> Key {
        debug_assert!(len <= MAX_WORD && text[at..at + len].is_ascii());
        let (mut lo, mut hi) = text_words(text, at, len);
        if lowercase {
            lo = ascii_lowercase(lo);
            hi = ascii_lowercase(hi);
        }
        Key::from_words(lo, hi, len)
    }

    /// The key of the word whose bytes, zero-padded, are `lo` and `hi`, `len` of them.
    pub(crate) fn from_words(lo: u64, hi: u64, len: usize) -> Key {
        let h = (lo.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ hi.wrapping_mul(0xC2B2_AE3D_27D4_EB4F))
            .rotate_left(29)
            .wrapping_mul(0x1656_67B1_9E37_79F9);
        Key {
            words: [lo, hi],
            len: len as u8,
            hash: h,
        }
    }

    /// The word's bytes as two little-endian words, zero-padded.
    #[inline(always)]
    pub(crate) fn words(&self) -> [u64; 2] {
        self.words
    }

    /// The word's hash: its top bits pick the set.
    #[inline(always)]
    pub(crate) fn hash(&self) -> u64 {
        self.hash
    }

    /// The word's length in bytes.
    #[inline(always)]
    pub(crate) fn len(&self) -> u8 {
        self.len
    }

    /// The word's bytes (lowercased if the key was).
    #[inline]
    pub fn bytes(&self) -> ([u8; MAX_WORD], usize) {
        let mut buf = [0u8; MAX_WORD];
        buf[..8].copy_from_slice(&self.words[0].to_le_bytes());
        buf[8..].copy_from_slice(&self.words[1].to_le_bytes());
        (buf, self.len as usize)
    }
}

/// The bytes of `text[at..at + len]` (`len` at most [`MAX_WORD`]) as two little-endian words,
/// zero-padded: see [`Key::in_text`].
#[inline(always)]
fn text_words(text: &[u8], at: usize, len: usize) -> (u64, u64) {
    debug_assert!(len <= MAX_WORD);
    let Some(w) = text.get(at..at + MAX_WORD) else {
        return words_near_end(&text[at..at + len]);
    };
    let lo = u64::from_le_bytes(w[..8].try_into().expect("8 bytes"));
    let hi = u64::from_le_bytes(w[8..].try_into().expect("8 bytes"));
    (lo & KEEP[len + 8], hi & KEEP[len])
}

/// `KEEP[8 + n]` keeps a word's first `n` bytes (all of them from 8 on, none below 0): the
/// masks of a key's two words are `KEEP[len + 8]` and `KEEP[len]`. Two loads from one cache
/// line; computed, with a branch and a shift per word, they were 4.6 % of cl100k's
/// instructions on unseen English text.
const KEEP: [u64; MAX_WORD + 9] = {
    let mut keep = [0u64; MAX_WORD + 9];
    let mut i = 8;
    while i < keep.len() {
        let n = i - 8;
        keep[i] = if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        };
        i += 1;
    }
    keep
};

/// [`text_words`] of a word in the text's last 16 bytes (a line's last few pieces), from its
/// bytes. Out of line: it keeps the common path short (reading the text's last 16 bytes
/// shifted instead measured no faster).
#[cold]
#[inline(never)]
fn words_near_end(word: &[u8]) -> (u64, u64) {
    crate::models::token_table::words(word)
}

/// `to_ascii_lowercase` of eight ASCII bytes at once: `A-Z` get bit 5.
#[inline]
fn ascii_lowercase(x: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // Bytes are below 0x80, so these sums never carry into the next byte.
    let at_least_a = x + ONES * (0x80 - b'A' as u64);
    let above_z = x + ONES * (0x80 - b'Z' as u64 - 1);
    let upper = at_least_a & !above_z & (ONES * 0x80);
    x | (upper >> 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_keys_match_copied_keys() {
        let text = b"Hello WORLD, a-Zz@[`{ 0123456789ABCDEFGHIJ";
        for at in 0..text.len() {
            for len in 0..=MAX_WORD.min(text.len() - at) {
                let word = &text[at..at + len];
                for lowercase in [false, true] {
                    let k = Key::ascii(text, at, len, lowercase);
                    let want: Vec<u8> = if lowercase {
                        word.to_ascii_lowercase()
                    } else {
                        word.to_vec()
                    };
                    let (bytes, n) = k.bytes();
                    assert_eq!(&bytes[..n], &want[..], "{at} {len} {lowercase}");
                    let w = Key::new(&want);
                    assert_eq!((k.words, k.len, k.hash), (w.words, w.len, w.hash));
                }
            }
        }
    }

    #[test]
    fn text_keys_match_copied_keys() {
        // Any bytes, every start and length, up to the text's end (where the two loads would
        // read past it).
        let text: Vec<u8> = (0..40u32).map(|i| (i * 97 + 200) as u8).collect();
        for at in 0..text.len() {
            for len in 0..=MAX_WORD.min(text.len() - at) {
                let k = Key::in_text(&text, at, len);
                let w = Key::new(&text[at..at + len]);
                assert_eq!(
                    (k.words, k.len, k.hash),
                    (w.words, w.len, w.hash),
                    "{at} {len}"
                );
            }
        }
    }
}
