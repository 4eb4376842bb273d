//! A chain of pre-tokenizer stages, as a `tokenizer.json` `Sequence` of `Split`s and `Digits`
//! lays them out (DeepSeek's numbers, then CJK runs, then words; StarCoder's digits, then
//! GPT-2's pattern): each stage cuts every piece of the stage before, as Hugging Face
//! `tokenizers` does it.
//!
//! A stage finds its matches in a piece — a regex's (through [`Splitter`], so the patterns with a
//! scanner run as fast as alone), or each numeric character for `Digits` — and sees the piece as
//! alternating matches and gaps; `invert` swaps the two. Its behavior then decides the pieces:
//! `Isolated` keeps every match and gap, `Removed` drops the matches, `MergedWithPrevious` and
//! `MergedWithNext` join the first match of a run to the gap before or after it, `Contiguous`
//! joins runs of matches and runs of gaps. Empty pieces are dropped, as the reference drops them.

use crate::pretokenize::deepseek::Layout;
use crate::pretokenize::{Inner, Pattern, Splitter};

/// What a `Split` does with its matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behavior {
    Removed,
    Isolated,
    MergedWithPrevious,
    MergedWithNext,
    Contiguous,
}

impl Behavior {
    /// The behavior of a `tokenizer.json` name (`Isolated`, …).
    pub fn from_name(name: &str) -> Option<Behavior> {
        Some(match name {
            "Removed" => Behavior::Removed,
            "Isolated" => Behavior::Isolated,
            "MergedWithPrevious" => Behavior::MergedWithPrevious,
            "MergedWithNext" => Behavior::MergedWithNext,
            "Contiguous" => Behavior::Contiguous,
            _ => return None,
        })
    }
}

/// What a stage matches.
#[derive(Debug)]
pub enum Matcher {
    /// A regex's matches.
    Regex(Splitter),
    /// Each character with `char::is_numeric` (the `Digits` pre-tokenizer).
    Numeric,
}

/// One stage.
#[derive(Debug)]
pub struct Stage {
    pub matcher: Matcher,
    pub behavior: Behavior,
    pub invert: bool,
}

/// The stages, in order.
#[derive(Debug)]
pub struct Chain {
    stages: Vec<Stage>,
    /// DeepSeek V3's three stages in one pass, when the stages are those.
    deepseek: Option<Layout>,
}

impl Chain {
    /// The sources of the stages' regexes that run on the regex engine
    /// ([`crate::pretokenize::Splitter::fallback_regex`]), in order.
    pub fn fallback_regexes(&self) -> impl Iterator<Item = &str> {
        self.stages.iter().filter_map(|s| match &s.matcher {
            Matcher::Regex(splitter) => splitter.fallback_regex(),
            Matcher::Numeric => None,
        })
    }
}

/// Buffers for [`Chain::pieces`].
#[derive(Default, Debug)]
pub struct Scratch {
    next: Vec<(usize, usize)>,
    marks: Vec<(usize, usize, bool)>,
}

impl Chain {
    /// The chain of `stages`.
    pub fn new(stages: Vec<Stage>) -> Chain {
        let deepseek = deepseek_layout(&stages);
        Chain { stages, deepseek }
    }

    /// The chain of `stages`, each run over the pieces of the one before whatever they are.
    #[cfg(test)]
    fn staged(stages: Vec<Stage>) -> Chain {
        Chain {
            stages,
            deepseek: None,
        }
    }

    /// The pieces of `text`, as `[start, end)` byte ranges in order, into `out` (cleared first).
    pub fn pieces(&self, text: &str, out: &mut Vec<(usize, usize)>, scratch: &mut Scratch) {
        out.clear();
        if let Some(layout) = &self.deepseek {
            layout.pieces(text.as_bytes(), &mut |s, e| out.push((s, e)));
            return;
        }
        out.push((0, text.len()));
        for stage in &self.stages {
            scratch.next.clear();
            for &(s, e) in out.iter() {
                stage.cut(text, s, e, &mut scratch.marks, &mut scratch.next);
            }
            std::mem::swap(out, &mut scratch.next);
        }
        out.retain(|&(s, e)| s < e);
    }
}

/// DeepSeek V3's layout in one pass ([`Layout`]) when `stages` are its three `Split`s, each
/// `Isolated` and not inverted: `\p{N}{1,k}`, the CJK runs, the word pattern.
fn deepseek_layout(stages: &[Stage]) -> Option<Layout> {
    let [numbers, cjk, words] = stages else {
        return None;
    };
    let scan = |stage: &Stage, want: fn(Pattern) -> bool| match &stage.matcher {
        Matcher::Regex(Splitter {
            inner: Inner::Scan(scan),
            kernels,
        }) if stage.behavior == Behavior::Isolated && !stage.invert && want(scan.pattern) => {
            Some((scan.scanner, *kernels))
        }
        _ => None,
    };
    let (scanner, kernels) = scan(numbers, |p| matches!(p, Pattern::Numbers { .. }))?;
    scan(cjk, |p| p == Pattern::DeepSeekCjk)?;
    scan(words, |p| p == Pattern::DeepSeekWords)?;
    Some(Layout::new(kernels, scanner))
}

