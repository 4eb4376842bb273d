//! The implementations compared: simdtok and its peers, each behind one `encode` that returns the
//! ids of a text (the peer's cheapest id-only API). SentencePiece `.model` files, BERT WordPiece
//! models (`vocab.txt`, WordPiece `tokenizer.json`) and byte-level BPE (tiktoken rank files, GPT-2
//! `encoder.json` + `vocab.bpe`, BPE `tokenizer.json`).

use std::ffi::{c_char, c_int, c_void};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

// Linked for its static libsentencepiece (the shim in cpp/ calls into it).
use sentencepiece_sys as _;

/// One implementation, loaded with one model.
pub trait Encoder {
    /// The ids of `text` (valid until the next call), or why there are none.
    fn encode(&mut self, text: &str) -> Result<&[u32], String>;

    /// Makes the implementation encode on the calling thread only, where it would otherwise use
    /// more (called once after loading, outside the load-time measurement).
    fn one_thread(&mut self) {}
}

/// The implementations, in table order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Impl {
    /// simdtok, active tier, `encode_ids_into` with a reused vector (ids only, like the peers).
    Simdtok,
    /// The reference C++ library, `SentencePieceProcessor::Encode(text, &ids)` through cpp/.
    SpmCpp,
    /// The `sentencepiece` crate's `encode` (pieces with ids, through a serialized proto).
    SpmCrate,
    /// Python `sentencepiece` (0.2.3 here, the version of simdtok's goldens), in its own process:
    /// see python.rs.
    SpmPy,
    /// simdtok's WordPiece with [`simdtok::WordPieceAlgorithm::Fast`], ids only.
    SimdtokFast,
    /// simdtok's WordPiece with [`simdtok::WordPieceAlgorithm::Linear`], ids only.
    SimdtokLinear,
    /// Hugging Face `tokenizers`, the WordPiece reference: `encode_fast(text, false)`.
    Tokenizers,
    /// `kitoken`, converted from the `.model` or from a `tokenizer.json`.
    Kitoken,
    /// `tokie`: loads `tokenizer.json` or its own `.tkz`, not `.model`.
    Tokie,
    /// `tiktoken-rs`, the Rust port of tiktoken, from the local rank file: `encode_ordinary`. The
    /// reference of the tiktoken and GPT-2 models.
    TiktokenRs,
    /// Hugging Face `tokenizers` 1.0 (release candidate, the `tk-encode` engine):
    /// `PipelineTokenizer::encode_into`. The peer the BPE issue measures simdtok against; not a
    /// reference, since its caches and vocabulary compare hashes and it can return wrong ids.
    Tokenizers1,
    /// `bpe-openai` (github/rust-gems): its bundled cl100k_base and o200k_base, `encode`.
    BpeOpenai,
}

impl Impl {
    /// The SentencePiece implementations, in table order (simdtok, the reference, first).
    pub const ALL: [Impl; 6] = [
        Impl::Simdtok,
        Impl::SpmCpp,
        Impl::SpmCrate,
        Impl::SpmPy,
        Impl::Kitoken,
        Impl::Tokie,
    ];

    /// The WordPiece implementations, in run order: the reference (`tokenizers`) first, as its
    /// ids are the ones the others are checked against.
    pub const WORDPIECE: [Impl; 5] = [
        Impl::Tokenizers,
        Impl::SimdtokFast,
        Impl::SimdtokLinear,
        Impl::Kitoken,
        Impl::Tokie,
    ];

    /// The byte-level BPE implementations, in table order (simdtok, the peer the issue names,
    /// then the two references).
    pub const BPE: [Impl; 7] = [
        Impl::Simdtok,
        Impl::Tokenizers1,
        Impl::TiktokenRs,
        Impl::Tokenizers,
        Impl::BpeOpenai,
        Impl::Kitoken,
        Impl::Tokie,
    ];

    /// Every implementation of any family.
    pub const EVERY: [Impl; 12] = [
        Impl::Simdtok,
        Impl::SpmCpp,
        Impl::SpmCrate,
        Impl::SpmPy,
        Impl::SimdtokFast,
        Impl::SimdtokLinear,
        Impl::Tokenizers,
        Impl::Kitoken,
        Impl::Tokie,
        Impl::TiktokenRs,
        Impl::Tokenizers1,
        Impl::BpeOpenai,
    ];

    /// The key used on the command line and between processes.
    pub fn key(self) -> &'static str {
        match self {
            Impl::Simdtok => "simdtok",
            Impl::SpmCpp => "spm-cpp",
            Impl::SpmCrate => "spm-crate",
            Impl::SpmPy => "spm-py",
            Impl::SimdtokFast => "simdtok-fast",
            Impl::SimdtokLinear => "simdtok-linear",
            Impl::Tokenizers => "tokenizers",
            Impl::Kitoken => "kitoken",
            Impl::Tokie => "tokie",
            Impl::TiktokenRs => "tiktoken-rs",
            Impl::Tokenizers1 => "tokenizers-1.0",
            Impl::BpeOpenai => "bpe-openai",
        }
    }

    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Impl::Simdtok => "simdtok",
            Impl::SpmCpp => "spm C++",
            Impl::SpmCrate => "spm crate",
            Impl::SpmPy => "spm py",
            Impl::SimdtokFast => "simdtok fast",
            Impl::SimdtokLinear => "simdtok linear",
            Impl::Tokenizers => "tokenizers",
            Impl::Kitoken => "kitoken",
            Impl::Tokie => "tokie",
            Impl::TiktokenRs => "tiktoken-rs",
            Impl::Tokenizers1 => "tokenizers 1.0",
            Impl::BpeOpenai => "bpe-openai",
        }
    }

    pub fn from_key(key: &str) -> Option<Impl> {
        Impl::EVERY.into_iter().find(|i| i.key() == key)
    }

    /// Whether it runs in this process (all but the Python library).
    pub fn in_process(self) -> bool {
        self != Impl::SpmPy
    }
}

