//! LinMaxMatch ("Fast WordPiece Tokenization", Song et al., EMNLP 2021): WordPiece in one pass
//! over the word, O(n) whatever the vocabulary.
//!
//! # The algorithm
//! Both sets of entries live in one trie: word-initial entries under a root `r`, continuation
//! entries (without their `##`) under a root `r#`. Greedy longest-match-first walks down from `r`
//! as far as the word allows. When the walk at node `v` cannot go on over the next byte, greedy
//! matching would emit the longest entry that is a prefix of `str(v)`, then restart from `r#`
//! on the rest — and what it emits, and where in the `r#` trie it ends up after re-reading the
//! rest, depends on `v` only. So it is computed once per node, like Aho–Corasick failure links:
//! - the *failure pops* `F(v)`: the entries greedy matching emits;
//! - the *failure link* `f(v)`: the node reached after them (none when greedy matching fails).
//!
//! For an entry node, `F(v) = [v]` and `f(v) = r#`. Otherwise, with `v` = parent `u` + byte `c`:
//! follow `z = f(u), f(f(u)), …` collecting their pops until some `z` has a child over `c`;
//! `F(v) = F(u) ++ F(z₁) ++ …` and `f(v) = z.child(c)`. Nodes are done in breadth-first order so
//! that every link points to a finished node.
//!
//! Encoding a word: at each byte, while the current node has no child over it, emit its pops and
//! follow its link (no link: the word is unknown); then step down. At the end, follow links
//! until `r#`, emitting pops. Each byte moves down one level and each link moves up at least one,
//! so the work is linear in the word (plus the tokens emitted).

use simdtok_kernels::{DoubleArray, TrieNode};

use super::WordPiece;
use crate::models::token::WordToken;

/// Marks the word-initial half of the trie.
const INITIAL: u8 = 1;
/// Marks the continuation half.
const CONTINUATION: u8 = 2;
/// No failure link.
const NONE: u32 = u32::MAX;

/// The LinMaxMatch automaton of a vocabulary.
#[derive(Debug)]
pub struct LinMaxMatch {
    trie: DoubleArray,
    /// `r` and `r#`.
    initial_root: TrieNode,
    continuation_root: TrieNode,
    /// Per node (by unit index): the failure link, or [`NONE`].
    fail: Vec<u32>,
    /// Per node: the range of its failure pops in `pool`.
    pops: Vec<(u32, u32)>,
    /// Failure pops: (id, length in bytes of the word it covers).
    pool: Vec<(u32, u32)>,
}

impl LinMaxMatch {
    /// Builds the automaton of `model`'s entries.
    pub fn build(model: &WordPiece) -> LinMaxMatch {
        let mut keys: Vec<(Vec<u8>, u32)> = model
            .entries()
            .map(|(bytes, id, continuation)| {
                let marker = if continuation { CONTINUATION } else { INITIAL };
                let mut key = Vec::with_capacity(bytes.len() + 1);
                key.push(marker);
                key.extend_from_slice(bytes);
                (key, id)
            })
            .collect();
        // Both roots must exist even when one half has no entries. 0xFF never occurs in UTF-8,
        // so these two keys never match a word.
        keys.push((vec![INITIAL, 0xFF], 0));
        keys.push((vec![CONTINUATION, 0xFF], 0));
        let trie = DoubleArray::build(&keys).expect("keys are distinct, non-empty and NUL-free");
        let initial_root = trie.child(TrieNode::ROOT, INITIAL).expect("inserted");
        let continuation_root = trie.child(TrieNode::ROOT, CONTINUATION).expect("inserted");

        // Every node below the two roots, with its parent, label and depth, in BFS order.
        let n = trie.units().len();
        let mut seen = vec![false; n];
        let mut nodes: Vec<(u32, TrieNode, TrieNode, u8)> = Vec::new(); // (depth, node, parent, byte)
        for (key, _) in &keys {
            let mut node = trie.child(TrieNode::ROOT, key[0]).expect("inserted");
            for (depth, &byte) in key.iter().enumerate().skip(1) {
                let child = trie.child(node, byte).expect("inserted");
                if !std::mem::replace(&mut seen[child.index() as usize], true) {
                    nodes.push((depth as u32, child, node, byte));
                }
                node = child;
            }
        }
        nodes.sort_unstable_by_key(|&(depth, ..)| depth);

        let mut fail = vec![NONE; n];
        let mut pops = vec![(0u32, 0u32); n];
        let mut pool: Vec<(u32, u32)> = Vec::new();
        for &(depth, v, u, byte) in &nodes {
            let start = pool.len() as u32;
            if let Some(id) = trie.value_at(v) {
                pool.push((id, depth));
                fail[v.index() as usize] = continuation_root.index();
            } else {
                let (s, l) = pops[u.index() as usize];
                pool.extend_from_within(s as usize..(s + l) as usize);
                let mut z = fail[u.index() as usize];
                let mut link = NONE;
                while z != NONE {
                    let zn = TrieNode::from_index(z);
                    if let Some(next) = trie.child(zn, byte) {
                        link = next.index();
                        break;
                    }
                    let (s, l) = pops[z as usize];
                    pool.extend_from_within(s as usize..(s + l) as usize);
                    z = fail[z as usize];
                }
                fail[v.index() as usize] = link;
            }
            pops[v.index() as usize] = (start, pool.len() as u32 - start);
        }
        LinMaxMatch {
            trie,
            initial_root,
            continuation_root,
            fail,
            pops,
            pool,
        }
    }

    /// See [`WordPiece::encode_word`].
    pub fn encode_word(&self, word: &[u8], out: &mut Vec<WordToken>) -> bool {
        let before = out.len();
        let mut cursor = 0u32;
        let mut node = self.initial_root;
        let mut emit = |node: TrieNode, out: &mut Vec<WordToken>| -> Option<TrieNode> {
            let i = node.index() as usize;
            let link = self.fail[i];
            if link == NONE {
                return None;
            }
            let (s, l) = self.pops[i];
            for &(id, len) in &self.pool[s as usize..(s + l) as usize] {
                out.push(WordToken {
                    id,
                    start: cursor,
                    end: cursor + len,
                });
                cursor += len;
            }
            Some(TrieNode::from_index(link))
        };
        if word.is_empty() {
            return true;
        }
        for &byte in word {
            loop {
                if let Some(next) = self.trie.child(node, byte) {
                    node = next;
                    break;
                }
                match emit(node, out) {
                    Some(link) => node = link,
                    None => {
                        out.truncate(before);
                        return false;
                    }
                }
            }
        }
        while node != self.continuation_root {
            match emit(node, out) {
                Some(link) => node = link,
                None => {
                    out.truncate(before);
                    return false;
                }
            }
        }
        true
    }
}
