//! BPE training against Hugging Face `tokenizers` 0.23.2's `BpeTrainer` (the goldens of
//! `tests/golden/train_bpe/`, made by `tests/golden/gen_train_bpe.py`; format in
//! tests/golden/README.md, "BPE training"): the same vocabulary (tokens and ids) and merges on
//! real corpora, byte-level and whitespace, at several sizes, minimum frequencies and length
//! limits, with special tokens; then the round trip: the `tokenizer.json` simdtok writes, loaded
//! by simdtok, gives the ids Python `tokenizers` gives with the reference's file on held-out
//! text, and the rank file gives `tiktoken`'s. One trial per golden file and tier (the tier of
//! the pre-tokenizer's scanners).

#[path = "common/golden.rs"]
mod golden;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use libtest_mimic::{Arguments, Failed, Trial};
use serde_json::Value;
use simdtok::kernels::{Kernels, Tier};
use simdtok::train::{self, Counter, Counting, PreTokenizer, Settings};
use simdtok::{LoadOptions, TiktokenEncoding, Tokenizer};

use golden::{ids_digest, location_path, required_tiers, sha256_hex};

const DIR: &str = "tests/golden/train_bpe";

fn main() {
    let args = Arguments::from_args();
    let required = required_tiers();
    let mut trials = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap_or_else(|e| panic!("{DIR}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files in {DIR}");
    for file in files {
        let golden = Arc::new(read(&file));
        let case = golden["case"].as_str().expect("case").replace('-', "_");
        let corpus = corpus_path(&golden);
        for tier in Tier::ALL {
            let name = format!("{case}::{}", tier.name().replace('.', ""));
            let golden = golden.clone();
            let trial = match (Kernels::for_tier(tier), &corpus) {
                (Some(kernels), Ok(corpus)) => {
                    let corpus = corpus.clone();
                    Trial::test(name, move || check(&golden, &corpus, kernels))
                }
                (None, _) if required.contains(&tier) => Trial::test(name, move || {
                    Err(format!("SIMDTOK_REQUIRE_TIERS names {tier}, which cannot run here").into())
                }),
                (None, _) => Trial::test(name, || Err("skipped: tier not here".into()))
                    .with_ignored_flag(true),
                (Some(_), Err(why)) => {
                    if !args.list {
                        println!("{name}: skipped: {why}");
                    }
                    let why = why.clone();
                    Trial::test(name, move || Err(format!("skipped: {why}").into()))
                        .with_ignored_flag(true)
                }
            };
            trials.push(trial);
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

fn read(path: &Path) -> Value {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).expect("golden file"))
        .read_to_end(&mut raw)
        .expect("gzip");
    serde_json::from_slice(&raw).expect("one JSON object")
}

/// Where the golden's corpus is, if it is here.
fn corpus_path(golden: &Value) -> Result<PathBuf, String> {
    location_path(golden["corpus"]["location"].as_str().expect("location"))
}

/// The training and held-out texts: the lines (split on `\n`, less a `\r` before it); line `i`
/// trains when `i % 10 != 9`, and the first 300 non-empty others are held out.
fn texts(bytes: &[u8]) -> (Vec<&str>, Vec<&str>) {
    let text = std::str::from_utf8(bytes).expect("the corpus is UTF-8");
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let (mut train, mut held) = (Vec::new(), Vec::new());
    for (i, line) in lines.into_iter().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        if i % 10 != 9 {
            train.push(line);
        } else if !line.is_empty() && held.len() < 300 {
            held.push(line);
        }
    }
    (train, held)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|s| s.as_str().expect("a string").to_owned())
        .collect()
}

fn ids(value: &Value) -> Vec<Vec<u32>> {
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|row| {
            row.as_array()
                .expect("ids")
                .iter()
                .map(|id| id.as_u64().expect("an id") as u32)
                .collect()
        })
        .collect()
}