/// The kinds of model benchmarked, each with its own implementations and reference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// SentencePiece `.model` files; simdtok is the reference (its goldens come from the C++
    /// library, which every test checks it against).
    Spm,
    /// BERT WordPiece (`vocab.txt` or a WordPiece `tokenizer.json`); `tokenizers` is the
    /// reference.
    WordPiece,
    /// Byte-level BPE (and Llama 2's SentencePiece-style BPE `tokenizer.json`): `tiktoken-rs` is
    /// the reference of tiktoken rank files and GPT-2, `tokenizers` 0.23 that of `tokenizer.json`.
    Bpe,
}

impl Family {
    /// The implementation whose ids the others are checked against (BPE: see
    /// [`ModelSpec::reference`]).
    pub fn reference(self) -> Impl {
        match self {
            Family::Spm => Impl::Simdtok,
            Family::WordPiece => Impl::Tokenizers,
            Family::Bpe => Impl::Tokenizers,
        }
    }
}

/// A benchmark model.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// The file stem, e.g. `botchan_en_unigram_1000`.
    pub name: &'static str,
    /// `unigram`, `bpe` or `wordpiece`.
    pub algorithm: &'static str,
    /// The `.model`, `vocab.txt` or `tokenizer.json` file.
    pub path: PathBuf,
    pub family: Family,
    /// WordPiece only: the `tokenizer.json` that the peers that read nothing else (kitoken, tokie)
    /// load. For a `vocab.txt` it is the one `tokenizers` writes for its `BertWordPieceTokenizer`
    /// equivalent ([`prepare`] writes it); for a `tokenizer.json`, the file itself.
    ///
    /// BPE: the `tokenizer.json` that the Hugging Face-format peers (`tokenizers`, tokie, kitoken
    /// where it has no rank file) load: the model's own, the equivalent one of a tiktoken encoding
    /// (`gpt35turbo` for cl100k_base, `gpt4o` for o200k_base), or for GPT-2 the one `tokenizers`
    /// writes for its `encoder.json` + `vocab.bpe` ([`prepare_bpe`]); `None` where there is none.
    pub peer_json: Option<PathBuf>,
    /// BPE only: the tiktoken encoding whose ranks the model has, and its local rank file (what
    /// tiktoken-rs and bpe-openai encode with).
    pub ranks: Option<(&'static str, PathBuf)>,
}

impl ModelSpec {
    /// Whether the model is a BERT `vocab.txt` (else a `tokenizer.json`).
    pub fn is_vocab_txt(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "txt")
    }

    /// Whether simdtok's file is a Hugging Face `tokenizer.json`.
    pub fn is_tokenizer_json(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "json")
            && self
                .path
                .file_name()
                .is_some_and(|f| f.to_string_lossy().ends_with("tokenizer.json"))
    }

    /// The implementation whose ids the others are checked against: for BPE, `tiktoken-rs` on a
    /// tiktoken rank file or GPT-2's `encoder.json`, `tokenizers` 0.23 on a `tokenizer.json`
    /// (the newest stable release, whose caches and vocabulary compare bytes).
    pub fn reference(&self) -> Impl {
        if self.family == Family::Bpe && !self.is_tokenizer_json() {
            Impl::TiktokenRs
        } else {
            self.family.reference()
        }
    }
}

/// The models of the benchmark, found under `data` (shared/data).
pub fn models(data: &Path) -> Vec<ModelSpec> {
    let spm = data.join("models/sentencepiece");
    let model = |name: &'static str, algorithm: &'static str| ModelSpec {
        name,
        algorithm,
        path: spm.join(format!("{name}.model")),
        family: Family::Spm,
        peer_json: None,
        ranks: None,
    };
    vec![
        model("botchan_en_unigram_1000", "unigram"),
        model("kyoto_ja_unigram_8000", "unigram"),
        model("xlm-roberta-nomic.from-gguf", "unigram"),
        model("botchan_en_bpe_1000", "bpe"),
        model("llama-spm.from-gguf", "bpe"),
    ]
}

/// The WordPiece models of the benchmark, found under `data` (shared/data).
pub fn wordpiece_models(data: &Path) -> Vec<ModelSpec> {
    let vocab = |name: &'static str| ModelSpec {
        name,
        algorithm: "wordpiece",
        path: data.join(format!("models/wordpiece/{name}.vocab.txt")),
        family: Family::WordPiece,
        peer_json: Some(converted_json_path(name)),
        ranks: None,
    };
    let json = |name: &'static str, file: &str| {
        let path = data.join("models/hf-tokenizer-json").join(file);
        ModelSpec {
            name,
            algorithm: "wordpiece",
            peer_json: Some(path.clone()),
            path,
            family: Family::WordPiece,
            ranks: None,
        }
    };
    vec![
        vocab("bert-base-uncased"),
        json(
            "all-MiniLM-L6-v2",
            "all-MiniLM-L6-v2.bert-uncased.tokenizer.json",
        ),
        vocab("bert-base-chinese"),
    ]
}

/// Where the `tokenizer.json` converted from a `vocab.txt` goes (the same path in the
/// `--load-probe` child processes, which read it).
fn converted_json_path(name: &str) -> PathBuf {
    std::env::temp_dir()
        .join("bench-peers-wordpiece")
        .join(format!("{name}.from-vocab.tokenizer.json"))
}

/// WordPiece `vocab.txt` models: writes the `tokenizer.json` that kitoken and tokie load, as
/// `tokenizers` serializes its `BertWordPieceTokenizer` equivalent (nothing to do for other
/// models).
pub fn prepare(model: &ModelSpec) -> Result<(), String> {
    let Some(json) = model.peer_json.as_ref().filter(|_| model.is_vocab_txt()) else {
        return Ok(());
    };
    let tok = bert_wordpiece(&model.path)?;
    let text = tok
        .to_string(false)
        .map_err(|e| format!("tokenizers cannot serialize its tokenizer: {e}"))?;
    let dir = json.parent().ok_or("no parent directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    // Write then rename, so that a concurrent reader never sees half a file.
    let tmp = json.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, json).map_err(|e| format!("{}: {e}", json.display()))
}

/// Token strings by id (WordPiece: the reference's vocabulary, added tokens included), for the
/// report's examples of differing ids.
pub fn wordpiece_pieces(model: &ModelSpec) -> Option<Vec<String>> {
    let tok = hf_tokenizer(model).ok()?;
    let vocab = tok.get_vocab(true);
    let size = vocab.values().map(|&id| id as usize + 1).max().unwrap_or(0);
    let mut pieces = vec![String::new(); size];
    for (piece, id) in vocab {
        pieces[id as usize] = piece;
    }
    Some(pieces)
}

