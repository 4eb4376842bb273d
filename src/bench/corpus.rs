//! What `bench` and `report` encode: the bundled models and corpus (committed under
//! `tests/data/`, found through the checkout this binary was built from) or the user's, with
//! the corpus read as texts, one per line.

use std::ops::Range;
use std::path::{Path, PathBuf};

use super::error::BenchError;
use super::inputs::InputDigest;
use crate::ModelKind;

/// The bundled models, one per family and pipeline: (label, path under the checkout).
pub const BUNDLED_MODELS: &[(&str, &str)] = &[
    (
        "spm-unigram-en",
        "tests/data/sentencepiece/botchan_en_unigram_1000.model",
    ),
    (
        "spm-bpe-en",
        "tests/data/sentencepiece/botchan_en_bpe_1000.model",
    ),
    (
        "spm-unigram-ja",
        "tests/data/sentencepiece/kyoto_ja_unigram_8000.model",
    ),
    (
        "wordpiece-en",
        "tests/data/wordpiece/bert-base-uncased.vocab.txt",
    ),
    (
        "wordpiece-zh",
        "tests/data/wordpiece/bert-base-chinese.vocab.txt",
    ),
    ("gpt2", "tests/data/bpe/encoder.json"),
    (
        "hf-bpe-bytelevel",
        "tests/data/bpe/gpt2-2k-trim.tokenizer.json",
    ),
    (
        "hf-bpe-metaspace",
        "tests/data/bpe/kjv-spm-first.tokenizer.json",
    ),
];

/// The bundled corpus: English prose, a dozen non-Latin scripts, and Python source.
pub const BUNDLED_CORPUS: &[&str] = &[
    "tests/data/corpus/en_kjv_bible.head.txt",
    "tests/data/corpus/udhr_scripts.txt",
    "tests/data/corpus/python311_stdlib.head.py.txt",
];

/// The checkout this binary was built from, where the bundled files live.
pub fn bundled_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A model to measure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSpec {
    /// How tables name it.
    pub label: String,
    /// The model file.
    pub path: PathBuf,
}

impl ModelSpec {
    /// The files the model is read from (GPT-2's `encoder.json` also reads the merges beside
    /// it), with the names reports give them: `model/<label>` for the model file,
    /// `model/<label>/<file name>` for the others.
    pub fn files(&self) -> Vec<(String, PathBuf)> {
        let mut files = vec![(format!("model/{}", self.label), self.path.clone())];
        if self.kind() == Some(ModelKind::Gpt2) {
            let dir = self.path.parent().unwrap_or(Path::new("."));
            if let Some(merges) = ["vocab.bpe", "merges.txt"]
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
            {
                let file = merges.file_name().unwrap_or_default().to_string_lossy();
                files.push((format!("model/{}/{file}", self.label), merges.clone()));
            }
        }
        files
    }

    /// The kind of model, as the loader detects it (`None` when the file cannot be read; the
    /// load reports that).
    pub fn kind(&self) -> Option<ModelKind> {
        use std::io::Read;
        let mut head = Vec::with_capacity(4096);
        let file = std::fs::File::open(&self.path).ok()?;
        file.take(4096).read_to_end(&mut head).ok()?;
        Some(ModelKind::detect(&self.path, &head))
    }

    /// The digests of its files.
    pub fn digests(&self) -> Result<Vec<InputDigest>, BenchError> {
        self.files()
            .iter()
            .map(|(name, path)| InputDigest::of_file(name, "model", path))
            .collect()
    }
}

/// The bundled models, or an error saying where they were looked for.
pub fn bundled_models() -> Result<Vec<ModelSpec>, BenchError> {
    BUNDLED_MODELS
        .iter()
        .map(|&(label, rel)| {
            Ok(ModelSpec {
                label: label.to_owned(),
                path: bundled_file(rel)?,
            })
        })
        .collect()
}

/// The bundled corpus files.
pub fn bundled_corpus() -> Result<Vec<PathBuf>, BenchError> {
    BUNDLED_CORPUS.iter().map(|rel| bundled_file(rel)).collect()
}

fn bundled_file(rel: &str) -> Result<PathBuf, BenchError> {
    let path = bundled_root().join(rel);
    if path.is_file() {
        Ok(path)
    } else {
        Err(BenchError::Invalid(format!(
            "the bundled file {} is missing (this binary was built from the checkout at {}); \
             give --model and --input",
            path.display(),
            bundled_root().display()
        )))
    }
}

