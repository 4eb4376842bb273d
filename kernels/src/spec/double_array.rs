//! The double-array trie layout SentencePiece uses (darts-clone), and a builder for it.
//!
//! # Layout
//! Each node is one 32-bit unit holding both halves of the classic base/check pair:
//! - bits 0..=7: the *label* — the byte that leads from the parent to this node (the "check");
//! - bit 8: *has leaf* — a key ends at this node, its value is stored in the unit at
//!   `position ^ offset` (the child slot for label 0);
//! - bits 10..=31 with bit 9 as a scale flag: the *offset* (the "base", XOR-relative to the node's
//!   own position): `(unit >> 10) << ((unit & 0x200) >> 6)`, so offsets below 2^21 are stored
//!   exactly and larger ones must be multiples of 256;
//! - a *value unit* has bit 31 set and the value in bits 0..=30; bit 31 makes its label compare
//!   unequal to every byte, which is how a walk stops there.
//!
//! The walk from node position `p` over byte `c`: `q = p ^ offset(p) ^ c`; the step is valid when
//! `label(units[q]) == c`. Because `c < 256`, all children of a node live in one aligned block of
//! 256 units, and two nodes must never share a base (`p ^ offset(p)`), or a walk could step into
//! another node's child with a matching label.
//!
//! Serialized arrays (SentencePiece's precompiled charsmap) are little-endian `u32` units.
//! Keys must be non-empty and must not contain byte 0 (label 0 is the leaf slot); values must
//! be below 2^31.

use std::collections::VecDeque;

/// A key found by a common-prefix search: its length in bytes and its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TrieMatch {
    /// Length of the matched key, in bytes from the start of the search.
    pub len: u32,
    /// The value stored with the key.
    pub value: u32,
}

/// Why a trie could not be built or loaded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TrieError {
    /// A key was empty.
    #[error("key #{index} is empty; a double-array trie cannot store the empty key")]
    EmptyKey {
        /// Index of the key in the input.
        index: usize,
    },
    /// A key contained byte 0.
    #[error("key #{index} contains byte 0, which a double-array trie reserves for leaves")]
    ZeroByte {
        /// Index of the key in the input.
        index: usize,
    },
    /// A key occurred twice.
    #[error("key #{index} occurs more than once")]
    DuplicateKey {
        /// Index of one occurrence in the input.
        index: usize,
    },
    /// A value did not fit in 31 bits.
    #[error("value {value} of key #{index} does not fit in 31 bits")]
    ValueTooLarge {
        /// Index of the key in the input.
        index: usize,
        /// The value.
        value: u32,
    },
    /// The trie would need more units than the layout can address.
    #[error("the trie needs more than 2^29 units")]
    TooLarge,
    /// A serialized array's length was not a multiple of 4 bytes, or it was empty.
    #[error("a serialized double array must be a non-empty multiple of 4 bytes, got {len} bytes")]
    BadLength {
        /// The length in bytes.
        len: usize,
    },
    /// A serialized array was not a tree of finite depth.
    #[error("the double array is malformed: {0}")]
    Malformed(&'static str),
}

/// Fields of a darts-clone unit.
pub mod unit {
    /// Bit 31: a value unit.
    pub const IS_VALUE: u32 = 1 << 31;
    /// What unused units hold: a value-unit pattern, so no label ever matches it. (darts-clone
    /// leaves unused units 0, whose label 0 matches a 0 byte in the searched text; the walk
    /// behaves identically on such arrays, but arrays built here have no such phantom edges.)
    pub const UNUSED: u32 = IS_VALUE;

    /// The label; a value unit's label has bit 31 set and so equals no byte.
    #[inline(always)]
    pub const fn label(u: u32) -> u32 {
        u & (IS_VALUE | 0xFF)
    }

    /// Whether a key ends at this node.
    #[inline(always)]
    pub const fn has_leaf(u: u32) -> bool {
        (u >> 8) & 1 == 1
    }

    /// The value of a value unit.
    #[inline(always)]
    pub const fn value(u: u32) -> u32 {
        u & !IS_VALUE
    }

    /// The XOR offset from this node's position to its children's base.
    #[inline(always)]
    pub const fn offset(u: u32) -> u32 {
        (u >> 10) << ((u & (1 << 9)) >> 6)
    }
}

/// A node of a [`DoubleArray`]: the position of its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrieNode(u32);

impl TrieNode {
    /// The root (the empty prefix).
    pub const ROOT: TrieNode = TrieNode(0);

