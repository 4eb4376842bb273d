//! The record of a sharded run, beside its output, from which a killed run resumes: which run it
//! is (its settings and inputs), each shard in place and where in the inputs it ended, and
//! whether the run finished.
//!
//! A shard is listed only after its files are renamed into place, and the manifest itself is
//! replaced whole (written beside it, synced, renamed), so after a kill at any point the
//! manifest lists only complete shards. Shards are cut at document ends by token counts alone
//! ([`crate::corpus::shards`]), so a run that starts again after the last listed shard — at the
//! input and document where it ended — writes exactly the shards an uninterrupted run writes:
//! none is duplicated or lost, and a shard renamed into place but not yet listed is written
//! again, the same.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::corpus::{CorpusError, io_error, persist, temporary_beside};

/// The manifest's format version.
const VERSION: u32 = 1;

/// A shard in place, and where the inputs stood when it closed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardRecord {
    /// Its number.
    pub shard: usize,
    /// Its documents and tokens.
    pub documents: u64,
    pub tokens: u64,
    /// The input (its place in the run's list) whose document ended it, and how many of that
    /// input's documents were written by then (in this shard and those before).
    pub input: usize,
    pub input_documents: u64,
}

/// Where a resumed run starts: the next shard's number, and the input and the documents of it
/// already written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ResumePoint {
    pub shard: usize,
    pub input: usize,
    pub input_documents: u64,
}

#[derive(Debug, Serialize, Deserialize)]
struct State {
    simdtok_manifest: u32,
    /// The settings that decide the output (model digest, formats, options), as the caller
    /// gives them: a resumed run must have the same.
    run: serde_json::Value,
    /// The inputs, in order.
    inputs: Vec<String>,
    shards: Vec<ShardRecord>,
    complete: bool,
}

/// See the module documentation.
#[derive(Debug)]
pub struct Manifest {
    path: PathBuf,
    state: State,
}

/// Why a run cannot resume from a manifest.
#[derive(Debug)]
pub enum ManifestError {
    /// Reading or writing it.
    Corpus(CorpusError),
    /// Not a manifest this version reads (the cause).
    Invalid(PathBuf, String),
    /// Written by a run with other settings or inputs (what differs).
    OtherRun(PathBuf, String),
}

impl std::fmt::Display for ManifestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ManifestError::Corpus(e) => write!(f, "{e}"),
            ManifestError::Invalid(p, why) => {
                write!(f, "{}: not a simdtok manifest: {why}", p.display())
            }
            ManifestError::OtherRun(p, what) => write!(
                f,
                "{}: written by a run with other {what}; resume with the same settings and \
                 inputs, or remove it to start over",
                p.display()
            ),
        }
    }
}

impl std::error::Error for ManifestError {}

impl From<CorpusError> for ManifestError {
    fn from(e: CorpusError) -> ManifestError {
        ManifestError::Corpus(e)
    }
}

impl Manifest {
    /// The manifest of the output `output`: `OUTPUT.manifest.json`.
    pub fn path_for(output: &Path) -> PathBuf {
        crate::corpus::with_extension(output, ".manifest.json")
    }

    /// A new run's manifest (written now: a run killed before its first shard resumes from
    /// the start).
    pub fn create(
        path: &Path,
        run: serde_json::Value,
        inputs: Vec<String>,
    ) -> Result<Manifest, CorpusError> {
        let manifest = Manifest {
            path: path.to_path_buf(),
            state: State {
                simdtok_manifest: VERSION,
                run,
                inputs,
                shards: Vec::new(),
                complete: false,
            },
        };
        manifest.write()?;
        Ok(manifest)
    }

