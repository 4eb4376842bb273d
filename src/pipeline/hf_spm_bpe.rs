//! SentencePiece-style BPE from a Hugging Face `tokenizer.json` (Llama 2, Mistral 7B, Gemma 3,
//! …): the normalizer puts `▁` in front and for every space (`Prepend`, `Replace`), there is no
//! pre-tokenizer (or a `Metaspace` doing the same, or `Split`s cutting the normalized text into
//! pieces that are encoded apart), BPE starts from characters with byte fallback (`<0xXX>`) for
//! those outside the vocabulary, and the decoder undoes it (`Replace`, `ByteFallback`, `Fuse`,
//! `Strip`) — as `tokenizers` runs such a file, with its offsets.

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::cache::segment as segment_cache;
use crate::cache::word::{self as word_cache, Key, PieceSeeds, WordCache};
use crate::models::char_ids::CharIds;
use crate::models::merges_bpe::{MergeScratch, MergesBpe};
use crate::models::safe_cuts::{CutBuffers, SafeCuts};
use crate::models::self_merges::SelfMerges;
use crate::models::token::PieceToken;
use crate::models::token::WordToken;
use crate::normalize::hf::{self, Normalizer};
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::cuts::AddedGuard;
use crate::pipeline::sink::Sink;
use crate::pipeline::template::Template;
use crate::pipeline::{PartPlace, Pipeline, PipelineInfo};
use crate::pretokenize::chain::{self, Chain};
use crate::pretokenize::unicode::utf8_len;

/// One step of the decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DecodeStep {
    Replace(String, String),
    ByteFallback,
    Fuse,
    Strip {
        content: char,
        start: usize,
        stop: usize,
    },
    /// The `Metaspace` decoder: `▁` becomes a space, except in the first token when a `▁` is
    /// prepended (`prepend`), where every `▁` is dropped.
    Metaspace {
        prepend: bool,
    },
}

/// What a SentencePiece-style BPE `tokenizer.json` holds, as [`crate::load::hf_spm_bpe`] reads
/// it.
#[derive(Debug)]
pub struct HfSpmBpeParts {
    /// The model.
    pub bpe: MergesBpe,
    /// The normalizer, with the `Metaspace` pre-tokenizer's replacement and prefix as its last
    /// steps.
    pub normalizer: Normalizer,
    /// The id of `<0xXX>` for each byte (`NO_BYTE` where the vocabulary has none), with byte
    /// fallback.
    pub byte_fallback: Option<[u32; 256]>,
    /// The unknown token's id, and whether unknowns in a row fuse into one.
    pub unk: Option<(u32, bool)>,
    /// Added tokens matched in the raw text.
    pub added: AddedTokens,
    /// The post-processor's ids before a sequence.
    pub special_prefix: Vec<u32>,
    /// … and after it.
    pub special_suffix: Vec<u32>,
    /// The decoder.
    pub decoder: Vec<DecodeStep>,
    /// The string of each id.
    pub token_strings: Vec<Option<Box<str>>>,
    /// Where words may start at a `▁` that follows another character (see
    /// `HfSpmBpe::encode_piece`); `None`: nowhere but where the pre-tokenizer splits.
    pub space_cuts: Option<SpaceCuts>,
    /// Each `▁` (but at the start) begins a new pre-token.
    pub split_at_spaces: bool,
    /// The `Split` pre-tokenizers: they cut the normalized text into pieces, each encoded on its
    /// own.
    pub pre_split: Option<Chain>,
    /// Whether every stage of `pre_split` splits on a string with no `▁` after its first
    /// character (no match can reach across a `▁`: see `PartCuts`).
    pub splits_allow_cuts: bool,
    /// Where long words can be cut; `None` when cuts could change the tokens.
    pub cuts: Option<SafeCuts>,
    /// The pairs of ASCII characters next to each other in some entry, when cuts are allowed.
    pub ascii_pairs: Option<AsciiPairs>,
    /// A whole text that is an entry is that entry (the model's `ignore_merges`).
    pub ignore_merges: bool,
}

/// A SentencePiece-style BPE `tokenizer.json`.
#[derive(Debug)]
pub struct HfSpmBpe {
    /// Where a text may be cut into parts that continue it ([`PipelineInfo::last_part_cut`]).
    part_cuts: Option<PartCuts>,
    bpe: MergesBpe,
    normalizer: Normalizer,
    byte_fallback: Option<[u32; 256]>,
    unk: Option<(u32, bool)>,
    added: AddedTokens,
    /// The post-processor's tokens, when they are added.
    template: Template,
    decoder: Vec<DecodeStep>,
    token_strings: Vec<Option<Box<str>>>,
    /// Where the text may be cut into words before a `▁` that follows another character (see
    /// [`HfSpmBpe::encode_piece`]).
    space_cuts: Option<SpaceCuts>,
    /// Each `▁` (but at the start) begins a new pre-token: the `Metaspace` pre-tokenizer's
    /// `split`.
    split_at_spaces: bool,
    /// The `Split` pre-tokenizers, run on the normalized text (see [`HfSpmBpe::encode_text`]).
    pre_split: Option<Chain>,
    /// Where long words can be cut ([`SafeCuts`]); `None` when cuts could change the tokens
    /// (see [`crate::load::hf_spm_bpe`]).
    cuts: Option<SafeCuts>,
    /// The pairs of ASCII characters next to each other in some entry, when cuts are allowed
    /// (`cuts`): between two ASCII characters of no such pair, no entry — so no merge — can
    /// span, and the text is cut there too (code: one pair in six).
    ascii_pairs: Option<AsciiPairs>,
    /// A whole text that is an entry is that entry (the model's `ignore_merges`).
    ignore_merges: bool,
    /// Per entry: whether a word that is exactly the entry merges into it (learnt at load):
    /// such a word seen for the first time costs a probe instead of a merge.
    whole_entries: SelfMerges,
    /// Each character's entry, for the merges' starting symbols.
    char_ids: CharIds,
    cache_owner: usize,
    /// What a thread's word cache starts with: the whole entries ([`PieceSeeds`]).
    seeds: PieceSeeds,
    /// This tokenizer's segments in a thread's segment cache ([`CutBuffers::cached_segment`]).
    segment_model: usize,
    kernels: &'static Kernels,
}

