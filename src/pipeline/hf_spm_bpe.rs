//! SentencePiece-style BPE from a Hugging Face `tokenizer.json` (Llama 2, Mistral 7B, …): the
//! normalizer puts `▁` in front and for every space (`Prepend`, `Replace`), there is no
//! pre-tokenizer, BPE starts from characters with byte fallback (`<0xXX>`) for those outside the
//! vocabulary, and the decoder undoes it (`Replace`, `ByteFallback`, `Fuse`, `Strip`) — as
//! `tokenizers` runs such a file, with its offsets.

use std::cell::RefCell;
use std::collections::HashMap;

use serde_json::Value;
use simdtok_kernels::Kernels;

use crate::cache::segment as segment_cache;
use crate::cache::word::{self as word_cache, Key, WordCache};
use crate::load::tokenizer_json::{TokenizerJson, sequence_items};
use crate::models::merges_bpe::{MergeScratch, MergesBpe};
use crate::models::safe_cuts::{CutBuffers, SafeCuts};
use crate::models::token::PieceToken;
use crate::models::token::WordToken;
use crate::normalize::hf::{self, Normalizer, Pattern, Step};
use crate::options::LoadOptions;
use crate::pipeline::Pipeline;
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::sink::Sink;

/// The `Metaspace` pre-tokenizer (`replacement` `▁`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Metaspace {
    /// `prepend_scheme`: `Some(true)` always, `Some(false)` first, `None` never.
    prepend: Option<bool>,
    /// Each `▁` starts a new pre-token (`split`).
    split: bool,
}

/// One step of the decoder.
#[derive(Clone, Debug, PartialEq, Eq)]
enum DecodeStep {
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

/// A SentencePiece-style BPE `tokenizer.json`.
#[derive(Debug)]
pub struct HfSpmBpe {
    bpe: MergesBpe,
    normalizer: Normalizer,
    byte_fallback: Option<[u32; 256]>,
    unk: Option<(u32, bool)>,
    added: AddedTokens,
    special_prefix: Vec<u32>,
    special_suffix: Vec<u32>,
    add_special_tokens: bool,
    decoder: Vec<DecodeStep>,
    token_strings: Vec<Option<Box<str>>>,
    /// Whether the text may be cut into words before each `▁` that follows another character
    /// (see [`HfSpmBpe::encode_text`]).
    cut_at_spaces: bool,
    /// Each `▁` (but at the start) begins a new pre-token: the `Metaspace` pre-tokenizer's
    /// `split`.
    split_at_spaces: bool,
    /// Where long words can be cut ([`SafeCuts`]); `None` when cuts could change the tokens
    /// (see [`HfSpmBpe::from_json`]).
    cuts: Option<SafeCuts>,
    /// The pairs of ASCII characters next to each other in some entry, when cuts are allowed
    /// (`cuts`): between two ASCII characters of no such pair, no entry — so no merge — can
    /// span, and the text is cut there too (code: one pair in six).
    ascii_pairs: Option<AsciiPairs>,
    /// A whole text that is an entry is that entry (the model's `ignore_merges`).
    ignore_merges: bool,
    cache_owner: usize,
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
}

/// The normalized text with each of its bytes' input span, and the normalizer's buffers.
#[derive(Default)]
struct NormalizeBuffers {
    aligned: hf::Aligned,
    scratch: hf::Scratch,
}

const SPACE: char = '\u{2581}';
const SPACE_UTF8: &str = "\u{2581}";
/// Words longer than this with two non-ASCII characters in a row are cut at their safe cuts
/// before merging.
const CUT_ABOVE: usize = 16;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Whether the file looks like a SentencePiece-style BPE (it has `▁` in its normalizer or
/// pre-tokenizer, or byte fallback).
pub fn is_spm_style(json: &TokenizerJson) -> bool {
    let has = |name: &str, needle: &str| {
        json.component(name)
            .is_some_and(|v| v.to_string().contains(needle))
    };
    has("normalizer", "\u{2581}")
        || has("pre_tokenizer", "Metaspace")
        || has("model", "\"byte_fallback\":true")
}

fn str_of<'a>(v: &'a Value, name: &str, what: &str) -> Result<&'a str, String> {
    v.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what}.{name} is missing or not a string"))
}

