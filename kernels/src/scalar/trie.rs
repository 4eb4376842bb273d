//! Double-array walks, one unit load per byte.

use crate::spec::double_array::{DoubleArray, TrieMatch, WalkFrom, unit};

/// Calls `on_match(length, value)` for every key of the array that is a prefix of `key`,
/// shortest first. Returns how many bytes of `key` the walk read: up to and including the first
/// that leaves the trie, else all of them. What it found depends on those bytes alone, so any
/// key that starts with them finds the same (a caller may reuse the matches).
///
/// Mirrors darts-clone's `commonPrefixSearch`, with bounds checks so that a malformed array ends
/// the walk instead of reading out of bounds.
#[inline(always)]
pub fn walk(units: &[u32], key: &[u8], on_match: impl FnMut(u32, u32)) -> usize {
    walk_from(units, unit::offset(units[0]) as usize, key, on_match)
}

/// [`walk`] from the base `pos` of a node's children instead of the root's: matches' lengths
/// and the bytes read count from the start of `key`.
#[inline(always)]
fn walk_from(
    units: &[u32],
    mut pos: usize,
    key: &[u8],
    mut on_match: impl FnMut(u32, u32),
) -> usize {
    for (i, &c) in key.iter().enumerate() {
        pos ^= c as usize;
        let Some(&u) = units.get(pos) else {
            return i + 1;
        };
        if unit::label(u) != c as u32 {
            return i + 1;
        }
        pos ^= unit::offset(u) as usize;
        if unit::has_leaf(u) {
            let Some(&v) = units.get(pos) else {
                return i + 1;
            };
            on_match(i as u32 + 1, unit::value(v));
        }
    }
    key.len()
}

/// [`walk`] for arrays known to be compact ([`DoubleArray::is_compact`]): no bounds checks and
/// no scaled offsets, which is most of a step's work. Returns what [`walk`] returns.
#[inline(always)]
pub fn walk_compact(da: &DoubleArray, key: &[u8], on_match: impl FnMut(u32, u32)) -> usize {
    debug_assert!(da.is_compact());
    // Offsets below 2^21 are stored unscaled: `unit >> 10` is the offset.
    // SAFETY (of the call): the root's base, in a compact array, lies in an allocated block.
    unsafe { walk_compact_from(da, (da.units()[0] >> 10) as usize, key, on_match) }
}

/// [`walk_compact`] from the base `pos` of a node's children.
///
/// # Safety
/// `da` is compact and `pos` is below `da.units().len()`.
#[inline(always)]
unsafe fn walk_compact_from(
    da: &DoubleArray,
    mut pos: usize,
    key: &[u8],
    mut on_match: impl FnMut(u32, u32),
) -> usize {
    debug_assert!(da.is_compact() && pos < da.units().len());
    let units = da.units();
    for (i, &c) in key.iter().enumerate() {
        pos ^= c as usize;
        // SAFETY: a compact array is whole 256-unit blocks, and XOR with a byte keeps `pos` in
        // its block: on the first step `pos` was below the length (the caller's promise), on
        // later ones it is a matched node's base, which the builder takes from an allocated
        // block (`DoubleArray::is_compact`).
        let u = unsafe { *units.get_unchecked(pos) };
        if unit::label(u) != c as u32 {
            return i + 1;
        }
        pos ^= (u >> 10) as usize;
        if unit::has_leaf(u) {
            // SAFETY: `pos` is now this node's base, which lies in an allocated block.
            let v = unsafe { *units.get_unchecked(pos) };
            on_match(i as u32 + 1, unit::value(v));
        }
    }
    key.len()
}

/// The walk that suits `da`: [`walk_compact`] when it is compact, else the checked [`walk`].
#[inline(always)]
pub fn walk_any(da: &DoubleArray, key: &[u8], on_match: impl FnMut(u32, u32)) -> usize {
    if da.is_compact() {
        walk_compact(da, key, on_match)
    } else {
        walk(da.units(), key, on_match)
    }
}

/// [`walk_any`] resumed at `from` (a node of `da`, [`DoubleArray::walk_from`]): matches'
/// lengths and the bytes read count from the start of `key`. A `from` that is out of `da`'s
/// bounds (taken from another trie) reads as a walk that leaves at once: one byte read.
#[inline(always)]
pub fn walk_any_from(
    da: &DoubleArray,
    from: WalkFrom,
    key: &[u8],
    on_match: impl FnMut(u32, u32),
) -> usize {
    let pos = from.0 as usize;
    if pos >= da.units().len() {
        return key.len().min(1);
    }
    if da.is_compact() {
        // SAFETY: compact, and `pos` is in bounds (checked above).
        unsafe { walk_compact_from(da, pos, key, on_match) }
    } else {
        walk_from(da.units(), pos, key, on_match)
    }
}

/// The longest key of `da` that is a prefix of `key`, if any. The walk loads a leaf's value
/// only for the last leaf it passed (one load where [`walk_any`] makes one per match: a value
/// lives in another block of the array than its node, so each is a cache miss in a large trie).
#[inline(always)]
pub fn longest_prefix(da: &DoubleArray, key: &[u8]) -> Option<TrieMatch> {
    let units = da.units();
    let mut pos = unit::offset(units[0]) as usize;
    // The base of the last node a key ended at, and the key's length.
    let mut leaf = None;
    if da.is_compact() {
        for (i, &c) in key.iter().enumerate() {
            pos ^= c as usize;
            // SAFETY: as in `walk_compact_from`: a compact array is whole 256-unit blocks, the
            // root's base and every matched node's base lie in allocated blocks, and XOR with a
            // byte keeps `pos` in its block.
            let u = unsafe { *units.get_unchecked(pos) };
            if unit::label(u) != c as u32 {
                break;
            }
            pos ^= (u >> 10) as usize;
            if unit::has_leaf(u) {
                leaf = Some((pos, i as u32 + 1));
            }
        }
    } else {
        for (i, &c) in key.iter().enumerate() {
            pos ^= c as usize;
            let Some(&u) = units.get(pos) else { break };
            if unit::label(u) != c as u32 {
                break;
            }
            pos ^= unit::offset(u) as usize;
            if unit::has_leaf(u) {
                leaf = Some((pos, i as u32 + 1));
            }
        }
    }
    let (at, len) = leaf?;
    // A leaf's value unit is at its node's base: in bounds in a compact array (the base lies in
    // an allocated block), checked otherwise.
    let &v = units.get(at)?;
    Some(TrieMatch {
        len,
        value: unit::value(v),
    })
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
        walk_any(da, &text[start as usize..], |len, value| {
            if let Some(m) = slot.get_mut(count) {
                *m = TrieMatch { len, value };
            }
            count += 1;
        });
        counts[i] = count as u32;
    }
}
