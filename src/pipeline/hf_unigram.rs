//! A Hugging Face `tokenizer.json` with a `Unigram` model (T5, XLM-RoBERTa, ALBERT and the
//! SentencePiece models `transformers` converts), as `tokenizers` 0.23 runs it: added tokens
//! found in the raw text; the rest normalized (`Precompiled`, `Replace`, `Strip`, `NFKC`,
//! `Lowercase`, …, with the reference's alignments); pre-tokenized (`Metaspace`,
//! `WhitespaceSplit`); each pre-token segmented on its own by the unigram model
//! ([`HfUnigram`]: the reference's `f64` Viterbi, not SentencePiece's); the post-processor's
//! template around the text; and decoded by the file's decoders.

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::cache::word::{self as word_cache, Key, WordCache};
use crate::models::token::WordToken;
use crate::models::unigram::hf::{HfSegment, HfUnigram, HfUnigramScratch};
use crate::normalize::hf::{self, Normalizer};
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::hf_spm_bpe::{DecodeStep, SPACE, SPACE_UTF8, decode_steps};
use crate::pipeline::sink::Sink;
use crate::pipeline::template::Template;
use crate::pipeline::{Pipeline, PipelineInfo};

/// A pre-tokenizer stage, run on the pieces of the stage before (the normalized text at first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// `WhitespaceSplit`: pieces cut at whitespace (`char::is_whitespace`), which is dropped.
    WhitespaceSplit,
    /// The cut of a `Metaspace` with `split` whose replacement and prefix ran as normalizer
    /// steps (it was the first stage): a new piece before each `▁` but at a piece's start.
    SplitBeforeSpaces,
    /// A `Metaspace` after another stage, on each piece: spaces become `▁`, a `▁` goes before a
    /// piece that does not start with one (`prepend`: `Some(true)` always, `Some(false)` only
    /// for a piece at the input's start, `None` never), then the `split` cut.
    Metaspace { prepend: Option<bool>, split: bool },
}

/// What a Unigram `tokenizer.json` holds, as [`crate::load::hf_unigram`] reads it.
#[derive(Debug)]
pub struct HfUnigramParts {
    pub model: HfUnigram,
    /// The normalizer, with a first `Metaspace`'s replacement and prefix as its last steps.
    pub normalizer: Normalizer,
    /// The pre-tokenizer stages after normalization.
    pub stages: Vec<Stage>,
    pub added: AddedTokens,
    pub special_prefix: Vec<u32>,
    pub special_suffix: Vec<u32>,
    pub decoder: Vec<DecodeStep>,
    pub token_strings: Vec<Option<Box<str>>>,
}

/// The tokenizer of a Unigram `tokenizer.json`.
#[derive(Debug)]
pub struct HfUnigramPipeline {
    model: HfUnigram,
    normalizer: Normalizer,
    stages: Vec<Stage>,
    /// Whether a stage needs each byte's input span whatever the sink wants (a later
    /// `Metaspace` with `prepend_scheme` `first` asks where each piece starts in the input).
    stages_need_spans: bool,
    added: AddedTokens,
    template: Template,
    decoder: Vec<DecodeStep>,
    token_strings: Vec<Option<Box<str>>>,
    /// This tokenizer's claim on a thread's word cache.
    cache_owner: usize,
    kernels: &'static Kernels,
}

#[derive(Default)]
struct Scratch {
    splits: Vec<Split>,
    aligned: hf::Aligned,
    spare: hf::Aligned,
    normalize: hf::Scratch,
    pieces: Vec<(usize, usize)>,
    next_pieces: Vec<(usize, usize)>,
    segments: Vec<HfSegment>,
    unigram: HfUnigramScratch,
    /// Pre-tokens of up to [`word_cache::MAX_WORD`] bytes and their tokens.
    cache: WordCache,
    tokens: Vec<WordToken>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl HfUnigramPipeline {
    /// The tokenizer of `parts`; the template's tokens are added when `add_special_tokens`.
    pub fn new(parts: HfUnigramParts, add_special_tokens: bool, kernels: &'static Kernels) -> Self {
        let stages_need_spans = parts.stages.iter().any(|s| {
            matches!(
                s,
                Stage::Metaspace {
                    prepend: Some(false),
                    ..
                }
            )
        });
        HfUnigramPipeline {
            template: Template::new(
                &parts.special_prefix,
                &parts.special_suffix,
                add_special_tokens,
            ),
            model: parts.model,
            normalizer: parts.normalizer,
            stages: parts.stages,
            stages_need_spans,
            added: parts.added,
            decoder: parts.decoder,
            token_strings: parts.token_strings,
            cache_owner: word_cache::new_owner(),
            kernels,
        }
    }

    /// The string of `id`.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.token_strings.get(id as usize)?.as_deref()
    }

