//! Where each character of the Basic Multilingual Plane leads in the piece trie, so that the
//! lattice's walk from a position starts after its first character instead of at the root.
//!
//! In Japanese and Chinese text every position is a three-byte character, and the walk from it
//! took three dependent loads to cross that character in the trie, then one for the value of a
//! one-character piece and one for its score: in a large vocabulary's trie (XLM-R's is some
//! megabytes), each a likely cache miss. One entry here holds all of that — where the walk
//! stands after the character, and the character's own piece with its score — and the walk goes
//! on from there over the next characters ([`simdtok_kernels::Kernels::trie_prefix_walk_from`]).
//!
//! The entries are what the walk itself finds (built by walking each character's bytes), so a
//! lookup offers the same candidates in the same order and reads the same bytes as the walk: the
//! character's own piece first (a key cannot end inside a character, checked at build: models
//! with such keys get no table), then the longer pieces as the resumed walk finds them.

use simdtok_kernels::{DoubleArray, TrieNode, WalkFrom};

/// See the module documentation.
pub struct FirstChars {
    /// Per block of 256 code points (`code point >> 8`), its page of `entries`; page 0 is
    /// shared by the blocks where no piece starts with any character.
    pages: Box<[u16; 256]>,
    entries: Vec<FirstChar>,
}

/// One character's entry.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FirstChar {
    /// Where the walk stands after the character's bytes; `None` when it left the trie inside
    /// them (then no piece starts with the character).
    pub from: Option<WalkFrom>,
    /// The character's own piece (not an UNUSED one, which is never chosen) and its lattice
    /// score, or [`FirstChar::NO_PIECE`].
    pub id: u32,
    pub score: f32,
}

impl std::fmt::Debug for FirstChars {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FirstChars")
            .field("pages", &(self.entries.len() / 256))
            .finish()
    }
}

impl FirstChar {
    pub const NO_PIECE: u32 = u32::MAX;

    const NOTHING: FirstChar = FirstChar {
        from: None,
        id: FirstChar::NO_PIECE,
        score: 0.0,
    };
}

impl FirstChars {
    /// The table of `trie`, whose values are piece ids scored by `scores` (NaN: UNUSED).
    /// `None` when some key ends inside a character (impossible for pieces that are text, but
    /// then the walk's candidates would differ from an entry's).
    pub fn build(trie: &DoubleArray, scores: &[f32]) -> Option<FirstChars> {
        let mut pages = Box::new([0u16; 256]);
        let mut entries = vec![FirstChar::NOTHING; 256];
        for block in 0..256u32 {
            let mut page = [FirstChar::NOTHING; 256];
            for low in 0..256u32 {
                let cp = block << 8 | low;
                page[low as usize] = entry(trie, scores, &utf8(cp))?;
            }
            if page.iter().any(|e| *e != FirstChar::NOTHING) {
                pages[block as usize] =
                    u16::try_from(entries.len() / 256).expect("at most 257 pages");
                entries.extend_from_slice(&page);
            }
        }
        Some(FirstChars { pages, entries })
    }

    /// The entry of the code point `cp` (at most U+FFFF, as [`bmp_code_point`] decodes one).
    #[inline(always)]
    pub fn get(&self, cp: u32) -> &FirstChar {
        debug_assert!(cp <= 0xFFFF);
        let page = self.pages[(cp >> 8) as usize] as usize;
        &self.entries[page * 256 + (cp & 0xFF) as usize]
    }

    /// Bytes of memory the table takes.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<[u16; 256]>() + self.entries.len() * std::mem::size_of::<FirstChar>()
    }
}

/// The walk over one character's `bytes` from the root, as an entry; `None` when a key ends
/// inside them.
fn entry(trie: &DoubleArray, scores: &[f32], bytes: &[u8]) -> Option<FirstChar> {
    let mut node = TrieNode::ROOT;
    for (i, &b) in bytes.iter().enumerate() {
        let Some(next) = trie.child(node, b) else {
            return Some(FirstChar::NOTHING);
        };
        node = next;
        if i + 1 < bytes.len() && trie.value_at(node).is_some() {
            return None;
        }
    }
    let (id, score) = match trie.value_at(node) {
        Some(id) => match scores.get(id as usize) {
            Some(s) if !s.is_nan() => (id, *s),
            _ => (FirstChar::NO_PIECE, 0.0),
        },
        None => (FirstChar::NO_PIECE, 0.0),
    };
    Some(FirstChar {
        from: trie.walk_from(node),
        id,
        score,
    })
}

