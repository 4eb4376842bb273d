//! tiktoken encodings (rank files, GPT-2's encoder.json + vocab.bpe): the pattern's pieces,
//! each encoded by byte-level BPE over the ranks, as `Encoding.encode_ordinary` does — special
//! tokens are only recognised in the text when asked for (`allowed_special="all"`).

use std::cell::RefCell;

use simdtok_kernels::Kernels;

use crate::cache::word::{
    self as word_cache, CachedPiece, PieceCache, PieceSeeds, cached_piece, cached_pieces,
};
use crate::models::byte_bpe::{BpeScratch, ByteBpe};
use crate::pipeline::added_tokens::{AddedToken, AddedTokens, Split};
use crate::pipeline::cuts::{AddedGuard, ByteLevelCuts, ByteLevelOptions};
use crate::pipeline::sink::Sink;
use crate::pipeline::{Pipeline, PipelineInfo};
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
    /// Where a text may be cut ([`crate::Tokenizer::last_safe_cut`]).
    cuts: Option<ByteLevelCuts>,
    cache_owner: usize,
    /// What a thread's cache starts with: every token ([`PieceSeeds`]).
    seeds: PieceSeeds,
    kernels: &'static Kernels,
}

#[derive(Default)]
struct Scratch {
    bpe: BpeScratch,
    cached: CachedPiece,
    splits: Vec<Split>,
    cache: PieceCache,
    /// The pieces of the batch being gathered.
    spans: Vec<(usize, usize)>,
}

