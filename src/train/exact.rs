//! The exact optimal BPE merge sequence on tiny inputs (Zouhar et al., "A Formal Perspective on
//! Byte-Pair Encoding", ACL Findings 2023, § 5): a memoized depth-first search over merge
//! sequences, the simple greedy it is compared with, and a brute-force enumeration that checks
//! it (tests only).
//!
//! # Definitions
//!
//! - A *corpus* is a list of words, `&[(Vec<u32>, u64)]`: each word is a list of symbol ids with
//!   the word's count. The *alphabet* is `0..alphabet_len` (an id at or above `alphabet_len` in
//!   the input widens it to the largest id + 1, so that new ids never collide with input ids).
//! - A *merge* `(a, b)` creates a new symbol, whose id is the next free one (`alphabet_len` for
//!   the first merge, then one more for each merge, even if its string were an existing symbol's:
//!   a symbol is its merge tree), and replaces every occurrence of `a` followed by `b` in every
//!   word, left to right and without overlap (`aaa` with `(a, a)` becomes `[aa, a]`), as the
//!   greedy trainer ([`super::greedy`]) applies merges.
//! - The *compression utility* of a merge sequence is Σ over the words of count × (initial
//!   length − length after applying the sequence in order). Sums are 128-bit inside; a utility
//!   that does not fit a `u64` is reported as `u64::MAX` (the merges chosen are still exact).
//! - The *optimal* sequence of at most M merges has the largest utility. Only merges of pairs
//!   that occur in the current corpus are considered: a merge of an absent pair changes nothing
//!   and only wastes a slot, so some optimal sequence never makes one. Words with count 0 and
//!   words of fewer than two symbols are dropped first (they can contribute nothing), and equal
//!   words are counted once with their counts added; then every merge of a present pair gains at
//!   least 1, so an optimal sequence stops early only when every word is a single symbol.
//! - *Ties*: of the optimal sequences, the one returned is the lexicographically smallest list of
//!   merges compared by their `(left, right)` ids, with new ids numbered in order (a sequence
//!   comes before its own extensions). [`brute_force`] returns the same sequence.
//! - The *greedy* sequence ([`greedy`]): at each step the pair with the largest count, ties to
//!   the smallest `(left id, right id)`, until M merges or no pair has a count ≥ 1. The count
//!   follows [`Counting`]: under `Windows` every adjacent pair counts (`aaa` holds two
//!   `(a, a)`); under `NonOverlapping` a run of k equal symbols holds ⌊k/2⌋ pairs `(x, x)`,
//!   which is exactly the number of merges applying the pair does, so that greedy takes the
//!   largest immediate utility. It recounts every pair after each merge (a pass and a sort a
//!   step: tiny inputs only); the fast trainer ([`super::greedy`]) breaks ties by the same rule.
//!   The one difference: when a merge spells a string that is already a token, the fast trainer
//!   reuses that token's id, while here every merge makes a new symbol.
//!
//! # The search
//!
//! best(S, k), the largest utility k more merges can add to the segmentation S, is 0 when k = 0
//! or no pair occurs, and otherwise the maximum over the pairs p present in S of gain(p) +
//! best(S·p, k − 1), where gain(p) is what applying p to S saves (its non-overlapping count)
//! and S·p the result. The search evaluates it depth first and keeps what it learns for k ≥ 2
//! in a memo keyed by the state and k (for k = 1 the value is the largest gain, computed where
//! needed and not kept: those states are the most numerous and the cheapest).
//!
//! *The state is canonical.* best(S, k) depends only on which positions hold equal symbols, the
//! word boundaries and the counts, never on the symbols' names: a renaming σ (a bijection of
//! symbols) maps the pairs present in S onto those present in σ(S), with the same gains, and
//! σ(S)·σ(p) = σ(S·p), so by induction on k, best(σ(S), k) = best(S, k). The search therefore
//! holds each state with its symbols renamed 0, 1, 2, … in order of first appearance (the words
//! in a fixed order, separated by a marker), one byte a symbol. This identifies two merge orders
//! that end in the same segmentation with differently numbered new symbols, and also states
//! that differ only in which symbols they spell, not in their pattern (in the word `abcd`,
//! `ab|c|d` after `(a, b)` and `a|b|cd` after `(c, d)` are one state). (Keying symbols by the
//! strings they spell would also need an argument that two different symbols never spell the
//! same string; the renaming needs none.)
//!
//! *Commuting merges* are what the memo saves (the paper's point): when two merges p and q touch
//! disjoint occurrences (no symbol of one pair is in the other, or their occurrences never
//! overlap), S·p·q = S·q·p, so of the two orders only the first one explored is searched; the
//! second costs one application and one look-up. A cheaper rule that forbids the second order
//! outright (q after p only when q > p, for commuting p and q) was not added: under it the value
//! of a state depends on the merge that led to it (which merges are still allowed), so the memo
//! would need that merge in its key and would share fewer states, while it already collapses
//! the two orders one step later.
//!
//! *A bound prunes the search (branch and bound).* Every boundary between two adjacent symbols
//! of S is removed by at most one later merge, and a later merge (X, Y) removes boundaries of one
//! pair (u, v) of S only: u is the last symbol of S inside X and v the first inside Y (a symbol
//! is made of the same symbols of S wherever it occurs). Two boundaries it removes are never
//! adjacent (the symbol of S between them would end X in one occurrence and start Y in the
//! next, and a merge's occurrences never overlap), so it removes at most gain(u, v) of them,
//! counts weighing (⌊k/2⌋ in a run of k equal symbols; for u ≠ v no two boundaries of (u, v)
//! are adjacent).
//! So the merges after S can add at most the sum of the k largest *items*, where each pair
//! (u, v) gives the item gain(u, v) and, for u = v, a second item windows(u, u) − gain(u, u) (no
//! larger than the first): any j merges on (u, v) remove at most min(j · gain, windows) of its
//! boundaries, which is what its items give. After merging p, the same holds with p's first item
//! removed (p used it up). The children are tried by decreasing gain, along which that bound
//! only falls, and the loop stops at the first child whose bound cannot beat the best found.
//! Each call also carries a threshold `need`: the caller needs the value only if it is at least
//! `need` (a child need only be exact when it could beat its siblings' best, and the root need
//! only beat the greedy sequence's utility, a lower bound). Below it, a call may return any upper
//! bound under `need`, and the memo records it as such (“at most v”), to be recomputed only when
//! a later call needs more. Every value that reaches the result is exact. The bound is checked
//! against brute force in the tests; on a sentence of 33 to 40 bytes with 7 or 8 merges it cuts
//! the states from 2 to 9 million to 75 to 4,200 (`docs/bpe-exact.md`).
//!
//! The optimal value is found first; then the sequence is rebuilt from the start, in real ids:
//! at each step, of the present pairs in `(left, right)` order, the first whose gain plus the
//! best value after it equals what is left — which yields the lexicographically smallest optimal
//! sequence.
//!
//! # Limits
//!
//! The number of states grows about as (distinct pairs)^M / M!, so the search refuses inputs
//! beyond [`Limits`] with an [`ExactError`] that names the limit, and gives up (with an error,
//! never silently) after `max_states` state evaluations. See `docs/bpe-exact.md` for measured
//! costs.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use super::Counting;

