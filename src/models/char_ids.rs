//! The entry of every character of the Basic Multilingual Plane, by code point: a merge that
//! starts from characters (SentencePiece-style BPE) looks each one up, and in a vocabulary of
//! hundreds of thousands of entries a hashed lookup costs two cache misses. The characters of
//! one script sit together here (Cyrillic in 1 KiB, the CJK ideographs in 80 KiB), so the
//! table's lines stay cached. Characters beyond the plane ask the vocabulary.

const PLANE: usize = 0x1_0000;
const NONE: u32 = u32::MAX;

/// See the module documentation.
pub struct CharIds {
    ids: Box<[u32]>,
}

impl std::fmt::Debug for CharIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.ids.iter().filter(|&&id| id != NONE).count();
        write!(f, "CharIds({n} characters with an entry)")
    }
}

impl CharIds {
    /// The table of `entry`, the id of an entry's bytes (of one character here).
    pub fn new(entry: impl Fn(&[u8]) -> Option<u32>) -> CharIds {
        let mut buf = [0u8; 4];
        let ids = (0..PLANE as u32)
            .map(|cp| match char::from_u32(cp) {
                Some(c) => entry(c.encode_utf8(&mut buf).as_bytes()).unwrap_or(NONE),
                None => NONE, // a surrogate: never in text
            })
            .collect();
        CharIds { ids }
    }

    /// The id of the entry that is exactly `c` (encoded as `bytes`); `entry` answers for
    /// characters beyond the plane.
    #[inline]
    pub fn get(
        &self,
        c: char,
        bytes: &[u8],
        entry: impl FnOnce(&[u8]) -> Option<u32>,
    ) -> Option<u32> {
        match self.ids.get(c as usize) {
            Some(&id) => (id != NONE).then_some(id),
            None => entry(bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_as_the_vocabulary_in_and_beyond_the_plane() {
        let vocab: std::collections::HashMap<Vec<u8>, u32> =
            ["a", "é", "я", "中", "▁", "\u{FFFF}", "😀"]
                .iter()
                .enumerate()
                .map(|(i, s)| (s.as_bytes().to_vec(), i as u32 * 7))
                .collect();
        let entry = |b: &[u8]| vocab.get(b).copied();
        let table = CharIds::new(entry);
        for c in [
            'a',
            'b',
            'é',
            'я',
            'ю',
            '中',
            '▁',
            '\u{FFFF}',
            '\u{10000}',
            '😀',
            '😁',
            '\0',
        ] {
            let mut buf = [0u8; 4];
            let bytes = c.encode_utf8(&mut buf).as_bytes();
            assert_eq!(table.get(c, bytes, entry), entry(bytes), "{c:?}");
        }
    }
}
