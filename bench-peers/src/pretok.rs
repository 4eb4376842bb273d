//! The pre-tokenizer alone: simdtok's scanners against `tokenizers` 1.0's (the `bitcannon`
//! crate, which `tk-encode` calls for the GPT patterns it recognises), on the 20 MB English
//! inputs, one thread. Both produce the pieces' byte spans of every text; the spans are compared
//! before anything is timed. This separates the split from the rest of the encoding when the
//! two libraries' whole encodings are compared.

use std::fmt::Write as _;
use std::time::Instant;

use simdtok::pretokenize::{Pattern, Splitter};

use crate::Input;
use crate::measure::median;
use crate::report::{fmt_mbps, ratio};

/// The patterns compared, by the model whose regex each is.
const PATTERNS: [(&str, Pattern); 2] = [
    ("cl100k_base", Pattern::Cl100k { digits: 3 }),
    ("o200k_base", Pattern::O200k),
];

/// One pattern on one input.
pub struct Row {
    model: &'static str,
    input: String,
    pieces: usize,
    /// MB/s (10^6 bytes of the texts, line ends excluded): simdtok, bitcannon; `None` where the
    /// spans differed (then not timed).
    simdtok: Option<f64>,
    bitcannon: Option<f64>,
    /// The first text whose spans differ, if any.
    differs: Option<usize>,
}

/// `tokenizers` 1.0's split of one text, with its scratch kept across texts as `tk-encode` keeps
/// it: one atom tag per byte, then the grammar's bitstream program over the tags.
#[derive(Default)]
struct Bitcannon {
    tags: Vec<u8>,
    starts: Vec<u64>,
    flags: Vec<u64>,
    later: Vec<u64>,
    out: Vec<bitcannon::Span>,
}

impl Bitcannon {
    /// The spans of `text` under the model's pattern, in `self.out`; their number.
    fn split(&mut self, model: &str, text: &[u8]) -> usize {
        let n = text.len();
        if n == 0 {
            return 0;
        }
        // The sizes `tk-encode` gives them (`split_on_bits`): a tag per byte, a bit per byte
        // plus a word, twice that for the o200k family's look-ahead streams, a span per byte plus one.
        let words = n.div_ceil(64) + 1;
        if self.tags.len() < n {
            self.tags.resize(n, 0);
            self.out.resize(n + 1, bitcannon::Span::new(0, 0));
        }
        if self.starts.len() < words {
            self.starts.resize(words, 0);
            self.flags.resize(words, 0);
            self.later.resize(2 * words, 0);
        }
        bitcannon::classify::classify(text, &mut self.tags[..n]);
        let (tags, starts, flags) = (
            &self.tags[..n],
            &mut self.starts[..words],
            &mut self.flags[..words],
        );
        let out = &mut self.out[..n + 1];
        if model == "o200k_base" {
            bitcannon::bitcannon_o200k(text, tags, starts, flags, &mut self.later[..2 * words], out)
        } else {
            bitcannon::bitcannon_cl100k(text, tags, starts, flags, out)
        }
    }
}

/// Runs every pattern over every input: checks the spans, then `passes` timed passes of each
/// splitter, alternating.
pub fn run(inputs: &[Input], models: &[String], passes: usize) -> Vec<Row> {
    let Ok(kernels) = simdtok::kernels::Kernels::active() else {
        return Vec::new();
    };
    let mut rows = Vec::new();
    for (model, pattern) in PATTERNS {
        if !crate::matches(models, model) {
            continue;
        }
        let splitter = Splitter::new(pattern, kernels);
        let mut bc = Bitcannon::default();
        for input in inputs {
            eprintln!("   pre-tokenizer alone: {model} on {}", input.name);
            let texts: Vec<&str> = input.spans.iter().map(|s| &input.text[s.clone()]).collect();
            let mut pieces = 0;
            let mut differs = None;
            let mut mine = Vec::new();
            for (i, text) in texts.iter().enumerate() {
                mine.clear();
                splitter.split(text, |s, e| mine.push((s, e)));
                let k = bc.split(model, text.as_bytes());
                let theirs = bc.out[..k]
                    .iter()
                    .map(|s| (s.start as usize, s.end as usize));
                pieces += mine.len();
                if !mine.iter().copied().eq(theirs) {
                    differs = Some(i);
                    break;
                }
            }
            let (mut ours, mut others) = (Vec::new(), Vec::new());
            if differs.is_none() {
                for _ in 0..passes {
                    let start = Instant::now();
                    let mut sum = 0usize;
                    for text in &texts {
                        splitter.split(text, |s, e| sum = sum.wrapping_add(s ^ e));
                    }
                    std::hint::black_box(sum);
                    ours.push(start.elapsed().as_secs_f64());
                    let start = Instant::now();
                    let mut sum = 0usize;
                    for text in &texts {
                        let k = bc.split(model, text.as_bytes());
                        for s in &bc.out[..k] {
                            sum = sum.wrapping_add((s.start ^ s.end) as usize);
                        }
                    }
                    std::hint::black_box(sum);
                    others.push(start.elapsed().as_secs_f64());
                }
            }
            let mbps = |t: &[f64]| (!t.is_empty()).then(|| input.bytes as f64 / median(t) / 1e6);
            rows.push(Row {
                model,
                input: input.name.clone(),
                pieces,
                simdtok: mbps(&ours),
                bitcannon: mbps(&others),
                differs,
            });
        }
    }
    rows
}

/// The rows as a Markdown section.
pub fn report(rows: &[Row], passes: usize) -> String {
    let mut out = String::new();
    if rows.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "\n**The pre-tokenizer alone** (the pieces' spans of every text, nothing encoded; \
         `tokenizers` 1.0 splits these patterns with the `bitcannon` crate: `classify`, then the \
         pattern's bitstream program, with its scratch reused across texts as `tk-encode` does; \
         the spans of every text were compared first; MB/s = 10^6 input bytes / median seconds \
         of {passes} alternating passes, one thread):\n"
    );
    out.push_str(
        "| pattern | input | pieces | simdtok | `tokenizers` 1.0 (`bitcannon`) | simdtok ÷ `tokenizers` 1.0 |\n\
         |:---|:---|---:|---:|---:|---:|\n",
    );
    for r in rows {
        let cell = |v: Option<f64>| v.map_or("–".to_owned(), fmt_mbps);
        let _ = write!(
            out,
            "| `{}` | `{}` | {} | {} | {} | {} |",
            r.model,
            r.input,
            r.pieces,
            cell(r.simdtok),
            cell(r.bitcannon),
            ratio(r.simdtok, r.bitcannon)
        );
        if let Some(i) = r.differs {
            let _ = write!(out, " spans differ at text {i}: not timed |");
        }
        out.push('\n');
    }
    out
}
