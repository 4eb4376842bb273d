//! The normalizers of a byte-level BPE `tokenizer.json` — `NFC`, `NFD`, `NFKC`, `NFKD`,
//! `Lowercase`, `Replace` (of a string or a regex), `Prepend`, `Strip`, and a `Sequence` of them —
//! with the alignments Hugging Face `tokenizers` gives them, so that token offsets point where
//! the reference's do.
//!
//! The reference keeps, for each byte of the normalized text, the span of original text it
//! comes from, and every normalizer rewrites the text as a list of (character, change): change
//! 0 when the character takes the place of the next old one (it gets that one's span), `-n` when
//! it also removes the `n` old characters after that one, and `1` when it is inserted (it gets
//! the span of the old byte just before it, or an empty span at the start). A step here does
//! the same, but only when the text has anything the step changes: NFC of NFC text, lowercasing
//! of text with no capitals, a `Replace` with no match, cost one scan and no copy. Without
//! offsets, no spans are built at all.

use std::sync::Arc;

use simdtok_kernels::Kernels;
use unicode_normalization_alignments::UnicodeNormalization;
use unicode_segmentation::UnicodeSegmentation;

use crate::normalize::nfc;
use crate::normalize::spm::CharsMap;

/// What a `Replace` replaces.
#[derive(Debug, Clone)]
pub enum Pattern {
    /// A string (never empty).
    Literal(String),
    /// A regex, in the `regex` crate's syntax (the reference uses Oniguruma; the patterns files
    /// use, such as `\s+`, mean the same in both).
    Regex(regex::Regex),
}

impl Pattern {
    /// Whether it matches somewhere in `text`.
    fn is_in(&self, text: &str) -> bool {
        match self {
            Pattern::Literal(s) => text.contains(s.as_str()),
            Pattern::Regex(r) => r.is_match(text),
        }
    }

    /// Calls `each(start, end)` for the matches in `text`, left to right, not overlapping.
    fn for_each_match(&self, text: &str, mut each: impl FnMut(usize, usize)) {
        match self {
            // One byte (the space of `▁` files): memchr.
            Pattern::Literal(s) if s.len() == 1 => {
                memchr::memchr_iter(s.as_bytes()[0], text.as_bytes()).for_each(|i| each(i, i + 1))
            }
            Pattern::Literal(s) => text
                .match_indices(s.as_str())
                .for_each(|(i, m)| each(i, i + m.len())),
            Pattern::Regex(r) => r.find_iter(text).for_each(|m| each(m.start(), m.end())),
        }
    }
}

/// One normalizer.
#[derive(Debug, Clone)]
pub enum Step {
    Nfc,
    Nfd,
    Nfkc,
    Nfkd,
    /// `char::to_lowercase` of each character, as the reference does it (no final-sigma rule).
    Lowercase,
    /// Every match of the pattern, left to right, not overlapping, becomes the string.
    Replace(Pattern, String),
    /// The string before the text (when the text is not empty).
    Prepend(String),
    /// Leading and/or trailing whitespace (`char::is_whitespace`) removed.
    Strip {
        left: bool,
        right: bool,
    },
    /// The `Metaspace` pre-tokenizer's `▁` before a text that does not start with one: before
    /// every text (`always`), or only before the one at the start of the input (the reference
    /// tests the text's offset in the input, not in its segment).
    MetaspacePrepend {
        always: bool,
    },
    /// `Precompiled`: a SentencePiece charsmap, applied as `tokenizers` applies it (see
    /// [`Precompiled`]), not as SentencePiece does.
    Precompiled(Arc<Precompiled>),
}