/// A `Replace` step's pattern: only a literal string is supported.
fn replace_pattern(v: &Value, what: &str) -> Result<(String, String), String> {
    let pattern = v
        .get("pattern")
        .and_then(|p| p.get("String"))
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} Replace: only a String pattern is supported"))?;
    Ok((pattern.to_string(), str_of(v, "content", what)?.to_string()))
}

/// A `Metaspace` pre-tokenizer or decoder (any other pre-tokenizer is an error): its
/// `prepend_scheme` (or, in older files, `add_prefix_space`) and `split` (default `true`).
fn metaspace_of(v: &Value) -> Result<Metaspace, String> {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("?");
    if kind != "Metaspace" {
        return Err(format!(
            "pre_tokenizer of type {kind} is not supported for a SentencePiece-style BPE (supported: none, Metaspace)"
        ));
    }
    if v.get("replacement").and_then(Value::as_str) != Some(SPACE_UTF8) {
        return Err("Metaspace: only the replacement \"\u{2581}\" is supported".into());
    }
    let prepend = match v.get("prepend_scheme").and_then(Value::as_str) {
        Some("always") => Some(true),
        Some("first") => Some(false),
        Some("never") => None,
        Some(other) => return Err(format!("Metaspace: unknown prepend_scheme {other:?}")),
        None => match v.get("add_prefix_space").and_then(Value::as_bool) {
            Some(false) => None,
            _ => Some(true),
        },
    };
    Ok(Metaspace {
        prepend,
        split: v.get("split").and_then(Value::as_bool).unwrap_or(true),
    })
}

fn decoder_steps(json: &TokenizerJson) -> Result<Vec<DecodeStep>, String> {
    let Some(d) = json.component("decoder") else {
        return Ok(Vec::new());
    };
    let list = sequence_items(d, "decoder", "decoders")?;
    list.into_iter()
        .map(|step| match step.get("type").and_then(Value::as_str) {
            Some("Replace") => {
                let (a, b) = replace_pattern(step, "decoder")?;
                Ok(DecodeStep::Replace(a, b))
            }
            Some("ByteFallback") => Ok(DecodeStep::ByteFallback),
            Some("Metaspace") => Ok(DecodeStep::Metaspace {
                prepend: metaspace_of(step)?.prepend.is_some(),
            }),
            Some("Fuse") => Ok(DecodeStep::Fuse),
            Some("Strip") => {
                let content = str_of(step, "content", "decoder Strip")?;
                let mut chars = content.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    return Err("decoder Strip: content must be one character".into());
                };
                let num = |name: &str| {
                    step.get(name)
                        .and_then(Value::as_u64)
                        .map(|n| n as usize)
                        .ok_or_else(|| format!("decoder Strip: {name} is not a number"))
                };
                Ok(DecodeStep::Strip {
                    content: c,
                    start: num("start")?,
                    stop: num("stop")?,
                })
            }
            Some(other) => Err(format!(
                "decoder of type {other} is not supported for this model (supported: Replace, ByteFallback, Fuse, Strip, Metaspace)"
            )),
            None => Err("decoder has no type".into()),
        })
        .collect()
}

