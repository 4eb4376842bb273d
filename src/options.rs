//! How a model is loaded: the choices a caller can make beyond the file itself.

pub use crate::cache::budget::CacheBudget;
pub use crate::pipeline::tiktoken::Encodings as TiktokenEncoding;

/// Which WordPiece encoder runs. Both give identical output; they differ in speed only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WordPieceAlgorithm {
    /// Greedy longest-match-first per word, one trie walk per sub-token: O(n·m) for a word of
    /// n bytes and a longest vocabulary entry of m bytes.
    Fast,
    /// LinMaxMatch (Song et al. 2021): one pass over the word through a trie with failure links
    /// and failure pops, O(n) whatever the vocabulary.
    Linear,
}

impl WordPieceAlgorithm {
    /// The name used by `--wordpiece-algorithm`.
    pub fn name(self) -> &'static str {
        match self {
            WordPieceAlgorithm::Fast => "fast",
            WordPieceAlgorithm::Linear => "linear",
        }
    }

    /// The default: the faster of the two on prose, as measured (docs/benchmarks.md).
    pub const DEFAULT: WordPieceAlgorithm = WordPieceAlgorithm::Fast;
}

impl std::str::FromStr for WordPieceAlgorithm {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fast" => Ok(WordPieceAlgorithm::Fast),
            "linear" => Ok(WordPieceAlgorithm::Linear),
            other => Err(format!(
                "unknown WordPiece algorithm '{other}' (expected fast or linear)"
            )),
        }
    }
}

/// Options for [`crate::Tokenizer::from_file_with_options`]. The default is what the reference
/// library does with the file alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// BERT `vocab.txt` only: lowercase (and strip accents) like `BertTokenizer`; default on.
    /// Refused for other kinds of model.
    pub lowercase: Option<bool>,
    /// Add the special tokens the model's post-processor adds (`[CLS] … [SEP]` for BERT), as the
    /// reference does with `add_special_tokens=True`: for a SentencePiece `.model`, its BOS
    /// (`LlamaTokenizer`), or its EOS when it has no BOS (`T5Tokenizer`); for tiktoken and GPT-2
    /// files nothing, as tiktoken's `encode` adds nothing. Refused for a `tokenizer.json` whose
    /// post-processor adds nothing and for a `.model` with neither piece.
    pub add_special_tokens: bool,
    /// The WordPiece encoder; `None` for [`WordPieceAlgorithm::DEFAULT`]. Ignored by other models.
    pub wordpiece_algorithm: Option<WordPieceAlgorithm>,
    /// tiktoken files only: the encoding (pattern and special tokens); `None` for the one the
    /// file name implies. Refused for other kinds of model.
    pub tiktoken_encoding: Option<TiktokenEncoding>,
    /// tiktoken files only: recognise the encoding's special tokens (`<|endoftext|>`, …) in the
    /// text, as `encode(text, allowed_special="all")`; by default none is, as with
    /// `encode_ordinary`. Refused for other kinds of model.
    pub allow_special: bool,
    /// The most memory each thread's caches hold while this tokenizer encodes on it (default:
    /// their tuned sizes, under 11 MiB for BPE and WordPiece, 22 MiB for unigram). A smaller
    /// budget halves the caches' tables until they fit; the ids are the same under any budget.
    pub cache_budget: CacheBudget,
}
