//! Pipelines: normalizer + pre-tokenizer + model + post-processing, one per tokenizer family.
//!
//! A [`crate::Tokenizer`] holds one pipeline behind `AnyPipeline`, so it has no per-family
//! code: a new family is a type that implements `PipelineInfo` and `Pipeline` (or
//! `AnyPipeline` directly), and one arm in `crate::load::open`. The encoders stay
//! monomorphized: the one virtual call is per text, and everything under it is generic over the
//! `Sink`.

pub mod added_tokens;
pub(crate) mod cuts;
pub mod hf_bpe;
pub mod hf_char_bpe;
pub mod hf_spm_bpe;
pub mod hf_unigram;
pub(crate) mod sink;
pub mod spm;
mod template;
pub mod tiktoken;
pub mod wordpiece;

use std::fmt::Debug;

use simdtok_kernels::Kernels;

use crate::encoding::Encoding;
use sink::Sink;

/// What every pipeline tells about its vocabulary, its decoder and its kernels.
pub(crate) trait PipelineInfo: Send + Sync + Debug {
    /// The text of `ids`, as the reference decodes it; `Err(id)` for an id out of range.
    fn decode(&self, ids: &[u32]) -> Result<String, u32>;

    /// The number of ids.
    fn vocab_size(&self) -> usize;

    /// The string of a vocabulary entry.
    fn id_to_piece(&self, id: u32) -> Option<&str>;

    /// The bytes a token stands for, where the model's tokens are byte strings; `None` for
    /// other models.
    fn token_bytes(&self, _id: u32) -> Option<&[u8]> {
        None
    }

    /// The kernels (hence the tier) in use.
    fn kernels(&self) -> &'static Kernels;

    /// The last safe cut in `text` ([`crate::Tokenizer::last_safe_cut`]); the default: none,
    /// for a family with no proven rule. The rules and their proofs are in `cuts`.
    fn last_safe_cut(&self, _text: &[u8]) -> Option<usize> {
        None
    }

    /// The last cut in `text` for parts encoded in order ([`crate::Tokenizer::last_part_cut`]);
    /// the default: the last safe cut.
    fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        self.last_safe_cut(text)
    }

    /// The most bytes before a cut that [`PipelineInfo::last_part_cut`] reads.
    fn part_cut_lookback(&self) -> usize {
        cuts::LOOKBACK
    }

    /// Whether each part needs the [`PartCarry`] of the part before it.
    fn parts_carry(&self) -> bool {
        false
    }

    /// The pre-tokenizer regexes that run on the regex engine, no hand-written scanner
    /// implementing them ([`crate::Tokenizer::regex_fallbacks`]); the default: none.
    fn regex_fallbacks(&self) -> Vec<String> {
        Vec::new()
    }

    /// How many tokens the post-processor appends to every text (`[SEP]`, `</s>`): the last part
    /// of a cut text ends with them, with the offsets `(0, 0)` they have in the whole text's
    /// encoding.
    fn added_suffix_len(&self) -> usize {
        0
    }
}

/// Where a part of a text cut by [`crate::Tokenizer::last_part_cut`] stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartPlace {
    /// The text's first part.
    pub first: bool,
    /// The text's last part.
    pub last: bool,
}

impl PartPlace {
    /// The place of a text encoded whole: first and last.
    pub const WHOLE: PartPlace = PartPlace {
        first: true,
        last: true,
    };
}

/// Where a part gets the [`PartCarry`] of the part before it.
pub trait CarrySource {
    /// The carry, when it is there already (never waits).
    fn ready(&mut self) -> Option<PartCarry>;
    /// The carry, waiting for it when it is not there yet.
    fn wait(&mut self) -> PartCarry;
    /// This part's own carry, for the next part, as soon as it is known (before the part's
    /// encoding is finished); the part returns it too.
    fn done(&mut self, _next: PartCarry) {}
}

/// A carry at hand (the part before was encoded already, or there is none).
impl CarrySource for PartCarry {
    fn ready(&mut self) -> Option<PartCarry> {
        Some(*self)
    }
    fn wait(&mut self) -> PartCarry {
        *self
    }
}

/// What one part of a cut text hands on to the next ([`crate::Tokenizer::encode_part_into`]):
/// for a SentencePiece unigram model, the running score of the reference's pass at the cut.
/// The default is the carry at the start of a text.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PartCarry {
    pub(crate) score: f32,
}

