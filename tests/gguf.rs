//! GGUF files (llama.cpp): the tokenizer in their metadata (`src/load/gguf/`).
//!
//! - llama.cpp's vocabulary test suite (`models/ggml-vocab-*.gguf` with `.gguf.inp` and
//!   `.gguf.out`, whose ids `tokenizers` made from the original models), on every tier, when
//!   `scripts/fetch-gguf-vocabs.sh` has fetched it (else each test says it is absent);
//! - GGUF files written here by a small test-only writer: every prefix of one truncated,
//!   damaged counts and types, missing and unknown keys, version 1 and big-endian files;
//! - the GGUF files `scripts/make-gguf-vocabs.py` made from `../shared/data`'s models give the
//!   ids of the file each was made from on the shared corpora (skipped when absent).

use std::path::{Path, PathBuf};

use simdtok::kernels::{Kernels, Tier};
use simdtok::{LoadOptions, Tokenizer};

#[path = "common/bad_files.rs"]
mod bad_files;
#[path = "common/golden.rs"]
mod golden;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files of `shared`'s corpora folder, in name order.
fn shared_corpora(shared: &Path) -> Vec<PathBuf> {
    let mut corpora: Vec<PathBuf> = std::fs::read_dir(shared.join("corpora"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    corpora.sort();
    corpora
}

/// The tiers this CPU runs; a tier `SIMDTOK_REQUIRE_TIERS` names that cannot run fails.
fn tiers() -> Vec<&'static Kernels> {
    let required = golden::required_tiers();
    let mut out = Vec::new();
    for tier in Tier::ALL {
        match Kernels::for_tier(tier) {
            Some(k) => out.push(k),
            None => assert!(
                !required.contains(&tier),
                "SIMDTOK_REQUIRE_TIERS names {tier}, which cannot run here"
            ),
        }
    }
    out
}

fn load_with(path: &Path, kernels: &'static Kernels, add_special_tokens: bool) -> Tokenizer {
    let options = LoadOptions {
        add_special_tokens,
        ..LoadOptions::default()
    };
    Tokenizer::from_file_with_options(path, kernels, &options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

// ---------------------------------------------------------------------------------------------
// llama.cpp's vocabulary test suite

/// Where `scripts/fetch-gguf-vocabs.sh` puts llama.cpp's `models/` (or `SIMDTOK_GGUF_VOCABS`).
fn vocab_dir() -> PathBuf {
    std::env::var_os("SIMDTOK_GGUF_VOCABS")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/data/gguf/llama.cpp/models"))
}

/// The cases of a `.gguf.inp`/`.gguf.out` pair, as llama.cpp's `test-tokenizer-0` reads them:
/// inputs separated by `\n__ggml_vocab_test__\n`, one line of space-separated ids per input.
fn read_cases(inp: &Path, out: &Path) -> Vec<(String, Vec<u32>)> {
    let raw = std::fs::read_to_string(inp).unwrap();
    let sep = "\n__ggml_vocab_test__\n";
    let mut inputs = Vec::new();
    let mut pos = 0;
    while pos < raw.len() {
        match raw[pos..].find(sep) {
            Some(next) => {
                inputs.push(raw[pos..pos + next].to_string());
                pos += next + sep.len();
            }
            None => {
                inputs.push(raw[pos..].to_string());
                break;
            }
        }
    }
    let outputs: Vec<Vec<u32>> = std::fs::read_to_string(out)
        .unwrap()
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|t| t.parse().expect("an id"))
                .collect()
        })
        .collect();
    assert_eq!(inputs.len(), outputs.len(), "{}", inp.display());
    inputs.into_iter().zip(outputs).collect()
}

/// The vocabulary files of the suite that have expected ids, sorted.
fn suite_files() -> Option<Vec<PathBuf>> {
    let dir = vocab_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!(
            "SKIPPED: llama.cpp's vocabulary files are absent from {} (run \
             scripts/fetch-gguf-vocabs.sh)",
            dir.display()
        );
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "gguf"))
        .collect();
    files.sort();
    Some(files)
}