    fn encode<S: Sink>(&self, text: &str, sink: &mut S) {
        self.template.open(crate::pipeline::PartPlace::WHOLE, sink);
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim(self.cache_owner);
            let mut splits = std::mem::take(&mut scratch.splits);
            self.added.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) => self.encode_text(&text[s..e], s, scratch, sink),
                    Split::Token(id, s, e) => {
                        sink.push(id, s, e);
                        let taken = &text[s..e];
                        if S::OFFSETS && Some(taken) != self.id_to_token(id) {
                            sink.added_text(taken);
                        }
                    }
                }
            }
            scratch.splits = splits;
        });
        self.template.close(crate::pipeline::PartPlace::WHOLE, sink);
    }

    /// Normalizes, pre-tokenizes and segments `text`, which starts at `base` in the input.
    fn encode_text<S: Sink>(&self, text: &str, base: usize, scratch: &mut Scratch, sink: &mut S) {
        let spans = S::OFFSETS || self.stages_need_spans;
        let Scratch {
            aligned,
            spare,
            normalize,
            pieces,
            next_pieces,
            segments,
            unigram,
            cache,
            tokens,
            ..
        } = scratch;
        if !self
            .normalizer
            .apply(text, base as u32, spans, aligned, normalize)
        {
            aligned.text.clear();
            aligned.text.push_str(text);
            aligned.spans.clear();
            if spans {
                aligned.spans.extend(hf::char_spans(text, base as u32));
            }
        }
        pieces.clear();
        if !aligned.text.is_empty() {
            pieces.push((0, aligned.text.len()));
        }
        for &stage in &self.stages {
            next_pieces.clear();
            match stage {
                Stage::WhitespaceSplit => {
                    for &(s, e) in pieces.iter() {
                        split_whitespace(&aligned.text, s, e, next_pieces);
                    }
                }
                Stage::SplitBeforeSpaces => {
                    for &(s, e) in pieces.iter() {
                        split_before_spaces(aligned.text.as_bytes(), s, e, next_pieces);
                    }
                }
                Stage::Metaspace { prepend, split } => {
                    metaspace(aligned, pieces, prepend, spans, spare);
                    std::mem::swap(aligned, spare);
                    for &(s, e) in pieces.iter() {
                        if split {
                            split_before_spaces(aligned.text.as_bytes(), s, e, next_pieces);
                        } else {
                            next_pieces.push((s, e));
                        }
                    }
                }
            }
            std::mem::swap(pieces, next_pieces);
        }
        let bytes = aligned.text.as_bytes();
        let spans = &aligned.spans;
        // Token `id` over `bytes[a..b]`: the spans of its first and last bytes, and for the
        // unknown id the reference's string, the text it covers (a run of unknowns).
        let emit = |sink: &mut S, id: u32, a: usize, b: usize| {
            if S::OFFSETS {
                sink.push(id, spans[a].0 as usize, spans[b - 1].1 as usize);
                if id == self.model.unk_id() {
                    let run = std::str::from_utf8(&bytes[a..b]).expect("pieces end at characters");
                    if Some(run) != self.id_to_token(id) {
                        sink.added_text(run);
                    }
                }
            } else {
                sink.push(id, 0, 0);
            }
        };
        for &(s, e) in pieces.iter() {
            // Each pre-token is segmented on its own, from its bytes alone (the reference runs
            // the model on each): its tokens are a function of its bytes, so a cache keyed by
            // them is exact — no bound on the running score is needed, unlike SentencePiece's
            // word cache, since no score runs from one pre-token into the next.
            let piece = &bytes[s..e];
            let key = (piece.len() <= word_cache::MAX_WORD).then(|| Key::new(piece));
            if let Some(key) = &key
                && cache.get(key, |id, a, b| {
                    emit(sink, id, s + a as usize, s + b as usize)
                })
            {
                continue;
            }
            segments.clear();
            self.model.segment(piece, s as u32, unigram, segments);
            tokens.clear();
            for seg in segments.iter() {
                let (a, b) = (seg.start as usize, seg.end as usize);
                if seg.fused {
                    self.model.fused_ids(&bytes[a..b], |id| {
                        emit(sink, id, a, b);
                        tokens.push(WordToken {
                            id,
                            start: (a - s) as u32,
                            end: (b - s) as u32,
                        });
                    });
                } else {
                    emit(sink, seg.id, a, b);
                    tokens.push(WordToken {
                        id: seg.id,
                        start: (a - s) as u32,
                        end: (b - s) as u32,
                    });
                }
            }
            // Byte fallback's tokens share their run's span: they do not tile the pre-token,
            // and the cache does not keep them (`put` stores only tokens that tile).
            if let Some(key) = &key {
                cache.put(key, tokens);
            }
        }
    }

    /// The text of `ids` as the reference decodes it (`skip_special_tokens=True`).
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut tokens: Vec<String> = Vec::with_capacity(ids.len());
        for &id in ids {
            if id as usize >= self.token_strings.len() {
                return Err(id);
            }
            if self.added.tokens().iter().any(|t| t.id == id && t.special) {
                continue;
            }
            if let Some(t) = self.id_to_token(id) {
                tokens.push(t.to_string());
            }
        }
        Ok(decode_steps(&self.decoder, tokens))
    }
}

