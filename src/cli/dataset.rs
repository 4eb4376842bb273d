//! `encode`'s dataset outputs (`megatron`, `datatrove`, `llmc`): the format's writer at
//! `--output`, cut into shards with `--shard-tokens`, a manifest beside a sharded run so that
//! `--resume` goes on where a killed run stopped, and the sink that turns rendered blocks into
//! documents (skipping those a resumed run already wrote).

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use simdtok::Tokenizer;
use simdtok::corpus::datatrove::{DatatroveWriter, datatrove_token_size};
use simdtok::corpus::llmc::{LlmcLayout, LlmcWriter};
use simdtok::corpus::manifest::{Manifest, ResumePoint, ShardRecord};
use simdtok::corpus::megatron::{MegatronDtype, MegatronWriter};
use simdtok::corpus::shards::{OpenShard, ShardDone, ShardedWriter, shard_path};
use simdtok::corpus::{CorpusError, DocumentWriter, TokenWidth};

use super::driver::Chunk;
use super::format::{Affixes, OutputFormat};
use super::{CliResult, Failure};

/// What decides a dataset's bytes, for [`Dataset::open`]'s manifest: a resumed run must match.
pub struct DatasetSpec<'a> {
    pub format: OutputFormat,
    pub output: &'a Option<PathBuf>,
    pub model: &'a Path,
    pub affixes: Affixes,
    pub shard_tokens: Option<u64>,
    /// `--resume`.
    pub resume: bool,
    /// The other settings that change the ids (model digest, input format, options), as JSON.
    pub settings: serde_json::Value,
    /// The inputs, in order.
    pub inputs: &'a [String],
}

/// Where the run stands in its inputs: the input being read and its documents written so far.
#[derive(Clone, Copy, Default)]
struct Position {
    input: usize,
    documents: u64,
}

/// A dataset being written, and where a resumed run starts.
pub struct Dataset {
    writer: Box<dyn DocumentWriter>,
    affixes: Affixes,
    position: Rc<Cell<Position>>,
    manifest: Option<Rc<RefCell<Manifest>>>,
    /// Documents of the current input still to drop (a resumed run's, already in shards).
    skip: u64,
    /// A raw text being dropped part by part.
    dropping: bool,
    /// Where the run starts (all zero for a new run).
    pub start: ResumePoint,
}

impl Dataset {
    /// The dataset of `spec`; `None` when `--resume` finds its manifest complete (nothing to
    /// do).
    pub fn open(spec: DatasetSpec, tokenizer: &Tokenizer) -> CliResult<Option<Dataset>> {
        let format = spec.format;
        let path = output_path(format, spec.output)?;
        let vocab = tokenizer.vocab_size();
        let width = match format {
            OutputFormat::Megatron => MegatronDtype::for_vocab(vocab).width(),
            OutputFormat::Llmc => LlmcLayout::for_vocab(vocab).width(),
            _ if datatrove_token_size(vocab) == 2 => TokenWidth::U16,
            _ => TokenWidth::U32,
        };
        check_affixes(format, spec.affixes, width, vocab)?;
        let model = spec.model.display().to_string();
        let open = move |path: &Path| -> Result<Box<dyn DocumentWriter>, CorpusError> {
            Ok(match format {
                OutputFormat::Megatron => Box::new(MegatronWriter::create(
                    path,
                    MegatronDtype::for_vocab(vocab),
                )?),
                OutputFormat::Llmc => {
                    Box::new(LlmcWriter::create(path, LlmcLayout::for_vocab(vocab))?)
                }
                _ => Box::new(DatatroveWriter::create(path, width.bytes, &model)?),
            })
        };
        let position = Rc::new(Cell::new(Position::default()));
        let Some(tokens) = spec.shard_tokens else {
            if spec.resume {
                return Err(Failure::usage(
                    "--resume goes with --shard-tokens (an unsharded dataset is written whole or \
                     not at all)",
                ));
            }
            return Ok(Some(Dataset::new(
                open(&path).map_err(corpus_error)?,
                spec.affixes,
            )));
        };
        let manifest_path = Manifest::path_for(&path);
        let run = serde_json::json!({
            "format": format!("{format:?}").to_lowercase(),
            "shard_tokens": tokens,
            "bos": spec.affixes.before,
            "eos": spec.affixes.after,
            "settings": spec.settings,
        });
        let inputs = spec.inputs.to_vec();
        let found = if spec.resume {
            Manifest::open(&manifest_path, &run, &inputs)
                .map_err(|e| Failure::runtime(e.to_string()))?
        } else {
            None
        };
        if found.as_ref().is_some_and(Manifest::is_complete) {
            return Ok(None);
        }
        // Even without a manifest: a run killed while writing its first one left that
        // manifest's temporary, and nothing else.
        if spec.resume {
            remove_temporaries_beside(&path);
        }
        let manifest = match found {
            Some(m) => m,
            None => Manifest::create(&manifest_path, run, inputs).map_err(corpus_error)?,
        };
        let start = manifest.resume_point();
        let manifest = Rc::new(RefCell::new(manifest));
        // A Megatron PREFIX has no extension of its own: the shard's number goes at its end.
        let before_extension = format != OutputFormat::Megatron;
        let open_shard: OpenShard =
            Box::new(move |k| open(&shard_path(&path, k, before_extension)));
        let (listed, at) = (manifest.clone(), position.clone());
        let done: ShardDone = Box::new(move |shard, totals| {
            let at = at.get();
            listed.borrow_mut().shard_done(ShardRecord {
                shard,
                documents: totals.documents,
                tokens: totals.tokens,
                input: at.input,
                input_documents: at.documents,
            })
        });
        let writer = ShardedWriter::new(width, tokens, start.shard, open_shard, done);
        let mut dataset = Dataset::new(Box::new(writer), spec.affixes);
        dataset.position = position;
        dataset.manifest = Some(manifest);
        dataset.start = start;
        Ok(Some(dataset))
    }

