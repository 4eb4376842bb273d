//! One comparison per kernel: run it on the tier under test and on the reference (the naive
//! oracle for the scalar tier, the scalar tier for every SIMD tier) and describe any difference.

use simdtok_kernels::{ByteSet, Kernels, TrieBatch, TrieMatch, TrieNode, WalkFrom};

use crate::fixtures::{ClassFixture, PruneFixture, TrieFixture};
use crate::naive;

/// What a tier is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reference {
    /// The naive oracles (for the scalar tier).
    Naive,
    /// The scalar tier (for every SIMD tier).
    Scalar,
}

/// The tables one check may use.
#[derive(Clone, Copy)]
pub struct Tables<'a> {
    pub classes: &'a [ClassFixture],
    pub prunes: &'a [PruneFixture],
    pub tries: &'a [TrieFixture],
}

/// One call: tier under test, reference, tables, input, start position, and a running number
/// that rotates through the tables (so every table meets every kind of input).
pub type Check = fn(&Kernels, Reference, Tables, &[u8], usize, usize) -> Result<(), String>;

pub struct Kernel {
    pub name: &'static str,
    pub check: Check,
}

pub const KERNELS: &[Kernel] = &[
    Kernel {
        name: "classify",
        check: classify,
    },
    Kernel {
        name: "find_in",
        check: find_in,
    },
    Kernel {
        name: "find_not_in",
        check: find_not_in,
    },
    Kernel {
        name: "count_utf8_chars",
        check: count_utf8_chars,
    },
    Kernel {
        name: "ascii_prefix_len",
        check: ascii_prefix_len,
    },
    Kernel {
        name: "crc32c",
        check: crc32c,
    },
    Kernel {
        name: "prune_map",
        check: prune_map,
    },
    Kernel {
        name: "prune_find_nonzero",
        check: prune_find_nonzero,
    },
    Kernel {
        name: "trie_prefix_search",
        check: trie_prefix_search,
    },
    Kernel {
        name: "trie_prefix_search_batch",
        check: trie_prefix_search_batch,
    },
    Kernel {
        name: "escape_spaces",
        check: escape_spaces,
    },
];

/// The input, shortened, for failure messages.
fn show(input: &[u8]) -> String {
    let shown: Vec<String> = input.iter().take(160).map(|b| format!("{b:02x}")).collect();
    let more = if input.len() > 160 { " …" } else { "" };
    format!("input (len {}): [{}{}]", input.len(), shown.join(" "), more)
}

/// The first item and the rotating one.
fn pick<T>(items: &[T], variant: usize) -> impl Iterator<Item = &T> {
    let rotating = variant % items.len().max(1);
    items
        .iter()
        .take(1)
        .chain(items.get(rotating).filter(|_| rotating != 0))
}

fn compare<T: PartialEq + std::fmt::Debug>(
    what: String,
    got: T,
    want: T,
    input: &[u8],
) -> Result<(), String> {
    if got == want {
        Ok(())
    } else {
        Err(format!(
            "{what}: got {got:?}, want {want:?}; {}",
            show(input)
        ))
    }
}

fn classify(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    _from: usize,
    variant: usize,
) -> Result<(), String> {
    for c in pick(t.classes, variant) {
        let mut got = Vec::new();
        k.classify(&c.table, input, &mut got);
        let want = match r {
            Reference::Naive => naive::classify(&c.spec, c.keep, input),
            Reference::Scalar => {
                let mut w = Vec::new();
                Kernels::scalar().classify(&c.table, input, &mut w);
                w
            }
        };
        compare(format!("classify with {}", c.name), got, want, input)?;
    }
    Ok(())
}

fn find_either(
    negate: bool,
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    let call = |k: &Kernels, set: &ByteSet, from| {
        if negate {
            k.find_not_in(set, input, from)
        } else {
            k.find_in(set, input, from)
        }
    };
    for c in pick(t.classes, variant) {
        for (set, byte_set) in pick(&c.sets, variant / 7) {
            let set = *set;
            for start in [from, 0] {
                let got = call(k, byte_set, start);
                let want = match r {
                    Reference::Naive => naive::find(&c.spec, c.keep, set, input, start, negate),
                    Reference::Scalar => call(Kernels::scalar(), byte_set, start),
                };
                compare(
                    format!(
                        "find (negate={negate}) with {} set {set:?} from {start}",
                        c.name
                    ),
                    got,
                    want,
                    input,
                )?;
            }
        }
    }
    Ok(())
}