/// The most symbols the search can hold: a state keeps one byte a symbol, and byte 255 separates
/// words (254 is the new symbol before renaming).
const SYMBOLS_CAP: usize = 250;

/// The most merges the search can make (the merges left are one byte of the memo key).
const MERGES_CAP: usize = 255;

/// The word separator in a canonical state.
const SEP: u8 = 255;

/// The new symbol of a merge, before the state is renamed.
const FRESH: u8 = 254;

/// What the exact search accepts; an input beyond them is refused with an [`ExactError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The most symbols in the corpus: the total length of its distinct words of two or more
    /// symbols (with a nonzero count). At most 250 (a larger value acts as 250).
    pub max_symbols: usize,
    /// The most merges (after capping the number asked for at what the input can take: each
    /// merge shortens the corpus by at least one symbol). At most 255.
    pub max_merges: usize,
    /// The most state evaluations (memo misses) before the search gives up; the memo holds at
    /// most this many entries (about 100 bytes each).
    pub max_states: usize,
}

impl Default for Limits {
    /// 64 symbols, 8 merges, 1 million states. On sentences of 55 to 64 bytes, 8 merges take
    /// under 30,000 states (0.07 s in a release build); the budget stops the hard inputs (some
    /// random strings over many letters) after about 3 s, with the memo under 100 MB
    /// (`docs/bpe-exact.md` has the measurements).
    fn default() -> Self {
        Limits {
            max_symbols: 64,
            max_merges: 8,
            max_states: 1_000_000,
        }
    }
}

/// A merge sequence and its compression utility.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outcome {
    /// The merges in order, as (left id, right id); the i-th merge's new symbol has id
    /// alphabet + i.
    pub merges: Vec<(u32, u32)>,
    /// Σ over words of count × (initial length − final length); `u64::MAX` if it does not fit.
    pub utility: u64,
}

/// The optimal sequence next to the greedy one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// The optimal sequence ([`optimal`]).
    pub optimal: Outcome,
    /// The greedy sequence ([`greedy`]) with the counting asked for.
    pub greedy: Outcome,
    /// How many state evaluations the exact search made (each time it counted a state's pairs:
    /// memo misses, states known only by a bound that a later call needed exactly, and the
    /// maximum-gain evaluations for the last merge); `max_states` counts the same.
    pub states_visited: usize,
}

