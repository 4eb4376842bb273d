//! Double-array walks, one unit load per byte.

use crate::spec::double_array::{DoubleArray, TrieMatch, unit};

/// Calls `on_match(length, value)` for every key of the array that is a prefix of `key`,
/// shortest first.
///
/// Mirrors darts-clone's `commonPrefixSearch`, with bounds checks so that a malformed array ends
/// the walk instead of reading out of bounds.
#[inline(always)]
pub fn walk(units: &[u32], key: &[u8], mut on_match: impl FnMut(u32, u32)) {
    let mut pos = unit::offset(units[0]) as usize;
    for (i, &c) in key.iter().enumerate() {
        pos ^= c as usize;
        let Some(&u) = units.get(pos) else { break };
        if unit::label(u) != c as u32 {
            break;
        }
        pos ^= unit::offset(u) as usize;
        if unit::has_leaf(u) {
            let Some(&v) = units.get(pos) else { break };
            on_match(i as u32 + 1, unit::value(v));
        }
    }
}

/// Appends to `out` every key of `da` that is a prefix of `key`, shortest first; returns how many.
pub fn prefix_search(da: &DoubleArray, key: &[u8], out: &mut Vec<TrieMatch>) -> usize {
    let before = out.len();
    walk(da.units(), key, |len, value| {
        out.push(TrieMatch { len, value })
    });
    out.len() - before
}

/// For each `starts[i]`, the prefix search of `text[starts[i]..]`: `counts[i]` gets the number
/// of matches, and the first `stride` of them go to `matches[i * stride..]`.
///
/// Preconditions (checked by [`crate::Kernels::trie_prefix_search_batch`]): every start is at
/// most `text.len()`, `counts.len() == starts.len()` and `matches.len() == starts.len() * stride`.
pub fn prefix_search_batch(
    da: &DoubleArray,
    text: &[u8],
    starts: &[u32],
    stride: usize,
    counts: &mut [u32],
    matches: &mut [TrieMatch],
) {
    for (i, &start) in starts.iter().enumerate() {
        let slot = &mut matches[i * stride..(i + 1) * stride];
        let mut count = 0usize;
        walk(da.units(), &text[start as usize..], |len, value| {
            if let Some(m) = slot.get_mut(count) {
                *m = TrieMatch { len, value };
            }
            count += 1;
        });
        counts[i] = count as u32;
    }
}