/// The `Precompiled` normalizer: the charsmap of a SentencePiece model (read by the same code as
/// SentencePiece's normalizer, `CharsMap`), applied as `tokenizers` 0.23 does it, which is
/// not SentencePiece's longest match over the text: the text is cut into extended grapheme
/// clusters; a cluster of fewer than 6 bytes that starts with a rule is replaced *whole* by the
/// replacement of the *shortest* such rule (so `"\r\n"` becomes what `"\r"` becomes, the
/// `\n` lost, and `"Ａ\u{301}"` what `"Ａ"` becomes); any other cluster is looked up one
/// character at a time. Each replacement's alignment follows the reference's (change 0 for its
/// characters, the last ones inserted, or the last one removing the rest).
#[derive(Debug)]
pub struct Precompiled {
    map: CharsMap,
    /// ASCII bytes no rule starts with: text of only these is left alone.
    inert_ascii: [bool; 128],
    kernels: &'static Kernels,
}

impl Precompiled {
    /// The normalizer of the charsmap `blob`; its replacements must be UTF-8 (the reference
    /// refuses the file otherwise).
    pub fn new(blob: &[u8], kernels: &'static Kernels) -> Result<Precompiled, String> {
        let map = CharsMap::parse(blob)?;
        if std::str::from_utf8(map.replacements()).is_err() {
            return Err("normalizer Precompiled: the charsmap's replacements are not UTF-8".into());
        }
        let mut inert_ascii = [false; 128];
        for (b, inert) in inert_ascii.iter_mut().enumerate() {
            *inert = !map.starts_with_byte(b as u8);
        }
        Ok(Precompiled {
            map,
            inert_ascii,
            kernels,
        })
    }

    /// The replacement of `chunk`, when a rule starts it (`Precompiled::transform`).
    fn transform(&self, chunk: &str) -> Option<&str> {
        let r = self.map.shortest(self.kernels, chunk.as_bytes())?;
        std::str::from_utf8(r).ok()
    }

    /// Whether it may change `text`.
    fn changes(&self, text: &str) -> bool {
        text.bytes()
            .any(|b| b >= 0x80 || !self.inert_ascii[b as usize])
    }

    /// The (character, change) list of `text` (the reference's `normalize`).
    fn chars(&self, text: &str, chars: &mut Vec<(char, isize)>) {
        for grapheme in text.graphemes(true) {
            if grapheme.len() < 6 {
                if let Some(norm) = self.transform(grapheme) {
                    precompiled_replace(chars, grapheme, norm);
                    continue;
                }
                // A cluster of one character was just looked up as that character.
                let mut it = grapheme.chars();
                if let (Some(c), None) = (it.next(), it.next()) {
                    chars.push((c, 0));
                    continue;
                }
            }
            for (i, c) in grapheme.char_indices() {
                let part = &grapheme[i..i + c.len_utf8()];
                match self.transform(part) {
                    Some(norm) => precompiled_replace(chars, part, norm),
                    None => chars.push((c, 0)),
                }
            }
        }
    }
}

/// The reference's `replace` of the `Precompiled` normalizer: `new`'s characters with change 0,
/// then the last ones marked inserted when it is longer than `old`, or the last character so
/// far (which may be an earlier one when `new` is empty) removing the difference when shorter.
fn precompiled_replace(chars: &mut Vec<(char, isize)>, old: &str, new: &str) {
    let diff = new.chars().count() as isize - old.chars().count() as isize;
    chars.extend(new.chars().map(|c| (c, 0)));
    if diff > 0 {
        let n = chars.len();
        for entry in &mut chars[n - diff as usize..] {
            entry.1 = 1;
        }
    } else if diff < 0
        && let Some(last) = chars.last_mut()
    {
        last.1 += diff;
    }
}

/// A list of normalizers, applied in order.
#[derive(Debug, Clone, Default)]
pub struct Normalizer {
    steps: Vec<Step>,
}

/// A normalized text and, when offsets are wanted, the original span of each of its bytes.
#[derive(Default, Debug)]
pub struct Aligned {
    pub text: String,
    pub spans: Vec<(u32, u32)>,
}

/// Buffers for [`Normalizer::apply`].
#[derive(Default, Debug)]
pub struct Scratch {
    spare: Aligned,
    chars: Vec<(char, isize)>,
}