/// Pieces gathered before they are encoded: enough to keep the encoding loop going, few enough
/// to stay in the L1 cache.
const PIECE_BATCH: usize = 256;
/// Texts of this many bytes or more are encoded in batches of pieces.
const BATCH_FROM: usize = 256;

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
        let specials = AddedTokens::new(specials)?;
        // No normalizer, no prefix space, no template, no offset trimming: only the pattern's
        // rules, and the special tokens when they are looked for in the text.
        let cuts = ByteLevelCuts::new(
            pattern,
            ByteLevelOptions {
                space: true,
                newline: true,
                normalized: false,
                added: allow_special
                    .then(|| AddedGuard::new(specials.tokens()))
                    .flatten(),
            },
        );
        let seeds = PieceSeeds::new(bpe.len() as u32, |id| bpe.encodes_as_itself(id));
        Ok(Tiktoken {
            seeds,
            bpe,
            splitter: Splitter::new(pattern, kernels),
            specials,
            allow_special,
            cuts,
            cache_owner: word_cache::new_owner(),
            kernels,
        })
    }

    /// Checks every seed of the piece cache against the model's encoding of its bytes
    /// ([`PieceSeeds::check`]).
    #[cfg(test)]
    pub(crate) fn check_seeds(&self) -> Result<usize, String> {
        let mut scratch = BpeScratch::default();
        self.seeds.check(|bytes| {
            let mut out = Vec::new();
            self.bpe.encode_piece(bytes, &mut scratch, &mut out);
            out
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
            scratch.cache.claim_seeded(self.cache_owner, &self.seeds);
            scratch.bpe.fit_budget();
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
        if end - start < BATCH_FROM {
            // A short text (a line): each piece encoded as the splitter finds it, without the
            // batch's setup.
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
            return;
        }
        // The pieces are gathered, then encoded a batch at a time: the encoding loop then keeps
        // its output cursor in registers ([`cached_pieces`]). 8 KiB texts +5 % (repeated
        // passes), lines no faster (so they keep the direct way above).
        let mut spans = std::mem::take(&mut scratch.spans);
        spans.clear();
        self.splitter.split(&text[start..end], |s, e| {
            spans.push((start + s, start + e));
            if spans.len() == PIECE_BATCH {
                self.encode_pieces(bytes, &spans, scratch, sink);
                spans.clear();
            }
        });
        self.encode_pieces(bytes, &spans, scratch, sink);
        scratch.spans = spans;
    }

    /// Encodes the pieces `spans` of `bytes`. A call of its own: inlined into the split loop's
    /// callback, it crowded that loop's registers.
    #[inline(never)]
    fn encode_pieces<S: Sink>(
        &self,
        bytes: &[u8],
        spans: &[(usize, usize)],
        scratch: &mut Scratch,
        sink: &mut S,
    ) {
        let Scratch {
            bpe, cached, cache, ..
        } = scratch;
        cached_pieces(cache, bytes, spans, cached, sink, |(s, e), out| {
            self.bpe.encode_piece(&bytes[s..e], bpe, out)
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

impl PipelineInfo for Tiktoken {
    fn decode(&self, ids: &[u32]) -> Result<String, u32> {
        self.decode(ids)
    }

    fn vocab_size(&self) -> usize {
        self.vocab_size()
    }

    fn id_to_piece(&self, id: u32) -> Option<&str> {
        self.token_bytes(id)
            .and_then(|b| std::str::from_utf8(b).ok())
    }

    fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.token_bytes(id)
    }

    fn kernels(&self) -> &'static Kernels {
        self.kernels()
    }

    fn last_safe_cut(&self, text: &[u8]) -> Option<usize> {
        self.cuts.as_ref()?.last(text)
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

#[cfg(test)]
mod tests {
    use super::*;

    use crate::encoding::Encoding;
    use crate::models::byte_bpe::BpeScratch;
    use crate::models::token::PieceToken;

    /// Every byte, and every substring of two or more bytes of some words (with and without a
    /// leading space), shorter ones ranked first.
    fn model(kernels: &'static Kernels) -> Tiktoken {
        let words = [
            "the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "ing",
        ];
        let mut tokens: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
        let mut extra = Vec::new();
        for w in words {
            for word in [w.to_owned(), format!(" {w}")] {
                let b = word.as_bytes();
                for len in 2..=b.len() {
                    for s in 0..=b.len() - len {
                        extra.push(b[s..s + len].to_vec());
                    }
                }
            }
        }
        extra.sort_by_key(|t| t.len());
        for t in extra {
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let pairs = tokens.into_iter().zip(0..).collect();
        let bpe = ByteBpe::new(pairs, kernels).unwrap();
        Tiktoken::new(bpe, Pattern::TiktokenCl100k, &[], false, kernels).unwrap()
    }

    /// The pieces of `text`, each encoded alone without any cache: ids and offsets.
    fn oracle(t: &Tiktoken, text: &str) -> (Vec<u32>, Vec<(u32, u32)>) {
        let (mut ids, mut offsets) = (Vec::new(), Vec::new());
        let mut scratch = BpeScratch::default();
        t.splitter.split(text, |s, e| {
            let mut out: Vec<PieceToken> = Vec::new();
            t.bpe
                .encode_piece(&text.as_bytes()[s..e], &mut scratch, &mut out);
            let mut at = s as u32;
            for tok in out {
                ids.push(tok.id);
                offsets.push((at, at + tok.len));
                at += tok.len;
            }
        });
        (ids, offsets)
    }

    #[test]
    fn every_token_seeds_the_cache_and_encodes_as_itself() {
        let t = model(Kernels::scalar());
        assert_eq!(t.check_seeds(), Ok(t.bpe.len()));
        // The real encodings where ../shared/data has them (skipped, with a note, without).
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/models/tiktoken");
        for name in ["cl100k_base", "o200k_base", "r50k_base"] {
            let path = dir.join(format!("{name}.tiktoken"));
            let Ok(bytes) = std::fs::read(&path) else {
                eprintln!("SKIPPED {name}: {} is absent", path.display());
                continue;
            };
            let ranks = crate::load::tiktoken::parse_rank_file(&bytes).unwrap();
            let bpe = ByteBpe::new(ranks, Kernels::scalar()).unwrap();
            let enc = Encodings::from_file_name(name).unwrap();
            let t = Tiktoken::new(bpe, enc.pattern(), &[], false, Kernels::scalar()).unwrap();
            let n = t.check_seeds().unwrap();
            // Every token of up to 16 bytes.
            assert!(n > t.bpe.len() * 9 / 10, "{name}: {n}");
        }
    }

    #[test]
    fn texts_long_and_short_encode_as_their_pieces_do() {
        // Random words (to turn the cache's bypass on), pieces of many tokens, prose.
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut random_words = String::new();
        for _ in 0..3000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = 2 + (state % 11) as usize;
            random_words.push(' ');
            for k in 0..len {
                random_words.push((b'a' + ((state >> (5 * k)) % 26) as u8) as char);
            }
        }
        let prose = "The quick brown fox jumps over the lazy dog, jumping over dogs; ";
        let texts = [
            String::new(),
            "the fox".to_owned(),
            prose.repeat(3),
            prose.repeat(200),
            format!("{}{random_words}{}", prose.repeat(20), prose.repeat(20)),
            "qzxqzxqzxqzxqz))))]]]]}}}}, ".repeat(100),
        ];
        for kernels in [Kernels::scalar(), Kernels::active().unwrap()] {
            let t = model(kernels);
            // Twice: the second time from a cache the first filled.
            for round in 0..2 {
                for text in &texts {
                    let (want_ids, want_offsets) = oracle(&t, text);
                    let mut ids = vec![7];
                    t.encode_ids_into(text, &mut ids);
                    assert_eq!(ids, want_ids, "ids {round} {}", text.len());
                    let mut full = Encoding::default();
                    t.encode_into(text, &mut full, false);
                    assert_eq!(full.ids, want_ids, "full {round} {}", text.len());
                    assert_eq!(full.offsets, want_offsets, "offsets {round} {}", text.len());
                }
            }
        }
    }
}
