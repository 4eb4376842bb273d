//! The greedy BPE trainer in O(N log M) (Zouhar et al.'s formulation), with the decisions of
//! Hugging Face `tokenizers`' `BpeTrainer` (0.23) reproduced one for one.
//!
//! The unique words are laid end to end as doubly linked lists of symbols (`sym`, `prev`,
//! `next`, indexed by position; a merged symbol keeps its left position, so positions stay in
//! text order). Each pair of adjacent symbols has a count, and each *entry* of a pair is a list
//! of the positions where the pair was created at one time: every position at the start, then,
//! after a merge, the positions where that merge made the pair anew. A max-queue holds the
//! entries by (count, then the smaller (left id, right id)) — a heap per count
//! (`count_queue`), in the order of one heap; a merge visits only the positions
//! of its entry and updates the counts of the pairs around each, so the whole run costs the
//! occurrences it touches, never a pass over the corpus.
//!
//! What makes the result the reference's, decision by decision:
//! - the heap is lazy as the reference's is: a popped entry whose count is stale is pushed back
//!   with the current count; training stops at the vocabulary size, when the heap is empty, or
//!   when the top count is below 1 or below `min_frequency`;
//! - ties between equal counts go to the smaller (left id, right id);
//! - ids: special tokens, then the alphabet in character order, then merged tokens in creation
//!   order; a merge whose string is already a token reuses that id (see below);
//! - a merge is applied left to right without overlap (`aaa` → `aa a`), and under
//!   [`Counting::Windows`] the counts change exactly as the reference's `Word::merge` reports
//!   it: for each merged occurrence, −1 to the pairs it breaks and +1 to the pairs it forms,
//!   the latter only when the two symbols cover fewer than `max_token_length` characters
//!   (compared strictly, as the reference does; the pairs of the first count are never
//!   checked). The merged pair's own count is left as it is, as the reference leaves it.
//!
//! Where the reference does something odd, it is reproduced, because the goal is its output:
//! when a merge makes a string that is already a token (`ab`+`c` after `a`+`bc`), its id is
//! reused, and the pairs that touch it may then have several entries; the reference merges a
//! pair, when one of its entries comes up, only in the words that entry lists (its `pos` set),
//! and leaves the pair's count as it was, so the pair can come up again and be merged a second
//! time in the other words. Here too: with one live entry (every pair made by a fresh token
//! has exactly one), all its positions are merged; with several, only those in the words of
//! the entry that came up.
//!
//! Counts are 64-bit (the reference adds word counts into an `i32`, which wraps on large
//! corpora; the only intended difference).
//!
//! [`Counting::NonOverlapping`] has no reference: the count of a pair is the number of merges
//! applying it would do (a run of k equal symbols holds ⌊k/2⌋ pairs `(x, x)`), recounted over
//! the stretch of each word around the merged occurrences (whole runs, so the recount is exact),
//! and a merge is applied wherever the pair occurs.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::collections::hash_map::Entry as MapEntry;

use simdtok_kernels::Kernels;

use crate::models::merges_bpe::PairHash;
use crate::models::vocab::Crc32cState;

use super::Counting;
use super::count_queue::{CountQueue, Counted};

/// No symbol (list ends), and the symbol of a position absorbed by a merge.
const NONE: u32 = u32::MAX;

/// The arena is compacted only when it holds at least this many dead positions.
const COMPACT_FROM: usize = 1 << 22;

/// What to train.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Stop when the vocabulary (special tokens, alphabet and merged tokens) has this many.
    pub vocab_size: usize,
    /// Stop when the most frequent pair is rarer than this.
    pub min_frequency: u64,
    /// A pair is formed by a merge only if its two symbols cover fewer characters than this.
    pub max_token_length: Option<usize>,
    /// How pairs are counted.
    pub counting: Counting,
}

/// A merge: the pair of ids and the id of the merged token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Merge {
    /// The left token's id.
    pub left: u32,
    /// The right token's id.
    pub right: u32,
    /// The merged token's id.
    pub merged: u32,
}

/// The tokens (strings, in id order) and the merges in the order they were made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Trained {
    /// Every token by id: special tokens, alphabet, merged tokens.
    pub tokens: Vec<String>,
    /// Every merge made, in order (a pair can appear twice; see the module doc).
    pub merges: Vec<Merge>,
}

/// Called after each merge with the number made so far.
pub type OnMerge<'a> = &'a mut dyn FnMut(usize);