fn find_in(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    find_either(false, k, r, t, input, from, variant)
}

fn find_not_in(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    find_either(true, k, r, t, input, from, variant)
}

/// A counting kernel on the whole input and from `from`, against its naive oracle or scalar.
fn check_count(
    name: &str,
    k: &Kernels,
    r: Reference,
    input: &[u8],
    from: usize,
    naive: fn(&[u8]) -> usize,
    kernel: fn(&Kernels, &[u8]) -> usize,
) -> Result<(), String> {
    for part in [input, &input[from..]] {
        let want = match r {
            Reference::Naive => naive(part),
            Reference::Scalar => kernel(Kernels::scalar(), part),
        };
        compare(name.into(), kernel(k, part), want, part)?;
    }
    Ok(())
}

fn count_utf8_chars(
    k: &Kernels,
    r: Reference,
    _t: Tables,
    input: &[u8],
    from: usize,
    _variant: usize,
) -> Result<(), String> {
    check_count(
        "count_utf8_chars",
        k,
        r,
        input,
        from,
        naive::count_utf8_chars,
        Kernels::count_utf8_chars,
    )
}

fn ascii_prefix_len(
    k: &Kernels,
    r: Reference,
    _t: Tables,
    input: &[u8],
    from: usize,
    _variant: usize,
) -> Result<(), String> {
    check_count(
        "ascii_prefix_len",
        k,
        r,
        input,
        from,
        naive::ascii_prefix_len,
        Kernels::ascii_prefix_len,
    )
}

fn crc32c(
    k: &Kernels,
    r: Reference,
    _t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    let got = k.crc32c(input);
    let want = match r {
        Reference::Naive => naive::crc32c(input),
        Reference::Scalar => Kernels::scalar().crc32c(input),
    };
    compare("crc32c".into(), got, want, input)?;
    let (a, b) = input.split_at(from);
    compare(
        format!("crc32c_append split at {from}"),
        k.crc32c_append(k.crc32c(a), b),
        got,
        input,
    )?;
    // Many pieces in one call: the input cut into pieces of 0..=17 bytes.
    let mut pieces = Vec::new();
    let (mut at, mut n) = (0, variant % 18);
    while at < input.len() {
        let end = (at + n).min(input.len());
        pieces.push(&input[at..end]);
        at = end;
        n = (n + 5) % 18;
    }
    let mut many = vec![0; pieces.len()];
    k.crc32c_many(&pieces, &mut many);
    let want: Vec<u32> = pieces
        .iter()
        .map(|p| match r {
            Reference::Naive => naive::crc32c(p),
            Reference::Scalar => Kernels::scalar().crc32c(p),
        })
        .collect();
    compare("crc32c_many".into(), many, want, input)
}

fn prune_map(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    _from: usize,
    variant: usize,
) -> Result<(), String> {
    for p in pick(t.prunes, variant) {
        let mut got = Vec::new();
        k.prune_map(&p.table, input, &mut got);
        let want = match r {
            Reference::Naive => naive::prune_map(&p.values, input),
            Reference::Scalar => {
                let mut w = Vec::new();
                Kernels::scalar().prune_map(&p.table, input, &mut w);
                w
            }
        };
        compare(format!("prune_map with {}", p.name), got, want, input)?;
    }
    Ok(())
}

fn prune_find_nonzero(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    for p in pick(t.prunes, variant) {
        for start in [from, 0] {
            let got = k.prune_find_nonzero(&p.table, input, start);
            let want = match r {
                Reference::Naive => naive::prune_find_nonzero(&p.values, input, start),
                Reference::Scalar => Kernels::scalar().prune_find_nonzero(&p.table, input, start),
            };
            compare(
                format!("prune_find_nonzero with {} from {start}", p.name),
                got,
                want,
                input,
            )?;
        }
    }
    Ok(())
}

/// Where walks start: everywhere for short inputs and every 32nd input, else a few telling
/// places (the start, `from`, the middle, the last bytes and the very end).
fn starts(input: &[u8], from: usize, variant: usize) -> Vec<u32> {
    let len = input.len();
    let mut s: Vec<usize> = if len <= 32 || variant.is_multiple_of(32) {
        (0..=len).collect()
    } else {
        vec![0, from, len / 2, len - 3, len - 2, len - 1, len]
    };
    s.sort_unstable();
    s.dedup();
    s.into_iter().map(|x| x as u32).collect()
}

