//! The whole BERT pipeline (added tokens, normalizer, pre-tokenizer, WordPiece), one thread,
//! both encoders, on the tier detection picks.
//!
//! ```text
//! cargo bench --bench wordpiece                          # everything (about a minute)
//! cargo bench --bench wordpiece -- 'prose'               # criterion's regex filter
//! cargo bench --bench wordpiece -- --test                # run each benchmark once
//! ```
//!
//! Inputs: each corpus of `../shared/data/corpora` (or `$SIMDTOK_SHARED_DATA`), cut to its
//! first MiB, encoded line by line as `simdtok encode` reads it; throughput is in input bytes.
//! The adversarial group builds a vocabulary whose longest entry almost matches everywhere
//! (`a`, `##a` and `##a…ab` of 64 bytes), with no limit on word length, and encodes one word of
//! 100 000 × `a`: greedy matching walks 63 bytes from every position, LinMaxMatch one.
//! Peers are compared in `bench-peers` (`cargo bench-peers --family
//! wordpiece`).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simdtok::kernels::Kernels;
use simdtok::{LoadOptions, Tokenizer, WordPieceAlgorithm};

const CORPORA: [(&str, &str); 4] = [
    ("prose", "en_kjv_bible.txt"),
    ("code", "code_python311_stdlib_sample.py.txt"),
    ("chinese", "zh-cn_debian_reference.txt"),
    ("multilingual", "multi_udhr_all_languages.txt"),
];
const CUT: usize = 1 << 20;
const ALGORITHMS: [WordPieceAlgorithm; 2] = [WordPieceAlgorithm::Fast, WordPieceAlgorithm::Linear];

fn shared_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn load(path: &Path, algorithm: WordPieceAlgorithm) -> Tokenizer {
    let options = LoadOptions {
        wordpiece_algorithm: Some(algorithm),
        ..LoadOptions::default()
    };
    Tokenizer::from_file_with_options(path, Kernels::active().unwrap(), &options).unwrap()
}

/// The lines of the first `CUT` bytes of a corpus (cut at a line end).
fn lines(path: &Path) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut end = text.len().min(CUT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..text[..end].rfind('\n').map_or(end, |i| i + 1)];
    Some(
        cut.lines()
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
            .collect(),
    )
}

fn corpora(c: &mut Criterion) {
    let vocab = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/wordpiece/bert-base-uncased.vocab.txt");
    let data = shared_data().join("corpora");
    let mut group = c.benchmark_group("bert-base-uncased");
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(20);
    for (name, file) in CORPORA {
        let Some(texts) = lines(&data.join(file)) else {
            eprintln!("skipping {name}: {} is absent", data.join(file).display());
            continue;
        };
        let bytes: usize = texts.iter().map(|t| t.len() + 1).sum();
        group.throughput(Throughput::Bytes(bytes as u64));
        for algorithm in ALGORITHMS {
            let tok = load(&vocab, algorithm);
            let mut ids = Vec::new();
            group.bench_function(BenchmarkId::new(name, algorithm.name()), |b| {
                b.iter(|| {
                    let mut n = 0;
                    for t in &texts {
                        tok.encode_ids_into(black_box(t), &mut ids);
                        n += ids.len();
                    }
                    n
                })
            });
        }
    }
    group.finish();
}

fn adversarial(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("simdtok-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("adversarial.tokenizer.json");
    let long = format!("##{}b", "a".repeat(63));
    let json = serde_json::json!({
        "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                  "max_input_chars_per_word": 1_000_000_000u64,
                  "vocab": {"[UNK]": 0, "a": 1, "##a": 2, long: 3}},
        "normalizer": {"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true,
                       "strip_accents": null, "lowercase": true},
        "pre_tokenizer": {"type": "BertPreTokenizer"},
    });
    std::fs::write(&path, json.to_string()).unwrap();
    let text = "a".repeat(100_000);
    let mut group = c.benchmark_group("adversarial");
    group.measurement_time(Duration::from_secs(3));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    for algorithm in ALGORITHMS {
        let tok = load(&path, algorithm);
        assert_eq!(tok.encode(&text).len(), text.len());
        group.bench_function(BenchmarkId::new("a-100000", algorithm.name()), |b| {
            b.iter(|| tok.encode(black_box(&text)).len())
        });
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, corpora, adversarial);
criterion_main!(benches);
