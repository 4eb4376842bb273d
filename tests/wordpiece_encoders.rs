//! The two WordPiece encoders against each other and against a literal transcription of the
//! reference's definition (`tokenizers`' `WordPiece::tokenize`: from each position, try the
//! whole rest, then shorter and shorter, looking each candidate up in a hash map):
//! - property tests on random vocabularies over a tiny alphabet, where failure links and
//!   failure pops get exercised far more than by any real vocabulary;
//! - every corpus of `../shared/data`, line by line, through the whole pipeline (ids and
//!   offsets), fast against linear.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use simdtok::kernels::Kernels;
use simdtok::models::wordpiece::{WordPiece, WordToken};
use simdtok::{LoadOptions, Tokenizer, WordPieceAlgorithm};

/// The reference's algorithm, character by character, with a hash map.
fn oracle(vocab: &HashMap<String, u32>, prefix: &str, word: &str) -> Option<Vec<WordToken>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < word.len() {
        let mut end = word.len();
        let mut found = None;
        while start < end {
            let mut candidate = word[start..end].to_string();
            if start > 0 {
                candidate = format!("{prefix}{candidate}");
            }
            if let Some(&id) = vocab.get(&candidate) {
                found = Some(id);
                break;
            }
            end -= word[start..end].chars().next_back().unwrap().len_utf8();
        }
        out.push(WordToken {
            id: found?,
            start: start as u32,
            end: end as u32,
        });
        start = end;
    }
    Some(out)
}

fn build(vocab: &[String], prefix: &str, algorithm: WordPieceAlgorithm) -> WordPiece {
    let mut pairs: Vec<(String, u32)> = vec![("[UNK]".into(), 0)];
    pairs.extend(vocab.iter().cloned().zip(1..));
    WordPiece::new(
        pairs,
        "[UNK]",
        prefix,
        usize::MAX,
        algorithm,
        Kernels::scalar(),
    )
    .unwrap()
}

fn encode(model: &WordPiece, word: &str) -> Option<Vec<WordToken>> {
    let mut out = vec![WordToken {
        id: 99,
        start: 9,
        end: 9,
    }];
    let ok = model.encode_word(word.as_bytes(), &mut out);
    // Earlier contents stay; a failed word leaves `out` as it was.
    assert_eq!(out[0].id, 99);
    if ok {
        Some(out.split_off(1))
    } else {
        assert_eq!(out.len(), 1);
        None
    }
}

/// Entries over {a, b, é}: some plain, some continuations (with the prefix).
fn vocab_strategy() -> impl Strategy<Value = Vec<String>> {
    let piece = proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("é")], 1..6)
        .prop_map(|v| v.concat());
    proptest::collection::vec((piece, any::<bool>()), 0..24).prop_map(|entries| {
        let mut out: Vec<String> = Vec::new();
        for (p, continuation) in entries {
            let t = if continuation { format!("##{p}") } else { p };
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    })
}

fn word_strategy() -> impl Strategy<Value = String> {
    proptest::collection::vec(prop_oneof![Just("a"), Just("b"), Just("é")], 1..24)
        .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, rng_seed: proptest::test_runner::RngSeed::Fixed(4), ..ProptestConfig::default() })]

    #[test]
    fn greedy_and_linear_match_the_reference_definition(
        vocab in vocab_strategy(),
        words in proptest::collection::vec(word_strategy(), 1..8),
    ) {
        let map: HashMap<String, u32> = vocab.iter().cloned().zip(1..).collect();
        let fast = build(&vocab, "##", WordPieceAlgorithm::Fast);
        let linear = build(&vocab, "##", WordPieceAlgorithm::Linear);
        for word in &words {
            let want = oracle(&map, "##", word);
            prop_assert_eq!(&encode(&fast, word), &want, "fast, word {:?}", word);
            prop_assert_eq!(&encode(&linear, word), &want, "linear, word {:?}", word);
        }
    }
}

#[test]
fn other_prefixes_and_literal_prefix_entries() {
    // An entry that starts with the prefix is also a word-initial entry, literally; the prefix
    // alone is never a continuation; an empty prefix makes every entry a continuation.
    for prefix in ["##", "", "@@", "ø"] {
        let vocab: Vec<String> = ["a", "ab", "b", "##", "##a", "##ab", "#", "@@b", "øa", "ø"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let map: HashMap<String, u32> = vocab.iter().cloned().zip(1..).collect();
        let fast = build(&vocab, prefix, WordPieceAlgorithm::Fast);
        let linear = build(&vocab, prefix, WordPieceAlgorithm::Linear);
        for word in [
            "a", "ab", "aab", "##a", "###", "##ab", "#a", "@@b", "a@@b", "øab", "øøa", "ba", "",
        ] {
            let want = oracle(&map, prefix, word);
            assert_eq!(
                encode(&fast, word),
                want,
                "fast, prefix {prefix:?}, word {word:?}"
            );
            assert_eq!(
                encode(&linear, word),
                want,
                "linear, prefix {prefix:?}, word {word:?}"
            );
        }
    }
}

#[test]
fn linear_stays_linear_where_greedy_is_quadratic() {
    // Every position walks 63 bytes for greedy; LinMaxMatch reads each byte once. Only
    // equality is asserted here (timings belong to benches/wordpiece.rs).
    let vocab: Vec<String> = vec!["a".into(), "##a".into(), format!("##{}b", "a".repeat(63))];
    let word = "a".repeat(20_000);
    let fast = build(&vocab, "##", WordPieceAlgorithm::Fast);
    let linear = build(&vocab, "##", WordPieceAlgorithm::Linear);
    let got = encode(&linear, &word).unwrap();
    assert_eq!(got.len(), word.len());
    assert_eq!(encode(&fast, &word).unwrap(), got);
}

fn shared_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

#[test]
fn fast_and_linear_agree_on_every_corpus() {
    let corpora = shared_data().join("corpora");
    let Ok(dir) = std::fs::read_dir(&corpora) else {
        eprintln!(
            "SKIPPED: {} is absent (set SIMDTOK_SHARED_DATA); the encoders were not compared on the corpora",
            corpora.display()
        );
        return;
    };
    let mut files: Vec<PathBuf> = dir.map(|e| e.unwrap().path()).collect();
    files.sort();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/wordpiece");
    for (model, lowercase) in [
        ("bert-base-uncased.vocab.txt", None),
        ("bert-base-chinese.vocab.txt", Some(false)),
    ] {
        let load = |algorithm| {
            let options = LoadOptions {
                lowercase,
                wordpiece_algorithm: Some(algorithm),
                ..LoadOptions::default()
            };
            Tokenizer::from_file_with_options(
                repo.join(model),
                Kernels::active().unwrap(),
                &options,
            )
            .unwrap()
        };
        let (fast, linear) = (
            load(WordPieceAlgorithm::Fast),
            load(WordPieceAlgorithm::Linear),
        );
        for file in &files {
            let text = std::fs::read_to_string(file).unwrap();
            for (n, line) in text.lines().enumerate() {
                let (a, b) = (fast.encode_full(line), linear.encode_full(line));
                assert!(
                    a == b,
                    "{model}: {}:{}: fast and linear differ",
                    file.display(),
                    n + 1
                );
            }
        }
    }
}
