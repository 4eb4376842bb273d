//! Character-level BPE from a Hugging Face `tokenizer.json`: what `BpeTrainer` makes with the
//! `Whitespace` (`\w+|[^\w\s]+`) or `WhitespaceSplit` pre-tokenizer, and no normalizer or
//! decoder (`simdtok train-bpe --pre-tokenizer whitespace` writes the same layout). Added tokens
//! are taken out of the raw text first; each pre-token is merged from its characters, as
//! `tokenizers`' BPE model does it:
//! - a character with a vocabulary entry is a starting symbol;
//! - one without is the unknown token when the model has one (characters in a row fuse into
//!   one with `fuse_unk`), else it is **dropped**: it gives no token, and the tokens after it in
//!   the pre-token are placed by the running sum of the kept symbols' lengths (so they land
//!   early, on the dropped character's bytes), each span then widened to whole characters — the
//!   reference's offsets, reproduced;
//! - with `ignore_merges`, a pre-token that is an entry is that token;
//! - merges apply lowest rank first, the leftmost of equal ranks ([`MergesBpe`]).
//!
//! Decoding joins the tokens' strings with spaces (the reference with no decoder), leaving out
//! special added tokens.

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::align::spans::words_regex;
use crate::cache::word::{self as word_cache, CachedPiece, PieceCache, cached_pieces};
use crate::models::merges_bpe::{MergeScratch, MergesBpe};
use crate::models::token::PieceToken;
use crate::pipeline::added_tokens::{AddedTokens, Split};
use crate::pipeline::cuts::{AddedGuard, WordPieceCuts};
use crate::pipeline::sink::{self, MapSpans, Sink, SpanMap};
use crate::pipeline::template::Template;
use crate::pipeline::{PartPlace, Pipeline, PipelineInfo};

/// How a text is cut into pre-tokens (the whitespace between them is dropped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CharPreTokenizer {
    /// `Whitespace`: runs of word characters and runs of other non-space characters
    /// (`\w+|[^\w\s]+`, the `regex` crate's classes, as the reference runs it).
    Whitespace,
    /// `WhitespaceSplit`: runs of characters that are not `char::is_whitespace`.
    WhitespaceSplit,
}

/// What a character-level BPE `tokenizer.json` holds, as [`crate::load::hf_char_bpe`] reads it.
#[derive(Debug)]
pub struct HfCharBpeParts {
    /// The model (its symbols are characters' UTF-8 bytes).
    pub bpe: MergesBpe,
    /// The pre-tokenizer.
    pub pre_tokenizer: CharPreTokenizer,
    /// The unknown token's id, and whether unknown characters in a row fuse into one.
    pub unk: Option<(u32, bool)>,
    /// A pre-token that is an entry is that token (the model's `ignore_merges`).
    pub ignore_merges: bool,
    /// Added tokens with `normalized: false`, matched in the raw text.
    pub added: AddedTokens,
    /// Added tokens with `normalized: true`, looked for in the text `added` leaves (there is no
    /// normalizer, so the reference's second pass sees the same text).
    pub added_normalized: AddedTokens,
    /// The post-processor's ids before a sequence.
    pub special_prefix: Vec<u32>,
    /// … and after it.
    pub special_suffix: Vec<u32>,
    /// The string of each id: vocabulary entries, added tokens' content over them.
    pub token_strings: Vec<Option<Box<str>>>,
}

/// A character-level BPE `tokenizer.json`.
#[derive(Debug)]
pub struct HfCharBpe {
    parts: HfCharBpeParts,
    /// The post-processor's tokens, when they are added.
    template: Template,
    /// The id of each ASCII character's entry (`NONE` without one): most characters are
    /// looked up here rather than in the vocabulary's table.
    ascii: [u32; 128],
    /// Where a text may be cut ([`crate::Tokenizer::last_part_cut`]): safe cuts too when the
    /// template adds no tokens.
    cuts: WordPieceCuts,
    cache_owner: usize,
    kernels: &'static Kernels,
}

const NONE: u32 = u32::MAX;

#[derive(Default)]
struct Scratch {
    splits: Vec<Split>,
    inner_splits: Vec<Split>,
    pieces: Vec<(usize, usize)>,
    merge: MergeScratch,
    cached: CachedPiece,
    cache: PieceCache,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Turns a token's byte span in a text segment into the reference's offsets: widened to whole
/// characters (a span that starts or ends inside a character — after a dropped one — covers
/// it, as the reference's alignments do) and moved to the segment's place in the input.
struct WholeChars<'a> {
    text: &'a str,
    base: usize,
}

