//! A priority queue of BPE merge candidates for long symbol sequences: one bucket per score
//! rank, each bucket a FIFO of candidates pushed in increasing position order plus a heap for
//! the rare out-of-order ones, and a heap of the non-empty ranks.
//!
//! It pops in exactly the order of a binary min-heap over `(rank, position, len)` keys, but a
//! word of a million symbols no longer means a heap of a million entries: candidates mostly
//! arrive left to right within a rank (the first pass over the text, and the merges of one
//! rank creating candidates of another in order), and the FIFO takes those for O(1). Short
//! words keep the plain heap, which is faster for them.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

#[derive(Debug, Default)]
struct Bucket {
    /// Keys `(position << 13) | len`, non-decreasing.
    fifo: VecDeque<u64>,
    /// Keys that arrived below the FIFO's back.
    late: BinaryHeap<Reverse<u64>>,
}

impl Bucket {
    fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.late.is_empty()
    }
}

/// See the module documentation. Keys are `(rank, rest)`, compared as a pair.
#[derive(Debug, Default)]
pub struct RankQueue {
    /// Indexed by rank: 1 + the index in `buckets` of the rank's bucket, 0 for none. Ranks run
    /// to the vocabulary's size while a word uses a few of them: four bytes a rank (grown
    /// zeroed, so the pages of ranks never used are never touched) instead of a bucket each.
    slots: Vec<u32>,
    /// The buckets of the ranks pushed since the last `clear`, with their rank; kept (with
    /// their allocations) between uses.
    buckets: Vec<(u32, Bucket)>,
    /// How many of `buckets` belong to ranks pushed since the last `clear`.
    used: usize,
    /// The ranks whose bucket is not empty, each as `rank << 32 | index in buckets` (a rank
    /// is listed once, so this orders by rank).
    ranks: BinaryHeap<Reverse<u64>>,
    len: usize,
}

impl RankQueue {
    /// Empties the queue, keeping allocations.
    pub fn clear(&mut self) {
        for (rank, bucket) in &mut self.buckets[..self.used] {
            self.slots[*rank as usize] = 0;
            bucket.fifo.clear();
            bucket.late.clear();
        }
        self.used = 0;
        self.ranks.clear();
        self.len = 0;
    }

    /// The number of queued keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Makes `slots` hold rank `r`.
    #[cold]
    #[inline(never)]
    fn grow_slots(&mut self, r: usize) {
        // A fresh zeroed allocation maps its pages on first touch: only the copied prefix and
        // the ranks used later are written.
        let mut grown = vec![0u32; (r + 1).next_power_of_two().max(2 * self.slots.len())];
        grown[..self.slots.len()].copy_from_slice(&self.slots);
        self.slots = grown;
    }

    /// The index in `buckets` of `rank`'s bucket, given one if it has none.
    #[inline(always)]
    fn bucket_index(&mut self, rank: u32) -> usize {
        let r = rank as usize;
        if r >= self.slots.len() {
            self.grow_slots(r);
        }
        match self.slots[r] {
            0 => {
                if self.used == self.buckets.len() {
                    self.buckets.push((rank, Bucket::default()));
                } else {
                    self.buckets[self.used].0 = rank;
                }
                self.used += 1;
                self.slots[r] = self.used as u32;
                self.used - 1
            }
            slot => slot as usize - 1,
        }
    }

    /// Queues `(rank, rest)`.
    pub fn push(&mut self, rank: u32, rest: u64) {
        let i = self.bucket_index(rank);
        let bucket = &mut self.buckets[i].1;
        if bucket.is_empty() {
            self.ranks.push(Reverse((rank as u64) << 32 | i as u64));
        }
        match bucket.fifo.back() {
            Some(&back) if rest < back => bucket.late.push(Reverse(rest)),
            _ => bucket.fifo.push_back(rest),
        }
        self.len += 1;
    }

    /// Removes and returns the smallest `(rank, rest)`.
    pub fn pop(&mut self) -> Option<(u32, u64)> {
        let &Reverse(listed) = self.ranks.peek()?;
        let (rank, i) = ((listed >> 32) as u32, listed as u32 as usize);
        let bucket = &mut self.buckets[i].1;
        let from_fifo = match (bucket.fifo.front(), bucket.late.peek()) {
            (Some(&f), Some(&Reverse(l))) => f <= l,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let rest = if from_fifo {
            bucket.fifo.pop_front()
        } else {
            bucket.late.pop().map(|Reverse(k)| k)
        }
        .expect("a listed bucket is not empty");
        if bucket.is_empty() {
            self.ranks.pop();
        }
        self.len -= 1;
        Some((rank, rest))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same pops as a plain min-heap of pairs, under random pushes and pops.
    #[test]
    fn pops_in_heap_order() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        // One queue for every round, as a scratch keeps it: `clear` must forget the ranks of
        // the round before, also when it left keys queued.
        let mut q = RankQueue::default();
        for round in 0..200 {
            q.clear();
            let mut reference = BinaryHeap::new();
            let ranks = 1 + rnd(6);
            // Spread the ranks over a vocabulary's range in some rounds.
            let spread = if round % 3 == 0 { 1 } else { 1 + rnd(40_000) };
            let mut cursor = 0u64;
            for _ in 0..(50 + round * 7) {
                if rnd(3) == 0 {
                    assert_eq!(q.pop(), reference.pop().map(|Reverse(p)| p));
                } else {
                    // Mostly increasing positions, sometimes going back, with duplicates.
                    cursor = if rnd(5) == 0 {
                        rnd(cursor + 1)
                    } else {
                        cursor + rnd(3)
                    };
                    let key = ((rnd(ranks) * spread) as u32, cursor);
                    q.push(key.0, key.1);
                    reference.push(Reverse(key));
                }
                assert_eq!(q.len(), reference.len());
            }
            if round % 4 == 0 {
                continue; // leave keys queued for `clear`
            }
            while let Some(Reverse(p)) = reference.pop() {
                assert_eq!(q.pop(), Some(p));
            }
            assert!(q.is_empty() && q.pop().is_none());
        }
    }
}
