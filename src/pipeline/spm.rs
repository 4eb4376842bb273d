//! The SentencePiece pipeline: normalize, segment (unigram or BPE), then turn segments into
//! tokens the way `SentencePieceProcessor::PopulateSentencePieceText` does — unknown pieces
//! either decomposed into byte pieces (byte fallback) or merged with the unknown pieces next to
//! them — with byte offsets into the original text. And decoding, as
//! `SentencePieceProcessor::Decode` does it.

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::encoding::Encoding;
use crate::load::spm_proto::{PieceKind, SpmAlgorithm, SpmModelFile, byte_of_piece};
use crate::models::spm_bpe::{BpeScratch, SpmBpe};
use crate::models::unigram::{IdSink, RunningScore, Segment, Unigram, UnigramScratch, UnknownAt};
use crate::models::vocab::Vocab;
use crate::normalize::spm::{NoOffsets, SPACE_SYMBOL, SpmNormalizer, valid_char_len};
use crate::pipeline::template::Template;
use crate::pipeline::{AnyPipeline, CarrySource, PartCarry, PartPlace, PipelineInfo};

#[derive(Debug)]
enum Segmenter {
    Unigram(Box<Unigram>),
    Bpe(Box<SpmBpe>),
}

/// A SentencePiece tokenizer: the normalizer, the model and the vocabulary of one `.model`.
#[derive(Debug)]
pub struct SentencePiece {
    vocab: Vocab,
    normalizer: SpmNormalizer,
    denormalizer: Option<SpmNormalizer>,
    segmenter: Segmenter,
    byte_fallback: bool,
    add_dummy_prefix: bool,
    remove_extra_whitespaces: bool,
    unk_surface: String,
    /// What `add_special_tokens` puts around a text ([`SentencePiece::with_special_tokens`]).
    template: Template,
    kernels: &'static Kernels,
}

/// Per-thread buffers, so that encoding allocates nothing per call once warm.
#[derive(Default)]
struct Scratch {
    normalized: Vec<u8>,
    norm_to_orig: Vec<u32>,
    segments: Vec<Segment>,
    /// The unknown pieces of the ids path ([`IdSink`]).
    unknowns: Vec<UnknownAt>,
    unigram: UnigramScratch,
    bpe: BpeScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl SentencePiece {
    /// Builds the tokenizer of a parsed model file with the given kernels.
    pub fn new(model: SpmModelFile, kernels: &'static Kernels) -> Result<SentencePiece, String> {
        let vocab = Vocab::new(model.pieces, model.unk_id, kernels);
        let user_symbols: Vec<&str> = vocab
            .pieces()
            .iter()
            .filter(|p| p.kind == PieceKind::UserDefined)
            .map(|p| p.text.as_str())
            .collect();
        let normalizer = SpmNormalizer::new(
            &model.normalizer,
            model.treat_whitespace_as_suffix,
            &user_symbols,
            kernels,
        )?;
        let denormalizer = model
            .denormalizer
            .as_ref()
            .map(|d| SpmNormalizer::new(d, false, &[], kernels))
            .transpose()?;
        let segmenter = match model.algorithm {
            SpmAlgorithm::Bpe => {
                Segmenter::Bpe(Box::new(SpmBpe::new(&vocab, &user_symbols, kernels)?))
            }
            SpmAlgorithm::Unigram => Segmenter::Unigram(Box::new(Unigram::new(&vocab, kernels)?)),
        };
        Ok(SentencePiece {
            vocab,
            normalizer,
            denormalizer,
            segmenter,
            byte_fallback: model.byte_fallback,
            add_dummy_prefix: model.normalizer.add_dummy_prefix,
            remove_extra_whitespaces: model.normalizer.remove_extra_whitespaces,
            unk_surface: model.unk_surface,
            template: Template::default(),
            kernels,
        })
    }

    /// The tokenizer with `prefix` before every text and `suffix` after it (the control pieces
    /// a wrapper such as `LlamaTokenizer` adds: `crate::load::spm_specials`), their offsets
    /// `(0, 0)`.
    pub fn with_special_tokens(mut self, prefix: &[u32], suffix: &[u32]) -> SentencePiece {
        self.template = Template::new(prefix, suffix, true);
        self
    }

    /// The vocabulary.
    pub fn vocab(&self) -> &Vocab {
        &self.vocab
    }

    /// The kernels this tokenizer was built with.
    pub fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    /// Bytes of memory the model's tries take (pieces and character map).
    pub fn trie_bytes(&self) -> usize {
        match &self.segmenter {
            Segmenter::Unigram(u) => u.trie_bytes(),
            Segmenter::Bpe(_) => 0,
        }
    }

    /// Encodes `text` into `out` (cleared first). Pieces are filled only when `pieces` is set.
    pub fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        self.encode_part_into(
            text,
            PartPlace::WHOLE,
            &mut PartCarry::default(),
            out,
            pieces,
        );
    }