/// Loads `model` into `imp`; a peer that cannot load it says why (a panic included). A panic
/// while encoding is an error of that text, too ([`Guarded`]).
pub fn load(imp: Impl, model: &ModelSpec) -> Result<Box<dyn Encoder>, String> {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| load_inner(imp, model)));
    match result {
        Ok(r) => r.map(|enc| Box::new(Guarded(enc)) as Box<dyn Encoder>),
        Err(panic) => Err(format!(
            "panicked while loading: {}",
            panic_message(&*panic)
        )),
    }
}

/// An implementation whose panics while encoding become errors (kitoken's regex, for one, can
/// overflow its stack on a long run of spaces).
struct Guarded(Box<dyn Encoder>);

impl Encoder for Guarded {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        let inner: &mut Box<dyn Encoder> = &mut self.0;
        // The closure consumes the borrow, so the ids may outlive the call.
        let call = move || {
            let inner = inner;
            inner.encode(text)
        };
        match std::panic::catch_unwind(AssertUnwindSafe(call)) {
            Ok(r) => r,
            Err(panic) => Err(format!("panicked: {}", panic_message(&*panic))),
        }
    }

    fn one_thread(&mut self) {
        self.0.one_thread();
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_owned()
    }
}

fn load_inner(imp: Impl, model: &ModelSpec) -> Result<Box<dyn Encoder>, String> {
    match model.family {
        Family::WordPiece => return load_wordpiece(imp, model),
        Family::Bpe => return load_bpe(imp, model),
        Family::Spm => {}
    }
    let path = &model.path;
    match imp {
        Impl::Simdtok => {
            let tok = simdtok::Tokenizer::from_file(path).map_err(|e| e.to_string())?;
            Ok(Box::new(Simdtok {
                tok,
                out: simdtok::Encoding::default(),
            }))
        }
        Impl::SpmCpp => SpmCpp::load(path).map(|s| Box::new(s) as Box<dyn Encoder>),
        Impl::SpmCrate => {
            let spp = sentencepiece::SentencePieceProcessor::open(path)
                .map_err(|e| format!("cannot load: {e}"))?;
            Ok(Box::new(SpmCrate {
                spp,
                ids: Vec::new(),
            }))
        }
        Impl::Kitoken => {
            let kit = kitoken::Kitoken::from_sentencepiece_file(path)
                .map_err(|e| format!("cannot load: {e}"))?;
            Ok(Box::new(Kitoken {
                kit,
                ids: Vec::new(),
            }))
        }
        Impl::SpmPy => Err("runs in its own process".to_owned()),
        Impl::SimdtokFast
        | Impl::SimdtokLinear
        | Impl::Tokenizers
        | Impl::TiktokenRs
        | Impl::Tokenizers1
        | Impl::BpeOpenai => Err("not a SentencePiece implementation".to_owned()),
        Impl::Tokie => {
            // tokie reads tokenizer.json or its own .tkz format; try the .model as the latter.
            let tok = tokie::Tokenizer::from_file(path).map_err(|e| {
                format!("cannot load a SentencePiece .model (reads tokenizer.json or .tkz): {e}")
            })?;
            Ok(Box::new(Tokie {
                tok,
                ids: Vec::new(),
            }))
        }
    }
}

/// The WordPiece side of [`load`].
fn load_wordpiece(imp: Impl, model: &ModelSpec) -> Result<Box<dyn Encoder>, String> {
    // kitoken and tokie read a tokenizer.json: the file itself, or the one `prepare` wrote.
    let peer_json = || {
        model
            .peer_json
            .as_deref()
            .ok_or_else(|| "no tokenizer.json for this model".to_owned())
    };
    match imp {
        Impl::SimdtokFast | Impl::SimdtokLinear => {
            let algorithm = if imp == Impl::SimdtokFast {
                simdtok::WordPieceAlgorithm::Fast
            } else {
                simdtok::WordPieceAlgorithm::Linear
            };
            let kernels = simdtok::kernels::Kernels::active().map_err(|e| e.to_string())?;
            // Lowercase: the default of a vocab.txt (on); a tokenizer.json says for itself.
            let options = simdtok::LoadOptions {
                lowercase: None,
                add_special_tokens: false,
                wordpiece_algorithm: Some(algorithm),
                ..simdtok::LoadOptions::default()
            };
            let tok = simdtok::Tokenizer::from_file_with_options(&model.path, kernels, &options)
                .map_err(|e| e.to_string())?;
            Ok(Box::new(Simdtok {
                tok,
                out: simdtok::Encoding::default(),
            }))
        }
        Impl::Tokenizers => {
            let tok = hf_tokenizer(model)?;
            Ok(Box::new(HfTokenizers { tok, out: None }))
        }
        Impl::Kitoken => kitoken_from_json(peer_json()?),
        Impl::Tokie => tokie_from_json(peer_json()?),
        Impl::Simdtok
        | Impl::SpmCpp
        | Impl::SpmCrate
        | Impl::SpmPy
        | Impl::TiktokenRs
        | Impl::Tokenizers1
        | Impl::BpeOpenai => Err("not a WordPiece implementation".to_owned()),
    }
}

/// kitoken from a `tokenizer.json`, its truncation and padding removed.
fn kitoken_from_json(path: &Path) -> Result<Box<dyn Encoder>, String> {
    let mut def = kitoken::Definition::from_tokenizers_file(path)
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    // Truncation and padding off, as in the other implementations.
    def.config.processing.retain(|p| {
        !matches!(
            p,
            kitoken::Processing::Pad { .. } | kitoken::Processing::Truncate { .. }
        )
    });
    let kit = kitoken::Kitoken::from_definition(def)
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    Ok(Box::new(Kitoken {
        kit,
        ids: Vec::new(),
    }))
}

/// tokie from a `tokenizer.json`, truncation and padding off.
fn tokie_from_json(path: &Path) -> Result<Box<dyn Encoder>, String> {
    let mut tok = tokie::Tokenizer::from_json(path)
        .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
    tok.no_truncation().no_padding();
    Ok(Box::new(Tokie {
        tok,
        ids: Vec::new(),
    }))
}

