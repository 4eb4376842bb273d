//! The BERT pipeline: added tokens found in the raw text, then the BERT normalizer and
//! pre-tokenizer fused into one pass over the text, WordPiece per word, the post-processor's
//! special tokens, and decoding — as Hugging Face `tokenizers` does it, with byte offsets into
//! the original text.
//!
//! # The pass over the text
//! Most text is ASCII without control characters, and there the normalizer does nothing but
//! lowercase, so words and punctuation can be read straight off the bytes. The byte-class
//! kernel finds the next byte that needs more (non-ASCII or a control character); up to there,
//! the classify kernel gives per-64-byte masks of word bytes (ASCII letters and digits) and
//! punctuation, and the words are the runs of the first mask — offsets are the identity. From a
//! byte that needs more, the slow path takes one character at a time through the normalizer
//! and pre-tokenizer rules (with each output byte's original span) until the next ASCII space or
//! punctuation, where the fast path takes over again with no word open.

use std::cell::RefCell;

use simdtok_kernels::{BlockMasks, ByteClassSpec, ByteClassTable, ByteSet, ClassSet, Kernels};

use crate::cache::word::{self as word_cache, Key, WordCache};
use crate::models::token::WordToken;
use crate::models::wordpiece::WordPiece;
use crate::normalize::bert::{BertNormalizer, CharAction};
use crate::normalize::bert_chars::{self, PUNCT, WHITESPACE};
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::cuts::{AddedGuard, WordPieceCuts};
use crate::pipeline::sink::Sink;
use crate::pipeline::template::Template;
use crate::pipeline::{PartPlace, Pipeline, PipelineInfo};

/// Class of ASCII letters and digits in the fast path's class table.
const WORD: usize = 0;
/// Class of ASCII punctuation and symbols (BERT counts all of them as punctuation).
const PUNCTUATION: usize = 1;

/// The `WordPiece` decoder of `tokenizers`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WordPieceDecoder {
    /// Removed from the front of continuation tokens; other tokens get a space before them.
    pub prefix: String,
    /// Remove the spaces the join put before punctuation and in English contractions.
    pub cleanup: bool,
}

/// Everything a BERT tokenizer is built from.
#[derive(Debug)]
pub struct BertParts {
    /// The vocabulary and encoders.
    pub model: WordPiece,
    /// `None` when the file has no normalizer.
    pub normalizer: Option<BertNormalizer>,
    /// Added tokens matched in the raw text.
    pub added: AddedTokens,
    /// The post-processor's tokens before and after a single sequence.
    pub special_prefix: Vec<u32>,
    /// See `special_prefix`.
    pub special_suffix: Vec<u32>,
    /// `None`: tokens are joined with spaces (the reference without a decoder).
    pub decoder: Option<WordPieceDecoder>,
}

/// A BERT-style WordPiece tokenizer.
#[derive(Debug)]
pub struct BertWordPiece {
    parts: BertParts,
    /// The post-processor's tokens, when they are added.
    template: Template,
    /// Bytes the fast path cannot take: non-ASCII, and control characters other than
    /// `\t \n \r`.
    slow_bytes: ByteSet,
    classes: ByteClassTable,
    /// The result for a one-byte ASCII word, by byte (after lowercasing).
    single: [u32; 128],
    lowercase_ascii: bool,
    /// Where a text may be cut ([`crate::Tokenizer::last_part_cut`]); they are safe cuts
    /// ([`crate::Tokenizer::last_safe_cut`]) only when the template adds no tokens (else each
    /// half would get its own `[CLS]` … `[SEP]`).
    cuts: WordPieceCuts,
    /// Tells this tokenizer's entries in the per-thread word cache from another's.
    cache_owner: usize,
    kernels: &'static Kernels,
}

