//! Byte-level BPE from a Hugging Face `tokenizer.json` (GPT-2 style: Llama 3, Qwen, GPT-4o, …):
//! added tokens found in the raw text, the normalizer (see [`Normalizer`]), the pre-tokenizer's regex,
//! byte-level BPE over the merges list, the post-processor's special tokens, and the byte-level
//! decoder — with the reference's offsets: a token covering part of a character has that whole
//! character's span (its byte-level alignment), mapped back through normalization.

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::cache::word::{self as word_cache, CachedPiece, PieceCache, PieceSeeds, cached_pieces};
use crate::load::tokenizer_json::ByteLevelDecoder;
use crate::models::merges_bpe::{MergeScratch, MergesBpe};
use crate::normalize::hf::{self, Normalizer};
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::cuts::{AddedGuard, ByteLevelCuts, ByteLevelOptions};
use crate::pipeline::sink::{self, MapSpans, Sink, SpanMap};
use crate::pipeline::template::Template;
use crate::pipeline::{PartPlace, Pipeline, PipelineInfo};
use crate::pretokenize::Splitter;
use crate::pretokenize::chain::{self, Chain};

/// Everything a byte-level BPE tokenizer is built from.
#[derive(Debug)]
pub struct HfBpeParts {
    /// The model.
    pub bpe: MergesBpe,
    /// The normalizer (none, NFC, …).
    pub normalizer: Normalizer,
    /// The pre-tokenizer.
    pub pre_tokenizer: PreTokenizer,
    /// Put a space before each text that does not start with one.
    pub add_prefix_space: bool,
    /// Added tokens matched in the raw text.
    pub added: AddedTokens,
    /// The added tokens with `normalized: true` (the file has no normalizer), looked for in the
    /// text the others leave.
    pub added_normalized: AddedTokens,
    /// The post-processor's ids before a sequence.
    pub special_prefix: Vec<u32>,
    /// … and after it.
    pub special_suffix: Vec<u32>,
    /// The string of each id (vocabulary entries as the file has them, added tokens' content).
    pub token_strings: Vec<Option<Box<str>>>,
    /// The decoder.
    pub decoder: ByteLevelDecoder,
    /// The post-processor trims the spaces off the tokens' offsets: `Some(add_prefix_space)`.
    pub trim_offsets: Option<bool>,
}

/// How the normalized text is cut into pieces.
#[derive(Debug)]
pub enum PreTokenizer {
    /// One regex (a scanner for the known patterns): its matches, and the text between them
    /// when `keep_gaps` (`Isolated`; `Removed` with `invert` keeps only the matches).
    Single { splitter: Splitter, keep_gaps: bool },
    /// Stages, each cutting the pieces of the one before.
    Chain(Chain),
}

/// A byte-level BPE `tokenizer.json`.
#[derive(Debug)]
pub struct HfBpe {
    parts: HfBpeParts,
    /// The post-processor's tokens, when they are added.
    template: Template,
    /// Where a text may be cut ([`crate::Tokenizer::last_part_cut`]): safe cuts too when the
    /// template adds no tokens.
    cuts: Option<ByteLevelCuts>,
    cache_owner: usize,
    /// What a thread's cache starts with: the entries that encode as themselves.
    seeds: PieceSeeds,
    kernels: &'static Kernels,
}

#[derive(Default)]
struct Scratch {
    splits: Vec<Split>,
    inner_splits: Vec<Split>,
    merge: MergeScratch,
    cached: CachedPiece,
    cache: PieceCache,
    normalized: hf::Aligned,
    normalizing: hf::Scratch,
    pieces: Vec<(usize, usize)>,
    chaining: chain::Scratch,
}

/// Turns a token's byte span in the normalized text into the reference's offsets: widened to
/// whole characters (its byte-level alignment), then mapped back through normalization.
struct CharSpans<'a> {
    norm: &'a str,
    /// Each normalized byte's input span; `None` when the normalized text is the input's
    /// `[base, base + len)`.
    spans: Option<&'a [(u32, u32)]>,
    base: usize,
    /// `Some(add_prefix_space)` when the post-processor trims spaces off the offsets.
    trim: Option<bool>,
    /// No token of the text pushed yet (for the trimming's first-token rule).
    first: &'a mut bool,
    /// The input text (at `base`), whose character boundaries trimmed offsets are rounded to.
    input: &'a str,
}