    fn new(writer: Box<dyn DocumentWriter>, affixes: Affixes) -> Dataset {
        Dataset {
            writer,
            affixes,
            position: Rc::new(Cell::new(Position::default())),
            manifest: None,
            skip: 0,
            dropping: false,
            start: ResumePoint::default(),
        }
    }

    /// Whether input `i` is wholly in the shards of the run being resumed (it is not read).
    pub fn input_done(&self, i: usize) -> bool {
        i < self.start.input
    }

    /// Input `i` starts: a resumed run drops the documents of it already in shards.
    pub fn start_input(&mut self, i: usize) {
        let done = if i == self.start.input {
            self.start.input_documents
        } else {
            0
        };
        self.skip = done;
        self.position.set(Position {
            input: i,
            documents: done,
        });
    }

    /// A raw text's part, as its tokens are stored.
    pub fn write_part(&mut self, bytes: &[u8], first: bool) -> CliResult {
        if first && self.skip > 0 {
            self.skip -= 1;
            self.dropping = true;
        }
        if self.dropping {
            return Ok(());
        }
        self.writer
            .extend_document_encoded(bytes)
            .map_err(corpus_error)
    }

    /// The end of a raw text: the end of its document.
    pub fn end_text(&mut self) -> CliResult {
        if std::mem::take(&mut self.dropping) {
            return Ok(());
        }
        self.end_document()
    }

    /// A block's texts as documents: its rendered tokens (each text's ids between its
    /// affixes) cut at the texts' ends.
    pub fn write_texts(&mut self, chunk: &Chunk) -> CliResult {
        let size = self.writer.token_size();
        let extra = self.affixes.len();
        let (mut start, mut at) = (0, 0);
        for &end in &chunk.ends {
            let bytes = size * (end - start + extra);
            if self.skip > 0 {
                self.skip -= 1;
            } else {
                self.writer
                    .extend_document_encoded(&chunk.bytes[at..at + bytes])
                    .map_err(corpus_error)?;
                self.end_document()?;
            }
            (start, at) = (end, at + bytes);
        }
        debug_assert_eq!(at, chunk.bytes.len());
        Ok(())
    }

    /// Ends a document, counted where the run stands first (a shard it closes records it).
    fn end_document(&mut self) -> CliResult {
        let mut at = self.position.get();
        at.documents += 1;
        self.position.set(at);
        self.writer.end_document().map_err(corpus_error)
    }

    /// Puts the last files in place and records the run as complete.
    pub fn finish(self) -> CliResult {
        self.writer.finish().map_err(corpus_error)?;
        if let Some(manifest) = self.manifest {
            manifest.borrow_mut().complete().map_err(corpus_error)?;
        }
        Ok(())
    }
}

/// Removes the temporary files a killed run left beside `output` (`.simdtok-*.tmp`: the files
/// it was writing, never renamed into place). A run being resumed is the only one writing there.
fn remove_temporaries_beside(output: &Path) {
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty());
    let Ok(entries) = std::fs::read_dir(dir.unwrap_or(Path::new("."))) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".simdtok-") && name.ends_with(".tmp") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// `--output` for a dataset format (required, not stdout).
fn output_path(format: OutputFormat, output: &Option<PathBuf>) -> CliResult<PathBuf> {
    let (name, what) = match format {
        OutputFormat::Megatron => (
            "megatron",
            "PREFIX.bin and PREFIX.idx: give --output PREFIX",
        ),
        OutputFormat::Llmc => ("llmc", "a shard file: give --output PATH"),
        _ => (
            "datatrove",
            "NAME.ds, NAME.ds.index and NAME.ds.metadata: give --output NAME.ds",
        ),
    };
    match output.as_ref().filter(|p| p.as_os_str() != "-") {
        Some(path) => Ok(path.clone()),
        None => Err(Failure::usage(format!(
            "--output-format {name} writes {what}"
        ))),
    }
}

/// Refuses ids around the texts that the dataset's tokens cannot hold.
fn check_affixes(
    format: OutputFormat,
    affixes: Affixes,
    width: TokenWidth,
    vocab: usize,
) -> CliResult {
    let ids = [affixes.before, affixes.after];
    if let Some(id) = ids.into_iter().flatten().find(|&id| !width.holds(id)) {
        return Err(Failure::runtime(format!(
            "--output-format {}: {} id {id} does not fit the dataset's {} tokens \
             (for a vocabulary of {vocab} ids)",
            format!("{format:?}").to_lowercase(),
            affixes.option_of(id),
            width.name
        )));
    }
    Ok(())
}

/// A dataset writer's error.
pub fn corpus_error(e: CorpusError) -> Failure {
    Failure::runtime(format!("--output: {e}"))
}