/// Per-thread buffers, so that encoding allocates nothing per call once warm.
#[derive(Default)]
struct Scratch {
    splits: Vec<Split>,
    masks: Vec<BlockMasks>,
    /// The word being built by the slow path (normalized bytes) and each byte's original span.
    word: Vec<u8>,
    origins: Vec<(u32, u32)>,
    /// The fast path's lowercased word.
    lower: Vec<u8>,
    tokens: Vec<WordToken>,
    cache: WordCache,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl BertWordPiece {
    /// The tokenizer of `parts`; `add_special_tokens` applies the post-processor to every text.
    pub fn new(parts: BertParts, add_special_tokens: bool, kernels: &'static Kernels) -> Self {
        let lowercase_ascii = parts.normalizer.is_some_and(|n| n.lowercase);
        // Controls are dropped (`clean_text`), or else word characters or whitespace (\x0B,
        // \x0C): the slow path sorts them out either way.
        let slow_bytes = ByteSet::from_fn(|b| {
            b >= 0x80 || ((b < 0x20 || b == 0x7F) && !matches!(b, b'\t' | b'\n' | b'\r'))
        });
        let spec = ByteClassSpec::empty()
            .with_class(WORD, |b| b.is_ascii_alphanumeric())
            .with_class(PUNCTUATION, |b| b.is_ascii_punctuation());
        let classes =
            ByteClassTable::new(&spec, ClassSet::from_bits((1 << WORD) | (1 << PUNCTUATION)));
        let single = std::array::from_fn(|b| {
            let b = if lowercase_ascii {
                (b as u8).to_ascii_lowercase()
            } else {
                b as u8
            };
            let mut out = Vec::new();
            if parts.model.encode_word(&[b], &mut out) {
                out[0].id
            } else {
                parts.model.unk_id()
            }
        });
        let template = Template::new(
            &parts.special_prefix,
            &parts.special_suffix,
            add_special_tokens,
        );
        let cuts = WordPieceCuts::new(AddedGuard::new(parts.added.tokens()));
        BertWordPiece {
            parts,
            template,
            cuts,
            slow_bytes,
            classes,
            single,
            lowercase_ascii,
            cache_owner: word_cache::new_owner(),
            kernels,
        }
    }

    /// The vocabulary and encoders.
    pub fn model(&self) -> &WordPiece {
        &self.parts.model
    }

    /// The kernels in use.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    /// Whether the model's post-processor has special tokens to add.
    pub fn has_special_tokens(&self) -> bool {
        !self.parts.special_prefix.is_empty() || !self.parts.special_suffix.is_empty()
    }

    /// Encodes `text`, one part of a cut text or a whole one: the post-processor's tokens go
    /// before the first part and after the last.
    fn encode<S: Sink>(&self, text: &str, place: PartPlace, sink: &mut S) {
        self.template.open(place, sink);
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim(self.cache_owner);
            let mut splits = std::mem::take(&mut scratch.splits);
            self.parts.added.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(start, end) => self.encode_text(text, start, end, scratch, sink),
                    Split::Token(id, start, end) => sink.push(id, start, end),
                }
            }
            scratch.splits = splits;
        });
        self.template.close(place, sink);
    }

    /// Encodes `text[start..end]`, a piece with no added token.
    fn encode_text<S: Sink>(
        &self,
        text: &str,
        start: usize,
        end: usize,
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let bytes = &text.as_bytes()[..end];
        let mut i = start;
        while i < end {
            let slow = self
                .kernels
                .find_in(&self.slow_bytes, bytes, i)
                .unwrap_or(end);
            // A word running into the slow byte is the slow path's.
            let mut fast_end = slow;
            if slow < end {
                while fast_end > i && bytes[fast_end - 1].is_ascii_alphanumeric() {
                    fast_end -= 1;
                }
            }
            if fast_end > i {
                self.fast_ascii(text.as_bytes(), i, fast_end, scratch, sink);
            }
            if fast_end >= end {
                break;
            }
            i = self.slow_path(text, fast_end, end, scratch, sink);
        }
    }

    /// Words and punctuation of `bytes[start..end]`: ASCII letters, digits, punctuation,
    /// space, `\t`, `\n` and `\r` only. (The bytes after `end` may be read, never used.)
    fn fast_ascii<S: Sink>(
        &self,
        bytes: &[u8],
        start: usize,
        end: usize,
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let seg = &bytes[start..end];
        let mut masks = std::mem::take(&mut scratch.masks);
        self.kernels.classify(&self.classes, seg, &mut masks);
        let mut word_start = 0usize;
        let mut in_word = 0u64;
        for (block, m) in masks.iter().enumerate() {
            let words = m.0[WORD];
            let punct = m.0[PUNCTUATION];
            let shifted = (words << 1) | in_word;
            let starts = words & !shifted;
            // Bits past the end are clear, so a word reaching the end of a partial block ends
            // at the first bit past it.
            let ends = !words & shifted;
            in_word = words >> 63;
            let mut events = starts | ends | punct;
            while events != 0 {
                let bit = events & events.wrapping_neg();
                events ^= bit;
                let pos = block * 64 + bit.trailing_zeros() as usize;
                if ends & bit != 0 {
                    self.ascii_word(bytes, start + word_start, start + pos, scratch, sink);
                }
                if starts & bit != 0 {
                    word_start = pos;
                }
                if punct & bit != 0 {
                    sink.push(self.single[seg[pos] as usize], start + pos, start + pos + 1);
                }
            }
        }
        if in_word != 0 {
            self.ascii_word(bytes, start + word_start, end, scratch, sink);
        }
        scratch.masks = masks;
    }

    /// One word of the fast path, `text[at..to]`.
    #[inline]
    fn ascii_word<S: Sink>(
        &self,
        text: &[u8],
        at: usize,
        to: usize,
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let word = &text[at..to];
        if word.len() == 1 {
            sink.push(self.single[word[0] as usize], at, at + 1);
            return;
        }
        let model = &self.parts.model;
        if word.len() > model.max_input_chars_per_word() {
            sink.push(model.unk_id(), at, at + word.len());
            return;
        }
        let key = (word.len() <= word_cache::MAX_WORD)
            .then(|| Key::ascii(text, at, word.len(), self.lowercase_ascii));
        if let Some(key) = &key
            && scratch.cache.get(key, |id, s, e| {
                sink.push(id, at + s as usize, at + e as usize)
            })
        {
            return;
        }
        let word = if self.lowercase_ascii && word.iter().any(u8::is_ascii_uppercase) {
            scratch.lower.clear();
            scratch
                .lower
                .extend(word.iter().map(|b| b.to_ascii_lowercase()));
            &scratch.lower[..]
        } else {
            word
        };
        scratch.tokens.clear();
        if !model.encode_word(word, &mut scratch.tokens) {
            scratch.tokens.push(WordToken {
                id: model.unk_id(),
                start: 0,
                end: word.len() as u32,
            });
        }
        for t in &scratch.tokens {
            sink.push(t.id, at + t.start as usize, at + t.end as usize);
        }
        if let Some(key) = &key {
            scratch.cache.put(key, &scratch.tokens);
        }
    }

    /// One character at a time from `from` (where no word is open) up to the next ASCII space
    /// or punctuation after it, or `end`; returns where it stopped, with no word open.
    fn slow_path<S: Sink>(
        &self,
        text: &str,
        from: usize,
        end: usize,
        scratch: &mut Scratch,
        sink: &mut S,
    ) -> usize {
        let bytes = text.as_bytes();
        scratch.word.clear();
        scratch.origins.clear();
        let mut p = from;
        while p < end {
            let b = bytes[p];
            if b < 0x80 && !self.slow_bytes.contains(b) {
                if b.is_ascii_alphanumeric() {
                    let b = if self.lowercase_ascii {
                        b.to_ascii_lowercase()
                    } else {
                        b
                    };
                    scratch.word.push(b);
                    scratch.origins.push((p as u32, p as u32 + 1));
                    p += 1;
                    continue;
                }
                // ASCII whitespace or punctuation, which the fast path handles.
                if p > from {
                    break;
                }
            }
            let c = text[p..].chars().next().expect("p is a char boundary");
            let next = p + c.len_utf8();
            let span = (p as u32, next as u32);
            match self.parts.normalizer.map(|n| (n, n.classify(c))) {
                None => self.pre_tokenize(c, span, scratch, sink),
                Some((_, CharAction::Drop)) => {}
                Some((_, CharAction::Keep)) => self.pre_tokenize(c, span, scratch, sink),
                Some((n, CharAction::Transform)) => {
                    n.transform(c, |d| self.pre_tokenize(d, span, scratch, sink))
                }
                Some((n, CharAction::Isolate)) => {
                    self.flush(scratch, sink);
                    n.transform(c, |d| self.pre_tokenize(d, span, scratch, sink));
                    self.flush(scratch, sink);
                }
            }
            p = next;
        }
        self.flush(scratch, sink);
        p
    }

    /// The pre-tokenizer's rule for one normalized character from the original `span`.
    #[inline]
    fn pre_tokenize<S: Sink>(
        &self,
        c: char,
        span: (u32, u32),
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let f = bert_chars::flags(c);
        if f & WHITESPACE != 0 {
            self.flush(scratch, sink);
        } else if f & PUNCT != 0 {
            self.flush(scratch, sink);
            push_char(c, span, scratch);
            self.flush(scratch, sink);
        } else {
            push_char(c, span, scratch);
        }
    }

    /// Encodes the slow path's word, if one is open.
    fn flush<S: Sink>(&self, scratch: &mut Scratch, sink: &mut S) {
        if scratch.word.is_empty() {
            return;
        }
        let model = &self.parts.model;
        let word = &scratch.word[..];
        let origins = &scratch.origins[..];
        let whole = (origins[0].0 as usize, origins[origins.len() - 1].1 as usize);
        let chars = word.iter().filter(|&&b| (b as i8) >= -0x40).count();
        scratch.tokens.clear();
        if chars <= model.max_input_chars_per_word() && model.encode_word(word, &mut scratch.tokens)
        {
            for t in &scratch.tokens {
                let start = origins[t.start as usize].0 as usize;
                let end = origins[t.end as usize - 1].1 as usize;
                sink.push(t.id, start, end);
            }
        } else {
            sink.push(model.unk_id(), whole.0, whole.1);
        }
        scratch.word.clear();
        scratch.origins.clear();
    }

    /// The string of `id`: an added token's content, else the vocabulary's.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        if let Some(t) = self.parts.added.tokens().iter().rev().find(|t| t.id == id) {
            return Some(&t.content);
        }
        self.parts.model.id_to_token(id)
    }

    /// One past the largest id (of the vocabulary and the added tokens).
    pub fn vocab_size(&self) -> usize {
        let added = self.parts.added.tokens().iter().map(|t| t.id as usize + 1);
        added.fold(self.parts.model.len(), usize::max)
    }

    /// The text of `ids` as `tokenizers` decodes it (`skip_special_tokens=True`): special
    /// tokens dropped, ids without a token skipped, then the decoder.
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let size = self.vocab_size();
        let mut tokens: Vec<&str> = Vec::with_capacity(ids.len());
        for &id in ids {
            if id as usize >= size {
                return Err(id);
            }
            let Some(token) = self.id_to_token(id) else {
                continue;
            };
            if self.parts.added.find(token).is_some_and(|t| t.special) {
                continue;
            }
            tokens.push(token);
        }
        let Some(decoder) = &self.parts.decoder else {
            return Ok(tokens.join(" "));
        };
        let mut out = String::new();
        for (i, token) in tokens.iter().enumerate() {
            let mut piece = String::with_capacity(token.len() + 1);
            match token.strip_prefix(decoder.prefix.as_str()) {
                Some(rest) if i != 0 => piece.push_str(rest),
                _ if i != 0 => {
                    piece.push(' ');
                    piece.push_str(token);
                }
                _ => piece.push_str(token),
            }
            if decoder.cleanup {
                piece = cleanup(&piece);
            }
            out.push_str(&piece);
        }
        Ok(out)
    }
}