impl SpanMap for CharSpans<'_> {
    #[inline]
    fn map(&mut self, start: usize, end: usize) -> (usize, usize) {
        let (cs, ce) = sink::widen_to_chars(self.norm, start, end);
        let (mut os, mut oe) = match self.spans {
            Some(spans) => (spans[cs].0 as usize, spans[ce - 1].1 as usize),
            None => (self.base + cs, self.base + ce),
        };
        if let Some(add_prefix_space) = self.trim {
            // A token's spaces are its `Ġ`s: its bytes 0x20.
            let token = &self.norm.as_bytes()[start..end];
            let leading = token.iter().take_while(|&&b| b == b' ').count();
            let trailing = token.iter().rev().take_while(|&&b| b == b' ').count();
            (os, oe) = trim_offsets(
                (os, oe),
                (leading, trailing),
                *self.first,
                add_prefix_space,
                |at| self.input.is_char_boundary(at - self.base),
            );
        }
        *self.first = false;
        (os, oe)
    }
}

/// The reference's byte-level trimming (`trim_offsets`), with its arithmetic: a token's
/// `leading` and `trailing` spaces come off its offsets, except one leading space of the first
/// token when the post-processor says a space was added before the text (`add_prefix_space`).
/// It reports character offsets: one inside a character (the trimmed end of a space put before
/// a multi-byte character) falls to that character's start (`boundary` says where they are).
fn trim_offsets(
    (mut start, mut end): (usize, usize),
    (mut leading, trailing): (usize, usize),
    first: bool,
    add_prefix_space: bool,
    boundary: impl Fn(usize) -> bool,
) -> (usize, usize) {
    if leading > 0 {
        if (first || start == 0) && add_prefix_space && leading == 1 {
            leading = 0;
        }
        start = (start + leading).min(end);
    }
    if trailing > 0 && end >= trailing {
        end = (end - trailing).max(start);
    }
    let floor = |mut at: usize| {
        while !boundary(at) {
            at -= 1;
        }
        at
    };
    (floor(start), floor(end))
}

