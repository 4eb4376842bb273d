//! The word-by-word pass with its cache against the reference's single pass, on models built to
//! break it: exact ties, scores one ulp apart at several magnitudes, near-ties that the running
//! score's rounding decides, and texts long enough for the score shift.

use simdtok_kernels::Kernels;

use super::{Segment, Unigram, UnigramScratch, next_word_start};
use crate::load::spm_proto::{PieceKind, SpmPiece};
use crate::models::vocab::Vocab;

const WB: &str = "\u{2581}";

/// A deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn piece(text: &str, score: f32, kind: PieceKind) -> SpmPiece {
    SpmPiece {
        text: text.into(),
        score,
        kind,
        indexed: true,
    }
}

fn unigram(pieces: Vec<SpmPiece>, kernels: &'static Kernels) -> (Vocab, Unigram) {
    let vocab = Vocab::new(pieces, Some(0), kernels);
    let model = Unigram::new(&vocab, kernels).expect("model builds");
    (vocab, model)
}

/// Both passes over `text` (from one scratch, so the cache carries over between calls).
fn both(model: &Unigram, text: &str, scratch: &mut UnigramScratch) -> (Vec<Segment>, Vec<Segment>) {
    let (mut by_words, mut whole) = (Vec::new(), Vec::new());
    model.encode_with(text.as_bytes(), scratch, &mut by_words, true);
    model.encode_with(text.as_bytes(), scratch, &mut whole, false);
    (by_words, whole)
}

/// Scores that tie or nearly tie: a few magnitudes, each with its neighbours one and two ulps
/// away, and sums of two of them (so that two-piece paths tie one-piece paths in exact
/// arithmetic, and round either way in `f32`).
fn tricky_scores(rng: &mut Rng, n: usize) -> Vec<f32> {
    let mut base: Vec<f32> = Vec::new();
    for m in [0.25f32, 1.0, 1.5, 3.0, 7.75, 12.0, 300.0, 4096.5] {
        base.extend([
            -m,
            (-m).next_up(),
            (-m).next_down(),
            (-m).next_up().next_up(),
        ]);
    }
    (0..n)
        .map(|_| match rng.below(4) {
            0 => base[rng.below(base.len())] + base[rng.below(base.len())],
            _ => base[rng.below(base.len())],
        })
        .collect()
}

/// The unknown piece, then a piece for each of `texts` with a score from [`tricky_scores`];
/// about one in `one_in` is UNUSED and as many are user-defined.
fn scored_pieces(rng: &mut Rng, texts: &[String], one_in: usize) -> Vec<SpmPiece> {
    let scores = tricky_scores(rng, texts.len());
    let mut pieces = vec![piece("<unk>", 0.0, PieceKind::Unknown)];
    for (t, s) in texts.iter().zip(scores) {
        let kind = match rng.below(one_in) {
            0 => PieceKind::Unused,
            1 => PieceKind::UserDefined,
            _ => PieceKind::Normal,
        };
        pieces.push(piece(t, s, kind));
    }
    pieces
}

/// A random model over the letters `abc` with `▁` only first: every piece of up to three
/// letters (with and without `▁`), scored from `scores`.
fn random_model(rng: &mut Rng, kernels: &'static Kernels) -> (Vocab, Unigram) {
    let mut texts: Vec<String> = vec![WB.into()];
    let letters = ["a", "b", "c"];
    let mut grow = vec![String::new()];
    for _ in 0..3 {
        let mut next = Vec::new();
        for g in &grow {
            for l in letters {
                next.push(format!("{g}{l}"));
            }
        }
        texts.extend(next.iter().cloned());
        texts.extend(next.iter().map(|t| format!("{WB}{t}")));
        grow = next;
    }
    // Some pieces are left out (so that paths of many pieces and unknown characters occur).
    texts.retain(|t| t.chars().count() == 1 || rng.below(5) != 0);
    let pieces = scored_pieces(rng, &texts, 40);
    unigram(pieces, kernels)
}