    /// [`SentencePiece::encode_into`] of one part of a text cut by
    /// `SentencePiece::last_part_cut` (see [`crate::Tokenizer::encode_part_into`]).
    pub fn encode_part_into(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        out: &mut Encoding,
        pieces: bool,
    ) -> PartCarry {
        out.clear();
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            self.normalizer.normalize_part(
                text.as_bytes(),
                &mut s.normalized,
                &mut s.norm_to_orig,
                place.first,
                place.last,
            );
            let next = self.segment(place, carry, s);
            self.push_special(self.template.prefix_at(place), out, pieces);
            self.tokens(&s.normalized, &s.norm_to_orig, &s.segments, out, pieces);
            self.push_special(self.template.suffix_at(place), out, pieces);
            next
        })
    }

    /// Pushes the template's `ids` with the offsets `(0, 0)` the references give them.
    fn push_special(&self, ids: &[u32], out: &mut Encoding, pieces: bool) {
        for &id in ids {
            out.push(
                id,
                (0, 0),
                pieces.then(|| self.vocab.piece(id).text.clone()),
            );
        }
    }

    /// Segments `s.normalized` (one part of a text, or a whole one) into `s.segments`; returns
    /// the carry for the next part.
    fn segment(&self, place: PartPlace, carry: &mut dyn CarrySource, s: &mut Scratch) -> PartCarry {
        match &self.segmenter {
            Segmenter::Unigram(u) if place != PartPlace::WHOLE => {
                let score = u.encode_part(
                    &s.normalized,
                    &mut Carried(carry),
                    &mut s.unigram,
                    &mut s.segments,
                );
                PartCarry { score }
            }
            Segmenter::Unigram(u) => {
                u.encode(&s.normalized, &mut s.unigram, &mut s.segments);
                PartCarry::default()
            }
            Segmenter::Bpe(b) => {
                b.encode(&self.vocab, &s.normalized, &mut s.bpe, &mut s.segments);
                PartCarry::default()
            }
        }
    }

    /// Whether the model's words are encoded independently, so that a text may be cut before
    /// one ([`SentencePiece::last_part_cut`]): unigram with the word cache's guarantee, BPE with
    /// its word split; and `▁` is a piece, so that a word never starts with an unknown piece
    /// (which would merge with an unknown piece before it).
    fn words_cut(&self) -> bool {
        let words = match &self.segmenter {
            Segmenter::Unigram(u) => u.caches_words(),
            Segmenter::Bpe(b) => b.splits_words(),
        };
        words
            && self.vocab.pieces().iter().any(|p| {
                p.kind == PieceKind::Normal && p.indexed && p.text.as_bytes() == SPACE_SYMBOL
            })
    }

    /// The ids of `text` only, into `ids` (cleared first): no offsets are tracked through
    /// normalization and no token strings are made (the reference's `EncodeOptimized<int>`).
    pub fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        ids.clear();
        self.encode_ids_append(text, ids);
    }

    /// [`SentencePiece::encode_ids_into`] appending to `ids` (not cleared).
    pub fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>) {
        self.encode_part_ids_append(text, PartPlace::WHOLE, &mut PartCarry::default(), ids);
    }

    /// [`SentencePiece::encode_ids_append`] of one part of a cut text (see
    /// [`crate::Tokenizer::encode_part_into`]).
    pub fn encode_part_ids_append(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        ids: &mut Vec<u32>,
    ) -> PartCarry {
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            self.normalizer.normalize_part(
                text.as_bytes(),
                &mut s.normalized,
                &mut NoOffsets,
                place.first,
                place.last,
            );
            // What `tokens` does, ids alone: only the unknown piece (the one piece of its kind)
            // is not pushed as it is, so no piece's kind is looked up (a table of a byte per
            // piece: a cache miss per rare token of a large vocabulary). A whole text of a
            // unigram model writes its ids as it segments; other texts' segments are copied.
            let unk = self.vocab.unknown_segment_id();
            ids.extend_from_slice(self.template.prefix_at(place));
            let next = match &self.segmenter {
                Segmenter::Unigram(u) if place == PartPlace::WHOLE => {
                    u.encode_to(
                        &s.normalized,
                        &mut s.unigram,
                        &mut IdSink::new(ids, unk, &mut s.unknowns),
                    );
                    PartCarry::default()
                }
                _ => {
                    let next = self.segment(place, carry, s);
                    IdSink::new(ids, unk, &mut s.unknowns).push_all(&s.segments);
                    next
                }
            };
            if !s.unknowns.is_empty() {
                self.resolve_unknowns(ids, &s.unknowns, &s.normalized);
            }
            ids.extend_from_slice(self.template.suffix_at(place));
            next
        })
    }

    /// The ids of one text, with its unknown pieces at `unknowns` (in order, not empty),
    /// as [`SentencePiece::tokens`] would give them: each unknown piece becomes its bytes'
    /// pieces with byte fallback, and a run of them one piece without.
    fn resolve_unknowns(&self, ids: &mut Vec<u32>, unknowns: &[UnknownAt], normalized: &[u8]) {
        if !self.byte_fallback {
            // A run of unknown pieces becomes one, in place over this text's ids (a text with
            // an unknown character is common with a small vocabulary: botchan's model has one
            // on most lines of English, where pushing each id again was a tenth of the time).
            // Most unknown pieces stand alone (one character the model lacks): then nothing
            // moves. Otherwise the ids move from the first run on.
            let Some(run) = unknowns.windows(2).find(|w| w[1].index == w[0].index + 1) else {
                return;
            };
            let unk = run[0].seg.id;
            let start = run[0].index;
            let mut kept = start;
            let mut prev_unk = false;
            for read in start..ids.len() {
                let id = ids[read];
                let is_unk = id == unk;
                if !(is_unk && prev_unk) {
                    ids[kept] = id;
                    kept += 1;
                }
                prev_unk = is_unk;
            }
            ids.truncate(kept);
            return;
        }
        // Byte fallback: each unknown piece becomes one piece per byte. The ids grow by the
        // extra bytes and are moved from the back, each unknown piece's bytes written as it is
        // reached, in place (Japanese with Llama's model has such a piece on many lines: no
        // allocation per text).
        let extra: usize = unknowns
            .iter()
            .map(|u| (u.seg.end - u.seg.start) as usize - 1)
            .sum();
        let mut read_end = ids.len();
        ids.resize(read_end + extra, 0);
        let mut write = ids.len();
        for u in unknowns.iter().rev() {
            let after = read_end - (u.index + 1);
            ids.copy_within(u.index + 1..read_end, write - after);
            write -= after;
            let w = &normalized[u.seg.start as usize..u.seg.end as usize];
            write -= w.len();
            for (slot, &b) in ids[write..write + w.len()].iter_mut().zip(w) {
                *slot = self
                    .vocab
                    .byte_id(b)
                    .expect("byte-fallback models have all byte pieces");
            }
            read_end = u.index;
        }
        debug_assert_eq!(write, read_end);
    }

    /// Segments → tokens (`PopulateSentencePieceText`).
    fn tokens(
        &self,
        normalized: &[u8],
        norm_to_orig: &[u32],
        segments: &[Segment],
        out: &mut Encoding,
        pieces: bool,
    ) {
        let mut prev_unk = false;
        for seg in segments {
            let kind = self.vocab.kind(seg.id);
            let w = &normalized[seg.start as usize..seg.end as usize];
            let is_unk = kind == PieceKind::Unknown;
            if kind == PieceKind::Control {
                // No surface: begin == end.
                let at = norm_to_orig[seg.start as usize];
                out.push(seg.id, (at, at), pieces.then(|| lossy(w)));
            } else {
                let (begin, end) = (
                    norm_to_orig[seg.start as usize],
                    norm_to_orig[seg.end as usize],
                );
                if is_unk && self.byte_fallback {
                    // One byte piece per byte; the last one carries the character's span.
                    for (i, &b) in w.iter().enumerate() {
                        let id = self
                            .vocab
                            .byte_id(b)
                            .expect("byte-fallback models have all byte pieces");
                        let span = if i + 1 == w.len() {
                            (begin, end)
                        } else {
                            (begin, begin)
                        };
                        out.push(id, span, pieces.then(|| self.vocab.piece(id).text.clone()));
                    }
                } else if is_unk && prev_unk {
                    // Runs of unknown pieces become one unknown piece.
                    out.extend_last(end, pieces.then_some(w));
                } else {
                    out.push(seg.id, (begin, end), pieces.then(|| lossy(w)));
                }
            }
            prev_unk = is_unk;
        }
    }

    /// Decodes ids into text as `sentencepiece`'s `decode` does (`DecodeOptimized`): byte pieces
    /// are gathered and turned into characters (a byte that starts no valid character becomes
    /// U+FFFD), control pieces vanish, the unknown piece becomes the unknown surface, U+2581
    /// becomes a space, and the leading space the dummy prefix added is dropped. Fails on an id
    /// out of range.
    pub fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        let mut text: Vec<u8> = Vec::new();
        let mut byte_run: Vec<u8> = Vec::new();
        let mut is_bos_ws = true;
        let strip_leading = self.add_dummy_prefix || self.remove_extra_whitespaces;
        for &id in ids {
            if id as usize >= self.vocab.len() {
                return Err(id);
            }
            let piece = self.vocab.piece(id);
            if piece.kind == PieceKind::Byte {
                byte_run.push(byte_of_piece(&piece.text).expect("validated byte piece"));
                continue;
            }
            flush_bytes(&mut byte_run, &mut text);
            if !text.is_empty() {
                is_bos_ws = false;
            }
            if piece.kind == PieceKind::Control {
                continue;
            }
            let mut p = piece.text.as_bytes();
            let mut has_bos_ws = false;
            if is_bos_ws && strip_leading {
                if let Some(rest) = p.strip_prefix(SPACE_SYMBOL) {
                    p = rest;
                    has_bos_ws = true;
                }
                // With extra whitespace removed, every leading space goes, not just the first.
                if self.remove_extra_whitespaces {
                    has_bos_ws = false;
                }
            }
            if piece.kind == PieceKind::Unknown {
                text.extend_from_slice(self.unk_surface.as_bytes());
            } else {
                push_unescaped(p, &mut text);
            }
            if has_bos_ws || !text.is_empty() {
                is_bos_ws = false;
            }
        }
        flush_bytes(&mut byte_run, &mut text);
        let text = if let Some(d) = &self.denormalizer {
            let (mut out, mut map) = (Vec::new(), Vec::new());
            d.normalize(&text, &mut out, &mut map);
            out
        } else {
            text
        };
        Ok(String::from_utf8_lossy(&text).into_owned())
    }
}