impl SpanMap for WholeChars<'_> {
    #[inline]
    fn map(&mut self, start: usize, end: usize) -> (usize, usize) {
        let (s, e) = sink::widen_to_chars(self.text, start, end);
        (self.base + s, self.base + e)
    }
}

impl HfCharBpe {
    /// The tokenizer of `parts`; `add_special_tokens` applies the post-processor.
    pub fn new(parts: HfCharBpeParts, add_special_tokens: bool, kernels: &'static Kernels) -> Self {
        let ascii = std::array::from_fn(|b| parts.bpe.bytes_id(&[b as u8]).unwrap_or(NONE));
        // The pieces never hold whitespace and each is encoded alone, as in BERT's pipeline:
        // its cuts (after an ASCII space, tab or newline, before an ASCII graphic character,
        // no added token reaching across) are safe here by the same proof
        // ([`WordPieceCuts`]): both pre-tokenizers end a piece at every whitespace character,
        // there is no normalizer, and a token's offsets are its piece's plus offsets inside it.
        let template = Template::new(
            &parts.special_prefix,
            &parts.special_suffix,
            add_special_tokens,
        );
        let cuts = WordPieceCuts::new(AddedGuard::new(parts.added.tokens()));
        HfCharBpe {
            parts,
            template,
            ascii,
            cuts,
            cache_owner: word_cache::new_owner(),
            kernels,
        }
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
            scratch.cache.claim(self.cache_owner);
            scratch.merge.fit_budget();
            let mut splits = std::mem::take(&mut scratch.splits);
            let mut inner = std::mem::take(&mut scratch.inner_splits);
            self.parts.added.split(self.kernels, text, &mut splits);
            for &split in &splits {
                match split {
                    Split::Text(s, e) if self.parts.added_normalized.is_empty() => {
                        self.encode_text(&text[s..e], s, scratch, sink)
                    }
                    Split::Text(s, e) => {
                        self.parts
                            .added_normalized
                            .split(self.kernels, &text[s..e], &mut inner);
                        for &split in &inner {
                            match split {
                                Split::Text(a, b) => {
                                    self.encode_text(&text[s + a..s + b], s + a, scratch, sink)
                                }
                                Split::Token(id, a, b) => {
                                    self.push_added(text, id, s + a, s + b, sink)
                                }
                            }
                        }
                    }
                    Split::Token(id, s, e) => self.push_added(text, id, s, e, sink),
                }
            }
            scratch.splits = splits;
            scratch.inner_splits = inner;
        });
        self.template.close(place, sink);
    }

    /// Pushes added token `id`, which took `text[start..end]` (its content, and the whitespace
    /// `lstrip`/`rstrip` took, which the reference shows as the token's string).
    fn push_added<S: Sink>(&self, text: &str, id: u32, start: usize, end: usize, sink: &mut S) {
        sink.push(id, start, end);
        let taken = &text[start..end];
        if S::OFFSETS && Some(taken) != self.id_to_token(id) {
            sink.added_text(taken);
        }
    }

    /// Encodes `text`, which starts at `base` in the input: its pre-tokens, each alone (through
    /// the per-thread cache: a piece's tokens depend on its bytes only).
    fn encode_text<S: Sink>(&self, text: &str, base: usize, scratch: &mut Scratch, sink: &mut S) {
        let Scratch {
            pieces,
            merge,
            cached,
            cache,
            ..
        } = scratch;
        pieces.clear();
        match self.parts.pre_tokenizer {
            CharPreTokenizer::Whitespace => {
                pieces.extend(words_regex().find_iter(text).map(|m| (m.start(), m.end())))
            }
            CharPreTokenizer::WhitespaceSplit => whitespace_split(text, pieces),
        }
        let mut chars = MapSpans {
            sink,
            map: WholeChars { text, base },
        };
        cached_pieces(
            cache,
            text.as_bytes(),
            pieces,
            cached,
            &mut chars,
            |(s, e), out| self.encode_piece(&text[s..e], merge, out),
        );
    }

    /// Appends the tokens of one pre-token to `out`.
    fn encode_piece(&self, piece: &str, merge: &mut MergeScratch, out: &mut Vec<PieceToken>) {
        if self.parts.ignore_merges
            && let Some(id) = self.parts.bpe.bytes_id(piece.as_bytes())
        {
            out.push(PieceToken {
                id,
                len: piece.len() as u32,
            });
            return;
        }
        merge.ids.clear();
        merge.lens.clear();
        // Unknown characters not yet pushed: their length in bytes.
        let mut unknown: Option<u32> = None;
        for c in piece.chars() {
            let len = c.len_utf8() as u32;
            let entry = if c.is_ascii() {
                Some(self.ascii[c as usize]).filter(|&id| id != NONE)
            } else {
                let mut buf = [0u8; 4];
                self.parts.bpe.bytes_id(c.encode_utf8(&mut buf).as_bytes())
            };
            match (entry, self.parts.unk) {
                (Some(id), _) => {
                    if let Some(n) = unknown.take() {
                        self.push_unknown(merge, n);
                    }
                    merge.ids.push(id);
                    merge.lens.push(len);
                }
                (None, Some((_, fuse))) => {
                    unknown = Some(match unknown {
                        Some(n) if fuse => n + len,
                        Some(n) => {
                            self.push_unknown(merge, n);
                            len
                        }
                        None => len,
                    });
                }
                // No unknown token: the reference drops the character.
                (None, None) => {}
            }
        }
        if let Some(n) = unknown {
            self.push_unknown(merge, n);
        }
        if !merge.ids.is_empty() {
            self.parts.bpe.merge_symbols(merge, out);
        }
    }

    /// Pushes the unknown token, covering `len` bytes, as a starting symbol (the reference
    /// merges it like any other, should a merge name it).
    fn push_unknown(&self, merge: &mut MergeScratch, len: u32) {
        if let Some((id, _)) = self.parts.unk {
            merge.ids.push(id);
            merge.lens.push(len);
        }
    }

    /// The string of `id`: an added token's content, else the vocabulary entry.
    pub fn id_to_token(&self, id: u32) -> Option<&str> {
        self.parts.token_strings.get(id as usize)?.as_deref()
    }

    /// One past the largest id.
    pub fn vocab_size(&self) -> usize {
        self.parts.token_strings.len()
    }

    /// The text of `ids` as the reference decodes it with no decoder
    /// (`skip_special_tokens=True`): the tokens' strings joined by single spaces, leaving out
    /// every token whose string is a special added token's content.
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut out = String::new();
        let mut first = true;
        for &id in ids {
            if id as usize >= self.vocab_size() {
                return Err(id);
            }
            let Some(token) = self.id_to_token(id) else {
                continue;
            };
            let special = self.parts.added.tokens().iter();
            if special.filter(|t| t.special).any(|t| t.content == token) {
                continue;
            }
            if !first {
                out.push(' ');
            }
            out.push_str(token);
            first = false;
        }
        Ok(out)
    }
}