/// The pieces of `text[s..e]` between runs of whitespace (`WhitespaceSplit`).
fn split_whitespace(text: &str, s: usize, e: usize, out: &mut Vec<(usize, usize)>) {
    let mut start = None;
    for (i, c) in text[s..e].char_indices() {
        if c.is_whitespace() {
            if let Some(b) = start.take() {
                out.push((b, s + i));
            }
        } else if start.is_none() {
            start = Some(s + i);
        }
    }
    if let Some(b) = start {
        out.push((b, e));
    }
}

/// The pieces of `bytes[s..e]` cut before each `▁` but one at the start (`Split` on `▁`,
/// `MergedWithNext`).
fn split_before_spaces(bytes: &[u8], s: usize, e: usize, out: &mut Vec<(usize, usize)>) {
    let space = SPACE_UTF8.as_bytes();
    let mut start = s;
    for i in memchr::memchr_iter(space[0], &bytes[s..e]) {
        let at = s + i;
        if at > start && bytes[at..e].starts_with(space) {
            out.push((start, at));
            start = at;
        }
    }
    if start < e {
        out.push((start, e));
    }
}

/// A `Metaspace` on each of `pieces` of `input` (see [`Stage::Metaspace`]), into `out`;
/// `pieces` become the pieces of `out`.
fn metaspace(
    input: &hf::Aligned,
    pieces: &mut [(usize, usize)],
    prepend: Option<bool>,
    spans: bool,
    out: &mut hf::Aligned,
) {
    out.text.clear();
    out.spans.clear();
    for piece in pieces.iter_mut() {
        let (s, e) = *piece;
        let text = &input.text[s..e];
        let start = out.text.len();
        // The piece's start in the input, as the reference's `offsets_original` has it.
        let at_input_start = spans && input.spans[s].0 == 0;
        let prefixed = match prepend {
            Some(true) => true,
            Some(false) => at_input_start,
            None => false,
        } && !text.starts_with([SPACE, ' ']); // a space becomes a `▁` first
        if prefixed {
            out.text.push_str(SPACE_UTF8);
            if spans {
                // The prefix takes the first character's span (`NormalizedString::prepend`).
                out.spans
                    .extend(std::iter::repeat_n(input.spans[s], SPACE_UTF8.len()));
            }
        }
        for (i, c) in text.char_indices() {
            if c == ' ' {
                out.text.push_str(SPACE_UTF8);
                if spans {
                    out.spans
                        .extend(std::iter::repeat_n(input.spans[s + i], SPACE_UTF8.len()));
                }
            } else {
                out.text.push(c);
                if spans {
                    out.spans
                        .extend_from_slice(&input.spans[s + i..s + i + c.len_utf8()]);
                }
            }
        }
        *piece = (start, out.text.len());
    }
}

impl PipelineInfo for HfUnigramPipeline {
    fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        self.decode(ids)
    }

    fn vocab_size(&self) -> usize {
        self.token_strings.len()
    }

    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.id_to_token(id)
    }

    fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    fn added_suffix_len(&self) -> usize {
        self.template.suffix_len()
    }
}

impl Pipeline for HfUnigramPipeline {
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode(text, sink);
    }

    fn token_string(&self, id: u32) -> String {
        self.id_to_token(id).unwrap_or_default().to_string()
    }
}