#[derive(Default)]
struct Scratch {
    splits: Vec<Split>,
    merge: MergeScratch,
    tokens: Vec<PieceToken>,
    word_tokens: Vec<WordToken>,
    normalized: NormalizeBuffers,
    cache: WordCache,
    segments: Vec<(u32, u32)>,
    cut: CutBuffers,
    /// The pieces of the `Split` pre-tokenizers, and their buffers.
    pieces: Vec<(usize, usize)>,
    chain: chain::Scratch,
}

/// The normalized text with each of its bytes' input span, and the normalizer's buffers.
#[derive(Default)]
struct NormalizeBuffers {
    aligned: hf::Aligned,
    scratch: hf::Scratch,
}

/// A byte without a `<0xXX>` entry in a byte-fallback table.
pub const NO_BYTE: u32 = u32::MAX;
/// The SentencePiece space, `▁`.
pub const SPACE: char = '\u{2581}';
/// … as UTF-8.
pub const SPACE_UTF8: &str = "\u{2581}";
/// Words longer than this with two non-ASCII characters in a row are cut at their safe cuts
/// before merging.
const CUT_ABOVE: usize = 16;
/// Words of two-byte characters up to this long are merged whole ([`cuts_pay`]).
const WHOLE_UP_TO: usize = 48;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl HfSpmBpe {
    /// The tokenizer of `parts`; special tokens are added when `add_special_tokens`.
    pub fn new(parts: HfSpmBpeParts, add_special_tokens: bool, kernels: &'static Kernels) -> Self {
        let HfSpmBpeParts {
            bpe,
            normalizer,
            byte_fallback,
            unk,
            added,
            special_prefix,
            special_suffix,
            decoder,
            token_strings,
            space_cuts,
            split_at_spaces,
            pre_split,
            splits_allow_cuts,
            cuts,
            ascii_pairs,
            ignore_merges,
        } = parts;
        // Without the `Metaspace` split, a part may start only where a word may.
        let word_starts = match (split_at_spaces, &space_cuts) {
            (true, _) => Some(SpaceCuts::EVERYWHERE),
            (false, Some(cuts)) => Some(cuts.clone()),
            (false, None) => None,
        };
        let part_cuts = word_starts.and_then(|word_starts| {
            PartCuts::new(
                &normalizer,
                &added,
                &word_starts,
                (pre_split.is_none() || splits_allow_cuts) && !ignore_merges,
            )
        });
        let whole_entries = SelfMerges::new(bpe.len());
        let char_ids = CharIds::new(|c| bpe.bytes_id(c));
        let pipeline = HfSpmBpe {
            whole_entries,
            char_ids,
            part_cuts,
            bpe,
            normalizer,
            byte_fallback,
            unk,
            added,
            template: Template::new(&special_prefix, &special_suffix, add_special_tokens),
            decoder,
            token_strings,
            space_cuts,
            split_at_spaces,
            pre_split,
            cuts,
            ascii_pairs,
            ignore_merges,
            cache_owner: word_cache::new_owner(),
            seeds: PieceSeeds::none(),
            segment_model: segment_cache::new_model_id(),
            kernels,
        };
        // What a first sight would otherwise build or learn (text never seen before): the safe
        // cuts' tries (else built at the first long word of each script) and the whole entries.
        if let Some(cuts) = &pipeline.cuts {
            cuts.build_tries(|id| pipeline.id_to_token(id).unwrap_or_default().as_bytes());
        }
        pipeline
            .whole_entries
            .learn_all(|id, merge: &mut MergeScratch| {
                if let Some(bytes) = pipeline.bpe.token_bytes(id) {
                    pipeline.merges_whole(id, bytes, merge);
                }
            });
        let mut merge = MergeScratch::default();
        let seeds = PieceSeeds::new(pipeline.bpe.len() as u32, |id| {
            pipeline.whole_entry(id, &mut merge)
        });
        HfSpmBpe { seeds, ..pipeline }
    }

    /// The bytes of entry `id` when a word that is exactly them encodes as `id` alone
    /// ([`HfSpmBpe::encode_word`]'s first step after the caches).
    fn whole_entry(&self, id: u32, merge: &mut MergeScratch) -> Option<&[u8]> {
        let bytes = self.bpe.token_bytes(id)?;
        (self.bpe.bytes_id(bytes) == Some(id) && self.merges_whole(id, bytes, merge))
            .then_some(bytes)
    }

    /// Checks every seed of the word cache against the merge of its characters, which is what
    /// a word of it gives without a cache ([`PieceSeeds::check`]).
    #[cfg(test)]
    pub(crate) fn check_seeds(&self) -> Result<usize, String> {
        let mut merge = MergeScratch::default();
        self.seeds.check(|word| {
            let mut tokens = Vec::new();
            self.merge_chars(word, &mut merge, &mut tokens);
            tokens
        })
    }

    /// Whether the word `bytes`, entry `id`, merges into that entry.
    fn merges_whole(&self, id: u32, bytes: &[u8], merge: &mut MergeScratch) -> bool {
        self.whole_entries.get(id, || {
            let mut tokens = Vec::with_capacity(4);
            std::str::from_utf8(bytes).is_ok() && {
                self.merge_chars(bytes, merge, &mut tokens);
                tokens.len() == 1 && tokens[0].id == id
            }
        })
    }

    /// The kernels in use.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    fn encode<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode_part(text, PartPlace::WHOLE, sink);
    }

    /// [`HfSpmBpe::encode`] of one part of a text cut by [`PipelineInfo::last_part_cut`]: the
    /// text segment at its start, when it is not the text's first part, continues one begun
    /// before the cut and gets no prefix.
    /// The post-processor's tokens go before the first part and after the last.
    fn encode_part<S: Sink>(&self, text: &str, place: PartPlace, sink: &mut S) {
        self.template.open(place, sink);
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim_seeded(self.cache_owner, &self.seeds);
            scratch.merge.fit_budget();
            scratch.cut.fit_budget();
            let mut splits = std::mem::take(&mut scratch.splits);
            self.added.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) => {
                        let prefix = place.first || s > 0;
                        self.encode_text(&text[s..e], s, prefix, scratch, sink)
                    }
                    Split::Token(id, s, e) => sink.push(id, s, e),
                }
            }
            scratch.splits = splits;
        });
        self.template.close(place, sink);
    }

    /// Normalizes `text` (at `base` in the input) into `buffers.aligned`, with each byte's
    /// input span when `with_spans` (else no spans).
    fn normalize(
        &self,
        text: &str,
        base: usize,
        prefix: bool,
        buffers: &mut NormalizeBuffers,
        with_spans: bool,
    ) {
        let NormalizeBuffers { aligned, scratch } = buffers;
        if !self
            .normalizer
            .apply_part(text, base as u32, with_spans, aligned, scratch, prefix)
        {
            aligned.text.clear();
            aligned.text.push_str(text);
            aligned.spans.clear();
            if with_spans {
                aligned.spans.extend(hf::char_spans(text, base as u32));
            }
        }
    }

    /// Normalizes `text` (at `base` in the input) and encodes it: the whole normalized text, or
    /// with `Split` pre-tokenizers each of their pieces on its own (as the reference runs the
    /// model on each pre-token), each piece keeping its bytes' input spans.
    fn encode_text<S: Sink>(
        &self,
        text: &str,
        base: usize,
        prefix: bool,
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let mut buffers = std::mem::take(&mut scratch.normalized);
        self.normalize(text, base, prefix, &mut buffers, S::OFFSETS);
        let (normalized, spans) = (&buffers.aligned.text, &buffers.aligned.spans);
        match &self.pre_split {
            None => self.encode_piece(normalized.as_bytes(), spans, scratch, sink),
            Some(chain) => {
                let mut pieces = std::mem::take(&mut scratch.pieces);
                chain.pieces(normalized, &mut pieces, &mut scratch.chain);
                for &(s, e) in &pieces {
                    // Without offsets there are no spans: each piece gets an empty slice.
                    let spans = if S::OFFSETS { &spans[s..e] } else { &[][..] };
                    self.encode_piece(&normalized.as_bytes()[s..e], spans, scratch, sink);
                }
                scratch.pieces = pieces;
            }
        }
        scratch.normalized = buffers;
    }

    /// Encodes one pre-token of normalized text (`spans`: its bytes' input spans, or none without
    /// offsets). When allowed ([`SpaceCuts`]), it is cut into words before a `▁` that follows
    /// another character, and each word is encoded on its own (short ones through the
    /// per-thread cache): the same tokens, since no merge can cross such a cut. With a
    /// `Metaspace` pre-tokenizer that splits, every `▁` but a leading one starts a pre-token:
    /// the reference's own cut.
    fn encode_piece<S: Sink>(
        &self,
        bytes: &[u8],
        spans: &[(u32, u32)],
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        // Without offsets there are no spans: each word gets an empty slice.
        let spans_of = |s: usize, e: usize| if S::OFFSETS { &spans[s..e] } else { &[][..] };
        // The model's `ignore_merges`: the whole pre-token (with no pre-tokenizer, the whole
        // normalized text) taken whole when it is an entry.
        if self.ignore_merges
            && let Some(id) = self.bpe.bytes_id(bytes)
        {
            let (s, e) = match spans.first() {
                Some(first) => (first.0 as usize, spans[spans.len() - 1].1 as usize),
                None => (0, 0),
            };
            sink.push(id, s, e);
            return;
        }
        let mut start = 0;
        let cut = |at: usize, start: &mut usize, scratch: &mut Scratch, sink: &mut S| {
            if at > *start {
                self.encode_word(&bytes[*start..at], spans_of(*start, at), scratch, sink);
                *start = at;
            }
        };
        match &self.ascii_pairs {
            // Cuts before each `▁` that follows a character other than `▁`, and between two
            // ASCII characters that are next to each other in no entry.
            Some(pairs) => {
                let space = SPACE_UTF8.as_bytes();
                let space_starts = self.space_cuts.is_some() || self.split_at_spaces;
                let mut after_space = 0; // the end of the last `▁` seen
                let mut i = 0;
                while i < bytes.len() {
                    let b = bytes[i];
                    if b < 0x80 {
                        if i > 0 && bytes[i - 1] < 0x80 && !pairs.holds(bytes[i - 1], b) {
                            cut(i, &mut start, scratch, sink);
                        }
                        i += 1;
                    } else if space_starts && b == space[0] && bytes[i..].starts_with(space) {
                        if self.word_starts_at(bytes, i, after_space) {
                            cut(i, &mut start, scratch, sink);
                        }
                        i += space.len();
                        after_space = i;
                    } else {
                        // Normalized text is UTF-8 and `i` starts a character: step over the
                        // whole of it (a Hangul or CJK text's characters are three bytes).
                        i += utf8_len(b);
                    }
                }
            }
            None if self.space_cuts.is_some() || self.split_at_spaces => {
                // Each `▁` (its first byte found with memchr, then the other two compared)
                // that follows a character other than `▁` starts a word (with `split`, each
                // `▁` but a leading one).
                let space = SPACE_UTF8.as_bytes();
                let mut after_space = 0; // the end of the last `▁` seen
                for i in memchr::memchr_iter(space[0], bytes) {
                    if bytes[i..].starts_with(space) {
                        if self.word_starts_at(bytes, i, after_space) {
                            cut(i, &mut start, scratch, sink);
                        }
                        after_space = i + space.len();
                    }
                }
            }
            None => {}
        }
        if start < bytes.len() {
            self.encode_word(&bytes[start..], spans_of(start, bytes.len()), scratch, sink);
        }
    }

    /// Whether a word starts at the `▁` at `i` of `bytes`, the last `▁` before it ending at
    /// `after_space`: the `Metaspace` split's cut (any `▁` but a leading one), or one that
    /// follows another character where [`SpaceCuts`] allows it.
    #[inline]
    fn word_starts_at(&self, bytes: &[u8], i: usize, after_space: usize) -> bool {
        (self.split_at_spaces && i > 0)
            || (i > after_space
                && self
                    .space_cuts
                    .as_ref()
                    .is_some_and(|cuts| cuts.allows_after(bytes[i - 1])))
    }

    /// Encodes one word of normalized text; `spans` are its bytes' input spans.
    fn encode_word<S: Sink>(
        &self,
        word: &[u8],
        spans: &[(u32, u32)],
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let emit = |sink: &mut S, id: u32, s: u32, e: u32| {
            if S::OFFSETS {
                sink.push(
                    id,
                    spans[s as usize].0 as usize,
                    spans[e as usize - 1].1 as usize,
                )
            } else {
                sink.push(id, 0, 0)
            }
        };
        let key = (word.len() <= word_cache::MAX_WORD).then(|| Key::new(word));
        if let Some(key) = &key
            && scratch.cache.get(key, |id, s, e| emit(sink, id, s, e))
        {
            return;
        }
        if let Some(tokens) = scratch.cache.get_long(word) {
            let mut at = 0u32;
            for t in tokens {
                emit(sink, t.id, at, at + t.len);
                at += t.len;
            }
            return;
        }
        let Scratch {
            merge,
            tokens,
            word_tokens,
            cache,
            segments,
            cut,
            ..
        } = scratch;
        tokens.clear();
        // A word that is an entry which merges into itself: that entry, with no merge.
        let whole = self
            .bpe
            .bytes_id(word)
            .filter(|&id| self.merges_whole(id, word, merge));
        match (whole, &self.cuts) {
            (Some(id), _) => {
                tokens.push(PieceToken {
                    id,
                    len: word.len() as u32,
                });
            }
            (None, Some(cuts))
                if word.len() > CUT_ABOVE && cuts_pay(word) && !only_spaces_beyond_ascii(word) =>
            {
                cuts.segments(self.kernels, word, segments, |id| {
                    self.id_to_token(id).unwrap_or_default().as_bytes()
                });
                // Segments repeat (a CJK text's characters; a run of one, cut into its
                // characters, merges one of them): short ones through the segment cache.
                for &(s, e) in segments.iter() {
                    let segment = &word[s as usize..e as usize];
                    cut.cached_segment(self.segment_model, segment, tokens, |tokens| {
                        self.merge_chars(segment, merge, tokens)
                    });
                }
            }
            _ => self.merge_chars(word, merge, tokens),
        }
        word_tokens.clear();
        let mut at = 0u32;
        for t in tokens.iter() {
            word_tokens.push(WordToken {
                id: t.id,
                start: at,
                end: at + t.len,
            });
            at += t.len;
        }
        // A dropped character (no entry, no byte fallback, no unknown token) leaves bytes no
        // token covers; the reference still places tokens by the running sum of their
        // lengths, and so does this.
        for t in word_tokens.iter() {
            emit(sink, t.id, t.start, t.end);
        }
        // Every word goes to the long tier too (which stores it when seen a second time): with
        // no whole-word shortcut, a miss here costs a merge per character, so the long tier's
        // slots back the short tier's.
        if let Some(key) = &key {
            cache.put(key, word_tokens);
        }
        cache.put_long(word, tokens);
    }

    /// Appends the tokens of `text` (whole characters of normalized text) to `tokens`: its
    /// starting symbols — characters, byte tokens, or (fused) unknowns — merged.
    fn merge_chars(&self, text: &[u8], merge: &mut MergeScratch, tokens: &mut Vec<PieceToken>) {
        merge.ids.clear();
        merge.lens.clear();
        let mut unk: Option<(u32, u32)> = None;
        let text = std::str::from_utf8(text).expect("cut at character boundaries");
        // The entry of the previous character: runs of one character (`▁▁▁…`) look it up once.
        let mut last: Option<(char, Option<u32>)> = None;
        for c in text.chars() {
            let mut buf = [0u8; 4];
            let s = c.encode_utf8(&mut buf).as_bytes();
            let entry = match last {
                Some((prev, id)) if prev == c => id,
                _ => self.char_ids.get(c, s, |s| self.bpe.bytes_id(s)),
            };
            last = Some((c, entry));
            if let Some(id) = entry {
                if let Some((uid, ulen)) = unk.take() {
                    merge.ids.push(uid);
                    merge.lens.push(ulen);
                }
                merge.ids.push(id);
                merge.lens.push(s.len() as u32);
            } else if let Some(bytes) = &self.byte_fallback
                && s.iter().all(|&b| bytes[b as usize] != NO_BYTE)
            {
                // As the reference does it, a pending unknown stays pending: it comes after
                // these bytes (and goes on fusing), its offsets the running sum of lengths.
                for &b in s {
                    merge.ids.push(bytes[b as usize]);
                    merge.lens.push(1);
                }
            } else if let Some((uid, fuse)) = self.unk {
                unk = match unk {
                    Some((_, ulen)) if fuse => Some((uid, ulen + s.len() as u32)),
                    Some(pending) => {
                        merge.ids.push(pending.0);
                        merge.lens.push(pending.1);
                        Some((uid, s.len() as u32))
                    }
                    None => Some((uid, s.len() as u32)),
                };
            }
            // With neither, the reference drops the character.
        }
        if let Some((uid, ulen)) = unk {
            merge.ids.push(uid);
            merge.lens.push(ulen);
        }
        self.bpe.merge_symbols(merge, tokens);
    }

    /// The string of `id`.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.token_strings.get(id as usize)?.as_deref()
    }

    /// One past the largest id.
    pub fn vocab_size(&self) -> usize {
        self.token_strings.len()
    }

    /// The text of `ids` as the reference decodes it (`skip_special_tokens=True`).
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut tokens: Vec<String> = Vec::with_capacity(ids.len());
        for &id in ids {
            if id as usize >= self.vocab_size() {
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

/// The text the decoder `steps` make of `tokens` (the ids' strings, special tokens left out).
pub(crate) fn decode_steps(decoder: &[DecodeStep], mut tokens: Vec<String>) -> String {
    for step in decoder {
        tokens = match step {
            DecodeStep::Replace(from, to) => tokens
                .into_iter()
                .map(|t| t.replace(from.as_str(), to))
                .collect(),
            DecodeStep::Fuse => vec![tokens.concat()],
            DecodeStep::Strip {
                content,
                start,
                stop,
            } => tokens
                .into_iter()
                .map(|t| strip(&t, *content, *start, *stop))
                .collect(),
            DecodeStep::ByteFallback => byte_fallback(tokens),
            DecodeStep::Metaspace { prepend } => tokens
                .into_iter()
                .enumerate()
                .map(|(i, t)| {
                    let space = if i == 0 && *prepend { "" } else { " " };
                    t.replace(SPACE, space)
                })
                .collect(),
        };
    }
    tokens.concat()
}

/// Where a word may start at a `▁` that follows another character: after any byte but those
/// that end the character before a `▁` inside some entry (Gemma 3 has one such entry, `>▁</`).
///
/// Proof. A merge makes an entry, so a merge that crosses a `▁` at `p` (the character before it
/// not `▁`) makes an entry holding that character then `▁`, and the text's byte before `p` is
/// the byte before that `▁` in the entry: one of the blocked bytes. After any other byte no merge
/// crosses `p`, and the reference's merges on either side go as they would apart (each side's
/// lowest rank first, the leftmost of equal ranks; no pair spans `p`). `▁` must be an entry
/// itself, so that no run of unknowns fuses across `p` either.
#[derive(Clone, Debug)]
pub struct SpaceCuts {
    blocked: [bool; 256],
}

impl SpaceCuts {
    /// Cuts before every `▁` (no entry holds one after another character).
    const EVERYWHERE: SpaceCuts = SpaceCuts {
        blocked: [false; 256],
    };

    /// The cuts of a vocabulary of `entries`; `None` when `▁` is not an entry.
    pub fn of<'a>(entries: impl Iterator<Item = &'a str>) -> Option<SpaceCuts> {
        let mut blocked = [false; 256];
        let mut has_space = false;
        for t in entries {
            has_space |= t == SPACE_UTF8;
            let mut prev: Option<char> = None;
            for (i, c) in t.char_indices() {
                if c == SPACE && prev.is_some_and(|p| p != SPACE) {
                    blocked[t.as_bytes()[i - 1] as usize] = true;
                }
                prev = Some(c);
            }
        }
        has_space.then_some(SpaceCuts { blocked })
    }

    /// Whether a word may start at a `▁` after the byte `b` (the last of another character).
    #[inline]
    pub fn allows_after(&self, b: u8) -> bool {
        !self.blocked[b as usize]
    }
}

/// A set of pairs of ASCII bytes.
#[derive(Debug)]
pub struct AsciiPairs(Box<[u64; 256]>);

impl AsciiPairs {
    /// The pairs of ASCII characters that are next to each other in some entry.
    pub fn of<'a>(entries: impl Iterator<Item = &'a str>) -> AsciiPairs {
        let mut bits = Box::new([0u64; 256]);
        for t in entries {
            for w in t.as_bytes().windows(2) {
                if w[0] < 0x80 && w[1] < 0x80 {
                    let bit = (w[0] as usize) << 7 | w[1] as usize;
                    bits[bit / 64] |= 1 << (bit % 64);
                }
            }
        }
        AsciiPairs(bits)
    }

    /// Whether `a` then `b` (both ASCII) is in the set.
    #[inline]
    fn holds(&self, a: u8, b: u8) -> bool {
        let bit = (a as usize) << 7 | b as usize;
        self.0[bit / 64] & (1 << (bit % 64)) != 0
    }
}