/// A text of `words` words over `abcd` (`d` has no piece: unknown), most of them from a small
/// set so the cache hits, sometimes with no `▁` between them.
fn random_text(rng: &mut Rng, words: usize) -> String {
    let common: Vec<String> = (0..40)
        .map(|_| {
            (0..1 + rng.below(6))
                .map(|_| ["a", "b", "c", "d"][rng.below(4).min(rng.below(4) + 1)])
                .collect()
        })
        .collect();
    let mut text = String::new();
    for _ in 0..words {
        if rng.below(12) != 0 {
            text.push_str(WB);
        }
        if rng.below(8) == 0 {
            for _ in 0..1 + rng.below(12) {
                text.push(['a', 'b', 'c', 'd', 'é'][rng.below(5)]);
            }
        } else {
            text.push_str(&common[rng.below(common.len())]);
        }
    }
    text
}

#[test]
fn word_by_word_equals_the_single_pass_on_random_models_and_texts() {
    let mut stats = (0usize, 0usize);
    for tier_kernels in simdtok_kernels::Tier::supported()
        .into_iter()
        .filter_map(Kernels::for_tier)
    {
        let mut rng = Rng(0x5EED_0001);
        for round in 0..60 {
            let (_, model) = random_model(&mut rng, tier_kernels);
            assert!(model.caches_words());
            let mut scratch = UnigramScratch::default();
            for t in 0..12 {
                // Now and then a long text: the running score passes ±100 000 (scores reach
                // −8193, so a few hundred pieces do it) and the reset falls inside words too.
                let words = if t % 4 == 0 { 3000 } else { 1 + rng.below(40) };
                let text = random_text(&mut rng, words);
                let (by_words, whole) = both(&model, &text, &mut scratch);
                assert_eq!(by_words, whole, "round {round}, text {t}: {text:?}");
            }
            stats.0 += scratch.reused;
            stats.1 += scratch.guarded;
        }
    }
    let (reused, guarded) = stats;
    assert!(reused > 10_000, "the cache was used ({reused} words)");
    assert!(guarded > 1000, "the guard refused words ({guarded})");
}

/// A running score that is never ready before it is waited for (the part before is still
/// being encoded elsewhere), so that a part takes the way that plans its words first.
struct Late(f32);

impl super::RunningScore for Late {
    fn ready(&mut self) -> Option<f32> {
        None
    }
    fn wait(&mut self) -> f32 {
        self.0
    }
    fn done(&mut self, score: f32) {
        self.0 = score;
    }
}

/// A running score that comes after it was asked for `after` times (0: at once), as the score
/// of a part encoded on another thread does; like the CLI's, it can be taken once.
struct ReadyAfter {
    after: usize,
    score: f32,
    taken: bool,
}

impl super::RunningScore for ReadyAfter {
    fn ready(&mut self) -> Option<f32> {
        assert!(!self.taken, "the score was asked for after it was taken");
        if self.after == 0 {
            self.taken = true;
            return Some(self.score);
        }
        self.after -= 1;
        None
    }
    fn wait(&mut self) -> f32 {
        assert!(!self.taken, "the score was waited for after it was taken");
        self.taken = true;
        self.score
    }
    fn done(&mut self, score: f32) {
        self.score = score;
    }
}

