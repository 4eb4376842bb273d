//! `LoadOptions::cache_budget`: a thread's caches hold at most the budget (or
//! `simdtok::cache::budget::FLOOR_BYTES` below that), and the ids are the same under every
//! budget — the default, tiny ones that keep almost nothing, and ones in between whose tables
//! grow and evict within the text — on every model family, over texts in many scripts and code,
//! each encoded twice (the second time from what the first stored).
//!
//! The committed models always run; those of `../shared/data` (or `$SIMDTOK_SHARED_DATA`) are
//! skipped with a message when it is absent.

use std::path::{Path, PathBuf};

use simdtok::cache::budget::{self, FLOOR_BYTES};
use simdtok::{CacheBudget, LoadOptions, Tokenizer};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn shared_data() -> Option<PathBuf> {
    let dir = std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo("../shared/data"));
    dir.is_dir().then_some(dir)
}

/// Every family: tiktoken-style GPT-2 files, byte-level and SentencePiece-style
/// `tokenizer.json` BPE, SentencePiece BPE and unigram, WordPiece (`vocab.txt` and
/// `tokenizer.json`); then the shared models when present.
fn models() -> Vec<PathBuf> {
    let mut models: Vec<PathBuf> = [
        "tests/data/bpe/encoder.json",
        "tests/data/bpe/gpt2-2k-behaviors.tokenizer.json",
        "tests/data/bpe/gpt2-2k-deepseek.tokenizer.json",
        "tests/data/bpe/kjv-spm-first.tokenizer.json",
        "tests/data/bpe/gemma-1k.tokenizer.json",
        "tests/data/bpe/kjv-1500-prefix.tokenizer.json",
        "tests/data/sentencepiece/botchan_en_bpe_1000.model",
        "tests/data/sentencepiece/botchan_en_unigram_1000.model",
        "tests/data/sentencepiece/kyoto_ja_unigram_8000.model",
        "tests/data/wordpiece/bert-base-uncased.vocab.txt",
        "tests/data/wordpiece/all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
    ]
    .iter()
    .map(|p| repo(p))
    .collect();
    match shared_data() {
        Some(data) => {
            let m = data.join("models");
            models.extend([
                m.join("tiktoken/cl100k_base.tiktoken"),
                m.join("hf-tokenizer-json/llama3.tokenizer.json"),
                m.join("hf-tokenizer-json/llama2.tokenizer.json"),
            ]);
        }
        None => eprintln!(
            "SKIPPED: ../shared/data is absent (set SIMDTOK_SHARED_DATA): only the committed \
             models were checked"
        ),
    }
    models
}

/// The texts: the committed corpora's lines (English, code, the UDHR in many scripts), the
/// corpora whole (long texts), and hostile repetition.
fn texts() -> Vec<String> {
    let mut texts = Vec::new();
    for name in [
        "en_kjv_bible.head.txt",
        "python311_stdlib.head.py.txt",
        "udhr_scripts.txt",
    ] {
        let text = std::fs::read_to_string(repo(&format!("tests/data/corpus/{name}"))).unwrap();
        // A third of each corpus, as lines and whole, so that the test stays short.
        let mut end = text.len() / 3;
        while !text.is_char_boundary(end) {
            end += 1;
        }
        texts.extend(text[..end].lines().map(str::to_owned));
        texts.push(text[..end].to_owned());
    }
    texts.push("ab".repeat(5000));
    texts.push("日本語のテキスト".repeat(300));
    texts
}

fn load(path: &Path, budget: CacheBudget) -> Tokenizer {
    let options = LoadOptions {
        cache_budget: budget,
        ..LoadOptions::default()
    };
    let kernels = simdtok::kernels::Kernels::active().unwrap();
    Tokenizer::from_file_with_options(path, kernels, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ids of every text, twice over, on a new thread (whose caches start empty), and the
/// most bytes that thread's caches held.
fn encode_all(tok: &Tokenizer, texts: &[String]) -> (Vec<Vec<u32>>, usize) {
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut all = Vec::new();
            let mut most = 0;
            for _ in 0..2 {
                for text in texts {
                    all.push(tok.encode(text));
                    most = most.max(budget::held_on_this_thread());
                }
            }
            (all, most)
        })
        .join()
        .unwrap()
    })
}

#[test]
fn every_budget_gives_the_same_ids_and_holds_no_more_than_it() {
    let texts = texts();
    let budgets = [
        CacheBudget::bytes(0),
        CacheBudget::bytes(FLOOR_BYTES),
        CacheBudget::bytes(100_000),
        CacheBudget::bytes(1 << 20),
    ];
    for path in models() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let (want, default_held) = encode_all(&load(&path, CacheBudget::DEFAULT), &texts);
        assert!(
            default_held <= budget::FULL_BYTES,
            "{name}: {default_held} bytes at the default sizes"
        );
        for budget in budgets {
            let (got, held) = encode_all(&load(&path, budget), &texts);
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g, w, "{name}, budget {budget}: text {}", i % texts.len());
            }
            let limit = budget.limit().unwrap().max(FLOOR_BYTES);
            assert!(
                held <= limit,
                "{name}: {held} bytes held under a budget of {budget}"
            );
        }
    }
}

#[test]
fn a_thread_shared_by_tokenizers_of_two_budgets_resizes_its_caches_for_each() {
    let path = repo("tests/data/bpe/gpt2-2k-behaviors.tokenizer.json");
    let big = load(&path, CacheBudget::DEFAULT);
    let mut small = load(&path, CacheBudget::bytes(8 << 10));
    let text = std::fs::read_to_string(repo("tests/data/corpus/udhr_scripts.txt")).unwrap();
    let lines: Vec<&str> = text.lines().take(300).collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            for line in &lines {
                let want = big.encode(line);
                let after_big = budget::held_on_this_thread();
                assert_eq!(small.encode(line), want, "{line}");
                assert!(budget::held_on_this_thread() <= (8 << 10), "{line}");
                assert_eq!(big.encode(line), want, "{line}");
                assert!(budget::held_on_this_thread() >= after_big.min(1 << 20));
            }
            // A budget changed after loading takes effect at the next call.
            small.set_cache_budget(CacheBudget::bytes(0));
            assert_eq!(small.encode(lines[0]), big.encode(lines[0]));
            small.encode(lines[0]);
            assert!(budget::held_on_this_thread() <= FLOOR_BYTES);
        });
    });
}
