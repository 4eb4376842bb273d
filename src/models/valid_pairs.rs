//! BPE without merging: a piece's tokens found as the one sequence of tokens whose neighbours
//! are all compatible, by longest match with backtracking.
//!
//! # Why it is exact
//! Call a sequence of tokens *valid* when BPE, run on its bytes, gives that sequence back, and
//! a pair of tokens *compatible* when the pair is valid. BPE is deterministic, so a text has
//! exactly one valid sequence: its encoding. Two facts about any BPE (any priorities, ties to
//! the leftmost pair; GitHub's rust-gems `bpe` crate states them for rank-ordered vocabularies):
//! - a run of neighbours in a valid sequence is valid: BPE on the whole never merged across the
//!   run's ends, so its merges inside the run are the lowest among the run's own pairs, in the
//!   same order, which is BPE on the run alone;
//! - two valid sequences that overlap in one token, `x…t` and `t…y`, join into a valid `x…t…y`:
//!   on the joined bytes each side's merges come in the same relative order as alone, and a merge
//!   across `t`'s left (right) boundary, if BPE ever chose it, would have been chosen by BPE on
//!   `x…t` (`t…y`) alone.
//!
//! So a sequence of tokens is the encoding of its bytes exactly when each token is valid alone and
//! every neighbouring pair is compatible. Encoding searches for it: the longest token at each
//! position first, a shorter prefix of it when it is not compatible with the token before, and
//! back to the previous position when none is. A position from which the search found no way to
//! the end is never a boundary of the encoding (what came before it was valid, and valid prefixes
//! are unique, so the search there was the only one), and a bit remembers it: each position's
//! candidates are tried once, and the search is linear in the piece.
//!
//! # Compatibility in a few lookups
//! On the bytes of a pair `a b`, BPE merges each side as it would alone until, if ever, it merges
//! across the boundary. When every token's own merges come in order of priority (*monotone*:
//! true of every token of cl100k, o200k, DeepSeek V3 and Qwen 3), both sides together merge in
//! order of priority, and the only pairs that can meet across the boundary are a node of `a`'s
//! right spine (its last part, as merging built it: `a`, then the right part of `a`'s last merge,
//! and so on down to a byte) beside a node of `b`'s left spine. Walking back in time from
//! `(a, b)` — undoing the later-made of the two nodes (on equal priorities, the right one, which
//! a tie leaves for later) — visits every pair that ever faced the boundary, last first. A pair
//! merges if it is listed with a priority below that of the merge that ended it (at most equal,
//! for a merge on the right side, which the leftmost rule puts after it); the final pair `(a, b)`
//! merges if it is listed at all. `a` and `b` are compatible when none merges.
//!
//! Every pair the walk meets is of two usable tokens whose joined bytes are a slice of the
//! piece, so of a shape the pairs are for (below): the priorities of all such merges are
//! gathered once, from the splits of the tokens of that shape, into [`PairPriorities`], and a
//! walk asks nothing of the model. A piece of another shape is refused.
//!
//! A token's spine and whether it is monotone come from its shorter tokens: a token `t` splits
//! into `x y` where both are usable (valid alone and monotone), the pair is listed with priority
//! `p` above both their last merges', merges into `t`, and nothing merges across the split
//! before both sides are whole (the walk above, without the final pair). Every other token —
//! one that its own bytes do not merge into (Llama 3 has 588), or that merges out of order —
//! is not in the trie: a piece whose encoding needs one finds no sequence, and the caller
//! merges it as before. So does a piece holding a zero byte, which the trie cannot store.
//!
//! # Only the tokens the pieces need
//! A model builds its pairs over the tokens [`ValidPairs::in_scope`] keeps: one byte, or a first
//! byte and then none below `0x80` (` 中文`, `日本`, but not `中文abc`), or ASCII without a
//! letter or digit (` |----+`). The pieces it sends ([`ValidPairs::pays`],
//! [`ValidPairs::pays_once_built`]) are of one of those shapes too, so every token of their
//! encodings is kept: a token's bytes are a slice of its piece's. Each shape is closed under the
//! splits above (a prefix of such bytes is such bytes, and so is a suffix), so a kept token is
//! usable exactly when it would be in a build over every token. It is a third of Qwen 3's,
//! DeepSeek V3's and o200k's tokens, a fifth of Llama 3's and a twenty-seventh of cl100k's, and
//! the build takes as much less time.

use std::sync::OnceLock;

use simdtok_kernels::{DoubleArray, Kernels};