impl Stage {
    /// Calls `found(start, end)` for each match in `piece`, in order.
    #[inline]
    fn find(&self, piece: &str, found: &mut impl FnMut(usize, usize)) {
        match &self.matcher {
            Matcher::Regex(splitter) => splitter.split(piece, found),
            Matcher::Numeric => {
                for (i, c) in piece.char_indices().filter(|(_, c)| c.is_numeric()) {
                    found(i, i + c.len_utf8());
                }
            }
        }
    }

    /// Appends the pieces of `text[s..e]` to `out` (absolute ranges; empty ones included).
    fn cut(
        &self,
        text: &str,
        s: usize,
        e: usize,
        marks: &mut Vec<(usize, usize, bool)>,
        out: &mut Vec<(usize, usize)>,
    ) {
        let piece = &text[s..e];
        if self.behavior == Behavior::Isolated {
            // Every match and gap is a piece, whichever `invert` calls which: no marks needed.
            let mut done = 0;
            let mut isolate = |a: usize, b: usize| {
                if done < a {
                    out.push((s + done, s + a));
                }
                out.push((s + a, s + b));
                done = b;
            };
            self.find(piece, &mut isolate);
            if done < piece.len() || piece.is_empty() {
                out.push((s + done, e));
            }
            return;
        }
        // The piece as matches and gaps, in order, covering it (an empty piece: one empty gap).
        marks.clear();
        let mut done = 0;
        let mut mark = |a: usize, b: usize| {
            if done < a {
                marks.push((s + done, s + a, false));
            }
            marks.push((s + a, s + b, true));
            done = b;
        };
        self.find(piece, &mut mark);
        if done < piece.len() || marks.is_empty() {
            marks.push((s + done, e, false));
        }
        if self.invert {
            marks.iter_mut().for_each(|m| m.2 = !m.2);
        }
        let start = out.len();
        match self.behavior {
            Behavior::Isolated => out.extend(marks.iter().map(|&(a, b, _)| (a, b))),
            Behavior::Removed => out.extend(marks.iter().filter(|m| !m.2).map(|&(a, b, _)| (a, b))),
            Behavior::Contiguous => {
                let mut previous = false;
                for &(a, b, matched) in marks.iter() {
                    match out[start..].last_mut() {
                        Some(last) if matched == previous => last.1 = b,
                        _ => out.push((a, b)),
                    }
                    previous = matched;
                }
            }
            Behavior::MergedWithPrevious => {
                let mut previous = false;
                for &(a, b, matched) in marks.iter() {
                    match out[start..].last_mut() {
                        Some(last) if matched && !previous => last.1 = b,
                        _ => out.push((a, b)),
                    }
                    previous = matched;
                }
            }
            Behavior::MergedWithNext => {
                // From the end: the first match of a run (seen last) joins the piece after it.
                let mut previous = false;
                for &(a, b, matched) in marks.iter().rev() {
                    match out[start..].last_mut() {
                        Some(last) if matched && !previous => last.0 = a,
                        _ => out.push((a, b)),
                    }
                    previous = matched;
                }
                out[start..].reverse();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simdtok_kernels::Kernels;

    fn split<'t>(regex: &str, behavior: Behavior, invert: bool, text: &'t str) -> Vec<&'t str> {
        let stage = Stage {
            matcher: Matcher::Regex(Splitter::from_regex(regex, Kernels::scalar()).unwrap()),
            behavior,
            invert,
        };
        let chain = Chain::new(vec![stage]);
        let mut out = Vec::new();
        chain.pieces(text, &mut out, &mut Scratch::default());
        out.iter().map(|&(s, e)| &text[s..e]).collect()
    }

    #[test]
    fn behaviors_as_the_reference_documents_them() {
        // tokenizers' own example: splitting "the-final--countdown" on '-'.
        let t = "the-final--countdown";
        use Behavior::*;
        assert_eq!(split("-", Removed, false, t), ["the", "final", "countdown"]);
        assert_eq!(
            split("-", Isolated, false, t),
            ["the", "-", "final", "-", "-", "countdown"]
        );
        assert_eq!(
            split("-", MergedWithPrevious, false, t),
            ["the-", "final-", "-", "countdown"]
        );
        assert_eq!(
            split("-", MergedWithNext, false, t),
            ["the", "-final", "-", "-countdown"]
        );
        assert_eq!(
            split("-", Contiguous, false, t),
            ["the", "-", "final", "--", "countdown"]
        );
        assert_eq!(split("-", Removed, true, t), ["-", "-", "-"]);
        assert_eq!(split("-", Isolated, false, ""), Vec::<&str>::new());
    }

    #[test]
    fn stages_cut_the_pieces_of_the_stage_before() {
        let digits = Stage {
            matcher: Matcher::Numeric,
            behavior: Behavior::Isolated,
            invert: false,
        };
        let words = Stage {
            matcher: Matcher::Regex(Splitter::from_regex(" ", Kernels::scalar()).unwrap()),
            behavior: Behavior::MergedWithNext,
            invert: false,
        };
        let chain = Chain::new(vec![words, digits]);
        let t = "ab12 c٣d";
        let mut out = Vec::new();
        chain.pieces(t, &mut out, &mut Scratch::default());
        let got: Vec<&str> = out.iter().map(|&(s, e)| &t[s..e]).collect();
        assert_eq!(got, ["ab", "1", "2", " c", "٣", "d"]);
    }

    /// DeepSeek V3's three stages.
    fn deepseek_stages(digits: u8, kernels: &'static Kernels) -> Vec<Stage> {
        let numbers = format!(r"\p{{N}}{{1,{digits}}}");
        [
            &numbers[..],
            super::super::DEEPSEEK_CJK,
            super::super::DEEPSEEK_WORDS,
        ]
        .into_iter()
        .map(|regex| Stage {
            matcher: Matcher::Regex(Splitter::from_regex(regex, kernels).unwrap()),
            behavior: Behavior::Isolated,
            invert: false,
        })
        .collect()
    }

    #[test]
    fn deepseek_in_one_pass_cuts_as_its_stages_do() {
        // Numbers of every kind, the CJK ranges' letters, marks, punctuation, symbols and
        // unassigned code points (and their neighbours just outside), letters of other
        // scripts, every kind of space and line end, ASCII punctuation before letters.
        let units: &[&str] = &[
            "a", "Zq", "é", "́", "1", "23", "٣", "①", "〇", "Ⅻ", "½", "中", "文", "龥", "鿦", "丁",
            "一", "぀", "ぁ", "ゖ", "゗", "゙", "゛", "ゟ", "゠", "ア", "・", "ー", "ヿ", "㄀", "ㇰ",
            "가", "Я", " ", "  ", "\t", "\n", "\r\n", "\r", "\u{a0}", "\u{2028}", "\u{3000}", ".",
            ",", "'", "-", "!a", "'s", "\"x", "$", "€", "，", "。", "「", "😀", "\u{200d}",
            "\u{fe0f}", "#", "_b", "(", ")", "\u{0}", "\u{7f}",
        ];
        let bytes: Vec<&[u8]> = units.iter().map(|u| u.as_bytes()).collect();
        let mut rng = crate::test_rng::Rng(0x9E37_79B9_7F4A_7C15);
        for kernels in simdtok_kernels::Tier::ALL
            .into_iter()
            .filter_map(Kernels::for_tier)
        {
            for digits in [1, 3] {
                let fused = Chain::new(deepseek_stages(digits, kernels));
                assert!(fused.deepseek.is_some(), "DeepSeek's stages are recognised");
                let staged = Chain::staged(deepseek_stages(digits, kernels));
                let (mut got, mut want) = (Vec::new(), Vec::new());
                let mut scratch = Scratch::default();
                for round in 0..3000 {
                    let len = 1 + rng.below(if round % 10 == 0 { 200 } else { 12 }) as usize;
                    let text = String::from_utf8(rng.join(&bytes, len)).unwrap();
                    fused.pieces(&text, &mut got, &mut scratch);
                    staged.pieces(&text, &mut want, &mut scratch);
                    assert_eq!(
                        got,
                        want,
                        "{text:?} ({digits} digits, {:?})",
                        kernels.tier()
                    );
                }
            }
        }
    }

    #[test]
    fn deepseek_numbers_and_cjk_ranges_share_no_character() {
        let tables = crate::pretokenize::unicode::Tables::get();
        for cp in (0x3040..=0x30FF).chain(0x4E00..=0x9FA5) {
            assert_eq!(
                tables.flags(cp) & crate::pretokenize::unicode::N,
                0,
                "U+{cp:04X}"
            );
        }
    }

    #[test]
    fn other_chains_are_not_taken_for_deepseeks() {
        let kernels = Kernels::scalar();
        let mut stages = deepseek_stages(3, kernels);
        stages[1].behavior = Behavior::Removed;
        assert!(Chain::new(stages).deepseek.is_none());
        let mut stages = deepseek_stages(3, kernels);
        stages[2].invert = true;
        assert!(Chain::new(stages).deepseek.is_none());
        let mut stages = deepseek_stages(3, kernels);
        stages.swap(0, 1);
        assert!(Chain::new(stages).deepseek.is_none());
        let mut stages = deepseek_stages(3, kernels);
        stages.pop();
        assert!(Chain::new(stages).deepseek.is_none());
    }
}
