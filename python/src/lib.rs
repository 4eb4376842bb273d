//! `simdtok._simdtok`: the extension module under the `simdtok` Python package (issue 27).
//!
//! The Python layer (`simdtok/__init__.py`) wraps these calls into the public API; here are the
//! parts that must be fast or safe: loading with the CLI's option checks, encoding one text, and
//! encoding batches on simdtok's own threads with the GIL released, from a `list[str]` or an
//! Arrow string array read in place, into flat buffers handed to numpy without a copy.

mod arrow;
mod batch;
mod pool;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use simdtok::bench::cpu::CpuReport;
use simdtok::kernels::{Kernels, TierRequest};
use simdtok::{Error, LoadOptions, ModelKind, TiktokenEncoding, WordPieceAlgorithm};

use batch::{Buffer, Output};

/// A Python exception carrying the library's message: `FileNotFoundError`/`PermissionError`/
/// `OSError` for a file that cannot be read, `ValueError` for everything else (a malformed or
/// unsupported model, an option that does not apply, a tier this CPU cannot run, an id out of
/// range).
fn to_py(e: Error) -> PyErr {
    let message = e.to_string();
    match &e {
        Error::Io { source, .. } => match source.kind() {
            std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => PyOSError::new_err(message),
        },
        _ => PyValueError::new_err(message),
    }
}

/// The encoding a `pattern=` names (the CLI's `--pattern` values, and tiktoken's names).
fn pattern(name: &str) -> PyResult<TiktokenEncoding> {
    match name.trim_end_matches("_base") {
        "gpt2" | "r50k" => Ok(TiktokenEncoding::R50k),
        "p50k" => Ok(TiktokenEncoding::P50k),
        "cl100k" => Ok(TiktokenEncoding::Cl100k),
        "o200k" => Ok(TiktokenEncoding::O200k),
        _ => Err(PyValueError::new_err(format!(
            "unknown pattern '{name}' (expected gpt2, r50k, p50k, cl100k or o200k)"
        ))),
    }
}

/// The kind of the model file as the library detects it (its first 4 KiB and its name), or
/// `None` when it cannot be read (the load then reports why).
fn detect(path: &Path) -> Option<ModelKind> {
    let mut head = Vec::with_capacity(4096);
    File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    Some(ModelKind::detect(path, &head))
}

/// The CLI's checks (`src/cli/model.rs`): an option that does not apply to the kind of model is
/// refused, never ignored. The messages are the CLI's, with the keyword names.
fn check_options(path: &Path, kind: ModelKind, options: &LoadOptions) -> PyResult<()> {
    let model = format!("{} is a {} model", path.display(), kind.name());
    let refuse = |what: String| Err(PyValueError::new_err(format!("{what} ({model})")));
    let wordpiece = matches!(kind, ModelKind::VocabTxt | ModelKind::TokenizerJson);
    if options.wordpiece_algorithm.is_some() && !wordpiece {
        return refuse("wordpiece_algorithm applies only to WordPiece models".into());
    }
    if let Some(lowercase) = options.lowercase
        && kind != ModelKind::VocabTxt
    {
        return refuse(format!(
            "lowercase={} applies only to BERT vocab.txt models",
            if lowercase { "True" } else { "False" }
        ));
    }
    let tiktoken = matches!(kind, ModelKind::Tiktoken | ModelKind::Gpt2);
    if options.tiktoken_encoding.is_some() && !tiktoken {
        return refuse("pattern applies only to tiktoken rank files".into());
    }
    if options.allow_special && !tiktoken {
        return refuse("allow_special applies only to tiktoken rank files".into());
    }
    Ok(())
}

/// A loaded model (the library's `simdtok::Tokenizer`).
#[pyclass(frozen, module = "simdtok._simdtok", name = "Tokenizer")]
struct PyTokenizer {
    inner: simdtok::Tokenizer,
}