impl Normalizer {
    /// The normalizer of `steps` (a `Sequence` flattened).
    pub fn new(steps: Vec<Step>) -> Normalizer {
        Normalizer { steps }
    }

    /// Adds `step` after the others.
    pub fn push(&mut self, step: Step) {
        self.steps.push(step);
    }

    /// Whether it has no step.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Whether, for every text `X Y` where `Y` starts with an ASCII character, the normalized
    /// text (and each byte's span) is that of `X` followed by that of `Y`, its spans moved by
    /// `X`'s length — what a safe cut before an ASCII byte needs (`pipeline::cuts`).
    ///
    /// True when every step is one of:
    /// - `Lowercase`: each character alone (`char::to_lowercase`, no context rule); an ASCII
    ///   character stays one ASCII character, with change 0.
    /// - `NFD`, `NFKD`: each character is decomposed alone, then runs of non-starters (canonical
    ///   combining class ≠ 0) are reordered; an ASCII character is a starter that decomposes to
    ///   itself, so no run crosses it.
    /// - `NFC`, `NFKC`: the decomposition, then each character composes with the last starter
    ///   before it. Every character of `Y` has one in `Y` (its first, ASCII), and that first one
    ///   composes with nothing before it: no composition pair has an ASCII second character (a
    ///   unit test checks every character's decomposition for one ending in ASCII).
    ///
    /// In each, the first output character of `Y` is its ASCII character with change 0, so the
    /// alignments of the two sides stay apart. `Replace`, `Prepend`, `Strip` and the `Metaspace`
    /// prefix act across characters or at the ends of a text: false.
    pub fn splits_before_ascii(&self) -> bool {
        self.steps.iter().all(|s| {
            matches!(
                s,
                Step::Nfc | Step::Nfd | Step::Nfkc | Step::Nfkd | Step::Lowercase
            )
        })
    }

    /// Whether a text may be cut into parts normalized one after the other (the text's first
    /// part as usual, every other one [without its prefix](Normalizer::apply_part)) before an
    /// ASCII character: every step acts on each character alone — those of
    /// [`Normalizer::splits_before_ascii`], and `Replace` of a one-character string — or puts
    /// a prefix before the text (`Prepend`, the `Metaspace` prefix), which only the text's
    /// first part gets. `Strip` and a `Replace` of a longer string or a regex act across
    /// characters: false.
    pub fn continues_before_ascii(&self) -> bool {
        self.steps.iter().all(|s| match s {
            Step::Nfc | Step::Nfd | Step::Nfkc | Step::Nfkd | Step::Lowercase => true,
            Step::Replace(Pattern::Literal(from), _) => from.chars().count() == 1,
            Step::Prepend(_) | Step::MetaspacePrepend { .. } => true,
            Step::Replace(Pattern::Regex(_), _) | Step::Strip { .. } | Step::Precompiled(_) => {
                false
            }
        })
    }

    /// Normalizes `text` (at `base` in the input) into `out`, with spans when `offsets`.
    /// Returns `false`, leaving `out` unspecified, when no step changes the text.
    pub fn apply(
        &self,
        text: &str,
        base: u32,
        offsets: bool,
        out: &mut Aligned,
        scratch: &mut Scratch,
    ) -> bool {
        self.apply_part(text, base, offsets, out, scratch, true)
    }

    /// [`Normalizer::apply`] with the prefix steps (`Prepend`, the `Metaspace` prefix) only
    /// when `prefix`: for a text that continues one cut before it (see
    /// [`Normalizer::continues_before_ascii`]).
    pub fn apply_part(
        &self,
        text: &str,
        base: u32,
        offsets: bool,
        out: &mut Aligned,
        scratch: &mut Scratch,
        prefix: bool,
    ) -> bool {
        let mut changed = false;
        for step in &self.steps {
            if !prefix && matches!(step, Step::Prepend(_) | Step::MetaspacePrepend { .. }) {
                continue;
            }
            let current: &str = if changed { &out.text } else { text };
            if !step.changes(current, base) {
                continue;
            }
            if !changed {
                // The first change: start from the text itself, each byte its own span.
                out.text.clear();
                out.text.push_str(text);
                out.spans.clear();
                if offsets {
                    out.spans.extend(char_spans(text, base));
                }
                changed = true;
            }
            let spare = &mut scratch.spare;
            step.apply(out, base, offsets, spare, &mut scratch.chars);
            std::mem::swap(out, spare);
        }
        changed
    }
}

