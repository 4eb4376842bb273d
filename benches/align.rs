//! Alignment against the reference (`tokenizations` 0.4.2), in one process on the same pairs,
//! one thread: runs alternate between the two, and each case prints both medians and their
//! ratio.
//!
//! ```text
//! cargo bench --bench align                    # the three cases of issue 26
//! SIMDTOK_ALIGN_BYTES=200000 cargo bench --bench align -- document
//! ```
//!
//! Cases (inputs from `../shared/data`, or `$SIMDTOK_SHARED_DATA`):
//! - `document`: the first `SIMDTOK_ALIGN_BYTES` (default 1 MB) of the Jargon File as one
//!   text, tokenized by bert-base-uncased (WordPiece pieces, `##` continuations) and by GPT-2
//!   (byte-level BPE pieces, `Ġ` for a space): one pair;
//! - `noisy`: the same, with 1 % of the characters made noisy (deleted, doubled, an accent
//!   added, case changed) before GPT-2 tokenizes it;
//! - `sentences`: short lines — the King James Bible's verses and the Jargon File's lines,
//!   59 412 of them, cycled to 100 000 — each tokenized both ways: 100 000 pairs, aligned one
//!   after another.
//!
//! Every case checks that both give the same alignment before timing anything.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use simdtok::Tokenizer;
use simdtok::align::Aligner;

fn shared_data() -> PathBuf {
    std::env::var_os("SIMDTOK_SHARED_DATA")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data"))
}

fn pieces(tok: &Tokenizer, text: &str) -> Vec<String> {
    tok.encode_full(text).pieces
}

/// A deterministic generator (xorshift), so every run makes the same noise.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// `text` with about `percent` % of its characters made noisy.
fn noisy(text: &str, percent: u64) -> String {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for c in text.chars() {
        if rng.next() % 100 >= percent {
            out.push(c);
            continue;
        }
        match rng.next() % 4 {
            0 => {}
            1 => {
                out.push(c);
                out.push(c);
            }
            2 => {
                out.push(c);
                out.push('\u{301}');
            }
            _ => out.extend(c.to_uppercase()),
        }
    }
    out
}

type Pair = (Vec<String>, Vec<String>);

/// Median seconds of `runs` runs of each, alternating.
fn race(pairs: &[Pair], runs: usize) -> (f64, f64) {
    let mut ours = Vec::new();
    let mut theirs = Vec::new();
    let mut aligner = Aligner::new();
    for _ in 0..runs {
        let start = Instant::now();
        for (a, b) in pairs {
            let (a2b, b2a) = aligner.align(a, b);
            black_box((a2b.targets.len(), b2a.targets.len()));
        }
        ours.push(start.elapsed());
        let start = Instant::now();
        for (a, b) in pairs {
            black_box(tokenizations::get_alignments(a, b));
        }
        theirs.push(start.elapsed());
    }
    (median(&mut ours), median(&mut theirs))
}

fn median(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64()
}

fn check(pairs: &[Pair]) {
    let mut aligner = Aligner::new();
    for (a, b) in pairs {
        let (a2b, b2a) = aligner.align(a, b);
        let want = tokenizations::get_alignments(a, b);
        assert!(
            a2b.to_nested() == want.0 && b2a.to_nested() == want.1,
            "simdtok's alignment differs from the reference's"
        );
    }
}

fn main() {
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let data = shared_data();
    let bert = data.join("models/wordpiece/bert-base-uncased.vocab.txt");
    let gpt2 = data.join("models/gpt2/encoder.json");
    let (Ok(bert), Ok(gpt2)) = (Tokenizer::from_file(&bert), Tokenizer::from_file(&gpt2)) else {
        eprintln!("skipped: models not found under {}", data.display());
        return;
    };
    let bytes: usize = std::env::var("SIMDTOK_ALIGN_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = std::env::var("SIMDTOK_ALIGN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let jargon = std::fs::read_to_string(data.join("corpora/en_jargon_file_4.4.7.txt")).unwrap();
    let mut end = bytes.min(jargon.len());
    while !jargon.is_char_boundary(end) {
        end -= 1;
    }
    let document = &jargon[..end];
    let kjv = std::fs::read_to_string(data.join("corpora/en_kjv_bible.txt")).unwrap();

    let mut cases: Vec<(&str, Vec<Pair>, u64)> = Vec::new();
    let wanted = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wanted("document") {
        let pair = (pieces(&bert, document), pieces(&gpt2, document));
        cases.push(("document", vec![pair], document.len() as u64));
    }
    if wanted("noisy") {
        let pair = (pieces(&bert, document), pieces(&gpt2, &noisy(document, 1)));
        cases.push(("noisy", vec![pair], document.len() as u64));
    }
    if wanted("sentences") {
        // The Bible's 32 102 verses and the Jargon File's 27 310 lines (of 8 bytes or more),
        // cycled to 100 000 pairs: neither side keeps anything from one pair to the next.
        let distinct: Vec<&str> = kjv
            .lines()
            .chain(jargon.lines())
            .map(str::trim)
            .filter(|l| l.len() >= 8)
            .collect();
        let lines: Vec<&str> = distinct.iter().copied().cycle().take(100_000).collect();
        let bytes = lines.iter().map(|l| l.len() as u64).sum();
        let pairs = lines
            .iter()
            .map(|l| (pieces(&bert, l), pieces(&gpt2, l)))
            .collect();
        cases.push(("sentences", pairs, bytes));
    }
    println!("case        pairs     bytes   simdtok s  tokenizations s   ratio");
    for (name, pairs, bytes) in &cases {
        check(pairs);
        let (ours, theirs) = race(pairs, runs);
        println!(
            "{name:<10} {:>6} {:>9} {ours:>11.4} {theirs:>16.4} {:>7.1}×",
            pairs.len(),
            bytes,
            theirs / ours
        );
    }
}
