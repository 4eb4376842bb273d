//! What planning costs a SentencePiece unigram part: one text cut into the parts the CLI gives a
//! raw input (about 256 KiB each, at `Tokenizer::last_part_cut`), encoded part after part in
//! one thread, once with each part's running score at hand (the plain pass) and once with it
//! never ready before the part has planned all its words (the way a part goes while the part
//! before is still on another thread). Alternated passes; prints the medians and the median
//! ratio, and checks that both ways give the same ids. A profiling target, one thread.
//!
//! cargo run --release --example part_plan -- MODEL CORPUS

use simdtok::Tokenizer;
use simdtok::pipeline::{CarrySource, PartCarry, PartPlace};
use std::time::Instant;

/// A carry that is never ready: the part plans, then waits (and gets it at once).
struct Never(PartCarry);
impl CarrySource for Never {
    fn ready(&mut self) -> Option<PartCarry> {
        None
    }
    fn wait(&mut self) -> PartCarry {
        self.0
    }
    fn done(&mut self, n: PartCarry) {
        self.0 = n;
    }
}
/// A carry at hand.
struct Ready(PartCarry);
impl CarrySource for Ready {
    fn ready(&mut self) -> Option<PartCarry> {
        Some(self.0)
    }
    fn wait(&mut self) -> PartCarry {
        self.0
    }
    fn done(&mut self, n: PartCarry) {
        self.0 = n;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, corpus] = &args[..] else {
        eprintln!("usage: part_plan MODEL CORPUS");
        std::process::exit(2);
    };
    let tok = Tokenizer::from_file(model).expect("model");
    let text = std::fs::read_to_string(corpus).expect("corpus (UTF-8)");
    let bytes = text.as_bytes();
    let mut parts = Vec::new();
    let mut from = 0;
    while from < bytes.len() {
        let want = (from + (256 << 10)).min(bytes.len());
        let to = if want == bytes.len() {
            want
        } else {
            from + tok
                .last_part_cut(&bytes[from..want])
                .expect("a cut: the model encodes words apart")
        };
        parts.push(from..to);
        from = to;
    }
    let n = parts.len();
    let mut ids = Vec::new();
    // Seconds per pass, plain and planned; the first round (a warm-up) checks the ids instead.
    let mut times: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut first_ids: [Vec<u32>; 2] = [Vec::new(), Vec::new()];
    for round in 0..9 {
        for (planned, (times, first_ids)) in times.iter_mut().zip(&mut first_ids).enumerate() {
            ids.clear();
            let t = Instant::now();
            let mut carry = PartCarry::default();
            for (i, r) in parts.iter().enumerate() {
                let place = PartPlace {
                    first: i == 0,
                    last: i == n - 1,
                };
                let s = &text[r.clone()];
                carry = if planned == 0 {
                    tok.encode_part_ids_append(s, place, &mut Ready(carry), &mut ids)
                } else {
                    tok.encode_part_ids_append(s, place, &mut Never(carry), &mut ids)
                };
            }
            let e = t.elapsed().as_secs_f64();
            if round == 0 {
                *first_ids = ids.clone();
            } else {
                times.push(e);
            }
        }
    }
    assert_eq!(first_ids[0], first_ids[1], "plan and plain ids differ");
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratio = median(times[1].iter().zip(&times[0]).map(|(p, q)| p / q).collect());
    let [plain, plan] = times.map(median);
    println!("plain {plain:.4} s, planned {plan:.4} s (medians); planned / plain {ratio:.3}");
}
