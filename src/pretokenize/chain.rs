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

use crate::pretokenize::Splitter;

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
        Chain { stages }
    }

    /// The pieces of `text`, as `[start, end)` byte ranges in order, into `out` (cleared first).
    pub fn pieces(&self, text: &str, out: &mut Vec<(usize, usize)>, scratch: &mut Scratch) {
        out.clear();
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
}
