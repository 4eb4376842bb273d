//! The pre-tokenizer alone: each scanner, and `fancy-regex` (tiktoken's engine) running the same
//! pattern on the same input, one thread, on the tier detection picks (`SIMDTOK_TIER` forces one).
//!
//! ```text
//! cargo bench --bench pretokenize                        # everything
//! cargo bench --bench pretokenize -- 'scanner/cl100k'    # criterion's regex filter
//! cargo bench --bench pretokenize -- --test              # run each benchmark once
//! ```
//!
//! Inputs: the first MiB of `en_kjv_bible.txt` (ASCII English), `ja_debian_reference.txt`
//! (Japanese) and `code_python311_stdlib_sample.py.txt` (Python) from `../shared/data/corpora`
//! (or `$SIMDTOK_SHARED_DATA`), each split as one text; throughput is in input bytes. The work per
//! piece is a running sum of the offsets (what a caller does least).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use simdtok::kernels::Kernels;
use simdtok::pretokenize::{Pattern, Splitter};

const INPUTS: [(&str, &str); 3] = [
    ("english", "en_kjv_bible.txt"),
    ("japanese", "ja_debian_reference.txt"),
    ("code", "code_python311_stdlib_sample.py.txt"),
];
const CUT: usize = 1 << 20;
const PATTERNS: [(&str, Pattern); 6] = [
    ("gpt2", Pattern::Gpt2),
    ("cl100k", Pattern::Cl100k { digits: 3 }),
    ("o200k", Pattern::O200k),
    ("qwen", Pattern::Cl100k { digits: 1 }),
    ("tekken", Pattern::Tekken),
    // Matches only (the gaps are not pieces): DeepSeek V3's third stage alone.
    ("deepseek_words", Pattern::DeepSeekWords),
];

fn shared_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

/// The first `CUT` bytes of a corpus (cut at a character boundary).
fn input(name: &str) -> Option<String> {
    let text = std::fs::read_to_string(shared_data().join("corpora").join(name)).ok()?;
    let mut end = text.len().min(CUT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    Some(text[..end].to_string())
}

fn bench(c: &mut Criterion) {
    let kernels = Kernels::active().expect("a tier");
    let mut group = c.benchmark_group("pretokenize");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    for (input_name, file) in INPUTS {
        let Some(text) = input(file) else {
            eprintln!("pretokenize/{input_name}: SKIPPED: {file} is absent from the shared data");
            continue;
        };
        group.throughput(Throughput::Bytes(text.len() as u64));
        for (name, pattern) in PATTERNS {
            let splitter = Splitter::new(pattern, kernels);
            group.bench_with_input(
                BenchmarkId::new(format!("scanner/{name}"), input_name),
                &text,
                |bench, text| {
                    bench.iter(|| {
                        let mut sum = 0usize;
                        splitter.split(black_box(text), |s, e| sum = sum.wrapping_add(s ^ e));
                        sum
                    })
                },
            );
            let regex = fancy_regex::Regex::new(pattern.regex_source()).expect("the pattern");
            group.bench_with_input(
                BenchmarkId::new(format!("fancy-regex/{name}"), input_name),
                &text,
                |bench, text| {
                    bench.iter(|| {
                        let mut sum = 0usize;
                        for m in regex.find_iter(black_box(text)) {
                            let m = m.expect("no backtracking limit on this input");
                            sum = sum.wrapping_add(m.start() ^ m.end());
                        }
                        sum
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
