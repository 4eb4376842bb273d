//! The trainer's queue of heap items by count: one small heap per count below [`DENSE`] and
//! one heap for the higher counts.
//!
//! Why not one heap: every merge pops the top and pushes the pairs it forms, and the stale
//! items that come up sink again, each a walk down a heap of some 60 000 items (the pairs of
//! 10 MB of English), a fifth of the merges' time even with four children to a node. Here an
//! item goes straight to the heap of its count: the items of one count are few where the
//! merges take them (high counts), and most of the rest (counts of a few) wait in heaps that
//! training reaches last, if ever.
//!
//! The order is one heap's: the items of the high heap outrank every bucket's, and a bucket's
//! items share their count, so its heap orders them by the rest of the items' order. The
//! highest bucket that may hold items only moves down between pushes: what a merge pushes
//! counts no more than the pair it merged, so a scan for the top bucket never goes over the same
//! empty buckets twice while the buckets hold the top.

use super::heap::QuadHeap;

/// An item with a count, ordered by its count first.
pub trait Counted: Ord + Copy {
    /// The count it is queued by.
    fn count(&self) -> u64;
}

/// Counts below this have a heap each; higher ones share one.
const DENSE: usize = 1 << 14;

/// See the module documentation.
pub struct CountQueue<T> {
    /// The items of count `c` below [`DENSE`], at `c`; grown as counts come.
    buckets: Vec<QuadHeap<T>>,
    /// No bucket above this one holds an item.
    top_bucket: usize,
    /// The items of count [`DENSE`] or more.
    high: QuadHeap<T>,
}

impl<T: Counted> CountQueue<T> {
    /// An empty queue.
    pub fn new() -> CountQueue<T> {
        CountQueue {
            buckets: Vec::new(),
            top_bucket: 0,
            high: QuadHeap::new(),
        }
    }

    /// Adds `item`.
    pub fn push(&mut self, item: T) {
        let count = item.count();
        if count >= DENSE as u64 {
            return self.high.push(item);
        }
        let count = count as usize;
        if count >= self.buckets.len() {
            self.buckets.resize_with(count + 1, QuadHeap::new);
        }
        self.buckets[count].push(item);
        self.top_bucket = self.top_bucket.max(count);
    }

    /// The heap that holds the greatest item, if any.
    #[inline]
    fn top_heap(&mut self) -> Option<&mut QuadHeap<T>> {
        if self.high.peek().is_some() {
            return Some(&mut self.high);
        }
        loop {
            if self
                .buckets
                .get(self.top_bucket)
                .is_some_and(|b| b.peek().is_some())
            {
                return Some(&mut self.buckets[self.top_bucket]);
            }
            if self.top_bucket == 0 {
                return None;
            }
            self.top_bucket -= 1;
        }
    }

    /// The greatest item.
    #[inline]
    pub fn peek(&mut self) -> Option<&T> {
        self.top_heap()?.peek()
    }

    /// Takes the greatest item out.
    #[inline]
    pub fn pop(&mut self) -> Option<T> {
        self.top_heap()?.pop()
    }

    /// Replaces the greatest item by `item` (the queue must not be empty).
    pub fn replace_top(&mut self, item: T) {
        let heap = self.top_heap().expect("a top to replace");
        if heap.peek().is_some_and(|top| top.count() == item.count()) {
            // Same count, same heap: it sinks in place.
            heap.replace_top(item);
        } else {
            heap.pop();
            self.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::heap::tests::{Item, Queue, same_order_as_one_heap};

    impl Counted for Item {
        fn count(&self) -> u64 {
            self.0
        }
    }

    impl Queue for CountQueue<Item> {
        fn push(&mut self, item: Item) {
            CountQueue::push(self, item)
        }
        fn peek(&mut self) -> Option<Item> {
            CountQueue::peek(self).copied()
        }
        fn pop(&mut self) -> Option<Item> {
            CountQueue::pop(self)
        }
        fn replace_top(&mut self, item: Item) {
            CountQueue::replace_top(self, item)
        }
    }

    /// Counts on both sides of [`DENSE`] and up to `u64::MAX`, many of them equal.
    #[test]
    fn the_order_is_one_heaps() {
        let count_of = |random: &mut dyn FnMut(u64) -> u64| match random(4) {
            0 => DENSE as u64 + random(50),
            1 => u64::MAX - random(2),
            _ => random(40),
        };
        same_order_as_one_heap(&mut CountQueue::new(), count_of, 4_000);
    }
}