    /// The position of the node's unit: a dense index for per-node data kept beside the trie
    /// (below [`DoubleArray::units`]`().len()`).
    pub const fn index(self) -> u32 {
        self.0
    }

    /// The node at a position [`TrieNode::index`] returned. A position that is not a node is
    /// harmless: [`DoubleArray::child`] and [`DoubleArray::value_at`] check their bounds.
    pub const fn from_index(index: u32) -> TrieNode {
        TrieNode(index)
    }
}

/// Where a walk stands after the bytes of a node's key: the base of the node's children, which
/// the next step XORs a byte into ([`DoubleArray::walk_from`]). A caller that keeps it (a table
/// of where each character leads) resumes a walk without repeating the steps to the node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkFrom(pub(crate) u32);

/// A double-array trie in darts-clone layout.
#[derive(Clone, PartialEq, Eq)]
pub struct DoubleArray {
    units: Vec<u32>,
    max_key_len: usize,
    keys: usize,
    /// Fewer than 2^21 units, every offset stored unscaled and every node's base block
    /// allocated, so walks need no bounds checks ([`DoubleArray::is_compact`]).
    compact: bool,
}

impl DoubleArray {
    /// Builds a trie of `(key, value)` pairs, given in any order.
    pub fn build<K: AsRef<[u8]>>(entries: &[(K, u32)]) -> Result<DoubleArray, TrieError> {
        let mut order: Vec<usize> = (0..entries.len()).collect();
        for (index, (key, value)) in entries.iter().enumerate() {
            let key = key.as_ref();
            if key.is_empty() {
                return Err(TrieError::EmptyKey { index });
            }
            if key.contains(&0) {
                return Err(TrieError::ZeroByte { index });
            }
            if *value & unit::IS_VALUE != 0 {
                return Err(TrieError::ValueTooLarge {
                    index,
                    value: *value,
                });
            }
        }
        order.sort_unstable_by(|&a, &b| entries[a].0.as_ref().cmp(entries[b].0.as_ref()));
        if let Some(w) = order
            .windows(2)
            .find(|w| entries[w[0]].0.as_ref() == entries[w[1]].0.as_ref())
        {
            return Err(TrieError::DuplicateKey { index: w[1] });
        }
        let sorted: Vec<(&[u8], u32)> = order
            .iter()
            .map(|&i| (entries[i].0.as_ref(), entries[i].1))
            .collect();
        let units = Builder::default().build(&sorted)?;
        Ok(DoubleArray {
            // The builder allocates whole 256-unit blocks and takes every base from one; checked
            // all the same, since walks rely on it to skip bounds checks.
            compact: units.len() < (1 << 21) && every_base_in_a_block(&units),
            units,
            max_key_len: sorted.iter().map(|(k, _)| k.len()).max().unwrap_or(0),
            keys: sorted.len(),
        })
    }

    /// Takes units produced elsewhere (for example darts-clone), checking that the walk from the
    /// root reaches a finite tree whose every leaf has its value unit in bounds.
    pub fn from_units(units: Vec<u32>) -> Result<DoubleArray, TrieError> {
        if units.is_empty() {
            return Err(TrieError::BadLength { len: 0 });
        }
        let (max_key_len, keys, compact) = measure(&units)?;
        Ok(DoubleArray {
            units,
            max_key_len,
            keys,
            compact,
        })
    }

    /// Reads a serialized array (little-endian `u32` units).
    pub fn from_bytes(bytes: &[u8]) -> Result<DoubleArray, TrieError> {
        if bytes.is_empty() || !bytes.len().is_multiple_of(4) {
            return Err(TrieError::BadLength { len: bytes.len() });
        }
        let units = bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        DoubleArray::from_units(units)
    }

    /// The units (never empty: unit 0 is the root).
    pub fn units(&self) -> &[u32] {
        &self.units
    }

