//! What a pre-token costs at its first sight and at a cache hit, in ns per word: the distinct
//! space-separated words of a corpus (in the order they first occur) are joined by spaces into
//! texts of about 10 kB, encoded once (every word is new to the engine: first sights) and then
//! again (every word is in the thread's cache: hits), one thread, in a fresh process.
//!
//! A word is what `split_whitespace` gives; the model's pre-tokenizer may cut it further (`don't`,
//! `word.`), so "per word" is per word of the corpus, each costing one or a few pre-tokens.
//!
//! cargo run --release --example first_sight -- MODEL CORPUS [CORPUS…]
//! (environment: WORDS=the most distinct words to use, default 200000)
//!
//! The one-off work of a fresh tokenizer is done before the clock starts, by encoding a few
//! CJK words on the same thread: the seeding of the thread's piece cache (1–3 ms) and the
//! compatible pairs' build (4–100 ms, `ValidPairs`), which a text's first CJK piece pays once
//! (`unseen`'s cold slice shows it). The first sights are then what every later new word costs.

use std::collections::HashSet;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, corpora @ ..] = &args[..] else {
        eprintln!("usage: first_sight MODEL CORPUS [CORPUS…]");
        std::process::exit(2);
    };
    let max_words: usize = std::env::var("WORDS")
        .ok()
        .map_or(200_000, |v| v.parse().expect("WORDS is a number"));
    for corpus in corpora {
        // A fresh tokenizer per corpus: its cache starts empty.
        let tok = simdtok::Tokenizer::from_file(model).expect("model loads");
        let text = std::fs::read_to_string(corpus).expect("corpus is UTF-8");
        let mut seen = HashSet::new();
        let words: Vec<&str> = text
            .split_whitespace()
            .filter(|w| seen.insert(*w))
            .take(max_words)
            .collect();
        let mut texts = Vec::new();
        let mut current = String::new();
        for w in &words {
            current.push(' ');
            current.push_str(w);
            if current.len() >= 10_000 {
                texts.push(std::mem::take(&mut current));
            }
        }
        if !current.is_empty() {
            texts.push(current);
        }
        let mut ids = Vec::new();
        tok.encode_ids_into("中文 日本語 한국어", &mut ids);
        let mut pass = || {
            let t = Instant::now();
            for text in &texts {
                tok.encode_ids_into(text, &mut ids);
            }
            t.elapsed().as_secs_f64() * 1e9 / words.len() as f64
        };
        let first = pass();
        let hit = pass();
        let hit_again = pass();
        let bytes: usize = texts.iter().map(String::len).sum();
        println!(
            "{corpus}: {} distinct words ({:.1} bytes each): first sight {first:.0} ns/word, hit {:.0} ns/word",
            words.len(),
            bytes as f64 / words.len() as f64,
            hit.min(hit_again)
        );
    }
}