/// Each byte's span: the span of its character, at `base`.
pub fn char_spans(text: &str, base: u32) -> impl Iterator<Item = (u32, u32)> + '_ {
    text.char_indices().flat_map(move |(i, c)| {
        let span = (base + i as u32, base + (i + c.len_utf8()) as u32);
        std::iter::repeat_n(span, c.len_utf8())
    })
}

impl Step {
    /// Whether the step changes `text` (at `base` in the input; false only when it surely
    /// does not).
    fn changes(&self, text: &str, base: u32) -> bool {
        match self {
            Step::Nfc => !nfc::is_nfc_already(text),
            // Decomposition and compatibility mappings leave ASCII alone.
            Step::Nfd | Step::Nfkc | Step::Nfkd => !text.is_ascii(),
            Step::Lowercase => text
                .chars()
                .any(|c| !c.is_ascii() || c.is_ascii_uppercase()),
            Step::Replace(from, _) => from.is_in(text),
            Step::Prepend(_) => !text.is_empty(),
            Step::Strip { left, right } => {
                (*left && text.starts_with(char::is_whitespace))
                    || (*right && text.ends_with(char::is_whitespace))
            }
            Step::MetaspacePrepend { always } => {
                (*always || base == 0) && !text.is_empty() && !text.starts_with('\u{2581}')
            }
            Step::Precompiled(p) => p.changes(text),
        }
    }

    /// Applies the step to `input` into `out` (both cleared first, spans only when `offsets`).
    fn apply(
        &self,
        input: &Aligned,
        base: u32,
        offsets: bool,
        out: &mut Aligned,
        chars: &mut Vec<(char, isize)>,
    ) {
        out.text.clear();
        out.spans.clear();
        let text = input.text.as_str();
        chars.clear();
        let mut initial = 0;
        if !offsets {
            // The characters alone, straight into the text.
            match self {
                Step::Nfc => {
                    return nfc::parts(text, |part, may_change| match may_change {
                        true => out.text.extend(part.nfc().map(|(c, _)| c)),
                        false => out.text.push_str(part),
                    });
                }
                Step::Nfd => return out.text.extend(text.nfd().map(|(c, _)| c)),
                Step::Nfkc => return out.text.extend(text.nfkc().map(|(c, _)| c)),
                Step::Nfkd => return out.text.extend(text.nfkd().map(|(c, _)| c)),
                _ => {}
            }
        }
        match self {
            // NFC part by part: the parts it leaves alone keep their characters unchanged.
            Step::Nfc => nfc::parts(text, |part, may_change| match may_change {
                true => chars.extend(part.nfc()),
                false => chars.extend(part.chars().map(|c| (c, 0))),
            }),
            Step::Nfd => chars.extend(text.nfd()),
            Step::Nfkc => chars.extend(text.nfkc()),
            Step::Nfkd => chars.extend(text.nfkd()),
            Step::Lowercase => {
                for c in text.chars() {
                    chars.extend(
                        c.to_lowercase()
                            .enumerate()
                            .map(|(i, l)| (l, (i > 0) as isize)),
                    );
                }
            }
            Step::Replace(from, to) => return replace(input, from, to, base, offsets, out),
            Step::Precompiled(p) => p.chars(text, chars),
            Step::Prepend(_) | Step::MetaspacePrepend { .. } => {
                let prefix = match self {
                    Step::Prepend(prefix) => prefix.as_str(),
                    _ => "\u{2581}",
                };
                // In the reference's terms, the prefix's first character takes the place of
                // the text's first, and the rest of the prefix and that first character again
                // are inserted after it: all of them get the first character's span. (An empty
                // prefix only re-inserts the first character, at the start: its span becomes
                // empty.) Done directly, not character by character.
                let first = text.chars().next().expect("not empty").len_utf8();
                out.text.push_str(prefix);
                out.text.push_str(text);
                if offsets {
                    let span = if prefix.is_empty() {
                        (base, base)
                    } else {
                        input.spans[0]
                    };
                    out.spans
                        .extend(std::iter::repeat_n(span, prefix.len() + first));
                    out.spans.extend_from_slice(&input.spans[first..]);
                }
                return;
            }
            Step::Strip { left, right } => {
                let rest = if *left {
                    text.trim_start_matches(char::is_whitespace)
                } else {
                    text
                };
                let kept = if *right {
                    rest.trim_end_matches(char::is_whitespace)
                } else {
                    rest
                };
                let lead = text[..text.len() - rest.len()].chars().count();
                let trail = rest[kept.len()..].chars().count();
                // The last kept character also removes the trailing ones.
                chars.extend(kept.chars().map(|c| (c, 0)));
                if let Some(last) = chars.last_mut() {
                    last.1 = -(trail as isize);
                }
                initial = lead;
            }
        }
        transform(input, chars, initial, base, offsets, out);
    }
}

