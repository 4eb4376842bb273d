//! The max-heap of the trainer's queue ([`super::count_queue`]: one per count, and one for
//! the high counts): four children to a node instead of two. A pop or a sink walks half
//! as many levels, and the four children of a node lie side by side, so their loads go out
//! together where a binary heap waits for one level's load before it can issue the next.

/// Children per node (eight measured no faster: their loads span three cache lines).
const ARITY: usize = 4;

/// A max-heap of `T` by its `Ord`.
pub struct QuadHeap<T> {
    items: Vec<T>,
}

impl<T: Ord + Copy> QuadHeap<T> {
    /// An empty heap.
    pub fn new() -> QuadHeap<T> {
        QuadHeap { items: Vec::new() }
    }

    /// The greatest item.
    #[inline]
    pub fn peek(&self) -> Option<&T> {
        self.items.first()
    }

    /// Adds `item`.
    pub fn push(&mut self, item: T) {
        let mut at = self.items.len();
        self.items.push(item);
        while at > 0 {
            let parent = (at - 1) / ARITY;
            if self.items[parent] >= item {
                break;
            }
            self.items[at] = self.items[parent];
            at = parent;
        }
        self.items[at] = item;
    }

    /// Replaces the greatest item by `item`, which then sinks to its place (the heap must not be
    /// empty).
    pub fn replace_top(&mut self, item: T) {
        self.items[0] = item;
        self.sink(0);
    }

    /// Takes the greatest item out.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.items.pop()?;
        if self.items.is_empty() {
            return Some(last);
        }
        let top = std::mem::replace(&mut self.items[0], last);
        self.sink(0);
        Some(top)
    }

    /// Moves the item at `at` down until no child is greater.
    #[inline]
    fn sink(&mut self, mut at: usize) {
        let item = self.items[at];
        let n = self.items.len();
        loop {
            let first = ARITY * at + 1;
            if first >= n {
                break;
            }
            let end = (first + ARITY).min(n);
            let mut best = first;
            for child in first + 1..end {
                if self.items[child] > self.items[best] {
                    best = child;
                }
            }
            if self.items[best] <= item {
                break;
            }
            self.items[at] = self.items[best];
            at = best;
        }
        self.items[at] = item;
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use std::collections::BinaryHeap;

    /// A test item: a count, then the order it was made in (older first).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub struct Item(pub u64, pub std::cmp::Reverse<u32>);

    /// The operations of a max-queue the trainer uses.
    pub trait Queue {
        fn push(&mut self, item: Item);
        fn peek(&mut self) -> Option<Item>;
        fn pop(&mut self) -> Option<Item>;
        fn replace_top(&mut self, item: Item);
    }

    impl Queue for QuadHeap<Item> {
        fn push(&mut self, item: Item) {
            QuadHeap::push(self, item)
        }
        fn peek(&mut self) -> Option<Item> {
            QuadHeap::peek(self).copied()
        }
        fn pop(&mut self) -> Option<Item> {
            QuadHeap::pop(self)
        }
        fn replace_top(&mut self, item: Item) {
            QuadHeap::replace_top(self, item)
        }
    }

    /// Checks that `queue` gives its items in the order of the standard binary heap, through
    /// `items` pushes of counts drawn by `count_of` (from a number below its bound), then pops
    /// with pushes between them (mostly no higher than the top, as the trainer's, and now and
    /// then any count) and tops replaced by lower counts or any count.
    pub fn same_order_as_one_heap(
        queue: &mut impl Queue,
        count_of: impl Fn(&mut dyn FnMut(u64) -> u64) -> u64,
        items: usize,
    ) {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut random = |bound: u64| rng.below(bound);
        let mut one = BinaryHeap::new();
        let mut tag = 0u32;
        let mut item = |count: u64| {
            tag += 1;
            Item(count, std::cmp::Reverse(tag))
        };
        for _ in 0..items {
            let it = item(count_of(&mut random));
            queue.push(it);
            one.push(it);
        }
        let mut popped = 0;
        while let Some(&top) = one.peek() {
            assert_eq!(queue.peek(), Some(top));
            let replacement = match random(5) {
                0 => Some(random(top.0.saturating_add(1))),
                1 => Some(count_of(&mut random)),
                _ => None,
            };
            if let Some(count) = replacement {
                let it = Item(count, top.1);
                queue.replace_top(it);
                one.pop();
                one.push(it);
                continue;
            }
            assert_eq!(queue.pop(), one.pop());
            popped += 1;
            // Pushes after every other pop, so that the queue drains.
            let pushes = if random(2) == 0 { random(3) } else { 0 };
            for _ in 0..pushes {
                let count = if random(8) == 0 {
                    count_of(&mut random)
                } else {
                    random(top.0.saturating_add(1))
                };
                let it = item(count);
                queue.push(it);
                one.push(it);
            }
        }
        assert_eq!(queue.pop(), None);
        assert!(popped >= items);
    }

    /// With many equal counts.
    #[test]
    fn the_order_is_a_binary_heaps() {
        same_order_as_one_heap(&mut QuadHeap::new(), |random| random(200), 5_000);
    }
}