/// A pipeline as a [`crate::Tokenizer`] uses it: object safe, so one `Box<dyn AnyPipeline>`
/// holds any family. Every [`Pipeline`] is one; a pipeline with entry points of its own
/// (SentencePiece) implements it directly.
pub(crate) trait AnyPipeline: PipelineInfo {
    /// The ids of `text` into `ids` (cleared first).
    fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>);

    /// The ids of `text` appended to `ids` (not cleared).
    fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>);

    /// Ids, offsets and (when `pieces`) token strings into `out` (cleared first).
    fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool);

    /// [`AnyPipeline::encode_into`] of one part of a cut text; `carry` gives the carry of the
    /// part before (asked only when [`PipelineInfo::parts_carry`]); returns this part's. The
    /// default: parts are texts of their own.
    fn encode_part_into(
        &self,
        text: &str,
        _place: PartPlace,
        _carry: &mut dyn CarrySource,
        out: &mut Encoding,
        pieces: bool,
    ) -> PartCarry {
        self.encode_into(text, out, pieces);
        PartCarry::default()
    }

    /// [`AnyPipeline::encode_ids_append`] of one part of a cut text (see
    /// [`AnyPipeline::encode_part_into`]).
    fn encode_part_ids_append(
        &self,
        text: &str,
        _place: PartPlace,
        _carry: &mut dyn CarrySource,
        ids: &mut Vec<u32>,
    ) -> PartCarry {
        self.encode_ids_append(text, ids);
        PartCarry::default()
    }
}

/// What a pipeline provides — encoding into a [`Sink`], and the string of a token — and the entry
/// points that follow from it: ids into a reused vector (no offsets computed), or a whole
/// [`Encoding`].
pub(crate) trait Pipeline: PipelineInfo {
    /// Encodes `text` into `sink`.
    fn encode_to<S: Sink>(&self, text: &str, sink: &mut S);

    /// Encodes one part of a text cut by [`PipelineInfo::last_part_cut`] into `sink`; the
    /// default: the part is a text of its own (every safe cut is a part cut).
    fn encode_part_to<S: Sink>(&self, text: &str, _place: PartPlace, sink: &mut S) {
        self.encode_to(text, sink);
    }

    /// Token `id` as text, as the reference shows it.
    fn token_string(&self, id: u32) -> String;

    /// The ids of `text` into `ids` (cleared first).
    fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        ids.clear();
        self.encode_to(text, ids);
    }

    /// The ids of `text` appended to `ids`: every sink only appends.
    fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>) {
        self.encode_to(text, ids);
    }

    /// Ids, offsets and (when `pieces`) token strings into `out` (cleared first).
    fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        self.encode_part_into(text, PartPlace::WHOLE, out, pieces);
    }

    /// [`Pipeline::encode_into`] of one part of a cut text.
    fn encode_part_into(&self, text: &str, place: PartPlace, out: &mut Encoding, pieces: bool) {
        out.clear();
        let mut sink = sink::TakingEncoding {
            encoding: out,
            taken: Vec::new(),
        };
        self.encode_part_to(text, place, &mut sink);
        let taken = sink.taken;
        if pieces {
            out.pieces = out.ids.iter().map(|&id| self.token_string(id)).collect();
            for (i, text) in taken {
                out.pieces[i] = text;
            }
        }
    }
}

impl<P: Pipeline> AnyPipeline for P {
    fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        Pipeline::encode_ids_into(self, text, ids)
    }

    fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>) {
        Pipeline::encode_ids_append(self, text, ids)
    }

    fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        Pipeline::encode_into(self, text, out, pieces)
    }

    fn encode_part_into(
        &self,
        text: &str,
        place: PartPlace,
        _carry: &mut dyn CarrySource,
        out: &mut Encoding,
        pieces: bool,
    ) -> PartCarry {
        Pipeline::encode_part_into(self, text, place, out, pieces);
        PartCarry::default()
    }

    fn encode_part_ids_append(
        &self,
        text: &str,
        place: PartPlace,
        _carry: &mut dyn CarrySource,
        ids: &mut Vec<u32>,
    ) -> PartCarry {
        self.encode_part_to(text, place, ids);
        PartCarry::default()
    }
}