use crate::cache::pair_memo::PairMemo;
use crate::models::pair_priorities::PairPriorities;
use crate::models::token::PieceToken;

const NONE: u32 = u32::MAX;

/// How a usable token was made: its last merge's two parts and its priority.
#[derive(Clone, Copy, Debug)]
struct Node {
    left: u32,
    right: u32,
    /// The last merge's priority plus one; 0 for a single byte (there from the start); `NONE`
    /// for a token that is not usable.
    made: u32,
    /// Bytes.
    len: u32,
}

/// No token (the end of a chain of shorter prefixes).
const NO_TOKEN: PieceToken = PieceToken { id: NONE, len: 0 };

const UNUSABLE: Node = Node {
    left: NONE,
    right: NONE,
    made: NONE,
    len: 0,
};

/// See the module documentation.
#[derive(Debug)]
pub struct ValidPairs {
    nodes: Box<[Node]>,
    /// Per usable token, the longest usable token that is a proper prefix of it, with its
    /// length (id `NONE`: none).
    shorter: Box<[PieceToken]>,
    /// The usable tokens, by their bytes.
    trie: DoubleArray,
    longest: usize,
    /// The priority of every merge of two usable tokens: all that a compatibility asks of a
    /// piece in scope.
    priorities: PairPriorities,
    /// The shapes of the tokens and pieces these are for ([`ValidPairs::new`]).
    in_scope: fn(&[u8]) -> bool,
    /// Which pairs these are, for the memo of compatible pairs a thread's scratch keeps
    /// ([`ValidScratch`]): answers for another model's pairs read as empty.
    owner: usize,
}

/// The buffers of [`ValidPairs::encode`], kept between pieces.
#[derive(Default, Debug)]
pub struct ValidScratch {
    tokens: Vec<PieceToken>,
    /// Bit `p`: position `p` is not a boundary of the encoding.
    dead: Vec<u64>,
    /// Whether neighbouring tokens `(a, b)` are compatible, for the pairs met lately (the rank
    /// field 1 or 0). A compatibility is a walk down both tokens' spines, a lookup per level
    /// (about five for CJK tokens), and the pairs of a text repeat: 60 to 75 % of the checks
    /// on unseen Chinese and Japanese text are of a pair checked before.
    compatible: PairMemo,
}

impl ValidScratch {
    /// Sizes the memo of compatible pairs for the cache budget in force.
    #[inline]
    pub fn fit_budget(&mut self) {
        self.compatible.fit(crate::cache::budget::in_force());
    }
}