/// The unigram part's running score, carried from part to part.
struct Carried<'a>(&'a mut dyn CarrySource);

impl RunningScore for Carried<'_> {
    fn ready(&mut self) -> Option<f32> {
        self.0.ready().map(|c| c.score)
    }
    fn wait(&mut self) -> f32 {
        self.0.wait().score
    }
    fn done(&mut self, score: f32) {
        self.0.done(PartCarry { score });
    }
}

/// A piece's bytes as a string (normalized text is UTF-8; lossy only for malformed models).
fn lossy(w: &[u8]) -> String {
    String::from_utf8_lossy(w).into_owned()
}

/// Appends `p` to `text` with every U+2581 turned back into a space (no allocation per piece).
fn push_unescaped(p: &[u8], text: &mut Vec<u8>) {
    let mut rest = p;
    while let Some(at) = rest
        .windows(SPACE_SYMBOL.len())
        .position(|w| w == SPACE_SYMBOL)
    {
        text.extend_from_slice(&rest[..at]);
        text.push(b' ');
        rest = &rest[at + SPACE_SYMBOL.len()..];
    }
    text.extend_from_slice(rest);
}

/// Appends a run of byte pieces as text: each valid UTF-8 character as is, each byte that does
/// not start one as U+FFFD.
fn flush_bytes(run: &mut Vec<u8>, text: &mut Vec<u8>) {
    let mut at = 0;
    while at < run.len() {
        match valid_char_len(&run[at..]) {
            Some(n) => {
                text.extend_from_slice(&run[at..at + n]);
                at += n;
            }
            None => {
                text.extend_from_slice("\u{FFFD}".as_bytes());
                at += 1;
            }
        }
    }
    run.clear();
}

