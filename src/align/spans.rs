//! Alignment by byte offsets: where both tokenizations of a text carry each token's byte span
//! (a model's tokens from [`crate::Encoding::offsets`], the words of [`words`]), token `i` of
//! one side maps to every token of the other whose span shares at least one byte with its own.
//! No diff is needed, and the result is the diff's ([`super::get_alignments`]) when each token's
//! string is its span of the text: each side's characters are then the text's, in order, less
//! the ones a side leaves out, and the edit script can only match each character with itself.

use std::sync::OnceLock;

use regex::Regex;

use super::FlatAlignment;

/// The words of `text` as byte spans: runs of word characters and runs of other non-space
/// characters (`\w+|[^\w\s]+`, Hugging Face's `Whitespace` pre-tokenizer), so `"don't stop!"`
/// is `don`, `'`, `t`, `stop`, `!`.
pub fn words(text: &str) -> Vec<(usize, usize)> {
    words_regex()
        .find_iter(text)
        .map(|m| (m.start(), m.end()))
        .collect()
}

/// The regex of [`words`], compiled once; the `Whitespace` pre-tokenizer of character-level BPE
/// ([`crate::pipeline::hf_char_bpe`]) runs it too, without collecting the spans.
pub(crate) fn words_regex() -> &'static Regex {
    static WORDS: OnceLock<Regex> = OnceLock::new();
    WORDS.get_or_init(|| Regex::new(r"\w+|[^\w\s]+").expect("a valid pattern"))
}

/// `a2b` and `b2a` between two tokenizations of one text given as byte spans `[start, end)`:
/// token `i` of `a` maps to the tokens of `b` whose spans overlap its own, ascending, and back.
/// An empty span overlaps nothing. Linear when each side's spans are in text order (starts and
/// ends never decreasing, as every tokenizer's offsets are); other orders are answered too, in
/// `O(n · m)`.
pub fn align_spans(a: &[(usize, usize)], b: &[(usize, usize)]) -> (FlatAlignment, FlatAlignment) {
    (overlaps(a, b), overlaps(b, a))
}

fn in_text_order(spans: &[(usize, usize)]) -> bool {
    spans
        .windows(2)
        .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1)
}

fn overlap(p: (usize, usize), q: (usize, usize)) -> bool {
    p.0.max(q.0) < p.1.min(q.1)
}

/// For each span of `from`, the spans of `to` that overlap it.
fn overlaps(from: &[(usize, usize)], to: &[(usize, usize)]) -> FlatAlignment {
    let mut out = FlatAlignment {
        rows: Vec::with_capacity(from.len() + 1),
        targets: Vec::with_capacity(from.len().max(to.len())),
    };
    out.rows.push(0);
    if in_text_order(from) && in_text_order(to) {
        // `first`: the first span of `to` that ends after the current span starts; starts of
        // `from` never decrease, so it only moves forward.
        let mut first = 0;
        for &span in from {
            while first < to.len() && to[first].1 <= span.0 {
                first += 1;
            }
            if span.0 < span.1 {
                let mut j = first;
                while j < to.len() && to[j].0 < span.1 {
                    if overlap(span, to[j]) {
                        out.targets.push(j);
                    }
                    j += 1;
                }
            }
            out.rows.push(out.targets.len());
        }
    } else {
        for &span in from {
            out.targets
                .extend((0..to.len()).filter(|&j| overlap(span, to[j])));
            out.rows.push(out.targets.len());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_on_spaces_and_punctuation() {
        let text = "don't stop!  Ünïcode 42";
        let got: Vec<&str> = words(text).iter().map(|&(s, e)| &text[s..e]).collect();
        assert_eq!(got, ["don", "'", "t", "stop", "!", "Ünïcode", "42"]);
    }

    #[test]
    fn overlapping_spans_map_both_ways() {
        // "New York": one word, two tokens; an empty span maps to nothing.
        let words = [(0, 8)];
        let tokens = [(0, 0), (0, 3), (3, 8)];
        let (w2t, t2w) = align_spans(&words, &tokens);
        assert_eq!(w2t.to_nested(), vec![vec![1, 2]]);
        assert_eq!(t2w.to_nested(), vec![vec![], vec![0], vec![0]]);
    }

    #[test]
    fn spans_out_of_order_are_still_answered() {
        let a = [(4, 8), (0, 4)];
        let b = [(0, 2), (2, 6), (6, 8)];
        let (a2b, b2a) = align_spans(&a, &b);
        assert_eq!(a2b.to_nested(), vec![vec![1, 2], vec![0, 1]]);
        assert_eq!(b2a.to_nested(), vec![vec![1], vec![0, 1], vec![0]]);
    }
}
