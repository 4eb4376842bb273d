//! The implementations compared: simdtok and its peers, each behind one `encode` that returns the
//! ids of a text (the peer's cheapest id-only API).

use std::ffi::{c_char, c_int, c_void};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};

// Linked for its static libsentencepiece (the shim in cpp/ calls into it).
use sentencepiece_sys as _;

/// One implementation, loaded with one model.
pub trait Encoder {
    /// The ids of `text` (valid until the next call), or why there are none.
    fn encode(&mut self, text: &str) -> Result<&[u32], String>;
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
    /// `kitoken`, converted from the `.model`.
    Kitoken,
    /// `tokie`: loads `tokenizer.json` or its own `.tkz`, not `.model`.
    Tokie,
}

impl Impl {
    pub const ALL: [Impl; 6] = [
        Impl::Simdtok,
        Impl::SpmCpp,
        Impl::SpmCrate,
        Impl::SpmPy,
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
            Impl::Kitoken => "kitoken",
            Impl::Tokie => "tokie",
        }
    }

    pub fn from_key(key: &str) -> Option<Impl> {
        Impl::ALL.into_iter().find(|i| i.key() == key)
    }

    /// Whether it runs in this process (all but the Python library).
    pub fn in_process(self) -> bool {
        self != Impl::SpmPy
    }
}

/// A benchmark model.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// The file stem, e.g. `botchan_en_unigram_1000`.
    pub name: &'static str,
    /// `unigram` or `bpe`.
    pub algorithm: &'static str,
    /// The `.model` file.
    pub path: PathBuf,
}

/// The models of the benchmark, found under `data` (shared/data).
pub fn models(data: &Path) -> Vec<ModelSpec> {
    let spm = data.join("models/sentencepiece");
    let model = |name: &'static str, algorithm: &'static str| ModelSpec {
        name,
        algorithm,
        path: spm.join(format!("{name}.model")),
    };
    vec![
        model("botchan_en_unigram_1000", "unigram"),
        model("kyoto_ja_unigram_8000", "unigram"),
        model("xlm-roberta-nomic.from-gguf", "unigram"),
        model("botchan_en_bpe_1000", "bpe"),
        model("llama-spm.from-gguf", "bpe"),
    ]
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

struct Tokie {
    tok: tokie::Tokenizer,
    ids: Vec<u32>,
}

impl Encoder for Tokie {
    fn encode(&mut self, text: &str) -> Result<&[u32], String> {
        self.ids = self.tok.encode_ids(text, false);
        Ok(&self.ids)
    }
}
