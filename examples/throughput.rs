//! Single-thread encode throughput of one model over one corpus, line by line, first pass and
//! repeated passes: a quick profiling target (`perf record`), not a comparison (see bench-peers).
//!
//! cargo run --release --example throughput -- MODEL CORPUS [PASSES]
//! (environment: THRASH=MB, RANDOM=1, BEFORE=MODEL:FILE,…;…, DOCS=BYTES, INPUT=jsonl|raw,
//! FRESH=1 — see below)

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, corpus, rest @ ..] = &args[..] else {
        eprintln!("usage: throughput MODEL CORPUS [PASSES]");
        std::process::exit(2);
    };
    let passes: usize = rest
        .first()
        .map_or(3, |p| p.parse().expect("PASSES is a number"));
    // BEFORE=MODEL:FILE,FILE;MODEL:FILE: first encodes those files (line by line, four
    // passes) with those models, as bench-peers does before this model and corpus: the
    // thread's caches then hold what earlier tokenizers left.
    if let Ok(before) = std::env::var("BEFORE") {
        for step in before.split(';') {
            let (other, files) = step.split_once(':').expect("BEFORE is MODEL:FILE,…;…");
            let other = simdtok::Tokenizer::from_file(other).expect("model loads");
            let mut ids = Vec::new();
            for file in files.split(',') {
                let text = std::fs::read_to_string(file).expect("file is UTF-8");
                for _ in 0..4 {
                    for line in text.lines() {
                        other.encode_ids_into(line, &mut ids);
                    }
                }
            }
        }
    }
    let mut tok = simdtok::Tokenizer::from_file(model).expect("model loads");
    // FRESH=1: every pass after the first loads the model again, so it is a first pass for the
    // thread's caches (a new owner's entries read as empty), with their memory already mapped:
    // what a first pass costs apart from page faults.
    let fresh = std::env::var("FRESH").is_ok_and(|v| v == "1");
    let text = std::fs::read_to_string(corpus).expect("corpus is UTF-8");
    // DOCS=BYTES: the texts are documents of that many bytes or a line more (line ends kept),
    // as bench-peers' `en-20mb-docs`, instead of the lines.
    let docs: usize = std::env::var("DOCS")
        .ok()
        .map(|v| v.parse().expect("DOCS is a number of bytes"))
        .unwrap_or(0);
    // INPUT=jsonl: the texts are the "text" fields of the corpus's JSON lines; INPUT=raw: the
    // whole corpus is one text — the same texts `simdtok encode --input-format jsonl|raw` reads.
    let input = std::env::var("INPUT").unwrap_or_default();
    let fields: Vec<String> = if input == "jsonl" {
        text.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
                v["text"].as_str().expect("a text field").to_owned()
            })
            .collect()
    } else {
        Vec::new()
    };
    let lines: Vec<&str> = if input == "jsonl" {
        fields.iter().map(String::as_str).collect()
    } else if input == "raw" {
        vec![&text[..]]
    } else if docs == 0 {
        text.lines().collect()
    } else {
        let mut out = Vec::new();
        let mut start = 0;
        while start < text.len() {
            // A line end is one byte: the search may start inside a character.
            let from = (start + docs).min(text.len());
            let end = text.as_bytes()[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(text.len(), |i| from + i + 1);
            out.push(&text[start..end]);
            start = end;
        }
        out
    };
    let bytes: usize = lines.iter().map(|l| l.len()).sum();
    let mut ids = Vec::new();
    // THRASH=MB: walks that many megabytes between passes, as other encoders do between
    // simdtok's passes in bench-peers' round robin (the CPU caches lose simdtok's tables).
    let thrash: usize = std::env::var("THRASH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut junk = vec![0u8; thrash << 20];
    // RANDOM=1: the walk visits the lines in a pseudo-random order, as a tokenizer's tables are
    // read (a sequential walk is inserted at low priority by the last-level cache and leaves
    // simdtok's tables in it).
    let random = std::env::var("RANDOM").is_ok_and(|v| v == "1");
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    for pass in 0..passes {
        if random {
            let lines = junk.len() / 64;
            for _ in 0..lines * 2 {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                let at = (state >> 33) as usize % lines.max(1) * 64;
                junk[at] = junk[at].wrapping_add(1);
            }
        } else {
            for (i, b) in junk.iter_mut().enumerate().step_by(64) {
                *b = b.wrapping_add(i as u8);
            }
        }
        std::hint::black_box(&junk);
        if fresh && pass > 0 {
            tok = simdtok::Tokenizer::from_file(model).expect("model loads");
        }
        let t = Instant::now();
        let mut n = 0usize;
        for line in &lines {
            tok.encode_ids_into(line, &mut ids);
            n += ids.len();
        }
        let s = t.elapsed().as_secs_f64();
        println!(
            "pass {pass}: {:.1} MB/s, {n} tokens",
            bytes as f64 / s / 1e6
        );
    }
}