/// Appends `c` to the slow path's word.
#[inline]
fn push_char(c: char, span: (u32, u32), scratch: &mut Scratch) {
    let mut buf = [0u8; 4];
    let s = c.encode_utf8(&mut buf);
    scratch.word.extend_from_slice(s.as_bytes());
    scratch.origins.extend(std::iter::repeat_n(span, s.len()));
}

/// The WordPiece decoder's clean-up of one token, replacement by replacement, in the
/// reference's order.
fn cleanup(s: &str) -> String {
    const RULES: [(&str, &str); 11] = [
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" do not", " don't"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ];
    let mut s = s.to_string();
    for (from, to) in RULES {
        if s.contains(from) {
            s = s.replace(from, to);
        }
    }
    s
}

impl PipelineInfo for BertWordPiece {
    fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        self.decode(ids)
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size()
    }

    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.id_to_token(id)
    }

    fn kernels(&self) -> &'static Kernels {
        self.kernels()
    }

    fn last_safe_cut(&self, text: &[u8]) -> Option<usize> {
        if self.template.adds_tokens() {
            return None;
        }
        self.cuts.last(text)
    }

    fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        self.cuts.last(text)
    }

    fn added_suffix_len(&self) -> usize {
        self.template.suffix_len()
    }
}

impl Pipeline for BertWordPiece {
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode(text, PartPlace::WHOLE, sink);
    }

    fn encode_part_to<S: Sink>(&self, text: &str, place: PartPlace, sink: &mut S) {
        self.encode(text, place, sink);
    }

    fn token_string(&self, id: u32) -> String {
        self.id_to_token(id).unwrap_or_default().to_string()
    }
}