/// The rotating trie only: walks are the slowest checks.
fn trie_of(t: Tables<'_>, variant: usize) -> &TrieFixture {
    &t.tries[variant % t.tries.len()]
}

/// The prefix search, and the walk that reports matches as they come: the same matches, and
/// how many bytes the walk read (what callers that reuse a walk's matches rely on).
fn trie_prefix_search(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    let fx = trie_of(t, variant);
    if r == Reference::Naive && fx.dictionary.is_none() {
        return Ok(());
    }
    for start in starts(input, from, variant) {
        let text = &input[start as usize..];
        let (want, want_read) = match r {
            Reference::Naive => {
                let d = fx.dictionary.as_ref().expect("checked");
                (d.prefix_search(text), d.walk_read_len(text))
            }
            Reference::Scalar => {
                let mut w = Vec::new();
                let n = Kernels::scalar().trie_prefix_walk(&fx.trie, text, |len, value| {
                    w.push(TrieMatch { len, value })
                });
                (w, n)
            }
        };
        let mut got = Vec::new();
        let n = k.trie_prefix_search(&fx.trie, text, &mut got);
        if n != got.len() {
            return Err(format!(
                "trie_prefix_search returned {n} but appended {}",
                got.len()
            ));
        }
        let what = |f: &str| format!("{f} in {} from {start}", fx.name);
        compare(what("trie_prefix_search"), got, want.clone(), input)?;
        let mut walked = Vec::new();
        let read = k.trie_prefix_walk(&fx.trie, text, |len, value| {
            walked.push(TrieMatch { len, value })
        });
        if read != want_read {
            return Err(format!(
                "{} read {read} bytes, want {want_read} (input {})",
                what("trie_prefix_walk"),
                show(input)
            ));
        }
        compare(what("trie_prefix_walk"), walked, want.clone(), input)?;
        // The longest match alone: the last of the search's.
        let longest = k.trie_longest_prefix(&fx.trie, text);
        if longest != want.last().copied() {
            return Err(format!(
                "{} gave {longest:?}, want {:?} (input {})",
                what("trie_longest_prefix"),
                want.last(),
                show(input)
            ));
        }
        // Resumed after each of its first bytes (a table of where characters lead does that):
        // the rest of the same walk, lengths and bytes read counted from the resumption.
        let tier = k;
        let mut node = TrieNode::ROOT;
        for k in 1..=text.len().min(8) {
            let Some(next) = fx.trie.child(node, text[k - 1]) else {
                break;
            };
            node = next;
            let from = fx.trie.walk_from(node).expect("a node is a unit");
            let mut resumed = Vec::new();
            let read = k + resumed_walk(tier, k, fx, from, &text[k..], &mut resumed);
            if read != want_read {
                return Err(format!(
                    "{} after {k} bytes read {read} bytes in all, want {want_read} (input {})",
                    what("trie_prefix_walk_from"),
                    show(input)
                ));
            }
            let rest: Vec<TrieMatch> = want
                .iter()
                .filter(|m| m.len as usize > k)
                .copied()
                .collect();
            compare(what("trie_prefix_walk_from"), resumed, rest, input)?;
        }
    }
    Ok(())
}

/// [`Kernels::trie_prefix_walk_from`] of the tier under test, the matches' lengths counted
/// from the walk's start (`k` bytes before `key`); returns the bytes it read from `key`.
fn resumed_walk(
    kernels: &Kernels,
    k: usize,
    fx: &TrieFixture,
    from: WalkFrom,
    key: &[u8],
    out: &mut Vec<TrieMatch>,
) -> usize {
    kernels.trie_prefix_walk_from(&fx.trie, from, key, |len, value| {
        out.push(TrieMatch {
            len: len + k as u32,
            value,
        })
    })
}

