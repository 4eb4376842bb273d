//! Byte-level BPE encoding, one thread, on the tier detection picks: tiktoken rank files and
//! `tokenizer.json` models on corpora, and the worst cases (1 MB of one character, of spaces,
//! of random text).
//!
//! ```text
//! cargo bench --bench bpe                      # everything
//! cargo bench --bench bpe -- 'cl100k'          # criterion's regex filter
//! ```
//!
//! Models and corpora come from `../shared/data` (or `$SIMDTOK_SHARED_DATA`); absent ones are
//! skipped with a message. Corpora are cut to their first MiB and encoded line by line; the
//! worst cases are one text each. Throughput is in input bytes. Peers are compared in
//! `bench-peers` (`cargo bench-peers --family bpe`).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simdtok::Tokenizer;

const MODELS: [(&str, &str); 4] = [
    ("cl100k", "models/tiktoken/cl100k_base.tiktoken"),
    ("o200k", "models/tiktoken/o200k_base.tiktoken"),
    ("llama3", "models/hf-tokenizer-json/llama3.tokenizer.json"),
    ("llama2", "models/hf-tokenizer-json/llama2.tokenizer.json"),
];
const CORPORA: [(&str, &str); 3] = [
    ("english", "en_kjv_bible.txt"),
    ("japanese", "ja_debian_reference.txt"),
    ("code", "code_python311_stdlib_sample.py.txt"),
];
const CUT: usize = 1 << 20;

fn shared_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

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

/// 10^6 bytes of pseudo-random text: characters drawn from all of Unicode, fixed seed.
fn random_text() -> String {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut s = String::new();
    while s.len() < 1_000_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Mostly ASCII and BMP, like real text in many scripts, with some astral characters.
        let cp = match x % 8 {
            0..=3 => (x >> 8) as u32 % 0x80,
            4..=6 => (x >> 8) as u32 % 0x1_0000,
            _ => (x >> 8) as u32 % 0x11_0000,
        };
        if let Some(c) = char::from_u32(cp) {
            s.push(c);
        }
    }
    s
}

fn bench(c: &mut Criterion) {
    let data = shared_data();
    let worst: Vec<(&str, String)> = vec![
        ("repeat-a", "a".repeat(1_000_000)),
        ("repeat-space", " ".repeat(1_000_000)),
        ("repeat-中", "中".repeat(333_333)),
        ("random", random_text()),
    ];
    for (model, file) in MODELS {
        let path = data.join(file);
        let Ok(tok) = Tokenizer::from_file(&path) else {
            eprintln!("skipping {model}: cannot load {}", path.display());
            continue;
        };
        let mut group = c.benchmark_group(model);
        group.measurement_time(Duration::from_secs(3));
        group.sample_size(10);
        let mut ids = Vec::new();
        for (name, corpus) in CORPORA {
            let Some(texts) = lines(&data.join("corpora").join(corpus)) else {
                eprintln!("skipping {name}: corpus absent");
                continue;
            };
            let bytes: usize = texts.iter().map(|t| t.len() + 1).sum();
            group.throughput(Throughput::Bytes(bytes as u64));
            group.bench_function(BenchmarkId::new("corpus", name), |b| {
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
        for (name, text) in &worst {
            group.throughput(Throughput::Bytes(text.len() as u64));
            group.bench_function(BenchmarkId::new("worst", name), |b| {
                b.iter(|| {
                    tok.encode_ids_into(black_box(text), &mut ids);
                    ids.len()
                })
            });
        }
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
