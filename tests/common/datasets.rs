//! Reading the datasets `encode` writes, as their ecosystems read them, for the tests
//! (`#[path = "common/datasets.rs"] mod datasets;`).

// Each test uses a different subset.
#![allow(dead_code)]

use std::path::Path;

use simdtok::corpus::with_extension;

/// A dataset as Megatron's `IndexedDataset` sees it.
#[derive(Debug, PartialEq)]
pub struct Dataset {
    pub dtype_code: u8,
    pub sequence_lengths: Vec<i32>,
    pub sequence_pointers: Vec<i64>,
    pub document_indices: Vec<i64>,
    /// `dataset[i]` for every sequence `i`, as `u32`s.
    pub sequences: Vec<Vec<u32>>,
}

/// `_IndexReader.__init__` then `IndexedDataset.__getitem__(i)` for each `i`: the header
/// (`MMIDIDX\0\0`, version 1, the dtype's code, the two counts), then `count` lengths
/// (`int32`), pointers (`int64`) and document indices (`int64`) one after another from the
/// header's end; sequence `i` is `lengths[i]` items of the dtype at byte `pointers[i]` of
/// `.bin`. Anything left over in the index is an error (Megatron would read it as the
/// multimodal modes).
pub fn megatron(prefix: &Path) -> Dataset {
    let idx = std::fs::read(with_extension(prefix, ".idx")).unwrap();
    let bin = std::fs::read(with_extension(prefix, ".bin")).unwrap();
    assert_eq!(&idx[..9], b"MMIDIDX\x00\x00", "bad header");
    let u64_at = |at: usize| u64::from_le_bytes(idx[at..at + 8].try_into().unwrap());
    assert_eq!(u64_at(9), 1, "bad version");
    let dtype_code = idx[17];
    let size = match dtype_code {
        8 => 2,
        4 => 4,
        other => panic!("dtype code {other}"),
    };
    let sequence_count = u64_at(18) as usize;
    let document_count = u64_at(26) as usize;
    let mut at = 34;
    let mut take = |n: usize, width: usize| {
        let s = &idx[at..at + n * width];
        at += n * width;
        s.chunks_exact(width)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(c);
                i64::from_le_bytes(b) << (64 - 8 * width) >> (64 - 8 * width)
            })
            .collect::<Vec<i64>>()
    };
    let sequence_lengths: Vec<i32> = take(sequence_count, 4)
        .into_iter()
        .map(|v| v as i32)
        .collect();
    let sequence_pointers = take(sequence_count, 8);
    let document_indices = take(document_count, 8);
    assert_eq!(at, idx.len(), "bytes after the document indices");
    let sequences = (0..sequence_count)
        .map(|i| {
            let start = sequence_pointers[i] as usize;
            let end = start + sequence_lengths[i] as usize * size;
            bin[start..end]
                .chunks_exact(size)
                .map(|c| match size {
                    2 => u16::from_le_bytes([c[0], c[1]]) as u32,
                    _ => i32::from_le_bytes(c.try_into().unwrap()) as u32,
                })
                .collect()
        })
        .collect();
    Dataset {
        dtype_code,
        sequence_lengths,
        sequence_pointers,
        document_indices,
        sequences,
    }
}

/// The documents of a dataset (the sequences between consecutive document indices; one
/// sequence or none each here).
pub fn megatron_documents(d: &Dataset) -> Vec<Vec<u32>> {
    d.document_indices
        .windows(2)
        .map(|w| {
            (w[0]..w[1])
                .flat_map(|s| d.sequences[s as usize].clone())
                .collect()
        })
        .collect()
}

/// The documents of `NAME.ds` (tokens of `size` bytes), split at the ends of `NAME.ds.index`,
/// and the metadata's text.
pub fn datatrove(path: &Path, size: usize) -> (Vec<Vec<u32>>, String) {
    let tokens: Vec<u32> = std::fs::read(path)
        .unwrap()
        .chunks_exact(size)
        .map(|c| match size {
            2 => u16::from_le_bytes([c[0], c[1]]) as u32,
            _ => u32::from_le_bytes(c.try_into().unwrap()),
        })
        .collect();
    let index = std::fs::read(with_extension(path, ".index")).unwrap();
    assert_eq!(index.len() % 8, 0);
    let mut start = 0usize;
    let docs = index
        .chunks_exact(8)
        .map(|c| {
            let end = u64::from_le_bytes(c.try_into().unwrap()) as usize;
            let doc = tokens[start..end].to_vec();
            start = end;
            doc
        })
        .collect();
    assert_eq!(start, tokens.len(), "the last end is the file's end");
    let metadata = std::fs::read_to_string(with_extension(path, ".metadata")).unwrap();
    (docs, metadata)
}

/// The header's magic, version and tokens of the shard at `path`, as llm.c reads them.
pub fn llmc(path: &Path) -> (i32, i32, Vec<u32>) {
    let bytes = std::fs::read(path).unwrap();
    let word = |i: usize| i32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap());
    let (magic, version, count) = (word(0), word(1), word(2) as usize);
    assert!(
        (3..256).all(|i| word(i) == 0),
        "the rest of the header is zeros"
    );
    let size = match (magic, version) {
        (20_240_520, 1) => 2,
        (20_240_801, 7) => 4,
        other => panic!("magic and version {other:?}"),
    };
    let body = &bytes[1024..];
    assert_eq!(body.len(), count * size, "the header's count is the file's");
    let tokens = body
        .chunks_exact(size)
        .map(|c| match size {
            2 => u16::from_le_bytes([c[0], c[1]]) as u32,
            _ => u32::from_le_bytes(c.try_into().unwrap()),
        })
        .collect();
    (magic, version, tokens)
}
