//! The implementations compared: simdtok and its peers, each behind one `encode` that returns the
//! ids of a text (the peer's cheapest id-only API). SentencePiece `.model` files and BERT
//! WordPiece models (`vocab.txt`, WordPiece `tokenizer.json`).

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

    /// Every implementation of either family.
    pub const EVERY: [Impl; 9] = [
        Impl::Simdtok,
        Impl::SpmCpp,
        Impl::SpmCrate,
        Impl::SpmPy,
        Impl::SimdtokFast,
        Impl::SimdtokLinear,
        Impl::Tokenizers,
        Impl::Kitoken,
        Impl::Tokie,
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
}

impl Family {
    /// The implementation whose ids the others are checked against.
    pub fn reference(self) -> Impl {
        match self {
            Family::Spm => Impl::Simdtok,
            Family::WordPiece => Impl::Tokenizers,
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
    pub peer_json: Option<PathBuf>,
}

impl ModelSpec {
    /// Whether the model is a BERT `vocab.txt` (else a `tokenizer.json`).
    pub fn is_vocab_txt(&self) -> bool {
        self.path.extension().is_some_and(|e| e == "txt")
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
    };
    let json = |name: &'static str, file: &str| {
        let path = data.join("models/hf-tokenizer-json").join(file);
        ModelSpec {
            name,
            algorithm: "wordpiece",
            peer_json: Some(path.clone()),
            path,
            family: Family::WordPiece,
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

/// Loads `model` into `imp`; a peer that cannot load it says why (a panic included).
pub fn load(imp: Impl, model: &ModelSpec) -> Result<Box<dyn Encoder>, String> {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| load_inner(imp, model)));
    match result {
        Ok(r) => r,
        Err(panic) => Err(format!(
            "panicked while loading: {}",
            panic_message(&*panic)
        )),
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
    if model.family == Family::WordPiece {
        return load_wordpiece(imp, model);
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
        Impl::SimdtokFast | Impl::SimdtokLinear | Impl::Tokenizers => {
            Err("not a SentencePiece implementation".to_owned())
        }
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
        Impl::Kitoken => {
            let path = peer_json()?;
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
        Impl::Tokie => {
            let path = peer_json()?;
            let mut tok = tokie::Tokenizer::from_json(path)
                .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
            tok.no_truncation().no_padding();
            Ok(Box::new(Tokie {
                tok,
                ids: Vec::new(),
            }))
        }
        Impl::Simdtok | Impl::SpmCpp | Impl::SpmCrate | Impl::SpmPy => {
            Err("not a WordPiece implementation".to_owned())
        }
    }
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
        self.ids = self.tok.encode_ids(text, false);
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
                f();
                libc::sched_setaffinity(0, size, &saved);
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
}