/// Parts cut before words and encoded in turn, each planning its words before the running score
/// of the part before is known, give the single pass's segments — long texts included, where
/// the score resets and the guard refuses words inside the plan. The score comes at the start,
/// never before it is waited for, or after a number of asks: then the part plans its first
/// words and takes the plain pass over the rest. The chain through the plan takes each of its
/// ways: runs of words at once, runs again word by word, words without a path, and words whose
/// reference pass replaces their planned segments.
#[test]
fn parts_planned_before_their_score_equal_the_single_pass() {
    let (mut refused, mut reused, mut switched) = (0usize, 0usize, 0usize);
    // Runs of words chained at once and run again word by word; runs with a word the plan had
    // no path for; words whose reference pass replaced their planned segments.
    let mut chain = (0usize, 0usize, 0usize, 0usize);
    let mut rng = Rng(0x5EED_0002);
    for round in 0..30 {
        let (_, model) = random_model(&mut rng, Kernels::scalar());
        let mut scratch = UnigramScratch::default();
        for t in 0..6 {
            let words = if t % 2 == 0 { 3000 } else { 1 + rng.below(60) };
            let text = random_text(&mut rng, words);
            let mut whole = Vec::new();
            model.encode_with(text.as_bytes(), &mut scratch, &mut whole, false);
            // Cut before some of the word starts.
            let starts: Vec<usize> = text.match_indices(WB).map(|(i, _)| i).collect();
            let mut cuts: Vec<usize> = starts
                .into_iter()
                .filter(|&i| i > 0 && rng.below(40) == 0)
                .collect();
            cuts.push(text.len());
            let (mut parts, mut from, mut score) = (Vec::new(), 0, Late(0.0));
            let mut out = Vec::new();
            for &to in &cuts {
                let part = &text.as_bytes()[from..to];
                if rng.below(3) == 0 {
                    model.encode_part(part, &mut score, &mut scratch, &mut out);
                } else {
                    // Asked once at the start, then every `READY_CHECK_BYTES` of words.
                    let mut after = ReadyAfter {
                        after: rng.below(6),
                        score: score.0,
                        taken: false,
                    };
                    model.encode_part(part, &mut after, &mut scratch, &mut out);
                    assert!(after.taken, "the part took its score");
                    score.0 = after.score;
                }
                parts.extend(out.iter().map(|s| Segment {
                    start: s.start + from as u32,
                    end: s.end + from as u32,
                    id: s.id,
                }));
                from = to;
            }
            assert_eq!(
                parts, whole,
                "round {round}, text {t}: {text:?} cut at {cuts:?}"
            );
        }
        refused += scratch.guarded;
        reused += scratch.reused;
        switched += scratch.switched;
        chain.0 += scratch.chained;
        chain.1 += scratch.rerun;
        chain.2 += scratch.pathless;
        chain.3 += scratch.replaced;
    }
    assert!(reused > 10_000, "paths reused ({reused})");
    assert!(
        switched > 100,
        "parts switched to the plain pass ({switched})"
    );
    assert!(
        refused > 100,
        "the guard refused words in plans ({refused})"
    );
    let (chained, rerun, pathless, replaced) = chain;
    assert!(chained > 1000, "runs chained at once ({chained})");
    assert!(rerun > 1000, "runs run again word by word ({rerun})");
    assert!(
        pathless > 1000,
        "runs with a word without a path ({pathless})"
    );
    assert!(replaced > 1000, "planned words replaced ({replaced})");
}

/// Two segmentations of `▁ab` whose exact scores differ by `gap`, and a prefix of words that
/// carries the running score to about `-base`: the `f32` sums decide near-ties, and the guard
/// must refuse exactly the words it cannot prove.
#[test]
fn near_ties_decided_by_the_running_score_follow_the_reference() {
    let kernels = Kernels::scalar();
    // Texts in which the reference split the same word two ways, and words the guard refused.
    let (mut flipped, mut guarded) = (0, 0);
    for gap in [0.0f32, 1e-6, 1e-4, 1e-3, 3e-3, 1e-2, 0.05, 0.5] {
        for filler_score in [-0.5f32, -97.25, -1234.5, -9999.0] {
            let pieces = vec![
                piece("<unk>", 0.0, PieceKind::Unknown),
                piece(WB, -2.0, PieceKind::Normal),
                piece("a", -1.0, PieceKind::Normal),
                piece("b", -2.9, PieceKind::Normal),
                piece(&format!("{WB}a"), -1.1, PieceKind::Normal),
                // ▁ + ab = -2 + (-2 + gap): about one gap better than ▁a + b = -1.1 + -2.9,
                // or equal; ▁ + a + b is far behind. The two paths round differently.
                piece("ab", -2.0 + gap, PieceKind::Normal),
                piece("x", filler_score, PieceKind::Normal),
            ];
            let (_, model) = unigram(pieces, kernels);
            let mut scratch = UnigramScratch::default();
            for fillers in [0usize, 1, 7, 40, 81, 200, 1000] {
                let mut text = String::new();
                for _ in 0..fillers {
                    text.push_str(WB);
                    text.push('x');
                }
                for _ in 0..30 {
                    text.push_str(WB);
                    text.push_str("ab");
                }
                let (by_words, whole) = both(&model, &text, &mut scratch);
                assert_eq!(
                    by_words, whole,
                    "gap {gap}, filler {filler_score}, {fillers}"
                );
                // The `▁ab` words come last: 30 of them, split after `▁` (id 1) or not.
                let splits: Vec<bool> = whole
                    .iter()
                    .filter(|s| text.as_bytes()[s.start as usize] == 0xE2)
                    .skip(fillers)
                    .map(|s| s.id == 1)
                    .collect();
                assert_eq!(splits.len(), 30);
                flipped += splits.iter().any(|&s| s != splits[0]) as usize;
            }
            guarded += scratch.guarded;
        }
    }
    assert!(
        flipped > 0,
        "no text had a word split two ways: the test tests nothing"
    );
    assert!(guarded > 0);
}

