//! The priorities of a vocabulary's merges of two usable tokens ([`super::valid_pairs`]), by
//! their ids, in one flat table: the compatible-pairs search asks a priority per level of a
//! pair's spines, and on unseen CJK text most of those pairs are first sights (60 000
//! distinct pairs in 115 000 lookups on 1 MB of Chinese with o200k). Through a model's memo
//! and then its own maps each was two or three cache misses and, for a rank table, a hash of
//! the joined bytes; here it is one probe of eight-byte slots.
//!
//! Nearly every pair asked does not merge (a compatible pair's spines merge nowhere, and most
//! pairs met are compatible), and the table is megabytes: a filter of a byte a pair (one
//! 64-bit word of it per pair, three bits set) answers most of those from the core's own
//! cache, and sends the table only the pairs that merge and a few percent of the others.
//!
//! Exact by construction: [`PairPriorities::new`] is given every pair of usable tokens whose
//! joined bytes are a token, with the model's priority for it, and a pair that is not in the
//! table does not merge (a merge always makes the token of its joined bytes).

/// No merge.
const NONE: u32 = u32::MAX;

/// Ids and priorities below this fit a slot.
pub const LIMIT: u32 = 1 << 21;

/// Bits of a slot: left id (21), right id (21), priority plus one (22; 0 marks an empty slot).
const ID_BITS: u32 = 21;
const KEY_MASK: u64 = (1 << (2 * ID_BITS)) - 1;

/// See the module documentation.
#[derive(Debug)]
pub struct PairPriorities {
    slots: Box<[u64]>,
    /// `64 - log2(slots)`: a key's hash shifted right by this is its first slot.
    shift: u32,
    /// Per pair given, three bits of the word its hash picks.
    filter: Box<[u64]>,
    /// `64 - log2(filter words)`.
    filter_shift: u32,
}

impl PairPriorities {
    /// The table of `(left, right, priority)` triples (a pair given twice keeps its last
    /// priority); `None` when an id or a priority is [`LIMIT`] or more.
    pub fn new(pairs: &[(u32, u32, u32)]) -> Option<PairPriorities> {
        if pairs
            .iter()
            .any(|&(a, b, p)| a >= LIMIT || b >= LIMIT || p >= LIMIT)
        {
            return None;
        }
        // At most half full: a miss (the answer for most pairs asked) ends at an empty slot
        // after one or two probes, within the first slot's cache line mostly.
        let len = (pairs.len() * 2).next_power_of_two().max(2);
        let mut slots = vec![0u64; len].into_boxed_slice();
        let shift = 64 - len.trailing_zeros();
        // Eight bits a pair: about 4 % of the pairs not given pass.
        let words = pairs.len().div_ceil(8).next_power_of_two().max(1);
        let mut filter = vec![0u64; words].into_boxed_slice();
        let filter_shift = 64 - words.trailing_zeros();
        for &(a, b, p) in pairs {
            let key = key(a, b);
            let h = hash(key);
            filter[word_of(h, filter_shift)] |= bits_of(h);
            let mut i = (h >> shift) as usize;
            while slots[i] != 0 && slots[i] & KEY_MASK != key {
                i = (i + 1) & (len - 1);
            }
            slots[i] = key | (p as u64 + 1) << (2 * ID_BITS);
        }
        Some(PairPriorities {
            slots,
            shift,
            filter,
            filter_shift,
        })
    }

    /// The priority of merging `left` then `right`, `u32::MAX` when they do not merge.
    #[inline(always)]
    pub fn get(&self, left: u32, right: u32) -> u32 {
        if (left | right) >= LIMIT {
            return NONE;
        }
        let key = key(left, right);
        let h = hash(key);
        let bits = bits_of(h);
        if self.filter[word_of(h, self.filter_shift)] & bits != bits {
            return NONE;
        }
        let mask = self.slots.len() - 1;
        let mut i = (h >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            // Empty first: an empty slot's key bits read as the pair (0, 0).
            if s == 0 {
                return NONE;
            }
            if s & KEY_MASK == key {
                return (s >> (2 * ID_BITS)) as u32 - 1;
            }
            i = (i + 1) & mask;
        }
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of_val(&self.slots[..]) + std::mem::size_of_val(&self.filter[..])
    }
}

#[inline(always)]
fn key(left: u32, right: u32) -> u64 {
    left as u64 | (right as u64) << ID_BITS
}

#[inline(always)]
fn hash(key: u64) -> u64 {
    key.wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The filter's word for hash `h`: its top bits (as the table's slot, a table of other size).
#[inline(always)]
fn word_of(h: u64, filter_shift: u32) -> usize {
    // A filter of one word shifts by 64, which `checked_shr` reads as word 0.
    h.checked_shr(filter_shift).unwrap_or(0) as usize
}

/// The three bits of its word a hash sets: from its middle bits, which depend on every bit of
/// the key (a product's low bits depend only on the key's low bits: the left id's) and do
/// not pick the word.
#[inline(always)]
fn bits_of(h: u64) -> u64 {
    1 << (h >> 24 & 63) | 1 << (h >> 30 & 63) | 1 << (h >> 36 & 63)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn answers_every_pair_given_and_none_for_others() {
        // Pairs crowded into few slots (ids that differ in high bits only) and a pair given
        // twice.
        let mut pairs = Vec::new();
        for a in 0..300u32 {
            for b in [0, 1, a, 1 << 20, LIMIT - 1] {
                if (a + b) % 3 == 0 {
                    pairs.push((a, b, (a * 7 + b) % LIMIT));
                }
            }
        }
        pairs.push((3, 3, 5));
        pairs.push((3, 3, 9));
        let table = PairPriorities::new(&pairs).expect("ids fit");
        let want: HashMap<(u32, u32), u32> = pairs.iter().map(|&(a, b, p)| ((a, b), p)).collect();
        for a in 0..320u32 {
            for b in [0, 1, 2, a, a + 1, 1 << 20, LIMIT - 1, LIMIT, u32::MAX] {
                let expected = want.get(&(a, b)).copied().unwrap_or(NONE);
                assert_eq!(table.get(a, b), expected, "({a}, {b})");
            }
        }
        assert_eq!(table.get(3, 3), 9);
        assert_eq!(table.get(0, 0), 0, "a priority of 0 is not an empty slot");
    }

    #[test]
    fn the_pair_of_zeros_is_not_an_empty_slot() {
        let table = PairPriorities::new(&[(1, 2, 3)]).expect("ids fit");
        assert_eq!(table.get(0, 0), NONE);
        assert_eq!(table.get(1, 2), 3);
    }

    #[test]
    fn refuses_what_a_slot_cannot_hold_and_serves_an_empty_list() {
        assert!(PairPriorities::new(&[(LIMIT, 0, 0)]).is_none());
        assert!(PairPriorities::new(&[(0, 0, LIMIT)]).is_none());
        let empty = PairPriorities::new(&[]).expect("empty");
        assert_eq!(empty.get(0, 0), NONE);
    }
}
