//! A document-offsets sidecar for flat token arrays (`encode --output-format npy|u16|u32
//! --index PATH`): little-endian `int64`s, the token offset where each document starts, then
//! the end of the last (so `n + 1` values for `n` documents, the first 0): document `i` is
//! `tokens[offsets[i]..offsets[i + 1]]`, as `np.fromfile(PATH, dtype="<i8")` reads it. Written
//! as documents end (bounded memory), beside its final name, renamed into place when complete.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::{CorpusError, io_error, persist, temporary_beside};

/// See the module documentation.
pub struct DocumentOffsets {
    path: PathBuf,
    file: BufWriter<NamedTempFile>,
    /// Tokens so far: where the next document starts.
    end: u64,
    documents: u64,
}

impl DocumentOffsets {
    /// Starts the sidecar at `path` (its first offset, 0, written).
    pub fn create(path: &Path) -> Result<DocumentOffsets, CorpusError> {
        let mut file = BufWriter::with_capacity(1 << 16, temporary_beside(path)?);
        file.write_all(&0i64.to_le_bytes())
            .map_err(io_error(path))?;
        Ok(DocumentOffsets {
            path: path.to_path_buf(),
            file,
            end: 0,
            documents: 0,
        })
    }

    /// A document of `tokens` tokens ended.
    pub fn push(&mut self, tokens: u64) -> Result<(), CorpusError> {
        self.end += tokens;
        self.documents += 1;
        self.file
            .write_all(&(self.end as i64).to_le_bytes())
            .map_err(io_error(&self.path))
    }

    /// Puts the sidecar in place; returns the number of documents.
    pub fn finish(self) -> Result<u64, CorpusError> {
        let file = self
            .file
            .into_inner()
            .map_err(|e| io_error(&self.path)(e.into_error()))?;
        persist(file, &self.path)?;
        Ok(self.documents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_start_at_zero_and_end_with_the_total() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ids.idx");
        let mut o = DocumentOffsets::create(&path).unwrap();
        for n in [3, 0, 5] {
            o.push(n).unwrap();
        }
        assert_eq!(o.finish().unwrap(), 3);
        let got: Vec<i64> = std::fs::read(&path)
            .unwrap()
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        assert_eq!(got, [0, 3, 3, 8]);
    }
}