/// One pair's state.
#[derive(Clone, Copy)]
struct PairState {
    left: u32,
    right: u32,
    count: i64,
    /// Entries not yet merged.
    live: u32,
    /// The newest entry of this pair (entries of one pair are chained by `Entry::older`).
    newest: u32,
}

/// The positions where a pair was created at one time.
#[derive(Clone, Copy)]
struct Entry {
    pair: u32,
    start: usize,
    len: usize,
    older: u32,
    live: bool,
}

/// A heap item: an entry with the count it had when pushed.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Item {
    count: u64,
    left: u32,
    right: u32,
    entry: u32,
    /// The entry's pair (in the padding): the pair's count is read as the entry is, not
    /// after it.
    pair: u32,
}

impl Ord for Item {
    fn cmp(&self, other: &Self) -> Ordering {
        // The largest count first, then the smallest pair; older entries of a pair first, so
        // the order never depends on anything but the merges made.
        self.count
            .cmp(&other.count)
            .then_with(|| (other.left, other.right).cmp(&(self.left, self.right)))
            .then_with(|| other.entry.cmp(&self.entry))
    }
}

impl Counted for Item {
    fn count(&self) -> u64 {
        self.count
    }
}

impl PartialOrd for Item {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The trainer's state.
struct Trainer {
    sym: Vec<u32>,
    prev: Vec<u32>,
    next: Vec<u32>,
    word_of: Vec<u32>,
    /// The id of the pair that starts at each position (its symbol and the next), or `NONE`
    /// where it was not looked up: the trainer is built, and under [`Counting::Windows`] a
    /// merge's count changes find the pairs it breaks, without a hash lookup. Kept up to date
    /// by `merge_windows` only: under `NonOverlapping` it is read only while building.
    pair_at: Vec<u32>,
    word_counts: Vec<u64>,
    /// Characters covered by each token.
    token_len: Vec<u32>,
    pair_ids: HashMap<u64, u32, PairHash>,
    pairs: Vec<PairState>,
    entries: Vec<Entry>,
    /// The entries' positions, end to end.
    arena: Vec<u32>,
    /// Positions of merged entries in `arena`.
    garbage: usize,
    heap: CountQueue<Item>,
    max_len: u64,
    counting: Counting,
    /// (pair, position) of the pairs a merge forms, gathered while it runs.
    formed: Vec<(u32, u32)>,
    /// Positions being merged (when they are gathered from several entries).
    gathered: Vec<u32>,
}

fn key(left: u32, right: u32) -> u64 {
    (left as u64) << 32 | right as u64
}

/// Trains on `words` (each a list of token ids of `initial`, with its count): `initial` holds the
/// special tokens and the alphabet, in id order, and the characters each covers (1 for the
/// alphabet).
pub fn train(
    initial: Vec<(String, u32)>,
    words: &[(Vec<u32>, u64)],
    settings: &Settings,
    on_merge: OnMerge<'_>,
) -> Trained {
    let symbols = words.iter().map(|(w, _)| w.len()).sum();
    let words = words.iter().map(|(w, n)| (w.iter().copied(), *n));
    train_words(initial, words, symbols, settings, on_merge)
}

/// [`train`] on words given one by one (so that they need not all be held as lists of ids
/// first); `symbols` is how many symbols they hold in all (an estimate does: it sizes the
/// arrays).
pub fn train_words<W: IntoIterator<Item = u32>>(
    initial: Vec<(String, u32)>,
    words: impl IntoIterator<Item = (W, u64)>,
    symbols: usize,
    settings: &Settings,
    on_merge: OnMerge<'_>,
) -> Trained {
    let (mut tokens, token_len): (Vec<String>, Vec<u32>) = initial.into_iter().unzip();
    // Room for every token training can make (a merge takes at least one symbol away), up to
    // the largest vocabularies in use: a huge `--vocab-size` reserves nothing it may not use.
    let room = settings.vocab_size.min(tokens.len() + symbols).min(1 << 18);
    tokens.reserve(room - tokens.len().min(room));
    // The CRC-32C kernel hashes a token in a few instructions (the same value on every tier);
    // the map's default SipHash was a twentieth of the merges' time.
    let kernels = Kernels::active().unwrap_or_else(|_| Kernels::scalar());
    let mut ids: HashMap<String, u32, Crc32cState> =
        HashMap::with_capacity_and_hasher(room, Crc32cState::new(kernels));
    ids.extend(
        tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32)),
    );
    let mut trainer = Trainer::new(words, symbols, token_len, settings);
    let mut merges = Vec::new();
    while tokens.len() < settings.vocab_size {
        let Some(&top) = trainer.heap.peek() else {
            break;
        };
        let entry = trainer.entries[top.entry as usize];
        if !entry.live {
            trainer.heap.pop();
            continue;
        }
        // The reference reads the count back as `i32 as u64`: a negative count (possible only
        // for a pair already merged) becomes huge and comes up at once, there and here.
        let current = trainer.pairs[top.pair as usize].count as u64;
        if top.count != current {
            // Pushed back with the current count: changed in place, it sinks (one pass down
            // the heap instead of a pop and a push).
            trainer.heap.replace_top(Item {
                count: current,
                ..top
            });
            continue;
        }
        trainer.heap.pop();
        if top.count < 1 || settings.min_frequency > top.count {
            break;
        }
        let (left, right) = (top.left, top.right);
        let (a, b) = (&tokens[left as usize], &tokens[right as usize]);
        let mut string = String::with_capacity(a.len() + b.len());
        string.push_str(a);
        string.push_str(b);
        let merged = match ids.entry(string) {
            MapEntry::Occupied(known) => *known.get(),
            MapEntry::Vacant(new) => {
                let id = tokens.len() as u32;
                tokens.push(new.key().clone());
                new.insert(id);
                let len = trainer.token_len[left as usize] + trainer.token_len[right as usize];
                trainer.token_len.push(len);
                id
            }
        };
        merges.push(Merge {
            left,
            right,
            merged,
        });
        trainer.merge(top.entry, merged);
        on_merge(merges.len());
    }
    Trained { tokens, merges }
}