impl PipelineInfo for SentencePiece {
    fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        self.decode(ids)
    }

    fn vocab_size(&self) -> usize {
        self.vocab.len()
    }

    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.vocab
            .pieces()
            .get(id as usize)
            .map(|p| p.text.as_str())
    }

    fn kernels(&self) -> &'static Kernels {
        self.kernels
    }

    fn added_suffix_len(&self) -> usize {
        self.template.suffix_len()
    }

    /// No safe cuts (parts encoded as texts of their own), whatever the model:
    /// - unigram: the reference sums scores in `f32` along the whole text, so the Viterbi
    ///   choice between near-ties can depend on the running score where a word starts (reusing
    ///   per-word results blindly was measured to change words). The word cache reuses a path
    ///   only below a proven bound on that score ([`crate::models::unigram`]); a cut would start
    ///   the text after it from 0 instead, for every word, with no such bound;
    /// - BPE: with `add_dummy_prefix` and `remove_extra_whitespaces`, `T[..p]` loses its
    ///   trailing spaces and `T[p..]` gets the dummy `▁`, so the ids could agree, but the offsets
    ///   cannot: in `T` the `▁` of the word after the cut is the space before it (offset
    ///   `p - 1`, or `p` when the cut is before the space), in `T[p..]` it is the dummy prefix,
    ///   at the word's first byte. Without those flags the parts' ids differ (Llama's `.model`
    ///   keeps extra whitespace: `T[p..]` gets a `▁` of its own).
    ///
    /// Parts that continue the text instead have cuts: [`PipelineInfo::last_part_cut`].
    fn last_safe_cut(&self, _text: &[u8]) -> Option<usize> {
        None
    }

    /// The last space `p` after another byte where the normalizer allows a cut
    /// ([`SpmNormalizer::continues_at`], which proves that the parts normalize, as parts, to the
    /// whole text's normalization, cut before the `▁` of the space at `p`), when the model
    /// encodes words independently ([`SentencePiece::words_cut`]): then its segments of the
    /// whole are those of the parts — for BPE because no merge crosses a word start, for
    /// unigram because every path passes through it and the part continues from the running
    /// score there — and so are the tokens made of them (a word starts with a known piece, so
    /// no unknown run spans the cut; offsets come from the parts' own normalization, which maps
    /// each byte as the whole text's does).
    fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        if !self.words_cut() {
            return None;
        }
        memchr::memrchr_iter(b' ', text).find(|&p| self.normalizer.continues_at(text, p))
    }

    fn part_cut_lookback(&self) -> usize {
        self.normalizer.cut_lookback()
    }

    fn parts_carry(&self) -> bool {
        matches!(self.segmenter, Segmenter::Unigram(_)) && self.words_cut()
    }
}