/// Whether the only non-ASCII characters of `word` are `▁`: indentation before code, where
/// the vocabulary's runs of `▁` span every cut there could be, so looking for one never pays.
/// [`SafeCuts::cuts_pay`] for a word of normalized text, where `▁`, three bytes and in most
/// words, does not count as a wide character: a Cyrillic word (`▁слово`) of up to
/// [`WHOLE_UP_TO`] bytes is merged whole, as byte-level BPE merges it, instead of paying the trie
/// walks that find its cuts (Gemma 3 on Russian text spent a sixth of its time finding them).
fn cuts_pay(word: &[u8]) -> bool {
    SafeCuts::has_candidate(word) && (word.len() > WHOLE_UP_TO || wide_beyond_spaces(word))
}

/// Whether `word` holds a character of three or four bytes other than `▁`.
fn wide_beyond_spaces(word: &[u8]) -> bool {
    let space = SPACE_UTF8.as_bytes();
    let mut i = 0;
    while i < word.len() {
        if word[i] >= 0xE0 {
            if !word[i..].starts_with(space) {
                return true;
            }
            i += space.len();
        } else {
            i += 1;
        }
    }
    false
}

fn only_spaces_beyond_ascii(word: &[u8]) -> bool {
    let space = SPACE_UTF8.as_bytes();
    let mut i = 0;
    while i < word.len() {
        if word[i] < 0x80 {
            i += 1;
        } else if word[i..].starts_with(space) {
            i += space.len();
        } else {
            return false;
        }
    }
    true
}

