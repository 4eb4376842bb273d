//! [`Tokenizer`]: a model loaded from the file users already have, with the SIMD kernels of one
//! tier chosen when it is built.

use std::path::Path;

use simdtok_kernels::{Kernels, TierRequest};

use crate::cache::budget::{self, CacheBudget};
use crate::encoding::Encoding;
use crate::error::{Error, Result};
use crate::load;
use crate::load::document_tokens::DocumentTokens;
use crate::options::LoadOptions;
use crate::pipeline::{AnyPipeline, CarrySource, PartCarry, PartPlace};

/// A loaded tokenizer: one pipeline ([`crate::pipeline`]) of whichever family the file holds.
#[derive(Debug)]
pub struct Tokenizer {
    pipeline: Box<dyn AnyPipeline>,
    /// The memory each thread's caches may hold while this tokenizer encodes on it
    /// ([`LoadOptions::cache_budget`]).
    cache_budget: CacheBudget,
    /// The tokens the model's files say begin and end a document.
    document_tokens: DocumentTokens,
}

impl Tokenizer {
    /// Loads a model with the active tier (`SIMDTOK_TIER`, else the best the CPU supports).
    pub fn from_file(path: impl AsRef<Path>) -> Result<Tokenizer> {
        Tokenizer::from_file_with(path, Kernels::active()?)
    }

    /// Loads a model with the tier a caller asked for (`--tier`).
    pub fn from_file_with_tier(path: impl AsRef<Path>, tier: TierRequest) -> Result<Tokenizer> {
        Tokenizer::from_file_with(path, Kernels::request(tier)?)
    }

    /// Loads a model with the given kernels.
    pub fn from_file_with(path: impl AsRef<Path>, kernels: &'static Kernels) -> Result<Tokenizer> {
        Tokenizer::from_file_with_options(path, kernels, &LoadOptions::default())
    }

    /// Loads a model with the given kernels and options. An option that does not apply to the
    /// kind of model is an error ([`Error::Option`]), never silently ignored. The kind is
    /// detected from the file ([`crate::ModelKind::detect`]).
    pub fn from_file_with_options(
        path: impl AsRef<Path>,
        kernels: &'static Kernels,
        options: &LoadOptions,
    ) -> Result<Tokenizer> {
        let (pipeline, document_tokens) = load::open(path.as_ref(), kernels, options)?;
        Ok(Tokenizer {
            pipeline,
            cache_budget: options.cache_budget,
            document_tokens,
        })
    }

    /// The tokens that begin and end a document (`bos`, `eos`) where the model's files name
    /// them, as their reference libraries report them: the `tokenizer_config.json` beside a
    /// `tokenizer.json`; a SentencePiece model's control pieces `<s>` and `</s>` (or those its
    /// trainer spec names); tiktoken's `<|endoftext|>`. See [`crate::load::document_tokens`].
    pub fn document_tokens(&self) -> &DocumentTokens {
        &self.document_tokens
    }