    /// The serialized form (little-endian units), as darts-clone writes it.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.units.iter().flat_map(|u| u.to_le_bytes()).collect()
    }

    /// Whether walks may skip bounds checks: the array is whole 256-unit blocks, and every unit
    /// a byte can match (every node, reachable or not) has an unscaled offset to a base in an
    /// allocated block — so the child slots of any node, and the block of any position, are
    /// in bounds. Arrays built here are (below 2^21 units); arrays from elsewhere are checked.
    pub fn is_compact(&self) -> bool {
        self.compact
    }

    /// The length of the longest key: a bound on the matches of one prefix search.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    /// The number of keys.
    pub fn key_count(&self) -> usize {
        self.keys
    }

    /// Bytes of memory the units take.
    pub fn memory_bytes(&self) -> usize {
        self.units.len() * 4
    }

    /// For each byte value, whether some key starts with it (a child of the root): the basis of
    /// first-byte pruning and of fast paths that skip bytes no key can match.
    pub fn first_bytes(&self) -> [bool; 256] {
        std::array::from_fn(|c| self.child(TrieNode::ROOT, c as u8).is_some())
    }

    /// The node reached from `node` over `byte` (never over byte 0, which marks leaves).
    pub fn child(&self, node: TrieNode, byte: u8) -> Option<TrieNode> {
        let u = *self.units.get(node.0 as usize)?;
        let pos = node.0 as usize ^ unit::offset(u) as usize ^ byte as usize;
        let child = *self.units.get(pos)?;
        (byte != 0 && unit::label(child) == byte as u32).then_some(TrieNode(pos as u32))
    }

    /// Where a walk stands at `node` ([`WalkFrom`]); `None` for a position that is not a unit.
    pub fn walk_from(&self, node: TrieNode) -> Option<WalkFrom> {
        let u = *self.units.get(node.0 as usize)?;
        u32::try_from(node.0 as usize ^ unit::offset(u) as usize)
            .ok()
            .map(WalkFrom)
    }

    /// The value of the key ending at `node`, if one does.
    pub fn value_at(&self, node: TrieNode) -> Option<u32> {
        let u = *self.units.get(node.0 as usize)?;
        if !unit::has_leaf(u) {
            return None;
        }
        let pos = node.0 as usize ^ unit::offset(u) as usize;
        self.units.get(pos).map(|&v| unit::value(v))
    }

    /// The value of exactly `key`, if it is in the trie.
    pub fn exact_match(&self, key: &[u8]) -> Option<u32> {
        let (node, base) = self.node_at_end(key)?;
        if !unit::has_leaf(node) {
            return None;
        }
        self.units.get(base).map(|&v| unit::value(v))
    }

    /// The unit of the node reached by `key` and its children's base.
    fn node_at_end(&self, key: &[u8]) -> Option<(u32, usize)> {
        let mut u = self.units[0];
        let mut pos = unit::offset(u) as usize;
        for &c in key {
            pos ^= c as usize;
            u = *self.units.get(pos)?;
            if unit::label(u) != c as u32 {
                return None;
            }
            pos ^= unit::offset(u) as usize;
        }
        Some((u, pos))
    }
}

impl std::fmt::Debug for DoubleArray {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoubleArray")
            .field("units", &self.units.len())
            .field("keys", &self.keys)
            .field("max_key_len", &self.max_key_len)
            .finish()
    }
}

/// Depth of the deepest key, the number of keys, and whether the array is compact (every
/// reachable node's offset unscaled and its base block in bounds, so that walks need no bounds
/// checks), walking every edge from the root; fails on cycles, on value units out of bounds and
/// on trees deeper than any sane key.
fn measure(units: &[u32]) -> Result<(usize, usize, bool), TrieError> {
    const MAX_DEPTH: usize = 1 << 16;
    // Darts-clone shares suffix subtrees (the array is a DAG), so memoise each node's height.
    let mut height: Vec<u32> = vec![u32::MAX; units.len()]; // MAX = not seen
    const IN_PROGRESS: u32 = u32::MAX - 1;
    let mut keys = 0usize;
    // Iterative DFS: (node position, next label to try).
    let mut stack: Vec<(usize, u32)> = vec![(0, 1)];
    height[0] = IN_PROGRESS;
    let mut child_heights: Vec<u32> = vec![0];
    let mut compact = units.len().is_multiple_of(BLOCK);
    while let Some(&mut (pos, ref mut next)) = stack.last_mut() {
        let u = units[pos];
        let base = pos ^ unit::offset(u) as usize;
        if *next == 1 {
            compact &= u & (1 << 9) == 0 && (base | (BLOCK - 1)) < units.len();
        }
        if *next == 1 && unit::has_leaf(u) {
            if base >= units.len() {
                return Err(TrieError::Malformed("a leaf's value unit is out of bounds"));
            }
            keys += 1;
        }
        let mut descended = false;
        while *next < 256 {
            let c = *next;
            *next += 1;
            let child = base ^ c as usize;
            if child >= units.len() || unit::label(units[child]) != c {
                continue;
            }
            match height[child] {
                IN_PROGRESS => return Err(TrieError::Malformed("a walk can return to a node")),
                u32::MAX => {
                    if stack.len() >= MAX_DEPTH {
                        return Err(TrieError::Malformed("the trie is deeper than 65536"));
                    }
                    height[child] = IN_PROGRESS;
                    stack.push((child, 1));
                    child_heights.push(0);
                    descended = true;
                    break;
                }
                h => {
                    let top = child_heights.last_mut().expect("one per stack entry");
                    *top = (*top).max(h + 1);
                }
            }
        }
        if !descended {
            stack.pop();
            let h = child_heights.pop().expect("one per stack entry");
            height[pos] = h;
            if let Some(parent) = child_heights.last_mut() {
                *parent = (*parent).max(h + 1);
            }
        }
    }
    Ok((
        height[0] as usize,
        keys,
        compact && every_base_in_a_block(units),
    ))
}

