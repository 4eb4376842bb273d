//! Corpora in and out of the tokenizer: the files training pipelines read.
//!
//! - [`inputs`]: the files a run reads, from paths, directories and glob patterns, in order.
//! - [`compression`]: gzip and zstd inputs, recognised by their first bytes, streamed.
//! - [`megatron`]: Megatron-LM's indexed dataset (`.bin` + `.idx`).
//! - [`datatrove`]: datatrove's tokenized files (`.ds` + `.ds.index` + `.ds.metadata`).
//! - [`llmc`]: llm.c's token shards (a header of 256 `int32`s, then the tokens).
//! - [`offsets`]: the document offsets beside a flat array of tokens (`int64`s).
//! - [`shards`]: a dataset cut into numbered shards of about N tokens, at document ends.
//! - [`manifest`]: the record of a sharded run, from which a killed run resumes.
//! - [`parquet`]: the texts of one string column of a Parquet file, a few rows at a time.
//!
//! Each writer takes documents one after another ([`DocumentWriter`]), keeps memory bounded
//! however many there are, and writes every file beside its final name, renaming it into place
//! only when complete: a failed or killed run leaves nothing that claims to be a dataset.

pub mod compression;
pub mod datatrove;
pub mod inputs;
pub mod llmc;
pub mod manifest;
pub mod megatron;
pub mod offsets;
/// The Parquet reader, a crate of its own (`corpus-parquet/`: see `Cargo.toml`).
pub use simdtok_parquet as parquet;
pub mod shards;

use std::io;
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// A writer of tokenized documents, in order.
pub trait DocumentWriter {
    /// The files' token integers.
    fn width(&self) -> TokenWidth;

    /// A buffer the writer keeps for [`DocumentWriter::extend_document`]'s encoding.
    fn scratch(&mut self) -> &mut Vec<u8>;

    /// Bytes per token in the files (2 or 4).
    fn token_size(&self) -> usize {
        self.width().bytes
    }

    /// Adds `ids` to the document being written (a long text may come in parts); an id the
    /// files cannot hold is an error, and nothing of `ids` is written then.
    fn extend_document(&mut self, ids: &[u32]) -> Result<(), CorpusError> {
        let mut bytes = std::mem::take(self.scratch());
        bytes.clear();
        let width = self.width();
        let written = width
            .encode(ids, &mut bytes)
            .and_then(|()| self.extend_document_encoded(&bytes));
        *self.scratch() = bytes;
        written
    }

    /// Adds tokens already encoded as the files hold them ([`TokenWidth::encode`] of
    /// [`DocumentWriter::token_size`]) to the document being written.
    fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError>;

    /// Ends the document being written (one of no tokens too).
    fn end_document(&mut self) -> Result<(), CorpusError>;

    /// Adds one whole document.
    fn push_document(&mut self, ids: &[u32]) -> Result<(), CorpusError> {
        self.extend_document(ids)?;
        self.end_document()
    }

    /// Writes what is left (indices, metadata) and puts every file in place; a document still
    /// open is ended first.
    fn finish(self: Box<Self>) -> Result<DocumentTotals, CorpusError>;
}

/// What a finished dataset holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DocumentTotals {
    /// Documents.
    pub documents: u64,
    /// Tokens.
    pub tokens: u64,
}

/// Why a dataset could not be written.
#[derive(Debug)]
pub enum CorpusError {
    /// Reading or writing a file (the path, the cause).
    Io(PathBuf, io::Error),
    /// An id the files' token type cannot hold (the type's name).
    IdTooLarge { id: u32, token: &'static str },
    /// A document longer than the format allows (its tokens, the most).
    DocumentTooLong { tokens: u64, most: u64 },
}

impl std::fmt::Display for CorpusError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CorpusError::Io(path, e) => write!(f, "{}: {e}", path.display()),
            CorpusError::IdTooLarge { id, token } => {
                write!(f, "id {id} does not fit the dataset's {token} tokens")
            }
            CorpusError::DocumentTooLong { tokens, most } => write!(
                f,
                "a document of {tokens} tokens: the format holds at most {most}"
            ),
        }
    }
}

impl std::error::Error for CorpusError {}

/// Little-endian token integers of 2 or 4 bytes, with the largest id each format allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenWidth {
    /// 2 or 4.
    pub bytes: usize,
    /// The largest id the format stores in it.
    pub max: u32,
    /// Its name in messages (`uint16`, `int32`, …).
    pub name: &'static str,
}

impl TokenWidth {
    /// `uint16`.
    pub const U16: TokenWidth = TokenWidth {
        bytes: 2,
        max: u16::MAX as u32,
        name: "uint16",
    };
    /// `uint32`.
    pub const U32: TokenWidth = TokenWidth {
        bytes: 4,
        max: u32::MAX,
        name: "uint32",
    };
    /// `int32`: ids below 2^31.
    pub const I32: TokenWidth = TokenWidth {
        bytes: 4,
        max: i32::MAX as u32,
        name: "int32",
    };

    /// Appends `ids`, little-endian; the first id too large is the error.
    pub fn encode(self, ids: &[u32], out: &mut Vec<u8>) -> Result<(), CorpusError> {
        if let Some(&id) = ids.iter().find(|&&id| id > self.max) {
            return Err(CorpusError::IdTooLarge {
                id,
                token: self.name,
            });
        }
        if self.bytes == 2 {
            out.extend(ids.iter().flat_map(|&id| (id as u16).to_le_bytes()));
        } else {
            out.extend(ids.iter().flat_map(|&id| id.to_le_bytes()));
        }
        Ok(())
    }

    /// Whether `id` fits.
    pub fn holds(self, id: u32) -> bool {
        id <= self.max
    }
}

/// `path` with `ext` appended (`data/shard` → `data/shard.bin`), as the formats name their
/// files.
pub fn with_extension(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

/// The error of an I/O failure on `path`.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(io::Error) -> CorpusError + use<> {
    let path = path.to_path_buf();
    move |e| CorpusError::Io(path, e)
}

/// A temporary file beside `path` (same file system: it is renamed over `path` when complete).
pub(crate) fn temporary_beside(path: &Path) -> Result<NamedTempFile, CorpusError> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    tempfile::Builder::new()
        .prefix(".simdtok-")
        .suffix(".tmp")
        .tempfile_in(dir.unwrap_or(Path::new(".")))
        .map_err(io_error(path))
}

/// Flushes `file` to disk and renames it to `path`.
pub(crate) fn persist(file: NamedTempFile, path: &Path) -> Result<(), CorpusError> {
    file.as_file().sync_all().map_err(io_error(path))?;
    file.persist(path).map_err(|e| io_error(path)(e.error))?;
    Ok(())
}