/// The suite's vocabularies simdtok does not read right yet, each with what it does instead:
/// the test checks that this is still so (a fix must remove the entry), and
/// `docs/gguf.md` says why.
const NOT_YET: &[(&str, &str)] = &[
    // Gemma 4's own vocabulary type.
    ("ggml-vocab-gemma-4.gguf", "\"gemma4\" is not supported"),
];

#[test]
fn llama_cpp_vocab_suite() {
    let Some(files) = suite_files() else { return };
    let mut failures = Vec::new();
    let mut summary = Vec::new();
    let (mut cases_total, mut models) = (0, 0);
    for file in &files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let inp = file.with_extension("gguf.inp");
        let out = file.with_extension("gguf.out");
        if !inp.exists() || !out.exists() {
            // Loading alone must work for every vocabulary simdtok reads.
            match Tokenizer::from_file(file) {
                Ok(_) => summary.push(format!("{name}: loads (no expected ids shipped)")),
                Err(e) => summary.push(format!("{name}: not loaded: {e}")),
            }
            continue;
        }
        let cases = read_cases(&inp, &out);
        if let Some((_, what)) = NOT_YET.iter().find(|(n, _)| *n == name) {
            let outcome = match Tokenizer::from_file(file) {
                Err(e) => e.to_string(),
                Ok(tok) => {
                    let bad: Vec<_> = cases.iter().filter(|(t, w)| &tok.encode(t) != w).collect();
                    if std::env::var_os("SIMDTOK_GGUF_SHOW").is_some() {
                        for (t, w) in &bad {
                            eprintln!("{name}: {t:?}\n  got  {:?}\n  want {w:?}", tok.encode(t));
                        }
                    }
                    let n = bad.len();
                    format!("{n} differences")
                }
            };
            assert!(
                outcome.contains(what) && outcome != "0 differences",
                "{name} is listed as not read right yet ({what:?}), but: {outcome}"
            );
            summary.push(format!("{name}: NOT YET: {outcome}"));
            continue;
        }
        let mut differences = 0;
        for kernels in tiers() {
            let tok = match Tokenizer::from_file_with(file, kernels) {
                Ok(t) => t,
                Err(e) => {
                    failures.push(format!("{name}: {e}"));
                    differences = usize::MAX;
                    break;
                }
            };
            for (text, want) in &cases {
                let got = tok.encode(text);
                if &got != want {
                    differences += 1;
                    if failures.len() < 60 {
                        failures.push(format!(
                            "{name} [{}]: {text:?}\n   got  {got:?}\n   want {want:?}",
                            kernels.tier()
                        ));
                    }
                }
            }
        }
        models += 1;
        cases_total += cases.len();
        summary.push(format!(
            "{name}: {} cases, {} differences",
            cases.len(),
            if differences == usize::MAX {
                "not loaded".to_string()
            } else {
                differences.to_string()
            }
        ));
    }
    eprintln!("{}", summary.join("\n"));
    eprintln!("{cases_total} cases over {models} vocabularies");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Files written here: a test-only GGUF writer

/// A value of a metadata pair, as the writer writes it.
enum V {
    Str(String),
    U32(u32),
    Bool(bool),
    Strs(Vec<String>),
    F32s(Vec<f32>),
    I32s(Vec<i32>),
}