/// The reference's `transform`: `out` is `chars`, each with its span from `input` by its change
/// (see the module documentation); the first `initial` characters of `input` are removed.
fn transform(
    input: &Aligned,
    chars: &[(char, isize)],
    initial: usize,
    base: u32,
    offsets: bool,
    out: &mut Aligned,
) {
    out.text.extend(chars.iter().map(|&(c, _)| c));
    if !offsets {
        return;
    }
    let mut old = input.text.chars();
    // The byte of `input` where the next replaced character starts.
    let mut at: usize = old.by_ref().take(initial).map(char::len_utf8).sum();
    for &(c, change) in chars {
        let span = if change > 0 {
            match at {
                0 => (base, base),
                _ => input.spans[at - 1],
            }
        } else {
            let span = input.spans[at];
            at += old.next().map_or(0, char::len_utf8);
            at += old
                .by_ref()
                .take((-change) as usize)
                .map(char::len_utf8)
                .sum::<usize>();
            span
        };
        out.spans.extend(std::iter::repeat_n(span, c.len_utf8()));
    }
}

/// `Replace`: each match becomes `to`, whose characters take the span of the byte before the
/// match's end — its last byte (inserted after the removed match, as the reference has it), or
/// for an empty match the byte before it (an empty span at the start); a match replaced by
/// nothing leaves nothing.
fn replace(input: &Aligned, from: &Pattern, to: &str, base: u32, offsets: bool, out: &mut Aligned) {
    let text = input.text.as_str();
    if let Pattern::Literal(s) = from
        && s.len() == 1
        && !offsets
    {
        return replace_byte(text, s.as_bytes()[0], to, &mut out.text);
    }
    let mut last = 0;
    from.for_each_match(text, |at, end| {
        out.text.push_str(&text[last..at]);
        out.text.push_str(to);
        if offsets {
            out.spans.extend_from_slice(&input.spans[last..at]);
            let span = match end {
                0 => (base, base),
                _ => input.spans[end - 1],
            };
            out.spans.extend(std::iter::repeat_n(span, to.len()));
        }
        last = end;
    });
    out.text.push_str(&text[last..]);
    if offsets {
        out.spans.extend_from_slice(&input.spans[last..]);
    }
}