/// Why the exact search refused an input or gave up.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExactError {
    /// The corpus is too long.
    #[error(
        "the exact search handles at most {limit} symbols and {max_merges} merges: this input \
         has {found} symbols (in its distinct words of two or more symbols)"
    )]
    TooManySymbols {
        /// The limit.
        limit: usize,
        /// The input's symbols.
        found: usize,
        /// The merge limit (for the message).
        max_merges: usize,
    },
    /// Too many merges were asked for.
    #[error(
        "the exact search handles at most {limit} merges: {asked} were asked for and this input \
         can take {possible}"
    )]
    TooManyMerges {
        /// The limit.
        limit: usize,
        /// The merges asked for.
        asked: usize,
        /// The most merges the input can take (its symbols less its distinct words).
        possible: usize,
    },
    /// The search visited its limit of states without finishing.
    #[error(
        "the exact search gave up after {limit} states (its limit) without finishing: ask for \
         fewer merges or give a shorter input"
    )]
    TooManyStates {
        /// The limit.
        limit: usize,
    },
}

/// The input with the useless words dropped and equal words counted once.
struct Corpus {
    /// Distinct words of two or more symbols with a nonzero count, in sorted order.
    words: Vec<(Vec<u32>, u128)>,
    /// The first new id.
    first_new: u64,
    /// The most merges there is room for: ids left and the corpus' symbols less its words.
    possible: usize,
    /// The total length of `words`.
    symbols: usize,
}

impl Corpus {
    fn new(words: &[(Vec<u32>, u64)], alphabet_len: u32) -> Corpus {
        let widest = words.iter().flat_map(|(w, _)| w.iter()).max();
        let first_new = (alphabet_len as u64).max(widest.map_or(0, |&m| m as u64 + 1));
        let mut distinct: BTreeMap<&[u32], u128> = BTreeMap::new();
        for (w, n) in words {
            if *n > 0 && w.len() >= 2 {
                let c = distinct.entry(w).or_insert(0);
                *c = c.saturating_add(*n as u128);
            }
        }
        let words: Vec<(Vec<u32>, u128)> =
            distinct.into_iter().map(|(w, n)| (w.to_vec(), n)).collect();
        let symbols = words.iter().map(|(w, _)| w.len()).sum::<usize>();
        let ids_left = (1u64 << 32) - first_new;
        let possible = (symbols - words.len()).min(usize::try_from(ids_left).unwrap_or(usize::MAX));
        Corpus {
            words,
            first_new,
            possible,
            symbols,
        }
    }

    fn counts(&self) -> Vec<u128> {
        self.words.iter().map(|&(_, n)| n).collect()
    }
}

fn saturate(u: u128) -> u64 {
    u64::try_from(u).unwrap_or(u64::MAX)
}

/// Applies `(x, y)` → `z` to `w`, left to right without overlap, into `out`.
fn apply_word<T: Copy + Eq>(w: &[T], x: T, y: T, z: T, out: &mut Vec<T>) {
    let mut i = 0;
    while i < w.len() {
        if i + 1 < w.len() && w[i] == x && w[i + 1] == y {
            out.push(z);
            i += 2;
        } else {
            out.push(w[i]);
            i += 1;
        }
    }
}

/// The pairs of `words` with their counts, sorted by pair: under `NonOverlapping` the gain of
/// merging each (what the search needs), under `Windows` every adjacent pair.
fn pair_counts<'a, T: Copy + Ord + 'a>(
    words: impl Iterator<Item = (&'a [T], u128)>,
    counting: Counting,
) -> Vec<((T, T), u128)> {
    let mut occ: Vec<((T, T), u128)> = Vec::new();
    for (w, n) in words {
        // Under NonOverlapping, a pair (x, x) right after a counted (x, x) overlaps it and is
        // not counted: a run of k then counts ⌊k/2⌋.
        let mut after_counted_run = false;
        for p in w.windows(2) {
            let (x, y) = (p[0], p[1]);
            if x == y && counting == Counting::NonOverlapping {
                after_counted_run = !after_counted_run;
                if !after_counted_run {
                    continue;
                }
            } else {
                after_counted_run = false;
            }
            occ.push(((x, y), n));
        }
    }
    occ.sort_unstable_by_key(|a| a.0);
    let mut out: Vec<((T, T), u128)> = Vec::with_capacity(occ.len());
    for (p, n) in occ {
        match out.last_mut() {
            Some((q, m)) if *q == p => *m = m.saturating_add(n),
            _ => out.push((p, n)),
        }
    }
    out
}

/// A fast hash for the memo's byte strings (FxHash's step, then murmur3's finalizer so that the
/// low bits hashbrown indexes with are mixed).
#[derive(Default, Clone, Copy)]
struct KeyHasher(u64);

const K: u64 = 0x517c_c1b7_2722_0a95;

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(b)).wrapping_mul(K);
        }
        let mut tail = 0u64;
        for (i, &b) in chunks.remainder().iter().enumerate() {
            tail |= (b as u64) << (8 * i);
        }
        self.0 = (h.rotate_left(5) ^ tail).wrapping_mul(K);
    }

    fn finish(&self) -> u64 {
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// Renames the symbols of `state` 0, 1, 2, … in order of first appearance (the separator
/// stays).
fn rename(state: &mut [u8]) {
    let mut names = [u8::MAX; 256];
    let mut next = 0u8;
    for s in state.iter_mut() {
        if *s == SEP {
            continue;
        }
        if names[*s as usize] == u8::MAX {
            names[*s as usize] = next;
            next += 1;
        }
        *s = names[*s as usize];
    }
}

/// The canonical state of words held in real ids (at most [`SYMBOLS_CAP`] symbols).
fn canonical<W: AsRef<[u32]>>(words: &[W]) -> Vec<u8> {
    let mut names: HashMap<u32, u8> = HashMap::new();
    let mut state = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            state.push(SEP);
        }
        for &s in w.as_ref() {
            let next = names.len() as u8;
            state.push(*names.entry(s).or_insert(next));
        }
    }
    state
}