impl AnyPipeline for SentencePiece {
    fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        self.encode_ids_into(text, ids)
    }

    fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>) {
        self.encode_ids_append(text, ids)
    }

    fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        self.encode_into(text, out, pieces)
    }

    fn encode_part_into(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        out: &mut Encoding,
        pieces: bool,
    ) -> PartCarry {
        self.encode_part_into(text, place, carry, out, pieces)
    }

    fn encode_part_ids_append(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        ids: &mut Vec<u32>,
    ) -> PartCarry {
        self.encode_part_ids_append(text, place, carry, ids)
    }
}

#[cfg(test)]
mod tests {
    use crate::Tokenizer;

    /// Botchan's unigram model: 1000 pieces, so many characters are unknown to it.
    fn botchan() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sentencepiece/botchan_en_unigram_1000.model")
    }

    /// Texts with unknown characters alone and in runs, at a text's start, middle and end, and
    /// texts that are nothing else.
    const UNKNOWN_TEXTS: [&str; 8] = [
        "{{{ cat }}}",
        "}}",
        "I am a cat ©© and ®",
        "©",
        "",
        "no unknown here",
        "™™™ { } ™ 日本",
        "© a lone one, then a run: ®®",
    ];

    /// Texts appended one after another give each text's ids, and the ids path gives the full
    /// encoding's: runs of unknown characters (merged into one unknown piece) at a text's start,
    /// middle and end, and texts that are only unknown characters, one after another.
    #[test]
    fn appended_ids_are_each_texts_with_unknown_runs_merged() {
        let tok = Tokenizer::from_file(botchan()).expect("model");
        let unk = (0..tok.vocab_size() as u32)
            .find(|&id| tok.id_to_piece(id) == Some("<unk>"))
            .expect("an unknown piece");
        let mut all = Vec::new();
        let mut want = Vec::new();
        for text in UNKNOWN_TEXTS {
            let alone = tok.encode(text);
            assert_eq!(alone, tok.encode_full(text).ids, "{text:?}");
            want.extend_from_slice(&alone);
            tok.encode_ids_append(text, &mut all);
        }
        assert_eq!(all, want);
        // The texts have unknown runs to merge: `{{{` is one unknown piece.
        assert_eq!(tok.encode("{{{").iter().filter(|&&id| id == unk).count(), 1);
        assert!(want.iter().filter(|&&id| id == unk).count() >= 8);
    }

    /// The same with byte fallback, on a unigram model (botchan's, given the 256 byte pieces):
    /// each unknown character becomes its bytes' pieces, and the ids path (which writes ids as
    /// it segments and sets the unknown pieces aside) gives what the full encoding gives, on
    /// every tier.
    #[test]
    fn appended_ids_with_byte_fallback_are_each_texts() {
        use crate::encoding::Encoding;
        use crate::load::spm_proto::{self, PieceKind, SpmPiece, piece_of_byte};
        use crate::pipeline::spm::SentencePiece;
        use simdtok_kernels::{Kernels, Tier};

        let bytes = std::fs::read(botchan()).expect("model");
        for tier in Tier::ALL {
            let Some(kernels) = Kernels::for_tier(tier) else {
                continue;
            };
            let mut model = spm_proto::parse(&bytes).expect("parses");
            model.byte_fallback = true;
            model.pieces.extend((0..=255u8).map(|b| SpmPiece {
                text: piece_of_byte(b),
                score: 0.0,
                kind: PieceKind::Byte,
                indexed: true,
            }));
            let tok = SentencePiece::new(model, kernels).expect("model");
            let (mut all, mut want) = (Vec::new(), Vec::new());
            let mut enc = Encoding::default();
            for text in UNKNOWN_TEXTS {
                tok.encode_into(text, &mut enc, false);
                let mut alone = Vec::new();
                tok.encode_ids_into(text, &mut alone);
                assert_eq!(alone, enc.ids, "{text:?} on {tier:?}");
                want.extend_from_slice(&alone);
                tok.encode_ids_append(text, &mut all);
            }
            assert_eq!(all, want, "{tier:?}");
            // `©` (two bytes) became two byte pieces, and no unknown piece is left.
            let copyright: Vec<u32> = "©".bytes().map(|b| tok.vocab.byte_id(b).unwrap()).collect();
            assert!(want.windows(2).any(|w| w == copyright.as_slice()));
            assert!(!want.contains(&tok.vocab.unknown_segment_id()));
        }
    }
}