/// The reference for a WordPiece model: a `vocab.txt` as Python's `BertWordPieceTokenizer(vocab,
/// lowercase=True)` builds it, a `tokenizer.json` as `Tokenizer::from_file` reads it; truncation
/// and padding off.
fn hf_tokenizer(model: &ModelSpec) -> Result<tokenizers::Tokenizer, String> {
    let mut tok = if model.is_vocab_txt() {
        bert_wordpiece(&model.path)?
    } else {
        tokenizers::Tokenizer::from_file(&model.path)
            .map_err(|e| format!("cannot load {}: {e}", model.path.display()))?
    };
    tok.with_truncation(None)
        .map_err(|e| format!("cannot disable truncation: {e}"))?;
    tok.with_padding(None);
    Ok(tok)
}

/// `tokenizers.implementations.BertWordPieceTokenizer(vocab, lowercase=True)` in Rust, step by
/// step as the Python class does it: WordPiece model (unk `[UNK]`, prefix `##`, at most 100
/// characters a word), the special tokens that the vocabulary has, `BertNormalizer(clean_text,
/// handle_chinese_chars, strip_accents=None, lowercase)`, `BertPreTokenizer`, `BertProcessing`
/// and the WordPiece decoder.
fn bert_wordpiece(vocab: &Path) -> Result<tokenizers::Tokenizer, String> {
    use tokenizers::decoders::wordpiece::WordPiece as WordPieceDecoder;
    use tokenizers::models::wordpiece::WordPiece;
    use tokenizers::normalizers::bert::BertNormalizer;
    use tokenizers::pre_tokenizers::bert::BertPreTokenizer;
    use tokenizers::processors::bert::BertProcessing;
    use tokenizers::{AddedToken, Tokenizer};

    let path = vocab.to_str().ok_or("vocab path is not UTF-8")?;
    let model = WordPiece::from_file(path)
        .unk_token("[UNK]".to_owned())
        .continuing_subword_prefix("##".to_owned())
        .max_input_chars_per_word(100)
        .build()
        .map_err(|e| format!("cannot load {path}: {e}"))?;
    let mut tok = Tokenizer::new(model);
    for special in ["[UNK]", "[SEP]", "[CLS]", "[PAD]", "[MASK]"] {
        if tok.token_to_id(special).is_some() {
            tok.add_special_tokens([AddedToken::from(special, true)])
                .map_err(|e| format!("cannot add {special}: {e}"))?;
        }
    }
    tok.with_normalizer(Some(BertNormalizer::new(true, true, None, true)))
        .map_err(|e| format!("cannot set the normalizer: {e}"))?;
    tok.with_pre_tokenizer(Some(BertPreTokenizer));
    if let (Some(sep), Some(cls)) = (tok.token_to_id("[SEP]"), tok.token_to_id("[CLS]")) {
        tok.with_post_processor(Some(BertProcessing::new(
            ("[SEP]".to_owned(), sep),
            ("[CLS]".to_owned(), cls),
        )));
    }
    tok.with_decoder(Some(WordPieceDecoder::new("##".to_owned(), true)));
    Ok(tok)
}

// ---- byte-level BPE ----

/// The tiktoken encodings whose rank files are at hand: name, split pattern and special tokens,
/// exactly as `tiktoken-rs` 0.12.1 builds them (`tiktoken_ext/openai_public.rs`); only the ranks
/// come from the local file.
const TIKTOKEN_R50K_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";
const TIKTOKEN_CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

