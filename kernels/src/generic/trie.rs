//! Batched double-array walks without vector gathers: several independent walks interleaved, one
//! step each in turn, so the CPU overlaps their unit loads (the walk itself is a chain of
//! dependent loads, which a single walk cannot overlap). Portable code: the SSE4.2 and NEON
//! tiers, which have no gather instruction, use it for the batched search.

use crate::spec::double_array::{DoubleArray, TrieMatch, unit};

/// How many walks are in flight at once.
const LANES: usize = 8;
const IDLE: usize = usize::MAX;

/// Same contract as [`crate::scalar::trie::prefix_search_batch`].
#[inline(always)]
pub(crate) fn prefix_search_batch_interleaved(
    da: &DoubleArray,
    text: &[u8],
    starts: &[u32],
    stride: usize,
    counts: &mut [u32],
    matches: &mut [TrieMatch],
) {
    let units = da.units();
    let root = unit::offset(units[0]) as usize;
    // Per lane: which start it walks (IDLE = none), next text position, node base, matches.
    let mut which = [IDLE; LANES];
    let mut at = [0usize; LANES];
    let mut node = [0usize; LANES];
    let mut found = [0usize; LANES];
    let mut next = 0usize;
    let mut live = 0usize;
    for l in 0..LANES {
        if next < starts.len() {
            (which[l], at[l], node[l], found[l]) = (next, starts[next] as usize, root, 0);
            next += 1;
            live += 1;
        }
    }
    while live > 0 {
        for l in 0..LANES {
            let i = which[l];
            if i == IDLE {
                continue;
            }
            let stopped = 'step: {
                let Some(&c) = text.get(at[l]) else {
                    break 'step true;
                };
                let pos = node[l] ^ c as usize;
                let Some(&u) = units.get(pos) else {
                    break 'step true;
                };
                if unit::label(u) != c as u32 {
                    break 'step true;
                }
                let base = pos ^ unit::offset(u) as usize;
                at[l] += 1;
                node[l] = base;
                if unit::has_leaf(u) {
                    let Some(&v) = units.get(base) else {
                        break 'step true;
                    };
                    if found[l] < stride {
                        matches[i * stride + found[l]] = TrieMatch {
                            len: (at[l] - starts[i] as usize) as u32,
                            value: unit::value(v),
                        };
                    }
                    found[l] += 1;
                }
                false
            };
            if stopped {
                counts[i] = found[l] as u32;
                if next < starts.len() {
                    (which[l], at[l], node[l], found[l]) = (next, starts[next] as usize, root, 0);
                    next += 1;
                } else {
                    which[l] = IDLE;
                    live -= 1;
                }
            }
        }
    }
}