/// `<0xXX>` tokens in a row become their bytes' text, or one U+FFFD per byte when the bytes are
/// not valid UTF-8 (the `ByteFallback` decoder).
fn byte_fallback(tokens: Vec<String>) -> Vec<String> {
    let byte_of = |t: &str| {
        let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
        (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok())?
    };
    let mut out = Vec::with_capacity(tokens.len());
    let mut pending: Vec<u8> = Vec::new();
    let mut count = 0usize;
    let flush = |out: &mut Vec<String>, pending: &mut Vec<u8>, count: &mut usize| {
        if *count == 0 {
            return;
        }
        match String::from_utf8(std::mem::take(pending)) {
            Ok(s) => out.push(s),
            Err(_) => out.extend(std::iter::repeat_n("\u{FFFD}".to_string(), *count)),
        }
        *count = 0;
    };
    for t in tokens {
        if let Some(b) = byte_of(&t) {
            pending.push(b);
            count += 1;
        } else {
            flush(&mut out, &mut pending, &mut count);
            out.push(t);
        }
    }
    flush(&mut out, &mut pending, &mut count);
    out
}

/// Removes up to `start` leading and `stop` trailing `content` characters (the `Strip`
/// decoder).
fn strip(t: &str, content: char, start: usize, stop: usize) -> String {
    let lead = t.chars().take(start).take_while(|&c| c == content).count();
    let rest: Vec<char> = t.chars().skip(lead).collect();
    let trail = rest
        .iter()
        .rev()
        .take(stop)
        .take_while(|&&c| c == content)
        .count();
    rest[..rest.len() - trail].iter().collect()
}

