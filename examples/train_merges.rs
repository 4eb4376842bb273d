//! The serial part of BPE training (the merges, after counting) timed alone, pass after pass
//! over the same counts: a profiling target for `simdtok::train` (`perf record`), not a
//! comparison (see bench-peers' `--family train`).
//!
//! cargo run --release --example train_merges -- CORPUS [VOCAB_SIZE] [PASSES]

use std::time::Instant;

use simdtok::train::{Counter, PreTokenizer, Settings};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, rest @ ..] = &args[..] else {
        eprintln!("usage: train_merges CORPUS [VOCAB_SIZE] [PASSES]");
        std::process::exit(2);
    };
    let vocab_size: usize = rest.first().map_or(32_000, |v| v.parse().expect("a size"));
    let passes: usize = rest.get(1).map_or(5, |p| p.parse().expect("a number"));
    let kernels = simdtok_kernels::Kernels::active().expect("a tier");
    let text = std::fs::read_to_string(corpus).expect("corpus is UTF-8");
    let mut counter = Counter::new(PreTokenizer::Cl100k, &[], kernels);
    for line in text.lines() {
        counter.add(line);
    }
    let counts = counter.into_counts();
    let settings = Settings {
        vocab_size,
        min_frequency: 0,
        max_token_length: None,
        counting: Default::default(),
    };
    for pass in 0..passes {
        let start = Instant::now();
        let model =
            simdtok::train::train(&counts, PreTokenizer::Cl100k, &[], &settings, &mut |_| {})
                .expect("trains");
        println!(
            "pass {pass}: {:.1} ms, {} merges of {} unique words",
            start.elapsed().as_secs_f64() * 1e3,
            model.trained.merges.len(),
            counts.len()
        );
    }
}