/// Models named on the command line: labelled by file name (with the parent folder where two
/// share a name, as GPT-2's `encoder.json` files of different models would).
pub fn models_from_paths(paths: &[PathBuf]) -> Vec<ModelSpec> {
    let file_name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| p.display().to_string())
    };
    let mut specs: Vec<ModelSpec> = Vec::new();
    for path in paths {
        let mut label = file_name(path);
        let namesakes = paths
            .iter()
            .filter(|p| file_name(p) == label && *p != path)
            .count();
        if namesakes > 0 {
            label = path.display().to_string();
        }
        // The same path twice: measure it once.
        if !specs.iter().any(|s| s.path == *path) {
            specs.push(ModelSpec {
                label,
                path: path.clone(),
            });
        }
    }
    specs
}

/// The texts to encode: every line of every corpus file (without its `\n`, and a `\r` before
/// it), as `simdtok encode --input-format lines` reads them.
#[derive(Debug)]
pub struct Corpus {
    text: String,
    lines: Vec<Range<usize>>,
    /// Each file's digest, named `corpus/<file name>`.
    pub files: Vec<InputDigest>,
}

impl Corpus {
    /// Reads the files; invalid UTF-8 is an error naming the file and line.
    pub fn load(paths: &[PathBuf]) -> Result<Corpus, BenchError> {
        let mut corpus = Corpus {
            text: String::new(),
            lines: Vec::new(),
            files: Vec::new(),
        };
        for path in paths {
            let bytes = std::fs::read(path).map_err(|e| BenchError::io(path, e))?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            corpus.files.push(InputDigest::of_bytes(
                &format!("corpus/{name}"),
                "corpus",
                &bytes,
            ));
            let text = String::from_utf8(bytes).map_err(|e| {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                BenchError::Utf8 {
                    path: path.clone(),
                    line: 1 + valid.iter().filter(|&&b| b == b'\n').count(),
                }
            })?;
            corpus.push_lines(&text);
        }
        Ok(corpus)
    }

    /// A corpus of the given texts (tests, library callers).
    pub fn from_texts<S: AsRef<str>>(texts: &[S]) -> Corpus {
        let mut corpus = Corpus {
            text: String::new(),
            lines: Vec::new(),
            files: Vec::new(),
        };
        for t in texts {
            let start = corpus.text.len();
            corpus.text.push_str(t.as_ref());
            corpus.lines.push(start..corpus.text.len());
        }
        corpus
    }

    fn push_lines(&mut self, text: &str) {
        let base = self.text.len();
        self.text.push_str(text);
        let mut start = 0;
        for line in text.split_inclusive('\n') {
            let body = line
                .strip_suffix('\n')
                .map_or(line, |l| l.strip_suffix('\r').unwrap_or(l));
            self.lines.push(base + start..base + start + body.len());
            start += line.len();
        }
    }

    /// The texts.
    pub fn texts(&self) -> Vec<&str> {
        self.lines.iter().map(|r| &self.text[r.clone()]).collect()
    }

    /// How many texts.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether there is no text.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The bytes of the texts (line ends not counted): what MB/s are measured in.
    pub fn bytes(&self) -> u64 {
        self.lines.iter().map(|r| r.len() as u64).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_drop_their_ends() {
        let mut c = Corpus::from_texts::<&str>(&[]);
        c.push_lines("a\r\nbb\n\nccc");
        assert_eq!(c.texts(), ["a", "bb", "", "ccc"]);
        assert_eq!(c.bytes(), 6);
        c.push_lines("x\n");
        assert_eq!(c.texts(), ["a", "bb", "", "ccc", "x"]);
    }

    #[test]
    fn bundled_files_exist() {
        assert_eq!(bundled_models().unwrap().len(), BUNDLED_MODELS.len());
        let corpus = Corpus::load(&bundled_corpus().unwrap()).unwrap();
        assert!(corpus.bytes() > 100_000);
        let gpt2 = bundled_models()
            .unwrap()
            .into_iter()
            .find(|m| m.label == "gpt2")
            .unwrap();
        let names: Vec<String> = gpt2.files().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["model/gpt2", "model/gpt2/vocab.bpe"]);
    }

    #[test]
    fn labels_tell_same_named_files_apart() {
        let specs = models_from_paths(&[
            PathBuf::from("a/encoder.json"),
            PathBuf::from("b/encoder.json"),
            PathBuf::from("c/x.model"),
            PathBuf::from("c/x.model"),
        ]);
        let labels: Vec<&str> = specs.iter().map(|s| s.label.as_str()).collect();
        assert_eq!(labels, ["a/encoder.json", "b/encoder.json", "x.model"]);
    }
}