impl PipelineInfo for HfSpmBpe {
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

    fn regex_fallbacks(&self) -> Vec<String> {
        self.pre_split
            .iter()
            .flat_map(|chain| chain.fallback_regexes().map(str::to_owned))
            .collect()
    }

    /// No safe cuts: `Prepend("▁")` (Llama 2) and the `Metaspace` prefix put a `▁` before each text,
    /// which `T` has not at `p` (a cut before a space would not help `Prepend`, which adds one
    /// even before a `▁`), and with no pre-tokenizer the BPE runs over the whole normalized
    /// text, where no rule is proven for a text-level cut (the word cuts of `encode_text` are
    /// inside one text).
    fn last_safe_cut(&self, _text: &[u8]) -> Option<usize> {
        None
    }

    /// Before a space that follows an ASCII graphic character ([`PartCuts`] has the proof).
    fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        let cuts = self.part_cuts.as_ref()?;
        memchr::memrchr_iter(b' ', text).find(|&p| cuts.allows(text, p))
    }

    fn added_suffix_len(&self) -> usize {
        self.template.suffix_len()
    }
}

/// Where a text `T` may be cut into parts that continue it, for a pipeline whose `Split`
/// pre-tokenizers (if any) split on strings that hold no `▁` after their first character, with
/// no `ignore_merges`, and words cut before a `▁` that follows another character
/// ([`SpaceCuts`] or the `Metaspace` split): at `p` where `T[p]` is a space, `T[p - 1]` an
/// ASCII graphic character that normalizes to no `▁` and to a last byte after which a word may
/// start there, and the added tokens' matches provably do not reach across `p`
/// (`cuts::AddedGuard`). The template's tokens go before the first part
/// and after the last.
///
/// Proof. The added tokens split `T` as they split the parts, the text segment around `p` in
/// two (the guard's proof). The normalizer acts on each character alone but for its prefix
/// ([`Normalizer::continues_before_ascii`]), which only a segment's start gets; so the
/// segment's normalization is that of its part before `p` followed by that of its part from
/// `p` without the prefix (which [`HfSpmBpe::encode_part`] leaves out for the segment at the
/// start of every part but the first), each byte with the same span. The space at `p`
/// normalizes to `▁` (checked) after a character that is not `▁`: a word starts there, which
/// no merge crosses, and `▁` is an entry, so no unknown run crosses it either; the tokens of
/// the segment are those of the two sides.
///
/// With `Split`s: an occurrence of a string that crosses `p` (starts before it, ends after it)
/// holds the normalized text's character at `p`, the `▁`, at an index past its first; the
/// strings hold none there, so no occurrence crosses `p`, in the whole segment or in a stage's
/// piece. A stage turns occurrences and the gaps between them into pieces (dropping, isolating
/// or merging occurrences by its behavior, `invert` swapping the roles); with no occurrence
/// across `p`, the pieces of the segment are those of its two sides, but for the one piece
/// that spans `p` (a gap, or an occurrence merged with its neighbour), which the two sides
/// have as its part before `p` and its part from `p`. By induction over the stages, the last
/// stage's pieces are the two sides' but for such a piece, whose tokens are those of its two
/// parts (no merge or unknown run crosses the word start at `p`, as above).
#[derive(Debug)]
struct PartCuts {
    added: Option<AddedGuard>,
    /// Per ASCII byte: a graphic character whose normalized form holds no `▁`.
    before: [bool; 128],
}