impl HfSpmBpe {
    /// The tokenizer of a SentencePiece-style BPE `tokenizer.json`.
    pub fn from_json(
        json: &TokenizerJson,
        options: &LoadOptions,
        kernels: &'static Kernels,
    ) -> Result<HfSpmBpe, String> {
        let metaspace = json
            .component("pre_tokenizer")
            .map(metaspace_of)
            .transpose()?;
        let mut normalizer = json.bpe_normalizer()?;
        if let Some(m) = metaspace {
            // The pre-tokenizer's space replacement and prepended `▁` act like normalizer
            // steps that run last, with the same alignments.
            normalizer.push(Step::Replace(
                Pattern::Literal(" ".into()),
                SPACE_UTF8.into(),
            ));
            if let Some(always) = m.prepend {
                normalizer.push(Step::MetaspacePrepend { always });
            }
        }
        let split_at_spaces = metaspace.is_some_and(|m| m.split);
        let decoder = decoder_steps(json)?;
        let template = json.single_template()?;
        let model = json
            .component("model")
            .ok_or("tokenizer.json has no model")?;
        let flag = |name: &str| model.get(name).and_then(Value::as_bool).unwrap_or(false);
        if model.get("dropout").is_some_and(|d| !d.is_null()) {
            return Err("model.dropout is not supported".into());
        }
        for name in ["continuing_subword_prefix", "end_of_word_suffix"] {
            if model
                .get(name)
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
            {
                return Err(format!("model.{name} is not supported yet"));
            }
        }
        let m = json.bpe_vocab_and_merges()?;
        if split_at_spaces && m.ignore_merges {
            return Err(
                "ignore_merges with a Metaspace pre-tokenizer that splits is not supported yet"
                    .into(),
            );
        }
        let added = json.added_tokens()?;
        if let Some(t) = added.iter().find(|t| t.normalized) {
            return Err(format!(
                "added token {:?} has normalized: true, which is not supported yet",
                t.content
            ));
        }
        if options.add_special_tokens && template.prefix.is_empty() && template.suffix.is_empty() {
            return Err("adding special tokens: the file's post_processor adds none".into());
        }
        let ids: HashMap<&str, u32> = m.vocab.iter().map(|(t, id)| (t.as_str(), *id)).collect();
        let byte_fallback = if flag("byte_fallback") {
            let mut table = [0u32; 256];
            for (b, slot) in table.iter_mut().enumerate() {
                *slot = *ids
                    .get(format!("<0x{b:02X}>").as_str())
                    .ok_or_else(|| format!("byte_fallback needs <0x{b:02X}> in the vocabulary"))?;
            }
            Some(table)
        } else {
            None
        };
        let unk = match model.get("unk_token").and_then(Value::as_str) {
            Some(u) => Some((
                *ids.get(u)
                    .ok_or_else(|| format!("the unknown token {u:?} is not in the vocabulary"))?,
                flag("fuse_unk"),
            )),
            None => None,
        };
        let size = added
            .iter()
            .map(|t| t.id as usize + 1)
            .chain(m.vocab.iter().map(|(_, id)| *id as usize + 1))
            .max()
            .unwrap_or(0);
        let mut token_strings: Vec<Option<Box<str>>> = vec![None; size];
        for (t, id) in &m.vocab {
            token_strings[*id as usize] = Some(t.clone().into_boxed_str());
        }
        for t in &added {
            token_strings[t.id as usize] = Some(t.content.clone().into_boxed_str());
        }
        // No merge can cross the start of a `▁` that follows another character when no entry
        // has one there (a merge's result is always an entry), and when `▁` itself is an entry
        // (so that unknowns never fuse across the cut).
        let cut_at_spaces = ids.contains_key("\u{2581}")
            && !m.vocab.iter().any(|(t, _)| {
                let mut prev: Option<char> = None;
                t.chars().any(|c| {
                    let crosses = c == SPACE && prev.is_some_and(|p| p != SPACE);
                    prev = Some(c);
                    crosses
                })
            });
        // Safe cuts ([`SafeCuts`]) assume every symbol that merges is a substring of the text and
        // every character yields a symbol: so byte-fallback and unknown tokens must be in no
        // merge, unknowns must not fuse (a cut would split a fused run), and no character may be
        // dropped (the reference places tokens by a running sum of lengths across the drop).
        let unk_string = model.get("unk_token").and_then(Value::as_str);
        let inert = |t: &str| {
            Some(t) == unk_string
                || (byte_fallback.is_some()
                    && t.len() == 6
                    && t.starts_with("<0x")
                    && t.ends_with('>'))
        };
        let no_char_dropped_or_fused =
            byte_fallback.is_some() || unk.is_some_and(|(_, fuse)| !fuse);
        let cuts = (no_char_dropped_or_fused
            && !m.merges.iter().any(|(a, b)| inert(a) || inert(b)))
        .then(|| SafeCuts::new(m.vocab.iter().map(|(t, id)| (*id, t.as_bytes()))));
        let ascii_pairs = cuts
            .is_some()
            .then(|| AsciiPairs::of(m.vocab.iter().map(|(t, _)| t.as_str())));
        let vocab = m
            .vocab
            .into_iter()
            .map(|(t, id)| (t.into_bytes(), id))
            .collect();
        let merges = m
            .merges
            .into_iter()
            .map(|(a, b)| (a.into_bytes(), b.into_bytes()))
            .collect();
        Ok(HfSpmBpe {
            bpe: MergesBpe::new(vocab, merges, flag("ignore_merges"), kernels)?,
            normalizer,
            byte_fallback,
            unk,
            added: AddedTokens::new(added)?,
            special_prefix: template.prefix,
            special_suffix: template.suffix,
            add_special_tokens: options.add_special_tokens,
            decoder,
            token_strings,
            cut_at_spaces,
            split_at_spaces,
            cuts,
            ascii_pairs,
            ignore_merges: flag("ignore_merges"),
            cache_owner: word_cache::new_owner(),
            segment_model: segment_cache::new_model_id(),
            kernels,
        })
    }