impl Trainer {
    /// The trainer over `words` (their symbols and counts; `symbols`: how many symbols they
    /// hold in all, or an estimate).
    fn new<W: IntoIterator<Item = u32>>(
        words: impl IntoIterator<Item = (W, u64)>,
        symbols: usize,
        token_len: Vec<u32>,
        settings: &Settings,
    ) -> Trainer {
        let mut t = Trainer {
            sym: Vec::with_capacity(symbols),
            prev: Vec::with_capacity(symbols),
            next: Vec::with_capacity(symbols),
            word_of: Vec::with_capacity(symbols),
            pair_at: Vec::with_capacity(symbols),
            word_counts: Vec::new(),
            token_len,
            pair_ids: HashMap::default(),
            pairs: Vec::new(),
            entries: Vec::new(),
            arena: Vec::new(),
            garbage: 0,
            heap: CountQueue::new(),
            max_len: settings.max_token_length.map_or(u64::MAX, |l| l as u64),
            counting: settings.counting,
            formed: Vec::new(),
            gathered: Vec::new(),
        };
        // The symbols, linked, and the number of adjacencies of each pair.
        let mut adjacencies: Vec<usize> = Vec::new();
        for (w, (word, count)) in words.into_iter().enumerate() {
            let base = t.sym.len() as u32;
            for s in word {
                let pos = t.sym.len() as u32;
                t.sym.push(s);
                t.next.push(NONE);
                t.word_of.push(w as u32);
                t.pair_at.push(NONE);
                if pos == base {
                    t.prev.push(NONE);
                    continue;
                }
                t.prev.push(pos - 1);
                t.next[pos as usize - 1] = pos;
                let pair = t.pair(t.sym[pos as usize - 1], s) as usize;
                t.pair_at[pos as usize - 1] = pair as u32;
                if pair == adjacencies.len() {
                    adjacencies.push(0);
                }
                adjacencies[pair] += 1;
                if t.counting == Counting::Windows {
                    t.pairs[pair].count += count as i64;
                }
            }
            t.word_counts.push(count);
            let end = t.sym.len() as u32;
            if t.counting == Counting::NonOverlapping && end > base {
                t.recount(base, end - 1, count as i64);
            }
        }
        // One entry per pair with all its positions in text order: the positions are placed by
        // pair (a counting sort; no list of (pair, position) is ever held).
        adjacencies.resize(t.pairs.len(), 0);
        let mut starts = Vec::with_capacity(adjacencies.len());
        let mut total = 0;
        for &n in &adjacencies {
            starts.push(total);
            total += n;
        }
        t.arena = vec![0; total];
        let mut fill = starts.clone();
        for pos in 0..t.sym.len() {
            let next = t.next[pos];
            if next != NONE {
                let pair = t.pair_at[pos] as usize;
                t.arena[fill[pair]] = pos as u32;
                fill[pair] += 1;
            }
        }
        for (pair, (&start, &n)) in starts.iter().zip(&adjacencies).enumerate() {
            if n > 0 {
                t.add_entry(pair as u32, start, n);
            }
        }
        t
    }