#[test]
fn models_whose_pieces_span_words_keep_the_single_pass() {
    let kernels = Kernels::scalar();
    let spanning = |kind| {
        vec![
            piece("<unk>", 0.0, PieceKind::Unknown),
            piece(WB, -1.0, PieceKind::Normal),
            piece("a", -1.0, PieceKind::Normal),
            piece(&format!("a{WB}"), -1.5, kind),
        ]
    };
    for kind in [PieceKind::Normal, PieceKind::UserDefined] {
        let (_, model) = unigram(spanning(kind), kernels);
        assert!(!model.caches_words(), "{kind:?}");
    }
    // An UNUSED piece is never chosen: it does not stop the cache.
    let (_, model) = unigram(spanning(PieceKind::Unused), kernels);
    assert!(model.caches_words());
    let mut scratch = UnigramScratch::default();
    let text = format!("{WB}a{WB}a{WB}aa");
    let (by_words, whole) = both(&model, &text, &mut scratch);
    assert_eq!(by_words, whole);
}

/// Real models on real text, line by line and as one long text (where the running score is
/// shifted hundreds of times): the word-by-word pass equals the single pass.
#[test]
fn word_by_word_equals_the_single_pass_on_real_models() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut models = vec![
        root.join("tests/data/sentencepiece/botchan_en_unigram_1000.model"),
        root.join("tests/data/sentencepiece/kyoto_ja_unigram_8000.model"),
    ];
    // The shared data's multilingual model, when it is there (a large vocabulary).
    let xlmr = root.join("../shared/data/models/sentencepiece/xlm-roberta-nomic.from-gguf.model");
    if xlmr.is_file() {
        models.push(xlmr);
    } else {
        eprintln!("{} is absent: XLM-R not compared", xlmr.display());
    }
    let corpora: Vec<String> = ["en_kjv_bible.head.txt", "udhr_scripts.txt"]
        .iter()
        .map(|f| std::fs::read_to_string(root.join("tests/data/corpus").join(f)).expect("corpus"))
        .collect();
    let kernels = Kernels::scalar();
    for path in &models {
        let file = crate::load::spm_proto::parse(&std::fs::read(path).expect("model")).unwrap();
        let vocab = Vocab::new(file.pieces, file.unk_id, kernels);
        let model = Unigram::new(&vocab, kernels).unwrap();
        assert!(model.caches_words(), "{}", path.display());
        let mut scratch = UnigramScratch::default();
        for corpus in &corpora {
            // What the normalizer makes of spaces: `▁`, with one in front.
            let normalized = |t: &str| format!("{WB}{}", t.replace([' ', '\n'], WB));
            for line in corpus.lines() {
                let (by_words, whole) = both(&model, &normalized(line), &mut scratch);
                assert_eq!(by_words, whole, "{}: {line:?}", path.display());
            }
            let (by_words, whole) = both(&model, &normalized(corpus), &mut scratch);
            assert!(by_words == whole, "{}: the whole corpus", path.display());
        }
        assert!(scratch.reused > 1000, "{}", path.display());
    }
}

/// A model with pieces of many `a`s (more than a run's candidates hold), some of them followed
/// by `b`, `▁a…` pieces, UNUSED and user-defined ones, over tricky scores.
fn runs_model(rng: &mut Rng, kernels: &'static Kernels) -> (Vocab, Unigram) {
    let mut texts: Vec<String> = vec![WB.into(), "b".into(), "é".into()];
    for k in 1..=30 {
        if k <= 3 || rng.below(3) != 0 {
            texts.push("a".repeat(k));
        }
        if rng.below(4) == 0 {
            texts.push(format!("{}b", "a".repeat(k)));
        }
        if rng.below(4) == 0 {
            texts.push(format!("{WB}{}", "a".repeat(k)));
        }
        if (2..=6).contains(&k) && rng.below(2) == 0 {
            texts.push("é".repeat(k));
        }
    }
    let pieces = scored_pieces(rng, &texts, 30);
    unigram(pieces, kernels)
}