impl PartCuts {
    /// The cuts of a pipeline with `normalizer` and `added` tokens whose words start at a `▁`
    /// where `word_starts` allows; `None` unless `allowed` (the model's conditions), the
    /// normalizer acts on characters alone but for its prefix, and it makes a space a `▁`.
    fn new(
        normalizer: &Normalizer,
        added: &AddedTokens,
        word_starts: &SpaceCuts,
        allowed: bool,
    ) -> Option<PartCuts> {
        if !allowed || !normalizer.continues_before_ascii() {
            return None;
        }
        let normalized = |c: char| {
            let (text, mut buffers) = (c.to_string(), NormalizeBuffers::default());
            let NormalizeBuffers { aligned, scratch } = &mut buffers;
            match normalizer.apply_part(&text, 1, false, aligned, scratch, false) {
                true => std::mem::take(&mut aligned.text),
                false => text,
            }
        };
        if normalized(' ') != "\u{2581}" {
            return None;
        }
        let mut before = [false; 128];
        for b in 0..128u8 {
            let n = normalized(b as char);
            before[b as usize] = b.is_ascii_graphic()
                && n.as_bytes()
                    .last()
                    .is_some_and(|&l| word_starts.allows_after(l))
                && !n.contains('\u{2581}');
        }
        Some(PartCuts {
            added: AddedGuard::new(added.tokens()),
            before,
        })
    }