fn tiktoken_encoding(name: &str) -> Option<(&'static str, &'static [(&'static str, u32)])> {
    const ENDOFTEXT: &str = "<|endoftext|>";
    Some(match name {
        "r50k_base" | "p50k_base" => (TIKTOKEN_R50K_PATTERN, &[(ENDOFTEXT, 50256)]),
        "cl100k_base" => (
            TIKTOKEN_CL100K_PATTERN,
            &[
                (ENDOFTEXT, 100257),
                ("<|fim_prefix|>", 100258),
                ("<|fim_middle|>", 100259),
                ("<|fim_suffix|>", 100260),
                ("<|endofprompt|>", 100276),
            ],
        ),
        "o200k_base" => (
            tiktoken_rs::O200K_BASE_PAT_STR,
            &[(ENDOFTEXT, 199999), ("<|endofprompt|>", 200018)],
        ),
        _ => return None,
    })
}

/// The byte-level BPE models of the benchmark, found under `data` (shared/data).
pub fn bpe_models(data: &Path) -> Vec<ModelSpec> {
    let models = data.join("models");
    let tiktoken = |name: &'static str| models.join(format!("tiktoken/{name}.tiktoken"));
    let json = |file: &str| models.join(format!("hf-tokenizer-json/{file}.tokenizer.json"));
    let spec = |name, algorithm, path: PathBuf, peer_json, ranks| ModelSpec {
        name,
        algorithm,
        path,
        family: Family::Bpe,
        peer_json,
        ranks,
    };
    let ranks = |name: &'static str| Some((name, tiktoken(name)));
    vec![
        spec(
            "cl100k_base",
            "tiktoken",
            tiktoken("cl100k_base"),
            Some(json("gpt35turbo")),
            ranks("cl100k_base"),
        ),
        spec(
            "o200k_base",
            "tiktoken",
            tiktoken("o200k_base"),
            Some(json("gpt4o")),
            ranks("o200k_base"),
        ),
        spec(
            "r50k_base",
            "tiktoken",
            tiktoken("r50k_base"),
            None,
            ranks("r50k_base"),
        ),
        spec(
            "p50k_base",
            "tiktoken",
            tiktoken("p50k_base"),
            None,
            ranks("p50k_base"),
        ),
        spec(
            "gpt2",
            "GPT-2 encoder.json",
            models.join("gpt2/encoder.json"),
            Some(gpt2_json_path()),
            ranks("r50k_base"),
        ),
        spec(
            "llama3",
            "tokenizer.json",
            json("llama3"),
            Some(json("llama3")),
            None,
        ),
        spec(
            "qwen3",
            "tokenizer.json",
            json("qwen3"),
            Some(json("qwen3")),
            None,
        ),
        spec(
            "gpt4o",
            "tokenizer.json",
            json("gpt4o"),
            Some(json("gpt4o")),
            ranks("o200k_base"),
        ),
        spec(
            "gpt35turbo",
            "tokenizer.json",
            json("gpt35turbo"),
            Some(json("gpt35turbo")),
            ranks("cl100k_base"),
        ),
        spec(
            "llama2",
            "tokenizer.json (SentencePiece-style BPE)",
            json("llama2"),
            Some(json("llama2")),
            None,
        ),
    ]
}

/// Where the `tokenizer.json` that `tokenizers` writes for GPT-2's `encoder.json` + `vocab.bpe`
/// goes (the same path in the child processes, which read it).
fn gpt2_json_path() -> PathBuf {
    std::env::temp_dir()
        .join("bench-peers-bpe")
        .join("gpt2.from-encoder-json.tokenizer.json")
}

/// BPE: writes the `tokenizer.json` of GPT-2 that the Hugging Face-format peers load, as
/// `tokenizers` 0.23 serializes what Python's `GPT2TokenizerFast` holds: BPE from `encoder.json` +
/// `vocab.bpe`, `ByteLevel(add_prefix_space=false, trim_offsets=true, use_regex=true)`
/// pre-tokenizer and decoder, `<|endoftext|>` as a special token (nothing to do for other models).
pub fn prepare_bpe(model: &ModelSpec) -> Result<(), String> {
    use tokenizers::decoders::byte_level::ByteLevel as ByteLevelDecoder;
    use tokenizers::models::bpe::BPE;
    use tokenizers::pre_tokenizers::byte_level::ByteLevel;
    use tokenizers::{AddedToken, Tokenizer};

    if model.is_tokenizer_json() || model.ranks.is_none() || model.name != "gpt2" {
        return Ok(());
    }
    let Some(json) = &model.peer_json else {
        return Ok(());
    };
    let vocab = model
        .path
        .to_str()
        .ok_or("encoder.json path is not UTF-8")?;
    let merges = model.path.with_file_name("vocab.bpe");
    let merges = merges.to_str().ok_or("vocab.bpe path is not UTF-8")?;
    let bpe = BPE::from_file(vocab, merges)
        .build()
        .map_err(|e| format!("tokenizers cannot load {vocab} + {merges}: {e}"))?;
    let mut tok = Tokenizer::new(bpe);
    tok.with_pre_tokenizer(Some(ByteLevel::new(false, true, true)));
    tok.with_decoder(Some(ByteLevelDecoder::default()));
    tok.add_special_tokens([AddedToken::from("<|endoftext|>", true)])
        .map_err(|e| format!("cannot add <|endoftext|>: {e}"))?;
    let text = tok
        .to_string(false)
        .map_err(|e| format!("tokenizers cannot serialize its tokenizer: {e}"))?;
    let dir = json.parent().ok_or("no parent directory")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let tmp = json.with_extension(format!("{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, json).map_err(|e| format!("{}: {e}", json.display()))
}

/// The ranks of a tiktoken file: token bytes by rank (`None` for a rank the file skips, as
/// p50k_base skips 50256, `<|endoftext|>`).
pub fn read_ranks(path: &Path) -> Result<Vec<Option<Vec<u8>>>, String> {
    use base64::Engine as _;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut tokens: Vec<Option<Vec<u8>>> = Vec::new();
    for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.is_empty()) {
        let (b64, rank) = line
            .split_once(' ')
            .ok_or_else(|| format!("{}:{}: no rank", path.display(), n + 1))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        let rank: usize = rank
            .trim()
            .parse()
            .map_err(|e| format!("{}:{}: {e}", path.display(), n + 1))?;
        if tokens.len() <= rank {
            tokens.resize(rank + 1, None);
        }
        tokens[rank] = Some(bytes);
    }
    Ok(tokens)
}

/// tiktoken-rs from a local rank file: `CoreBPE::new` with the crate's own pattern and special
/// tokens for that encoding (what `tiktoken_rs::cl100k_base()` etc. build from the bundled copy).
fn tiktoken_rs_local(name: &str, path: &Path) -> Result<tiktoken_rs::CoreBPE, String> {
    let (pattern, specials) =
        tiktoken_encoding(name).ok_or_else(|| format!("no tiktoken encoding {name}"))?;
    let ranks = read_ranks(path)?;
    let mut encoder = rustc_hash::FxHashMap::default();
    for (rank, bytes) in ranks.into_iter().enumerate() {
        if let Some(bytes) = bytes {
            encoder.insert(bytes, rank as tiktoken_rs::Rank);
        }
    }
    let specials = specials.iter().map(|&(s, r)| (s.to_owned(), r)).collect();
    tiktoken_rs::CoreBPE::new(encoder, specials, pattern).map_err(|e| e.to_string())
}

/// Whether the ranks that tiktoken-rs and bpe-openai bundle for `name` are those of the local file
/// `path` (every rank's bytes compared); `None` when the crate bundles no such encoding.
pub fn bundled_ranks_match(imp: Impl, name: &str, path: &Path) -> Option<Result<bool, String>> {
    let check = |ranks: Vec<Option<Vec<u8>>>| -> Result<bool, String> {
        Ok(match imp {
            Impl::TiktokenRs => {
                let bundled = match name {
                    "r50k_base" => tiktoken_rs::r50k_base_singleton(),
                    "p50k_base" => tiktoken_rs::p50k_base_singleton(),
                    "cl100k_base" => tiktoken_rs::cl100k_base_singleton(),
                    "o200k_base" => tiktoken_rs::o200k_base_singleton(),
                    _ => return Err(format!("tiktoken-rs bundles no {name}")),
                };
                ranks.iter().enumerate().all(|(rank, bytes)| {
                    let got = bundled.decode_bytes(&[rank as tiktoken_rs::Rank]);
                    match bytes {
                        Some(bytes) => got.is_ok_and(|b| b == *bytes),
                        // A rank the file skips is a special token or nothing in the bundle.
                        None => got.map_or(true, |b| b.starts_with(b"<|")),
                    }
                }) && bundled
                    .decode_bytes(&[ranks.len() as tiktoken_rs::Rank])
                    .map_or(true, |b| b.starts_with(b"<|"))
            }
            Impl::BpeOpenai => {
                let bpe = &bpe_openai_tokenizer(name)?.bpe;
                bpe.num_tokens() == ranks.len()
                    && ranks.iter().enumerate().all(|(id, bytes)| {
                        bytes
                            .as_deref()
                            .is_some_and(|b| bpe.token_bytes(id as u32) == b)
                    })
            }
            _ => return Err("no bundled ranks".to_owned()),
        })
    };
    match (imp, name) {
        (Impl::TiktokenRs, "r50k_base" | "p50k_base" | "cl100k_base" | "o200k_base")
        | (Impl::BpeOpenai, "cl100k_base" | "o200k_base") => Some(read_ranks(path).and_then(check)),
        _ => None,
    }
}

fn bpe_openai_tokenizer(name: &str) -> Result<&'static bpe_openai::Tokenizer, String> {
    match name {
        "cl100k_base" => Ok(bpe_openai::cl100k_base()),
        "o200k_base" => Ok(bpe_openai::o200k_base()),
        _ => Err(format!(
            "bundles cl100k_base, o200k_base and voyage3_base only, not {name}"
        )),
    }
}

/// Token strings by id for the report's examples (BPE): a rank file's bytes, shown as text where
/// they are UTF-8 and `\xNN` where not; else `None` (simdtok's pieces are used).
pub fn bpe_pieces(model: &ModelSpec) -> Option<Vec<String>> {
    let (_, path) = model
        .ranks
        .as_ref()
        .filter(|_| !model.is_tokenizer_json())?;
    let ranks = read_ranks(path).ok()?;
    Some(
        ranks
            .iter()
            .map(|b| b.as_deref().map_or(String::new(), escape_bytes))
            .collect(),
    )
}

/// `bytes` as text, each byte of an invalid UTF-8 sequence as `\xNN`.
pub fn escape_bytes(mut bytes: &[u8]) -> String {
    let mut out = String::new();
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let bad = e.error_len().unwrap_or(rest.len());
                for b in &rest[..bad] {
                    out.push_str(&format!("\\x{b:02X}"));
                }
                bytes = &rest[bad..];
            }
        }
    }
}