    /// The token ids of `text`.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.encode_ids_into(text, &mut ids);
        ids
    }

    /// The token ids of `text` into a reused vector (cleared first): the fastest path, with no
    /// offsets or token strings.
    pub fn encode_ids_into(&self, text: &str, ids: &mut Vec<u32>) {
        budget::scoped(self.cache_budget, || {
            self.pipeline.encode_ids_into(text, ids)
        })
    }

    /// The token ids of `text` appended to `ids` (not cleared): many texts' ids gathered in one
    /// vector, as a batch encoder keeps them, without a copy per text.
    pub fn encode_ids_append(&self, text: &str, ids: &mut Vec<u32>) {
        budget::scoped(self.cache_budget, || {
            self.pipeline.encode_ids_append(text, ids)
        })
    }

    /// Ids, offsets and token strings of `text`.
    pub fn encode_full(&self, text: &str) -> Encoding {
        let mut out = Encoding::default();
        self.encode_into(text, &mut out, true);
        out
    }

    /// Encodes into a reused [`Encoding`] (cleared first); token strings only when `pieces`.
    pub fn encode_into(&self, text: &str, out: &mut Encoding, pieces: bool) {
        budget::scoped(self.cache_budget, || {
            self.pipeline.encode_into(text, out, pieces)
        })
    }

    /// The text of `ids`, as the reference library decodes it.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        self.pipeline.decode(ids).map_err(|id| Error::IdOutOfRange {
            id,
            size: self.vocab_size(),
        })
    }

    /// The number of ids.
    pub fn vocab_size(&self) -> usize {
        self.pipeline.vocab_size()
    }

    /// The string of a vocabulary entry.
    pub fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.pipeline.id_to_piece(id)
    }

    /// The bytes a token stands for, where the model's tokens are byte strings: tiktoken
    /// encodings (a special token's text for a special id) and byte-level `tokenizer.json` BPE
    /// (the vocabulary entry with GPT-2's byte alphabet undone). `None` for other models (use
    /// [`Tokenizer::id_to_piece`]) and for ids with no bytes (added tokens of byte-level BPE).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.pipeline.token_bytes(id)
    }

    /// The last safe cut in `text`: the largest `p` with `0 < p < text.len()` that this model's
    /// rules prove safe — for ANY text `T` that starts with `text` (bytes), encoding `T[..p]`
    /// and `T[p..]` separately and concatenating the results (the offsets of the second part
    /// moved by `p`) gives exactly the encoding of `T`, ids and byte offsets, whatever follows.
    /// `None` when there is none, or this model allows none (then encode the text in one
    /// piece). The rules are conservative: a cut they miss costs parallelism, never exactness.
    ///
    /// `text` may end inside a UTF-8 character and need not be valid UTF-8: the decision at `p`
    /// reads only `text[p - 5 ..= p]` (from the start when `p < 5`; an invalid byte there means
    /// no cut), and every cut lies between two ASCII bytes, so both parts of a valid text are
    /// valid. To cut a huge text into blocks, call it on the bytes from the last cut to the end
    /// of what has been read (e.g. 1 MiB): it scans back from the end and normally stops within
    /// a few bytes or lines; the worst case is linear in `text`. To search only past some
    /// position `q` (what an earlier call did not see), pass `&text[w..]` with `w + 5 ≤ q` and
    /// keep an answer `p` only when `w + p ≥ q`: `w + p` is then the answer on `text` itself.
    ///
    /// Which models have cuts (the proofs are beside the code): byte-level BPE whose
    /// pre-tokenizer is one of the known split regexes alone (tiktoken's encodings, GPT-2, and
    /// `tokenizer.json` files such as Llama 3, Qwen, GPT-4o, tekken) cuts before a space that
    /// follows an ASCII graphic character, and after a newline before an ASCII graphic
    /// character; BERT WordPiece cuts after an ASCII space, tab or newline before an ASCII
    /// graphic character. Both only while no post-processor template is applied
    /// ([`LoadOptions::add_special_tokens`]: each half would get its tokens; such texts have
    /// the same cuts as parts, [`Tokenizer::last_part_cut`]) and no added token can reach
    /// across the cut.
    /// SentencePiece models (unigram, BPE) and SentencePiece-style `tokenizer.json` BPE (Llama 2)
    /// have none (they have cuts for parts that continue the text: [`Tokenizer::last_part_cut`]).
    ///
    /// ```
    /// let tok = simdtok::Tokenizer::from_file("tests/data/bpe/encoder.json")?;
    /// let text = "Hello world, and good night";
    /// let p = tok.last_safe_cut(text.as_bytes()).unwrap();
    /// assert_eq!(&text[p..], " night");
    /// let (mut a, b) = (tok.encode_full(&text[..p]), tok.encode_full(&text[p..]));
    /// a.ids.extend(b.ids);
    /// a.offsets.extend(b.offsets.iter().map(|&(s, e)| (s + p as u32, e + p as u32)));
    /// let whole = tok.encode_full(text);
    /// assert_eq!((a.ids, a.offsets), (whole.ids, whole.offsets));
    /// # Ok::<(), simdtok::Error>(())
    /// ```
    pub fn last_safe_cut(&self, text: &[u8]) -> Option<usize> {
        self.pipeline.last_safe_cut(text)
    }

    /// The last cut in `text` for encoding a long text in parts, in order, with
    /// [`Tokenizer::encode_part_into`] or [`Tokenizer::encode_part_ids_append`]: the largest `p`
    /// with `0 < p < text.len()` such that, for ANY text `T` that starts with `text`, the parts
    /// `T[..p]` and `T[p..]` (and so on for further cuts) encoded as parts give exactly the
    /// encoding of `T`, ids and offsets (the parts' offsets moved by their starts). Every safe
    /// cut ([`Tokenizer::last_safe_cut`]) is one; so are the safe cuts of a model whose
    /// post-processor adds tokens, which go before the first part and after the last (those
    /// after it keep the offsets `(0, 0)` of the whole text's encoding:
    /// [`Tokenizer::added_suffix_len`]). SentencePiece `.model` files (unigram and BPE)
    /// and SentencePiece-style `tokenizer.json` BPE (Llama 2) have these and no safe cuts: they cut before a space that follows another ASCII byte when the model's
    /// rules cannot reach across it, and a part continues its normalization (no dummy prefix
    /// or `Prepend` of its own, nothing stripped at a cut) and, for unigram, the running score
    /// of the reference's pass ([`Tokenizer::parts_carry`]).
    ///
    /// The decision at `p` reads `text[p - k ..= p]`, `k` = [`Tokenizer::part_cut_lookback`];
    /// search past a position `q` as for [`Tokenizer::last_safe_cut`], with `k` for 5.
    ///
    /// ```
    /// use simdtok::pipeline::{PartCarry, PartPlace};
    /// let tok = simdtok::Tokenizer::from_file("tests/data/sentencepiece/botchan_en_unigram_1000.model")?;
    /// let text = "Hello world, and good night";
    /// let p = tok.last_part_cut(text.as_bytes()).unwrap();
    /// assert_eq!(&text[p..], " night");
    /// let mut ids = Vec::new();
    /// let first = PartPlace { first: true, last: false };
    /// let mut carry = tok.encode_part_ids_append(&text[..p], first, &mut PartCarry::default(), &mut ids);
    /// let last = PartPlace { first: false, last: true };
    /// tok.encode_part_ids_append(&text[p..], last, &mut carry, &mut ids);
    /// assert_eq!(ids, tok.encode(text));
    /// # Ok::<(), simdtok::Error>(())
    /// ```
    pub fn last_part_cut(&self, text: &[u8]) -> Option<usize> {
        self.pipeline.last_part_cut(text)
    }

    /// How many tokens the post-processor appends to every text (`[SEP]`, `</s>`; 0 without
    /// [`LoadOptions::add_special_tokens`]). A text cut into parts gets them at the end of its
    /// last part, with the offsets `(0, 0)` that they have in the whole text's encoding: a
    /// caller that moves a part's offsets by the part's start leaves these as they are.
    pub fn added_suffix_len(&self) -> usize {
        self.pipeline.added_suffix_len()
    }

    /// The most bytes before a cut that [`Tokenizer::last_part_cut`] reads.
    pub fn part_cut_lookback(&self) -> usize {
        self.pipeline.part_cut_lookback()
    }

    /// Whether the parts of a cut text need, each, the [`PartCarry`] the part before returned
    /// (so a part's encoding waits for the one before at some point): true for SentencePiece
    /// unigram models. Otherwise parts may be encoded in any order and carry nothing.
    pub fn parts_carry(&self) -> bool {
        self.pipeline.parts_carry()
    }

    /// [`Tokenizer::encode_into`] of one part of a text cut by [`Tokenizer::last_part_cut`].
    /// `carry` gives what the part before returned ([`PartCarry::default`] for the first
    /// part, or the carry itself when it is at hand). When it is not ready, the part does the
    /// work that needs no carry first and waits only then, so that parts encoded on several
    /// threads wait for each other briefly. Offsets are the part's own.
    pub fn encode_part_into(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        out: &mut Encoding,
        pieces: bool,
    ) -> PartCarry {
        budget::scoped(self.cache_budget, || {
            self.pipeline
                .encode_part_into(text, place, carry, out, pieces)
        })
    }

    /// [`Tokenizer::encode_ids_append`] of one part of a cut text (see
    /// [`Tokenizer::encode_part_into`]).
    pub fn encode_part_ids_append(
        &self,
        text: &str,
        place: PartPlace,
        carry: &mut dyn CarrySource,
        ids: &mut Vec<u32>,
    ) -> PartCarry {
        budget::scoped(self.cache_budget, || {
            self.pipeline
                .encode_part_ids_append(text, place, carry, ids)
        })
    }

    /// The memory each thread's caches may hold while this tokenizer encodes on it.
    pub fn cache_budget(&self) -> CacheBudget {
        self.cache_budget
    }

    /// Sets [`Tokenizer::cache_budget`]: a thread's caches are rebuilt at that size the next
    /// time this tokenizer encodes on it. The ids never depend on it; the speed does.
    pub fn set_cache_budget(&mut self, budget: CacheBudget) {
        self.cache_budget = budget;
    }

    /// The kernels (hence the tier) this tokenizer uses.
    pub fn kernels(&self) -> &'static Kernels {
        self.pipeline.kernels()
    }

    /// The pre-tokenizer regexes of the model that no hand-written scanner implements, so that
    /// they run on the regex engine (`fancy-regex`), several times slower; empty when every
    /// pattern takes a scanner (or the model has none). Patterns are recognised by meaning, not
    /// spelling ([`crate::pretokenize::shape`]); a regex of literal strings is not listed.
    pub fn regex_fallbacks(&self) -> Vec<String> {
        self.pipeline.regex_fallbacks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Appending gives each text's ids after what the vector held, for every pipeline family
    /// (the committed models).
    #[test]
    fn append_equals_encode_after_what_was_there() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let texts = [
            "Hello, world! It's 2026.",
            "",
            "  spaces   and\ttabs\nand lines  ",
            "日本語のテキストと English.",
            "unaffable [CLS] <|endoftext|> ☃",
        ];
        for model in [
            "sentencepiece/botchan_en_unigram_1000.model",
            "sentencepiece/botchan_en_bpe_1000.model",
            "wordpiece/bert-base-uncased.vocab.txt",
            "bpe/encoder.json",
            "bpe/gpt2-2k-roberta.tokenizer.json",
            "bpe/kjv-spm-first.tokenizer.json",
        ] {
            let tok = Tokenizer::from_file(data.join(model)).unwrap();
            let mut all = vec![7, 8, 9];
            let mut want = all.clone();
            for text in texts {
                tok.encode_ids_append(text, &mut all);
                want.extend(tok.encode(text));
            }
            assert_eq!(all, want, "{model}");
        }
    }
}