/// Whether the array is whole blocks and every unit that a byte can match (any but value units:
/// nodes, reachable or not, and darts-clone's zero units) has an unscaled offset to a base whose
/// block is in bounds. Then a step from any position in bounds stays in bounds, so a walk
/// resumed at any position ([`WalkFrom`]) needs no bounds checks either.
fn every_base_in_a_block(units: &[u32]) -> bool {
    units.len().is_multiple_of(BLOCK)
        && units.iter().enumerate().all(|(pos, &u)| {
            u & unit::IS_VALUE != 0
                || (u & (1 << 9) == 0
                    && ((pos ^ unit::offset(u) as usize) | (BLOCK - 1)) < units.len())
        })
}

/// Units per block; all children of a node fall in one block.
const BLOCK: usize = 256;
/// Only the newest blocks are searched for free units; older ones are closed, which bounds the
/// search per node (darts-clone does the same).
const OPEN_BLOCKS: usize = 16;
const NONE: u32 = u32::MAX;

/// Places nodes breadth-first, each at the first base whose child slots are all free.
#[derive(Default)]
struct Builder {
    units: Vec<u32>,
    used: Vec<bool>,
    base_used: Vec<bool>,
    /// Doubly linked list of free units in open blocks, oldest first.
    next_free: Vec<u32>,
    prev_free: Vec<u32>,
    head: Option<u32>,
    tail: Option<u32>,
    closed_blocks: usize,
}

impl Builder {
    fn build(mut self, sorted: &[(&[u8], u32)]) -> Result<Vec<u32>, TrieError> {
        self.add_block()?;
        self.take(0); // the root
        // (position of the node, its keys as a range of `sorted`, depth = bytes consumed)
        let mut queue = VecDeque::from([(0usize, 0usize, sorted.len(), 0usize)]);
        let mut labels: Vec<u8> = Vec::with_capacity(256);
        let mut ranges: Vec<(usize, usize)> = Vec::with_capacity(256);
        while let Some((pos, lo, hi, depth)) = queue.pop_front() {
            // The keys of the range share `depth` bytes; the shortest comes first when sorted.
            let terminal = lo < hi && sorted[lo].0.len() == depth;
            labels.clear();
            ranges.clear();
            if terminal {
                labels.push(0);
            }
            let mut i = lo + usize::from(terminal);
            while i < hi {
                let c = sorted[i].0[depth];
                let start = i;
                while i < hi && sorted[i].0[depth] == c {
                    i += 1;
                }
                labels.push(c);
                ranges.push((start, i));
            }
            if labels.is_empty() {
                continue; // only the root of an empty trie
            }
            let base = self.find_base(pos, &labels)?;
            self.base_used[base] = true;
            let offset = (pos ^ base) as u32;
            let u = &mut self.units[pos];
            *u |= if offset < (1 << 21) {
                offset << 10
            } else {
                debug_assert!(offset.is_multiple_of(256));
                (offset << 2) | (1 << 9)
            };
            if terminal {
                *u |= 1 << 8;
                self.take(base);
                self.units[base] = sorted[lo].1 | unit::IS_VALUE;
            }
            for (&c, &(start, end)) in labels[usize::from(terminal)..].iter().zip(&ranges) {
                let child = base ^ c as usize;
                self.take(child);
                self.units[child] = c as u32;
                queue.push_back((child, start, end, depth + 1));
            }
        }
        for (u, &used) in self.units.iter_mut().zip(&self.used) {
            if !used {
                *u = unit::UNUSED;
            }
        }
        Ok(self.units)
    }