    /// The manifest at `path` of an earlier run with these settings and inputs, or `None` when
    /// there is none (a new run).
    pub fn open(
        path: &Path,
        run: &serde_json::Value,
        inputs: &[String],
    ) -> Result<Option<Manifest>, ManifestError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_error(path)(e).into()),
        };
        let invalid = |why: String| ManifestError::Invalid(path.to_path_buf(), why);
        let state: State = serde_json::from_slice(&bytes).map_err(|e| invalid(e.to_string()))?;
        if state.simdtok_manifest != VERSION {
            return Err(invalid(format!("version {}", state.simdtok_manifest)));
        }
        let other = |what: &str| ManifestError::OtherRun(path.to_path_buf(), what.to_owned());
        if &state.run != run {
            return Err(other("settings (model, formats or options)"));
        }
        if state.inputs != inputs {
            return Err(other("inputs"));
        }
        let numbered = state.shards.iter().enumerate().all(|(k, s)| s.shard == k);
        let ordered = state
            .shards
            .windows(2)
            .all(|w| (w[0].input, w[0].input_documents) <= (w[1].input, w[1].input_documents));
        let in_range = state.shards.iter().all(|s| s.input < inputs.len());
        if !(numbered && ordered && in_range) {
            return Err(invalid("its shards are out of order".into()));
        }
        Ok(Some(Manifest {
            path: path.to_path_buf(),
            state,
        }))
    }

    /// Whether the run it records finished.
    pub fn is_complete(&self) -> bool {
        self.state.complete
    }

    /// Where the run goes on: after its last listed shard.
    pub fn resume_point(&self) -> ResumePoint {
        match self.state.shards.last() {
            Some(s) => ResumePoint {
                shard: s.shard + 1,
                input: s.input,
                input_documents: s.input_documents,
            },
            None => ResumePoint::default(),
        }
    }

    /// The shards listed, in order.
    pub fn shards(&self) -> &[ShardRecord] {
        &self.state.shards
    }

    /// Lists a shard now in place.
    pub fn shard_done(&mut self, record: ShardRecord) -> Result<(), CorpusError> {
        debug_assert_eq!(record.shard, self.state.shards.len());
        self.state.shards.push(record);
        self.write()
    }

    /// Records that the run finished.
    pub fn complete(&mut self) -> Result<(), CorpusError> {
        self.state.complete = true;
        self.write()
    }

    /// Replaces the file whole: written beside it, synced, renamed.
    fn write(&self) -> Result<(), CorpusError> {
        let mut file = temporary_beside(&self.path)?;
        let text = serde_json::to_vec_pretty(&self.state).expect("a manifest serializes");
        std::io::Write::write_all(&mut file, &text).map_err(io_error(&self.path))?;
        persist(file, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(shard: usize, input: usize, input_documents: u64) -> ShardRecord {
        ShardRecord {
            shard,
            documents: 3,
            tokens: 30,
            input,
            input_documents,
        }
    }

    #[test]
    fn a_manifest_resumes_after_its_last_shard() {
        let dir = tempfile::tempdir().unwrap();
        let path = Manifest::path_for(&dir.path().join("train.bin"));
        assert!(path.ends_with("train.bin.manifest.json"));
        let run = serde_json::json!({"model": "abc", "shard_tokens": 30});
        let inputs = vec!["a.jsonl".to_owned(), "b.jsonl".to_owned()];
        assert!(Manifest::open(&path, &run, &inputs).unwrap().is_none());
        let mut m = Manifest::create(&path, run.clone(), inputs.clone()).unwrap();
        assert_eq!(m.resume_point(), ResumePoint::default());
        m.shard_done(record(0, 0, 3)).unwrap();
        m.shard_done(record(1, 1, 2)).unwrap();
        let again = Manifest::open(&path, &run, &inputs).unwrap().unwrap();
        let point = ResumePoint {
            shard: 2,
            input: 1,
            input_documents: 2,
        };
        assert_eq!((again.resume_point(), again.is_complete()), (point, false));
        m.complete().unwrap();
        assert!(
            Manifest::open(&path, &run, &inputs)
                .unwrap()
                .unwrap()
                .is_complete()
        );
        // Only the manifest is left in the folder: no temporary file.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn another_run_or_a_damaged_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.json");
        let run = serde_json::json!({"model": "abc"});
        let inputs = vec!["a".to_owned()];
        let mut m = Manifest::create(&path, run.clone(), inputs.clone()).unwrap();
        m.shard_done(record(0, 0, 1)).unwrap();
        let other_run = serde_json::json!({"model": "abd"});
        let err = Manifest::open(&path, &other_run, &inputs).unwrap_err();
        assert!(err.to_string().contains("other settings"), "{err}");
        let err = Manifest::open(&path, &run, &["b".to_owned()]).unwrap_err();
        assert!(err.to_string().contains("other inputs"), "{err}");
        let text = std::fs::read_to_string(&path).unwrap();
        for bad in [&text[..text.len() / 2], "[]", "{}"] {
            std::fs::write(&path, bad).unwrap();
            let err = Manifest::open(&path, &run, &inputs).unwrap_err();
            assert!(err.to_string().contains("not a simdtok manifest"), "{err}");
        }
        let shuffled = text.replace("\"shard\": 0", "\"shard\": 4");
        std::fs::write(&path, shuffled).unwrap();
        let err = Manifest::open(&path, &run, &inputs).unwrap_err();
        assert!(err.to_string().contains("out of order"), "{err}");
    }
}