    /// The kernels in use.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    fn encode<S: Sink>(&self, text: &str, sink: &mut S) {
        if self.add_special_tokens {
            for &id in &self.special_prefix {
                sink.push(id, 0, 0);
            }
        }
        SCRATCH.with(|scratch| {
            let scratch = &mut *scratch.borrow_mut();
            scratch.cache.claim(self.cache_owner);
            let mut splits = std::mem::take(&mut scratch.splits);
            self.added.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) => self.encode_text(&text[s..e], s, scratch, sink),
                    Split::Token(id, s, e) => sink.push(id, s, e),
                }
            }
            scratch.splits = splits;
        });
        if self.add_special_tokens {
            for &id in &self.special_suffix {
                sink.push(id, 0, 0);
            }
        }
    }

    /// Normalizes `text` (at `base` in the input) into `buffers.aligned`, with each byte's
    /// input span when `with_spans` (else no spans).
    fn normalize(&self, text: &str, base: usize, buffers: &mut NormalizeBuffers, with_spans: bool) {
        let NormalizeBuffers { aligned, scratch } = buffers;
        if !self
            .normalizer
            .apply(text, base as u32, with_spans, aligned, scratch)
        {
            aligned.text.clear();
            aligned.text.push_str(text);
            aligned.spans.clear();
            if with_spans {
                aligned.spans.extend(hf::char_spans(text, base as u32));
            }
        }
    }

    /// Normalizes `text` (at `base` in the input) and encodes it. When allowed, the normalized
    /// text is cut into words before every `▁` that follows another character, and each word
    /// is encoded on its own (short ones through the per-thread cache): the same tokens, since
    /// no merge can cross such a cut. With a `Metaspace` pre-tokenizer that splits, every `▁`
    /// but a leading one starts a pre-token: the reference's own cut.
    fn encode_text<S: Sink>(&self, text: &str, base: usize, scratch: &mut Scratch, sink: &mut S) {
        let mut buffers = std::mem::take(&mut scratch.normalized);
        self.normalize(text, base, &mut buffers, S::OFFSETS);
        let (normalized, spans) = (&buffers.aligned.text, &buffers.aligned.spans);
        let bytes = normalized.as_bytes();
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
            scratch.normalized = buffers;
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
                let mut after_space = 0; // the end of the last `▁` seen
                let mut i = 0;
                while i < bytes.len() {
                    let b = bytes[i];
                    if b < 0x80 {
                        if i > 0 && bytes[i - 1] < 0x80 && !pairs.holds(bytes[i - 1], b) {
                            cut(i, &mut start, scratch, sink);
                        }
                        i += 1;
                    } else if (self.cut_at_spaces || self.split_at_spaces)
                        && bytes[i..].starts_with(space)
                    {
                        if i > after_space || (self.split_at_spaces && i > 0) {
                            cut(i, &mut start, scratch, sink);
                        }
                        i += space.len();
                        after_space = i;
                    } else {
                        i += 1;
                    }
                }
            }
            None if self.cut_at_spaces || self.split_at_spaces => {
                // Each `▁` (its first byte found with memchr, then the other two compared)
                // that follows a character other than `▁` starts a word (with `split`, each
                // `▁` but a leading one).
                let space = SPACE_UTF8.as_bytes();
                let mut after_space = 0; // the end of the last `▁` seen
                for i in memchr::memchr_iter(space[0], bytes) {
                    if bytes[i..].starts_with(space) {
                        if i > after_space || (self.split_at_spaces && i > 0) {
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
        scratch.normalized = buffers;
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
        match &self.cuts {
            Some(cuts)
                if word.len() > CUT_ABOVE
                    && SafeCuts::has_candidate(word)
                    && !only_spaces_beyond_ascii(word) =>
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
                _ => self.bpe.bytes_id(s),
            };
            last = Some((c, entry));
            if let Some(id) = entry {
                if let Some((uid, ulen)) = unk.take() {
                    merge.ids.push(uid);
                    merge.lens.push(ulen);
                }
                merge.ids.push(id);
                merge.lens.push(s.len() as u32);
            } else if let Some(bytes) = &self.byte_fallback {
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
        for step in &self.decoder {
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
        Ok(tokens.concat())
    }
}

/// A set of pairs of ASCII bytes.
#[derive(Debug)]
struct AsciiPairs(Box<[u64; 256]>);

impl AsciiPairs {
    /// The pairs of ASCII characters that are next to each other in some entry.
    fn of<'a>(entries: impl Iterator<Item = &'a str>) -> AsciiPairs {
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

impl Pipeline for HfSpmBpe {
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S) {
        self.encode(text, sink);
    }

    fn token_string(&self, id: u32) -> String {
        self.id_to_token(id).unwrap_or_default().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::Encoding;

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
        HfSpmBpe::from_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap()
    }

    /// A Metaspace file (no normalizer) with `pre_tokenizer` and `ignore_merges`: its load error.
    fn metaspace_error(pre_tokenizer: &str, ignore_merges: bool) -> String {
        let json = format!(
            r#"{{
                "normalizer": null, "pre_tokenizer": {pre_tokenizer}, "decoder": null,
                "post_processor": null, "added_tokens": [],
                "model": {{"type": "BPE", "byte_fallback": false, "unk_token": "<unk>",
                    "ignore_merges": {ignore_merges},
                    "vocab": {{"<unk>": 0, "▁": 1, "a": 2}}, "merges": []}}
            }}"#
        );
        let json = TokenizerJson::parse(json.as_bytes()).unwrap();
        HfSpmBpe::from_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap_err()
    }

    #[test]
    fn metaspace_settings_it_cannot_follow_are_refused() {
        let e = metaspace_error(r#"{"type": "Whitespace"}"#, false);
        assert!(e.contains("Whitespace"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "_", "prepend_scheme": "first"}"#,
            false,
        );
        assert!(e.contains("replacement"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"}"#,
            false,
        );
        assert!(e.contains("sometimes"), "{e}");
        let e = metaspace_error(
            r#"{"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": true}"#,
            true,
        );
        assert!(e.contains("ignore_merges"), "{e}");
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
        let mut m = HfSpmBpe::from_json(&json, &LoadOptions::default(), Kernels::scalar()).unwrap();
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

    #[test]
    fn no_safe_cuts_where_unknowns_fuse() {
        // Without byte fallback, unknown characters fuse: a cut could split a fused run.
        assert!(model(false).cuts.is_none());
    }
}