/// The runs of `text` between `char::is_whitespace` characters, as `[start, end)` into
/// `pieces`.
fn whitespace_split(text: &str, pieces: &mut Vec<(usize, usize)>) {
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (c.is_whitespace(), start) {
            (true, Some(s)) => {
                pieces.push((s, i));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(s) = start {
        pieces.push((s, text.len()));
    }
}

impl PipelineInfo for HfCharBpe {
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

impl Pipeline for HfCharBpe {
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

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::encoding::Encoding;
    use crate::load::hf_char_bpe::from_tokenizer_json;
    use crate::load::tokenizer_json::TokenizerJson;
    use crate::options::LoadOptions;

    /// A `Whitespace` model over `a b c` (every expectation below is what `tokenizers` 0.23.2
    /// gives for the same file), with `edit` applied to the file.
    fn model_with(add_special_tokens: bool, edit: impl FnOnce(&mut Value)) -> HfCharBpe {
        let mut root = json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": null, "decoder": null,
            "model": {"type": "BPE", "dropout": null, "unk_token": null,
                "continuing_subword_prefix": null, "end_of_word_suffix": null,
                "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                "vocab": {"[UNK]": 0, "a": 1, "b": 2, "c": 3, "ab": 4, "bc": 5, "abc": 6,
                    "aa": 7},
                "merges": [["a", "b"]]}
        });
        edit(&mut root);
        let json = TokenizerJson::parse(root.to_string().as_bytes()).unwrap();
        let options = LoadOptions {
            add_special_tokens,
            ..LoadOptions::default()
        };
        from_tokenizer_json(&json, &options, Kernels::scalar()).unwrap()
    }

    fn model(edit: impl FnOnce(&mut Value)) -> HfCharBpe {
        model_with(false, edit)
    }

    /// Ids and byte offsets of `text`, both entry points (which must agree on the ids).
    fn encode(m: &HfCharBpe, text: &str) -> (Vec<u32>, Vec<(u32, u32)>) {
        let mut ids = Vec::new();
        Pipeline::encode_ids_into(m, text, &mut ids);
        let mut enc = Encoding::default();
        Pipeline::encode_into(m, text, &mut enc, true);
        assert_eq!(ids, enc.ids, "{text:?}");
        (enc.ids, enc.offsets)
    }

    #[test]
    fn characters_outside_the_vocabulary_are_dropped_without_an_unknown_token() {
        let m = model(|_| {});
        assert_eq!(encode(&m, "€"), (vec![], vec![]));
        // The tokens after a dropped character are placed by the running sum of lengths, then
        // widened to whole characters; the characters around it merge as if adjacent.
        assert_eq!(encode(&m, "aéb"), (vec![4], vec![(0, 3)]));
        // `€` is no word character: its own pre-token, which vanishes.
        assert_eq!(encode(&m, "a€€b"), (vec![1, 2], vec![(0, 1), (7, 8)]));
        assert_eq!(encode(&m, "abc"), (vec![4, 3], vec![(0, 2), (2, 3)]));
    }

    #[test]
    fn unknown_characters_are_the_unknown_token_fused_or_not() {
        let merges = json!([["a", "b"], ["b", "c"]]);
        let m = model(|r| {
            r["model"]["unk_token"] = json!("[UNK]");
            r["model"]["merges"] = merges.clone();
        });
        let want = (vec![1, 0, 0, 2], vec![(0, 1), (1, 2), (2, 3), (3, 4)]);
        assert_eq!(encode(&m, "axxb"), want);
        let want = (vec![1, 0, 0, 2], vec![(0, 1), (1, 2), (2, 5), (5, 6)]);
        assert_eq!(encode(&m, "ax€b"), want);
        let m = model(|r| {
            r["model"]["unk_token"] = json!("[UNK]");
            r["model"]["fuse_unk"] = json!(true);
            r["model"]["merges"] = merges;
        });
        let want = (vec![1, 0, 2], vec![(0, 1), (1, 3), (3, 4)]);
        assert_eq!(encode(&m, "axxb"), want);
        assert_eq!(encode(&m, "xéy"), (vec![0], vec![(0, 4)]));
        // Fusing stops at pre-tokens: `x` and `€` are two.
        let want = (vec![1, 0, 0, 2], vec![(0, 1), (1, 2), (2, 5), (5, 6)]);
        assert_eq!(encode(&m, "ax€b"), want);
    }

    #[test]
    fn the_unknown_token_merges_like_any_symbol() {
        let m = model(|r| {
            r["model"]["unk_token"] = json!("[UNK]");
            r["model"]["vocab"]["a[UNK]"] = json!(8);
            r["model"]["merges"] = json!([["a", "[UNK]"]]);
        });
        assert_eq!(encode(&m, "axb"), (vec![8, 2], vec![(0, 2), (2, 3)]));
        assert_eq!(encode(&m, "xa"), (vec![0, 1], vec![(0, 1), (1, 2)]));
    }

    #[test]
    fn ignore_merges_takes_a_pre_token_that_is_an_entry() {
        assert_eq!(encode(&model(|_| {}), "abc").0, vec![4, 3]);
        let m = model(|r| r["model"]["ignore_merges"] = json!(true));
        assert_eq!(encode(&m, "abc"), (vec![6], vec![(0, 3)]));
        assert_eq!(encode(&m, "abcabc").0, vec![4, 3, 4, 3]);
    }

    #[test]
    fn a_pair_listed_twice_merges_at_its_last_rank() {
        let m = model(|r| r["model"]["merges"] = json!([["a", "b"], ["b", "c"], ["a", "b"]]));
        assert_eq!(encode(&m, "abc").0, vec![1, 5]);
        let m = model(|r| r["model"]["merges"] = json!([["b", "c"], ["a", "b"], ["b", "c"]]));
        assert_eq!(encode(&m, "abc").0, vec![4, 3]);
    }

    #[test]
    fn whitespace_split_cuts_at_unicode_whitespace_only() {
        let m = model(|r| r["pre_tokenizer"] = json!({"type": "WhitespaceSplit"}));
        // U+3000 and U+0085 are whitespace, U+200B is not; `,` is dropped inside `ab,c`.
        let (ids, offsets) = encode(&m, "ab,c  a\u{3000}b\u{85}c\u{200b}b");
        assert_eq!(ids, vec![4, 3, 1, 2, 3, 2]);
        let want = [(0, 2), (2, 3), (6, 7), (10, 11), (13, 14), (14, 17)];
        assert_eq!(offsets, want);
    }

    #[test]
    fn added_tokens_in_two_passes_and_decoding() {
        let token = |id: u32, content: &str, special: bool| {
            json!({"id": id, "content": content, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": !special, "special": special})
        };
        let m = model(|r| {
            r["model"]["unk_token"] = json!("[UNK]");
            r["added_tokens"] = json!([token(0, "[UNK]", true), token(7, "aa", false)]);
        });
        let want = (vec![0, 0, 4], vec![(0, 1), (1, 6), (6, 8)]);
        assert_eq!(encode(&m, "x[UNK]ab"), want);
        assert_eq!(encode(&m, "baab").0, vec![2, 7, 2]);
        // Special tokens are left out, the rest joined by spaces.
        assert_eq!(m.decode(&[0, 1, 7, 4]).unwrap(), "a aa ab");
        assert_eq!(m.decode(&[8]), Err(8));
        // Not an added token: the unknown token is shown.
        let plain = model(|r| r["model"]["unk_token"] = json!("[UNK]"));
        assert_eq!(plain.decode(&[0, 0, 1]).unwrap(), "[UNK] [UNK] a");
    }

    #[test]
    fn a_template_adds_its_ids_with_empty_offsets() {
        let template = json!({"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "aa", "type_id": 0}},
                {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
            "special_tokens": {"aa": {"id": "aa", "ids": [7], "tokens": ["aa"]}}});
        let m = model_with(true, |r| r["post_processor"] = template.clone());
        assert_eq!(
            encode(&m, "ab c"),
            (vec![7, 4, 3], vec![(0, 0), (0, 2), (3, 4)])
        );
        assert!(m.last_safe_cut(b"ab cd").is_none());
        let m = model_with(false, |r| r["post_processor"] = template);
        assert_eq!(encode(&m, "ab c").0, vec![4, 3]);
    }

    #[test]
    fn safe_cuts_change_no_token() {
        let token = |id: u32, content: &str| {
            json!({"id": id, "content": content, "single_word": false, "lstrip": true,
                "rstrip": false, "normalized": false, "special": true})
        };
        for pre in ["Whitespace", "WhitespaceSplit"] {
            let mut cuts = 0;
            let m = model(|r| {
                r["pre_tokenizer"] = json!({"type": pre});
                r["model"]["unk_token"] = json!("[UNK]");
                r["model"]["fuse_unk"] = json!(true);
                r["model"]["merges"] = json!([["a", "b"], ["b", "c"], ["ab", "c"]]);
                r["added_tokens"] = json!([token(7, "aa")]);
            });
            let mut x = 0x2545_F491u32;
            let alphabet = ['a', 'b', 'c', 'x', ' ', '\n', '.', 'é', '\u{3000}'];
            for len in 1..40 {
                for _ in 0..40 {
                    let text: String = (0..len)
                        .map(|_| {
                            x ^= x << 13;
                            x ^= x >> 17;
                            x ^= x << 5;
                            alphabet[x as usize % alphabet.len()]
                        })
                        .collect();
                    let Some(p) = m.last_safe_cut(text.as_bytes()) else {
                        continue;
                    };
                    cuts += 1;
                    let (mut ids, mut offsets) = encode(&m, &text[..p]);
                    let (tail_ids, tail_offsets) = encode(&m, &text[p..]);
                    ids.extend(tail_ids);
                    let p = p as u32;
                    offsets.extend(tail_offsets.iter().map(|&(s, e)| (s + p, e + p)));
                    assert_eq!((ids, offsets), encode(&m, &text), "{pre} {text:?} at {p}");
                }
            }
            assert!(cuts > 300, "{pre}: only {cuts} cuts");
        }
    }
}