/// The UTF-8 bytes of the code point `cp` (at most U+FFFF), surrogates included: their bytes
/// are what a malformed text may hold, and the table answers for them as the walk does.
fn utf8(cp: u32) -> Vec<u8> {
    match cp {
        0..=0x7F => vec![cp as u8],
        0x80..=0x7FF => vec![0xC0 | (cp >> 6) as u8, 0x80 | (cp & 0x3F) as u8],
        _ => vec![
            0xE0 | (cp >> 12) as u8,
            0x80 | ((cp >> 6) & 0x3F) as u8,
            0x80 | (cp & 0x3F) as u8,
        ],
    }
}

/// The code point of `bytes` when they are exactly the shortest UTF-8 form of one code point up
/// to U+FFFF (surrogates included, as [`utf8`] writes them); `None` otherwise (overlong forms,
/// stray continuation bytes), which then take the plain walk.
#[inline(always)]
pub fn bmp_code_point(bytes: &[u8]) -> Option<u32> {
    let cont = |b: u8| (b & 0xC0 == 0x80).then_some((b & 0x3F) as u32);
    match *bytes {
        [b0] if b0 < 0x80 => Some(b0 as u32),
        [b0 @ 0xC2..=0xDF, b1] => Some(((b0 & 0x1F) as u32) << 6 | cont(b1)?),
        [b0 @ 0xE0..=0xEF, b1, b2] => {
            let cp = ((b0 & 0x0F) as u32) << 12 | cont(b1)? << 6 | cont(b2)?;
            (cp >= 0x800).then_some(cp)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_points_round_trip_and_malformed_forms_are_refused() {
        for cp in 0..=0xFFFFu32 {
            assert_eq!(bmp_code_point(&utf8(cp)), Some(cp), "U+{cp:04X}");
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(utf8(cp), c.to_string().into_bytes());
            }
        }
        for bad in [
            &[0x80][..],
            &[0xC0, 0x80],
            &[0xC1, 0xBF],
            &[0xE0, 0x9F, 0xBF],
            &[0xE3, 0x41, 0x80],
            &[0xE3, 0x81],
            &[0xF0, 0x9F, 0x98, 0x80],
        ] {
            assert_eq!(bmp_code_point(bad), None, "{bad:x?}");
        }
    }

    #[test]
    fn entries_are_what_the_walk_finds() {
        let keys: Vec<(&[u8], u32)> = vec![
            ("日".as_bytes(), 0),
            ("日本".as_bytes(), 1),
            ("本語".as_bytes(), 2),
            ("é".as_bytes(), 3),
            ("a".as_bytes(), 4),
        ];
        let trie = DoubleArray::build(&keys).unwrap();
        // Piece 3 is UNUSED.
        let scores = [-1.0, -2.0, -3.0, f32::NAN, -5.0];
        let table = FirstChars::build(&trie, &scores).unwrap();
        let ni = table.get('日' as u32);
        assert_eq!((ni.id, ni.score), (0, -1.0));
        assert!(ni.from.is_some());
        let hon = table.get('本' as u32);
        assert_eq!(hon.id, FirstChar::NO_PIECE);
        assert!(hon.from.is_some(), "本 starts 本語");
        let e = table.get('é' as u32);
        assert_eq!(e.id, FirstChar::NO_PIECE, "UNUSED is never offered");
        assert!(e.from.is_some());
        assert_eq!(table.get('a' as u32).id, 4);
        assert_eq!(*table.get('語' as u32), FirstChar::NOTHING);
        assert_eq!(*table.get('x' as u32), FirstChar::NOTHING);
        // Blocks without pieces share the empty page.
        assert!(table.memory_bytes() < 6 * 256 * std::mem::size_of::<FirstChar>());
        // A key that ends inside a character (not text) means no table.
        let odd = DoubleArray::build(&[(&[0xE6u8][..], 0)]).unwrap();
        assert!(FirstChars::build(&odd, &[-1.0]).is_none());
    }
}