/// The pass that offers a run's candidates again without a walk ([`super::RunCandidates`])
/// equals the pass that walks at every position: runs of every length around the longest
/// pieces, runs cut by other characters, by `▁` and by the text's end, unknown characters in
/// runs, two-byte characters, and texts long enough for the score shift.
#[test]
fn runs_of_one_character_equal_a_walk_at_every_position() {
    for tier_kernels in simdtok_kernels::Tier::supported()
        .into_iter()
        .filter_map(Kernels::for_tier)
    {
        let mut rng = Rng(0x5EED_0042);
        for round in 0..40 {
            let (_, model) = if round % 2 == 0 {
                runs_model(&mut rng, tier_kernels)
            } else {
                random_model(&mut rng, tier_kernels)
            };
            let mut fast = UnigramScratch::default();
            let mut slow = UnigramScratch {
                no_runs: true,
                ..UnigramScratch::default()
            };
            for t in 0..20 {
                let mut text = String::new();
                let runs = if t % 5 == 0 { 400 } else { 1 + rng.below(8) };
                for _ in 0..runs {
                    let c = ["a", "a", "b", "c", "d", "é", WB][rng.below(7)];
                    let len = match rng.below(3) {
                        0 => 1 + rng.below(4),
                        1 => 20 + rng.below(20),
                        _ => 1 + rng.below(80),
                    };
                    text.push_str(&c.repeat(len));
                }
                for by_words in [false, true] {
                    if by_words && !model.caches_words() {
                        continue;
                    }
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    model.encode_with(text.as_bytes(), &mut fast, &mut got, by_words);
                    model.encode_with(text.as_bytes(), &mut slow, &mut want, by_words);
                    assert_eq!(
                        got, want,
                        "round {round}, text {t}, by words {by_words}: {text:?}"
                    );
                }
            }
        }
    }
}

/// Starting walks after the first character ([`super::first_char`]) equals walking from the
/// root: one-, two- and three-byte characters that are pieces, that only start pieces, that are
/// UNUSED or user-defined pieces, or that no piece holds; malformed bytes (overlong forms,
/// surrogates, stray continuation bytes, a character cut by the text's end); four-byte
/// characters; on every tier, line by line and as one text.
#[test]
fn walks_after_the_first_character_equal_walks_from_the_root() {
    let chars = ["a", "b", "é", "ß", "日", "本", "語", "の", "😀", "x", WB];
    for tier_kernels in simdtok_kernels::Tier::supported()
        .into_iter()
        .filter_map(Kernels::for_tier)
    {
        let mut rng = Rng(0xF125_7C4A);
        for round in 0..30 {
            let mut texts: Vec<String> = vec![WB.into()];
            for _ in 0..40 {
                let len = 1 + rng.below(4);
                let mut t: String = (0..len)
                    .map(|_| chars[rng.below(chars.len() - 1)])
                    .collect();
                if rng.below(4) == 0 {
                    t.insert_str(0, WB);
                }
                texts.push(t);
            }
            texts.sort();
            texts.dedup();
            let pieces = scored_pieces(&mut rng, &texts, 12);
            let (_, model) = unigram(pieces.clone(), tier_kernels);
            let (_, plain) = unigram(pieces, tier_kernels);
            let plain = plain.without_first_chars();
            assert!(model.first_chars.is_some(), "round {round}");
            let (mut s1, mut s2) = (UnigramScratch::default(), UnigramScratch::default());
            for t in 0..30 {
                let mut text: Vec<u8> = Vec::new();
                for _ in 0..1 + rng.below(40) {
                    match rng.below(12) {
                        0 => text.extend_from_slice(
                            [
                                &[0xC0, 0x80][..],
                                &[0xE0, 0x80, 0x80],
                                &[0xED, 0xA0, 0x80],
                                &[0x80],
                                &[0xE6, 0x97],
                            ][rng.below(5)],
                        ),
                        _ => text.extend_from_slice(chars[rng.below(chars.len())].as_bytes()),
                    }
                }
                if t % 3 == 0 {
                    // A character cut by the text's end.
                    text.extend_from_slice(&"語".as_bytes()[..1 + rng.below(2)]);
                }
                for by_words in [false, true] {
                    if by_words && !model.caches_words() {
                        continue;
                    }
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    model.encode_with(&text, &mut s1, &mut got, by_words);
                    plain.encode_with(&text, &mut s2, &mut want, by_words);
                    assert_eq!(
                        got, want,
                        "round {round}, text {t}, by words {by_words}: {text:x?}"
                    );
                }
            }
        }
    }
}

