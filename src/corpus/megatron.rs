//! Megatron-LM's indexed dataset (`PREFIX.bin` + `PREFIX.idx`), written as
//! `megatron.core.datasets.indexed_dataset.IndexedDatasetBuilder` writes it, so that its
//! `IndexedDataset` (and `GPTDataset` over it) reads the output as it reads
//! `tools/preprocess_data.py`'s.
//!
//! - `.bin`: every document's tokens, one after another, little-endian, in the dtype of
//!   [`MegatronDtype::for_vocab`] (Megatron's `DType.optimal_dtype(vocab_size)`: `uint16` below
//!   65 500 ids, else `int32`).
//! - `.idx`: `MMIDIDX\0\0`, version 1 (`u64`), the dtype's code (`u8`: 8 for `uint16`, 4 for
//!   `int32`), the number of sequences (`u64`), the number of document indices (`u64`), then each
//!   sequence's length (`int32`), each sequence's byte offset in `.bin` (`int64`), and the
//!   document indices (`int64`): `0`, then after each document the number of sequences so far.
//!
//! A document is one sequence, as `preprocess_data.py` makes it without `--split-sentences`; a
//! document of no tokens adds no sequence, only a document index (as there, an empty text gives
//! an empty document). Memory stays bounded however many documents: the lengths and document
//! indices wait in temporary files until [`MegatronWriter::finish`] writes the index. Both
//! files are written beside their final names and renamed into place only when complete (the
//! `.bin` first): a failed or killed run leaves no pair that claims to be a dataset.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// The first bytes of an index file.
pub const INDEX_HEADER: &[u8; 9] = b"MMIDIDX\x00\x00";

/// The token type of a dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MegatronDtype {
    /// `numpy.uint16` (code 8).
    U16,
    /// `numpy.int32` (code 4).
    I32,
}

impl MegatronDtype {
    /// Megatron's choice for a vocabulary of `vocab_size` ids (`DType.optimal_dtype`):
    /// `uint16` when it is below 65 500, else `int32`.
    pub fn for_vocab(vocab_size: usize) -> MegatronDtype {
        if vocab_size < 65_500 {
            MegatronDtype::U16
        } else {
            MegatronDtype::I32
        }
    }

    /// The code the index stores (Megatron's `DType` enum).
    pub fn code(self) -> u8 {
        match self {
            MegatronDtype::U16 => 8,
            MegatronDtype::I32 => 4,
        }
    }

    /// Bytes per token.
    pub fn size(self) -> usize {
        match self {
            MegatronDtype::U16 => 2,
            MegatronDtype::I32 => 4,
        }
    }

    /// Whether `id` is representable.
    pub fn holds(self, id: u32) -> bool {
        match self {
            MegatronDtype::U16 => id <= u16::MAX as u32,
            MegatronDtype::I32 => id <= i32::MAX as u32,
        }
    }

    /// Appends `ids` in this dtype, little-endian; the first id it cannot hold is the error.
    pub fn encode(self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), u32> {
        if let Some(&id) = ids.iter().find(|&&id| !self.holds(id)) {
            return Err(id);
        }
        match self {
            MegatronDtype::U16 => out.extend(ids.iter().flat_map(|&id| (id as u16).to_le_bytes())),
            MegatronDtype::I32 => out.extend(ids.iter().flat_map(|&id| id.to_le_bytes())),
        }
        Ok(())
    }
}

/// What a finished dataset holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MegatronTotals {
    /// Documents (the index holds one more document index).
    pub documents: u64,
    /// Sequences: the documents with tokens.
    pub sequences: u64,
    /// Tokens.
    pub tokens: u64,
}

/// Writes one dataset. See the module documentation.
pub struct MegatronWriter {
    bin_path: PathBuf,
    idx_path: PathBuf,
    dtype: MegatronDtype,
    bin: BufWriter<NamedTempFile>,
    /// The `int32` length of each sequence so far.
    lengths: BufWriter<File>,
    /// The `int64` document index after each document so far.
    documents: BufWriter<File>,
    totals: MegatronTotals,
    /// Tokens of the document being written (by [`MegatronWriter::extend_document`]).
    open: u64,
    scratch: Vec<u8>,
}

/// Why a dataset could not be written.
#[derive(Debug)]
pub enum MegatronError {
    /// Reading or writing a file (the path, the cause).
    Io(PathBuf, io::Error),
    /// An id the dataset's dtype cannot hold.
    IdTooLarge { id: u32, dtype: MegatronDtype },
    /// A document of more tokens than an `int32` length holds.
    DocumentTooLong(u64),
}