impl ValidPairs {
    /// The spines, trie and prefix table of a vocabulary. `tokens[id]` holds each id's bytes,
    /// `id_of` maps bytes to the id encoding gives them (of two ids with the same bytes, one),
    /// `priority(a, b, joined)` is the priority of merging token `a` then `b` whose bytes are
    /// `joined` (`NONE` when they do not merge; a merge always makes the token of its joined
    /// bytes), and `made(x, y, t)` is `priority(x, y, bytes of t)` for tokens `x` and `y` whose
    /// bytes make `t`'s (a rank table knows it without a lookup: `t`'s rank). `None` when no
    /// trie can be built, or a usable token's id or a merge's priority is too large for
    /// [`PairPriorities`]. Only the tokens whose bytes `in_scope` keeps can be usable (a model
    /// passes [`ValidPairs::in_scope`]).
    ///
    /// Tokens of one length depend only on shorter ones: each length is spread over up to four
    /// threads, and so are the tokens whose splits give the merges' priorities.
    pub fn new(
        tokens: &[Option<Box<[u8]>>],
        in_scope: fn(&[u8]) -> bool,
        id_of: impl Fn(&[u8]) -> Option<u32> + Sync,
        priority: impl Fn(u32, u32, &[u8]) -> u32 + Sync,
        made: impl Fn(u32, u32, u32) -> u32 + Sync,
    ) -> Option<ValidPairs> {
        let mut nodes = vec![UNUSABLE; tokens.len()].into_boxed_slice();
        let bytes_of = |id: u32| tokens[id as usize].as_deref().unwrap_or_default();
        let mut by_len: Vec<u32> = (0..tokens.len() as u32)
            .filter(|&id| !bytes_of(id).is_empty() && in_scope(bytes_of(id)))
            .collect();
        by_len.sort_by_key(|&id| bytes_of(id).len());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        for same in by_len.chunk_by(|&a, &b| bytes_of(a).len() == bytes_of(b).len()) {
            let found: Vec<(u32, Node)> = {
                let nodes = &nodes;
                let node = |id: u32| {
                    let bytes = bytes_of(id);
                    if id_of(bytes) != Some(id) {
                        UNUSABLE
                    } else if bytes.len() == 1 {
                        Node {
                            left: id,
                            right: id,
                            made: 0,
                            len: 1,
                        }
                    } else {
                        Self::split(nodes, id, bytes, &id_of, &priority, &made)
                    }
                };
                let per = same.len().div_ceil(threads).max(64);
                std::thread::scope(|scope| {
                    let parts: Vec<_> = same
                        .chunks(per)
                        .map(|ids| {
                            scope.spawn(move || {
                                ids.iter().map(|&id| (id, node(id))).collect::<Vec<_>>()
                            })
                        })
                        .collect();
                    parts
                        .into_iter()
                        .flat_map(|p| p.join().unwrap_or_default())
                        .collect()
                })
            };
            for (id, node) in found {
                nodes[id as usize] = node;
            }
        }
        let keys: Vec<(&[u8], u32)> = by_len
            .iter()
            .filter(|&&id| nodes[id as usize].made != NONE)
            .map(|&id| (bytes_of(id), id))
            .filter(|(b, _)| !b.contains(&0))
            .collect();
        let longest = keys.iter().map(|(b, _)| b.len()).max().unwrap_or(0);
        let trie = DoubleArray::build(&keys).ok()?;
        let mut shorter = vec![NO_TOKEN; tokens.len()].into_boxed_slice();
        for &(bytes, id) in &keys {
            Kernels::scalar().trie_prefix_walk(&trie, &bytes[..bytes.len() - 1], |len, v| {
                shorter[id as usize] = PieceToken { id: v, len }
            });
        }
        let priorities =
            Self::merges_of_usable(&nodes, &trie, &by_len, &bytes_of, &id_of, &priority);
        Some(ValidPairs {
            nodes,
            shorter,
            trie,
            longest,
            priorities: PairPriorities::new(&priorities)?,
            in_scope,
            owner: crate::cache::segment::new_model_id(),
        })
    }

