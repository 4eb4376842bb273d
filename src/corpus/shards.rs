//! A dataset cut into numbered shards of about N tokens each, at document boundaries: a shard is
//! closed (its files renamed into place) at the first document end at which it holds at least N
//! tokens, so every shard but the last holds N or a little more, and no document is split.
//!
//! Each shard is a dataset of its own in the same format ([`DocumentWriter`]), named by
//! [`shard_path`]: `train.bin` → `train_00000.bin`, `train_00001.bin`, …

use std::path::{Path, PathBuf};

use crate::corpus::{CorpusError, DocumentTotals, DocumentWriter, TokenWidth};

/// Opens the writer of shard `k` (from 0).
pub type OpenShard = Box<dyn FnMut(usize) -> Result<Box<dyn DocumentWriter>, CorpusError>>;

/// Called with each shard's number and totals once its files are in place (a manifest records
/// it).
pub type ShardDone = Box<dyn FnMut(usize, DocumentTotals) -> Result<(), CorpusError>>;

/// The name of shard `k` of `path`: `_` and five digits (more past 99 999) before its last
/// extension when `before_extension` (`data.ds` → `data_00003.ds`), else at its end (a Megatron
/// prefix: `data` → `data_00003`, then `.bin` and `.idx`).
pub fn shard_path(path: &Path, k: usize, before_extension: bool) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(Default::default, |n| n.to_string_lossy().into_owned());
    let dot = name.rfind('.').filter(|&i| before_extension && i > 0);
    let sharded = match dot {
        Some(i) => format!("{}_{k:05}{}", &name[..i], &name[i..]),
        None => format!("{name}_{k:05}"),
    };
    path.with_file_name(sharded)
}

/// See the module documentation.
pub struct ShardedWriter {
    open: OpenShard,
    done: ShardDone,
    /// Tokens at which a shard is closed at the next document end.
    tokens_per_shard: u64,
    width: TokenWidth,
    scratch: Vec<u8>,
    /// The shard being written (opened at its first document).
    current: Option<Box<dyn DocumentWriter>>,
    /// The number of the next shard to open.
    next: usize,
    /// Tokens in the current shard.
    in_shard: u64,
    totals: DocumentTotals,
}

impl ShardedWriter {
    /// Shards of at least `tokens_per_shard` tokens (at least 1) of `width`, numbered from
    /// `first` (a resumed run goes on from its last complete shard), each opened by `open` and
    /// reported to `done` when in place.
    pub fn new(
        width: TokenWidth,
        tokens_per_shard: u64,
        first: usize,
        open: OpenShard,
        done: ShardDone,
    ) -> ShardedWriter {
        ShardedWriter {
            open,
            done,
            tokens_per_shard: tokens_per_shard.max(1),
            width,
            scratch: Vec::new(),
            current: None,
            next: first,
            in_shard: 0,
            totals: DocumentTotals::default(),
        }
    }

    /// The shard being written, opened if need be.
    fn current(&mut self) -> Result<&mut Box<dyn DocumentWriter>, CorpusError> {
        if self.current.is_none() {
            self.current = Some((self.open)(self.next)?);
            self.next += 1;
            self.in_shard = 0;
        }
        Ok(self.current.as_mut().expect("opened above"))
    }

    /// Whether no shard was opened, by this run or by the one it resumes. Not "no documents
    /// written by this run": a run killed after listing its last shard resumes with none left.
    fn no_shard_yet(&self) -> bool {
        self.next == 0
    }

    /// Closes the current shard: its files renamed into place, then reported.
    fn close(&mut self) -> Result<(), CorpusError> {
        if let Some(shard) = self.current.take() {
            let totals = shard.finish()?;
            self.totals.documents += totals.documents;
            self.totals.tokens += totals.tokens;
            (self.done)(self.next - 1, totals)?;
        }
        Ok(())
    }
}

impl DocumentWriter for ShardedWriter {
    fn width(&self) -> TokenWidth {
        self.width
    }

    fn scratch(&mut self) -> &mut Vec<u8> {
        &mut self.scratch
    }

    fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
        let tokens = (bytes.len() / self.width.bytes) as u64;
        self.current()?.extend_document_encoded(bytes)?;
        self.in_shard += tokens;
        Ok(())
    }

    fn end_document(&mut self) -> Result<(), CorpusError> {
        self.current()?.end_document()?;
        if self.in_shard >= self.tokens_per_shard {
            self.close()?;
        }
        Ok(())
    }

    /// Closes the last shard; a run of no documents at all still writes one (empty) shard, so
    /// that its output exists — but not a resumed run with nothing left to write: its shards
    /// before are the output.
    fn finish(mut self: Box<Self>) -> Result<DocumentTotals, CorpusError> {
        if self.current.is_none() && self.no_shard_yet() {
            self.current()?;
        }
        self.close()?;
        Ok(self.totals)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::*;

    /// Each shard's documents' bytes, shared with the test.
    type Shards = Rc<RefCell<Vec<Vec<Vec<u8>>>>>;

    /// A writer that records its documents in a shared list of shards.
    struct Recorder {
        shards: Shards,
        k: usize,
        doc: Vec<u8>,
        scratch: Vec<u8>,
    }

    impl DocumentWriter for Recorder {
        fn width(&self) -> TokenWidth {
            TokenWidth::U16
        }
        fn scratch(&mut self) -> &mut Vec<u8> {
            &mut self.scratch
        }
        fn extend_document_encoded(&mut self, bytes: &[u8]) -> Result<(), CorpusError> {
            self.doc.extend_from_slice(bytes);
            Ok(())
        }
        fn end_document(&mut self) -> Result<(), CorpusError> {
            let doc = std::mem::take(&mut self.doc);
            self.shards.borrow_mut()[self.k].push(doc);
            Ok(())
        }
        fn finish(self: Box<Self>) -> Result<DocumentTotals, CorpusError> {
            let shards = self.shards.borrow();
            let docs = &shards[self.k];
            Ok(DocumentTotals {
                documents: docs.len() as u64,
                tokens: docs.iter().map(|d| d.len() as u64 / 2).sum(),
            })
        }
    }

    fn sharded(n: u64) -> (ShardedWriter, Shards, Rc<RefCell<Vec<usize>>>) {
        sharded_from(n, 0)
    }

    /// Shards numbered from `first`, as a resumed run's.
    fn sharded_from(n: u64, first: usize) -> (ShardedWriter, Shards, Rc<RefCell<Vec<usize>>>) {
        let shards = Rc::new(RefCell::new(Vec::new()));
        let done = Rc::new(RefCell::new(Vec::new()));
        let (s, d) = (shards.clone(), done.clone());
        let open: OpenShard = Box::new(move |k| {
            s.borrow_mut().push(Vec::new());
            assert_eq!(s.borrow().len(), k - first + 1, "shards open in order");
            Ok(Box::new(Recorder {
                shards: s.clone(),
                k: k - first,
                doc: Vec::new(),
                scratch: Vec::new(),
            }))
        });
        let done_fn: ShardDone = Box::new(move |k, _| {
            d.borrow_mut().push(k);
            Ok(())
        });
        (
            ShardedWriter::new(TokenWidth::U16, n, first, open, done_fn),
            shards,
            done,
        )
    }

    #[test]
    fn shards_close_at_the_first_document_end_past_the_size() {
        let (mut w, shards, done) = sharded(5);
        for len in [3usize, 3, 1, 7, 0, 2, 2] {
            let ids: Vec<u32> = (0..len as u32).collect();
            w.push_document(&ids).unwrap();
        }
        let totals = Box::new(w).finish().unwrap();
        assert_eq!(
            totals,
            DocumentTotals {
                documents: 7,
                tokens: 18
            }
        );
        let sizes: Vec<Vec<usize>> = shards
            .borrow()
            .iter()
            .map(|s| s.iter().map(|d| d.len() / 2).collect())
            .collect();
        // 3+3 ≥ 5; 1+7 ≥ 5; then 0, 2, 2 (the last shard, short).
        assert_eq!(sizes, [vec![3, 3], vec![1, 7], vec![0, 2, 2]]);
        assert_eq!(*done.borrow(), [0, 1, 2]);
    }

    #[test]
    fn no_documents_still_make_one_shard() {
        let (w, shards, done) = sharded(5);
        Box::new(w).finish().unwrap();
        assert_eq!(shards.borrow().len(), 1);
        assert_eq!(*done.borrow(), [0]);
        // Ending exactly at a shard's close opens no empty shard after it.
        let (mut w, shards, _) = sharded(2);
        w.push_document(&[1, 2]).unwrap();
        Box::new(w).finish().unwrap();
        assert_eq!(shards.borrow().len(), 1);
    }

    #[test]
    fn a_resumed_run_with_nothing_left_opens_no_shard() {
        // Killed after its last shard (3) was listed: the run resumes at 4 and finds every
        // document written already.
        let (w, shards, done) = sharded_from(5, 4);
        assert_eq!(Box::new(w).finish().unwrap(), DocumentTotals::default());
        assert!(shards.borrow().is_empty());
        assert!(done.borrow().is_empty());
        // With documents left, it goes on from 4.
        let (mut w, shards, done) = sharded_from(5, 4);
        w.push_document(&[1, 2]).unwrap();
        Box::new(w).finish().unwrap();
        assert_eq!(shards.borrow().len(), 1);
        assert_eq!(*done.borrow(), [4]);
    }

    #[test]
    fn shard_names() {
        let p = |s: &str, k, ext| shard_path(Path::new(s), k, ext).display().to_string();
        assert_eq!(p("out/train.bin", 3, true), "out/train_00003.bin");
        assert_eq!(p("data.ds", 0, true), "data_00000.ds");
        assert_eq!(p("out/prefix", 12, false), "out/prefix_00012");
        assert_eq!(p("out/a.b", 7, false), "out/a.b_00007");
        assert_eq!(p("noext", 123_456, true), "noext_123456");
        assert_eq!(p(".hidden", 1, true), ".hidden_00001");
    }
}