    fn allows(&self, text: &[u8], p: usize) -> bool {
        p > 0
            && text[p] == b' '
            && text[p - 1] < 0x80
            && self.before[text[p - 1] as usize]
            && self.added.as_ref().is_none_or(|g| g.allows(text, p))
    }
}

impl Pipeline for HfSpmBpe {
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode(text, sink);
    }

    fn encode_part_to<S: Sink>(&self, text: &str, place: PartPlace, sink: &mut S) {
        self.encode_part(text, place, sink);
    }

    fn token_string(&self, id: u32) -> String {
        self.id_to_token(id).unwrap_or_default().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding;
    use crate::load::hf_spm_bpe::from_tokenizer_json;
    use crate::load::tokenizer_json::TokenizerJson;
    use crate::options::LoadOptions;

    /// A SentencePiece-style BPE with `▁ab` in the vocabulary but no merge that makes it.
    fn model(ignore_merges: bool) -> HfSpmBpe {
        let json = format!(
            r#"{{
                "normalizer": {{"type": "Sequence", "normalizers": [
                    {{"type": "Prepend", "prepend": "▁"}},
                    {{"type": "Replace", "pattern": {{"String": " "}}, "content": "▁"}}]}},
                "pre_tokenizer": null,
                "decoder": null,
                "post_processor": null,
                "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": false, "fuse_unk": true,
                    "unk_token": "<unk>", "ignore_merges": {ignore_merges},
                    "vocab": {{"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "▁ab": 5}},
                    "merges": [["▁", "a"]]}}
            }}"#
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap()
    }

    #[test]
    fn cuts_pay_for_wide_characters_but_not_for_the_space() {
        let pays = |s: &str| cuts_pay(s.as_bytes());
        assert!(!pays("▁слово"), "a Cyrillic word is merged whole");
        assert!(!pays("▁▁слово"));
        assert!(pays("▁日本"), "CJK is cut");
        assert!(pays("слово日本"));
        assert!(pays(&"▁слово".repeat(5)), "over 48 bytes");
        assert!(!pays("▁word"), "no two non-ASCII characters in a row");
    }

    #[test]
    fn ignore_merges_takes_a_whole_text_that_is_an_entry() {
        let mut ids = Vec::new();
        model(false).encode_ids_into("ab", &mut ids);
        assert_eq!(ids, vec![4, 3]);
        model(true).encode_ids_into("ab", &mut ids);
        assert_eq!(ids, vec![5]);
        // Only the whole text: "ab ab" is no entry, so it merges.
        model(true).encode_ids_into("ab ab", &mut ids);
        assert_eq!(ids, vec![4, 3, 4, 3]);
        let mut enc = Encoding::default();
        model(true).encode_into("ab", &mut enc, false);
        assert_eq!((enc.ids, enc.offsets), (vec![5], vec![(0, 2)]));
    }

    /// A byte-fallback model over `a b c` whose merges chain across pairs (`ab`, `bc`, `abc`,
    /// `ca`…), with or without its cuts between ASCII pairs.
    fn chained(cuts: bool) -> HfSpmBpe {
        let bytes: Vec<String> = (0..256)
            .map(|b| format!(r#""<0x{b:02X}>": {}"#, 10 + b))
            .collect();
        let json = format!(
            r#"{{
                "normalizer": {{"type": "Sequence", "normalizers": [
                    {{"type": "Prepend", "prepend": "▁"}},
                    {{"type": "Replace", "pattern": {{"String": " "}}, "content": "▁"}}]}},
                "pre_tokenizer": null, "decoder": null, "post_processor": null,
                "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": true, "fuse_unk": true,
                    "unk_token": "<unk>",
                    "vocab": {{"<unk>": 0, "▁": 1, "a": 2, "b": 3, "c": 4, "ab": 5, "bc": 6,
                        "abc": 7, "ca": 8, "▁a": 9, "cab": 300, "bca": 301, {}}},
                    "merges": [["b", "c"], ["a", "b"], ["a", "bc"], ["c", "a"], ["▁", "a"],
                        ["c", "ab"], ["bc", "a"]]}}
            }}"#,
            bytes.join(", ")
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        let mut m = from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap();
        assert!(m.ascii_pairs.is_some());
        if !cuts {
            m.ascii_pairs = None;
        }
        m
    }

    #[test]
    fn cuts_between_ascii_pairs_change_no_token() {
        let (cut, whole) = (chained(true), chained(false));
        // `b b`, `c c`, `a a`, `b a`… are in no entry: cut there. Texts of `a b c x` and spaces.
        let mut x = 12345u32;
        let (mut a, mut b) = (Encoding::default(), Encoding::default());
        for len in 1..40 {
            for _ in 0..50 {
                let text: String = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        ['a', 'b', 'c', 'x', ' '][x as usize % 5]
                    })
                    .collect();
                cut.encode_into(&text, &mut a, false);
                whole.encode_into(&text, &mut b, false);
                assert_eq!((&a.ids, &a.offsets), (&b.ids, &b.offsets), "{text:?}");
            }
        }
    }

    /// A model in Gemma 3's manner: one entry, `>▁<`, holds a `▁` after another character, and
    /// merges chain across the spaces (`▁▁`, `a▁`-free). Cut before every `▁` but after `>`, or
    /// (`cuts: false`) never.
    fn crossing(cuts: bool) -> HfSpmBpe {
        let json = r#"{
            "normalizer": {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
            "pre_tokenizer": null, "decoder": null, "post_processor": null,
            "added_tokens": [],
            "model": {"type": "BPE", "byte_fallback": false, "fuse_unk": false,
                "unk_token": "<unk>",
                "vocab": {"<unk>": 0, "▁": 1, "a": 2, ">": 3, "<": 4, "▁▁": 5, "▁a": 6,
                    ">▁": 7, ">▁<": 8, "▁<": 9, "aa": 10, "▁aa": 11, "▁▁a": 12},
                "merges": [["▁", "▁"], [">", "▁"], ["▁", "a"], [">▁", "<"], ["▁", "<"],
                    ["a", "a"], ["▁", "aa"], ["▁▁", "a"]]}
        }"#;
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        let mut m = from_tokenizer_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap();
        let space_cuts = m.space_cuts.as_ref().expect("`▁` is an entry");
        assert!(!space_cuts.allows_after(b'>') && space_cuts.allows_after(b'a'));
        assert!(space_cuts.allows_after(b'<'));
        if !cuts {
            m.space_cuts = None;
        }
        m
    }

    #[test]
    fn words_start_at_spaces_but_where_an_entry_crosses_them() {
        let (cut, whole) = (crossing(true), crossing(false));
        let mut ids = Vec::new();
        cut.encode_ids_into("a > <", &mut ids);
        // `>▁<` is made across the second space (no cut after `>`); the first parts `a` from
        // the rest.
        assert_eq!(ids, vec![2, 1, 8]);
        let mut x = 987_654_321u32;
        let (mut a, mut b) = (Encoding::default(), Encoding::default());
        for len in 1..40 {
            for _ in 0..60 {
                let text: String = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 17;
                        x ^= x << 5;
                        ['a', '>', '<', ' ', ' ', 'x'][x as usize % 6]
                    })
                    .collect();
                cut.encode_into(&text, &mut a, false);
                whole.encode_into(&text, &mut b, false);
                assert_eq!((&a.ids, &a.offsets), (&b.ids, &b.offsets), "{text:?}");
            }
        }
    }

    #[test]
    fn no_safe_cuts_where_unknowns_fuse() {
        // Without byte fallback, unknown characters fuse: a cut could split a fused run.
        assert!(model(false).cuts.is_none());
    }
}
