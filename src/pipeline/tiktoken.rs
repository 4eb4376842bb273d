//! tiktoken encodings (rank files, GPT-2's encoder.json + vocab.bpe): the pattern's pieces,
//! each encoded by byte-level BPE over the ranks, as `Encoding.encode_ordinary` does — special
//! tokens are only recognised in the text when asked for (`allowed_special="all"`).

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::models::byte_bpe::{BpeScratch, ByteBpe};
use crate::pipeline::Pipeline;
use crate::pipeline::added_tokens::{AddedToken, AddedTokens, Split};
use crate::pipeline::sink::Sink;
use crate::pipeline::word_cache::{self, CachedPiece, WordCache, cached_piece};
use crate::pretokenize::{Pattern, Splitter};

/// The named encodings: the pattern and the special tokens tiktoken gives each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encodings {
    /// `gpt2` (encoder.json + vocab.bpe) and `r50k_base`.
    R50k,
    /// `p50k_base`.
    P50k,
    /// `cl100k_base`.
    Cl100k,
    /// `o200k_base`.
    O200k,
}

impl Encodings {
    /// The encoding a file name implies (`cl100k_base.tiktoken` → cl100k).
    pub fn from_file_name(name: &str) -> Option<Encodings> {
        let name = name.to_ascii_lowercase();
        [
            ("o200k", Encodings::O200k),
            ("cl100k", Encodings::Cl100k),
            ("p50k", Encodings::P50k),
            ("r50k", Encodings::R50k),
            ("gpt2", Encodings::R50k),
        ]
        .into_iter()
        .find(|(key, _)| name.contains(key))
        .map(|(_, e)| e)
    }

    /// The pre-tokenization pattern.
    pub fn pattern(self) -> Pattern {
        match self {
            Encodings::R50k | Encodings::P50k => Pattern::Gpt2,
            // tiktoken's own pat_str, which differs from the tokenizer.json spelling on whitespace
            // at the end of a text.
            Encodings::Cl100k => Pattern::TiktokenCl100k,
            Encodings::O200k => Pattern::O200k,
        }
    }

    /// tiktoken's special tokens of the encoding (`tiktoken_ext/openai_public.py`).
    pub fn special_tokens(self) -> &'static [(&'static str, u32)] {
        match self {
            Encodings::R50k => &[("<|endoftext|>", 50256)],
            Encodings::P50k => &[("<|endoftext|>", 50256)],
            Encodings::Cl100k => &[
                ("<|endoftext|>", 100257),
                ("<|fim_prefix|>", 100258),
                ("<|fim_middle|>", 100259),
                ("<|fim_suffix|>", 100260),
                ("<|endofprompt|>", 100276),
            ],
            Encodings::O200k => &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
        }
    }
}

/// A tiktoken encoding.
#[derive(Debug)]
pub struct Tiktoken {
    bpe: ByteBpe,
    splitter: Splitter,
    specials: AddedTokens,
    allow_special: bool,
    cache_owner: usize,
    kernels: &'static Kernels,
}

#[derive(Default)]
struct Scratch {
    bpe: BpeScratch,
    cached: CachedPiece,
    splits: Vec<Split>,
    cache: WordCache,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl Tiktoken {
    /// The encoding of `ranks` with `pattern`; `specials` are recognised in the text only when
    /// `allow_special`.
    pub fn new(
        bpe: ByteBpe,
        pattern: Pattern,
        specials: &[(String, u32)],
        allow_special: bool,
        kernels: &'static Kernels,
    ) -> Result<Tiktoken, String> {
        let specials = specials
            .iter()
            .map(|(content, id)| AddedToken {
                id: *id,
                content: content.clone(),
                single_word: false,
                lstrip: false,
                rstrip: false,
                normalized: false,
                special: true,
            })
            .collect();
        Ok(Tiktoken {
            bpe,
            splitter: Splitter::new(pattern, kernels),
            specials: AddedTokens::new(specials)?,
            allow_special,
            cache_owner: word_cache::new_owner(),
            kernels,
        })
    }

    /// The kernels in use.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    /// A token as text: its bytes as UTF-8, invalid sequences replaced by U+FFFD.
    fn piece(&self, id: u32) -> String {
        match self.token_bytes(id) {
            Some(b) => String::from_utf8_lossy(b).into_owned(),
            None => String::new(),
        }
    }

    fn encode<S: Sink>(&self, text: &str, sink: &mut S) {
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim(self.cache_owner);
            if !self.allow_special {
                self.encode_ordinary(text, 0, text.len(), scratch, sink);
                return;
            }
            let mut splits = std::mem::take(&mut scratch.splits);
            self.specials.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) => self.encode_ordinary(text, s, e, scratch, sink),
                    Split::Token(id, s, e) => sink.push(id, s, e),
                }
            }
            scratch.splits = splits;
        });
    }

    fn encode_ordinary<S: Sink>(
        &self,
        text: &str,
        start: usize,
        end: usize,
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let bytes = text.as_bytes();
        self.splitter.split(&text[start..end], |s, e| {
            let (s, e) = (start + s, start + e);
            cached_piece(
                &mut scratch.cache,
                bytes,
                (s, e),
                &mut scratch.cached,
                sink,
                |out| self.bpe.encode_piece(&bytes[s..e], &mut scratch.bpe, out),
            );
        });
    }

    /// The bytes of `id` (a special token's text for a special id).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.bpe.token_bytes(id).or_else(|| {
            self.specials
                .tokens()
                .iter()
                .find(|t| t.id == id)
                .map(|t| t.content.as_bytes())
        })
    }

    /// One past the largest id, special tokens included.
    pub fn vocab_size(&self) -> usize {
        let specials = self.specials.tokens().iter().map(|t| t.id as usize + 1);
        specials.fold(self.bpe.len(), usize::max)
    }

    /// The text of `ids`: their bytes, invalid UTF-8 replaced by U+FFFD (tiktoken's
    /// `decode`, `errors="replace"`).
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut bytes = Vec::new();
        for &id in ids {
            bytes.extend_from_slice(self.token_bytes(id).ok_or(id)?);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

impl Pipeline for Tiktoken {
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode(text, sink);
    }

    fn token_string(&self, id: u32) -> String {
        self.piece(id)
    }
}