/// The BPE side of [`load`].
fn load_bpe(imp: Impl, model: &ModelSpec) -> Result<Box<dyn Encoder>, String> {
    let no_json = || match model.name {
        "r50k_base" => {
            "no tokenizer.json of r50k_base at hand (its vocabulary is GPT-2's: see the \
                        gpt2 row)"
                .to_owned()
        }
        "p50k_base" => "no tokenizer.json of p50k_base at hand".to_owned(),
        _ => "no tokenizer.json of this model".to_owned(),
    };
    let peer_json = || model.peer_json.as_deref().ok_or_else(no_json);
    let no_ranks = || {
        "reads tiktoken encodings only; no rank file of this model (its vocabulary is not a \
         tiktoken encoding)"
            .to_owned()
    };
    match imp {
        Impl::Simdtok => {
            let kernels = simdtok::kernels::Kernels::active().map_err(|e| e.to_string())?;
            let tok = simdtok::Tokenizer::from_file_with_options(
                &model.path,
                kernels,
                &simdtok::LoadOptions::default(),
            )
            .map_err(|e| e.to_string())?;
            Ok(Box::new(Simdtok {
                tok,
                out: simdtok::Encoding::default(),
            }))
        }
        Impl::TiktokenRs => {
            let (name, path) = model.ranks.as_ref().ok_or_else(no_ranks)?;
            let bpe = tiktoken_rs_local(name, path)?;
            Ok(Box::new(TiktokenRs {
                bpe,
                ids: Vec::new(),
            }))
        }
        Impl::BpeOpenai => {
            let (name, _) = model.ranks.as_ref().ok_or_else(no_ranks)?;
            let tok = bpe_openai_tokenizer(name)?;
            Ok(Box::new(BpeOpenai {
                tok,
                ids: Vec::new(),
            }))
        }
        Impl::Tokenizers1 => {
            let path = peer_json()?;
            let tok = tokenizers1_load(path)?;
            Ok(Box::new(Tokenizers1 {
                tok,
                options: tokenizers1::pipeline::EncodeOptions {
                    add_special_tokens: false,
                    encode_special_tokens: false,
                    padding: tokenizers1::pipeline::Override::Off,
                    truncation: tokenizers1::pipeline::Override::Off,
                },
                ids: Vec::new(),
            }))
        }
        Impl::Tokenizers => {
            let path = peer_json()?;
            let mut tok = tokenizers::Tokenizer::from_file(path)
                .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
            tok.with_truncation(None)
                .map_err(|e| format!("cannot disable truncation: {e}"))?;
            tok.with_padding(None);
            Ok(Box::new(HfTokenizers { tok, out: None }))
        }
        Impl::Kitoken => {
            if model.path.extension().is_some_and(|e| e == "tiktoken") {
                let kit = kitoken::Kitoken::from_tiktoken_file(&model.path)
                    .map_err(|e| format!("cannot load {}: {e}", model.path.display()))?;
                Ok(Box::new(Kitoken {
                    kit,
                    ids: Vec::new(),
                }))
            } else {
                kitoken_from_json(peer_json()?)
            }
        }
        Impl::Tokie => tokie_from_json(peer_json()?),
        Impl::SpmCpp | Impl::SpmCrate | Impl::SpmPy | Impl::SimdtokFast | Impl::SimdtokLinear => {
            Err("not a BPE implementation".to_owned())
        }
    }
}

/// `tokenizers` 1.0 reads only the canonical `"version": "2.0"` format; an older file (every one
/// here) goes through its own upgrade pass, `canonicalize_file`, first, as its documentation says.
fn tokenizers1_load(path: &Path) -> Result<tokenizers1::pipeline::PipelineTokenizer, String> {
    match tokenizers1::from_json_file(path) {
        Ok(tok) => Ok(tok),
        Err(_) => {
            let text = tokenizers1::canonicalize_file(path)
                .map_err(|e| format!("cannot convert {}: {e}", path.display()))?;
            tokenizers1::from_json(&text)
                .map_err(|e| format!("cannot load {}: {e}", path.display()))
        }
    }
}