/// A pair of a canonical state: its gain (what merging it saves) and its windows count.
#[derive(Clone, Copy)]
struct Pair {
    x: u8,
    y: u8,
    gain: u128,
    windows: u128,
}

/// The pairs of a canonical state, sorted by pair.
fn state_pairs(state: &[u8], counts: &[u128]) -> Vec<Pair> {
    let mut occ: Vec<Pair> = Vec::with_capacity(state.len());
    for (w, &n) in state.split(|&s| s == SEP).zip(counts) {
        let mut after_counted_run = false;
        for p in w.windows(2) {
            let (x, y) = (p[0], p[1]);
            let mut gain = n;
            if x == y {
                after_counted_run = !after_counted_run;
                if !after_counted_run {
                    gain = 0;
                }
            } else {
                after_counted_run = false;
            }
            occ.push(Pair {
                x,
                y,
                gain,
                windows: n,
            });
        }
    }
    occ.sort_unstable_by_key(|p| (p.x, p.y));
    let mut out: Vec<Pair> = Vec::with_capacity(occ.len());
    for p in occ {
        match out.last_mut() {
            Some(q) if (q.x, q.y) == (p.x, p.y) => {
                q.gain = q.gain.saturating_add(p.gain);
                q.windows = q.windows.saturating_add(p.windows);
            }
            _ => out.push(p),
        }
    }
    out
}

/// The bound's items, largest first: each pair's gain, and for a pair `(x, x)` also what its
/// windows count exceeds its gain by (see [`Search::best`]).
fn bound_items(pairs: &[Pair]) -> Vec<u128> {
    let mut items: Vec<u128> = Vec::with_capacity(pairs.len() + 4);
    for p in pairs {
        items.push(p.gain);
        if p.windows > p.gain {
            items.push(p.windows - p.gain);
        }
    }
    items.sort_unstable_by(|a, b| b.cmp(a));
    items
}

/// A memo entry: the value of a state, or a bound on it.
#[derive(Clone, Copy)]
struct Known {
    value: u128,
    /// Whether `value` is the value; otherwise the value is at most `value`.
    exact: bool,
}

/// The memoized search.
struct Search<'a> {
    counts: &'a [u128],
    memo: HashMap<Box<[u8]>, Known, BuildHasherDefault<KeyHasher>>,
    visited: usize,
    max_states: usize,
    /// Whether the bound prunes (off only in tests, which measure what it saves).
    prune: bool,
}

impl Search<'_> {
    /// best(state, k) when it is at least `need`; otherwise some v < `need` that it does not
    /// exceed (see the module doc).
    fn best(&mut self, state: &[u8], k: usize, need: u128) -> Result<u128, ExactError> {
        if k == 0 {
            return Ok(0);
        }
        let need = if self.prune { need } else { 0 };
        let mut key = Vec::new();
        if k >= 2 {
            key.reserve_exact(state.len() + 1);
            key.extend_from_slice(state);
            key.push(k as u8);
            if let Some(known) = self.memo.get(key.as_slice())
                && (known.exact || known.value < need)
            {
                return Ok(known.value);
            }
        }
        if self.visited >= self.max_states {
            return Err(ExactError::TooManyStates {
                limit: self.max_states,
            });
        }
        self.visited += 1;
        let mut pairs = state_pairs(state, self.counts);
        if k == 1 {
            return Ok(pairs.iter().map(|p| p.gain).max().unwrap_or(0));
        }
        let items = bound_items(&pairs);
        // Sums of the largest items: the bound on k merges and on k - 1.
        let top = |j: usize| -> u128 {
            items
                .iter()
                .take(j)
                .copied()
                .fold(0u128, u128::saturating_add)
        };
        let (top_k, top_k1) = if self.prune {
            (top(k), top(k - 1))
        } else {
            (u128::MAX, u128::MAX)
        };
        if top_k < need {
            return Ok(top_k);
        }
        let kth1 = items.get(k - 2).copied().unwrap_or(0);
        // The largest gains first (the bound below only falls along this order).
        pairs.sort_unstable_by(|a, b| b.gain.cmp(&a.gain).then((a.x, a.y).cmp(&(b.x, b.y))));
        let mut best = 0u128;
        let mut high = 0u128;
        let mut child = Vec::with_capacity(state.len());
        for p in &pairs {
            // The most k - 1 more merges can add after this one: the largest items but this
            // pair's gain, which this merge uses up.
            let bound = if p.gain >= kth1 {
                top_k
            } else {
                p.gain.saturating_add(top_k1)
            };
            if bound <= best || bound < need {
                high = high.max(bound);
                break;
            }
            child.clear();
            apply_word(state, p.x, p.y, FRESH, &mut child);
            rename(&mut child);
            let child_need = need.max(best.saturating_add(1)).saturating_sub(p.gain);
            let v = self.best(&child, k - 1, child_need)?;
            let total = p.gain.saturating_add(v);
            if v >= child_need {
                best = best.max(total);
            } else {
                high = high.max(total);
            }
        }
        let known = if best >= need {
            Known {
                value: best,
                exact: true,
            }
        } else {
            Known {
                value: best.max(high),
                exact: false,
            }
        };
        self.memo.insert(key.into_boxed_slice(), known);
        Ok(known.value)
    }
}