/// The word boundary scan (eight bytes at a time, then `memchr`) finds the first `▁` after a
/// word's first byte: `▁` at every offset around the 8- and 16-byte steps, lone lead bytes of
/// `▁` (0xE2 not followed by 0x96 0x81), bytes one above and below it, and the text's end.
#[test]
fn the_next_word_starts_at_the_first_space_symbol() {
    let naive = |text: &[u8], start: usize| {
        (start + 1..text.len())
            .find(|&p| text[p..].starts_with(WB.as_bytes()))
            .unwrap_or(text.len())
    };
    let pieces: [&[u8]; 6] = [
        b"a",
        WB.as_bytes(),
        &[0xE2],
        &[0xE2, 0x96],
        &[0xE3, 0xE1, 0x01],
        "日".as_bytes(),
    ];
    let mut rng = Rng(0x000B_0A71);
    for _ in 0..20_000 {
        let mut text = Vec::new();
        for _ in 0..rng.below(30) {
            let p = pieces[rng.below(pieces.len())];
            let reps = if rng.below(3) == 0 {
                1 + rng.below(20)
            } else {
                1
            };
            for _ in 0..reps {
                text.extend_from_slice(p);
            }
        }
        for start in 0..text.len() {
            assert_eq!(
                super::next_word_start(&text, start),
                naive(&text, start),
                "{text:x?} from {start}"
            );
        }
    }
}

/// Text of more distinct words than the cache's first table holds, most of them long paths of a
/// small vocabulary (botchan's 1000 pieces pack four to an entry): the table grows and the ring
/// of long paths comes round more than once, and every word, cached, grown or overwritten, still
/// gets the single pass's segments.
#[test]
fn word_by_word_equals_the_single_pass_past_the_caches_growth_and_ring() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("tests/data/sentencepiece/botchan_en_unigram_1000.model");
    let file = crate::load::spm_proto::parse(&std::fs::read(path).expect("model")).unwrap();
    let kernels = Kernels::scalar();
    let vocab = Vocab::new(file.pieces, file.unk_id, kernels);
    let model = Unigram::new(&vocab, kernels).unwrap();
    let mut rng = Rng(0x5EED_CAFE);
    let letters = b"etaoinshrdlucmfwypvbgkqjxz";
    // Words of 6 to 13 letters, from a skewed alphabet so that pieces of several letters match.
    let words: Vec<String> = (0..250_000)
        .map(|_| {
            let len = 6 + rng.below(8);
            (0..len)
                .map(|_| letters[rng.below(26).min(rng.below(26))] as char)
                .collect()
        })
        .collect();
    let mut scratch = UnigramScratch::default();
    // Each new word followed by one of the thousand before it (which the cache holds, so that
    // its hit rate keeps it on), in texts of 20 000 words; then all the words again.
    let mut texts: Vec<String> = Vec::new();
    for (start, slice) in (0..).step_by(10_000).zip(words.chunks(10_000)) {
        let mut text = String::new();
        for (k, w) in (start..).zip(slice) {
            let earlier = &words[k - rng.below(1000).min(k)];
            text.push_str(&format!("{WB}{w}{WB}{earlier}"));
        }
        texts.push(text);
    }
    texts.push(words.iter().map(|w| format!("{WB}{w}")).collect());
    for (i, text) in texts.iter().enumerate() {
        let (by_words, whole) = both(&model, text, &mut scratch);
        assert!(by_words == whole, "text {i}");
    }
    let (sets, ring_written) = scratch.cache.sizes();
    assert!(sets > 1 << 15, "the table grew ({sets} sets)");
    assert!(
        ring_written > 2 << 20,
        "the ring came round ({ring_written} pieces)"
    );
    assert!(scratch.reused > 200_000, "{} words reused", scratch.reused);
}

