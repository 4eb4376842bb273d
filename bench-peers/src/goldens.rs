//! Every implementation against the committed goldens: the edge cases of
//! `tests/golden/bpe/<model>.jsonl.gz` (ids from tiktoken 0.14.0 for the rank files and GPT-2,
//! `tokenizers` 0.23.3 for the `tokenizer.json` files, written by `tests/golden/gen_bpe.py`),
//! encoded once by each implementation that loaded the model. The timed tables check every
//! implementation against one peer in this process; this checks them all, that peer included,
//! against the Python references on texts written to break encoders (contractions, whitespace
//! runs, CRLF, emoji sequences, words that collide in a hash, …).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::Loaded;
use crate::peers::Impl;

/// One edge case of a golden file.
struct Case {
    name: String,
    text: String,
    ids: Vec<u32>,
}

/// How one implementation did on a model's edge cases.
pub struct Outcome {
    pub imp: Impl,
    pub cases: usize,
    /// The names of the cases whose ids differ, in the file's order: first those whose text
    /// holds no special-token syntax, then (`special`) those that do.
    pub differ: Vec<String>,
    pub special: Vec<String>,
}

/// Whether a text holds the syntax of special tokens (`<|…|>`, `<s>`, `</s>`, `<unk>`). An API
/// that matches added tokens in the text (`tokenizers`, and the peers that load its files) and
/// one that does not (tiktoken's `encode_ordinary`, which the goldens of rank files record)
/// differ there by design, not by mistake.
fn holds_special_syntax(text: &str) -> bool {
    ["<|", "<s>", "</s>", "<unk>"]
        .iter()
        .any(|s| text.contains(s))
}

/// The golden file of the model `name`, beside this crate.
fn golden_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/golden/bpe")
        .join(format!("{name}.jsonl.gz"))
}

/// The edge cases that carry their text and ids (the generated ones carry only digests).
fn edge_cases(path: &Path) -> Result<Vec<Case>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let reader = BufReader::new(flate2::read::GzDecoder::new(file));
    let mut cases = Vec::new();
    // The first line is the header.
    for line in reader.lines().skip(1) {
        let line = line.map_err(|e| format!("{}: {e}", path.display()))?;
        let v: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| format!("{}: {e}", path.display()))?;
        if v["source"] != "edge" {
            continue;
        }
        let (Some(text), Some(ids)) = (v["text"].as_str(), v["ids"].as_array()) else {
            continue;
        };
        let ids = ids
            .iter()
            .map(|id| id.as_u64().and_then(|id| u32::try_from(id).ok()))
            .collect::<Option<Vec<u32>>>()
            .ok_or_else(|| format!("{}: an id is not a u32", path.display()))?;
        cases.push(Case {
            name: v["name"].as_str().unwrap_or("?").to_owned(),
            text: text.to_owned(),
            ids,
        });
    }
    Ok(cases)
}

/// Encodes the model's edge cases with every loaded implementation; `Err` when the model has no
/// golden file or it cannot be read.
pub fn check(model: &str, encoders: &mut [Loaded]) -> Result<Vec<Outcome>, String> {
    let cases = edge_cases(&golden_path(model))?;
    let mut outcomes = Vec::new();
    for (imp, enc) in encoders.iter_mut() {
        let Ok(enc) = enc else { continue };
        let (special, differ): (Vec<&Case>, Vec<&Case>) = cases
            .iter()
            .filter(|c| !enc.encode(&c.text).is_ok_and(|ids| ids == c.ids.as_slice()))
            .partition(|c| holds_special_syntax(&c.text));
        let names = |v: Vec<&Case>| v.into_iter().map(|c| c.name.clone()).collect();
        outcomes.push(Outcome {
            imp: *imp,
            cases: cases.len(),
            differ: names(differ),
            special: names(special),
        });
    }
    Ok(outcomes)
}