/// Applies `(x, y)` → `z` to every word.
fn apply_all(words: &[Vec<u32>], x: u32, y: u32, z: u32) -> Vec<Vec<u32>> {
    words
        .iter()
        .map(|w| {
            let mut out = Vec::with_capacity(w.len());
            apply_word(w, x, y, z, &mut out);
            out
        })
        .collect()
}

/// The utility of the segmentation `now` of `corpus`.
fn utility_of(corpus: &Corpus, now: &[Vec<u32>]) -> u128 {
    corpus
        .words
        .iter()
        .zip(now)
        .map(|((w, n), v)| n.saturating_mul((w.len() - v.len()) as u128))
        .fold(0u128, u128::saturating_add)
}

/// The optimal sequence and the states the search visited.
fn search(corpus: &Corpus, merges: usize, limits: &Limits) -> Result<(Outcome, usize), ExactError> {
    search_with(corpus, merges, limits, true)
}

/// [`search`], with or without the bound.
fn search_with(
    corpus: &Corpus,
    merges: usize,
    limits: &Limits,
    prune: bool,
) -> Result<(Outcome, usize), ExactError> {
    let max_symbols = limits.max_symbols.min(SYMBOLS_CAP);
    let max_merges = limits.max_merges.min(MERGES_CAP);
    if corpus.symbols > max_symbols {
        return Err(ExactError::TooManySymbols {
            limit: max_symbols,
            found: corpus.symbols,
            max_merges,
        });
    }
    let m = merges.min(corpus.possible);
    if m > max_merges {
        return Err(ExactError::TooManyMerges {
            limit: max_merges,
            asked: merges,
            possible: corpus.possible,
        });
    }
    let counts = corpus.counts();
    let mut search = Search {
        counts: &counts,
        memo: HashMap::default(),
        visited: 0,
        max_states: limits.max_states,
        prune,
    };
    let mut now: Vec<Vec<u32>> = corpus.words.iter().map(|(w, _)| w.clone()).collect();
    // The greedy sequence's utility is a lower bound: the search need only find the value
    // when it is at least that (which it is).
    let floor = greedy_on(corpus, m, Counting::NonOverlapping).1;
    let mut left = search.best(&canonical(&now), m, floor)?;
    let mut out = Vec::new();
    // Rebuild the lexicographically smallest optimal sequence in real ids.
    for step in 0..m {
        if left == 0 {
            break;
        }
        let z = (corpus.first_new + step as u64) as u32;
        let pairs = pair_counts(
            now.iter().map(|w| w.as_slice()).zip(counts.iter().copied()),
            Counting::NonOverlapping,
        );
        let mut chosen = None;
        for ((x, y), g) in pairs {
            let Some(need) = left.checked_sub(g) else {
                continue;
            };
            let next = apply_all(&now, x, y, z);
            // At most `need` (`left` is the best); exactly `need` if this merge is optimal.
            if search.best(&canonical(&next), m - step - 1, need)? >= need {
                chosen = Some(((x, y), g, next));
                break;
            }
        }
        // Some pair always attains the value just computed; stopping is the safe fallback.
        let Some(((x, y), g, next)) = chosen else {
            break;
        };
        out.push((x, y));
        left -= g;
        now = next;
    }
    let outcome = Outcome {
        merges: out,
        utility: saturate(utility_of(corpus, &now)),
    };
    Ok((outcome, search.visited))
}

/// The optimal sequence of at most `merges` merges of `words` (see the module doc for the
/// definitions and the tie rule), or an error when the input is beyond `limits`.
pub fn optimal(
    words: &[(Vec<u32>, u64)],
    alphabet_len: u32,
    merges: usize,
    limits: &Limits,
) -> Result<Outcome, ExactError> {
    search(&Corpus::new(words, alphabet_len), merges, limits).map(|(o, _)| o)
}

