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
mod tests {
    use super::*;
    use crate::test_rng::Rng;
    use std::collections::BinaryHeap;

    /// Items come out as from the standard binary heap, through pushes between pops and tops
    /// replaced by smaller or greater ones, with many equal keys.
    #[test]
    fn the_order_is_a_binary_heaps() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let mut random = |bound: u64| rng.below(bound);
        let mut quad = QuadHeap::new();
        let mut binary = BinaryHeap::new();
        let mut tag = 0u32;
        let mut item = |count: u64| {
            tag += 1;
            (count, std::cmp::Reverse(tag))
        };
        for _ in 0..5_000 {
            let it = item(random(200));
            quad.push(it);
            binary.push(it);
        }
        let mut popped = 0;
        while let Some(&top) = binary.peek() {
            assert_eq!(quad.peek(), Some(&top));
            match random(4) {
                0 => {
                    let it = (random(top.0 + 10), top.1);
                    quad.replace_top(it);
                    binary.pop();
                    binary.push(it);
                }
                1 => {
                    assert_eq!(quad.pop(), binary.pop());
                    popped += 1;
                    for _ in 0..random(3) {
                        let it = item(random(top.0 + 1));
                        quad.push(it);
                        binary.push(it);
                    }
                }
                _ => {
                    assert_eq!(quad.pop(), binary.pop());
                    popped += 1;
                }
            }
        }
        assert_eq!(quad.pop(), None);
        assert!(popped >= 5_000);
    }
}
