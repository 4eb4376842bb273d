//! datatrove's tokenized files, as its `DocumentTokenizer` leaves them (`TokenizedFile`,
//! datatrove 0.10), for its `DatatroveFolderDataset` and nanotron:
//!
//! - `NAME.ds`: every document's tokens, one after another, little-endian `uint16` when the
//!   vocabulary has at most 65 536 ids, else `uint32` ([`datatrove_token_size`]).
//! - `NAME.ds.index`: each document's end, in tokens from the file's start (`uint64`, one per
//!   document, no leading 0; an empty document repeats the end before it).
//! - `NAME.ds.metadata`: three lines without a final newline — the tokenizer's name and the
//!   token size (`NAME|2`), the token count, and the count as `humanize.metric(n, unit="T")`
//!   writes it (`1.23 MT`).
//!
//! Memory stays bounded: the ends go to the index file as documents end.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{
    CorpusError, DocumentTotals, DocumentWriter, TokenWidth, io_error, persist, temporary_beside,
    with_extension,
};

const BUFFER: usize = 1 << 16;

/// datatrove's token size for a vocabulary of `vocab_size` ids (`token_size`: 4 when it is
/// larger than `uint16` holds, else 2).
pub fn datatrove_token_size(vocab_size: usize) -> usize {
    if vocab_size > u16::MAX as usize + 1 {
        4
    } else {
        2
    }
}

/// Writes one tokenized file. See the module documentation.
pub struct DatatroveWriter {
    paths: [PathBuf; 3],
    width: TokenWidth,
    tokenizer_name: String,
    tokens: BufWriter<NamedTempFile>,
    index: BufWriter<NamedTempFile>,
    totals: DocumentTotals,
    scratch: Vec<u8>,
}

impl DatatroveWriter {
    /// Starts `path` (the `.ds` file; its index and metadata beside it) with tokens of
    /// `token_size` bytes (2 or 4); `tokenizer_name` goes into the metadata (datatrove writes
    /// the name or path it loaded).
    pub fn create(
        path: &Path,
        token_size: usize,
        tokenizer_name: &str,
    ) -> Result<DatatroveWriter, CorpusError> {
        assert!(token_size == 2 || token_size == 4, "2 or 4 bytes");
        let paths = [
            path.to_path_buf(),
            with_extension(path, ".index"),
            with_extension(path, ".metadata"),
        ];
        let width = if token_size == 2 {
            TokenWidth::U16
        } else {
            TokenWidth::U32
        };
        Ok(DatatroveWriter {
            tokens: BufWriter::with_capacity(BUFFER, temporary_beside(&paths[0])?),
            index: BufWriter::with_capacity(BUFFER, temporary_beside(&paths[1])?),
            paths,
            width,
            tokenizer_name: tokenizer_name.to_owned(),
            totals: DocumentTotals::default(),
            scratch: Vec::new(),
        })
    }

    /// The metadata file's text.
    fn metadata(&self) -> String {
        let n = self.totals.tokens;
        format!(
            "{}|{}\n{n}\n{}",
            self.tokenizer_name,
            self.width.bytes,
            humanize_metric(n as f64, "T")
        )
    }

    /// Consumes the writer; see [`DocumentWriter::finish`].
    pub fn finish(self) -> Result<DocumentTotals, CorpusError> {
        DocumentWriter::finish(Box::new(self))
    }
}

impl DocumentWriter for DatatroveWriter {
    fn width(&self) -> TokenWidth {
        self.width
    }

    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    /// # Panics
    /// When `bytes` is not a whole number of tokens.
    fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        let size = self.width.bytes;
        assert!(bytes.len().is_multiple_of(size), "whole tokens");
        self.tokens
            .write_all(bytes)
            .map_err(io_error(&self.paths[0]))?;
        self.totals.tokens += (bytes.len() / size) as u64;
        Ok(())
    }

    fn end_document(&mut self) -> Result<(), CorpusError> {
        self.totals.documents += 1;
        self.index
            .write_all(&self.totals.tokens.to_le_bytes())
            .map_err(io_error(&self.paths[1]))
    }

    /// Writes the metadata and puts the three files in place (tokens, index, metadata).
    fn finish(self: Box<Self>) -> Result<DocumentTotals, CorpusError> {
        let metadata_text = self.metadata();
        let DatatroveWriter {
            paths,
            tokens,
            index,
            totals,
            ..
        } = *self;
        let mut metadata = temporary_beside(&paths[2])?;
        metadata
            .write_all(metadata_text.as_bytes())
            .map_err(io_error(&paths[2]))?;
        for (writer, path) in [(tokens, &paths[0]), (index, &paths[1])] {
            let file = writer
                .into_inner()
                .map_err(|e| io_error(path)(e.into_error()))?;
            persist(file, path)?;
        }
        persist(metadata, &paths[2])?;
        Ok(totals)
    }
}

/// `value` (a count: not negative) as Python's `humanize.metric(value, unit, precision=3)`
/// writes it (humanize 4.17): three significant figures and an SI prefix (`0.00 T`, `123 T`,
/// `1.50 kT`, `12.3 MT`; a rounding that carries moves to the next prefix: 999 999 is
/// `1.00 MT`).
pub fn humanize_metric(value: f64, unit: &str) -> String {
    let mut exponent = if value == 0.0 {
        0
    } else {
        value.abs().log10().floor() as i32
    };
    if !(0..30).contains(&exponent) {
        // Fractions and humanize's scientific form: no count comes near them.
        return format!("{value:.2e}{unit}");
    }
    let bucket = |e: i32| e.div_euclid(3) * 3;
    let digits = |e: i32| (2 - e.rem_euclid(3)).max(0) as usize;
    let old = bucket(exponent);
    let mut scaled = value / 10f64.powi(old);
    // Python's `round(x, d)` and `format(x, ".{d}f")` both round the binary value exactly, as
    // Rust's formatting does: the carry test reads the rounded text back.
    let rounded: f64 = format!("{:.*}", digits(exponent), scaled.abs())
        .parse()
        .expect("a number");
    if rounded >= 10f64.powi(exponent.rem_euclid(3) + 1) {
        exponent += 1;
        scaled /= 10f64.powi(bucket(exponent) - old);
    }
    let prefix = match exponent / 3 {
        0 => "",
        k => ["k", "M", "G", "T", "P", "E", "Z", "Y", "R", "Q"][k as usize - 1],
    };
    let space = if unit.is_empty() && prefix.is_empty() {
        ""
    } else {
        " "
    };
    format!("{:.*}{space}{prefix}{unit}", digits(exponent), scaled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanize_metric_as_python_writes_it() {
        // Outputs of humanize 4.17's `metric(n, unit="T")`.
        for (n, want) in [
            (0.0, "0.00 T"),
            (7.0, "7.00 T"),
            (123.0, "123 T"),
            (1500.0, "1.50 kT"),
            (12_345.0, "12.3 kT"),
            (999_999.0, "1.00 MT"),
            (99_950.0, "100 kT"),
            (1_125.0, "1.12 kT"),
            (9_995.0, "9.99 kT"),
            (999_500.0, "1.00 MT"),
            (1e15, "1.00 PT"),
            (12_345_678.0, "12.3 MT"),
            (2_000_000_000.0, "2.00 GT"),
        ] {
            assert_eq!(humanize_metric(n, "T"), want, "{n}");
        }
    }

    #[test]
    fn the_token_size_follows_datatrove() {
        assert_eq!(datatrove_token_size(50_257), 2);
        assert_eq!(datatrove_token_size(65_536), 2);
        assert_eq!(datatrove_token_size(65_537), 4);
    }
}