fn check(golden: &Value, corpus: &Path, kernels: &'static Kernels) -> Result<(), Failed> {
    let bytes = std::fs::read(corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    if sha256_hex(&bytes) != golden["corpus"]["sha256"].as_str().expect("sha256") {
        return Err(format!(
            "{}: not the corpus the goldens were made from",
            corpus.display()
        )
        .into());
    }
    let settings = &golden["settings"];
    let pre = match settings["pre_tokenizer"].as_str().expect("pre_tokenizer") {
        "gpt2" => PreTokenizer::Gpt2,
        "cl100k" => PreTokenizer::Cl100k,
        "o200k" => PreTokenizer::O200k,
        "whitespace" => PreTokenizer::Whitespace,
        other => return Err(format!("unknown pre-tokenizer {other}").into()),
    };
    if let Some(pattern) = pre.pattern() {
        assert_eq!(Some(pattern.regex_source()), golden["pattern"].as_str());
    }
    let specials = strings(&settings["special_tokens"]);
    let (train_texts, held) = texts(&bytes);
    let mut counter = Counter::new(pre, &specials, kernels);
    for text in &train_texts {
        counter.add(text);
    }
    let counts = counter.into_counts();
    let trained = train::train(
        &counts,
        pre,
        &specials,
        &Settings {
            vocab_size: settings["vocab_size"].as_u64().expect("vocab_size") as usize,
            min_frequency: settings["min_frequency"].as_u64().expect("min_frequency"),
            max_token_length: settings["max_token_length"].as_u64().map(|l| l as usize),
            counting: Counting::Windows,
        },
        &mut |_| {},
    )
    .map_err(|e| e.to_string())?;

    // The vocabulary and the merges.
    let vocab = strings(&golden["vocab"]);
    let tokens = &trained.trained.tokens;
    if let Some(id) = (0..vocab.len().max(tokens.len())).find(|&i| vocab.get(i) != tokens.get(i)) {
        return Err(format!(
            "vocabularies differ first at id {id}: reference {:?}, simdtok {:?} ({} and {} tokens)",
            vocab.get(id),
            tokens.get(id),
            vocab.len(),
            tokens.len()
        )
        .into());
    }
    let merges: Vec<(String, String)> = golden["merges"]
        .as_array()
        .expect("merges")
        .iter()
        .map(|m| {
            let pair = strings(m);
            (pair[0].clone(), pair[1].clone())
        })
        .collect();
    let ours: Vec<(String, String)> = trained
        .saved_merges()
        .into_iter()
        .map(|(l, r)| (tokens[l as usize].clone(), tokens[r as usize].clone()))
        .collect();
    if let Some(rank) = (0..merges.len().max(ours.len())).find(|&i| merges.get(i) != ours.get(i)) {
        return Err(format!(
            "merges differ first at rank {rank}: reference {:?}, simdtok {:?}",
            merges.get(rank),
            ours.get(rank)
        )
        .into());
    }

    // Round trips through the files simdtok writes.
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let json = dir.path().join("trained.json");
    std::fs::write(&json, trained.tokenizer_json()).map_err(|e| e.to_string())?;
    let tokenizer = Tokenizer::from_file_with_options(&json, kernels, &LoadOptions::default())
        .map_err(|e| format!("the written tokenizer.json does not load: {e}"))?;
    compare_ids("tokenizers", &tokenizer, &held, golden)?;
    if let Some(encoding) = match pre {
        PreTokenizer::Gpt2 => Some(TiktokenEncoding::R50k),
        PreTokenizer::Cl100k => Some(TiktokenEncoding::Cl100k),
        PreTokenizer::O200k => Some(TiktokenEncoding::O200k),
        PreTokenizer::Whitespace => None,
    } {
        let ranks = dir.path().join("trained.tiktoken");
        std::fs::write(&ranks, trained.tiktoken().map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string())?;
        let options = LoadOptions {
            tiktoken_encoding: Some(encoding),
            ..Default::default()
        };
        let tokenizer = Tokenizer::from_file_with_options(&ranks, kernels, &options)
            .map_err(|e| format!("the written rank file does not load: {e}"))?;
        compare_ids("tiktoken", &tokenizer, &held, golden)?;
    }
    Ok(())
}

/// The ids of `tokenizer` on the held-out texts against the golden's for `reference`: the ids
/// themselves (`heldout_policy` `full`), or their counts and digests (`hash`: corpora whose
/// license keeps their text out of the repository).
fn compare_ids(
    reference: &str,
    tokenizer: &Tokenizer,
    texts: &[&str],
    golden: &Value,
) -> Result<(), Failed> {
    let got: Vec<Vec<u32>> = texts.iter().map(|t| tokenizer.encode(t)).collect();
    match golden["heldout_policy"].as_str().unwrap_or("full") {
        "full" => {
            let want = ids(&golden[format!("{reference}_ids").as_str()]);
            assert_eq!(texts.len(), want.len(), "held-out texts");
            for ((text, got), want) in texts.iter().zip(&got).zip(&want) {
                if got != want {
                    return Err(format!(
                        "{reference}: ids differ on held-out text {text:?}:\n  reference {want:?}\n  simdtok   {got:?}"
                    )
                    .into());
                }
            }
        }
        "hash" => {
            let counts = golden[format!("{reference}_n_ids").as_str()]
                .as_array()
                .expect("counts");
            let digests = strings(&golden[format!("{reference}_ids_sha256").as_str()]);
            assert_eq!(texts.len(), counts.len(), "held-out texts");
            for (i, got) in got.iter().enumerate() {
                if counts[i].as_u64() != Some(got.len() as u64) || ids_digest(got) != digests[i] {
                    return Err(format!(
                        "{reference}: ids differ on held-out text {i} ({} ids here, {} in the reference)",
                        got.len(),
                        counts[i]
                    )
                    .into());
                }
            }
        }
        other => return Err(format!("unknown heldout_policy {other}").into()),
    }
    Ok(())
}