fn trie_prefix_search_batch(
    k: &Kernels,
    r: Reference,
    t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    let fx = trie_of(t, variant);
    if r == Reference::Naive && fx.dictionary.is_none() {
        return Ok(());
    }
    let starts = starts(input, from, variant);
    // Sometimes a stride of 1 or 2, so that truncated results are compared too.
    let stride = match variant % 5 {
        0 => 1,
        1 => 2,
        _ => fx.trie.max_key_len(),
    };
    let mut got = TrieBatch::new();
    k.trie_prefix_search_batch(&fx.trie, input, &starts, stride, &mut got);
    let mut scalar = TrieBatch::new();
    if r == Reference::Scalar {
        Kernels::scalar().trie_prefix_search_batch(&fx.trie, input, &starts, stride, &mut scalar);
    }
    let gather = gather_variant(k, fx, input, &starts, stride);
    for (i, &start) in starts.iter().enumerate() {
        let (count, stored) = match r {
            Reference::Naive => {
                let all = fx
                    .dictionary
                    .as_ref()
                    .expect("checked")
                    .prefix_search(&input[start as usize..]);
                let n = all.len();
                (n, all.into_iter().take(stride).collect::<Vec<_>>())
            }
            Reference::Scalar => (scalar.count(i), scalar.matches(i).to_vec()),
        };
        let what = format!(
            "trie_prefix_search_batch in {} start {start} stride {stride}",
            fx.name
        );
        compare(what.clone(), got.count(i), count, input)?;
        compare(what.clone(), got.matches(i).to_vec(), stored.clone(), input)?;
        if let Some((counts, matches)) = &gather {
            let n = (counts[i] as usize).min(stride);
            let what = format!("{what} (AVX2 gather variant)");
            compare(what.clone(), counts[i] as usize, count, input)?;
            compare(
                what,
                matches[i * stride..i * stride + n].to_vec(),
                stored,
                input,
            )?;
        }
    }
    Ok(())
}

/// On the AVX2 tier, the batched walk with gathers that the table does not dispatch (it is
/// slower here) but keeps for CPUs with cheaper gathers: its counts and match slots.
#[cfg(target_arch = "x86_64")]
fn gather_variant(
    k: &Kernels,
    fx: &TrieFixture,
    input: &[u8],
    starts: &[u32],
    stride: usize,
) -> Option<(Vec<u32>, Vec<simdtok_kernels::TrieMatch>)> {
    if k.tier() != simdtok_kernels::Tier::Avx2 {
        return None;
    }
    let mut counts = vec![0; starts.len()];
    let mut matches = vec![simdtok_kernels::TrieMatch::default(); starts.len() * stride];
    // SAFETY: `k` is the AVX2 table, which exists only on a CPU with AVX2; every start is at most
    // `input.len()` and the buffers have the sizes the kernel requires.
    unsafe {
        simdtok_kernels::x86_64::avx2::trie_prefix_search_batch_gather(
            &fx.trie,
            input,
            starts,
            stride,
            &mut counts,
            &mut matches,
        )
    };
    Some((counts, matches))
}

#[cfg(not(target_arch = "x86_64"))]
fn gather_variant(
    _k: &Kernels,
    _fx: &TrieFixture,
    _input: &[u8],
    _starts: &[u32],
    _stride: usize,
) -> Option<(Vec<u32>, Vec<simdtok_kernels::TrieMatch>)> {
    None
}

/// The input as it is, and with every byte that is 0 mod 3 turned into a space (runs of
/// spaces, and spaces at every offset of a vector), whole and from `from`; under every
/// `collapse` × `prev_space`, appended after `variant % 5` bytes already in the output.
fn escape_spaces(
    k: &Kernels,
    r: Reference,
    _t: Tables,
    input: &[u8],
    from: usize,
    variant: usize,
) -> Result<(), String> {
    let spaced: Vec<u8> = input
        .iter()
        .map(|&b| if b % 3 == 0 { b' ' } else { b })
        .collect();
    let before = vec![b'#'; variant % 5];
    for text in [input, &spaced[..]] {
        for part in [text, &text[from..]] {
            for (collapse, prev_space) in
                [(false, false), (false, true), (true, false), (true, true)]
            {
                let run = |k: &Kernels| {
                    let mut out = before.clone();
                    let last = k.escape_spaces_append(part, &mut out, collapse, prev_space);
                    (out, last)
                };
                let want = match r {
                    Reference::Naive => {
                        let (escaped, last) = naive::escape_spaces(part, collapse, prev_space);
                        ([&before[..], &escaped[..]].concat(), last)
                    }
                    Reference::Scalar => run(Kernels::scalar()),
                };
                compare(
                    format!("escape_spaces (collapse {collapse}, prev_space {prev_space})"),
                    run(k),
                    want,
                    part,
                )?;
            }
        }
    }
    Ok(())
}