#[pymethods]
impl PyTokenizer {
    /// Loads a model file; the options are the CLI's (see `simdtok.Tokenizer.from_file`).
    #[staticmethod]
    #[pyo3(signature = (path, *, tier=None, lowercase=None, add_special_tokens=false,
                        pattern=None, allow_special=false, wordpiece_algorithm=None,
                        cache_budget=None))]
    #[allow(clippy::too_many_arguments)]
    fn load(
        py: Python<'_>,
        path: PathBuf,
        tier: Option<&str>,
        lowercase: Option<bool>,
        add_special_tokens: bool,
        pattern: Option<&str>,
        allow_special: bool,
        wordpiece_algorithm: Option<&str>,
        cache_budget: Option<&str>,
    ) -> PyResult<PyTokenizer> {
        let options = LoadOptions {
            lowercase,
            add_special_tokens,
            wordpiece_algorithm: wordpiece_algorithm
                .map(|a| a.parse::<WordPieceAlgorithm>())
                .transpose()
                .map_err(PyValueError::new_err)?,
            tiktoken_encoding: pattern.map(self::pattern).transpose()?,
            allow_special,
            cache_budget: cache_budget
                .map(|b| b.parse::<simdtok::CacheBudget>())
                .transpose()
                .map_err(PyValueError::new_err)?
                .unwrap_or_default(),
        };
        let kernels = match tier {
            Some(tier) => {
                let request: TierRequest = tier
                    .parse()
                    .map_err(|e| PyValueError::new_err(format!("tier: {e}")))?;
                Kernels::request(request)
                    .map_err(|e| PyValueError::new_err(format!("tier: {e}")))?
            }
            None => Kernels::active().map_err(|e| PyValueError::new_err(e.to_string()))?,
        };
        if options != LoadOptions::default()
            && let Some(kind) = detect(&path)
        {
            check_options(&path, kind, &options)?;
        }
        let inner = py
            .detach(|| simdtok::Tokenizer::from_file_with_options(&path, kernels, &options))
            .map_err(to_py)?;
        Ok(PyTokenizer { inner })
    }

    /// The token ids of `text`.
    fn encode(&self, py: Python<'_>, text: &str) -> Vec<u32> {
        if text.len() > 4096 {
            py.detach(|| self.inner.encode(text))
        } else {
            self.inner.encode(text)
        }
    }

    /// `(ids, offsets, pieces)` of `text`; offsets are `(start, end)` byte offsets into its
    /// UTF-8 encoding, as the CLI's `jsonl` output.
    #[allow(clippy::type_complexity)]
    fn encode_full(&self, py: Python<'_>, text: &str) -> (Vec<u32>, Vec<(u32, u32)>, Vec<String>) {
        let enc = py.detach(|| self.inner.encode_full(text));
        (enc.ids, enc.offsets, enc.pieces)
    }

    /// Encodes a batch: `(ids, offsets, validity, null_count)`, the first three buffers for
    /// numpy (`validity` is an Arrow bitmap, `None` without nulls).
    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_batch<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let rows = batch::gather(texts)?;
        let out = batch::run(py, &self.inner, &rows, num_threads, false)?;
        let Output::Ids { ids, offsets } = out else {
            unreachable!()
        };
        let (validity, nulls) = rows.validity();
        let validity = validity.map(Buffer::u8);
        (Buffer::u32(ids), Buffer::i64(offsets), validity, nulls).into_pyobject(py)
    }

    /// Encodes a batch into a `list[list[int]]` (`None` for a null).
    #[pyo3(signature = (texts, num_threads=None))]
    fn encode_batch_list<'py>(
        &self,
        py: Python<'py>,
        texts: &Bound<'py, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Bound<'py, PyList>> {
        let rows = batch::gather(texts)?;
        let Output::Ids { ids, offsets } = batch::run(py, &self.inner, &rows, num_threads, false)?
        else {
            unreachable!()
        };
        let list = PyList::empty(py);
        for (i, w) in offsets.windows(2).enumerate() {
            if rows.is_null(i) {
                list.append(py.None())?;
            } else {
                list.append(PyList::new(py, &ids[w[0] as usize..w[1] as usize])?)?;
            }
        }
        pool::give_ids(ids);
        Ok(list)
    }

    /// The number of tokens of each text of a batch (a buffer of int64; 0 for a null).
    #[pyo3(signature = (texts, num_threads=None))]
    fn count_batch(
        &self,
        py: Python<'_>,
        texts: &Bound<'_, PyAny>,
        num_threads: Option<usize>,
    ) -> PyResult<Buffer> {
        let rows = batch::gather(texts)?;
        let Output::Counts(counts) = batch::run(py, &self.inner, &rows, num_threads, true)? else {
            unreachable!()
        };
        Ok(Buffer::i64(counts))
    }

    /// The text of `ids`, as the reference library decodes it.
    fn decode(&self, ids: Vec<u32>) -> PyResult<String> {
        self.inner.decode(&ids).map_err(to_py)
    }

    /// The number of ids.
    #[getter]
    fn vocab_size(&self) -> usize {
        self.inner.vocab_size()
    }

    /// The string of a vocabulary entry (`None` out of range).
    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.inner.id_to_piece(id)
    }

    /// The SIMD tier this tokenizer runs (`scalar`, `sse4.2`, `avx2`, `neon`).
    #[getter]
    fn tier(&self) -> &'static str {
        self.inner.kernels().tier().name()
    }
}

/// `simdtok cpu --json`, as a JSON string.
#[pyfunction]
fn cpu_json() -> PyResult<String> {
    let report = CpuReport::gather().map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(report.to_json().to_string())
}

/// The number of threads `num_threads=None` means here (the cores this process may use).
#[pyfunction]
fn default_threads() -> usize {
    pool::default_threads()
}

#[pymodule]
fn _simdtok(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTokenizer>()?;
    m.add_class::<Buffer>()?;
    m.add_function(wrap_pyfunction!(cpu_json, m)?)?;
    m.add_function(wrap_pyfunction!(default_threads, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
