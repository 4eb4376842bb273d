//! Where a long BPE piece can be cut without changing its tokens.
//!
//! Every part BPE ever holds is a vocabulary token that is a substring of the piece (it starts
//! from single bytes, and each merge makes a token). So if no token occurs in the piece across
//! byte position `p` — starting before `p` and ending after it — no part ever spans `p`, no
//! merge joins the two sides, and the merges on each side are exactly those BPE makes on that
//! side alone (the lowest rank among a side's pairs is chosen in the same order, ties going to
//! the leftmost within the side). The piece's tokens are then the tokens of the two sides,
//! concatenated; with every safe cut made, the tokens of its segments.
//!
//! That is what makes CJK text cheap: a clause of Japanese is one pre-tokenizer piece of dozens
//! of bytes, but tokens spanning two characters are few, so it falls into segments of one or two
//! characters — mostly tokens, the rest short and repeated, answered by the word cache.
//!
//! Only cuts between two non-ASCII characters are looked for (a byte of 0x80 or more, then a
//! UTF-8 lead byte), so only tokens holding such a byte pair can span one. A token spanning a
//! candidate holds that candidate's pair, so it is found among the tokens holding a pair with the
//! same lead byte: those go into one double-array trie per lead byte, each built the first time a
//! piece needs it (o200k has 51 068 such tokens, 40 834 of them for the two-byte scripts; a
//! Japanese text builds the tries of the kana and kanji lead bytes only, a few thousand tokens, in
//! milliseconds). The trie of a candidate's lead byte is walked from every byte before it to find
//! the furthest end of a token starting there. The tries cannot hold keys with a zero byte; a
//! piece holding one is not cut.
//!
//! Two things keep the search cheap where cuts do not pay. A candidate whose byte pair lies in no
//! token is safe outright, and no token starting before it can reach past it, so the walks from
//! the bytes before it are skipped (random 4-byte characters: nearly every candidate). And a
//! segment that grows past `GIVE_UP` bytes without a cut ends the search: the rest of the piece
//! is one segment (1 MB of `▁▁▁…` would otherwise walk the deep `▁…` branch from every byte).
//! Fewer cuts never change the tokens; each cut made is safe on its own.

use std::sync::OnceLock;

use simdtok_kernels::{DoubleArray, Kernels};

use crate::cache::bypass::CacheBypass;
use crate::cache::segment::SegmentCache;
use crate::models::pair_cuts::PairCuts;
use crate::models::self_merges::SelfMerges;
use crate::models::token::PieceToken;

/// UTF-8 lead bytes of multi-byte characters: `0xC0..=0xFF`.
const LEADS: usize = 64;

/// The tokens that could span a cut, by the lead byte of the candidates inside them.
#[derive(Debug)]
pub struct SafeCuts {
    /// For each lead byte, the ids of the tokens holding a candidate pair that ends in it…
    tokens: Vec<Vec<u32>>,
    /// … and their trie, built on first use (`None`: none, or the build failed — no cut there).
    tries: Vec<OnceLock<Option<DoubleArray>>>,
    /// Bit `x << 8 | y`: some token has the candidate pair `x y` inside it.
    pairs: Box<[u64]>,
}

/// The buffers of [`SafeCuts::merge_segments`], kept by a model's scratch between pieces.
#[derive(Default, Debug)]
pub struct CutBuffers {
    segments: Vec<(u32, u32)>,
    /// Where a piece's clusters end ([`CutBuffers::clusters`]).
    ends: Vec<u32>,
    cache: SegmentCache,
    /// Whether [`CutBuffers::cached_segment`] leaves the cache out (segments that do not
    /// repeat: the clusters of random characters).
    bypass: CacheBypass,
}

impl CutBuffers {
    /// Sizes the segment cache for the cache budget in force ([`SegmentCache::fit`]).
    #[inline]
    pub fn fit_budget(&mut self) {
        self.cache.fit(crate::cache::budget::in_force());
    }

    /// [`PairCuts::clusters`] of `piece`, each cluster given these buffers (for
    /// [`CutBuffers::cached_segment`]) as well: whether it was cut.
    #[inline]
    pub fn clusters(
        &mut self,
        pair_cuts: &PairCuts,
        piece: &[u8],
        only_sparse: bool,
        mut cluster: impl FnMut(usize, usize, &mut CutBuffers),
    ) -> bool {
        let mut ends = std::mem::take(&mut self.ends);
        let cut = pair_cuts.clusters(piece, &mut ends, only_sparse, |s, e| cluster(s, e, self));
        self.ends = ends;
        cut
    }