/// tiktoken-rs: `encode_ordinary` (no special tokens), its cheapest exact call.
struct TiktokenRs {
    bpe: tiktoken_rs::CoreBPE,
    ids: Vec<u32>,
}

impl Encoder for TiktokenRs {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        self.ids = self.bpe.encode_ordinary(text);
        Ok(&self.ids)
    }
}

/// `tokenizers` 1.0: `PipelineTokenizer::encode_into`, which allocates nothing per call (its
/// documentation: the entry point for an encode-only caller in a loop).
struct Tokenizers1 {
    tok: tokenizers1::pipeline::PipelineTokenizer,
    options: tokenizers1::pipeline::EncodeOptions,
    ids: Vec<tokenizers1::pipeline::PipelineToken>,
}

impl Encoder for Tokenizers1 {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        self.ids.clear();
        self.tok
            .encode_into(text, &self.options, &mut self.ids)
            .map_err(|e| e.to_string())?;
        Ok(tokenizers1::pipeline::PipelineToken::cast_slice(&self.ids))
    }
}

/// bpe-openai: `Tokenizer::encode` (its regex pre-tokenizer, then `encode_via_backtracking`).
struct BpeOpenai {
    tok: &'static bpe_openai::Tokenizer,
    ids: Vec<u32>,
}

impl Encoder for BpeOpenai {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        self.ids = self.tok.encode(text);
        Ok(&self.ids)
    }
}

struct Simdtok {
    tok: simdtok::Tokenizer,
    out: simdtok::Encoding,
}

impl Encoder for Simdtok {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        // Ids only, as every peer here returns: no offsets, no token strings.
        self.tok.encode_ids_into(text, &mut self.out.ids);
        Ok(&self.out.ids)
    }
}

unsafe extern "C" {
    fn bp_spm_load(
        path: *const c_char,
        path_len: usize,
        error: *mut c_char,
        error_len: usize,
    ) -> *mut c_void;
    fn bp_spm_free(handle: *mut c_void);
    fn bp_spm_encode(
        handle: *mut c_void,
        text: *const c_char,
        text_len: usize,
        ids: *mut *const i32,
        len: *mut usize,
    ) -> c_int;
}

/// The C++ library through cpp/spm_ids.cc.
struct SpmCpp {
    handle: *mut c_void,
}

impl SpmCpp {
    fn load(path: &Path) -> Result<SpmCpp, String> {
        let path = path.to_str().ok_or("model path is not UTF-8")?;
        let mut error = vec![0u8; 512];
        // SAFETY: the pointers and lengths describe live buffers; the shim copies the path.
        let handle = unsafe {
            bp_spm_load(
                path.as_ptr().cast(),
                path.len(),
                error.as_mut_ptr().cast(),
                error.len(),
            )
        };
        if handle.is_null() {
            let end = error.iter().position(|&b| b == 0).unwrap_or(error.len());
            return Err(format!(
                "cannot load: {}",
                String::from_utf8_lossy(&error[..end])
            ));
        }
        Ok(SpmCpp { handle })
    }
}

impl Drop for SpmCpp {
    fn drop(&mut self) {
        // SAFETY: the handle came from bp_spm_load and is freed once.
        unsafe { bp_spm_free(self.handle) }
    }
}

impl Encoder for SpmCpp {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        let mut ids: *const i32 = std::ptr::null();
        let mut len = 0usize;
        // SAFETY: the handle is live; the text is borrowed for the call only.
        let status = unsafe {
            bp_spm_encode(
                self.handle,
                text.as_ptr().cast(),
                text.len(),
                &mut ids,
                &mut len,
            )
        };
        if status != 0 {
            return Err(format!("Encode returned status {status}"));
        }
        if len == 0 {
            return Ok(&[]);
        }
        // SAFETY: the shim's vector holds `len` non-negative ids (i32 and u32 share a layout) and
        // lives in the handle until the next call, which needs `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts(ids.cast::<u32>(), len) })
    }
}

struct SpmCrate {
    spp: sentencepiece::SentencePieceProcessor,
    ids: Vec<u32>,
}

impl Encoder for SpmCrate {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        let pieces = self.spp.encode(text).map_err(|e| e.to_string())?;
        self.ids.clear();
        self.ids.extend(pieces.iter().map(|p| p.id));
        Ok(&self.ids)
    }
}

struct Kitoken {
    kit: kitoken::Kitoken,
    ids: Vec<u32>,
}

impl Encoder for Kitoken {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        self.ids = self.kit.encode(text, false).map_err(|e| e.to_string())?;
        Ok(&self.ids)
    }
}

/// `tokenizers`: `encode_fast` (no offsets), its cheapest exact single-text call.
struct HfTokenizers {
    tok: tokenizers::Tokenizer,
    out: Option<tokenizers::Encoding>,
}

impl Encoder for HfTokenizers {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        let enc = self
            .tok
            .encode_fast(text, false)
            .map_err(|e| e.to_string())?;
        Ok(self.out.insert(enc).get_ids())
    }
}

struct Tokie {
    tok: tokie::Tokenizer,
    ids: Vec<u32>,
}

impl Encoder for Tokie {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        if text.len() >= TOKIE_PIECE_THREADS {
            // tokie's BPE encoder splits a piece this long over `available_parallelism()` scoped
            // threads, asked afresh on every call: with the thread pinned, that is 1.
            let tok = &self.tok;
            let mut ids = Vec::new();
            with_one_cpu(|| ids = tok.encode_ids(text, false));
            self.ids = ids;
        } else {
            self.ids = self.tok.encode_ids(text, false);
        }
        Ok(&self.ids)
    }

    /// tokie 0.1.4 encodes a text of 64 KiB or more (with a pre-tokenizer: WordPiece) in chunks on
    /// `available_parallelism()` scoped threads (`Tokenizer::encode_parallel`), a count it computes
    /// once per process and keeps (`num_cpus`, a `OnceLock`). So the first such encode runs with
    /// this thread pinned to the CPU it is on: tokie then keeps 1, which makes it encode every
    /// text on the calling thread like the other implementations; the thread's CPU set is then
    /// restored. (The harness also compares CPU time with wall time to catch any other thread.)
    fn one_thread(&mut self) {
        static PINNED: std::sync::Once = std::sync::Once::new();
        PINNED.call_once(|| {
            let big = "a ".repeat(40 << 10);
            with_one_cpu(|| drop(self.tok.encode_ids(&big, false)));
        });
    }
}

