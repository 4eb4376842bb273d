//! llm.c's token shards, as its `dev/data/data_common.py` `write_datafile` writes them (and
//! its C data loader reads them): a header of 256 little-endian `int32`s — the magic, the
//! version, the number of tokens, zeros — then the tokens. A vocabulary of at most 65 536 ids
//! gets the `gpt-2` layout (magic 20240520, version 1, `uint16` tokens), a larger one the
//! `llama-3` layout (magic 20240801, version 7, `uint32` tokens). A shard holds fewer than 2^31
//! tokens (the header's count is an `int32`).
//!
//! Documents follow one another with nothing between them but the end-of-document id the
//! caller adds; llm.c's own scripts put `<|endoftext|>` before each document rather than after
//! (either way one stands between any two documents).

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{
    CorpusError, DocumentTotals, DocumentWriter, TokenWidth, io_error, persist, temporary_beside,
};

/// Bytes of the header: 256 `int32`s.
pub const HEADER_BYTES: usize = 256 * 4;

/// One of llm.c's two layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LlmcLayout {
    /// `gpt-2`: magic 20240520, version 1, `uint16` tokens.
    Gpt2,
    /// `llama-3`: magic 20240801, version 7, `uint32` tokens.
    Llama3,
}

impl LlmcLayout {
    /// The layout for a vocabulary of `vocab_size` ids: `gpt-2` when `uint16` holds them.
    pub fn for_vocab(vocab_size: usize) -> LlmcLayout {
        if vocab_size <= u16::MAX as usize + 1 {
            LlmcLayout::Gpt2
        } else {
            LlmcLayout::Llama3
        }
    }

    /// The header's magic number and version.
    pub fn magic_and_version(self) -> (i32, i32) {
        match self {
            LlmcLayout::Gpt2 => (20_240_520, 1),
            LlmcLayout::Llama3 => (20_240_801, 7),
        }
    }

    /// The tokens' integers.
    pub fn width(self) -> TokenWidth {
        match self {
            LlmcLayout::Gpt2 => TokenWidth::U16,
            LlmcLayout::Llama3 => TokenWidth::U32,
        }
    }
}

/// Writes one shard. See the module documentation.
pub struct LlmcWriter {
    path: PathBuf,
    layout: LlmcLayout,
    file: BufWriter<NamedTempFile>,
    totals: DocumentTotals,
    scratch: Vec<u8>,
}

const BUFFER: usize = 1 << 16;

impl LlmcWriter {
    /// Starts the shard `path` in `layout`; nothing appears under that name before
    /// [`DocumentWriter::finish`].
    pub fn create(path: &Path, layout: LlmcLayout) -> Result<LlmcWriter, CorpusError> {
        let mut file = BufWriter::with_capacity(BUFFER, temporary_beside(path)?);
        // The count is written at the end, over this header's third word.
        file.write_all(&header(layout, 0)).map_err(io_error(path))?;
        Ok(LlmcWriter {
            path: path.to_path_buf(),
            layout,
            file,
            totals: DocumentTotals::default(),
            scratch: Vec::new(),
        })
    }

    /// Consumes the writer; see [`DocumentWriter::finish`].
    pub fn finish(self) -> Result<DocumentTotals, CorpusError> {
        DocumentWriter::finish(Box::new(self))
    }
}

/// The header of a shard of `tokens` tokens.
fn header(layout: LlmcLayout, tokens: i32) -> Vec<u8> {
    let (magic, version) = layout.magic_and_version();
    let mut words = [0i32; 256];
    words[..3].copy_from_slice(&[magic, version, tokens]);
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

impl DocumentWriter for LlmcWriter {
    fn width(&self) -> TokenWidth {
        self.layout.width()
    }

    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    /// # Panics
    /// When `bytes` is not a whole number of tokens.
    fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        let size = self.token_size();
        assert!(bytes.len().is_multiple_of(size), "whole tokens");
        let tokens = self.totals.tokens + (bytes.len() / size) as u64;
        if tokens >= 1 << 31 {
            return Err(CorpusError::DocumentTooLong {
                tokens,
                most: (1 << 31) - 1,
            });
        }
        self.file.write_all(bytes).map_err(io_error(&self.path))?;
        self.totals.tokens = tokens;
        Ok(())
    }

    fn end_document(&mut self) -> Result<(), CorpusError> {
        self.totals.documents += 1;
        Ok(())
    }

    /// Writes the token count into the header and puts the shard in place.
    fn finish(self: Box<Self>) -> Result<DocumentTotals, CorpusError> {
        let LlmcWriter {
            path,
            layout,
            file,
            totals,
            ..
        } = *self;
        let io = || io_error(&path);
        let mut file = file.into_inner().map_err(|e| io()(e.into_error()))?;
        let count = i32::try_from(totals.tokens).expect("checked as tokens came");
        file.seek(SeekFrom::Start(0)).map_err(io())?;
        file.write_all(&header(layout, count)).map_err(io())?;
        persist(file, &path)?;
        Ok(totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_llm_cs() {
        let h = header(LlmcLayout::Gpt2, 7);
        assert_eq!(h.len(), HEADER_BYTES);
        // 20240520 = 0x0134D888, little-endian.
        assert_eq!(&h[..12], &[0x88, 0xD8, 0x34, 0x01, 1, 0, 0, 0, 7, 0, 0, 0]);
        assert!(h[12..].iter().all(|&b| b == 0));
        assert_eq!(LlmcLayout::for_vocab(50_257), LlmcLayout::Gpt2);
        assert_eq!(LlmcLayout::for_vocab(65_536), LlmcLayout::Gpt2);
        assert_eq!(LlmcLayout::for_vocab(128_256), LlmcLayout::Llama3);
        assert_eq!(LlmcLayout::Llama3.magic_and_version(), (20_240_801, 7));
    }
}