    /// Appends the tokens of `segment` (merged on its own, by `merge`) to `out`, through the
    /// segment cache (for the model `model_id`): a run of one CJK character, cut into its
    /// characters, merges one of them. While the cache's hit rate is too low to pay for it
    /// ([`CacheBypass`]), segments are merged without it.
    #[inline]
    pub fn cached_segment(
        &mut self,
        model_id: usize,
        segment: &[u8],
        out: &mut Vec<PieceToken>,
        merge: impl FnOnce(&mut Vec<PieceToken>),
    ) {
        if self.cache.claim(model_id) {
            // Another model's hit rate says nothing about this one's.
            self.bypass = CacheBypass::default();
        }
        if self.bypass.skips() {
            return merge(out);
        }
        let hit = self.cache.get(segment, out);
        self.bypass.record(hit);
        if hit {
            return;
        }
        let before = out.len();
        merge(out);
        self.cache.put(segment, &out[before..]);
    }
}

/// A segment longer than this without a cut ends the search for cuts.
const GIVE_UP: usize = 64;

/// Whether `bytes[i - 1]` and `bytes[i]` are a non-ASCII byte then a UTF-8 lead byte: a
/// boundary between two non-ASCII characters of valid UTF-8.
#[inline]
fn is_cut_candidate(bytes: &[u8], i: usize) -> bool {
    bytes[i - 1] >= 0x80 && bytes[i] >= 0xC0
}

impl SafeCuts {
    /// Whether `piece` has a place where a cut could be (two non-ASCII characters in a row):
    /// a piece without one is merged whole, and the cut finder need not be built for it.
    pub fn has_candidate(piece: &[u8]) -> bool {
        (1..piece.len()).any(|i| is_cut_candidate(piece, i))
    }

    /// Whether looking for `piece`'s cuts pays before merging it: it has a candidate and a
    /// character of three or four bytes (CJK, Hangul, kana: nearly every other pair of
    /// characters ends a token, and the segments repeat). A word of two-byte characters
    /// (Cyrillic, Greek, Arabic, Hebrew) of at most `whole_up_to` bytes is merged whole: its
    /// few tokens cost fewer lookups than the trie walks that would find its cuts.
    #[inline]
    pub fn cuts_pay(piece: &[u8], whole_up_to: usize) -> bool {
        Self::has_candidate(piece)
            && (piece.len() > whole_up_to || piece.iter().any(|&b| b >= 0xE0))
    }