impl std::fmt::Display for MegatronError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MegatronError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            MegatronError::IdTooLarge { id, dtype } => write!(
                f,
                "id {id} does not fit the dataset's {} tokens",
                match dtype {
                    MegatronDtype::U16 => "uint16",
                    MegatronDtype::I32 => "int32",
                }
            ),
            MegatronError::DocumentTooLong(n) => write!(
                f,
                "a document of {n} tokens: Megatron's index holds at most {} per sequence",
                i32::MAX
            ),
        }
    }
}

impl std::error::Error for MegatronError {}

/// `PREFIX` with `ext` appended (`data/shard` → `data/shard.bin`), as Megatron names the files.
pub fn with_extension(prefix: &Path, ext: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

const BUFFER: usize = 1 << 16;

/// The error of an I/O failure on `path`.
fn io_error(path: &Path) -> impl FnOnce(io::Error) -> MegatronError + use<> {
    let path = path.to_path_buf();
    move |e| MegatronError::Io(path, e)
}

/// A temporary file beside `path` (same file system: it is renamed over `path` when complete).
fn temporary_beside(path: &Path, suffix: &str) -> Result<NamedTempFile, MegatronError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    tempfile::Builder::new()
        .prefix(".simdtok-")
        .suffix(suffix)
        .tempfile_in(dir.unwrap_or(Path::new(".")))
        .map_err(io_error(path))
}

impl MegatronWriter {
    /// Starts the dataset `PREFIX.bin` + `PREFIX.idx` of tokens of `dtype`. Nothing appears
    /// under those names before [`MegatronWriter::finish`].
    pub fn create(prefix: &Path, dtype: MegatronDtype) -> Result<MegatronWriter, MegatronError> {
        let bin_path = with_extension(prefix, ".bin");
        let idx_path = with_extension(prefix, ".idx");
        let bin = temporary_beside(&bin_path, ".bin.tmp")?;
        let spill = || tempfile::tempfile().map(|f| BufWriter::with_capacity(BUFFER, f));
        Ok(MegatronWriter {
            bin: BufWriter::with_capacity(BUFFER, bin),
            lengths: spill().map_err(io_error(&idx_path))?,
            documents: spill().map_err(io_error(&idx_path))?,
            bin_path,
            idx_path,
            dtype,
            totals: MegatronTotals {
                documents: 0,
                sequences: 0,
                tokens: 0,
            },
            open: 0,
            scratch: Vec::new(),
        })
    }

    /// The dataset's dtype.
    pub fn dtype(&self) -> MegatronDtype {
        self.dtype
    }

    /// Adds one whole document.
    pub fn push_document(&mut self, ids: &[u32]) -> Result<(), MegatronError> {
        self.extend_document(ids)?;
        self.end_document()
    }

    /// Adds `ids` to the document being written (a long text encoded in parts).
    pub fn extend_document(&mut self, ids: &[u32]) -> Result<(), MegatronError> {
        let mut bytes = std::mem::take(&mut self.scratch);
        bytes.clear();
        let dtype = self.dtype;
        dtype
            .encode(ids, &mut bytes)
            .map_err(|id| MegatronError::IdTooLarge { id, dtype })?;
        let written = self.write_bin(&bytes);
        self.scratch = bytes;
        written?;
        self.open += ids.len() as u64;
        Ok(())
    }