/// The bytes of a GGUF file (version 3) with `pairs` and `tensors` tensor infos claimed (none
/// written: the reader stops after the pairs).
fn gguf(version: u32, pairs: &[(&str, V)]) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
    }
    let mut out = b"GGUF".to_vec();
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(pairs.len() as u64).to_le_bytes());
    for (key, value) in pairs {
        string(&mut out, key);
        let array = |out: &mut Vec<u8>, ty: u32, n: usize| {
            out.extend_from_slice(&9u32.to_le_bytes());
            out.extend_from_slice(&ty.to_le_bytes());
            out.extend_from_slice(&(n as u64).to_le_bytes());
        };
        match value {
            V::Str(s) => {
                out.extend_from_slice(&8u32.to_le_bytes());
                string(&mut out, s);
            }
            V::U32(v) => {
                out.extend_from_slice(&4u32.to_le_bytes());
                out.extend_from_slice(&v.to_le_bytes());
            }
            V::Bool(b) => {
                out.extend_from_slice(&7u32.to_le_bytes());
                out.push(*b as u8);
            }
            V::Strs(v) => {
                array(&mut out, 8, v.len());
                for s in v {
                    string(&mut out, s);
                }
            }
            V::F32s(v) => {
                array(&mut out, 6, v.len());
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            V::I32s(v) => {
                array(&mut out, 5, v.len());
                for x in v {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
    }
    out
}

/// A small `llama` (SentencePiece BPE) vocabulary: `<unk>`, `<s>`, `</s>`, the 256 byte
/// pieces, then `▁`, letters and merged pieces, scored so that longer pieces win.
fn small_llama_pairs() -> Vec<(&'static str, V)> {
    let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    let mut types = vec![2, 3, 3];
    for b in 0..=255u8 {
        tokens.push(format!("<0x{b:02X}>"));
        types.push(6);
    }
    for t in [
        "▁", "h", "e", "l", "o", "w", "r", "d", "he", "ll", "▁he", "llo", "▁hello",
    ] {
        tokens.push(t.into());
        types.push(1);
    }
    let scores: Vec<f32> = (0..tokens.len())
        .map(|i| {
            if i < 259 {
                0.0
            } else {
                -((tokens.len() - i) as f32)
            }
        })
        .collect();
    vec![
        ("general.architecture", V::Str("llama".into())),
        ("tokenizer.ggml.model", V::Str("llama".into())),
        ("tokenizer.ggml.tokens", V::Strs(tokens)),
        ("tokenizer.ggml.scores", V::F32s(scores)),
        ("tokenizer.ggml.token_type", V::I32s(types)),
        ("tokenizer.ggml.bos_token_id", V::U32(1)),
        ("tokenizer.ggml.eos_token_id", V::U32(2)),
        ("tokenizer.ggml.unknown_token_id", V::U32(0)),
        ("tokenizer.ggml.add_bos_token", V::Bool(true)),
        ("tokenizer.ggml.add_eos_token", V::Bool(false)),
    ]
}

fn write(bytes: &[u8]) -> PathBuf {
    bad_files::write("gguf", &[("model.gguf", bytes)])
}

fn load_error(bytes: &[u8]) -> String {
    match bad_files::load_checked(&write(bytes)) {
        Ok(_) => panic!("a bad GGUF file loaded"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn small_llama_vocabulary_encodes_and_adds_its_bos() {
    let path = write(&gguf(3, &small_llama_pairs()));
    for kernels in tiers() {
        let plain = load_with(&path, kernels, false);
        // "▁hello" is one piece; "world" falls back to letters and bytes.
        let ids = plain.encode("hello");
        assert_eq!(ids, vec![271], "{}", kernels.tier());
        let special = load_with(&path, kernels, true);
        assert_eq!(special.encode("hello"), vec![1, 271]);
        assert_eq!(special.document_tokens().bos.as_ref().unwrap().id, 1);
        assert_eq!(special.document_tokens().eos.as_ref().unwrap().id, 2);
        // A byte the vocabulary has no piece for becomes its byte piece: 'x' = 0x78.
        assert_eq!(plain.encode("x"), vec![259, 3 + 0x78]);
    }
    // Version 2 has the same layout.
    let v2 = write(&gguf(2, &small_llama_pairs()));
    assert_eq!(
        Tokenizer::from_file(&v2).unwrap().encode("hello"),
        vec![271]
    );
}

#[test]
fn every_truncation_of_a_small_file_is_an_error() {
    let bytes = gguf(3, &small_llama_pairs());
    // Under 4 bytes there is no magic: not a GGUF file (another kind's error).
    for len in 4..bytes.len() {
        let msg = load_error(&bytes[..len]);
        assert!(
            msg.contains("GGUF") || msg.contains("tokenizer.ggml") || msg.contains("empty"),
            "prefix {len}: {msg}"
        );
    }
}

#[test]
fn damaged_files_are_errors_never_panics() {
    let bytes = gguf(3, &small_llama_pairs());
    for damaged in bad_files::damaged(&bytes, 3000, 0x6767_7566) {
        let _ = bad_files::load_checked(&write(&damaged));
    }
}

/// The offset of the `u64` count of the array of `key` in `bytes`.
fn count_offset(bytes: &[u8], key: &str) -> usize {
    let at = bytes
        .windows(key.len())
        .position(|w| w == key.as_bytes())
        .unwrap();
    at + key.len() + 4 + 4
}

#[test]
fn huge_counts_are_errors_not_allocations() {
    let bytes = gguf(3, &small_llama_pairs());
    // The key-value count.
    let mut b = bytes.clone();
    b[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(load_error(&b).contains("key-value pairs claimed"));
    // The tokens array's count, and its first string's length.
    for (extra, what) in [(0, "claims"), (8, "needs")] {
        let mut b = bytes.clone();
        let at = count_offset(&b, "tokenizer.ggml.tokens") + extra;
        b[at..at + 8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
        let msg = load_error(&b);
        assert!(msg.contains(what), "{msg}");
        assert!(msg.contains("tokenizer.ggml.tokens"), "{msg}");
    }
}

#[test]
fn version_1_and_big_endian_files_are_refused_by_name() {
    let mut bytes = gguf(3, &small_llama_pairs());
    assert!(load_error(&gguf(1, &small_llama_pairs())).contains("version 1 is not supported"));
    bytes[4..8].copy_from_slice(&3u32.to_be_bytes());
    assert!(load_error(&bytes).contains("big-endian GGUF is not supported"));
}

fn with(pairs: Vec<(&'static str, V)>, key: &str, value: Option<V>) -> Vec<u8> {
    let mut pairs: Vec<_> = pairs.into_iter().filter(|(k, _)| *k != key).collect();
    if let Some(v) = value {
        pairs.push((Box::leak(key.to_string().into_boxed_str()), v));
    }
    gguf(3, &pairs)
}

#[test]
fn missing_unknown_and_mistyped_keys_are_errors_naming_them() {
    let base = small_llama_pairs;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (
            with(base(), "tokenizer.ggml.tokens", None),
            "no tokenizer.ggml.tokens",
        ),
        (
            with(base(), "tokenizer.ggml.model", None),
            "no tokenizer.ggml.model",
        ),
        (
            with(base(), "tokenizer.ggml.model", Some(V::Str("rwkv".into()))),
            "\"rwkv\" is not supported (simdtok reads llama, gpt2, bert, t5)",
        ),
        (
            with(base(), "tokenizer.ggml.model", Some(V::U32(1))),
            "tokenizer.ggml.model (offset",
        ),
        (
            with(base(), "tokenizer.ggml.tokens", Some(V::F32s(vec![1.0]))),
            "tokenizer.ggml.tokens (offset",
        ),
        (
            with(base(), "tokenizer.ggml.scores", Some(V::F32s(vec![1.0]))),
            "tokenizer.ggml.scores has 1 entries",
        ),
        (
            with(base(), "tokenizer.ggml.add_bos_token", Some(V::U32(1))),
            "not a bool",
        ),
        (
            gguf(
                3,
                &[
                    ("tokenizer.ggml.model", V::Str("gpt2".into())),
                    ("tokenizer.ggml.pre", V::Str("no-such-pre".into())),
                    ("tokenizer.ggml.tokens", V::Strs(vec!["a".into()])),
                    ("tokenizer.ggml.merges", V::Strs(vec![])),
                ],
            ),
            "\"no-such-pre\" is not a pre-tokenizer simdtok knows (it knows default, llama3",
        ),
    ];
    for (bytes, want) in cases {
        let msg = load_error(&bytes);
        assert!(msg.contains(want), "want {want:?} in: {msg}");
    }
}

// ---------------------------------------------------------------------------------------------
// Round trip: a GGUF made from a tokenizer.json gives that file's ids

/// Where `scripts/make-gguf-vocabs.py` writes its files (or `SIMDTOK_GGUF_ROUNDTRIP`).
fn roundtrip_dir() -> PathBuf {
    std::env::var_os("SIMDTOK_GGUF_ROUNDTRIP")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("tests/data/gguf/roundtrip"))
}

/// The first `max` bytes of `text`, cut at a line end.
fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let cut = text.as_bytes()[..max]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap_or(0);
    &text[..cut]
}

#[test]
fn gguf_made_from_a_tokenizer_json_gives_its_ids_on_the_shared_corpora() {
    let shared = root().join("../shared/data");
    let dir = roundtrip_dir();
    if !shared.join("corpora").is_dir() || !dir.is_dir() {
        eprintln!(
            "SKIPPED: needs {} and the files scripts/make-gguf-vocabs.py writes into {}",
            shared.display(),
            dir.display()
        );
        return;
    }
    let corpora = shared_corpora(&shared);
    let texts: Vec<(String, String)> = corpora
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, head(&text, 48 << 10).to_string())
        })
        .collect();
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for (gguf_name, json_name) in [
        ("llama3", "llama3"),
        ("qwen3", "qwen3"),
        ("gpt4o", "gpt4o"),
        ("minilm", "all-MiniLM-L6-v2.bert-uncased"),
    ] {
        let gguf_path = dir.join(format!("{gguf_name}.gguf"));
        let json_path = shared.join(format!(
            "models/hf-tokenizer-json/{json_name}.tokenizer.json"
        ));
        let (mut lines, mut differ) = (0, 0);
        for kernels in tiers() {
            let a = load_with(&gguf_path, kernels, false);
            let b = load_with(&json_path, kernels, false);
            for (corpus, text) in &texts {
                for line in text.lines() {
                    lines += 1;
                    let (x, y) = (a.encode(line), b.encode(line));
                    if x != y {
                        differ += 1;
                        if failures.len() < 20 {
                            failures.push(format!(
                                "{gguf_name} [{}] {corpus}: {line:?}\n  gguf {x:?}\n  json {y:?}",
                                kernels.tier()
                            ));
                        }
                    }
                }
            }
        }
        report.push(format!("{gguf_name}: {lines} lines, {differ} differences"));
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Where llama.cpp's tokenizer and the model's differ (docs/gguf.md): what simdtok does

/// A `llama` GGUF stores no normalizer: text is not normalized (a `.model` with `nmt_nfkc`
/// would fold the full-width letter; the GGUF cannot say so), and a control token's text in
/// the input is text, as SentencePiece has it (llama.cpp's `parse_special` is off here too).
#[test]
fn divergence_llama_vocabulary_no_normalizer_and_control_text_is_text() {
    let path = write(&gguf(3, &small_llama_pairs()));
    for kernels in tiers() {
        let tok = load_with(&path, kernels, false);
        // "ｈ" (U+FF48) is not folded to "h": the bytes of its UTF-8 are its byte pieces.
        let ids = tok.encode("ｈ");
        assert_eq!(ids, vec![259, 3 + 0xEF, 3 + 0xBD, 3 + 0x88]);
        // "<s>" in the text is not the control piece 1.
        assert!(!tok.encode("<s>").contains(&1));
    }
}

/// A `gpt2` GGUF stores no normalizer either: Qwen 3's tokenizer.json composes (NFC) first,
/// its GGUF does not, so a decomposed "é" gives different ids (both are what each file
/// says; llama.cpp does as the GGUF does).
#[test]
fn divergence_gpt2_vocabulary_has_no_normalizer() {
    let gguf_path = roundtrip_dir().join("qwen3.gguf");
    let json_path = root().join("../shared/data/models/hf-tokenizer-json/qwen3.tokenizer.json");
    if !gguf_path.exists() || !json_path.exists() {
        eprintln!(
            "SKIPPED: needs {} and {}",
            gguf_path.display(),
            json_path.display()
        );
        return;
    }
    for kernels in tiers() {
        let (g, j) = (
            load_with(&gguf_path, kernels, false),
            load_with(&json_path, kernels, false),
        );
        assert_eq!(g.encode("caf\u{e9}"), j.encode("caf\u{e9}"));
        assert_eq!(j.encode("cafe\u{301}"), j.encode("caf\u{e9}"));
        assert_ne!(g.encode("cafe\u{301}"), j.encode("cafe\u{301}"));
    }
}

/// `--add-special-tokens` on the suite's files: what `add_bos_token`/`add_eos_token` say, else
/// llama.cpp's default for the type (BOS for `llama` and Llama 3's `pre`; `[CLS] … [SEP]` for
/// `bert`), refused when nothing would be added (GPT-2).
#[test]
fn add_special_tokens_follows_the_files_flags() {
    let Some(files) = suite_files() else { return };
    let find = |name: &str| files.iter().find(|p| p.ends_with(name)).cloned();
    for kernels in tiers() {
        for (name, prefix, suffix) in [
            ("ggml-vocab-llama-spm.gguf", vec![1], vec![]),
            ("ggml-vocab-llama-bpe.gguf", vec![128000], vec![]),
            ("ggml-vocab-bert-bge.gguf", vec![101], vec![102]),
        ] {
            let Some(path) = find(name) else { continue };
            let plain = load_with(&path, kernels, false).encode("Hello world");
            let want: Vec<u32> = prefix
                .iter()
                .chain(&plain)
                .chain(&suffix)
                .copied()
                .collect();
            assert_eq!(
                load_with(&path, kernels, true).encode("Hello world"),
                want,
                "{name}"
            );
        }
        if let Some(path) = find("ggml-vocab-gpt-2.gguf") {
            let options = LoadOptions {
                add_special_tokens: true,
                ..LoadOptions::default()
            };
            let Err(err) = Tokenizer::from_file_with_options(&path, kernels, &options) else {
                panic!("GPT-2's GGUF adds nothing: --add-special-tokens must be refused");
            };
            assert!(
                err.to_string().contains("cannot add special tokens"),
                "{err}"
            );
        }
    }
}

/// The suite's `llama` and `t5` files against the SentencePiece `.model` files
/// `../shared/data` rebuilt from them (`*.from-gguf.model`; `sentencepiece` reproduces
/// llama-spm's expected ids with the first): the same ids on the shared corpora, so the `t5`
/// path (unigram with `precompiled_charsmap`, which the suite has no expected ids for) runs
/// on real text too.
#[test]
fn llama_and_t5_files_match_their_sentencepiece_models_on_the_shared_corpora() {
    let shared = root().join("../shared/data");
    let Some(files) = suite_files() else { return };
    if !shared.join("corpora").is_dir() {
        eprintln!("SKIPPED: {} is absent", shared.display());
        return;
    }
    let corpora = shared_corpora(&shared);
    let texts: Vec<String> = corpora
        .iter()
        .map(|p| head(&std::fs::read_to_string(p).unwrap(), 16 << 10).to_string())
        .collect();
    for (gguf_name, model) in [
        ("ggml-vocab-llama-spm.gguf", "llama-spm.from-gguf.model"),
        (
            "ggml-vocab-nomic-bert-moe.gguf",
            "xlm-roberta-nomic.from-gguf.model",
        ),
    ] {
        let Some(gguf_path) = files.iter().find(|p| p.ends_with(gguf_name)) else {
            continue;
        };
        let model_path = shared.join("models/sentencepiece").join(model);
        let (mut lines, mut count, mut differ) = (0, 0, Vec::new());
        for kernels in tiers() {
            let a = load_with(gguf_path, kernels, false);
            let b = load_with(&model_path, kernels, false);
            for line in texts.iter().flat_map(|t| t.lines()) {
                lines += 1;
                let differs = a.encode(line) != b.encode(line);
                count += usize::from(differs);
                if differs && differ.len() < 5 {
                    differ.push(format!(
                        "{gguf_name} [{}]: {line:?}\n  gguf  {:?}\n  model {:?}",
                        kernels.tier(),
                        a.encode(line),
                        b.encode(line)
                    ));
                }
            }
        }
        eprintln!("{gguf_name}: {lines} lines, {count} differences");
        assert!(differ.is_empty(), "{}", differ.join("\n"));
    }
}