    /// The id of pair (left, right), created with count 0 if new.
    fn pair(&mut self, left: u32, right: u32) -> u32 {
        let next_id = self.pairs.len() as u32;
        let id = *self.pair_ids.entry(key(left, right)).or_insert(next_id);
        if id == next_id {
            self.pairs.push(PairState {
                left,
                right,
                count: 0,
                live: 0,
                newest: NONE,
            });
        }
        id
    }

    /// Adds an entry for `pair` over `arena[start..start + len]` and pushes it, if the pair's
    /// count is positive (the reference pushes nothing otherwise).
    fn add_entry(&mut self, pair: u32, start: usize, len: usize) {
        let state = &mut self.pairs[pair as usize];
        if state.count <= 0 {
            return;
        }
        let id = self.entries.len() as u32;
        self.entries.push(Entry {
            pair,
            start,
            len,
            older: state.newest,
            live: true,
        });
        state.newest = id;
        state.live += 1;
        self.heap.push(Item {
            pair,
            count: state.count as u64,
            left: state.left,
            right: state.right,
            entry: id,
        });
    }

    /// Whether `pos` still starts an occurrence of (left, right).
    fn holds(&self, pos: u32, left: u32, right: u32) -> bool {
        let pos = pos as usize;
        if self.sym[pos] != left {
            return false;
        }
        let next = self.next[pos];
        next != NONE && self.sym[next as usize] == right
    }

    /// Whether a merge may form the pair (left, right) (the reference's length rule).
    fn formable(&self, left: u32, right: u32) -> bool {
        (self.token_len[left as usize] as u64 + self.token_len[right as usize] as u64)
            < self.max_len
    }

    /// Merges the pair of `entry` into `merged` where the entry says to.
    fn merge(&mut self, entry: u32, merged: u32) {
        let e = self.entries[entry as usize];
        let pair = self.pairs[e.pair as usize];
        self.formed.clear();
        let many = pair.live > 1;
        let positions = if many || self.counting == Counting::NonOverlapping {
            self.gather(entry);
            None
        } else {
            self.retire(entry);
            Some((e.start, e.len))
        };
        match self.counting {
            Counting::Windows => {
                let (start, len) = positions.unwrap_or((0, self.gathered.len()));
                for i in start..start + len {
                    let pos = match positions {
                        Some(_) => self.arena[i],
                        None => self.gathered[i],
                    };
                    if self.holds(pos, pair.left, pair.right) {
                        self.merge_windows(pos, pair.left, pair.right, merged);
                    }
                }
            }
            Counting::NonOverlapping => self.merge_non_overlapping(pair.left, pair.right, merged),
        }
        self.add_formed();
    }

    /// Gathers into `gathered`, in text order, the positions to merge for `entry` when they
    /// are not simply its own: under `Windows`, those of all live entries of the pair that lie
    /// in the words of `entry` (the reference's `pos` set), which stops being live; under
    /// `NonOverlapping`, those of every live entry, which all stop being live.
    fn gather(&mut self, entry: u32) {
        let e = self.entries[entry as usize];
        self.gathered.clear();
        let mut words: Vec<u32> = Vec::new();
        if self.counting == Counting::Windows {
            words = self.arena[e.start..e.start + e.len]
                .iter()
                .map(|&p| self.word_of[p as usize])
                .collect();
            words.sort_unstable();
            words.dedup();
        }
        let mut at = self.pairs[e.pair as usize].newest;
        while at != NONE {
            let other = self.entries[at as usize];
            if other.live {
                for &pos in &self.arena[other.start..other.start + other.len] {
                    let keep = self.counting == Counting::NonOverlapping
                        || words.binary_search(&self.word_of[pos as usize]).is_ok();
                    if keep {
                        self.gathered.push(pos);
                    }
                }
            }
            at = other.older;
        }
        self.gathered.sort_unstable();
        self.gathered.dedup();
        if self.counting == Counting::Windows {
            self.retire(entry);
        } else {
            let mut at = self.pairs[e.pair as usize].newest;
            while at != NONE {
                if self.entries[at as usize].live {
                    self.retire(at);
                }
                at = self.entries[at as usize].older;
            }
        }
    }

    /// Marks `entry` merged: its positions become garbage in the arena.
    fn retire(&mut self, entry: u32) {
        let e = &mut self.entries[entry as usize];
        e.live = false;
        self.pairs[e.pair as usize].live -= 1;
        self.garbage += e.len;
    }