/// The offsets of an added token matched at `[start, end)` of `text`, trimmed when the
/// post-processor trims (`trim`: `Some(add_prefix_space)`): its string is the text it took
/// (with the whitespace `lstrip`/`rstrip` took), whose leading and trailing whitespace
/// characters (or `Ġ`s) the reference counts, and adds to byte offsets as they are.
fn added_offsets(
    text: &str,
    (start, end): (usize, usize),
    trim: Option<bool>,
    first: bool,
) -> (usize, usize) {
    let Some(add_prefix_space) = trim else {
        return (start, end);
    };
    let space = |c: &char| *c == 'Ġ' || c.is_whitespace();
    let token = &text[start..end];
    let leading = token.chars().take_while(space).count();
    let trailing = token.chars().rev().take_while(space).count();
    trim_offsets(
        (start, end),
        (leading, trailing),
        first,
        add_prefix_space,
        |at| text.is_char_boundary(at),
    )
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Where a text may be cut (`pipeline::cuts` has the rules and their proofs; the
/// post-processor's tokens go before the first part and after the last): `None` when a
/// normalizer step acts across
/// characters or at a text's ends (`Replace`, `Prepend`, `Strip`), or when the pre-tokenizer is
/// not one known regex alone (chains, `fancy-regex` fallbacks: no proven rule).
fn text_cuts(parts: &HfBpeParts) -> Option<ByteLevelCuts> {
    if !parts.normalizer.splits_before_ascii() {
        return None;
    }
    // The pieces are the matches (the known patterns tile the text: there are no gaps to keep).
    let PreTokenizer::Single { splitter, .. } = &parts.pre_tokenizer else {
        return None;
    };
    let options = ByteLevelOptions {
        // Trimmed offsets keep one leading space of a text's first token (`trim_offsets`'s
        // `first`): the token " word" starting `T[p..]` would keep it, in `T` it would not.
        space: parts.trim_offsets != Some(true),
        // A space before each text that does not start with one: `T[p..]` would get one.
        newline: !parts.add_prefix_space,
        normalized: !parts.normalizer.is_empty(),
        // Every added token is looked for in the raw text: by `added`, or (`normalized: true`,
        // loaded only without a normalizer) by `added_normalized` in the text `added` leaves.
        added: AddedGuard::new(parts.added.tokens()),
    };
    ByteLevelCuts::new(splitter.pattern()?, options)
}

impl HfBpe {
    /// The tokenizer of `parts`; `add_special_tokens` applies the post-processor.
    pub fn new(parts: HfBpeParts, add_special_tokens: bool, kernels: &'static Kernels) -> HfBpe {
        let mut merge = MergeScratch::default();
        let seeds = PieceSeeds::new(parts.bpe.len() as u32, |id| {
            parts.bpe.encodes_as_itself(id, &mut merge)
        });
        HfBpe {
            seeds,
            cuts: text_cuts(&parts),
            template: Template::new(
                &parts.special_prefix,
                &parts.special_suffix,
                add_special_tokens,
            ),
            parts,
            cache_owner: word_cache::new_owner(),
            kernels,
        }
    }

    /// Checks every seed of the piece cache against the model's encoding of its bytes
    /// ([`PieceSeeds::check`]).
    #[cfg(test)]
    pub(crate) fn check_seeds(&self) -> Result<usize, String> {
        let mut merge = MergeScratch::default();
        self.seeds.check(|bytes| {
            let mut out = Vec::new();
            self.parts.bpe.encode_piece(bytes, &mut merge, &mut out);
            out
        })
    }

    /// The kernels in use.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    /// Encodes `text`, one part of a cut text or a whole one: the post-processor's tokens go
    /// before the first part and after the last.
    fn encode<S: Sink>(&self, text: &str, place: PartPlace, sink: &mut S) {
        self.template.open(place, sink);
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim_seeded(self.cache_owner, &self.seeds);
            scratch.merge.fit_budget();
            let mut splits = std::mem::take(&mut scratch.splits);
            self.parts.added.split(self.kernels, text, &mut splits);
            let mut first = true;
            let mut inner = std::mem::take(&mut scratch.inner_splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) if self.parts.added_normalized.is_empty() => {
                        self.encode_text(&text[s..e], s, scratch, sink, &mut first)
                    }
                    Split::Text(s, e) => {
                        self.parts
                            .added_normalized
                            .split(self.kernels, &text[s..e], &mut inner);
                        for &split in &inner {
                            match split {
                                Split::Text(a, b) => self.encode_text(
                                    &text[s + a..s + b],
                                    s + a,
                                    scratch,
                                    sink,
                                    &mut first,
                                ),
                                Split::Token(id, a, b) => {
                                    self.push_added(text, id, (s + a, s + b), first, sink);
                                    first = false;
                                }
                            }
                        }
                    }
                    Split::Token(id, s, e) => {
                        self.push_added(text, id, (s, e), first, sink);
                        first = false;
                    }
                }
            }
            scratch.inner_splits = inner;
            scratch.splits = splits;
        });
        self.template.close(place, sink);
    }

    /// Pushes added token `id`, which took `text[span]`.
    fn push_added<S: Sink>(
        &self,
        text: &str,
        id: u32,
        span: (usize, usize),
        first: bool,
        sink: &mut S,
    ) {
        let (s, e) = added_offsets(text, span, self.parts.trim_offsets, first);
        sink.push(id, s, e);
        let taken = &text[span.0..span.1];
        if S::OFFSETS && Some(taken) != self.id_to_token(id) {
            sink.added_text(taken);
        }
    }

    /// Encodes `text`, which starts at `base` in the input.
    fn encode_text<S: Sink>(
        &self,
        text: &str,
        base: usize,
        scratch: &mut Scratch,
        sink: &mut S,
        first: &mut bool,
    ) {
        let Scratch {
            merge,
            cached,
            cache,
            normalized,
            normalizing,
            pieces,
            chaining,
            ..
        } = scratch;
        // The normalized text, and (when it differs from the input, and offsets are wanted)
        // each byte's input span.
        let offsets = S::OFFSETS;
        let changed =
            self.parts
                .normalizer
                .apply(text, base as u32, offsets, normalized, normalizing);
        let prefix = self.parts.add_prefix_space && {
            let t = if changed { &normalized.text } else { text };
            !t.is_empty() && !t.starts_with(' ')
        };
        if prefix {
            if !changed {
                normalized.text.clear();
                normalized.text.push_str(text);
                normalized.spans.clear();
                if offsets {
                    normalized.spans.extend(hf::char_spans(text, base as u32));
                }
            }
            // The space takes the span of the character it is put before.
            normalized.text.insert(0, ' ');
            if offsets {
                normalized.spans.insert(0, normalized.spans[0]);
            }
        }
        let mapped = changed || prefix;
        let (norm, spans): (&str, &[(u32, u32)]) = if mapped {
            (&normalized.text, &normalized.spans)
        } else {
            (text, &[])
        };
        pieces.clear();
        match &self.parts.pre_tokenizer {
            PreTokenizer::Single {
                splitter,
                keep_gaps,
            } => {
                let mut done = 0;
                splitter.split(norm, |s, e| {
                    if *keep_gaps && done < s {
                        pieces.push((done, s));
                    }
                    if s < e {
                        pieces.push((s, e));
                    }
                    done = e;
                });
                if *keep_gaps && done < norm.len() {
                    pieces.push((done, norm.len()));
                }
            }
            PreTokenizer::Chain(chain) => chain.pieces(norm, pieces, chaining),
        }
        let bytes = norm.as_bytes();
        let mut mapper = MapSpans {
            sink,
            map: CharSpans {
                norm,
                spans: mapped.then_some(spans),
                base,
                trim: self.parts.trim_offsets,
                first,
                input: text,
            },
        };
        cached_pieces(cache, bytes, pieces, cached, &mut mapper, |(s, e), out| {
            self.parts.bpe.encode_piece(&bytes[s..e], merge, out)
        });
    }

    /// The string of `id` as the reference shows it: an added token's content, else the
    /// vocabulary entry (in GPT-2's byte alphabet).
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.parts.token_strings.get(id as usize)?.as_deref()
    }

    /// The bytes of vocabulary entry `id` (GPT-2's byte alphabet undone).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.parts.bpe.token_bytes(id)
    }

    /// One past the largest id.
    pub fn vocab_size(&self) -> usize {
        let added = self.parts.added.tokens().iter().map(|t| t.id as usize + 1);
        added.fold(self.parts.bpe.len(), usize::max)
    }

    /// The text of `ids`, as the reference decodes it (`skip_special_tokens=True`, the
    /// `ByteLevel` decoder: the tokens' bytes, invalid UTF-8 replaced by U+FFFD).
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        if let ByteLevelDecoder::Bpe { suffix } = &self.parts.decoder {
            return self.decode_bpe(ids, suffix);
        }
        let size = self.vocab_size();
        let mut bytes = Vec::new();
        for &id in ids {
            if id as usize >= size {
                return Err(id);
            }
            if let Some(t) = self.parts.added.tokens().iter().rev().find(|t| t.id == id) {
                if !t.special {
                    bytes.extend_from_slice(t.content.as_bytes());
                }
                continue;
            }
            if let Some(b) = self.parts.bpe.token_bytes(id) {
                bytes.extend_from_slice(b);
            }
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// `BPEDecoder`: the tokens' strings (special added tokens left out), `suffix` becoming a
    /// space in each but the last, where it goes.
    fn decode_bpe(&self, ids: &[u32], suffix: &str) -> Result<String, u32> {
        let mut tokens = Vec::with_capacity(ids.len());
        for &id in ids {
            if id as usize >= self.vocab_size() {
                return Err(id);
            }
            let added = self.parts.added.tokens().iter().rev().find(|t| t.id == id);
            if added.is_some_and(|t| t.special) {
                continue;
            }
            if let Some(t) = self.id_to_token(id) {
                tokens.push(t);
            }
        }
        let last = tokens.len().saturating_sub(1);
        Ok(tokens
            .iter()
            .enumerate()
            .map(|(i, t)| t.replace(suffix, if i == last { "" } else { " " }))
            .collect())
    }
}

impl PipelineInfo for HfBpe {
    fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        self.decode(ids)
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size()
    }

    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.id_to_token(id)
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.token_bytes(id)
    }

    fn kernels(&self) -> &'static Kernels {
        self.kernels()
    }

    fn last_safe_cut(&self, text: &[u8]) -> Option<usize> {
        if self.template.adds_tokens() {
            return None;
        }
        self.cuts.as_ref()?.last(text)
    }

    fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        self.cuts.as_ref()?.last(text)
    }

    fn added_suffix_len(&self) -> usize {
        self.template.suffix_len()
    }

    fn regex_fallbacks(&self) -> Vec<String> {
        match &self.parts.pre_tokenizer {
            PreTokenizer::Single { splitter, .. } => splitter
                .fallback_regex()
                .into_iter()
                .map(str::to_owned)
                .collect(),
            PreTokenizer::Chain(chain) => chain.fallback_regexes().map(str::to_owned).collect(),
        }
    }
}

impl Pipeline for HfBpe {
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
