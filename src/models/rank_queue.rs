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
    /// Indexed by rank; grown on demand and kept (with their allocations) between uses.
    buckets: Vec<Bucket>,
    /// The ranks whose bucket is not empty.
    ranks: BinaryHeap<Reverse<u32>>,
    len: usize,
}

impl RankQueue {
    /// Empties the queue, keeping allocations.
    pub fn clear(&mut self) {
        for Reverse(rank) in self.ranks.drain() {
            let b = &mut self.buckets[rank as usize];
            b.fifo.clear();
            b.late.clear();
        }
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

    /// Queues `(rank, rest)`.
    pub fn push(&mut self, rank: u32, rest: u64) {
        let r = rank as usize;
        if r >= self.buckets.len() {
            self.buckets.resize_with(r + 1, Bucket::default);
        }
        let bucket = &mut self.buckets[r];
        if bucket.is_empty() {
            self.ranks.push(Reverse(rank));
        }
        match bucket.fifo.back() {
            Some(&back) if rest < back => bucket.late.push(Reverse(rest)),
            _ => bucket.fifo.push_back(rest),
        }
        self.len += 1;
    }

    /// Removes and returns the smallest `(rank, rest)`.
    pub fn pop(&mut self) -> Option<(u32, u64)> {
        let &Reverse(rank) = self.ranks.peek()?;
        let bucket = &mut self.buckets[rank as usize];
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
        for round in 0..200 {
            let mut q = RankQueue::default();
            let mut reference = BinaryHeap::new();
            let ranks = 1 + rnd(6);
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
                    let key = (rnd(ranks) as u32, cursor);
                    q.push(key.0, key.1);
                    reference.push(Reverse(key));
                }
                assert_eq!(q.len(), reference.len());
            }
            while let Some(Reverse(p)) = reference.pop() {
                assert_eq!(q.pop(), Some(p));
            }
            assert!(q.is_empty() && q.pop().is_none());
            q.clear();
        }
    }
}