    /// Adds tokens already in the dataset's dtype (as [`MegatronDtype::encode`] writes them) to
    /// the document being written: a long text's parts rendered by several threads.
    ///
    /// # Panics
    /// When `bytes` is not a whole number of tokens.
    pub fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), MegatronError> {
        let size = self.dtype.size();
        assert!(bytes.len().is_multiple_of(size), "whole tokens");
        self.write_bin(bytes)?;
        self.open += (bytes.len() / size) as u64;
        Ok(())
    }

    /// Ends the document being written: a sequence when it has tokens, and its document index.
    pub fn end_document(&mut self) -> Result<(), MegatronError> {
        let n = std::mem::take(&mut self.open);
        if n > 0 {
            let len = i32::try_from(n).map_err(|_| MegatronError::DocumentTooLong(n))?;
            self.lengths
                .write_all(&len.to_le_bytes())
                .map_err(io_error(&self.idx_path))?;
            self.totals.sequences += 1;
            self.totals.tokens += n;
        }
        self.totals.documents += 1;
        self.documents
            .write_all(&(self.totals.sequences as i64).to_le_bytes())
            .map_err(io_error(&self.idx_path))
    }

    fn write_bin(&mut self, bytes: &[u8]) -> Result<(), MegatronError> {
        self.bin.write_all(bytes).map_err(io_error(&self.bin_path))
    }

    /// Writes the index and puts both files in place (`.bin` first). A document left open by
    /// [`MegatronWriter::extend_document`] is ended first.
    pub fn finish(mut self) -> Result<MegatronTotals, MegatronError> {
        if self.open > 0 {
            self.end_document()?;
        }
        let idx_path = self.idx_path.clone();
        let io = io_error;
        let rewind = |w: BufWriter<File>| -> io::Result<BufReader<File>> {
            let mut f = w.into_inner().map_err(|e| e.into_error())?;
            f.seek(SeekFrom::Start(0))?;
            Ok(BufReader::with_capacity(BUFFER, f))
        };
        let mut lengths = rewind(self.lengths).map_err(io(&idx_path))?;
        let mut documents = rewind(self.documents).map_err(io(&idx_path))?;
        let idx = temporary_beside(&idx_path, ".idx.tmp")?;
        let mut out = BufWriter::with_capacity(BUFFER, idx);
        let totals = self.totals;
        let size = self.dtype.size() as i64;
        (|| -> io::Result<()> {
            out.write_all(INDEX_HEADER)?;
            out.write_all(&1u64.to_le_bytes())?;
            out.write_all(&[self.dtype.code()])?;
            out.write_all(&totals.sequences.to_le_bytes())?;
            // The document indices: the leading 0 and one per document.
            out.write_all(&(totals.documents + 1).to_le_bytes())?;
            io::copy(&mut lengths, &mut out)?;
            lengths.seek(SeekFrom::Start(0))?;
            let mut pointer = 0i64;
            let mut len = [0u8; 4];
            for _ in 0..totals.sequences {
                lengths.read_exact(&mut len)?;
                out.write_all(&pointer.to_le_bytes())?;
                pointer += i32::from_le_bytes(len) as i64 * size;
            }
            out.write_all(&0i64.to_le_bytes())?;
            io::copy(&mut documents, &mut out)?;
            Ok(())
        })()
        .map_err(io(&idx_path))?;
        let bin = self
            .bin
            .into_inner()
            .map_err(|e| io_error(&self.bin_path)(e.into_error()))?;
        let idx = out
            .into_inner()
            .map_err(|e| e.into_error())
            .map_err(io(&idx_path))?;
        for (file, path) in [(&bin, &self.bin_path), (&idx, &idx_path)] {
            file.as_file().sync_all().map_err(io(path))?;
        }
        bin.persist(&self.bin_path)
            .map_err(|e| io_error(&self.bin_path)(e.error))?;
        idx.persist(&idx_path)
            .map_err(|e| io_error(&idx_path)(e.error))?;
        Ok(totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn megatrons_dtype_rule_and_codes() {
        assert_eq!(MegatronDtype::for_vocab(50_257), MegatronDtype::U16);
        assert_eq!(MegatronDtype::for_vocab(65_499), MegatronDtype::U16);
        assert_eq!(MegatronDtype::for_vocab(65_500), MegatronDtype::I32);
        assert_eq!(MegatronDtype::for_vocab(128_256), MegatronDtype::I32);
        assert_eq!(
            (MegatronDtype::U16.code(), MegatronDtype::I32.code()),
            (8, 4)
        );
        let mut out = Vec::new();
        assert_eq!(MegatronDtype::U16.encode(&[1, 65_535], &mut out), Ok(()));
        assert_eq!(out, [1, 0, 255, 255]);
        assert_eq!(
            MegatronDtype::U16.encode(&[3, 65_536], &mut out),
            Err(65_536)
        );
        assert_eq!(
            MegatronDtype::I32.encode(&[1 << 31], &mut out),
            Err(1 << 31)
        );
    }

    #[test]
    fn nothing_appears_before_finish_and_a_dropped_writer_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("shard");
        let mut w = MegatronWriter::create(&prefix, MegatronDtype::U16).unwrap();
        w.push_document(&[1, 2, 3]).unwrap();
        assert!(!with_extension(&prefix, ".bin").exists());
        drop(w);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