    /// The cut finder of a vocabulary: every token's id and bytes. Cheap (one pass over the
    /// non-ASCII tokens, done with the model's load); the tries are built when first needed,
    /// from the same bytes (`token` in [`SafeCuts::segments`]).
    pub fn new<'a>(tokens: impl Iterator<Item = (u32, &'a [u8])>) -> SafeCuts {
        let mut by_lead: Vec<Vec<u32>> = vec![Vec::new(); LEADS];
        let mut pairs = vec![0u64; 1 << 10].into_boxed_slice();
        for (id, t) in tokens.filter(|(_, t)| !t.is_ascii() && !t.contains(&0)) {
            let mut leads = 0u64;
            for i in (1..t.len()).filter(|&i| is_cut_candidate(t, i)) {
                let bit = (t[i - 1] as usize) << 8 | t[i] as usize;
                pairs[bit / 64] |= 1 << (bit % 64);
                leads |= 1 << (t[i] - 0xC0);
            }
            for lead in (0..LEADS).filter(|&l| leads & (1 << l) != 0) {
                by_lead[lead].push(id);
            }
        }
        SafeCuts {
            tokens: by_lead,
            tries: (0..LEADS).map(|_| OnceLock::new()).collect(),
            pairs,
        }
    }

    /// Whether some token has `piece[i - 1] piece[i]` inside it.
    #[inline]
    fn pair_in_a_token(&self, piece: &[u8], i: usize) -> bool {
        let bit = (piece[i - 1] as usize) << 8 | piece[i] as usize;
        self.pairs[bit / 64] & (1 << (bit % 64)) != 0
    }

    /// Builds every lead byte's trie now (else each is built at the first piece that needs it),
    /// over up to four threads, the largest tries first.
    pub fn build_tries<'a>(&self, token: impl Fn(u32) -> &'a [u8] + Sync) {
        let mut leads: Vec<u8> = (0..LEADS as u8)
            .filter(|&l| !self.tokens[l as usize].is_empty())
            .collect();
        leads.sort_by_key(|&l| std::cmp::Reverse(self.tokens[l as usize].len()));
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        let next = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|scope| {
            for _ in 0..threads.min(leads.len()) {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&lead) = leads.get(i) else { break };
                        self.trie(0xC0 + lead, &token);
                    }
                });
            }
        });
    }

    /// The trie of the tokens holding a candidate pair that ends in `lead`.
    fn trie<'a>(&self, lead: u8, token: impl Fn(u32) -> &'a [u8]) -> Option<&DoubleArray> {
        let l = (lead - 0xC0) as usize;
        self.tries[l]
            .get_or_init(|| {
                let keys: Vec<(&[u8], u32)> =
                    self.tokens[l].iter().map(|&id| (token(id), 0)).collect();
                // The vocabulary has no duplicates; any build error only means no cut here.
                (!keys.is_empty())
                    .then(|| DoubleArray::build(&keys).ok())
                    .flatten()
            })
            .as_ref()
    }

    /// The segments of `piece` between its safe cuts, as `[start, end)` byte ranges in order,
    /// into `out` (cleared first); one segment when there is no cut. `token` gives the bytes of
    /// an id given to [`SafeCuts::new`].
    pub fn segments<'a>(
        &self,
        kernels: &Kernels,
        piece: &[u8],
        out: &mut Vec<(u32, u32)>,
        token: impl Fn(u32) -> &'a [u8],
    ) {
        out.clear();
        let n = piece.len();
        if piece.contains(&0) {
            out.push((0, n as u32));
            return;
        }
        // Per lead byte, the bytes walked in its trie and the furthest end of a token found;
        // bytes before `floor` need no walk: no token starting there reaches past it.
        let mut walked = [0usize; LEADS];
        let mut reach = [0usize; LEADS];
        let mut floor = 0usize;
        let mut start = 0usize;
        for i in 1..n {
            if !is_cut_candidate(piece, i) {
                continue;
            }
            if i - start > GIVE_UP {
                break;
            }
            if self.pair_in_a_token(piece, i) {
                let l = (piece[i] - 0xC0) as usize;
                let Some(trie) = self.trie(piece[i], &token) else {
                    break;
                };
                for j in walked[l].max(floor)..i {
                    kernels.trie_prefix_walk(trie, &piece[j..], |len, _| {
                        reach[l] = reach[l].max(j + len as usize);
                    });
                }
                walked[l] = i;
                if reach[l] > i {
                    continue;
                }
            }
            floor = i;
            out.push((start as u32, i as u32));
            start = i;
        }
        out.push((start as u32, n as u32));
    }

    /// Whether at most one in eight of `piece`'s byte pairs is in a token (`in_a_token`): then
    /// it makes few merges (random characters: one pair in seventy), and merging it whole is
    /// cheaper than looking for its safe cuts, which pay off on CJK (every other pair).
    #[inline]
    pub fn few_pairs_merge(piece: &[u8], in_a_token: impl Fn(u8, u8) -> bool) -> bool {
        let allowed = piece.len() / 8;
        let mut merging = 0;
        for w in piece.windows(2) {
            merging += in_a_token(w[0], w[1]) as usize;
            if merging > allowed {
                return false;
            }
        }
        true
    }

    /// Appends the tokens of `piece` to `out`, merging each segment on its own with `merge` (a
    /// model's merging from single bytes), short segments through the cache of `buffers`
    /// (for the model `model_id`). A segment that is a token (`token_of`) is that token
    /// only if its own merges make it (`self_merges`): the whole-piece rules (tiktoken's, and
    /// `ignore_merges`) are about pieces, not segments. `segments` is a buffer; `token` as in
    /// [`SafeCuts::segments`].
    #[allow(clippy::too_many_arguments)]
    pub fn merge_segments<'a, S>(
        &self,
        kernels: &Kernels,
        piece: &[u8],
        buffers: &mut CutBuffers,
        model_id: usize,
        scratch: &mut S,
        out: &mut Vec<PieceToken>,
        token: impl Fn(u32) -> &'a [u8],
        token_of: impl Fn(&[u8]) -> Option<u32>,
        self_merges: &SelfMerges,
        merge: impl Fn(&[u8], &mut S, &mut Vec<PieceToken>),
    ) {
        let CutBuffers {
            segments, cache, ..
        } = buffers;
        cache.claim(model_id);
        self.segments(kernels, piece, segments, token);
        if segments.len() == 1 {
            return merge(piece, scratch, out);
        }
        for &(s, e) in segments.iter() {
            let segment = &piece[s as usize..e as usize];
            if cache.get(segment, out) {
                continue;
            }
            let before = out.len();
            match token_of(segment) {
                Some(id) if self_merges.check(id, segment, scratch, &merge) => {
                    out.push(PieceToken { id, len: e - s })
                }
                _ => merge(segment, scratch, out),
            }
            cache.put(segment, &out[before..]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cut finder of `vocab`, and the vocabulary for its `token` argument.
    fn finder<T: AsRef<[u8]>>(vocab: &[T]) -> (SafeCuts, Vec<Vec<u8>>) {
        let tokens: Vec<Vec<u8>> = vocab.iter().map(|t| t.as_ref().to_vec()).collect();
        let cuts = SafeCuts::new(tokens.iter().enumerate().map(|(i, t)| (i as u32, &t[..])));
        (cuts, tokens)
    }

    fn segments<'a>(cuts: &(SafeCuts, Vec<Vec<u8>>), piece: &'a str) -> Vec<&'a str> {
        let mut out = Vec::new();
        let (cuts, tokens) = cuts;
        cuts.segments(Kernels::scalar(), piece.as_bytes(), &mut out, |id| {
            &tokens[id as usize]
        });
        out.iter()
            .map(|&(s, e)| &piece[s as usize..e as usize])
            .collect()
    }

    #[test]
    fn cuts_where_no_token_spans() {
        let cuts = finder(&["日本", "本語", "語の", "ab", "の", "日", "a"]);
        // 日本語 chains (日本, 本語): no cut inside; の after 語 is joined by 語の.
        assert_eq!(segments(&cuts, "日本語の"), vec!["日本語の"]);
        assert_eq!(segments(&cuts, "日本日本"), vec!["日本", "日本"]);
        assert_eq!(segments(&cuts, "のの日"), vec!["の", "の", "日"]);
        // Never between ASCII bytes, nor between ASCII and non-ASCII.
        assert_eq!(segments(&cuts, "abの日ab"), vec!["abの", "日ab"]);
        assert_eq!(segments(&cuts, ""), vec![""]);
    }

    #[test]
    fn a_token_starting_mid_character_blocks_the_cut_it_spans() {
        // The last byte of 日 (0xA5) followed by the first of 本 (0xE6 …) is a token.
        let vocab: Vec<Vec<u8>> = vec![vec![0xA5, 0xE6], "日".into(), "本".into()];
        let cuts = finder(&vocab);
        assert_eq!(segments(&cuts, "日本日"), vec!["日本", "日"]);
        // Cuts fall between characters only, whether or not a character is a token.
        let cuts = finder(&["本日"]);
        assert_eq!(segments(&cuts, "日本語"), vec!["日", "本", "語"]);
    }

    #[test]
    fn candidates_are_two_non_ascii_characters_in_a_row() {
        assert!(SafeCuts::has_candidate("日本".as_bytes()));
        assert!(SafeCuts::has_candidate("aé😀".as_bytes()));
        assert!(!SafeCuts::has_candidate("│Reorganization".as_bytes()));
        assert!(!SafeCuts::has_candidate("日a本".as_bytes()));
        assert!(!SafeCuts::has_candidate(b""));
    }

    #[test]
    fn cuts_pay_for_wide_characters_and_long_words_only() {
        let pays = |s: &str| SafeCuts::cuts_pay(s.as_bytes(), 48);
        assert!(pays("日本語の文章"));
        assert!(pays("한국어"));
        assert!(pays("Привет日本"), "a wide character anywhere");
        assert!(
            !pays("Превосходительство"),
            "34 bytes of Cyrillic: merged whole"
        );
        assert!(pays(&"Превосходительство".repeat(2)), "68 bytes: cut");
        assert!(!pays("日a本"), "no candidate");
        assert!(!pays("Reorganization"));
    }

    #[test]
    fn a_long_stretch_without_a_cut_ends_the_search() {
        let cuts = finder(&["日日"]);
        let short = "日".repeat(10) + "本本";
        assert_eq!(
            segments(&cuts, &short),
            vec![&"日".repeat(10)[..], "本", "本"]
        );
        // 30 characters (90 bytes) that 日日 spans everywhere: the search gives up before 本.
        let long = "日".repeat(30) + "本本";
        assert_eq!(segments(&cuts, &long), vec![&long[..]]);
    }

    #[test]
    fn tries_built_ahead_cut_as_tries_built_on_first_use() {
        let vocab = [
            "日本", "本語", "語の", "の", "日", "Жу", "уж", "ж", "é😀", "a",
        ];
        let (lazy, ahead) = (finder(&vocab), finder(&vocab));
        ahead.0.build_tries(|id| &ahead.1[id as usize]);
        let built = |cuts: &SafeCuts| cuts.tries.iter().filter(|t| t.get().is_some()).count();
        let leads = lazy.0.tokens.iter().filter(|t| !t.is_empty()).count();
        assert_eq!((built(&lazy.0), built(&ahead.0)), (0, leads));
        for piece in ["日本語の日", "ののの日本", "Жужжу", "éé😀😀日ж", "日a本"]
        {
            assert_eq!(segments(&ahead, piece), segments(&lazy, piece), "{piece}");
        }
    }

    #[test]
    fn pieces_with_a_zero_byte_are_not_cut() {
        let cuts = finder(&["日本"]);
        assert_eq!(segments(&cuts, "日日\0日"), vec!["日日\0日"]);
        assert_eq!(segments(&cuts, "日日"), vec!["日", "日"]);
    }
}