/// A text of `words` words over `abcd` and `é`, most of them from a small set of long ones (17
/// to 255 bytes: the long tier's), some short, some longer than the tier takes.
fn random_long_text(rng: &mut Rng, common: &[String], words: usize) -> String {
    let mut text = String::new();
    for _ in 0..words {
        text.push_str(WB);
        match rng.below(10) {
            0 => {
                for _ in 0..1 + rng.below(8) {
                    text.push(['a', 'b', 'c', 'd'][rng.below(4)]);
                }
            }
            1 => {
                for _ in 0..250 + rng.below(20) {
                    text.push(['a', 'b', 'c', 'é'][rng.below(4)]);
                }
            }
            _ => text.push_str(&common[rng.below(common.len())]),
        }
    }
    text
}

/// Long words that repeat (from 17 bytes with their `▁` to 255), on random models of near-tied
/// scores, in short texts and in texts long enough for the score shift: the long tier's paths,
/// reused under the guard, give the single pass's segments, word by word and in parts planned
/// before their score, on every tier.
#[test]
fn long_words_from_the_long_tier_equal_the_single_pass() {
    let (mut reused_long, mut guarded, mut planned_long) = (0usize, 0usize, 0usize);
    for tier_kernels in simdtok_kernels::Tier::supported()
        .into_iter()
        .filter_map(Kernels::for_tier)
    {
        let mut rng = Rng(0x5EED_0003);
        for round in 0..12 {
            let (_, model) = random_model(&mut rng, tier_kernels);
            let common: Vec<String> = (0..30)
                .map(|_| {
                    // `▁` is three bytes: 14 to 252 more make a word of 17 to 255.
                    let len = [14, 15, 20, 60, 120, 200, 251, 252][rng.below(8)];
                    (0..len)
                        .map(|_| ['a', 'b', 'c', 'd'][rng.below(4).min(rng.below(4) + 1)])
                        .collect()
                })
                .collect();
            let mut scratch = UnigramScratch::default();
            for t in 0..8 {
                let words = if t % 3 == 0 { 800 } else { 1 + rng.below(30) };
                let text = random_long_text(&mut rng, &common, words);
                let (by_words, whole) = both(&model, &text, &mut scratch);
                assert_eq!(by_words, whole, "{round}, text {t}: {text:?}");
                // The same text in parts, each planned before its score is known.
                let mut cuts: Vec<usize> = text
                    .match_indices(WB)
                    .map(|(i, _)| i)
                    .filter(|&i| i > 0 && rng.below(20) == 0)
                    .collect();
                cuts.push(text.len());
                let (mut parts, mut from, mut score) = (Vec::new(), 0, Late(0.0));
                let mut out = Vec::new();
                for &to in &cuts {
                    model.encode_part(
                        &text.as_bytes()[from..to],
                        &mut score,
                        &mut scratch,
                        &mut out,
                    );
                    parts.extend(out.iter().map(|s| Segment {
                        start: s.start + from as u32,
                        end: s.end + from as u32,
                        id: s.id,
                    }));
                    from = to;
                }
                assert_eq!(parts, whole, "{round}, text {t} in parts at {cuts:?}");
            }
            reused_long += scratch.reused_long;
            planned_long += scratch.planned_long;
            guarded += scratch.guarded;
        }
    }
    assert!(reused_long > 5_000, "long words reused ({reused_long})");
    assert!(planned_long > 5_000, "long paths planned ({planned_long})");
    assert!(guarded > 500, "the guard refused words ({guarded})");
}

/// The next word's start is the next `▁` after the word's first byte, or the text's end — as
/// a scan of every position finds it — for every start of random texts of `▁`, its bytes
/// alone and letters, whose words end inside the 16 bytes tested at once, past them, and near
/// the text's end.
#[test]
fn next_word_start_is_a_scan_of_every_position() {
    const SPACE: &[u8] = "\u{2581}".as_bytes();
    let units: [&[u8]; 5] = [SPACE, b"a", b"\xE2", b"\x96\x81", b"bcdefgh"];
    let mut rng = crate::test_rng::Rng(0x2545_F491_4F6C_DD1D);
    for _ in 0..4_000 {
        let count = rng.below(24) as usize;
        let text = rng.join(&units, count);
        for start in 0..text.len() {
            let naive = (start + 1..text.len())
                .find(|&p| text[p..].starts_with(SPACE))
                .unwrap_or(text.len());
            assert_eq!(
                next_word_start(&text, start),
                naive,
                "{text:x?} from {start}"
            );
        }
    }
}