    /// Moves the positions of the live entries to a new arena, when merged entries hold more
    /// than half of it (and enough to be worth a pass): the arena's memory stays within twice
    /// the live positions, and each position is moved O(1) times on average.
    fn compact(&mut self) {
        if self.garbage < COMPACT_FROM || self.garbage < self.arena.len() / 2 {
            return;
        }
        let mut arena = Vec::with_capacity(self.arena.len() - self.garbage);
        for e in self.entries.iter_mut().filter(|e| e.live) {
            let start = arena.len();
            arena.extend_from_slice(&self.arena[e.start..e.start + e.len]);
            e.start = start;
        }
        self.arena = arena;
        self.garbage = 0;
    }

    /// Adds `delta` occurrences' worth to the count of (left, right).
    fn bump(&mut self, left: u32, right: u32, delta: i64) -> u32 {
        let pair = self.pair(left, right);
        self.pairs[pair as usize].count += delta;
        pair
    }

    /// Replaces the symbols at `pos` and after it by `merged`; returns the position after.
    fn link(&mut self, pos: u32, merged: u32) -> u32 {
        let right = self.next[pos as usize];
        let after = self.next[right as usize];
        self.sym[pos as usize] = merged;
        self.next[pos as usize] = after;
        if after != NONE {
            self.prev[after as usize] = pos;
        }
        self.sym[right as usize] = NONE;
        after
    }

    /// One occurrence under `Windows`, with the reference's count changes.
    fn merge_windows(&mut self, pos: u32, left: u32, right: u32, merged: u32) {
        let count = self.word_counts[self.word_of[pos as usize] as usize] as i64;
        let before = self.prev[pos as usize];
        if before != NONE {
            let b = self.sym[before as usize];
            self.unbump_at(before, b, left, count);
            self.pair_at[before as usize] = if self.formable(b, merged) {
                let pair = self.bump(b, merged, count);
                self.formed.push((pair, before));
                pair
            } else {
                NONE
            };
        }
        let right_pos = self.next[pos as usize];
        let after = self.link(pos, merged);
        self.pair_at[pos as usize] = NONE;
        if after != NONE {
            let a = self.sym[after as usize];
            self.unbump_at(right_pos, right, a, count);
            if self.formable(merged, a) {
                let pair = self.bump(merged, a, count);
                self.formed.push((pair, pos));
                self.pair_at[pos as usize] = pair;
            }
        }
    }

    /// Takes `count` off the pair (left, right) that starts at `pos`: found through `pair_at`
    /// when it was recorded there, else looked up (and created, at a negative count, as the
    /// reference does for a pair that was never formed).
    #[inline]
    fn unbump_at(&mut self, pos: u32, left: u32, right: u32, count: i64) {
        match self.pair_at[pos as usize] {
            NONE => {
                self.bump(left, right, -count);
            }
            pair => {
                let state = &mut self.pairs[pair as usize];
                debug_assert_eq!((state.left, state.right), (left, right));
                state.count -= count;
            }
        }
    }