/// The greedy sequence of at most `merges` merges: the pair with the largest count (per
/// `counting`) at each step, ties to the smallest (left id, right id), until no pair has a count
/// of at least 1. Recounts everything after each merge: for tiny inputs.
pub fn greedy(
    words: &[(Vec<u32>, u64)],
    alphabet_len: u32,
    merges: usize,
    counting: Counting,
) -> Outcome {
    let (merges, utility) = greedy_on(&Corpus::new(words, alphabet_len), merges, counting);
    Outcome {
        merges,
        utility: saturate(utility),
    }
}

/// [`greedy`] on a corpus: the merges and their utility.
fn greedy_on(corpus: &Corpus, merges: usize, counting: Counting) -> (Vec<(u32, u32)>, u128) {
    let counts = corpus.counts();
    let mut now: Vec<Vec<u32>> = corpus.words.iter().map(|(w, _)| w.clone()).collect();
    let mut out = Vec::new();
    for step in 0..merges.min(corpus.possible) {
        let pairs = pair_counts(
            now.iter().map(|w| w.as_slice()).zip(counts.iter().copied()),
            counting,
        );
        // The largest count; of equal counts, the first (smallest) pair.
        let mut top: Option<((u32, u32), u128)> = None;
        for (p, n) in pairs {
            if n >= 1 && top.is_none_or(|(_, m)| n > m) {
                top = Some((p, n));
            }
        }
        let Some(((x, y), _)) = top else {
            break;
        };
        now = apply_all(&now, x, y, (corpus.first_new + step as u64) as u32);
        out.push((x, y));
    }
    let utility = utility_of(corpus, &now);
    (out, utility)
}

/// [`optimal`] and [`greedy`] on the same input, with the states the search visited.
pub fn compare(
    words: &[(Vec<u32>, u64)],
    alphabet_len: u32,
    merges: usize,
    counting: Counting,
    limits: &Limits,
) -> Result<Comparison, ExactError> {
    let (optimal, states_visited) = search(&Corpus::new(words, alphabet_len), merges, limits)?;
    Ok(Comparison {
        optimal,
        greedy: greedy(words, alphabet_len, merges, counting),
        states_visited,
    })
}

/// Every sequence of at most `merges` merges of present pairs, without memo: the optimal
/// sequence (the same one [`optimal`] returns) and how many sequences were enumerated
/// (counting the empty one). Exponential in `merges`: for tests on tiny inputs.
#[doc(hidden)]
pub fn brute_force_counted(
    words: &[(Vec<u32>, u64)],
    alphabet_len: u32,
    merges: usize,
) -> (Outcome, u64) {
    struct Frame {
        now: Vec<Vec<u32>>,
        pairs: Vec<(u32, u32)>,
        next: usize,
    }
    let corpus = Corpus::new(words, alphabet_len);
    let counts = corpus.counts();
    let m = merges.min(corpus.possible);
    let pairs_of = |now: &[Vec<u32>]| -> Vec<(u32, u32)> {
        pair_counts(
            now.iter().map(|w| w.as_slice()).zip(counts.iter().copied()),
            Counting::Windows,
        )
        .into_iter()
        .map(|(p, _)| p)
        .collect()
    };
    let start: Vec<Vec<u32>> = corpus.words.iter().map(|(w, _)| w.clone()).collect();
    // An explicit stack (depth first, pairs in ascending order), so that no input overflows
    // the call stack; the path is the merges of the frames below the top.
    let mut stack = vec![Frame {
        pairs: if m > 0 { pairs_of(&start) } else { Vec::new() },
        now: start,
        next: 0,
    }];
    let mut path: Vec<(u32, u32)> = Vec::new();
    let mut best = (0u128, Vec::new());
    let mut sequences = 1u64;
    while let Some(top) = stack.last_mut() {
        let Some(&(x, y)) = top.pairs.get(top.next) else {
            stack.pop();
            path.pop();
            continue;
        };
        top.next += 1;
        let z = (corpus.first_new + path.len() as u64) as u32;
        let now = apply_all(&top.now, x, y, z);
        path.push((x, y));
        sequences = sequences.saturating_add(1);
        let u = utility_of(&corpus, &now);
        // Strictly greater: the first optimum met in this order is the smallest.
        if u > best.0 {
            best = (u, path.clone());
        }
        let pairs = if path.len() < m {
            pairs_of(&now)
        } else {
            Vec::new()
        };
        stack.push(Frame {
            now,
            pairs,
            next: 0,
        });
    }
    let outcome = Outcome {
        merges: best.1,
        utility: saturate(best.0),
    };
    (outcome, sequences)
}

