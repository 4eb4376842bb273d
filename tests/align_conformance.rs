//! Alignment against the reference, the `tokenizations` crate (0.4.2): `get_alignments`,
//! `get_charmap` and `get_original_spans` must give identical results on the crate's own
//! examples and on random pairs built to make the edit script ambiguous (small alphabets, long
//! runs of one letter, ties everywhere), with case, accent, width and sigma noise.

#![allow(deprecated)] // tokenizations::get_original_spans, the reference for ours

use proptest::prelude::*;
use simdtok::align;

fn check_pair(a: &[String], b: &[String]) {
    let want = tokenizations::get_alignments(a, b);
    let got = align::get_alignments(a, b);
    assert_eq!(got, want, "get_alignments({a:?}, {b:?})");
}

/// The same pair through aligners that prune every range (and ranges of 8 units or more), so
/// that the pruned search meets every kind of range the small inputs make.
fn check_pruned(a: &[String], b: &[String]) {
    let want = tokenizations::get_alignments(a, b);
    for prune_from in [0, 8] {
        let mut aligner = align::Aligner::with_prune_from(prune_from);
        let (a2b, b2a) = aligner.align(a, b);
        let got = (a2b.to_nested(), b2a.to_nested());
        assert_eq!(
            got, want,
            "pruned from {prune_from}: get_alignments({a:?}, {b:?})"
        );
    }
}

fn check_text(a: &str, b: &str) {
    let want = tokenizations::get_charmap(a, b);
    let got = align::get_charmap(a, b);
    assert_eq!(got, want, "get_charmap({a:?}, {b:?})");
}

fn check_spans(tokens: &[String], text: &str) {
    let want = tokenizations::get_original_spans(tokens, text);
    let got = align::get_original_spans(tokens, text);
    assert_eq!(got, want, "get_original_spans({tokens:?}, {text:?})");
}

/// Tokens over a small alphabet, so that equal characters and ties are everywhere.
fn tokens(
    alphabet: &'static [&'static str],
    max_tokens: usize,
) -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop::collection::vec(prop::sample::select(alphabet), 0..6).prop_map(|p| p.concat()),
        0..max_tokens,
    )
}

const ASCII: &[&str] = &["a", "b", "A", " ", "ab", "aaa"];
const MIXED: &[&str] = &[
    "a", "b", "A", "à", "Á", "ﬁ", "ｂ", "Σ", "σ", "ς", "İ", "\u{301}", "e\u{301}", " ",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn ascii_pairs(a in tokens(ASCII, 12), b in tokens(ASCII, 12)) {
        check_pair(&a, &b);
    }

    #[test]
    fn mixed_pairs(a in tokens(MIXED, 10), b in tokens(MIXED, 10)) {
        check_pair(&a, &b);
    }

    #[test]
    fn pruned_ascii_pairs(a in tokens(ASCII, 24), b in tokens(ASCII, 24)) {
        check_pruned(&a, &b);
    }

    #[test]
    fn pruned_mixed_pairs(a in tokens(MIXED, 16), b in tokens(MIXED, 16)) {
        check_pruned(&a, &b);
    }

    #[test]
    fn charmaps(a in tokens(MIXED, 6), b in tokens(ASCII, 6)) {
        check_text(&a.concat(), &b.concat());
    }

    #[test]
    fn original_spans(a in tokens(MIXED, 8), b in tokens(MIXED, 8)) {
        check_spans(&a, &b.concat());
    }
}