    /// A base for a node at `pos` with children `labels` (sorted; 0 = leaf slot): all child
    /// slots free, not another node's base, not 0, and an offset the unit can encode.
    fn find_base(&mut self, pos: usize, labels: &[u8]) -> Result<usize, TrieError> {
        let mut cursor = self.head;
        while let Some(free) = cursor {
            let base = free as usize ^ labels[0] as usize;
            // Base 0 would put the root (label 0) in the node's leaf slot: a 0 byte in the text
            // would then match it and walk on, a phantom edge.
            if base != 0
                && !self.base_used[base]
                && encodable(pos ^ base)
                && labels[1..].iter().all(|&c| !self.used[base ^ c as usize])
            {
                return Ok(base);
            }
            cursor = self.link(self.next_free[free as usize]);
        }
        // No open block fits: a fresh block fits any label set, and with the base's low byte
        // equal to the node's the offset is a multiple of 256, which is always encodable.
        let start = self.add_block()?;
        Ok(start | (pos & (BLOCK - 1)))
    }

    fn link(&self, v: u32) -> Option<u32> {
        (v != NONE).then_some(v)
    }

    fn add_block(&mut self) -> Result<usize, TrieError> {
        let start = self.units.len();
        if start + BLOCK > 1 << 29 {
            return Err(TrieError::TooLarge);
        }
        self.units.resize(start + BLOCK, 0);
        self.used.resize(start + BLOCK, false);
        self.base_used.resize(start + BLOCK, false);
        self.next_free.resize(start + BLOCK, NONE);
        self.prev_free.resize(start + BLOCK, NONE);
        for p in start..start + BLOCK {
            self.push_free(p as u32);
        }
        let blocks = self.units.len() / BLOCK;
        if blocks - self.closed_blocks > OPEN_BLOCKS {
            let old = self.closed_blocks * BLOCK;
            for p in old..old + BLOCK {
                if !self.used[p] {
                    self.unlink(p);
                }
            }
            self.closed_blocks += 1;
        }
        Ok(start)
    }

    fn push_free(&mut self, p: u32) {
        self.prev_free[p as usize] = self.tail.unwrap_or(NONE);
        self.next_free[p as usize] = NONE;
        match self.tail {
            Some(t) => self.next_free[t as usize] = p,
            None => self.head = Some(p),
        }
        self.tail = Some(p);
    }

    fn unlink(&mut self, p: usize) {
        let (prev, next) = (self.prev_free[p], self.next_free[p]);
        match self.link(prev) {
            Some(q) => self.next_free[q as usize] = next,
            None => self.head = self.link(next),
        }
        match self.link(next) {
            Some(q) => self.prev_free[q as usize] = prev,
            None => self.tail = self.link(prev),
        }
    }

    /// Marks a unit used (it must be free and in an open block).
    fn take(&mut self, p: usize) {
        debug_assert!(!self.used[p]);
        self.used[p] = true;
        self.unlink(p);
    }
}

