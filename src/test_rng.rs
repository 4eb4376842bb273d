//! A deterministic generator (xorshift) for randomized unit tests.

pub struct Rng(pub u64);

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }

    /// `count` units drawn from `units`, one after another.
    pub fn join(&mut self, units: &[&[u8]], count: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for _ in 0..count {
            out.extend_from_slice(units[self.below(units.len() as u64) as usize]);
        }
        out
    }
}
