//! Per token: whether BPE, merging the token's own bytes, makes exactly that token.
//!
//! A piece that is a token is usually that token, but not by definition: BPE merges from the
//! bytes up, and a token no merge sequence reaches (or one whose bytes merge into other tokens
//! first) encodes as several. tiktoken takes a whole piece that is a token as that token, and
//! `tokenizers` does with `ignore_merges`; anything else — a merges-list model without it, or a
//! segment of a cut piece ([`crate::models::safe_cuts`]) — must merge. This remembers the answer
//! per id, learnt the first time it is asked, so that a known `yes` costs one byte load instead
//! of a merge sequence. One byte per id, shared by all threads: relaxed atomics suffice, as every
//! thread that computes an entry computes the same value.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::models::token::PieceToken;

const UNKNOWN: u8 = 0;
const YES: u8 = 1;
const NO: u8 = 2;

/// See the module documentation.
#[derive(Debug)]
pub struct SelfMerges(Box<[AtomicU8]>);

impl SelfMerges {
    /// Flags for ids `0..n`, all unknown.
    pub fn new(n: usize) -> SelfMerges {
        SelfMerges((0..n).map(|_| AtomicU8::new(UNKNOWN)).collect())
    }

    /// Whether token `id` merges into itself; `merges_to_itself` computes it the first time.
    #[inline]
    pub fn get(&self, id: u32, merges_to_itself: impl FnOnce() -> bool) -> bool {
        let flag = &self.0[id as usize];
        match flag.load(Ordering::Relaxed) {
            YES => true,
            NO => false,
            _ => {
                let yes = merges_to_itself();
                flag.store(if yes { YES } else { NO }, Ordering::Relaxed);
                yes
            }
        }
    }

    /// Calls `learn(id, scratch)` for every id now (it asks [`SelfMerges::get`] or
    /// [`SelfMerges::check`]), over up to four threads with a scratch each: on text never seen
    /// before, a first sight of a piece that is a token then costs no merge.
    pub fn learn_all<S: Default>(&self, learn: impl Fn(u32, &mut S) + Sync) {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let per = self.0.len().div_ceil(threads).max(1);
        let learn = &learn;
        std::thread::scope(|scope| {
            for start in (0..self.0.len()).step_by(per) {
                let end = (start + per).min(self.0.len());
                scope.spawn(move || {
                    let mut scratch = S::default();
                    for id in start..end {
                        learn(id as u32, &mut scratch);
                    }
                });
            }
        });
    }

    /// [`SelfMerges::get`], computed by `merge` (a model's merging from single bytes).
    #[inline]
    pub fn check<S>(
        &self,
        id: u32,
        bytes: &[u8],
        scratch: &mut S,
        merge: impl FnOnce(&[u8], &mut S, &mut Vec<PieceToken>),
    ) -> bool {
        self.get(id, || {
            let mut tokens = Vec::with_capacity(4);
            merge(bytes, scratch, &mut tokens);
            tokens.len() == 1 && tokens[0].id == id
        })
    }
}