fn encodable(offset: usize) -> bool {
    offset < (1 << 21) || (offset.is_multiple_of(256) && offset < (1 << 29))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(da: &DoubleArray, key: &[u8]) -> Vec<TrieMatch> {
        let mut out = Vec::new();
        crate::scalar::trie::prefix_search(da, key, &mut out);
        out
    }

    #[test]
    fn builds_and_finds_every_key() {
        let words = [
            "a",
            "ab",
            "abc",
            "b",
            "bcd",
            "\u{2581}the",
            "x\u{ff}y",
            "zz",
        ];
        let entries: Vec<(&[u8], u32)> = words
            .iter()
            .enumerate()
            .map(|(i, w)| (w.as_bytes(), i as u32 * 7))
            .collect();
        let da = DoubleArray::build(&entries).unwrap();
        assert_eq!(da.key_count(), words.len());
        assert_eq!(da.max_key_len(), "\u{2581}the".len());
        for (i, w) in words.iter().enumerate() {
            assert_eq!(da.exact_match(w.as_bytes()), Some(i as u32 * 7), "{w}");
        }
        assert_eq!(da.exact_match(b"abcd"), None);
        assert_eq!(da.exact_match(b"bc"), None);
        assert_eq!(
            search(&da, b"abcde"),
            vec![
                TrieMatch { len: 1, value: 0 },
                TrieMatch { len: 2, value: 7 },
                TrieMatch { len: 3, value: 14 }
            ]
        );
        let reloaded = DoubleArray::from_bytes(&da.to_bytes()).unwrap();
        assert_eq!(reloaded, da);
    }

    #[test]
    fn rejects_bad_keys() {
        assert_eq!(
            DoubleArray::build(&[(b"".as_slice(), 1)]),
            Err(TrieError::EmptyKey { index: 0 })
        );
        assert_eq!(
            DoubleArray::build(&[(b"a\0".as_slice(), 1)]),
            Err(TrieError::ZeroByte { index: 0 })
        );
        assert!(matches!(
            DoubleArray::build(&[(b"a".as_slice(), 1), (b"a".as_slice(), 2)]),
            Err(TrieError::DuplicateKey { .. })
        ));
        assert!(matches!(
            DoubleArray::build(&[(b"a".as_slice(), 1 << 31)]),
            Err(TrieError::ValueTooLarge { .. })
        ));
    }

    #[test]
    fn empty_trie_matches_nothing() {
        let da = DoubleArray::build::<&[u8]>(&[]).unwrap();
        assert_eq!(search(&da, b"abc"), vec![]);
        assert_eq!(da.max_key_len(), 0);
    }

    #[test]
    fn rejects_malformed_arrays() {
        assert!(DoubleArray::from_bytes(&[1, 2, 3]).is_err());
        assert!(DoubleArray::from_units(vec![]).is_err());
        // Root offset 0 leads over byte 1 to unit 1 (label 1), whose offset 1 leads over byte 1
        // back to unit 1.
        let cyclic = vec![0, 1 | (1 << 10)];
        assert_eq!(
            DoubleArray::from_units(cyclic),
            Err(TrieError::Malformed("a walk can return to a node"))
        );
    }

    #[test]
    fn many_keys_build_quickly_and_exactly() {
        let keys: Vec<(Vec<u8>, u32)> = (0..60_000u32)
            .map(|i| {
                (
                    format!("{:x}k{}", i.wrapping_mul(2654435761), i % 97).into_bytes(),
                    i,
                )
            })
            .collect();
        let da = DoubleArray::build(&keys).unwrap();
        for (k, v) in keys.iter().step_by(97) {
            assert_eq!(da.exact_match(k), Some(*v));
        }
        assert_eq!(DoubleArray::from_units(da.units().to_vec()).unwrap(), da);
    }

    #[test]
    fn walks_resume_at_a_node_and_a_foreign_position_reads_nothing_out_of_bounds() {
        let small = DoubleArray::build(&[(b"ab".as_slice(), 1), (b"abc", 2)]).unwrap();
        assert!(small.is_compact());
        let mut node = TrieNode::ROOT;
        for &c in b"ab" {
            node = small.child(node, c).unwrap();
        }
        let from = small.walk_from(node).unwrap();
        let mut found = Vec::new();
        let read = crate::scalar::trie::walk_any_from(&small, from, b"cd", |len, value| {
            found.push((len, value))
        });
        assert_eq!((read, found), (2, vec![(1, 2)]));
        // A position of a much larger trie is past the small one's units.
        let keys: Vec<(Vec<u8>, u32)> = (0..5000u32)
            .map(|i| (i.to_string().into_bytes(), i))
            .collect();
        let large = DoubleArray::build(&keys).unwrap();
        let far = (0..large.units().len() as u32)
            .filter_map(|i| large.walk_from(TrieNode::from_index(i)))
            .find(|f| f.0 as usize >= small.units().len())
            .expect("a position past the small trie");
        for key in [&b""[..], b"a", b"abc"] {
            let read = crate::scalar::trie::walk_any_from(&small, far, key, |_, _| {
                panic!("nothing matches")
            });
            assert_eq!(read, key.len().min(1));
        }
    }

    #[test]
    fn an_unreachable_node_with_a_base_out_of_bounds_makes_an_array_not_compact() {
        let da = DoubleArray::build(&[(b"ab".as_slice(), 1)]).unwrap();
        let mut units = da.units().to_vec();
        assert!(DoubleArray::from_units(units.clone()).unwrap().is_compact());
        // A free unit turned into a node labelled 7 whose children would lie far outside: no
        // walk from the root reaches it, but a walk resumed near it could.
        let free = units.iter().rposition(|&u| u == unit::UNUSED).unwrap();
        units[free] = 7 | ((1 << 20) << 10);
        let loaded = DoubleArray::from_units(units).unwrap();
        assert_eq!(loaded.exact_match(b"ab"), Some(1));
        assert!(!loaded.is_compact());
    }
}
