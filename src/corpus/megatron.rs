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

use super::{
    CorpusError, DocumentTotals, DocumentWriter, TokenWidth, io_error, persist, temporary_beside,
    with_extension,
};

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

    /// The tokens' integers.
    pub fn width(self) -> TokenWidth {
        match self {
            MegatronDtype::U16 => TokenWidth::U16,
            MegatronDtype::I32 => TokenWidth::I32,
        }
    }
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
    totals: DocumentTotals,
    sequences: u64,
    /// Tokens of the document being written.
    open: u64,
    scratch: Vec<u8>,
}

const BUFFER: usize = 1 << 16;

impl MegatronWriter {
    /// Starts the dataset `PREFIX.bin` + `PREFIX.idx` of tokens of `dtype`. Nothing appears
    /// under those names before [`DocumentWriter::finish`].
    pub fn create(prefix: &Path, dtype: MegatronDtype) -> Result<MegatronWriter, CorpusError> {
        let bin_path = with_extension(prefix, ".bin");
        let idx_path = with_extension(prefix, ".idx");
        let bin = temporary_beside(&bin_path)?;
        let spill = || tempfile::tempfile().map(|f| BufWriter::with_capacity(BUFFER, f));
        Ok(MegatronWriter {
            bin: BufWriter::with_capacity(BUFFER, bin),
            lengths: spill().map_err(io_error(&idx_path))?,
            documents: spill().map_err(io_error(&idx_path))?,
            bin_path,
            idx_path,
            dtype,
            totals: DocumentTotals::default(),
            sequences: 0,
            open: 0,
            scratch: Vec::new(),
        })
    }

    /// The dataset's dtype.
    pub fn dtype(&self) -> MegatronDtype {
        self.dtype
    }

    /// Consumes the writer; see [`DocumentWriter::finish`].
    pub fn finish(self) -> Result<DocumentTotals, CorpusError> {
        DocumentWriter::finish(Box::new(self))
    }

    /// Sequences so far: the documents with tokens.
    pub fn sequences(&self) -> u64 {
        self.sequences
    }
}

/// The index of `sequences` sequences and `documents` documents: header, lengths, pointers
/// (from the lengths), document indices.
fn write_index(
    dtype: MegatronDtype,
    sequences: u64,
    documents: u64,
    lengths: &mut BufReader<File>,
    document_indices: &mut BufReader<File>,
    out: &mut impl Write,
) -> io::Result<()> {
    out.write_all(INDEX_HEADER)?;
    out.write_all(&1u64.to_le_bytes())?;
    out.write_all(&[dtype.code()])?;
    out.write_all(&sequences.to_le_bytes())?;
    // The document indices: the leading 0 and one per document.
    out.write_all(&(documents + 1).to_le_bytes())?;
    io::copy(lengths, out)?;
    lengths.seek(SeekFrom::Start(0))?;
    let size = dtype.width().bytes as i64;
    let mut pointer = 0i64;
    let mut len = [0u8; 4];
    for _ in 0..sequences {
        lengths.read_exact(&mut len)?;
        out.write_all(&pointer.to_le_bytes())?;
        pointer += i32::from_le_bytes(len) as i64 * size;
    }
    out.write_all(&0i64.to_le_bytes())?;
    io::copy(document_indices, out)?;
    Ok(())
}

/// A spill file, flushed and read again from its start.
fn rewind(w: BufWriter<File>) -> io::Result<BufReader<File>> {
    let mut f = w.into_inner().map_err(|e| e.into_error())?;
    f.seek(SeekFrom::Start(0))?;
    Ok(BufReader::with_capacity(BUFFER, f))
}

impl DocumentWriter for MegatronWriter {
    fn width(&self) -> TokenWidth {
        self.dtype.width()
    }

    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    /// # Panics
    /// When `bytes` is not a whole number of tokens.
    fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        let size = self.token_size();
        assert!(bytes.len().is_multiple_of(size), "whole tokens");
        self.bin
            .write_all(bytes)
            .map_err(io_error(&self.bin_path))?;
        self.open += (bytes.len() / size) as u64;
        Ok(())
    }

    /// A sequence when the document has tokens, and its document index.
    fn end_document(&mut self) -> Result<(), CorpusError> {
        let n = std::mem::take(&mut self.open);
        if n > 0 {
            let len = i32::try_from(n).map_err(|_| CorpusError::DocumentTooLong {
                tokens: n,
                most: i32::MAX as u64,
            })?;
            self.lengths
                .write_all(&len.to_le_bytes())
                .map_err(io_error(&self.idx_path))?;
            self.sequences += 1;
            self.totals.tokens += n;
        }
        self.totals.documents += 1;
        self.documents
            .write_all(&(self.sequences as i64).to_le_bytes())
            .map_err(io_error(&self.idx_path))
    }

    /// Writes the index and puts both files in place (`.bin` first).
    fn finish(mut self: Box<Self>) -> Result<DocumentTotals, CorpusError> {
        if self.open > 0 {
            self.end_document()?;
        }
        let MegatronWriter {
            bin_path,
            idx_path,
            dtype,
            bin,
            lengths,
            documents,
            totals,
            sequences,
            ..
        } = *self;
        let io = || io_error(&idx_path);
        let mut lengths = rewind(lengths).map_err(io())?;
        let mut document_indices = rewind(documents).map_err(io())?;
        let mut out = BufWriter::with_capacity(BUFFER, temporary_beside(&idx_path)?);
        write_index(
            dtype,
            sequences,
            totals.documents,
            &mut lengths,
            &mut document_indices,
            &mut out,
        )
        .map_err(io())?;
        let idx = out.into_inner().map_err(|e| io()(e.into_error()))?;
        let bin = bin
            .into_inner()
            .map_err(|e| io_error(&bin_path)(e.into_error()))?;
        persist(bin, &bin_path)?;
        persist(idx, &idx_path)?;
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
        let u16 = MegatronDtype::U16.width();
        assert!(u16.encode(&[1, 65_535], &mut out).is_ok());
        assert_eq!(out, [1, 0, 255, 255]);
        assert!(u16.encode(&[3, 65_536], &mut out).is_err());
        assert!(
            MegatronDtype::I32
                .width()
                .encode(&[1 << 31], &mut out)
                .is_err()
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