/// [`replace`] of one ASCII byte without offsets: a run of it at a time (the indentation of
/// code is runs of spaces, each of which was a search of its own).
fn replace_byte(text: &str, from: u8, to: &str, out: &mut String) {
    let bytes = text.as_bytes();
    let mut last = 0;
    while let Some(p) = memchr::memchr(from, &bytes[last..]) {
        let start = last + p;
        let run = bytes[start..].iter().take_while(|&&b| b == from).count();
        out.push_str(&text[last..start]);
        for _ in 0..run {
            out.push_str(to);
        }
        last = start + run;
    }
    out.push_str(&text[last..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: Vec<Step>, text: &str, base: u32) -> Option<(String, Vec<(u32, u32)>)> {
        let n = Normalizer::new(steps);
        let (mut out, mut scratch) = (Aligned::default(), Scratch::default());
        let changed = n.apply(text, base, true, &mut out, &mut scratch);
        // Without offsets: the same text, no spans.
        let mut plain = Aligned::default();
        assert_eq!(
            n.apply(text, base, false, &mut plain, &mut scratch),
            changed
        );
        if !changed {
            return None;
        }
        assert_eq!(plain.text, out.text);
        assert!(plain.spans.is_empty());
        assert_eq!(out.spans.len(), out.text.len());
        Some((out.text, out.spans))
    }

    #[test]
    fn steps_that_change_nothing_leave_the_text_alone() {
        let all = vec![
            Step::Nfc,
            Step::Nfd,
            Step::Nfkc,
            Step::Nfkd,
            Step::Lowercase,
            Step::Replace(Pattern::Literal("xyz".into()), "-".into()),
            Step::Strip {
                left: true,
                right: true,
            },
        ];
        assert_eq!(run(all, "plain lowercase text", 0), None);
        assert_eq!(run(vec![Step::Prepend("_".into())], "", 0), None);
    }

    #[test]
    fn lowercase_keeps_spans_and_inserts_after_the_first() {
        // İ lowercases to i + U+0307: the second character is inserted, with İ's span.
        let (text, spans) = run(vec![Step::Lowercase], "AİB", 5).unwrap();
        assert_eq!(text, "ai\u{307}b");
        assert_eq!(
            spans,
            vec![(5, 6), (6, 8), (6, 8), (6, 8), (8, 9)],
            "a, i, the two bytes of U+0307, b"
        );
    }

    #[test]
    fn compatibility_forms_map_to_their_source_characters() {
        // ﬁ (3 bytes) → "fi": f replaces it, i is inserted with its span; ① → 1.
        let (text, spans) = run(vec![Step::Nfkc], "ﬁ①", 0).unwrap();
        assert_eq!(text, "fi1");
        assert_eq!(spans, vec![(0, 3), (0, 3), (3, 6)]);
        // NFC: a composed character keeps its base's span; the mark's bytes are in no span.
        let (text, spans) = run(vec![Step::Nfc], "ae\u{301}b", 10).unwrap();
        assert_eq!(text, "aéb");
        assert_eq!(spans, vec![(10, 11), (11, 12), (11, 12), (14, 15)]);
        // NFD then NFC: é decomposed, then composed back with its base's span.
        let (text, spans) = run(vec![Step::Nfd, Step::Nfc], "é", 0).unwrap();
        assert_eq!(text, "é");
        assert_eq!(spans, vec![(0, 2), (0, 2)]);
    }

    #[test]
    fn replace_prepend_and_strip() {
        let (text, spans) = run(
            vec![Step::Replace(Pattern::Literal("ab".into()), "XYZ".into())],
            "cabab",
            0,
        )
        .unwrap();
        assert_eq!(text, "cXYZXYZ");
        assert_eq!(
            spans,
            vec![(0, 1), (2, 3), (2, 3), (2, 3), (4, 5), (4, 5), (4, 5)]
        );
        let (text, spans) = run(
            vec![Step::Replace(Pattern::Literal("b".into()), String::new())],
            "abc",
            0,
        )
        .unwrap();
        assert_eq!((text.as_str(), spans), ("ac", vec![(0, 1), (2, 3)]));
        // One byte, in runs (without offsets a run at a time; `run` compares both ways).
        let (text, _) = run(
            vec![Step::Replace(Pattern::Literal(" ".into()), "▁".into())],
            "  a b   c ",
            0,
        )
        .unwrap();
        assert_eq!(text, "▁▁a▁b▁▁▁c▁");
        let (text, spans) = run(vec![Step::Prepend("▁".into())], "hé", 10).unwrap();
        assert_eq!(text, "▁hé");
        assert_eq!(
            spans,
            vec![(10, 11); 4]
                .into_iter()
                .chain([(11, 13); 2])
                .collect::<Vec<_>>()
        );
        let (text, spans) = run(
            vec![Step::Strip {
                left: true,
                right: true,
            }],
            "  a b \t",
            0,
        )
        .unwrap();
        assert_eq!(text, "a b");
        assert_eq!(spans, vec![(2, 3), (3, 4), (4, 5)]);
    }

    #[test]
    fn a_sequence_chains_the_spans() {
        let (text, spans) = run(
            vec![Step::Nfkc, Step::Lowercase, Step::Prepend(" ".into())],
            "ＡＢ",
            0,
        )
        .unwrap();
        assert_eq!(text, " ab");
        assert_eq!(spans, vec![(0, 3), (0, 3), (3, 6)]);
    }

    /// The normalized text and spans, the identity when nothing changes.
    fn aligned(steps: &[Step], text: &str, base: u32) -> (String, Vec<(u32, u32)>) {
        run(steps.to_vec(), text, base)
            .unwrap_or_else(|| (text.to_string(), char_spans(text, base).collect()))
    }

    #[test]
    fn no_canonical_composition_has_an_ascii_second_character() {
        // A pair (L, C) composes only into a character whose canonical decomposition is L C,
        // so its full decomposition is two characters or more and ends with C's: none ending
        // in ASCII means no pair with an ASCII C, which `splits_before_ascii` relies on for
        // NFC and NFKC. (Singletons such as U+037E → `;` never compose back.)
        for c in (0x80..=0x10FFFFu32).filter_map(char::from_u32) {
            let (mut last, mut n) = (None, 0);
            unicode_normalization_alignments::char::decompose_canonical(c, |d| {
                last = Some(d);
                n += 1;
            });
            assert!(
                n < 2 || last.is_none_or(|d| !d.is_ascii()),
                "U+{:04X} decomposes to something ending in ASCII",
                c as u32
            );
        }
    }

    #[test]
    fn steps_that_split_before_ascii_do() {
        let steps = [
            Step::Nfc,
            Step::Nfd,
            Step::Nfkc,
            Step::Nfkd,
            Step::Lowercase,
        ];
        let sides = [
            "",
            "a",
            "e\u{301}",
            "\u{301}",
            "Å",
            "ﬁ",
            "½",
            "İ",
            "각",
            "\u{1100}",
            "ᄀ\u{1161}",
            "\u{338}",
            "<",
            "=\u{338}",
            "ΣΑ",
            "ℌ",
            "\u{300}\u{316}",
            "①",
            "Ａ",
            " ",
            "\n",
            "\u{a0}",
        ];
        let ascii = [" ", "\n", "a", "A", ">", "/", "'", "1"];
        for steps in steps
            .iter()
            .map(|s| vec![s.clone()])
            .chain([steps.to_vec(), vec![Step::Nfkd, Step::Lowercase, Step::Nfc]])
        {
            assert!(Normalizer::new(steps.clone()).splits_before_ascii());
            for x in sides {
                for first in ascii {
                    for rest in sides {
                        let y = format!("{first}{rest}");
                        let whole = aligned(&steps, &format!("{x}{y}"), 7);
                        let (mut text, mut spans) = aligned(&steps, x, 7);
                        let (yt, ys) = aligned(&steps, &y, 7 + x.len() as u32);
                        text.push_str(&yt);
                        spans.extend(ys);
                        assert_eq!(whole, (text, spans), "{steps:?} {x:?} {y:?}");
                    }
                }
            }
        }
        for step in [
            Step::Replace(Pattern::Literal("a".into()), "b".into()),
            Step::Prepend("▁".into()),
            Step::Strip {
                left: false,
                right: true,
            },
            Step::MetaspacePrepend { always: true },
        ] {
            assert!(!Normalizer::new(vec![Step::Nfc, step]).splits_before_ascii());
        }
    }
}
