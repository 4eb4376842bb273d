//! Single-thread throughput on text never seen before, as tokbench measures it: each corpus is
//! cut into ~10 kB chunks (each cut moved forward to a character boundary), the chunks into
//! `REPS + 1` disjoint slices; the first slice warms the engine, each timed slice is new to it.
//! Prints the cold first slice, the median of the timed ones (MB/s) and the FNV-1a 64 hash of
//! all the ids (little-endian `u32`). A quick profiling target (`perf record`), not a
//! comparison: `bench-peers` runs the peers on the same chunks.
//!
//! cargo run --release --example unseen -- MODEL CORPUS [CORPUS…]
//! (environment: REPS=5, CHUNK=10000, LIMIT=bytes of each corpus to use, CACHE_BUDGET=a size
//! such as 1MiB (`LoadOptions::cache_budget`), FRESH=passes over the
//! timed slices after the measurement, each in a new thread so its caches start empty: a longer
//! profile of first sights after one load, its tables warm; with WARM set, as many passes again
//! on one thread, its caches warm: the hit path's speed beside the first sights')

use std::time::Instant;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map_or(default, |v| v.parse().expect("a number"))
}

/// `text` cut into chunks of about `size` bytes, each cut moved forward to a character boundary.
fn chunks(text: &str, size: usize) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fn fnv1a(hash: &mut u64, ids: &[u32]) {
    for id in ids {
        for b in id.to_le_bytes() {
            *hash ^= b as u64;
            *hash = hash.wrapping_mul(0x100_0000_01b3);
        }
    }
}

/// A timed slice's encoding, a call of its own: `valgrind --tool=callgrind
/// --collect-atstart=no --toggle-collect='*encode_timed_slice*'` counts only these (the
/// one-off builds and seeding of the cold slice left out).
#[inline(never)]
fn encode_timed_slice(tok: &simdtok::Tokenizer, slice: &[&str], ids: &mut Vec<u32>) {
    for c in slice {
        tok.encode_ids_append(c, ids);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, corpora @ ..] = &args[..] else {
        eprintln!("usage: unseen MODEL CORPUS [CORPUS…]");
        std::process::exit(2);
    };
    let reps = env_usize("REPS", 5);
    let chunk = env_usize("CHUNK", 10_000);
    let limit = env_usize("LIMIT", usize::MAX);
    let fresh = env_usize("FRESH", 0);
    let start = Instant::now();
    let options = simdtok::LoadOptions {
        cache_budget: std::env::var("CACHE_BUDGET")
            .map_or(Ok(simdtok::CacheBudget::DEFAULT), |b| b.parse())
            .expect("CACHE_BUDGET: a size"),
        ..Default::default()
    };
    let kernels = simdtok::kernels::Kernels::active().expect("a tier");
    let tok =
        simdtok::Tokenizer::from_file_with_options(model, kernels, &options).expect("model loads");
    eprintln!("load {:.3} s", start.elapsed().as_secs_f64());
    for corpus in corpora {
        let mut text = std::fs::read_to_string(corpus).expect("corpus is UTF-8");
        let mut end = text.len().min(limit);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        let all = chunks(&text, chunk);
        let per = all.len() / (reps + 1);
        assert!(per > 0, "{corpus}: too short for {reps} slices");
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut ids = Vec::new();
        let mut rates = Vec::new();
        for (i, slice) in all.chunks(per).take(reps + 1).enumerate() {
            let bytes: usize = slice.iter().map(|c| c.len()).sum();
            ids.clear();
            let t = Instant::now();
            if i == 0 {
                for c in slice {
                    tok.encode_ids_append(c, &mut ids);
                }
            } else {
                encode_timed_slice(&tok, slice, &mut ids);
            }
            rates.push(bytes as f64 / t.elapsed().as_secs_f64() / 1e6);
            fnv1a(&mut hash, &ids);
        }
        let cold = rates[0];
        let mut timed = rates[1..].to_vec();
        timed.sort_by(f64::total_cmp);
        let slices: Vec<String> = rates[1..].iter().map(|r| format!("{r:.1}")).collect();
        println!(
            "{corpus}: cold {cold:.1} MB/s, median {:.1} MB/s (slices {}), hash {hash:016x}, \
             caches {:.2} MiB",
            timed[timed.len() / 2],
            slices.join(" "),
            simdtok::cache::budget::held_on_this_thread() as f64 / (1 << 20) as f64
        );
        if fresh > 0 {
            let timed: Vec<&str> = all.iter().skip(per).take(per * reps).copied().collect();
            let bytes: usize = timed.iter().map(|c| c.len()).sum();
            let t = Instant::now();
            for _ in 0..fresh {
                std::thread::scope(|s| {
                    s.spawn(|| {
                        let mut ids = Vec::new();
                        for c in &timed {
                            ids.clear();
                            tok.encode_ids_append(c, &mut ids);
                        }
                    });
                });
            }
            let rate = (bytes * fresh) as f64 / t.elapsed().as_secs_f64() / 1e6;
            println!("{corpus}: {fresh} passes with empty caches, {rate:.1} MB/s");
            if std::env::var("WARM").is_ok() {
                let mut ids = Vec::new();
                let t = Instant::now();
                for _ in 0..fresh {
                    for c in &timed {
                        ids.clear();
                        tok.encode_ids_append(c, &mut ids);
                    }
                }
                let rate = (bytes * fresh) as f64 / t.elapsed().as_secs_f64() / 1e6;
                println!("{corpus}: {fresh} passes warm, {rate:.1} MB/s");
            }
        }
    }
}