/// [`brute_force_counted`] without the count.
#[doc(hidden)]
pub fn brute_force(words: &[(Vec<u32>, u64)], alphabet_len: u32, merges: usize) -> Outcome {
    brute_force_counted(words, alphabet_len, merges).0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(s: &[u32]) -> Vec<(Vec<u32>, u64)> {
        vec![(s.to_vec(), 1)]
    }

    #[test]
    fn runs_merge_without_overlap() {
        let mut out = Vec::new();
        apply_word(&[0u32, 0, 0], 0, 0, 1, &mut out);
        assert_eq!(out, [1, 0]);
        let words = [(vec![0u32, 0, 0, 0, 0], 1u128)];
        let w = || words.iter().map(|(w, n)| (w.as_slice(), *n));
        assert_eq!(pair_counts(w(), Counting::Windows), [((0, 0), 4)]);
        assert_eq!(pair_counts(w(), Counting::NonOverlapping), [((0, 0), 2)]);
    }

    #[test]
    fn renaming_is_by_first_appearance() {
        let mut s = vec![7, 3, SEP, 3, 9, 7];
        rename(&mut s);
        assert_eq!(s, [0, 1, SEP, 1, 2, 0]);
        assert_eq!(canonical(&[vec![70u32, 30], vec![30, 90, 70]]), s);
    }

    #[test]
    fn trivial_inputs() {
        let l = Limits::default();
        let none = Outcome::default();
        assert_eq!(optimal(&[], 0, 5, &l), Ok(none.clone()));
        assert_eq!(optimal(&word(&[0, 1, 0]), 2, 0, &l), Ok(none.clone()));
        assert_eq!(
            optimal(&[(vec![], 3), (vec![1], 9)], 2, 3, &l),
            Ok(none.clone())
        );
        assert_eq!(optimal(&[(vec![0, 1], 0)], 2, 3, &l), Ok(none.clone()));
        assert_eq!(greedy(&[], 0, 5, Counting::Windows), none);
        assert_eq!(brute_force(&[], 0, 5), none);
        // The whole word in one symbol stops the search early.
        let o = optimal(&word(&[0, 1, 2]), 3, 8, &l).unwrap();
        assert_eq!(o.merges, [(0, 1), (3, 2)]);
        assert_eq!(o.utility, 2);
    }

    #[test]
    fn ids_above_the_alphabet_widen_it() {
        let o = optimal(&word(&[5, 6, 5, 6]), 2, 2, &Limits::default()).unwrap();
        assert_eq!(o.merges, [(5, 6), (7, 7)]);
        assert_eq!(o.utility, 3);
    }

    #[test]
    fn no_room_for_ids_means_no_merges() {
        let w = word(&[u32::MAX, u32::MAX]);
        assert_eq!(optimal(&w, 0, 3, &Limits::default()).unwrap().utility, 0);
        assert_eq!(greedy(&w, 0, 3, Counting::Windows).utility, 0);
        let w = word(&[u32::MAX - 1, u32::MAX - 1, u32::MAX - 1, u32::MAX - 1]);
        let o = optimal(&w, 0, 3, &Limits::default()).unwrap();
        assert_eq!(o.merges, [(u32::MAX - 1, u32::MAX - 1)]);
        assert_eq!(o.utility, 2);
    }

    #[test]
    fn huge_counts_saturate() {
        let words = vec![(vec![0, 1, 0, 1], u64::MAX), (vec![1, 0, 1, 0], u64::MAX)];
        let o = optimal(&words, 2, 2, &Limits::default()).unwrap();
        assert_eq!(o.utility, u64::MAX);
        assert_eq!(brute_force(&words, 2, 2), o);
        assert_eq!(greedy(&words, 2, 2, Counting::Windows).utility, u64::MAX);
        // Equal words add up beyond u64.
        let words = vec![(vec![0, 0], u64::MAX), (vec![0, 0], u64::MAX)];
        assert_eq!(
            optimal(&words, 1, 1, &Limits::default()).unwrap().utility,
            u64::MAX
        );
    }

    #[test]
    fn greedy_counts_differ_on_runs() {
        // `aaaab ab c ab`: (a, a) counts 3 in windows, 2 non-overlapping; (a, b) counts 3.
        // Windows ties (a, a) with (a, b) and takes the smaller pair.
        let w = word(&[0, 0, 0, 0, 1, 0, 1, 2, 0, 1]);
        assert_eq!(greedy(&w, 3, 1, Counting::Windows).merges, [(0, 0)]);
        assert_eq!(greedy(&w, 3, 1, Counting::NonOverlapping).merges, [(0, 1)]);
    }

    /// The bound of [`Search::best`] (the sum of the k largest items) is never below the
    /// optimum, on random small corpora.
    #[test]
    fn the_bound_is_admissible() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for _ in 0..2000 {
            let alphabet = 1 + next(3) as u32;
            let words: Vec<(Vec<u32>, u64)> = (0..1 + next(3))
                .map(|_| {
                    let w = (0..next(10)).map(|_| next(alphabet as u64) as u32);
                    (w.collect(), 1 + next(4))
                })
                .collect();
            let corpus = Corpus::new(&words, alphabet);
            let now: Vec<&[u32]> = corpus.words.iter().map(|(w, _)| w.as_slice()).collect();
            let items = bound_items(&state_pairs(&canonical(&now), &corpus.counts()));
            for k in 1..=4 {
                let bound: u128 = items.iter().take(k).sum();
                let best = brute_force(&words, alphabet, k).utility as u128;
                assert!(bound >= best, "{words:?} {k}: bound {bound} < {best}");
            }
        }
    }

    /// The bound changes the states visited, never the result.
    #[test]
    fn pruning_changes_only_the_states() {
        let mut seed = 3u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let limits = Limits::default();
        let (mut with, mut without) = (0, 0);
        for _ in 0..1000 {
            let alphabet = 1 + next(6) as u32;
            let words: Vec<(Vec<u32>, u64)> = (0..1 + next(4))
                .map(|_| {
                    let w = (0..next(14)).map(|_| next(alphabet as u64) as u32);
                    (w.collect(), 1 + next(3))
                })
                .collect();
            let corpus = Corpus::new(&words, alphabet);
            let m = next(6) as usize;
            let a = search_with(&corpus, m, &limits, true).unwrap();
            let b = search_with(&corpus, m, &limits, false).unwrap();
            assert_eq!(a.0, b.0, "{words:?} {m}");
            with += a.1;
            without += b.1;
        }
        assert!(with < without, "{with} {without}");
    }

    /// Words whose pairs share no symbol: the memo alone (without the bound) already visits far
    /// fewer states than brute force enumerates sequences, since every order of the same merges
    /// ends in one state.
    #[test]
    fn memo_alone_visits_fewer_states_than_brute_force() {
        let words: Vec<(Vec<u32>, u64)> = (0..6u32).map(|i| (vec![2 * i, 2 * i + 1], 1)).collect();
        let corpus = Corpus::new(&words, 12);
        let (outcome, states) = search_with(&corpus, 4, &Limits::default(), false).unwrap();
        let (brute, sequences) = brute_force_counted(&words, 12, 4);
        assert_eq!(outcome, brute);
        // 1 + 6 + 30 + 120 + 360 sequences; the states are the subsets of merged words (of
        // sizes 0 to 2 with merges left) and the leaves evaluated under them.
        assert_eq!(sequences, 517);
        assert!(states * 5 < sequences as usize, "{states} states");
    }

    /// Prints what the bound saves on the sentences of `docs/bpe-exact.md`:
    /// `cargo test --release --lib train::exact -- --ignored --nocapture pruning_savings`.
    #[test]
    #[ignore]
    fn pruning_savings() {
        let limits = Limits {
            max_states: 50_000_000,
            ..Limits::default()
        };
        println!("| string | M | states with the bound | time | without | time |");
        println!("|---|---:|---:|---:|---:|---:|");
        for (s, m) in [
            ("Let there be light: and there was light.", 8),
            ("In the beginning God created the heaven", 7),
            ("parser = argparse.ArgumentParser(", 8),
        ] {
            let mut alphabet: Vec<u8> = s.bytes().collect();
            alphabet.sort_unstable();
            alphabet.dedup();
            let word: Vec<u32> = s
                .bytes()
                .filter_map(|b| alphabet.binary_search(&b).ok())
                .map(|i| i as u32)
                .collect();
            let corpus = Corpus::new(&[(word, 1)], alphabet.len() as u32);
            let mut cells = Vec::new();
            let mut results = Vec::new();
            for prune in [true, false] {
                let start = std::time::Instant::now();
                let (outcome, states) = search_with(&corpus, m, &limits, prune).unwrap();
                let seconds = start.elapsed().as_secs_f64();
                cells.push(format!("{states} | {seconds:.3} s"));
                results.push(outcome);
            }
            assert_eq!(results[0], results[1]);
            println!("| `{s}` | {m} | {} | {} |", cells[0], cells[1]);
        }
    }

    #[test]
    fn limits_are_reported() {
        let l = Limits {
            max_symbols: 4,
            max_merges: 2,
            max_states: 10,
        };
        let e = optimal(&word(&[0, 1, 0, 1, 0]), 2, 1, &l).unwrap_err();
        assert_eq!(
            e,
            ExactError::TooManySymbols {
                limit: 4,
                found: 5,
                max_merges: 2
            }
        );
        let e = optimal(&word(&[0, 1, 2, 3]), 4, 5, &l).unwrap_err();
        assert!(e.to_string().contains("at most 2 merges"), "{e}");
        // Asking beyond what the input can take is capped, not refused.
        assert!(optimal(&word(&[0, 1, 2]), 3, 5, &l).is_ok());
        let l = Limits {
            max_states: 3,
            ..Limits::default()
        };
        let e = optimal(&word(&[0, 1, 2, 3, 4, 5]), 6, 3, &l).unwrap_err();
        assert_eq!(e, ExactError::TooManyStates { limit: 3 });
    }
}