    /// Every merge of two usable tokens, with its priority. Its joined bytes are a token's
    /// (a merge makes the token of its joined bytes), of a shape `in_scope` keeps (a piece's
    /// slice, as its tokens are): so these are the splits of the tokens in `in_scope` (`ids`)
    /// into a usable prefix, which the trie finds (no usable token holds a zero byte in the
    /// spines the search walks: they are slices of the trie's tokens), and a usable rest.
    fn merges_of_usable<'t>(
        nodes: &[Node],
        trie: &DoubleArray,
        ids: &[u32],
        bytes_of: &(impl Fn(u32) -> &'t [u8] + Sync),
        id_of: &(impl Fn(&[u8]) -> Option<u32> + Sync),
        priority: &(impl Fn(u32, u32, &[u8]) -> u32 + Sync),
    ) -> Vec<(u32, u32, u32)> {
        let usable = |b: &[u8]| id_of(b).filter(|&id| nodes[id as usize].made != NONE);
        let splits = |ids: &[u32]| {
            let mut found = Vec::new();
            for &t in ids {
                let bytes = bytes_of(t);
                if bytes.len() < 2 {
                    continue;
                }
                Kernels::scalar().trie_prefix_walk(trie, &bytes[..bytes.len() - 1], |k, x| {
                    if let Some(y) = usable(&bytes[k as usize..]) {
                        let p = priority(x, y, bytes);
                        if p != NONE {
                            found.push((x, y, p));
                        }
                    }
                });
            }
            found
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let per = ids.len().div_ceil(threads).max(1024);
        std::thread::scope(|scope| {
            let parts: Vec<_> = ids
                .chunks(per)
                .map(|ids| scope.spawn(move || splits(ids)))
                .collect();
            parts
                .into_iter()
                .flat_map(|p| p.join().unwrap_or_default())
                .collect()
        })
    }

    /// How token `t` (of `bytes`, two or more) was made, from its usable shorter tokens, or
    /// [`UNUSABLE`].
    fn split(
        nodes: &[Node],
        t: u32,
        bytes: &[u8],
        id_of: &impl Fn(&[u8]) -> Option<u32>,
        priority: &impl Fn(u32, u32, &[u8]) -> u32,
        made: &impl Fn(u32, u32, u32) -> u32,
    ) -> Node {
        let usable = |b: &[u8]| id_of(b).filter(|&id| nodes[id as usize].made != NONE);
        for k in 1..bytes.len() {
            let Some(y) = usable(&bytes[k..]) else {
                continue;
            };
            let Some(x) = usable(&bytes[..k]) else {
                continue;
            };
            let p = made(x, y, t);
            // Monotone: `t`'s merge (`made` = p + 1) after both parts' last merges.
            if p == NONE || p < nodes[x as usize].made.max(nodes[y as usize].made) {
                continue;
            }
            if Self::no_merge_before(nodes, x, y, bytes, k, priority) {
                return Node {
                    left: x,
                    right: y,
                    made: p + 1,
                    len: bytes.len() as u32,
                };
            }
        }
        UNUSABLE
    }

    /// Whether BPE on `bytes` (`a`'s bytes up to `boundary`, `b`'s from there) never merges across
    /// the boundary before `a` and `b` are both whole: the walk back from `(a, b)`, without the
    /// final pair.
    #[inline(always)]
    fn no_merge_before(
        nodes: &[Node],
        mut a: u32,
        mut b: u32,
        bytes: &[u8],
        boundary: usize,
        mut priority: impl FnMut(u32, u32, &[u8]) -> u32,
    ) -> bool {
        loop {
            let (x, y) = (nodes[a as usize], nodes[b as usize]);
            let limit = if x.made > y.made {
                a = x.right;
                x.made
            } else if y.made != 0 {
                b = y.left;
                y.made + 1
            } else {
                return true;
            };
            let (la, lb) = (
                nodes[a as usize].len as usize,
                nodes[b as usize].len as usize,
            );
            let p = priority(a, b, &bytes[boundary - la..boundary + lb]);
            if p != NONE && p + 1 < limit {
                return false;
            }
        }
    }

    /// Whether token `a` ending at `boundary` of `piece` and token `b` starting there are
    /// compatible.
    #[inline(always)]
    fn compatible(&self, a: PieceToken, b: PieceToken, piece: &[u8], boundary: usize) -> bool {
        self.priorities.get(a.id, b.id) == NONE
            && Self::no_merge_before(&self.nodes, a.id, b.id, piece, boundary, |x, y, _| {
                self.priorities.get(x, y)
            })
    }

    /// The longest usable token at the start of `text`, with its length (`NONE` for none).
    #[inline(always)]
    fn longest_at(&self, kernels: &Kernels, text: &[u8]) -> PieceToken {
        let text = &text[..text.len().min(self.longest)];
        match kernels.trie_longest_prefix(&self.trie, text) {
            Some(m) => PieceToken {
                id: m.value,
                len: m.len,
            },
            None => NO_TOKEN,
        }
    }

    /// Appends the tokens of `piece` to `out` and returns `true`, or returns `false` (nothing
    /// appended) when its encoding needs a token that is not usable, or it is not of a shape
    /// the pairs are for (whose merges the priorities may not hold). `joinable(x, y)` is `false`
    /// only when no token holds byte `x` then byte `y` (no merge can cross a boundary there).
    pub fn encode(
        &self,
        kernels: &Kernels,
        piece: &[u8],
        scratch: &mut ValidScratch,
        out: &mut Vec<PieceToken>,
        joinable: impl Fn(u8, u8) -> bool,
    ) -> bool {
        if !(self.in_scope)(piece) {
            return false;
        }
        let n = piece.len();
        let ValidScratch {
            tokens,
            dead,
            compatible,
        } = scratch;
        compatible.claim(self.owner);
        tokens.clear();
        dead.clear();
        dead.resize(n / 64 + 1, 0);
        let is_dead = |dead: &[u64], p: usize| dead[p / 64] >> (p % 64) & 1 != 0;
        let mut pos = 0;
        let mut candidate = self.longest_at(kernels, piece);
        loop {
            if candidate.id != NONE {
                let end = pos + candidate.len as usize;
                let fits = !is_dead(dead, end)
                    && match tokens.last() {
                        None => true,
                        Some(before) => {
                            !joinable(piece[pos - 1], piece[pos])
                                || compatible
                                    .get(before.id, candidate.id, |_, _| {
                                        let yes = self.compatible(*before, candidate, piece, pos);
                                        (yes as u32, 0)
                                    })
                                    .0
                                    == 1
                        }
                    };
                if fits {
                    tokens.push(candidate);
                    pos = end;
                    if pos == n {
                        break;
                    }
                    candidate = self.longest_at(kernels, &piece[pos..]);
                } else {
                    candidate = self.shorter[candidate.id as usize];
                }
            } else {
                dead[pos / 64] |= 1 << (pos % 64);
                let Some(last) = tokens.pop() else {
                    return false;
                };
                pos -= last.len as usize;
                candidate = self.shorter[last.id as usize];
            }
        }
        out.extend_from_slice(tokens);
        true
    }

    /// Whether a piece (not a token) is best encoded here rather than by merging: one with two
    /// or more characters of three or four bytes (CJK, kana, hangul). Measured against merging
    /// on text never seen (`docs/benchmark-history.md`): DeepSeek V3's Chinese pieces 1.3–1.5×
    /// faster; on ASCII words merging is faster, on two-byte scripts (Cyrillic) neither
    /// clearly. One such character is not enough: a lone dash or ellipsis among other
    /// punctuation (`…)` in Russian text) merges in a few steps, and would otherwise make a text
    /// of another script pay the pairs' build (a tenth to a third of a second) for it.
    ///
    /// And only a piece [`ValidPairs::in_scope`]: in a piece such as `中文abc` (Chinese next to
    /// a Latin word, 2 % of the Chinese corpus's bytes), the ASCII letters would need tokens that
    /// are not built.
    #[inline]
    pub fn pays(piece: &[u8]) -> bool {
        piece.iter().filter(|&&b| b >= 0xE0).nth(1).is_some() && Self::in_scope(piece)
    }

    /// Whether a piece of ASCII punctuation, spaces and controls (a table's border, a ruled
    /// line, an indented row of symbols) is best encoded here, once the pairs are built for
    /// other pieces: one longer than a short merge's scan (16 bytes). Merging one of dozens of
    /// bytes and several runs (` |---------+--------+-----+----…`, 12 % of the Debian
    /// reference's Chinese bytes) costs hundreds of instructions a byte. It never starts the
    /// build: a text of another script (code with `####` rules) would pay it for a few lines.
    #[inline]
    pub fn pays_once_built(piece: &[u8]) -> bool {
        piece.len() > 16 && piece.iter().all(|&b| is_ascii_other(b))
    }

    /// Whether `piece` is best encoded here, and if so whether it may start the pairs' build:
    /// `Some(true)` for one that [`ValidPairs::pays`], `Some(false)` for one that
    /// [`ValidPairs::pays_once_built`], `None` for any other.
    #[inline]
    pub fn serves(piece: &[u8]) -> Option<bool> {
        if Self::pays(piece) {
            Some(true)
        } else {
            Self::pays_once_built(piece).then_some(false)
        }
    }

    /// Whether a model's pairs keep the token (or serve the piece) of `bytes`: one byte, no byte
    /// below `0x80` after the first, or ASCII without a letter or digit (the module
    /// documentation says why that is enough).
    #[inline]
    pub fn in_scope(bytes: &[u8]) -> bool {
        bytes.len() <= 1
            || bytes[1..].iter().all(|&b| b >= 0x80)
            || bytes.iter().all(|&b| is_ascii_other(b))
    }

    /// Whether `id` can be part of an encoding found here.
    pub fn usable(&self, id: u32) -> bool {
        self.nodes.get(id as usize).is_some_and(|n| n.made != NONE)
    }

    /// Bytes of memory held.
    pub fn memory_bytes(&self) -> usize {
        self.nodes.len() * std::mem::size_of::<Node>()
            + std::mem::size_of_val(&self.shorter[..])
            + self.trie.memory_bytes()
            + self.priorities.memory_bytes()
    }
}

/// A model's [`ValidPairs`], built the first time a piece asks (its build takes a few hundred
/// milliseconds, which a text without such pieces never pays).
#[derive(Debug, Default)]
pub struct LazyValidPairs(OnceLock<Option<ValidPairs>>);

impl LazyValidPairs {
    /// [`ValidPairs::encode`] of `piece`, building them first with `build` if they are not yet
    /// and `build_now` says so; `false` (nothing appended) when they are not built, or `build`
    /// could not make them.
    #[allow(clippy::too_many_arguments)] // `encode`'s, and the build
    #[inline]
    pub fn encode(
        &self,
        build_now: bool,
        build: impl FnOnce() -> Option<ValidPairs>,
        kernels: &Kernels,
        piece: &[u8],
        scratch: &mut ValidScratch,
        out: &mut Vec<PieceToken>,
        joinable: impl Fn(u8, u8) -> bool,
    ) -> bool {
        let valid = if build_now {
            self.0.get_or_init(build).as_ref()
        } else {
            self.0.get().and_then(Option::as_ref)
        };
        match valid {
            Some(valid) => valid.encode(kernels, piece, scratch, out, joinable),
            None => false,
        }
    }
}

/// An ASCII byte that is no letter or digit: punctuation, a space, a control.
#[inline]
fn is_ascii_other(b: u8) -> bool {
    b < 0x80 && !b.is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::test_text::TestText;
    use std::collections::HashMap;

    /// A vocabulary over a few letters and its priorities, with a naive BPE as the oracle.
    struct Toy {
        tokens: Vec<Option<Box<[u8]>>>,
        ids: HashMap<Vec<u8>, u32>,
        /// By pair of ids (a merges list) …
        pairs: HashMap<(u32, u32), u32>,
        /// … or, when `None`, the rank of the joined bytes (a rank table).
        by_rank: bool,
    }

    impl Toy {
        fn priority(&self, a: u32, b: u32, joined: &[u8]) -> u32 {
            if self.by_rank {
                self.ids.get(joined).copied().unwrap_or(NONE)
            } else {
                self.pairs.get(&(a, b)).copied().unwrap_or(NONE)
            }
        }

        /// BPE by the book: the lowest priority among neighbours, the leftmost of equals.
        fn naive(&self, piece: &[u8]) -> Vec<u32> {
            let mut parts: Vec<(u32, usize, usize)> = (0..piece.len())
                .map(|i| (self.ids[&piece[i..i + 1]], i, i + 1))
                .collect();
            loop {
                let mut best = (NONE, 0);
                for i in 0..parts.len().saturating_sub(1) {
                    let (a, s, _) = parts[i];
                    let (b, _, e) = parts[i + 1];
                    let p = self.priority(a, b, &piece[s..e]);
                    if p < best.0 {
                        best = (p, i);
                    }
                }
                if best.0 == NONE {
                    return parts.iter().map(|p| p.0).collect();
                }
                let i = best.1;
                let (s, e) = (parts[i].1, parts[i + 1].2);
                parts[i] = (self.ids[&piece[s..e]], s, e);
                parts.remove(i + 1);
            }
        }

        fn valid(&self, in_scope: fn(&[u8]) -> bool) -> ValidPairs {
            let joined = |x: u32, y: u32| {
                let bytes = |id: u32| self.tokens[id as usize].as_deref().unwrap_or_default();
                [bytes(x), bytes(y)].concat()
            };
            ValidPairs::new(
                &self.tokens,
                in_scope,
                |b| self.ids.get(b).copied(),
                |a, b, j| self.priority(a, b, j),
                |x, y, _| self.priority(x, y, &joined(x, y)),
            )
            .unwrap()
        }

        fn from_tokens(list: Vec<Vec<u8>>, pairs: HashMap<(u32, u32), u32>, by_rank: bool) -> Toy {
            let ids = list.iter().cloned().zip(0..).collect();
            let tokens = list
                .into_iter()
                .map(|t| Some(t.into_boxed_slice()))
                .collect();
            Toy {
                tokens,
                ids,
                pairs,
                by_rank,
            }
        }
    }

    const LETTERS: &[u8] = b"abc";

    /// A merges list grown from `a b c`, each merge of two tokens made so far, inserted at a
    /// random place in the list when `shuffled` (tokens that merge out of order, pairs listed
    /// twice, tokens their bytes never make).
    fn merges_list(g: &mut TestText, merges: usize, shuffled: bool) -> Toy {
        let mut list: Vec<Vec<u8>> = LETTERS.iter().map(|&c| vec![c]).collect();
        let mut order: Vec<(u32, u32)> = Vec::new();
        for _ in 0..merges {
            let a = g.below(list.len() as u32);
            let b = g.below(list.len() as u32);
            let joined = [&list[a as usize][..], &list[b as usize][..]].concat();
            if joined.len() > 8 {
                continue;
            }
            if !list.contains(&joined) {
                list.push(joined);
            }
            let at = if shuffled {
                g.below(order.len() as u32 + 1) as usize
            } else {
                order.len()
            };
            order.insert(at, (a, b));
        }
        // A pair listed twice keeps its last place, as in the models.
        let pairs = order.iter().zip(0..).map(|(&k, r)| (k, r)).collect();
        Toy::from_tokens(list, pairs, false)
    }

    /// A rank table: the letters and random strings of them, ranked in a random order when
    /// `shuffled`, else by length (then in the order drawn).
    fn rank_table(g: &mut TestText, strings: usize, shuffled: bool) -> Toy {
        let mut list: Vec<Vec<u8>> = LETTERS.iter().map(|&c| vec![c]).collect();
        for _ in 0..strings {
            let len = 2 + g.below(5) as usize;
            let s: Vec<u8> = (0..len).map(|_| LETTERS[g.below(3) as usize]).collect();
            if !list.contains(&s) {
                list.push(s);
            }
        }
        if shuffled {
            for i in (1..list.len()).rev() {
                list.swap(i, g.below(i as u32 + 1) as usize);
            }
        } else {
            list.sort_by_key(|t| t.len());
        }
        Toy::from_tokens(list, HashMap::new(), true)
    }

    /// Every piece found is the naive BPE's; returns how many of `pieces` were found.
    fn check(toy: &Toy, g: &mut TestText, pieces: usize) -> usize {
        check_in_scope(toy, g, pieces, |_| true)
    }

    /// [`check`] of pairs built over the tokens `in_scope` keeps.
    fn check_in_scope(
        toy: &Toy,
        g: &mut TestText,
        pieces: usize,
        in_scope: fn(&[u8]) -> bool,
    ) -> usize {
        let valid = toy.valid(in_scope);
        for (id, t) in toy.tokens.iter().enumerate() {
            if valid.usable(id as u32) {
                assert_eq!(
                    toy.naive(t.as_deref().unwrap()),
                    [id as u32],
                    "usable {t:?}"
                );
            }
        }
        let mut scratch = ValidScratch::default();
        (0..pieces)
            .filter(|_| {
                let piece = random_piece(g, 40);
                encode_and_check(toy, &valid, &piece, &mut scratch)
            })
            .count()
    }

    /// A piece of 1 to `most` of the toys' letters.
    fn random_piece(g: &mut TestText, most: u32) -> Vec<u8> {
        let len = 1 + g.below(most) as usize;
        (0..len).map(|_| LETTERS[g.below(3) as usize]).collect()
    }

    /// Encodes `piece` with `valid` (over `toy`'s priorities) and checks the result against the
    /// naive BPE: found exactly when the piece is in the pairs' scope and every token of the
    /// encoding is usable (the search is complete over usable tokens), and then right. Whether
    /// it was found.
    fn encode_and_check(
        toy: &Toy,
        valid: &ValidPairs,
        piece: &[u8],
        scratch: &mut ValidScratch,
    ) -> bool {
        let mut out = Vec::new();
        let ok = valid.encode(Kernels::scalar(), piece, scratch, &mut out, |_, _| true);
        let want = toy.naive(piece);
        let findable = (valid.in_scope)(piece) && want.iter().all(|&id| valid.usable(id));
        assert_eq!(ok, findable, "{:?}", String::from_utf8_lossy(piece));
        if ok {
            let ids: Vec<u32> = out.iter().map(|t| t.id).collect();
            assert_eq!(ids, want, "{:?}", String::from_utf8_lossy(piece));
            assert_eq!(
                out.iter().map(|t| t.len as usize).sum::<usize>(),
                piece.len()
            );
        } else {
            assert!(out.is_empty());
        }
        ok
    }

    #[test]
    fn merges_lists_in_order_are_mostly_found() {
        let mut g = TestText::new(0x5EED_0001);
        let (mut found, mut all) = (0, 0);
        for round in 0..60 {
            let toy = merges_list(&mut g, 4 + round % 30, false);
            found += check(&toy, &mut g, 300);
            all += 300;
        }
        // Unusable tokens are those a later merge of an earlier pair makes unreachable.
        assert!(found * 10 > all * 9, "{found} of {all}");
    }

    #[test]
    fn shuffled_merges_lists_are_exact_or_refused() {
        let mut g = TestText::new(0x5EED_0002);
        let (mut found, mut all) = (0, 0);
        for round in 0..300 {
            let toy = merges_list(&mut g, 4 + round % 40, true);
            found += check(&toy, &mut g, 200);
            all += 200;
        }
        // Most are still found: the refusals are the pieces that need an unusable token.
        assert!(found * 2 > all, "{found} of {all}");
    }

    #[test]
    fn rank_tables_are_exact_or_refused() {
        let mut g = TestText::new(0x5EED_0003);
        for shuffled in [false, true] {
            let (mut found, mut all) = (0, 0);
            for round in 0..300 {
                let toy = rank_table(&mut g, 3 + round % 40, shuffled);
                found += check(&toy, &mut g, 200);
                all += 200;
            }
            assert!(found * 4 > all, "shuffled {shuffled}: {found} of {all}");
        }
    }

    #[test]
    fn one_scratch_serves_models_in_turn() {
        // Two vocabularies over the same letters, and the same ids for other tokens: a pair's
        // compatibility under one must never answer for the other through the shared memo.
        let mut g = TestText::new(0x5EED_0005);
        let toys = [
            merges_list(&mut g, 24, false),
            merges_list(&mut g, 24, true),
        ];
        let valid = [toys[0].valid(|_| true), toys[1].valid(|_| true)];
        let mut scratch = ValidScratch::default();
        for round in 0..4000 {
            let piece = random_piece(&mut g, 24);
            encode_and_check(&toys[round % 2], &valid[round % 2], &piece, &mut scratch);
        }
    }

    /// No `c` after the first byte: closed under the splits, like [`ValidPairs::in_scope`].
    fn no_c_after_first(b: &[u8]) -> bool {
        b.len() <= 1 || !b[1..].contains(&b'c')
    }

    #[test]
    fn pairs_in_a_scope_are_exact_and_keep_every_usable_token_of_it() {
        let mut g = TestText::new(0x5EED_0004);
        for round in 0..200 {
            let toy = if round % 2 == 0 {
                merges_list(&mut g, 4 + round % 40, round % 4 == 0)
            } else {
                rank_table(&mut g, 3 + round % 40, round % 3 == 0)
            };
            // Exact or refused, and refused only when a token is out of scope or unusable.
            check_in_scope(&toy, &mut g, 100, no_c_after_first);
            // A scope closed under the splits loses no usable token of its own.
            let (all, scoped) = (toy.valid(|_| true), toy.valid(no_c_after_first));
            for (id, t) in toy.tokens.iter().enumerate() {
                let id = id as u32;
                let want = all.usable(id) && no_c_after_first(t.as_deref().unwrap());
                assert_eq!(scoped.usable(id), want, "{t:?}");
            }
        }
    }

    #[test]
    fn long_ascii_pieces_without_letters_or_digits_pay_once_built() {
        assert!(ValidPairs::pays_once_built(b" |---------+--------+-----+"));
        assert!(ValidPairs::pays_once_built(b"=================="));
        assert!(ValidPairs::pays_once_built(
            b"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
        ));
        assert!(
            !ValidPairs::pays_once_built(b"----------------"),
            "16 bytes merge by a scan"
        );
        assert!(
            !ValidPairs::pays_once_built(b"-------- x --------"),
            "a letter"
        );
        assert!(
            !ValidPairs::pays_once_built(b"+-------1-------+"),
            "a digit"
        );
        assert!(
            !ValidPairs::pays_once_built("--------—--------".as_bytes()),
            "not ASCII"
        );
        // Only CJK pieces may start the build.
        assert_eq!(ValidPairs::serves("日本".as_bytes()), Some(true));
        assert_eq!(ValidPairs::serves(b" |---------+--------+"), Some(false));
        assert_eq!(ValidPairs::serves(b"Reorganization"), None);
        // … and their tokens are in scope, as are CJK ones, but not a mix of the two shapes.
        assert!(ValidPairs::in_scope(b"----") && ValidPairs::in_scope(b" |"));
        assert!(ValidPairs::in_scope(" 日本".as_bytes()));
        assert!(!ValidPairs::in_scope(b"ab") && !ValidPairs::in_scope(b"-a"));
        assert!(ValidPairs::in_scope("-日".as_bytes()), "one byte, then CJK");
        assert!(!ValidPairs::in_scope("日-".as_bytes()), "CJK, then ASCII");
    }

    #[test]
    fn pieces_with_two_wide_characters_pay() {
        assert!(ValidPairs::pays("日本".as_bytes()));
        assert!(ValidPairs::pays("한국어".as_bytes()));
        assert!(
            ValidPairs::pays("Привет日本".as_bytes()),
            "anywhere in the piece"
        );
        assert!(ValidPairs::pays("—…".as_bytes()));
        assert!(
            ValidPairs::pays("🙂🙂".as_bytes()),
            "four-byte characters count"
        );
        assert!(!ValidPairs::pays("…)".as_bytes()), "one wide character");
        assert!(!ValidPairs::pays("日a".as_bytes()));
        assert!(
            !ValidPairs::pays("Превосходительство".as_bytes()),
            "two-byte letters"
        );
        assert!(!ValidPairs::pays(b"Reorganization"));
        assert!(ValidPairs::pays(" 日本".as_bytes()), "a leading space");
        assert!(
            !ValidPairs::pays("日本abc".as_bytes()),
            "ASCII after the first byte"
        );
        assert!(!ValidPairs::pays("日本\n".as_bytes()));
    }
}