    /// Every occurrence in `gathered` under `NonOverlapping`: word by word, the stretches
    /// around the occurrences (whole runs of equal symbols at both ends) are counted out before
    /// and back in after.
    fn merge_non_overlapping(&mut self, left: u32, right: u32, merged: u32) {
        let gathered = std::mem::take(&mut self.gathered);
        let mut stretches: Vec<(u32, u32)> = Vec::new();
        let mut i = 0;
        while i < gathered.len() {
            let word = self.word_of[gathered[i] as usize];
            let mut j = i;
            while j < gathered.len() && self.word_of[gathered[j] as usize] == word {
                j += 1;
            }
            let count = self.word_counts[word as usize] as i64;
            // The stretches, from the state before: each from the start of the run before an
            // occurrence to the end of the run after it, overlapping ones joined.
            stretches.clear();
            for &pos in &gathered[i..j] {
                if !self.holds(pos, left, right) {
                    continue;
                }
                let right_pos = self.next[pos as usize];
                let joined = stretches.last().is_some_and(|&(_, end)| pos <= end);
                let start = if joined {
                    stretches.last().expect("joined").0
                } else {
                    let before = self.prev[pos as usize];
                    if before == NONE {
                        pos
                    } else {
                        let floor = stretches.last().map_or(0, |&(_, end)| end + 1);
                        self.run_start(before, floor)
                    }
                };
                let after = self.next[right_pos as usize];
                let end = if after == NONE {
                    right_pos
                } else {
                    let known = stretches.last().map_or(0, |&(_, end)| end);
                    if joined && after <= known {
                        known
                    } else {
                        self.run_end(after)
                    }
                };
                if joined || stretches.last().is_some_and(|&(_, e)| start <= e) {
                    let last = stretches.last_mut().expect("joined");
                    last.1 = last.1.max(end);
                } else {
                    stretches.push((start, end));
                }
            }
            for &(start, end) in &stretches {
                self.recount(start, end, -count);
            }
            for &pos in &gathered[i..j] {
                if !self.holds(pos, left, right) {
                    continue;
                }
                let after = self.link(pos, merged);
                let before = self.prev[pos as usize];
                if before != NONE {
                    let b = self.sym[before as usize];
                    if self.formable(b, merged) {
                        let pair = self.pair(b, merged);
                        self.formed.push((pair, before));
                    }
                }
                if after != NONE {
                    let a = self.sym[after as usize];
                    if self.formable(merged, a) {
                        let pair = self.pair(merged, a);
                        self.formed.push((pair, pos));
                    }
                }
            }
            for &(start, end) in &stretches {
                // `end` may have been absorbed when it was the right symbol of the last merge
                // (nothing after it): then the stretch runs to the end of the word.
                let end = if self.sym[end as usize] == NONE {
                    NONE
                } else {
                    end
                };
                self.recount(start, end, count);
            }
            i = j;
        }
        self.gathered = gathered;
    }

    /// The first position of the run of equal symbols that holds `pos`, not looking before
    /// `floor`.
    fn run_start(&self, mut pos: u32, floor: u32) -> u32 {
        let s = self.sym[pos as usize];
        loop {
            let before = self.prev[pos as usize];
            if before == NONE || before < floor || self.sym[before as usize] != s {
                return pos;
            }
            pos = before;
        }
    }

    /// The last position of the run of equal symbols that holds `pos`.
    fn run_end(&self, mut pos: u32) -> u32 {
        let s = self.sym[pos as usize];
        loop {
            let after = self.next[pos as usize];
            if after == NONE || self.sym[after as usize] != s {
                return pos;
            }
            pos = after;
        }
    }

    /// Adds `sign` × the non-overlapping pair counts of the symbols from `start` to `end`
    /// (`NONE`: to the end of the word): ⌊k/2⌋ for a run of k equal symbols, 1 for each
    /// boundary between runs, for the pairs a merge may form (and every pair of two alphabet
    /// symbols, which the first count always counts).
    fn recount(&mut self, start: u32, end: u32, sign: i64) {
        let mut pos = start;
        let mut run_symbol = self.sym[pos as usize];
        let mut run_len = 0i64;
        loop {
            let s = self.sym[pos as usize];
            if s == run_symbol {
                run_len += 1;
            } else {
                self.close_run(run_symbol, run_len, sign);
                if self.countable(run_symbol, s) {
                    self.bump(run_symbol, s, sign);
                }
                run_symbol = s;
                run_len = 1;
            }
            if pos == end {
                break;
            }
            let after = self.next[pos as usize];
            if after == NONE {
                break;
            }
            pos = after;
        }
        self.close_run(run_symbol, run_len, sign);
    }

    fn close_run(&mut self, symbol: u32, len: i64, sign: i64) {
        if len >= 2 && self.countable(symbol, symbol) {
            self.bump(symbol, symbol, sign * (len / 2));
        }
    }

    /// Whether (left, right) is counted under `NonOverlapping`.
    fn countable(&self, left: u32, right: u32) -> bool {
        (self.token_len[left as usize] == 1 && self.token_len[right as usize] == 1)
            || self.formable(left, right)
    }

    /// Turns the pairs formed by a merge into entries (one per pair, positions in text order).
    fn add_formed(&mut self) {
        if self.formed.is_empty() {
            return;
        }
        self.compact();
        let mut formed = std::mem::take(&mut self.formed);
        // Stable: the positions of one pair stay in the order they were formed (text order).
        formed.sort_by_key(|&(pair, _)| pair);
        let mut start = 0;
        while start < formed.len() {
            let pair = formed[start].0;
            let mut end = start;
            while end < formed.len() && formed[end].0 == pair {
                end += 1;
            }
            let at = self.arena.len();
            self.arena
                .extend(formed[start..end].iter().map(|&(_, pos)| pos));
            self.add_entry(pair, at, end - start);
            start = end;
        }
        formed.clear();
        self.formed = formed;
    }
}
