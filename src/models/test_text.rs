//! Pseudo-random test inputs for the merge algorithms' tests: the same sequence for a seed.

/// A xorshift generator of test pieces.
pub struct TestText(u32);

impl TestText {
    /// A generator seeded with `seed` (not 0).
    pub fn new(seed: u32) -> TestText {
        TestText(seed)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0 % n
    }

    /// `len` bytes of `a` and `b`, `a` a third of the time: pieces with many overlapping merges.
    pub fn ab(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| if self.below(3) == 0 { b'a' } else { b'b' })
            .collect()
    }

    /// `chars` characters drawn from a few kanji, kana, a Latin-1 letter, an emoji, `a` and a
    /// space: one-, two-, three- and four-byte UTF-8 side by side.
    pub fn mixed(&mut self, chars: usize) -> Vec<u8> {
        const ALPHABET: [&str; 9] = ["日", "本", "語", "の", "中", "é", "😀", "a", " "];
        (0..chars)
            .flat_map(|_| ALPHABET[self.below(ALPHABET.len() as u32) as usize].bytes())
            .collect()
    }
}