/// tokie 0.1.4's `BacktrackingEncoder::encode` encodes a piece of this many bytes or more in chunks
/// on `available_parallelism()` scoped threads (`PARALLEL_THRESHOLD`, asked on every call); a
/// text this long is encoded with the thread pinned to one CPU.
const TOKIE_PIECE_THREADS: usize = 10_000;

/// Runs `f` with the calling thread pinned to the CPU it is on (Linux; elsewhere just runs it).
fn with_one_cpu(f: impl FnOnce()) {
    #[cfg(target_os = "linux")]
    // SAFETY: the CPU sets are plain data, sized as the calls are told; pid 0 is this thread.
    unsafe {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut saved: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut saved) == 0 {
            let cpu = usize::try_from(libc::sched_getcpu()).unwrap_or(0);
            let mut one: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_ZERO(&mut one);
            libc::CPU_SET(cpu, &mut one);
            if libc::sched_setaffinity(0, size, &one) == 0 {
                /// Restores the CPU set, also when `f` panics.
                struct Restore(libc::cpu_set_t);
                impl Drop for Restore {
                    fn drop(&mut self) {
                        // SAFETY: as above.
                        unsafe {
                            libc::sched_setaffinity(
                                0,
                                std::mem::size_of::<libc::cpu_set_t>(),
                                &self.0,
                            )
                        };
                    }
                }
                let _restore = Restore(saved);
                f();
                return;
            }
        }
    }
    f();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> Option<PathBuf> {
        let dir = std::env::var_os("SIMDTOK_SHARED_DATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/data"));
        dir.is_dir().then_some(dir)
    }

    /// bert-base-uncased's vocab.txt is all-MiniLM-L6-v2's vocabulary: the `BertWordPieceTokenizer`
    /// built here must give the ids of that tokenizer.json, and so must the tokenizer.json that
    /// `prepare` writes for kitoken and tokie, read back by `tokenizers`.
    #[test]
    fn vocab_txt_reference_matches_tokenizer_json() {
        let Some(data) = data() else {
            eprintln!("shared data not found: skipped");
            return;
        };
        let models = wordpiece_models(&data);
        let vocab = models
            .iter()
            .find(|m| m.name == "bert-base-uncased")
            .unwrap();
        let json = models
            .iter()
            .find(|m| m.name == "all-MiniLM-L6-v2")
            .unwrap();
        let mut spec = vocab.clone();
        let dir = std::env::temp_dir().join(format!("bench-peers-test-{}", std::process::id()));
        spec.peer_json = Some(dir.join("converted.tokenizer.json"));
        prepare(&spec).unwrap();
        let built = hf_tokenizer(vocab).unwrap();
        let read = hf_tokenizer(json).unwrap();
        let converted = tokenizers::Tokenizer::from_file(spec.peer_json.as_ref().unwrap()).unwrap();
        let texts = [
            "Hello, World! Déjà vu: naïve café.",
            "unaffable [CLS] x[SEP]y [MASK]",
            "中文字符 和 日本語 かな",
            "tab\tnew\u{0}line\u{200b} \u{fffd}",
            &"a".repeat(101),
            &"a".repeat(100),
        ];
        for text in texts {
            let want = read.encode_fast(text, false).unwrap();
            for tok in [&built, &converted] {
                assert_eq!(
                    tok.encode_fast(text, false).unwrap().get_ids(),
                    want.get_ids(),
                    "{text}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    /// The BPE references and what the Hugging Face-format peers load agree on a few texts: the
    /// GPT-2 `tokenizer.json` written by `prepare_bpe` (under `tokenizers` 1.0 and 0.23) and
    /// `gpt35turbo.tokenizer.json` give tiktoken-rs' ids for r50k_base and cl100k_base, whose
    /// local rank files are the ranks tiktoken-rs and bpe-openai bundle; p50k_base's rank file
    /// skips 50256.
    #[test]
    fn bpe_sources_agree() {
        let Some(data) = data() else {
            eprintln!("shared data not found: skipped");
            return;
        };
        let models = bpe_models(&data);
        let find = |name: &str| models.iter().find(|m| m.name == name).unwrap().clone();
        let texts = [
            "Hello, world! It's 2024: naïve café, 12345 tokens.",
            "  indented\n\tcode = x[i] + 1;  \r\n",
            "中文字符 和 日本語 かな 🎉🎉",
            "",
        ];
        let mut gpt2 = find("gpt2");
        let dir = std::env::temp_dir().join(format!("bench-peers-test-bpe-{}", std::process::id()));
        gpt2.peer_json = Some(dir.join("gpt2.tokenizer.json"));
        prepare_bpe(&gpt2).unwrap();
        let cl100k = find("cl100k_base");
        for (model, impls) in [
            (
                &gpt2,
                &[Impl::Tokenizers1, Impl::Tokenizers, Impl::Simdtok][..],
            ),
            (&cl100k, &[Impl::Tokenizers1, Impl::BpeOpenai][..]),
        ] {
            let mut reference = load(Impl::TiktokenRs, model).unwrap();
            for &imp in impls {
                let mut enc = load(imp, model).unwrap();
                for text in texts {
                    let want = reference.encode(text).unwrap().to_vec();
                    assert_eq!(
                        enc.encode(text).unwrap(),
                        want,
                        "{} {imp:?} {text:?}",
                        model.name
                    );
                }
            }
        }
        let (name, path) = cl100k.ranks.as_ref().unwrap();
        for imp in [Impl::TiktokenRs, Impl::BpeOpenai] {
            assert_eq!(
                bundled_ranks_match(imp, name, path),
                Some(Ok(true)),
                "{imp:?}"
            );
        }
        let (_, p50k) = find("p50k_base").ranks.unwrap();
        let ranks = read_ranks(&p50k).unwrap();
        assert!(ranks[50256].is_none() && ranks[50255].is_some() && ranks[50257].is_some());
        let _ = std::fs::remove_dir_all(dir);
    }
}
